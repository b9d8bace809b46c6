//! API keys, kept as SHA-256 hashes.
//!
//! An API key is a long random secret (see [`generate_api_key`]): hashing it
//! once with SHA-256 is enough (no salt or slow hash is needed for a secret
//! with 256 bits of entropy, unlike a password), and a leaked configuration
//! then holds nothing a caller can send. A request's key is hashed and
//! compared with **every** configured hash in constant time, so neither the
//! comparison nor the position of a match shows in the response time.
//!
//! A key arrives as `X-API-Key: <key>`, or as `Authorization: Bearer <key>`
//! when it does not look like a JWT (a JWT goes to [`crate::JwtBearer`]).

use futures::future::BoxFuture;
use http::request::Parts;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use switchboard_protocol::A2AError;
use switchboard_server::Identity;

use crate::{API_KEY_HEADER, Scheme, bearer_token, looks_like_jwt};

/// The prefix of a hash in [`hash_api_key`]'s format.
const HASH_PREFIX: &str = "sha256:";

/// How a configured key hash was malformed.
#[derive(Debug, thiserror::Error)]
#[error(
    "an API key hash must be `sha256:` and 64 hex digits (from `switchboard auth hash-key`), got {0:?}"
)]
pub struct BadKeyHash(String);

/// The stored form of an API key: `sha256:` and the hex SHA-256 of the key.
pub fn hash_api_key(key: &str) -> String {
    let digest = Sha256::digest(key.trim().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{HASH_PREFIX}{hex}")
}

/// A fresh random API key (`sb_` and 64 hex digits: 244 random bits from
/// the operating system's generator, through two v4 UUIDs).
pub fn generate_api_key() -> String {
    let a = uuid::Uuid::new_v4().simple().to_string();
    let b = uuid::Uuid::new_v4().simple().to_string();
    format!("sb_{a}{b}")
}

fn parse_hash(text: &str) -> Result<[u8; 32], BadKeyHash> {
    let bad = || BadKeyHash(text.to_string());
    let hex = text
        .trim()
        .strip_prefix(HASH_PREFIX)
        .filter(|h| h.len() == 64)
        .ok_or_else(bad)?;
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2).ok_or_else(bad)?, 16)
            .map_err(|_| bad())?;
    }
    Ok(out)
}

/// One configured key: whose it is.
#[derive(Clone)]
struct Entry {
    hash: [u8; 32],
    identity: Identity,
}

/// The API-key [`Scheme`]: hashes mapped to principals.
#[derive(Clone, Default)]
pub struct ApiKeys {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The principals only, never the hashes.
        f.debug_struct("ApiKeys")
            .field(
                "principals",
                &self
                    .entries
                    .iter()
                    .map(|e| &e.identity.principal)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ApiKeys {
    /// No keys yet.
    pub fn new() -> Self {
        ApiKeys::default()
    }

    /// Adds a key by its hash ([`hash_api_key`]'s format): the caller
    /// presenting it is principal `key:<principal>`, bound to `tenant` if
    /// given, an administrator if `admin`.
    pub fn key(
        mut self,
        hash: &str,
        principal: &str,
        tenant: Option<&str>,
        admin: bool,
    ) -> Result<Self, BadKeyHash> {
        let mut identity = Identity::new(format!("key:{principal}")).with_admin(admin);
        if let Some(t) = tenant {
            identity = identity.with_tenant(t);
        }
        self.entries.push(Entry {
            hash: parse_hash(hash)?,
            identity,
        });
        Ok(self)
    }

    /// How many keys are configured.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key is configured.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The identity whose hash matches `key`. Every entry is compared, in
    /// constant time, whichever matches.
    fn lookup(&self, key: &str) -> Option<Identity> {
        let presented: [u8; 32] = Sha256::digest(key.trim().as_bytes()).into();
        let mut found = None;
        for entry in &self.entries {
            if bool::from(entry.hash.ct_eq(&presented)) {
                found = Some(entry.identity.clone());
            }
        }
        found
    }

    /// The key the request presents, if any: `X-API-Key`, or a bearer
    /// token that is not a JWT.
    fn presented(head: &Parts) -> Option<Result<&str, A2AError>> {
        if let Some(v) = head.headers.get(API_KEY_HEADER) {
            return Some(v.to_str().map(str::trim).map_err(|_| {
                A2AError::Unauthenticated("the X-API-Key header is not visible ASCII".into())
            }));
        }
        bearer_token(head).filter(|t| !looks_like_jwt(t)).map(Ok)
    }
}

impl Scheme for ApiKeys {
    fn check<'a>(&'a self, head: &'a Parts) -> BoxFuture<'a, Option<Result<Identity, A2AError>>> {
        let outcome = ApiKeys::presented(head).map(|key| {
            let key = key?;
            self.lookup(key)
                .ok_or_else(|| A2AError::Unauthenticated("the API key is not valid".into()))
        });
        Box::pin(std::future::ready(outcome))
    }

    fn challenge(&self) -> String {
        "ApiKey header=\"X-API-Key\"".into()
    }

    fn card_entry(&self) -> (String, Value) {
        (
            "apiKey".into(),
            json!({"apiKeySecurityScheme": {
                "description": "An API key in the X-API-Key header (or as `Authorization: Bearer <key>`).",
                "location": "header",
                "name": "X-API-Key",
            }}),
        )
    }
}
