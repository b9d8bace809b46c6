//! Push notifications in one call: [`A2aServer::push`](crate::A2aServer::push).
//!
//! A2A push needs four parts to agree: the handler must accept push configs
//! (kept in the task store, whose commits queue one outbox item per config
//! and event), the SSRF guard must allow the same hosts when a config is
//! made and when it is delivered, the server must publish the signing keys
//! at `/.well-known/jwks.json`, and a delivery worker (crate
//! `switchboard-push`) must drain the outbox until the server stops.
//! [`PushOptions`] describes them once; `A2aServer::push` wires all four:
//!
//! ```no_run
//! # async fn run(handler: switchboard_core::RequestHandler) -> Result<(), Box<dyn std::error::Error>> {
//! use switchboard_server::A2aServer;
//! use switchboard_server::push::PushOptions;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! A2aServer::new(handler)
//!     .public_url("https://agent.example.com")
//!     .push(PushOptions::new().allow_host("127.0.0.1"))?
//!     .serve(listener, std::future::pending())
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! The delivery worker starts with [`A2aServer::serve`](crate::A2aServer::serve)
//! and stops with it (notifications being sent finish; the rest stay queued
//! in the store for the next start). Signing keys are fresh in-memory keys
//! unless given ([`PushOptions::keys`]) or kept in a file
//! ([`PushOptions::key_file`]); receivers verify them with
//! `switchboard_client::push::PushVerifier`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use switchboard_core::{PushConfigLimits, PushStore, PushUnavailable, RequestHandler};
use switchboard_push::{
    DeliveryError, GuardedResolver, KeyError, PushWorker, SsrfPolicy, SystemResolver,
};
pub use switchboard_push::{
    FixedAddresses, KeySet, LocalAddresses, Resolve, RetryPolicy, StaticResolver,
};
use tokio_util::sync::CancellationToken;

/// How the server runs push notifications; see the [module docs](self).
#[derive(Debug, Clone, Default)]
pub struct PushOptions {
    limits: PushConfigLimits,
    keys: Option<Arc<KeySet>>,
    key_file: Option<PathBuf>,
    retry: RetryPolicy,
    lease: Option<Duration>,
    resolver: Option<Arc<dyn Resolve>>,
    local: Option<Arc<dyn LocalAddresses>>,
}

impl PushOptions {
    /// Push with the defaults: SSRF guard on, fresh signing keys in memory,
    /// up to 15 attempts per notification with exponential backoff.
    pub fn new() -> Self {
        Self::default()
    }

    /// Exempts `host` (an exact name or IP literal) from the SSRF guard,
    /// both when a config is made and when it is delivered, e.g.
    /// `127.0.0.1` for a receiver on this machine. Repeatable.
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.limits.allow_hosts.push(host.into());
        self
    }

    /// Replaces the limits on push configs (count per task, URL and secret
    /// lengths, the guard). Hosts from [`allow_host`](Self::allow_host) are
    /// kept.
    pub fn limits(mut self, limits: PushConfigLimits) -> Self {
        let hosts = std::mem::take(&mut self.limits.allow_hosts);
        self.limits = limits;
        self.limits.allow_hosts.extend(hosts);
        self
    }

    /// Signs with `keys` (e.g. a set shared with other replicas, or one that
    /// is rotated while serving). Wins over [`key_file`](Self::key_file).
    pub fn keys(mut self, keys: Arc<KeySet>) -> Self {
        self.keys = Some(keys);
        self
    }

    /// Keeps the signing keys in `path` (created if missing), so receivers'
    /// cached JWKS stay valid across restarts.
    pub fn key_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.key_file = Some(path.into());
        self
    }

    /// When to retry a failed delivery and when to dead-letter it.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// How long a claimed notification is reserved for its attempt: after a
    /// crash, the delay before it is attempted again (default 60 s).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = Some(lease);
        self
    }

    /// Resolves webhook hosts with `resolver` (default: the system's), when
    /// a config is created and at each delivery.
    pub fn resolver(mut self, resolver: Arc<dyn Resolve>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Takes the host's own addresses, which webhooks may not reach, from
    /// `local` (default: the interfaces, read every 30 s).
    pub fn local_addresses(mut self, local: Arc<dyn LocalAddresses>) -> Self {
        self.local = Some(local);
        self
    }
}

/// Why push could not be wired.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PushError {
    /// The handler's task store keeps no push configs.
    #[error(transparent)]
    Unavailable(#[from] PushUnavailable),
    /// The signing keys could not be loaded or made.
    #[error("push signing keys: {0}")]
    Keys(#[from] KeyError),
    /// The delivery worker could not start (its HTTP client failed to build).
    #[error("starting the push delivery worker: {0}")]
    Worker(#[from] DeliveryError),
}

/// Push as wired on a server: the store and keys, ready to start delivery.
#[derive(Debug, Clone)]
pub(crate) struct Wired {
    store: Arc<dyn PushStore>,
    /// What the handler checks new configs against; agents mounted on the
    /// server are given the same ([`Wired::share_with`]).
    limits: PushConfigLimits,
    check: Arc<GuardedResolver>,
    pub(crate) keys: Arc<KeySet>,
    ssrf: SsrfPolicy,
    resolver: Arc<dyn Resolve>,
    retry: RetryPolicy,
    lease: Option<Duration>,
}

/// Enables push on `handler` and settles the signing keys.
pub(crate) fn wire(handler: &RequestHandler, options: PushOptions) -> Result<Wired, PushError> {
    let keys = match (options.keys, options.key_file) {
        (Some(keys), _) => keys,
        (None, Some(path)) => Arc::new(KeySet::load_or_create(path)?),
        (None, None) => Arc::new(KeySet::generate()?),
    };
    // One guard (resolver, allowlist, the host's addresses) for creation
    // and delivery, so a config is refused at creation for what its
    // deliveries would be. Turning the creation check off
    // (`PushConfigLimits::ssrf_guard`) leaves deliveries guarded.
    let mut ssrf = SsrfPolicy {
        allow_hosts: options.limits.allow_hosts.clone(),
        ..SsrfPolicy::default()
    };
    if let Some(local) = options.local {
        ssrf.local = local;
    }
    let resolver = options.resolver.unwrap_or_else(|| Arc::new(SystemResolver));
    let check = Arc::new(GuardedResolver::new(
        resolver.clone(),
        Arc::new(ssrf.clone()),
    ));
    let store = handler.enable_push(options.limits.clone(), Some(check.clone()))?;
    Ok(Wired {
        store,
        limits: options.limits,
        check,
        keys,
        ssrf,
        resolver,
        retry: options.retry,
        lease: options.lease,
    })
}

impl Wired {
    /// Push on another handler of the same store (an agent mounted on the
    /// server): its configs checked as this one's, its notifications
    /// delivered by this one's worker (the outbox is the store's, one for
    /// every agent), signed with the same keys.
    pub(crate) fn share_with(&self, handler: &RequestHandler) -> Result<(), PushUnavailable> {
        handler
            .enable_push(self.limits.clone(), Some(self.check.clone()))
            .map(|_| ())
    }
}

/// A running delivery worker and the token that stops it.
#[derive(Debug)]
pub(crate) struct Running {
    worker: PushWorker,
    stop: CancellationToken,
}

impl Wired {
    /// Starts the delivery worker, signing as `issuer` (the public URL).
    pub(crate) fn start(&self, issuer: &str) -> Result<Running, PushError> {
        let mut options = switchboard_push::PushOptions::new(issuer, self.keys.clone());
        options.ssrf = self.ssrf.clone();
        options.resolver = self.resolver.clone();
        options.retry = self.retry.clone();
        if let Some(lease) = self.lease {
            options.lease = lease;
        }
        let stop = CancellationToken::new();
        let worker = PushWorker::spawn(self.store.clone(), options, stop.clone())?;
        tracing::info!(kid = %self.keys.current_kid(), allow_hosts = ?self.ssrf.allow_hosts, "push notifications enabled");
        Ok(Running { worker, stop })
    }
}

impl Running {
    /// Stops the worker: attempts in flight finish (up to 15 s), the rest
    /// stay queued in the store.
    pub(crate) async fn stop(self) {
        self.stop.cancel();
        if tokio::time::timeout(Duration::from_secs(15), self.worker.join())
            .await
            .is_err()
        {
            tracing::warn!("push deliveries still in flight after 15 s were left to retry");
        }
    }
}
