//! A server with push notifications on: the demo agent on a store that is
//! also the push outbox, its JWKS published, and a delivery worker that
//! retries fast and may deliver to 127.0.0.1 (where the test receivers
//! listen): `switchboard_push::testing::options`.

use std::sync::Arc;
use std::time::Duration;

use switchboard_core::push::PushStore;
use switchboard_core::{PushConfigLimits, RequestHandler, TaskStore};
use switchboard_push::{KeySet, PushWorker};
use switchboard_runtimes::builtin::{DemoAgent, demo_card};
use tokio_util::sync::CancellationToken;

use super::TestServer;

/// The server and its worker; dropping it stops the worker.
pub struct PushServer {
    pub server: TestServer,
    /// The signing keys, as published at `/.well-known/jwks.json`.
    pub keys: Arc<KeySet>,
    _worker: PushWorker,
    stop: CancellationToken,
}

impl Drop for PushServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl PushServer {
    /// Starts it on `store` with config `limits` (whose `allow_hosts`
    /// should name 127.0.0.1 for configs to reach the test receivers).
    pub async fn start<S: TaskStore + PushStore>(
        store: Arc<S>,
        limits: PushConfigLimits,
    ) -> PushServer {
        let handler = RequestHandler::builder(
            DemoAgent {
                chunk_delay: Duration::ZERO,
            },
            demo_card(),
        )
        .store(store.clone())
        .push(store.clone(), limits)
        .build();
        let keys = Arc::new(KeySet::generate().unwrap());
        let k = keys.clone();
        let server = TestServer::start_with(move |s| s.jwks(k), handler).await;
        let options = switchboard_push::testing::options(&server.base, keys.clone());
        let stop = CancellationToken::new();
        let worker = PushWorker::spawn(store, options, stop.clone()).unwrap();
        PushServer {
            server,
            keys,
            _worker: worker,
            stop,
        }
    }
}
