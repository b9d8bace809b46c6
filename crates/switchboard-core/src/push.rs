//! Push notifications, engine side: webhook configs and the durable outbox.
//!
//! A client registers a webhook for a task (CreateTaskPushNotificationConfig,
//! or inline in SendMessage). From then on every event of that task must
//! reach the webhook **at least once, in order**, even if the receiver is
//! down for a while or this server restarts. The design that makes this true
//! is a *transactional outbox*:
//!
//! 1. A store that implements [`PushStore`] as well as
//!    [`TaskStore`](crate::TaskStore) writes, inside the very same
//!    transaction as [`TaskStore::commit`](crate::TaskStore::commit), one
//!    [`OutboxItem`] per push config of the task for the committed event.
//!    So an event is either durable *and* queued for every webhook, or
//!    neither: no crash window can lose a notification.
//! 2. A delivery worker (crate `switchboard-push`) [`claim`](PushStore::claim)s
//!    due items with a lease, POSTs them, and then
//!    [`ack`](PushStore::ack)s (2xx), [`retry`](PushStore::retry)s (with
//!    backoff) or [`dead_letter`](PushStore::dead_letter)s them. A worker that
//!    dies mid-delivery leaves a lease that simply expires: the item is
//!    claimed again (at-least-once; receivers dedupe by task id + sequence).
//! 3. Ordering is the store's job too: `claim` never hands out item N+1 of a
//!    config while item N of the same config is still pending (due, waiting
//!    for a retry, or claimed). A dead-lettered item no longer blocks its
//!    successors: giving up on one event must not silence the webhook.
//!
//! Payloads are serialized once at commit time, so every retry sends
//! byte-identical bodies (the signature covers a hash of them). What is
//! stored is a property of the config, its [`PayloadKind`] (copied into each
//! item as [`OutboxItem::payload_kind`]):
//!
//! - **[`PayloadKind::Event`]**: the event's [`StreamResponse`] JSON.
//! - **[`PayloadKind::TaskSnapshot`]**: the whole task *as of that event*,
//!   not the event. The worker cannot rebuild that later (the task moves on,
//!   and loading it at delivery time would send a later state, or the same
//!   final state for every retry of every event), so the store queues the
//!   snapshot it commits together with the event, wrapped as a
//!   `StreamResponse` `{"task": …}` ([`outbox_payload`]). An event that is
//!   itself a task keeps its own JSON. The SQL stores' triggers do the same
//!   with the `tasks` row written in the same transaction. A commit of
//!   several events (task creation plus its first change, or an agent's
//!   batch, `TaskEvents::batch`) has one snapshot, the last: its non-task
//!   events all carry that one. No intermediate state of a batch was ever
//!   stored or shown, so there is no other to send.
//!
//! The engine never decides which kind a config gets, and knows nothing of
//! protocol versions: the binding that receives the call does, through
//! [`CallContext::push_payload`](crate::CallContext::push_payload) (a
//! dialect whose receivers expect the task asks for snapshots), and the
//! delivery worker (crate `switchboard-push`) decides how each kind is
//! written on the wire.
//!
//! This module also holds what the handler needs to **validate** configs
//! ([`PushConfigLimits`], [`validate_config`]) including the SSRF rule for
//! literal IP addresses ([`blocked_address`]), which the delivery worker
//! applies again after DNS resolution.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use switchboard_protocol::{
    A2AError, AuthenticationInfo, StreamResponse, TaskPushNotificationConfig,
};

use crate::store::StoreError;

mod addresses;
pub use addresses::{SpecialAddress, blocked_address};

/// What a webhook receives for each event of its task: a property of the
/// push config, chosen by the binding that created it (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PayloadKind {
    /// The event itself, as a `StreamResponse`.
    #[default]
    Event,
    /// The task as of the event: the snapshot committed with it, as a
    /// `StreamResponse` `{"task": …}`.
    TaskSnapshot,
}

impl PayloadKind {
    /// The name stores persist (`event`, `task_snapshot`).
    pub fn as_str(self) -> &'static str {
        match self {
            PayloadKind::Event => "event",
            PayloadKind::TaskSnapshot => "task_snapshot",
        }
    }

    /// The kind named `name` by [`as_str`](Self::as_str); `None` for any
    /// other text.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "event" => Some(PayloadKind::Event),
            "task_snapshot" => Some(PayloadKind::TaskSnapshot),
            _ => None,
        }
    }
}

/// A webhook registered for one task, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct PushConfig {
    /// Tenant of the task.
    pub tenant: String,
    /// The task.
    pub task_id: String,
    /// Config id, unique per task.
    pub id: String,
    /// Absolute http(s) URL to POST to.
    pub url: String,
    /// Sent as `X-A2A-Notification-Token` when set.
    pub token: Option<String>,
    /// Sent as `Authorization: <scheme> <credentials>` when set.
    pub authentication: Option<AuthenticationInfo>,
    /// What the receiver gets for each event.
    pub payload_kind: PayloadKind,
    /// Metadata keys of declared extensions the config's creator did not
    /// activate; removed from every notification for this config (see
    /// [`crate::visibility`]).
    pub hidden_metadata_keys: Vec<String>,
}

impl PushConfig {
    /// The config in its 1.0 wire form (tenant only when not the default).
    pub fn to_wire(&self) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            tenant: (!self.tenant.is_empty()).then(|| self.tenant.clone()),
            id: Some(self.id.clone()),
            task_id: Some(self.task_id.clone()),
            url: self.url.clone(),
            token: self.token.clone(),
            authentication: self.authentication.clone(),
        }
    }
}

/// What [`PushStore::put_config`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutConfig {
    /// A new config was stored.
    Created,
    /// A config with the same id existed and was replaced (same position).
    Replaced,
    /// Nothing was stored: the task already has the maximum number of configs.
    LimitReached,
}

/// Which configs [`PushStore::list_configs`] returns: one task's, `limit`
/// at a time, after position `after` (a [`ConfigPage::next`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigQuery<'a> {
    /// Tenant of the task.
    pub tenant: &'a str,
    /// The task.
    pub task_id: &'a str,
    /// Continue after this position (none: from the first config).
    pub after: Option<u64>,
    /// Page size.
    pub limit: usize,
}

/// One page of [`PushStore::list_configs`], in creation order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigPage {
    /// The configs.
    pub configs: Vec<PushConfig>,
    /// Opaque position to continue after, when there are more.
    pub next: Option<u64>,
}

/// Whether an outbox item still waits for delivery or was given up on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutboxState {
    /// Waiting for (another) delivery attempt, or being delivered right now.
    Pending,
    /// Delivery was given up on after the retry limit; kept for inspection.
    Dead,
}

/// One notification to deliver: an event of a task for one of its configs.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxItem {
    /// Store-assigned id, increasing in commit order.
    pub id: u64,
    /// Tenant of the task.
    pub tenant: String,
    /// The task.
    pub task_id: String,
    /// The config this item is for.
    pub config_id: String,
    /// The event's position in the task's log.
    pub seq: u64,
    /// The stored body, a `StreamResponse` JSON: the event, or the task
    /// snapshot after it as `{"task": …}` (see the module docs).
    pub payload: String,
    /// What `payload` holds: its config's kind when the item was queued.
    pub payload_kind: PayloadKind,
    /// Where to POST, from the config.
    pub url: String,
    /// Token header value, from the config.
    pub token: Option<String>,
    /// Authorization, from the config.
    pub authentication: Option<AuthenticationInfo>,
    /// Metadata keys to remove from the payload, from the config.
    pub hidden_metadata_keys: Vec<String>,
    /// Delivery attempts started so far (a claim counts as one).
    pub attempts: u32,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// Pending or dead.
    pub state: OutboxState,
    /// When the item was queued.
    pub created_at: DateTime<Utc>,
}

/// What [`PushStore::requeue_dead_letter`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requeue {
    /// The dead letter is pending again, due now, with its attempts reset.
    Requeued,
    /// No dead letter with this id in this tenant (never was, delivered, or
    /// already requeued).
    NotFound,
    /// Its config was deleted, so nothing could deliver it; it stays dead.
    ConfigDeleted,
}

/// Storage for push configs and the notification outbox. See the module docs.
///
/// # Contract
/// - Configs are scoped by `(tenant, task_id)`; ids are unique within it.
///   [`put_config`](Self::put_config) is an upsert that enforces the per-task
///   limit atomically; [`delete_config`](Self::delete_config) is idempotent
///   and also drops the config's *pending* outbox items (nothing is sent
///   after a delete), keeping dead letters.
/// - When the same store commits a task event, it queues one outbox item per
///   config of that task **in the same transaction**, in config creation order.
/// - [`claim`](Self::claim) returns due items (next attempt time reached,
///   no live lease), at most one per config: the pending item with the
///   lowest sequence, and nothing for a config that has an item leased.
///   Claiming leases the item for `lease` and counts an attempt.
/// - [`ack`](Self::ack) removes the item; [`retry`](Self::retry) releases the
///   lease and schedules the next attempt; [`dead_letter`](Self::dead_letter)
///   moves it to [`OutboxState::Dead`]. All three are no-ops for unknown ids.
/// - [`requeue_dead_letter`](Self::requeue_dead_letter) is the operator's way
///   back: a dead letter of a config that still exists becomes pending, due
///   now, with its attempt count reset. Being the oldest item of its config
///   again, it goes out (once any attempt in flight for the config settled)
///   before that config's later pending items; events
///   already delivered after it are not re-sent, so a receiver may see it
///   late (receivers order by the task's sequence number).
#[async_trait]
pub trait PushStore: Send + Sync + fmt::Debug + 'static {
    /// Stores (or replaces, by id) a config unless the task already has
    /// `max_per_task` other configs.
    async fn put_config(
        &self,
        config: &PushConfig,
        max_per_task: usize,
    ) -> Result<PutConfig, StoreError>;

    /// One config by id.
    async fn get_config(
        &self,
        tenant: &str,
        task_id: &str,
        id: &str,
    ) -> Result<Option<PushConfig>, StoreError>;

    /// A task's configs in creation order, a page at a time.
    async fn list_configs(&self, query: ConfigQuery<'_>) -> Result<ConfigPage, StoreError>;

    /// Removes a config; `Ok(false)` if there was none.
    async fn delete_config(
        &self,
        tenant: &str,
        task_id: &str,
        id: &str,
    ) -> Result<bool, StoreError>;

    /// How many configs a task has.
    async fn count_configs(&self, tenant: &str, task_id: &str) -> Result<usize, StoreError>;

    /// Leases up to `limit` due items, at most one per config (see the contract).
    async fn claim(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        lease: Duration,
    ) -> Result<Vec<OutboxItem>, StoreError>;

    /// The item was delivered: forget it.
    async fn ack(&self, id: u64) -> Result<(), StoreError>;

    /// The attempt failed: try again at `next_attempt_at`.
    async fn retry(
        &self,
        id: u64,
        next_attempt_at: DateTime<Utc>,
        error: &str,
    ) -> Result<(), StoreError>;

    /// Give up on the item; it stays queryable as a dead letter.
    async fn dead_letter(&self, id: u64, error: &str) -> Result<(), StoreError>;

    /// Dead letters of a tenant (optionally one task), oldest first, at most `limit`.
    async fn list_dead_letters(
        &self,
        tenant: &str,
        task_id: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OutboxItem>, StoreError>;

    /// Puts dead letter `id` of `tenant` back in the queue (see the contract).
    async fn requeue_dead_letter(&self, tenant: &str, id: u64) -> Result<Requeue, StoreError>;

    /// How many items wait for delivery (pending, leased or not).
    async fn pending_count(&self) -> Result<u64, StoreError>;

    /// A signal the store raises when it queued new items, so a worker can
    /// deliver at once instead of at its next poll. `None`: poll only.
    fn wakeup(&self) -> Option<Arc<tokio::sync::Notify>> {
        None
    }
}

/// Publishes the public keys receivers verify notification signatures with
/// (a JWKS document). Implemented by `switchboard_push::KeySet`; the server
/// serves it at [`JWKS_PATH`]. Called per request, so rotations show at once.
pub trait JwksSource: Send + Sync + fmt::Debug + 'static {
    /// The JWK Set as JSON (`{"keys": [...]}`).
    fn jwks(&self) -> serde_json::Value;
}

/// Where the server publishes the push signing keys.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// The payload of an outbox item for `event` (the 1.0 `StreamResponse` JSON).
pub fn payload_json(event: &StreamResponse) -> Result<String, StoreError> {
    serde_json::to_string(event)
        .map_err(|e| StoreError::Backend(format!("encoding a push payload: {e}")))
}

/// The payload of an outbox item for `event` and a config of `kind`, where
/// `task` is the snapshot committed with the event: the event itself for
/// [`PayloadKind::Event`] and for events that are a task, else the snapshot
/// as a `{"task": …}` `StreamResponse`.
pub fn outbox_payload(
    kind: PayloadKind,
    event: &StreamResponse,
    task: &switchboard_protocol::Task,
) -> Result<String, StoreError> {
    if kind == PayloadKind::TaskSnapshot && !matches!(event, StreamResponse::Task(_)) {
        payload_json(&StreamResponse::Task(task.clone()))
    } else {
        payload_json(event)
    }
}

// ---------------------------------------------------------------------------
// Validation.

/// Limits and policy for push configs, checked when a config is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushConfigLimits {
    /// Most configs one task may have (default 10).
    pub max_configs_per_task: usize,
    /// Longest accepted URL in bytes (default 2048).
    pub max_url_bytes: usize,
    /// Longest token, scheme + credentials, or id, in bytes (default 4096).
    pub max_secret_bytes: usize,
    /// Refuse webhooks on loopback, private, link-local, ... addresses
    /// (default `true`). See [`blocked_address`].
    pub ssrf_guard: bool,
    /// Hosts (exact names or IP literals, case-insensitive) exempt from the
    /// SSRF guard, e.g. `127.0.0.1` or `localhost` for local testing.
    pub allow_hosts: Vec<String>,
}

impl Default for PushConfigLimits {
    fn default() -> Self {
        PushConfigLimits {
            max_configs_per_task: 10,
            max_url_bytes: 2048,
            max_secret_bytes: 4096,
            ssrf_guard: true,
            allow_hosts: Vec::new(),
        }
    }
}

impl PushConfigLimits {
    /// `true` when `host` (a URL host, IPv6 with or without brackets) is on
    /// the allowlist.
    pub fn is_allowed_host(&self, host: &str) -> bool {
        host_allowed(&self.allow_hosts, host)
    }
}

/// `true` when `host` is in `allow_hosts` (case-insensitive, brackets of
/// IPv6 literals ignored, and IP literals compared as addresses).
pub fn host_allowed(allow_hosts: &[String], host: &str) -> bool {
    let norm = |h: &str| {
        h.trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase()
    };
    let host = norm(host);
    let host_ip = host.parse::<IpAddr>().ok();
    allow_hosts.iter().any(|a| {
        let a = norm(a);
        a == host || (host_ip.is_some() && a.parse::<IpAddr>().ok() == host_ip)
    })
}

/// The explanation attached to every SSRF refusal, naming the way out.
pub const SSRF_HINT: &str = "webhooks to loopback, private, link-local, other special-purpose addresses and this server's own addresses are refused to prevent server-side request forgery; to allow a host for local testing, start the server with --push-allow-host <host> (config key push_allow_hosts)";

/// Where a new config's webhook may point, beyond what [`validate_config`]
/// can tell from the URL alone: what its host name resolves to now, and
/// the addresses of this server's own host. Set with
/// [`RequestHandler::enable_push`](crate::RequestHandler::enable_push);
/// crate `switchboard-push` implements it with the resolver and guard its
/// deliveries use, so a config is refused at creation for exactly what its
/// deliveries would be refused for (they are checked again at delivery,
/// since a name can resolve elsewhere later).
pub trait DestinationCheck: Send + Sync + fmt::Debug + 'static {
    /// `Err` with the reason (shown to the client, naming the address and
    /// its class) when webhooks to `host` — the URL's host, IPv6 literals
    /// in brackets — must be refused. Must finish in bounded time.
    fn check<'a>(
        &'a self,
        host: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<(), crate::BoxError>>;
}

/// Checks a config a client sent (`field` prefixes the field names in
/// errors, e.g. `configuration.taskPushNotificationConfig`). Returns -32602
/// errors that say what to fix.
pub fn validate_config(
    cfg: &TaskPushNotificationConfig,
    limits: &PushConfigLimits,
    field: &str,
) -> Result<(), A2AError> {
    let f = |name: &str| {
        if field.is_empty() {
            name.to_string()
        } else {
            format!("{field}.{name}")
        }
    };
    let url_text = cfg.url.trim();
    if url_text.is_empty() {
        return Err(A2AError::invalid_field(f("url"), "is required"));
    }
    if url_text.len() > limits.max_url_bytes {
        return Err(A2AError::invalid_field(
            f("url"),
            format!(
                "is {} bytes long; at most {} are accepted",
                url_text.len(),
                limits.max_url_bytes
            ),
        ));
    }
    let url = url::Url::parse(url_text).map_err(|e| {
        A2AError::invalid_field(
            f("url"),
            format!("is not an absolute URL ({e}): {url_text:?}"),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(A2AError::invalid_field(
            f("url"),
            format!("must use http or https, not {:?}", url.scheme()),
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(A2AError::invalid_field(
            f("url"),
            "must not carry credentials; put them in `authentication` instead",
        ));
    }
    let host = match url.host() {
        Some(h) => h,
        None => return Err(A2AError::invalid_field(f("url"), "has no host")),
    };
    if limits.ssrf_guard {
        let host_text = host.to_string();
        if !limits.is_allowed_host(&host_text) {
            let why = match host {
                url::Host::Ipv4(ip) => blocked_address(IpAddr::V4(ip)).map(|s| s.to_string()),
                url::Host::Ipv6(ip) => blocked_address(IpAddr::V6(ip)).map(|s| s.to_string()),
                url::Host::Domain(d) => {
                    let d = d.trim_end_matches('.').to_ascii_lowercase();
                    (d == "localhost" || d.ends_with(".localhost"))
                        .then(|| "a loopback name (localhost)".to_string())
                }
            };
            if let Some(why) = why {
                return Err(A2AError::invalid_field(
                    f("url"),
                    format!("{host_text} is {why}; {SSRF_HINT}"),
                ));
            }
        }
    }
    if let Some(id) = cfg.id.as_deref().filter(|s| !s.is_empty()) {
        check_text(&f("id"), id, limits.max_secret_bytes.min(256))?;
    }
    if let Some(token) = &cfg.token {
        check_text(&f("token"), token, limits.max_secret_bytes)?;
    }
    if let Some(auth) = &cfg.authentication {
        let scheme = auth.scheme.trim();
        if scheme.is_empty() {
            return Err(A2AError::invalid_field(
                f("authentication.scheme"),
                "is required when authentication is given (e.g. \"Bearer\")",
            ));
        }
        // An HTTP auth scheme is a token (RFC 9110): no spaces or separators,
        // which also keeps it from smuggling header syntax.
        if let Some(bad) = scheme
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(*c)))
        {
            return Err(A2AError::invalid_field(
                f("authentication.scheme"),
                format!("{scheme:?} is not an HTTP authentication scheme (character {bad:?})"),
            ));
        }
        if scheme.len() > 64 {
            return Err(A2AError::invalid_field(
                f("authentication.scheme"),
                "is longer than 64 bytes",
            ));
        }
        if let Some(c) = &auth.credentials {
            check_text(&f("authentication.credentials"), c, limits.max_secret_bytes)?;
        }
    }
    Ok(())
}

/// A value that becomes an HTTP header: bounded, visible ASCII and spaces
/// only (CR/LF would let a client inject headers into our requests).
fn check_text(field: &str, value: &str, max: usize) -> Result<(), A2AError> {
    if value.len() > max {
        return Err(A2AError::invalid_field(
            field,
            format!("is {} bytes long; at most {max} are accepted", value.len()),
        ));
    }
    if value.bytes().any(|b| !(b == b' ' || b.is_ascii_graphic())) {
        return Err(A2AError::invalid_field(
            field,
            "may only contain visible ASCII characters and spaces (it is sent as an HTTP header)",
        ));
    }
    Ok(())
}

/// The shared test suite every [`PushStore`] must pass.
#[cfg(feature = "testing")]
pub mod conformance;
