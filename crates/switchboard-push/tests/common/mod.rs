//! Worker options for the agent these tests sign as; the receiver and the
//! outbox item they deliver are `switchboard_push::testing`'s.

use std::sync::Arc;

use switchboard_push::{KeySet, PushOptions};

/// Worker options for tests, sending as `http://agent.test`.
pub fn options(keys: Arc<KeySet>) -> PushOptions {
    switchboard_push::testing::options("http://agent.test", keys)
}
