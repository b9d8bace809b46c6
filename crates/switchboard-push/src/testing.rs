//! Test helpers (feature `testing`): a webhook [`Receiver`] and worker
//! options that deliver to it quickly.
//!
//! The receiver is a real HTTP server on 127.0.0.1 (the SSRF guard must be
//! told to allow that host; [`options`] does) that records every
//! notification, can be told to answer with a failure status, to accept only
//! the next few, or to stop listening for a while and come back on the same
//! port. Its waits wake on every arriving notification instead of polling,
//! and panic with what was seen so far when time runs out.
//!
//! This crate's own tests and the end-to-end tests of the `switchboard` crate
//! share it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use switchboard_core::push::{OutboxItem, OutboxState, PayloadKind};
use tokio::sync::{oneshot, watch};

use crate::{KeySet, PushOptions, RetryPolicy};

/// Worker options for tests, sending as the agent at `base`: receivers on
/// 127.0.0.1 allowed, quick polls and quick retries that never give up.
pub fn options(base: &str, keys: Arc<KeySet>) -> PushOptions {
    let mut o = PushOptions::new(base, keys);
    o.ssrf.allow_hosts = vec!["127.0.0.1".into()];
    o.poll_interval = Duration::from_millis(50);
    o.retry = RetryPolicy {
        base: Duration::from_millis(20),
        max: Duration::from_millis(100),
        max_attempts: 1000,
    };
    o.request_timeout = Duration::from_secs(2);
    o
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
        payload_kind: PayloadKind::Event,
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

/// One notification as the receiver saw it.
#[derive(Debug, Clone)]
pub struct Received {
    /// The request headers.
    pub headers: HeaderMap,
    /// The request body.
    pub body: Bytes,
}

impl Received {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// A header's value, if it was sent.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    }

    /// The task id the event is about (a `StreamResponse`: the task's `id`,
    /// or an update's `taskId`).
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

/// What the receiver's handler and its owner share; it outlives a restart.
#[derive(Debug, Clone)]
struct Shared {
    /// Notifications answered 2xx, in arrival order.
    accepted: Arc<Mutex<Vec<Received>>>,
    /// How many were answered with a failure.
    refused: Arc<AtomicUsize>,
    /// Status to answer with.
    status: Arc<AtomicU16>,
    /// Accept this many, then answer `status` (0: always `status`).
    accept_first: Arc<AtomicUsize>,
    /// Bumped after every notification, accepted or refused: what waiters
    /// wake up on.
    seen: Arc<watch::Sender<u64>>,
}

/// A webhook receiver listening at [`Receiver::url`].
#[derive(Debug)]
pub struct Receiver {
    /// Where it listens.
    pub addr: SocketAddr,
    shared: Shared,
    stop: Option<oneshot::Sender<()>>,
    /// The listening server; it ends once it stopped listening.
    serving: Option<tokio::task::JoinHandle<()>>,
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
    /// Starts a receiver on a free port that answers 200.
    pub async fn start() -> Receiver {
        let shared = Shared {
            accepted: Arc::default(),
            refused: Arc::default(),
            status: Arc::new(AtomicU16::new(200)),
            accept_first: Arc::default(),
            seen: Arc::new(watch::Sender::new(0)),
        };
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), shared).await
    }

    async fn start_on(addr: SocketAddr, shared: Shared) -> Receiver {
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

    /// The webhook URL to register in a push config.
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// Answer every notification with `status` from now on.
    pub fn answer(&self, status: u16) {
        self.shared.status.store(status, Ordering::SeqCst);
    }

    /// Accept the next `n` notifications, then answer with the set status.
    pub fn accept_next(&self, n: usize) {
        self.shared.accept_first.store(n, Ordering::SeqCst);
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

    /// The notifications accepted so far, in arrival order.
    pub fn accepted(&self) -> Vec<Received> {
        self.shared.accepted.lock().unwrap().clone()
    }

    /// How many notifications were refused so far.
    pub fn refused(&self) -> usize {
        self.shared.refused.load(Ordering::SeqCst)
    }

    /// Waits until at least `n` notifications were accepted; returns them.
    pub async fn wait_for(&self, n: usize, secs: u64) -> Vec<Received> {
        let what = format!("{n} accepted notifications");
        self.wait_until(secs, &what, |got| got.len() >= n).await
    }

    /// Waits until `done` says the notifications accepted so far are
    /// complete; returns them.
    pub async fn wait_until(
        &self,
        secs: u64,
        what: &str,
        done: impl Fn(&[Received]) -> bool,
    ) -> Vec<Received> {
        let mut got = Vec::new();
        self.wait(secs, what, || {
            got = self.accepted();
            done(&got)
        })
        .await;
        got
    }

    /// Waits until at least `n` notifications were refused.
    pub async fn wait_refused(&self, n: usize, secs: u64) {
        let what = format!("{n} refused notifications");
        self.wait(secs, &what, || self.refused() >= n).await;
    }

    /// Checks `done` now and after every notification that arrives, until
    /// it holds; panics after `secs` seconds.
    async fn wait(&self, secs: u64, what: &str, mut done: impl FnMut() -> bool) {
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
