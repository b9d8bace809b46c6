//! # switchboard-push: webhooks that really arrive
//!
//! The official A2A SDKs fire a push notification once and forget it: no
//! retry, no signature. This crate delivers switchboard's notifications
//! **at least once, in order, signed**, and refuses to be turned against
//! the server's own network.
//!
//! ## How a notification travels
//!
//! 1. The engine commits a task event. The store (memory, SQLite, …) queues
//!    one *outbox item* per push config of the task **in the same
//!    transaction** ([`switchboard_core::push`]). Nothing else is needed for
//!    durability: the outbox is part of the store.
//! 2. A [`PushWorker`] claims due items with a lease, at most one per config
//!    (strict per-config order), and POSTs each with a [`Deliverer`]:
//!    the event's `StreamResponse` JSON (for a config of
//!    [`PayloadKind::TaskSnapshot`](switchboard_core::push::PayloadKind),
//!    made over A2A 0.3: the 0.3 `Task` as of the event),
//!    `Content-Type: application/a2a+json`,
//!    `Authorization: <scheme> <credentials>` and `X-A2A-Notification-Token`
//!    from the config, and `X-A2A-Notification-Signature`, an ES256 JWT
//!    ([`NotificationClaims`]).
//! 3. 2xx acks the item. Anything else retries with exponential backoff and
//!    jitter ([`RetryPolicy`]); the last failure dead-letters it (logged at
//!    `warn`, queryable with `PushStore::list_dead_letters`). A crash at any
//!    point leaves a lease that runs out, and the item goes out again.
//!
//! ## Signatures and keys
//!
//! A [`KeySet`] holds the current ES256 key and retired-but-published keys,
//! persisted to a file; the server publishes them as a JWKS at
//! `/.well-known/jwks.json` (`A2aServer::jwks`). Receivers verify with
//! `switchboard_client::push::PushVerifier`, which checks the signature by
//! `kid`, the audience, freshness, the body hash, and replays.
//!
//! Dead letters are requeued, and keys rotated and retired, from outside
//! the server with [`admin`]'s calls (`switchboard push …`).
//!
//! ## The SSRF guard
//!
//! On by default ([`ssrf`]): every special-purpose address and every
//! address of the server's own host is refused, for IP literals and after
//! DNS resolution, when a config is created and again at each delivery;
//! redirects are not followed, and an allowlist ([`SsrfPolicy::allow_hosts`])
//! opens exact hosts for local tests.
//!
//! ## Why not reqwest
//!
//! The workspace's reqwest is built without TLS. Turning on its rustls
//! feature here would turn it on for every reqwest client in the same build
//! (cargo unifies features), and with `rustls-no-provider` each of them would
//! then panic unless a crypto provider had been installed first. So webhooks
//! use hyper directly with an explicitly configured rustls (ring, webpki
//! roots); the guard is the connector's DNS resolver.
//!
//! ```no_run
//! # async fn run(store: std::sync::Arc<switchboard_core::InMemoryStore>) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use switchboard_push::{KeySet, PushOptions, PushWorker};
//!
//! let keys = Arc::new(KeySet::load_or_create("push-keys.json")?);
//! let options = PushOptions::new("https://agent.example.com", keys.clone());
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! let worker = PushWorker::spawn(store, options, shutdown.clone())?;
//! // ... serve; then:
//! shutdown.cancel();
//! worker.join().await;
//! # Ok(()) }
//! ```

pub mod admin;
pub mod deliver;
pub mod keys;
#[cfg(feature = "postgres")]
pub mod shared_keys;
pub mod ssrf;
#[cfg(feature = "testing")]
pub mod testing;
pub mod worker;

use std::sync::Arc;
use std::time::Duration;

pub use deliver::{
    Deliverer, DeliveryError, NOTIFICATION_CONTENT_TYPE, NotificationClaims, SIGNATURE_HEADER,
    TOKEN_HEADER,
};
pub use keys::{KeyError, KeySet};
pub use ssrf::{
    Blocked, CreationRefusal, FixedAddresses, GuardedResolver, InterfaceAddresses, LocalAddresses,
    Resolve, SsrfPolicy, SsrfRefusal, StaticResolver, SystemResolver,
};
pub use worker::{PushWorker, RetryPolicy};

/// How the worker delivers.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// The server's public URL: the JWT `iss`.
    pub issuer: String,
    /// Signing keys.
    pub keys: Arc<KeySet>,
    /// Backoff and retry limit.
    pub retry: RetryPolicy,
    /// Longest an attempt may take, connect to last byte (default 10 s).
    pub request_timeout: Duration,
    /// Lifetime of a signature JWT (`exp - iat`, default 5 min).
    pub token_ttl: Duration,
    /// How often the outbox is checked for due retries (default 500 ms);
    /// new notifications are picked up at once via the store's wakeup.
    pub poll_interval: Duration,
    /// How long a claimed item is reserved for its attempt (default 60 s,
    /// at least the request timeout + 5 s): after a crash, the delay before
    /// it is attempted again.
    pub lease: Duration,
    /// Attempts in flight at once, across all configs (default 32).
    pub max_in_flight: usize,
    /// The SSRF guard.
    pub ssrf: SsrfPolicy,
    /// Name resolution (default: the system resolver).
    pub resolver: Arc<dyn Resolve>,
}

impl PushOptions {
    /// Defaults for a server at `issuer` signing with `keys`.
    pub fn new(issuer: impl Into<String>, keys: Arc<KeySet>) -> Self {
        PushOptions {
            issuer: issuer.into(),
            keys,
            retry: RetryPolicy::default(),
            request_timeout: Duration::from_secs(10),
            token_ttl: Duration::from_secs(300),
            poll_interval: Duration::from_millis(500),
            lease: Duration::from_secs(60),
            max_in_flight: 32,
            ssrf: SsrfPolicy::default(),
            resolver: Arc::new(SystemResolver),
        }
    }
}
