//! What the SDK's server tests share: the server as an SDK user runs it
//! (on a loopback port, until told to stop), an API-key authenticator, and
//! a request's JSON answer.
#![allow(clippy::unwrap_used, dead_code)]

use serde_json::Value;
use switchboard_sdk::auth::{ApiKeys, Schemes, hash_api_key};
use switchboard_sdk::prelude::*;

/// The authenticator that lets `key` in as the caller `alpha`.
pub fn key_holder(key: &str) -> Schemes {
    Schemes::new().with(
        ApiKeys::new()
            .key(&hash_api_key(key), "alpha", None, false)
            .unwrap(),
    )
}

/// A server serving on 127.0.0.1, on a port it picked itself.
pub struct Running {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// Serves what `build` makes of the base URL it will be reached at.
    pub async fn start(build: impl FnOnce(&str) -> A2aServer) -> Running {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = build(&base);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(server.serve(listener, async move {
            let _ = stopped.await;
        }));
        Running {
            base,
            stop,
            serving,
        }
    }

    /// Stops it; it must have served without an error.
    pub async fn stop(self) {
        self.stop.send(()).unwrap();
        self.serving.await.unwrap().unwrap();
    }
}

/// Sends `request`; its answer's body as JSON, whatever the status.
pub async fn json_of(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}
