//! Bearer JWTs verified against an identity provider's JWKS.
//!
//! The provider signs tokens with keys it publishes as a JSON Web Key Set
//! at a URL; each token's header names its key (`kid`). [`Jwks`] keeps the
//! set in memory and fetches it again when a token names a key it does not
//! know (the provider rotated its keys) or the copy is older than its
//! maximum age. Every fetch, successful or not, starts a quiet interval
//! (`min_refetch`) in which no other fetch happens, and concurrent requests
//! share one fetch: a flood of tokens with made-up `kid`s costs the JWKS
//! host one request per interval, not one per token. Each fetched key is
//! decoded once, when the set arrives, not per token.
//!
//! Checking an RSA or ECDSA signature costs far more than the rest of a
//! request, and a client sends the same token on every request until it
//! expires; so a token that passed every check below is remembered, by its
//! SHA-256, until it expires or for five minutes at most, and as long as
//! the key set does not change (see `verified.rs`): the next request with
//! the same token costs a hash and a lookup, with `exp` and `nbf` checked
//! against the clock again.
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

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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

use crate::verified::{Verified, VerifiedTokens, digest};
use crate::{Scheme, bearer_token, looks_like_jwt};

/// A JWKS larger than this is refused (real ones are a few kilobytes).
const MAX_JWKS_BYTES: usize = 1 << 20;

/// Most tokens remembered as verified at once (a few hundred bytes each).
const VERIFIED_TOKENS: usize = 10_000;

/// Longest a verified token is remembered, whatever its `exp` says.
const VERIFIED_MAX_AGE: Duration = Duration::from_secs(300);

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
    /// While tokens keep arriving, the key set is fetched again in the
    /// background once it is older than this (and the quiet interval
    /// allows): a key the issuer removed stops verifying within about this
    /// time, not only after `max_age` or an unknown `kid`.
    pub revalidate_after: Duration,
    /// PEM certificates trusted for the JWKS URL beside the system's roots:
    /// for an identity provider whose certificate a private CA issued.
    pub jwks_ca_pem: Option<Vec<u8>>,
}

impl JwtConfig {
    /// The defaults for everything but the issuer's coordinates: RS256,
    /// PS256, ES256 and EdDSA; 30 s leeway; no tenant claim; `scope` as the
    /// admin claim without an admin value; a fetch at most every 30 s;
    /// keys re-read in the background after a minute of use, and before
    /// use after 10 minutes.
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
            revalidate_after: Duration::from_secs(60),
            jwks_ca_pem: None,
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
    #[error("the token names critical header extensions this server does not understand ({0})")]
    Critical(String),
    #[error("the token's {0:?} claim holds control characters or is longer than 1024 bytes")]
    BadName(String),
    #[error("the token's {0:?} claim is past the year 9999")]
    OutOfRange(&'static str),
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
    /// Counts the changes of the fetched set (written under the `cache`
    /// write lock): what a token was verified under, so a changed set
    /// retires every remembered token.
    generation: AtomicU64,
    /// See [`JwtConfig::revalidate_after`].
    revalidate_after: Duration,
    /// The time base of `last_attempt_ms`.
    epoch: Instant,
    /// When the last fetch began, in milliseconds since `epoch`: read on
    /// every request without a lock to decide whether to revalidate.
    last_attempt_ms: AtomicU64,
    /// Set while a background revalidation runs (at most one at a time).
    revalidating: AtomicBool,
}

/// One JWKS key, decoded for verifying.
#[derive(Debug)]
struct PreparedKey {
    /// The `alg` the key states for itself, if any (`Some(None)`: one that
    /// is not a JWS algorithm, so no token may use the key).
    stated_alg: Option<Option<Algorithm>>,
    /// `None`: the key's parameters do not make a verifying key.
    decoding: Option<DecodingKey>,
}

impl PreparedKey {
    fn new(jwk: &Jwk) -> Self {
        PreparedKey {
            stated_alg: jwk
                .common
                .key_algorithm
                .map(|a| Algorithm::from_str(&a.to_string()).ok()),
            decoding: DecodingKey::from_jwk(jwk).ok(),
        }
    }

    /// The verifying key for a token signed with `alg`, if this key may
    /// verify one.
    fn for_alg(&self, alg: Algorithm) -> Result<&DecodingKey, TokenError> {
        if self.stated_alg.is_some_and(|stated| stated != Some(alg)) {
            return Err(TokenError::KeyMismatch);
        }
        let key = self.decoding.as_ref().ok_or(TokenError::KeyMismatch)?;
        if key.family() == AlgorithmFamily::Hmac || key.family() != alg.family() {
            return Err(TokenError::KeyMismatch);
        }
        Ok(key)
    }
}

#[derive(Debug, Default)]
struct Cached {
    /// The set as fetched, to tell whether a fetch changed it.
    set: JwkSet,
    /// Its keys by `kid` (the first key of a `kid` wins, as in
    /// `JwkSet::find`), decoded once.
    keys: Arc<HashMap<String, Arc<PreparedKey>>>,
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

/// The HTTP client JWKS fetches go through: a 10 s timeout, and the
/// system's roots plus the certificates in `ca_pem`, if given.
fn jwks_client(ca_pem: Option<&[u8]>) -> Result<reqwest::Client, String> {
    // An `https` JWKS URL: reqwest's rustls asks for the process's default
    // provider (and panics without one); ring is the one provider of the
    // whole build. `Err`: one is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder().timeout(Duration::from_secs(10));
    if let Some(pem) = ca_pem {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| format!("the JWKS CA certificates: {e}"))?;
        if certs.is_empty() {
            return Err("the JWKS CA certificates: no PEM certificate found".into());
        }
        builder = builder.tls_certs_merge(certs);
    }
    builder
        .build()
        .map_err(|e| format!("the JWKS HTTP client: {e}"))
}

impl Jwks {
    /// A key set fetched from `url` on first use, trusting the system's
    /// roots for an `https` URL.
    pub fn new(url: impl Into<String>, min_refetch: Duration, max_age: Duration) -> Self {
        let http = jwks_client(None).unwrap_or_default();
        Self::with_client(url.into(), http, min_refetch, max_age)
    }

    /// [`Jwks::new`], trusting the PEM certificates in `ca_pem` beside the
    /// system's roots (an identity provider behind a private CA). Fails
    /// when `ca_pem` holds no certificate.
    pub fn with_ca(
        url: impl Into<String>,
        ca_pem: &[u8],
        min_refetch: Duration,
        max_age: Duration,
    ) -> Result<Self, String> {
        let http = jwks_client(Some(ca_pem))?;
        Ok(Self::with_client(url.into(), http, min_refetch, max_age))
    }

    fn with_client(
        url: String,
        http: reqwest::Client,
        min_refetch: Duration,
        max_age: Duration,
    ) -> Self {
        Jwks {
            url,
            http,
            min_refetch,
            max_age,
            cache: RwLock::new(Cached::default()),
            fetching: Mutex::new(()),
            generation: AtomicU64::new(0),
            revalidate_after: max_age,
            epoch: Instant::now(),
            last_attempt_ms: AtomicU64::new(0),
            revalidating: AtomicBool::new(false),
        }
    }

    /// Revalidates in the background once the set is older than `after`
    /// (see [`JwtConfig::revalidate_after`]; default: `max_age`).
    pub fn revalidate_after(mut self, after: Duration) -> Self {
        self.revalidate_after = after;
        self
    }

    /// Starts a background fetch of the key set when the last one began
    /// `revalidate_after` ago or more, unless one is running. Costs two
    /// atomic loads otherwise; the request that triggers it does not wait.
    pub fn revalidate(self: &Arc<Self>) {
        let now = self.epoch.elapsed().as_millis() as u64;
        let last = self.last_attempt_ms.load(Ordering::Relaxed);
        let after = self.revalidate_after.as_millis() as u64;
        if now.saturating_sub(last) < after.max(1) || self.revalidating.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let _fetching = this.fetching.lock().await;
            if this.cache.read().await.may_fetch(this.min_refetch) {
                this.refetch().await;
            }
            this.revalidating.store(false, Ordering::Release);
        });
    }

    /// The generation of the key set now: it changes whenever a fetch
    /// brings a set that differs from the one before.
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The key `kid` and the generation of the set it is from, fetching the
    /// set if the key is unknown or stale and the quiet interval allows.
    async fn key(&self, kid: &str) -> Result<(Arc<PreparedKey>, u64), TokenError> {
        {
            let cached = self.cache.read().await;
            if cached.fresh(self.max_age)
                && let Some(k) = cached.keys.get(kid)
            {
                return Ok((k.clone(), self.generation()));
            }
        }
        let _fetching = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let (known, may_fetch) = {
            let cached = self.cache.read().await;
            let known = cached.keys.get(kid).map(|k| (k.clone(), self.generation()));
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
        if self.refetch().await {
            let cached = self.cache.read().await;
            cached
                .keys
                .get(kid)
                .map(|k| (k.clone(), self.generation()))
                .ok_or(TokenError::UnknownKid)
        } else {
            // A stale copy still verifies the keys it has.
            known.ok_or(TokenError::JwksUnavailable)
        }
    }

    /// One fetch, stored: the keys replace the cached ones when the set
    /// changed (a new generation). Whether it succeeded. The caller holds
    /// `fetching`.
    async fn refetch(&self) -> bool {
        self.last_attempt_ms
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
        let fetched = self.fetch().await;
        let mut cached = self.cache.write().await;
        cached.attempted = Some(Instant::now());
        match fetched {
            Ok(set) => {
                if set != cached.set {
                    let mut keys = HashMap::new();
                    for jwk in &set.keys {
                        if let Some(kid) = &jwk.common.key_id {
                            keys.entry(kid.clone())
                                .or_insert_with(|| Arc::new(PreparedKey::new(jwk)));
                        }
                    }
                    cached.keys = Arc::new(keys);
                    cached.set = set;
                    self.generation.fetch_add(1, Ordering::AcqRel);
                }
                cached.fetched = cached.attempted;
                true
            }
            Err(e) => {
                tracing::warn!(url = %self.url, error = %e, "fetching the JWKS failed");
                false
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
    jwks: Arc<Jwks>,
    verified: VerifiedTokens,
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
        crate::ring_verify::install();
        let jwks = match &config.jwks_ca_pem {
            None => Jwks::new(&config.jwks_url, config.min_refetch, config.max_age),
            Some(pem) => Jwks::with_ca(&config.jwks_url, pem, config.min_refetch, config.max_age)?,
        };
        let jwks = Arc::new(jwks.revalidate_after(config.revalidate_after));
        // Never remembered longer than the keys themselves are trusted
        // without a refetch.
        let verified = VerifiedTokens::new(
            VERIFIED_TOKENS,
            VERIFIED_MAX_AGE.min(config.max_age),
            config.leeway,
        );
        Ok(JwtBearer {
            config,
            jwks,
            verified,
        })
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

    /// The caller a JWT-shaped bearer `token` names: from memory when it
    /// verified recently; else `None` when it is not from this issuer, or
    /// the outcome of the full check (remembered when it passes).
    async fn authenticate(&self, token: &str) -> Option<Result<Identity, TokenError>> {
        let digest = digest(token);
        let now = jsonwebtoken::get_current_timestamp();
        // Before `is_ours`: a remembered token named this issuer, and the
        // lookup is cheaper than decoding the claims.
        if let Some(identity) = self.verified.get(&digest, self.jwks.generation(), now) {
            // Remembered tokens are what keeps a removed key in use, so
            // they, too, keep the key set fresh.
            self.jwks.revalidate();
            return Some(Ok(identity));
        }
        if !self.is_ours(token) {
            return None;
        }
        self.jwks.revalidate();
        Some(self.verify(token).await.map(|(verified, generation)| {
            let identity = verified.identity.clone();
            self.verified.remember(digest, verified, generation, now);
            identity
        }))
    }

    /// The full check of the module docs; also the generation of the key
    /// set the signature was checked with.
    async fn verify(&self, token: &str) -> Result<(Verified, u64), TokenError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::Header)?;
        if !self.config.algorithms.contains(&header.alg) {
            return Err(TokenError::Algorithm(header.alg));
        }
        // RFC 7515 §4.1.11: a `crit` extension the recipient does not
        // understand makes the token invalid; this server understands none
        // (and an empty list is not allowed either).
        if let Some(crit) = &header.crit {
            return Err(TokenError::Critical(crit.join(", ")));
        }
        let kid = header.kid.as_deref().ok_or(TokenError::NoKid)?;
        let (prepared, generation) = self.jwks.key(kid).await?;
        let key = prepared.for_alg(header.alg)?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.config.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation).map_err(
            |e| match e.kind() {
                ErrorKind::ExpiredSignature => TokenError::Expired,
                ErrorKind::ImmatureSignature => TokenError::NotYetValid,
                ErrorKind::InvalidAudience => TokenError::Audience,
                ErrorKind::InvalidIssuer => TokenError::Issuer,
                ErrorKind::InvalidSignature => TokenError::Signature,
                ErrorKind::MissingRequiredClaim(c) => TokenError::MissingClaim(c.clone()),
                _ => TokenError::Invalid,
            },
        )?;
        let verified = Verified {
            identity: self.identity(&data.claims)?,
            exp: seconds(&data.claims, "exp")?,
            nbf: match data.claims.get("nbf") {
                None => None,
                Some(_) => Some(seconds(&data.claims, "nbf")?),
            },
        };
        Ok((verified, generation))
    }

    /// The caller the verified claims describe.
    fn identity(&self, claims: &Map<String, Value>) -> Result<Identity, TokenError> {
        let sub = name_claim(claims, "sub")?;
        let mut identity = Identity::new(format!("jwt:{}#{sub}", self.config.issuer));
        if let Some(claim) = &self.config.tenant_claim {
            identity = identity.with_tenant(name_claim(claims, claim)?);
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

/// The longest `sub` or tenant claim taken as a name.
const MAX_NAME_BYTES: usize = 1024;

/// The last second of the year 9999: later NumericDates are refused. A
/// token "valid until 2^63" is a token that never expires, and past this
/// date most date libraries cannot even represent the value.
const LAST_NUMERIC_DATE: u64 = 253_402_300_799;

/// A claim that becomes part of a principal or tenant name: a non-empty
/// string without control characters (they would reach logs, listings and
/// terminals), at most [`MAX_NAME_BYTES`].
fn name_claim<'a>(claims: &'a Map<String, Value>, name: &str) -> Result<&'a str, TokenError> {
    let value = claims
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| TokenError::MissingClaim(name.into()))?;
    if value.len() > MAX_NAME_BYTES || value.chars().any(char::is_control) {
        return Err(TokenError::BadName(name.into()));
    }
    Ok(value)
}

/// A NumericDate claim in seconds (the checks already refused a token
/// whose `exp` or `nbf` is not a whole number of seconds), no later than
/// the year 9999.
fn seconds(claims: &Map<String, Value>, name: &'static str) -> Result<u64, TokenError> {
    let at = claims
        .get(name)
        .and_then(Value::as_u64)
        .ok_or(TokenError::Invalid)?;
    if at > LAST_NUMERIC_DATE {
        return Err(TokenError::OutOfRange(name));
    }
    Ok(at)
}

impl Scheme for JwtBearer {
    fn check<'a>(&'a self, head: &'a Parts) -> BoxFuture<'a, Option<Result<Identity, A2AError>>> {
        Box::pin(async move {
            let token = bearer_token(head).filter(|t| looks_like_jwt(t))?;
            Some(self.authenticate(token).await?.map_err(A2AError::from))
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn rsa_jwk(alg: Option<&str>) -> Jwk {
        let mut jwk = json!({"kty": "RSA", "kid": "k1", "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw", "e": "AQAB"});
        if let Some(alg) = alg {
            jwk["alg"] = json!(alg);
        }
        serde_json::from_value(jwk).unwrap()
    }

    #[test]
    fn a_prepared_key_verifies_only_its_own_algorithm_family() {
        let key = PreparedKey::new(&rsa_jwk(None));
        assert!(key.for_alg(Algorithm::RS256).is_ok());
        assert!(
            key.for_alg(Algorithm::PS256).is_ok(),
            "same family, no alg stated"
        );
        for other in [Algorithm::ES256, Algorithm::EdDSA, Algorithm::HS256] {
            assert!(
                matches!(key.for_alg(other), Err(TokenError::KeyMismatch)),
                "{other:?}"
            );
        }
    }

    #[test]
    fn a_prepared_key_keeps_to_the_algorithm_it_states() {
        let key = PreparedKey::new(&rsa_jwk(Some("RS256")));
        assert!(key.for_alg(Algorithm::RS256).is_ok());
        assert!(matches!(
            key.for_alg(Algorithm::PS256),
            Err(TokenError::KeyMismatch)
        ));
        // A key stating a non-signature algorithm verifies nothing.
        let key = PreparedKey::new(&rsa_jwk(Some("RSA-OAEP")));
        assert!(matches!(
            key.for_alg(Algorithm::RS256),
            Err(TokenError::KeyMismatch)
        ));
    }
}
