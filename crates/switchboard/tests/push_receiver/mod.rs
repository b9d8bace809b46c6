//! The webhook receiver of the end-to-end push tests: `switchboard_push`'s
//! test receiver (feature `testing`), a real HTTP server on 127.0.0.1 that
//! records every notification and can be told to answer 503.

pub use switchboard_push::testing::{Received, Receiver};
