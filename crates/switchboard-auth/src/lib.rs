//! Authenticators for switchboard servers: who is calling.
//!
//! A server asks its [`Authenticator`] (the hook in
//! `switchboard_server::gate`) to turn each request head into an
//! [`Identity`] — a principal, the tenant its credentials grant, and whether
//! it is an administrator — before any body is read, on every binding and
//! both protocol versions. This crate provides the authenticators:
//!
//! - [`ApiKeys`]: long random keys the operator hands out. The server holds
//!   only their SHA-256 hashes ([`hash_api_key`]), each mapped to a principal
//!   and optionally a tenant; a presented key is hashed and compared in
//!   constant time. Sent as `X-API-Key: <key>` or `Authorization: Bearer
//!   <key>`.
//! - [`JwtBearer`]: `Authorization: Bearer <JWT>` issued by an identity
//!   provider, verified against the keys its JWKS URL publishes (cached,
//!   refetched when a token names an unknown `kid`, at most once per
//!   interval). `iss`, `aud`, `exp` and `nbf` are checked with a small
//!   leeway, and only allow-listed asymmetric algorithms are accepted.
//! - [`Schemes`]: several of them at once. Each [`Scheme`] first says
//!   whether a request carries a credential of its kind; the first that
//!   recognises one decides, so a recognised but bad credential is refused
//!   and never handed to the next scheme. It is also where anonymous access
//!   is switched on explicitly ([`Schemes::allow_anonymous`]).
//!
//! [`settings`] builds them from plain settings (a config file's `[auth]`
//! table), with the rule for anonymous callers, and makes API keys.
//!
//! Principals are prefixed by their scheme (`key:NAME` for API keys,
//! `jwt:ISSUER#SUB` for tokens), so principals of two schemes never collide
//! and one cannot claim the other's tasks.
//!
//! Refusals are [`A2AError::Unauthenticated`] (each binding's 401 /
//! `UNAUTHENTICATED`, sent with the [`Authenticator::challenge`] naming the
//! schemes) and never say anything about tasks.
//!
//! ```
//! use switchboard_auth::{ApiKeys, Schemes, hash_api_key};
//!
//! let keys = ApiKeys::new()
//!     .key(&hash_api_key("s3cret-key"), "ci", Some("acme"), false)
//!     .unwrap();
//! let auth = Schemes::new().with(keys);
//! // A2aServer::new(handler).authenticator(auth)
//! # let _ = auth;
//! ```

mod api_key;
mod jwt;
mod ring_verify;
pub mod settings;
mod verified;

use std::collections::BTreeMap;
use std::fmt;

use futures::future::BoxFuture;
use http::HeaderValue;
use http::request::Parts;
use serde_json::Value;
use switchboard_protocol::card::{SecurityRequirement, StringList};
use switchboard_protocol::{A2AError, AgentCard};
pub use switchboard_server::{Authenticator, Identity};

pub use api_key::{ApiKeys, BadKeyHash, generate_api_key, hash_api_key};
pub use jwt::{Jwks, JwtBearer, JwtConfig};

/// The header an API key may be sent in (besides `Authorization: Bearer`).
pub const API_KEY_HEADER: &str = "x-api-key";

/// One way of authenticating, as a part of [`Schemes`].
pub trait Scheme: Send + Sync + fmt::Debug + 'static {
    /// `None` when the request carries no credential of this scheme's kind;
    /// else the caller's identity or why the credential is refused.
    fn check<'a>(&'a self, head: &'a Parts) -> BoxFuture<'a, Option<Result<Identity, A2AError>>>;

    /// This scheme's `WWW-Authenticate` challenge, e.g. `Bearer realm="x"`.
    fn challenge(&self) -> String;

    /// The name and the A2A 1.0 `SecurityScheme` object under which the
    /// agent card advertises this scheme.
    fn card_entry(&self) -> (String, Value);
}

/// Several [`Scheme`]s tried in order; implements [`Authenticator`].
#[derive(Debug, Default)]
pub struct Schemes {
    schemes: Vec<Box<dyn Scheme>>,
    allow_anonymous: bool,
}

impl Schemes {
    /// No schemes yet: every caller is refused until one is added (or
    /// anonymous access is allowed).
    pub fn new() -> Self {
        Schemes::default()
    }

    /// Adds a scheme, tried after those added before.
    pub fn with(mut self, scheme: impl Scheme) -> Self {
        self.schemes.push(Box::new(scheme));
        self
    }

    /// Callers without any credential are served as the anonymous
    /// principal instead of refused. A credential that is presented is
    /// still checked: a bad one is refused, not downgraded to anonymous.
    pub fn allow_anonymous(mut self, allow: bool) -> Self {
        self.allow_anonymous = allow;
        self
    }

    /// Whether no scheme is configured.
    pub fn is_empty(&self) -> bool {
        self.schemes.is_empty()
    }

    /// Writes the schemes into the card: `securitySchemes`, and
    /// `securityRequirements` listing each as an alternative (plus an empty
    /// requirement when anonymous callers are served too). A requirement
    /// the card lists already is not listed twice, so describing a card
    /// again changes nothing. `A2aServer` does this to the card it serves
    /// ([`Authenticator::describe`]); there is no need to call it by hand.
    pub fn describe(&self, card: &mut AgentCard) {
        let mut requirements = Vec::new();
        for scheme in &self.schemes {
            let (name, value) = scheme.card_entry();
            requirements.push(SecurityRequirement {
                schemes: BTreeMap::from([(name.clone(), StringList::default())]),
            });
            card.security_schemes.insert(name, value);
        }
        if self.allow_anonymous && !requirements.is_empty() {
            requirements.push(SecurityRequirement::default());
        }
        for requirement in requirements {
            if !card.security_requirements.contains(&requirement) {
                card.security_requirements.push(requirement);
            }
        }
    }
}

/// Whether the request carries any credential at all (one a scheme might
/// not recognise): `Authorization` or the API-key header.
fn has_credentials(head: &Parts) -> bool {
    head.headers.contains_key(http::header::AUTHORIZATION)
        || head.headers.contains_key(API_KEY_HEADER)
}

impl Authenticator for Schemes {
    fn authenticate<'a>(&'a self, head: &'a Parts) -> BoxFuture<'a, Result<Identity, A2AError>> {
        Box::pin(async move {
            for scheme in &self.schemes {
                if let Some(outcome) = scheme.check(head).await {
                    return outcome;
                }
            }
            if has_credentials(head) {
                Err(A2AError::Unauthenticated(
                    "the credentials are not of a scheme this agent accepts (see the agent card's securitySchemes)".into(),
                ))
            } else if self.allow_anonymous {
                Ok(Identity::anonymous())
            } else {
                Err(A2AError::Unauthenticated(
                    "credentials are required (see the agent card's securitySchemes)".into(),
                ))
            }
        })
    }

    fn challenge(&self) -> Option<HeaderValue> {
        let challenges: Vec<String> = self.schemes.iter().map(|s| s.challenge()).collect();
        if challenges.is_empty() {
            return None;
        }
        HeaderValue::from_str(&challenges.join(", ")).ok()
    }

    fn describe(&self, card: &mut AgentCard) {
        Schemes::describe(self, card);
    }
}

/// The token of `Authorization: Bearer <token>` (scheme name in any case),
/// if the request has one.
pub(crate) fn bearer_token(head: &Parts) -> Option<&str> {
    let value = head
        .headers
        .get(http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Whether a bearer token has the shape of a JWS compact serialization
/// (three base64url segments): such tokens belong to [`JwtBearer`], any
/// other bearer token to [`ApiKeys`].
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    let mut segments = 0;
    token.split('.').all(|s| {
        segments += 1;
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    }) && segments == 3
}

#[cfg(test)]
mod tests;
