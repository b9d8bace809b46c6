//! One delivery attempt: build the signed request, send it through the
//! guarded client, and judge the answer.
//!
//! The request is a plain HTTP POST whatever binding the task came in on:
//!
//! ```text
//! POST <config url>
//! Content-Type: application/a2a+json
//! Authorization: <scheme> <credentials>          (when the config has authentication)
//! X-A2A-Notification-Token: <token>              (when the config has a token)
//! X-A2A-Notification-Signature: <ES256 JWT>      (always)
//!
//! <the event's StreamResponse JSON, byte-identical on every retry;
//!  for a task-snapshot config (made over A2A 0.3): the 0.3 Task JSON of the
//!  task after the event>
//! ```
//!
//! The signature JWT's header carries `alg: ES256` and the `kid` of the
//! signing key (look it up in the server's `/.well-known/jwks.json`); its
//! claims are [`NotificationClaims`]. `body_sha256` binds the token to these
//! exact body bytes, `aud` to this webhook, `iat`/`exp` to a short window,
//! and `jti` makes each attempt unique. `jti` is **per attempt**, not per
//! notification: a receiver that saw an attempt (and recorded its `jti`) but
//! failed before answering 2xx must still accept the retry, so replay
//! protection cannot use a stable id. Receivers that want exactly-once
//! processing dedupe on `(task_id, seq)`, also in the claims.
//!
//! A 2xx answer is a delivery. Anything else (another status, a refusal by
//! the SSRF guard, a connect error, no answer within the timeout) is a
//! failed attempt, recorded on the outbox item with a readable reason.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, USER_AGENT};
use http::{HeaderValue, Request};
use http_body_util::{BodyExt as _, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use sha2::{Digest, Sha256};
use switchboard_core::push::{OutboxItem, PayloadKind};

use crate::keys::KeySet;
use crate::ssrf::{GuardedResolver, Resolve, SsrfPolicy, SsrfRefusal};

pub use switchboard_protocol::push::{NotificationClaims, SIGNATURE_HEADER, TOKEN_HEADER};

/// The body's media type.
pub const NOTIFICATION_CONTENT_TYPE: &str = "application/a2a+json";

/// Why an attempt failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeliveryError {
    /// The URL cannot be used (it was valid when the config was made, so
    /// this means a bad row).
    #[error("invalid webhook URL {url:?}: {why}")]
    BadRequest {
        /// The URL.
        url: String,
        /// What is wrong.
        why: String,
    },
    /// The SSRF guard refused the destination.
    #[error(transparent)]
    Refused(#[from] SsrfRefusal),
    /// The receiver answered with a non-2xx status.
    #[error("the receiver answered HTTP {status}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Status {
        /// The status code.
        status: u16,
        /// The start of the answer's body, for the log.
        body: String,
    },
    /// No complete answer within the request timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// Connecting or sending failed.
    #[error("sending failed: {0}")]
    Transport(String),
    /// The notification could not be signed.
    #[error("signing failed: {0}")]
    Signing(String),
}

type HttpsClient = Client<HttpsConnector<HttpConnector<GuardedResolver>>, Full<Bytes>>;

/// Sends notifications: one HTTP client (pooled connections, rustls with
/// ring and the webpki roots, guarded DNS), the keys, the issuer.
#[derive(Debug, Clone)]
pub struct Deliverer {
    client: HttpsClient,
    policy: Arc<SsrfPolicy>,
    keys: Arc<KeySet>,
    issuer: String,
    timeout: Duration,
    token_ttl: Duration,
}

impl Deliverer {
    /// A deliverer signing with `keys` as `issuer`.
    pub fn new(
        keys: Arc<KeySet>,
        issuer: impl Into<String>,
        policy: SsrfPolicy,
        resolver: Arc<dyn Resolve>,
        timeout: Duration,
        token_ttl: Duration,
    ) -> Result<Deliverer, DeliveryError> {
        let policy = Arc::new(policy);
        let mut http =
            HttpConnector::new_with_resolver(GuardedResolver::new(resolver, policy.clone()));
        // The TLS layer handles https; the TCP layer must accept both.
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(timeout));
        // One crypto provider in the whole process: ring (passed explicitly,
        // so nothing depends on a process-wide default being installed).
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| DeliveryError::Transport(format!("TLS setup: {e}")))?
        .with_root_certificates(rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        })
        .with_no_client_auth();
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(https);
        Ok(Deliverer {
            client,
            policy,
            keys,
            issuer: issuer.into(),
            timeout,
            token_ttl,
        })
    }

    /// Makes one attempt to deliver `item`; `Ok(status)` for a 2xx answer.
    pub async fn deliver(&self, item: &OutboxItem) -> Result<u16, DeliveryError> {
        let bad = |why: String| DeliveryError::BadRequest {
            url: item.url.clone(),
            why,
        };
        let url = url::Url::parse(&item.url).map_err(|e| bad(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad(format!("scheme {:?}", url.scheme())));
        }
        // IP literals never reach the resolver, so they are checked here.
        match url.host() {
            Some(url::Host::Ipv4(ip)) => self.policy.check(&ip.to_string(), ip.into())?,
            Some(url::Host::Ipv6(ip)) => self.policy.check(&format!("[{ip}]"), ip.into())?,
            Some(url::Host::Domain(_)) => {}
            None => return Err(bad("no host".into())),
        }
        let uri: http::Uri = url.as_str().parse().map_err(|e| bad(format!("{e}")))?;

        let body = Bytes::from(visible_payload(item));
        let now = chrono::Utc::now().timestamp();
        let claims = NotificationClaims {
            iss: self.issuer.clone(),
            aud: item.url.clone(),
            iat: now,
            exp: now + i64::try_from(self.token_ttl.as_secs()).unwrap_or(300),
            jti: uuid::Uuid::now_v7().to_string(),
            task_id: item.task_id.clone(),
            seq: item.seq,
            config_id: item.config_id.clone(),
            body_sha256: URL_SAFE_NO_PAD.encode(Sha256::digest(&body)),
        };
        let jwt = self
            .keys
            .sign(&claims)
            .map_err(|e| DeliveryError::Signing(e.to_string()))?;
        let header = |v: &str| {
            HeaderValue::from_str(v).map_err(|_| bad("a header value is not valid HTTP".into()))
        };
        let mut req = Request::post(uri)
            .header(CONTENT_TYPE, NOTIFICATION_CONTENT_TYPE)
            .header(
                USER_AGENT,
                concat!("switchboard-push/", env!("CARGO_PKG_VERSION")),
            )
            .header(SIGNATURE_HEADER, header(&jwt)?);
        if let Some(auth) = &item.authentication {
            let value = match auth.credentials.as_deref().filter(|c| !c.is_empty()) {
                Some(c) => format!("{} {c}", auth.scheme),
                None => auth.scheme.clone(),
            };
            req = req.header(AUTHORIZATION, header(&value)?);
        }
        if let Some(token) = item.token.as_deref().filter(|t| !t.is_empty()) {
            req = req.header(TOKEN_HEADER, header(token)?);
        }
        // The delivery span's context, when tracing is on (W3C Trace Context).
        if let Some(tp) = switchboard_telemetry::trace::current() {
            req = req.header(
                switchboard_telemetry::trace::TRACEPARENT,
                header(&tp.to_string())?,
            );
        }
        let req = req.body(Full::new(body)).map_err(|e| bad(e.to_string()))?;

        let exchange = async {
            let resp = self.client.request(req).await.map_err(classify)?;
            let status = resp.status();
            if status.is_success() {
                return Ok(status.as_u16());
            }
            // Keep the start of the answer: it usually says what is wrong.
            let mut body = resp.into_body();
            let mut snippet = Vec::new();
            while snippet.len() < 300 {
                match body.frame().await {
                    Some(Ok(frame)) => {
                        if let Some(data) = frame.data_ref() {
                            snippet.extend_from_slice(data);
                        }
                    }
                    _ => break,
                }
            }
            snippet.truncate(300);
            Err(DeliveryError::Status {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&snippet).trim().to_string(),
            })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| DeliveryError::Timeout(self.timeout))?
    }
}

/// Turns a client error into a readable reason, recognizing SSRF refusals
/// raised by the resolver deep inside the connector.
fn classify(err: hyper_util::client::legacy::Error) -> DeliveryError {
    let mut parts = vec![err.to_string()];
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(&err);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && let Some(refusal) = io.get_ref().and_then(|i| i.downcast_ref::<SsrfRefusal>())
        {
            return DeliveryError::Refused(refusal.clone());
        }
        parts.push(e.to_string());
        source = e.source();
    }
    parts.dedup();
    DeliveryError::Transport(parts.join(": "))
}

/// The body for one config: the stored event, minus the metadata of
/// extensions the config's creator did not activate. A task-snapshot item
/// goes out as the stored task in the A2A 0.3 JSON-RPC form (`kind: "task"`,
/// kebab-case states; see `switchboard_core::push`): only the 0.3 edges ask
/// for snapshots, since a 0.3 receiver expects the task, and this is where
/// that form is chosen, not in the engine or the stores. An event item
/// without hidden keys goes out byte for byte as stored (no re-encoding);
/// the other cases are deterministic re-encodings, so retries are
/// byte-identical too.
fn visible_payload(item: &OutboxItem) -> String {
    let snapshot = item.payload_kind == PayloadKind::TaskSnapshot;
    if item.hidden_metadata_keys.is_empty() && !snapshot {
        return item.payload.clone();
    }
    match serde_json::from_str::<switchboard_protocol::StreamResponse>(&item.payload) {
        Ok(mut event) => {
            if !item.hidden_metadata_keys.is_empty() {
                switchboard_core::visibility::ExtensionFilter::hiding(
                    item.hidden_metadata_keys.clone(),
                )
                .event(&mut event);
            }
            let encoded = match event {
                switchboard_protocol::StreamResponse::Task(task) if snapshot => {
                    serde_json::to_string(&switchboard_protocol::v03::rpc::Event::task(task))
                }
                // Our stores queue a task for every snapshot item; anything
                // else (a row from before snapshots were queued) goes out as
                // the event it is.
                other => serde_json::to_string(&other),
            };
            encoded.unwrap_or_else(|_| item.payload.clone())
        }
        // Not a 1.0 event (never written by our stores): send it as stored.
        Err(_) => item.payload.clone(),
    }
}
