//! Bearer JWTs verified against an identity provider's JWKS.
//!
//! The provider signs tokens with keys it publishes as a JSON Web Key Set
//! at a URL; each token's header names its key (`kid`). [`Jwks`] keeps the
//! set in memory and fetches it again when a token names a key it does not
//! know (the provider rotated its keys) or the copy is older than its
//! maximum age. Every fetch, successful or not, starts a quiet interval
//! (`min_refetch`) in which no other fetch happens, and concurrent requests
//! share one fetch: a flood of tokens with made-up `kid`s costs the JWKS
//! host one request per interval, not one per token.
//!
//! A token is accepted when all of these hold:
//! - its `alg` is in the allow-list, which can only name asymmetric
//!   algorithms (RS*, PS*, ES*, EdDSA): `none` does not exist here, and an
//!   HS* token cannot be verified with a published (public) key used as an
//!   HMAC secret, the classic algorithm confusion;
//! - the key its `kid` names is in the set, of the same family as `alg`
//!   (and, if the key states its own `alg`, that one);
//! - the signature verifies;
//! - `iss` is the configured issuer, `aud` contains the configured audience,
//!   `exp` is in the future and `nbf` (if present) in the past, both with
//!   the configured leeway for clock skew; `sub` is present.
//!
//! The caller is then principal `jwt:<iss>#<sub>`, bound to the tenant in
//! the configured tenant claim (required when one is configured), and an
//! administrator when the configured admin claim (a space-separated string
//! such as `scope`, or an array such as `roles`) holds the admin value.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use http::request::Parts;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::{Map, Value, json};
use switchboard_protocol::A2AError;
use switchboard_server::Identity;
use tokio::sync::{Mutex, RwLock};
use tokio::time::Instant;

use crate::{Scheme, bearer_token, looks_like_jwt};

/// A JWKS larger than this is refused (real ones are a few kilobytes).
const MAX_JWKS_BYTES: usize = 1 << 20;

/// How a [`JwtBearer`] checks tokens.
#[derive(Debug, Clone)]
pub struct JwtConfig {
    /// Where the issuer publishes its keys.
    pub jwks_url: String,
    /// The required `iss`.
    pub issuer: String,
    /// The audience `aud` must contain (this agent's identifier at the issuer).
    pub audience: String,
    /// Accepted signature algorithms (asymmetric only).
    pub algorithms: Vec<Algorithm>,
    /// Clock skew tolerated on `exp` and `nbf`.
    pub leeway: Duration,
    /// The claim holding the caller's tenant; when set, tokens without it
    /// are refused.
    pub tenant_claim: Option<String>,
    /// The claim that may mark an administrator (e.g. `scope` or `roles`).
    pub admin_claim: String,
    /// The value of `admin_claim` that does; `None`: no token is an admin's.
    pub admin_value: Option<String>,
    /// Least time between two JWKS fetches.
    pub min_refetch: Duration,
    /// Keys older than this are fetched again before use.
    pub max_age: Duration,
}

impl JwtConfig {
    /// The defaults for everything but the issuer's coordinates: RS256,
    /// PS256, ES256 and EdDSA; 30 s leeway; no tenant claim; `scope` as the
    /// admin claim without an admin value; a fetch at most every 30 s;
    /// keys re-read after 10 minutes.
    pub fn new(
        jwks_url: impl Into<String>,
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Self {
        JwtConfig {
            jwks_url: jwks_url.into(),
            issuer: issuer.into(),
            audience: audience.into(),
            algorithms: vec![
                Algorithm::RS256,
                Algorithm::PS256,
                Algorithm::ES256,
                Algorithm::EdDSA,
            ],
            leeway: Duration::from_secs(30),
            tenant_claim: None,
            admin_claim: "scope".into(),
            admin_value: None,
            min_refetch: Duration::from_secs(30),
            max_age: Duration::from_secs(600),
        }
    }

    /// Parses an algorithm allow-list (`RS256`, `ES256`, …), refusing
    /// symmetric (HS*) and unknown names.
    pub fn parse_algorithms<S: AsRef<str>>(names: &[S]) -> Result<Vec<Algorithm>, String> {
        names
            .iter()
            .map(|n| {
                let n = n.as_ref().trim();
                let alg = Algorithm::from_str(n)
                    .map_err(|_| format!("unknown JWT algorithm {n:?}"))?;
                if alg.family() == AlgorithmFamily::Hmac {
                    return Err(format!(
                        "{n} is symmetric: tokens verified with a JWKS must use RS*, PS*, ES* or EdDSA"
                    ));
                }
                Ok(alg)
            })
            .collect()
    }
}

/// Why a token was refused, before it becomes Unauthenticated.
#[derive(Debug, thiserror::Error)]
enum TokenError {
    #[error("the token's header cannot be read")]
    Header,
    #[error("the token's algorithm {0:?} is not accepted")]
    Algorithm(Algorithm),
    #[error("the token names no key (kid)")]
    NoKid,
    #[error("the token's signing key is not among the issuer's keys")]
    UnknownKid,
    #[error("the issuer's signing keys cannot be fetched right now")]
    JwksUnavailable,
    #[error("the token's key does not fit its algorithm")]
    KeyMismatch,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token is not meant for this agent (aud)")]
    Audience,
    #[error("the token is from another issuer")]
    Issuer,
    #[error("the token's signature does not verify")]
    Signature,
    #[error("the token lacks the {0:?} claim")]
    MissingClaim(String),
    #[error("the token is not valid")]
    Invalid,
}

impl From<TokenError> for A2AError {
    fn from(e: TokenError) -> Self {
        A2AError::Unauthenticated(e.to_string())
    }
}

/// The issuer's key set, cached (see the module docs).
#[derive(Debug)]
pub struct Jwks {
    url: String,
    http: reqwest::Client,
    min_refetch: Duration,
    max_age: Duration,
    cache: RwLock<Cached>,
    /// Held while fetching, so concurrent misses share one fetch.
    fetching: Mutex<()>,
}

#[derive(Debug, Default)]
struct Cached {
    keys: Arc<JwkSet>,
    /// When the set was last fetched (or a fetch last failed).
    attempted: Option<Instant>,
    /// When the keys were last fetched successfully.
    fetched: Option<Instant>,
}

impl Cached {
    fn fresh(&self, max_age: Duration) -> bool {
        self.fetched.is_some_and(|at| at.elapsed() < max_age)
    }
    fn may_fetch(&self, min_refetch: Duration) -> bool {
        self.attempted.is_none_or(|at| at.elapsed() >= min_refetch)
    }
}

impl Jwks {
    /// A key set fetched from `url` on first use.
    pub fn new(url: impl Into<String>, min_refetch: Duration, max_age: Duration) -> Self {
        // An `https` JWKS URL: reqwest's rustls asks for the process's
        // default provider (and panics without one); ring is the one
        // provider of the whole build. `Err`: one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Jwks {
            url: url.into(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            min_refetch,
            max_age,
            cache: RwLock::new(Cached::default()),
            fetching: Mutex::new(()),
        }
    }

    /// The key `kid`, fetching the set if it is unknown or stale and the
    /// quiet interval allows.
    async fn key(&self, kid: &str) -> Result<Jwk, TokenError> {
        {
            let cached = self.cache.read().await;
            if cached.fresh(self.max_age)
                && let Some(k) = cached.keys.find(kid)
            {
                return Ok(k.clone());
            }
        }
        let _fetching = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let (known, may_fetch) = {
            let cached = self.cache.read().await;
            let known = cached.keys.find(kid).cloned();
            if cached.fresh(self.max_age)
                && let Some(k) = known
            {
                return Ok(k);
            }
            (known, cached.may_fetch(self.min_refetch))
        };
        if !may_fetch {
            return known.ok_or(TokenError::UnknownKid);
        }
        let fetched = self.fetch().await;
        let mut cached = self.cache.write().await;
        cached.attempted = Some(Instant::now());
        match fetched {
            Ok(set) => {
                cached.keys = Arc::new(set);
                cached.fetched = cached.attempted;
                cached.keys.find(kid).cloned().ok_or(TokenError::UnknownKid)
            }
            Err(e) => {
                tracing::warn!(url = %self.url, error = %e, "fetching the JWKS failed");
                // A stale copy still verifies the keys it has.
                known.ok_or(TokenError::JwksUnavailable)
            }
        }
    }

    /// One fetch; keys of unknown types are skipped, not fatal.
    async fn fetch(&self) -> Result<JwkSet, String> {
        let mut resp = self
            .http
            .get(&self.url)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| e.to_string())?;
        let too_large = || format!("the JWKS is larger than {MAX_JWKS_BYTES} bytes");
        if resp
            .content_length()
            .is_some_and(|n| n > MAX_JWKS_BYTES as u64)
        {
            return Err(too_large());
        }
        // Read chunk by chunk: a body without a length (chunked) is cut off
        // at the limit instead of being buffered whole first.
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        #[derive(serde::Deserialize)]
        struct RawSet {
            keys: Vec<Value>,
        }
        let raw: RawSet = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        Ok(JwkSet {
            keys: raw
                .keys
                .into_iter()
                .filter_map(|k| serde_json::from_value::<Jwk>(k).ok())
                .collect(),
        })
    }
}

/// The bearer-JWT [`Scheme`].
#[derive(Debug)]
pub struct JwtBearer {
    config: JwtConfig,
    jwks: Jwks,
}

impl JwtBearer {
    /// Checks tokens as `config` says. Refuses an empty or symmetric
    /// algorithm list.
    pub fn new(config: JwtConfig) -> Result<Self, String> {
        if config.algorithms.is_empty() {
            return Err("no JWT algorithm is allowed".into());
        }
        if let Some(alg) = config
            .algorithms
            .iter()
            .find(|a| a.family() == AlgorithmFamily::Hmac)
        {
            return Err(format!(
                "{alg:?} is symmetric and cannot be verified with a JWKS"
            ));
        }
        let jwks = Jwks::new(&config.jwks_url, config.min_refetch, config.max_age);
        Ok(JwtBearer { config, jwks })
    }

    /// Whether `token` claims (unverified) to come from this issuer.
    fn is_ours(&self, token: &str) -> bool {
        jsonwebtoken::dangerous::insecure_decode::<Map<String, Value>>(token)
            .ok()
            .and_then(|t| {
                t.claims
                    .get("iss")
                    .and_then(Value::as_str)
                    .map(|iss| iss == self.config.issuer)
            })
            .unwrap_or(false)
    }

    async fn verify(&self, token: &str) -> Result<Identity, TokenError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::Header)?;
        if !self.config.algorithms.contains(&header.alg) {
            return Err(TokenError::Algorithm(header.alg));
        }
        let kid = header.kid.as_deref().ok_or(TokenError::NoKid)?;
        let jwk = self.jwks.key(kid).await?;
        if let Some(key_alg) = jwk.common.key_algorithm
            && Algorithm::from_str(&key_alg.to_string()).ok() != Some(header.alg)
        {
            return Err(TokenError::KeyMismatch);
        }
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| TokenError::KeyMismatch)?;
        if key.family() == AlgorithmFamily::Hmac || key.family() != header.alg.family() {
            return Err(TokenError::KeyMismatch);
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.config.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data =
            jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation).map_err(|e| {
                match e.kind() {
                    ErrorKind::ExpiredSignature => TokenError::Expired,
                    ErrorKind::ImmatureSignature => TokenError::NotYetValid,
                    ErrorKind::InvalidAudience => TokenError::Audience,
                    ErrorKind::InvalidIssuer => TokenError::Issuer,
                    ErrorKind::InvalidSignature => TokenError::Signature,
                    ErrorKind::MissingRequiredClaim(c) => TokenError::MissingClaim(c.clone()),
                    _ => TokenError::Invalid,
                }
            })?;
        self.identity(&data.claims)
    }

    /// The caller the verified claims describe.
    fn identity(&self, claims: &Map<String, Value>) -> Result<Identity, TokenError> {
        let sub = claims
            .get("sub")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| TokenError::MissingClaim("sub".into()))?;
        let mut identity = Identity::new(format!("jwt:{}#{sub}", self.config.issuer));
        if let Some(claim) = &self.config.tenant_claim {
            let tenant = claims
                .get(claim)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .ok_or_else(|| TokenError::MissingClaim(claim.clone()))?;
            identity = identity.with_tenant(tenant);
        }
        let admin = self.config.admin_value.as_deref().is_some_and(|wanted| {
            match claims.get(&self.config.admin_claim) {
                Some(Value::String(s)) => s.split_whitespace().any(|v| v == wanted),
                Some(Value::Array(items)) => items.iter().any(|v| v.as_str() == Some(wanted)),
                _ => false,
            }
        });
        Ok(identity.with_admin(admin))
    }
}

impl Scheme for JwtBearer {
    fn check<'a>(&'a self, head: &'a Parts) -> BoxFuture<'a, Option<Result<Identity, A2AError>>> {
        Box::pin(async move {
            let token = bearer_token(head).filter(|t| looks_like_jwt(t) && self.is_ours(t))?;
            Some(self.verify(token).await.map_err(A2AError::from))
        })
    }

    fn challenge(&self) -> String {
        "Bearer realm=\"switchboard\"".into()
    }

    fn card_entry(&self) -> (String, Value) {
        (
            "bearer".into(),
            json!({"httpAuthSecurityScheme": {
                "description": format!("A JWT from {} for audience {}.", self.config.issuer, self.config.audience),
                "scheme": "Bearer",
                "bearerFormat": "JWT",
            }}),
        )
    }
}
