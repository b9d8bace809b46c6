//! Test receivers: real HTTP servers on 127.0.0.1 that record what they get
//! and can be told to fail (answer 503) or to stop listening for a while;
//! worker options that deliver to them quickly.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use switchboard_core::push::{OutboxItem, OutboxState};
use switchboard_push::{KeySet, PushOptions, RetryPolicy};
use tokio::sync::oneshot;

/// Worker options for tests: receivers on 127.0.0.1 allowed, quick polls
/// and retries that never give up.
pub fn options(keys: Arc<KeySet>) -> PushOptions {
    let mut o = PushOptions::new("http://agent.test", keys);
    o.ssrf.allow_hosts = vec!["127.0.0.1".into()];
    o.poll_interval = Duration::from_millis(50);
    o.retry = RetryPolicy {
        base: Duration::from_millis(20),
        max: Duration::from_millis(200),
        max_attempts: 1000,
    };
    o.request_timeout = Duration::from_secs(2);
    o
}

/// One request as the receiver saw it.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    }
}

#[derive(Clone, Default)]
struct Shared {
    /// Requests answered 2xx, in arrival order.
    accepted: Arc<Mutex<Vec<Received>>>,
    /// Requests answered with a failure.
    refused: Arc<Mutex<usize>>,
    /// Status to answer with.
    status: Arc<AtomicU16>,
}

/// A webhook receiver.
pub struct Receiver {
    pub addr: SocketAddr,
    shared: Shared,
    stop: Option<oneshot::Sender<()>>,
    /// The listening server; it ends once it stopped listening.
    serving: Option<tokio::task::JoinHandle<()>>,
}

async fn hook(State(s): State<Shared>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let status = StatusCode::from_u16(s.status.load(Ordering::SeqCst)).unwrap();
    if status.is_success() {
        s.accepted.lock().unwrap().push(Received { headers, body });
    } else {
        *s.refused.lock().unwrap() += 1;
    }
    status
}

impl Receiver {
    pub async fn start() -> Receiver {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), Shared::default()).await
    }

    async fn start_on(addr: SocketAddr, shared: Shared) -> Receiver {
        if shared.status.load(Ordering::SeqCst) == 0 {
            shared.status.store(200, Ordering::SeqCst);
        }
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/hook", post(hook))
            .with_state(shared.clone());
        let (tx, rx) = oneshot::channel::<()>();
        let serving = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = rx.await;
                })
                .await
                .unwrap();
        });
        Receiver {
            addr,
            shared,
            stop: Some(tx),
            serving: Some(serving),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// Answer every request with `status` from now on.
    pub fn answer(&self, status: u16) {
        self.shared.status.store(status, Ordering::SeqCst);
    }

    /// Stop listening (connections are refused) until [`Receiver::restart`].
    pub async fn go_down(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        // The server ends once its listener is closed and its connections
        // are drained.
        if let Some(serving) = self.serving.take() {
            tokio::time::timeout(Duration::from_secs(10), serving)
                .await
                .expect("the receiver did not stop listening in 10 s")
                .unwrap();
        }
    }

    /// Listen again on the same port, keeping what was received.
    pub async fn restart(&mut self) {
        let mut again = Self::start_on(self.addr, self.shared.clone()).await;
        self.stop = again.stop.take();
        self.serving = again.serving.take();
    }

    pub fn accepted(&self) -> Vec<Received> {
        self.shared.accepted.lock().unwrap().clone()
    }

    pub fn refused(&self) -> usize {
        *self.shared.refused.lock().unwrap()
    }

    /// Waits until at least `n` requests were accepted (or panics after `secs`).
    pub async fn wait_for(&self, n: usize, secs: u64) -> Vec<Received> {
        self.poll(secs, &format!("{n} accepted notifications"), || {
            let got = self.accepted();
            (got.len() >= n).then_some(got)
        })
        .await
    }

    /// Waits until at least `n` requests were refused (or panics after `secs`).
    pub async fn wait_refused(&self, n: usize, secs: u64) {
        self.poll(secs, &format!("{n} refused notifications"), || {
            (self.refused() >= n).then_some(())
        })
        .await
    }

    /// Polls `check` until it gives a value; panics after `secs`.
    async fn poll<T>(&self, secs: u64, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(done) = check() {
                return done;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "not {what} after {secs} s: {} accepted, {} refused",
                self.accepted().len(),
                self.refused()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A pending notification of event `seq` (also its id) of task `task-1`
/// for config `cfg`, as a worker would have claimed it.
pub fn outbox_item(url: &str, seq: u64, payload: &str) -> OutboxItem {
    OutboxItem {
        id: seq,
        tenant: String::new(),
        task_id: "task-1".into(),
        config_id: "cfg".into(),
        seq,
        payload: payload.into(),
        payload_kind: switchboard_core::push::PayloadKind::Event,
        hidden_metadata_keys: Vec::new(),
        url: url.into(),
        token: None,
        authentication: None,
        attempts: 1,
        last_error: None,
        state: OutboxState::Pending,
        created_at: chrono::Utc::now(),
    }
}
