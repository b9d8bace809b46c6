//! Receiving push notifications: verify that a webhook call really comes
//! from the agent, is meant for you, is fresh, and was not replayed.
//!
//! A switchboard server signs every notification it POSTs with an ES256 JWT
//! in the `X-A2A-Notification-Signature` header. Its claims bind the token
//! to the request:
//!
//! | claim | meaning | checked here |
//! |---|---|---|
//! | header `kid` | which of the agent's keys signed | key looked up in the agent's JWKS |
//! | `iss` | the agent's public URL | optional ([`PushVerifier::issuer`]) |
//! | `aud` | the webhook URL it was sent to | must be one of yours |
//! | `iat`, `exp` | issued at, expires (minutes later) | not expired, not older than `max_age`, not from the future (with `leeway`) |
//! | `jti` | unique per delivery attempt | remembered until it expires: a second use is a replay |
//! | `body_sha256` | base64url SHA-256 of the body bytes | must match the body received |
//! | `task_id`, `seq`, `config_id` | which event of which task | returned; dedupe on `(task_id, seq)` |
//!
//! Delivery is at-least-once: a retry after a timeout carries a new `jti`
//! (so it passes), and the same `(task_id, seq)`; process each pair once.
//!
//! Keys come from the agent's `/.well-known/jwks.json`, cached for
//! [`jwks_ttl`](PushVerifier::jwks_ttl) and fetched again when a token names
//! an unknown `kid` (the agent rotated its key), at most once per
//! [`min_refetch_interval`](PushVerifier::min_refetch_interval) so forged
//! `kid`s cannot make you hammer the agent.
//!
//! ```no_run
//! # async fn handle(headers: reqwest::header::HeaderMap, body: Vec<u8>) {
//! use switchboard_client::push::PushVerifier;
//!
//! let verifier = PushVerifier::from_jwks_url(
//!     "https://agent.example.com/.well-known/jwks.json",
//!     "https://me.example.com/webhook",
//! );
//! match verifier.verify(&headers, &body).await {
//!     Ok(n) => println!("task {} event {}: {:?}", n.claims.task_id, n.claims.seq, n.event),
//!     Err(e) => eprintln!("rejected: {e}"), // answer 401
//! }
//! # }
//! ```

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use reqwest::header::HeaderMap;
use sha2::{Digest, Sha256};
use switchboard_protocol::StreamResponse;

pub use switchboard_protocol::push::{NotificationClaims, SIGNATURE_HEADER, TOKEN_HEADER};

/// A notification that passed every check.
#[derive(Debug, Clone)]
pub struct VerifiedNotification {
    /// The verified claims.
    pub claims: NotificationClaims,
    /// The key that signed it.
    pub kid: String,
    /// The body, decoded. A config made over A2A 0.3 is notified with the
    /// 0.3 `Task` JSON (`kind: "task"`); it arrives here converted to
    /// [`StreamResponse::Task`].
    pub event: StreamResponse,
    /// The `X-A2A-Notification-Token` header, if sent (compare it with the
    /// token you registered).
    pub token: Option<String>,
}

/// Why a notification was rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// No signature header.
    #[error("no {SIGNATURE_HEADER} header")]
    MissingSignature,
    /// The token is not a JWT this verifier understands.
    #[error("malformed signature token: {0}")]
    Malformed(String),
    /// No published key has the token's `kid`.
    #[error("no published key has kid {0:?}")]
    UnknownKey(String),
    /// The signature does not verify with the key named by `kid`.
    #[error("the signature does not verify")]
    BadSignature,
    /// The token is for another receiver.
    #[error("the token is for audience {found:?}, not this receiver")]
    WrongAudience {
        /// The `aud` in the token.
        found: String,
    },
    /// The token was issued by another agent.
    #[error("the token was issued by {found:?}, not the expected agent")]
    WrongIssuer {
        /// The `iss` in the token.
        found: String,
    },
    /// The token expired, or was issued too long ago, or in the future.
    #[error("stale notification: {0}")]
    Stale(String),
    /// The body is not the one that was signed.
    #[error("the body does not match the signed hash")]
    BodyMismatch,
    /// This exact token was already accepted once.
    #[error("replayed notification (jti {0} was already used)")]
    Replay(String),
    /// The body is not a `StreamResponse`.
    #[error("the body is not an A2A StreamResponse: {0}")]
    BadBody(String),
    /// The JWKS could not be fetched or read.
    #[error("fetching the agent's keys failed: {0}")]
    Jwks(String),
}

/// A 1.0 `StreamResponse`, or the 0.3 `Task` sent to configs made over 0.3
/// (recognized by its `kind` discriminator, which 1.0 bodies never have).
fn decode_body(body: &[u8]) -> Result<StreamResponse, VerifyError> {
    let bad = |e: serde_json::Error| VerifyError::BadBody(e.to_string());
    let value: serde_json::Value = serde_json::from_slice(body).map_err(bad)?;
    if value.get("kind").and_then(|k| k.as_str()) == Some("task") {
        let task: switchboard_protocol::v03::rpc::Task =
            serde_json::from_value(value).map_err(bad)?;
        return Ok(StreamResponse::Task(task.into()));
    }
    serde_json::from_value(value).map_err(bad)
}

enum KeySource {
    Url { url: String, http: reqwest::Client },
    Static,
}

struct Cache {
    set: JwkSet,
    fetched_at: Option<Instant>,
}

/// Verifies signed push notifications. See the module docs.
pub struct PushVerifier {
    source: KeySource,
    audiences: Vec<String>,
    issuer: Option<String>,
    leeway: Duration,
    max_age: Duration,
    jwks_ttl: Duration,
    min_refetch: Duration,
    cache: tokio::sync::Mutex<Cache>,
    /// Accepted `jti`s and when they expire.
    seen: Mutex<HashMap<String, i64>>,
}

impl std::fmt::Debug for PushVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushVerifier")
            .field("audiences", &self.audiences)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl PushVerifier {
    fn with_source(source: KeySource, set: JwkSet, audience: String) -> Self {
        PushVerifier {
            source,
            audiences: vec![audience],
            issuer: None,
            leeway: Duration::from_secs(30),
            max_age: Duration::from_secs(300),
            jwks_ttl: Duration::from_secs(300),
            min_refetch: Duration::from_secs(10),
            cache: tokio::sync::Mutex::new(Cache {
                set,
                fetched_at: None,
            }),
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Keys fetched from the agent's JWKS URL; tokens must be addressed to
    /// `audience` (the webhook URL you registered).
    pub fn from_jwks_url(jwks_url: impl Into<String>, audience: impl Into<String>) -> Self {
        Self::with_source(
            KeySource::Url {
                url: jwks_url.into(),
                http: crate::tls::default_http(None),
            },
            JwkSet { keys: Vec::new() },
            audience.into(),
        )
    }

    /// A fixed key set (no fetching); tokens must be addressed to `audience`.
    pub fn from_jwk_set(set: JwkSet, audience: impl Into<String>) -> Self {
        Self::with_source(KeySource::Static, set, audience.into())
    }

    /// Also accept tokens addressed to `audience` (several webhook URLs).
    pub fn also_audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Require this `iss` (the agent's public URL).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Clock skew tolerated on `iat`/`exp` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Oldest acceptable `iat` (default 5 min).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// How long fetched keys are used before fetching again (default 5 min).
    pub fn jwks_ttl(mut self, ttl: Duration) -> Self {
        self.jwks_ttl = ttl;
        self
    }

    /// Least time between two fetches caused by unknown `kid`s (default 10 s).
    pub fn min_refetch_interval(mut self, interval: Duration) -> Self {
        self.min_refetch = interval;
        self
    }

    /// Verifies a webhook request: its headers and its exact body bytes.
    pub async fn verify(
        &self,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<VerifiedNotification, VerifyError> {
        let token = headers
            .get(SIGNATURE_HEADER)
            .ok_or(VerifyError::MissingSignature)?
            .to_str()
            .map_err(|_| VerifyError::Malformed("the header is not ASCII".into()))?;
        let mut verified = self.verify_token(token, body).await?;
        verified.token = headers
            .get(TOKEN_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        Ok(verified)
    }

    /// Verifies a signature JWT against the body it came with.
    pub async fn verify_token(
        &self,
        jwt: &str,
        body: &[u8],
    ) -> Result<VerifiedNotification, VerifyError> {
        let header =
            jsonwebtoken::decode_header(jwt).map_err(|e| VerifyError::Malformed(e.to_string()))?;
        if header.alg != Algorithm::ES256 {
            return Err(VerifyError::Malformed(format!(
                "algorithm {:?}; notifications are signed with ES256",
                header.alg
            )));
        }
        let kid = header
            .kid
            .ok_or_else(|| VerifyError::Malformed("no kid in the header".into()))?;
        let key = self.key(&kid).await?;

        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&self.audiences);
        validation.leeway = self.leeway.as_secs();
        validation.set_required_spec_claims(&["exp", "iat", "aud", "iss"]);
        if let Some(iss) = &self.issuer {
            validation.set_issuer(&[iss]);
        }
        let data = jsonwebtoken::decode::<NotificationClaims>(jwt, &key, &validation).map_err(
            |e| match e.kind() {
                ErrorKind::InvalidSignature => VerifyError::BadSignature,
                ErrorKind::ExpiredSignature => VerifyError::Stale("the token expired".into()),
                ErrorKind::ImmatureSignature => {
                    VerifyError::Stale("the token is not valid yet".into())
                }
                ErrorKind::InvalidAudience => VerifyError::WrongAudience {
                    found: unverified_claim(jwt, "aud"),
                },
                ErrorKind::InvalidIssuer => VerifyError::WrongIssuer {
                    found: unverified_claim(jwt, "iss"),
                },
                _ => VerifyError::Malformed(e.to_string()),
            },
        )?;
        let claims = data.claims;

        let now = unix_now();
        let leeway = i64::try_from(self.leeway.as_secs()).unwrap_or(i64::MAX);
        let max_age = i64::try_from(self.max_age.as_secs()).unwrap_or(i64::MAX);
        if claims.iat > now.saturating_add(leeway) {
            return Err(VerifyError::Stale(format!(
                "issued {} s in the future",
                claims.iat - now
            )));
        }
        if now.saturating_sub(claims.iat) > max_age.saturating_add(leeway) {
            return Err(VerifyError::Stale(format!(
                "issued {} s ago; at most {} s are accepted",
                now - claims.iat,
                max_age
            )));
        }
        if URL_SAFE_NO_PAD.encode(Sha256::digest(body)) != claims.body_sha256 {
            return Err(VerifyError::BodyMismatch);
        }
        let event = decode_body(body)?;
        // Last: only a notification that passed everything uses up its jti.
        {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.retain(|_, exp| exp.saturating_add(leeway) >= now);
            if seen.contains_key(&claims.jti) {
                return Err(VerifyError::Replay(claims.jti));
            }
            seen.insert(claims.jti.clone(), claims.exp);
        }
        Ok(VerifiedNotification {
            claims,
            kid,
            event,
            token: None,
        })
    }

    /// The decoding key for `kid`, fetching the JWKS when it is stale or
    /// does not know the kid.
    async fn key(&self, kid: &str) -> Result<DecodingKey, VerifyError> {
        let mut cache = self.cache.lock().await;
        let KeySource::Url { url, http } = &self.source else {
            let jwk = cache
                .set
                .find(kid)
                .ok_or_else(|| VerifyError::UnknownKey(kid.to_string()))?;
            return DecodingKey::from_jwk(jwk).map_err(|e| VerifyError::Jwks(e.to_string()));
        };
        let expired = cache
            .fetched_at
            .is_none_or(|t| t.elapsed() >= self.jwks_ttl);
        let unknown = cache.set.find(kid).is_none();
        let may_refetch = cache
            .fetched_at
            .is_none_or(|t| t.elapsed() >= self.min_refetch);
        if expired || (unknown && may_refetch) {
            let set: JwkSet =
                async { http.get(url).send().await?.error_for_status()?.json().await }
                    .await
                    .map_err(|e: reqwest::Error| VerifyError::Jwks(format!("{url}: {e}")))?;
            cache.set = set;
            cache.fetched_at = Some(Instant::now());
        }
        let jwk = cache
            .set
            .find(kid)
            .ok_or_else(|| VerifyError::UnknownKey(kid.to_string()))?;
        DecodingKey::from_jwk(jwk).map_err(|e| VerifyError::Jwks(e.to_string()))
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A claim read without verification, only to word an error.
fn unverified_claim(jwt: &str, name: &str) -> String {
    jwt.split('.')
        .nth(1)
        .and_then(|p| URL_SAFE_NO_PAD.decode(p).ok())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            v.get(name)
                .map(|x| x.as_str().unwrap_or_default().to_string())
        })
        .unwrap_or_default()
}
