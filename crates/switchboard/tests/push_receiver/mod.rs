//! A webhook receiver for the end-to-end push tests: a real HTTP server on
//! 127.0.0.1 that records every notification and can be told to answer 503.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;

/// One notification as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// The task id the event is about.
    pub fn task_id(&self) -> String {
        let v = self.json();
        let inner = v
            .as_object()
            .and_then(|o| o.values().next())
            .cloned()
            .unwrap();
        inner
            .get("taskId")
            .or_else(|| inner.get("id"))
            .and_then(|x| x.as_str())
            .unwrap()
            .to_string()
    }
}

#[derive(Clone)]
struct Shared {
    accepted: Arc<Mutex<Vec<Received>>>,
    refused: Arc<AtomicUsize>,
    status: Arc<AtomicU16>,
    /// Accept this many, then answer `status` (0: always `status`).
    accept_first: Arc<AtomicUsize>,
    /// Bumped after every notification, accepted or refused: what waiters
    /// wake up on.
    seen: Arc<watch::Sender<u64>>,
}

pub struct Receiver {
    pub addr: SocketAddr,
    shared: Shared,
}

async fn hook(State(s): State<Shared>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let mut accepted = s.accepted.lock().unwrap();
    let budget = s.accept_first.load(Ordering::SeqCst);
    let status = if budget > 0 {
        s.accept_first.fetch_sub(1, Ordering::SeqCst);
        StatusCode::OK
    } else {
        StatusCode::from_u16(s.status.load(Ordering::SeqCst)).unwrap()
    };
    if status.is_success() {
        accepted.push(Received { headers, body });
    } else {
        s.refused.fetch_add(1, Ordering::SeqCst);
    }
    drop(accepted);
    s.seen.send_modify(|n| *n += 1);
    status
}

impl Receiver {
    pub async fn start() -> Receiver {
        let shared = Shared {
            accepted: Arc::default(),
            refused: Arc::default(),
            status: Arc::new(AtomicU16::new(200)),
            accept_first: Arc::default(),
            seen: Arc::new(watch::Sender::new(0)),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/hook", post(hook))
            .with_state(shared.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { addr, shared }
    }

    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    pub fn answer(&self, status: u16) {
        self.shared.status.store(status, Ordering::SeqCst);
    }

    /// Accept the next `n` notifications, then answer with the set status.
    pub fn accept_next(&self, n: usize) {
        self.shared.accept_first.store(n, Ordering::SeqCst);
    }

    pub fn accepted(&self) -> Vec<Received> {
        self.shared.accepted.lock().unwrap().clone()
    }

    pub fn refused(&self) -> usize {
        self.shared.refused.load(Ordering::SeqCst)
    }

    /// Waits until `done` says the notifications so far are complete.
    pub async fn wait_until(
        &self,
        secs: u64,
        what: &str,
        done: impl Fn(&[Received]) -> bool,
    ) -> Vec<Received> {
        let mut got = Vec::new();
        self.wait_for(secs, what, || {
            got = self.accepted();
            done(&got)
        })
        .await;
        got
    }

    /// Waits until at least `n` notifications were refused.
    pub async fn wait_refused(&self, n: usize, secs: u64) {
        let what = format!("{n} refused notifications");
        self.wait_for(secs, &what, || self.refused() >= n).await;
    }

    /// Checks `done` now and after every notification that arrives, until
    /// it holds; panics after `secs` seconds.
    async fn wait_for(&self, secs: u64, what: &str, mut done: impl FnMut() -> bool) {
        let mut seen = self.shared.seen.subscribe();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            // Marked seen before looking: a notification after the look
            // wakes the wait below.
            seen.borrow_and_update();
            if done() {
                return;
            }
            let woke = tokio::time::timeout_at(deadline, seen.changed()).await;
            assert!(
                matches!(woke, Ok(Ok(()))),
                "{what}: not complete after {secs} s ({} received, {} refused)",
                self.accepted().len(),
                self.refused()
            );
        }
    }
}
