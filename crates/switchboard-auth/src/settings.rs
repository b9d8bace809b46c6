//! Authentication from settings: a plain [`AuthSettings`] (the keys of a
//! config file's `[auth]` table) turned into [`Schemes`], with the rule for
//! anonymous callers.
//!
//! ```toml
//! [auth]
//! # API keys, stored as hashes only (`hash_api_key`; `switchboard auth
//! # new-key` makes one). HASH=PRINCIPAL[@TENANT][;admin]; callers send
//! # `X-API-Key: <key>` or `Authorization: Bearer <key>`.
//! api_key_hashes = ["sha256:9f86…=ci@acme", "sha256:60303…=ops;admin"]
//!
//! # Bearer JWTs from an identity provider, checked against its JWKS.
//! jwks_url = "https://idp.example.com/.well-known/jwks.json"
//! jwks_ca_cert = "/etc/switchboard/idp-ca.pem" # a private CA for it (beside the system roots)
//! jwt_issuer = "https://idp.example.com/"
//! jwt_audience = "switchboard"
//! jwt_algorithms = ["RS256", "ES256"]   # default: RS256, PS256, ES256, EdDSA
//! jwt_leeway_secs = 30                  # clock skew on exp/nbf
//! jwt_tenant_claim = "tenant"           # tokens must carry it; binds the caller to it
//! jwt_admin_claim = "scope"             # a space-separated string or an array
//! jwt_admin_value = "switchboard:admin" # the value that marks an administrator
//! jwks_min_refetch_secs = 30            # unknown kids refetch at most this often
//! jwks_revalidate_secs = 60             # keys re-read in the background this often while in use
//!
//! allow_anonymous = false               # serve callers without credentials too
//! ```
//!
//! **Anonymous access is explicit** ([`access`]). With no scheme configured,
//! a server accepts every caller as the anonymous principal only when it
//! listens on a loopback address (a development setup nobody else can
//! reach); on any other address [`caller_schemes`] refuses unless
//! `allow_anonymous` says that is meant. With schemes configured,
//! `allow_anonymous` also serves callers that present no credentials;
//! presented credentials are always checked. Set on
//! `A2aServer::authenticator`, the schemes are advertised on the card.
//!
//! ```
//! use switchboard_auth::settings::{AuthSettings, caller_schemes};
//! let settings = AuthSettings {
//!     api_key_hash: vec![format!("{}=ci@acme", switchboard_auth::hash_api_key("k"))],
//!     ..AuthSettings::default()
//! };
//! let schemes = caller_schemes(&settings, "0.0.0.0".parse().unwrap()).unwrap();
//! assert!(schemes.is_some());
//! ```

use std::io::BufRead;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::{ApiKeys, BadKeyHash, JwtBearer, JwtConfig, Schemes};

/// Who may call a server: API keys by hash, a JWT issuer, and whether
/// callers without credentials are served. Every field is optional; the
/// default configures no scheme.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthSettings {
    /// Serve callers that present no credentials, as the anonymous principal.
    pub allow_anonymous: bool,
    /// API keys by hash: `HASH=PRINCIPAL[@TENANT][;admin]` (the hash from
    /// [`crate::hash_api_key`]).
    #[serde(alias = "api_key_hashes")]
    pub api_key_hash: Vec<String>,
    /// Accept bearer JWTs verified with the keys published at this JWKS URL.
    pub jwks_url: Option<String>,
    /// A PEM file of CA certificates trusted for an `https` JWKS URL beside
    /// the system's roots.
    pub jwks_ca_cert: Option<PathBuf>,
    /// The issuer (`iss`) tokens must come from.
    pub jwt_issuer: Option<String>,
    /// The audience (`aud`) tokens must be for.
    pub jwt_audience: Option<String>,
    /// Accepted token algorithms (RS*, PS*, ES*, EdDSA; never HS* or none).
    pub jwt_algorithms: Vec<String>,
    /// Clock skew tolerated on `exp` and `nbf`, in seconds (default 30).
    pub jwt_leeway_secs: Option<u64>,
    /// The claim naming the caller's tenant (then required in every token).
    pub jwt_tenant_claim: Option<String>,
    /// The claim that can mark an administrator (default `scope`).
    pub jwt_admin_claim: Option<String>,
    /// The value of the admin claim that marks an administrator.
    pub jwt_admin_value: Option<String>,
    /// Least time between two JWKS fetches, in seconds (default 30).
    pub jwks_min_refetch_secs: Option<u64>,
    /// Re-read the JWKS in the background once it is this many seconds old
    /// while tokens arrive (default 60).
    pub jwks_revalidate_secs: Option<u64>,
}

/// Why settings give no schemes. The messages name the settings by their
/// command-line flags, as `switchboard serve` takes them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// An `api_key_hash` entry is not `HASH=PRINCIPAL[@TENANT][;admin]`.
    #[error("API key {spec:?}: {problem}")]
    ApiKey {
        /// The entry as written.
        spec: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// An `api_key_hash` entry names an unknown flag after `;`.
    #[error("API key {spec:?}: unknown flag {flag:?} (only `admin`)")]
    ApiKeyFlag {
        /// The entry as written.
        spec: String,
        /// The flag.
        flag: String,
    },
    /// A hash that is not one [`crate::hash_api_key`] makes.
    #[error(transparent)]
    BadHash(#[from] BadKeyHash),
    /// A JWKS URL without the issuer and audience to check tokens against.
    #[error("--jwks-url needs --jwt-issuer and --jwt-audience (tokens are checked against both)")]
    JwtIncomplete,
    /// JWT settings without a JWKS URL.
    #[error(
        "--jwt-issuer/--jwt-audience/--jwks-ca-cert need --jwks-url (where the issuer's keys are)"
    )]
    NoJwksUrl,
    /// The JWT settings were refused (an algorithm, the URL).
    #[error("{0}")]
    Jwt(String),
    /// The JWKS CA file could not be read.
    #[error("--jwks-ca-cert {}", path.display())]
    CaCert {
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// No scheme, anonymous access not asked for, and not on loopback.
    #[error(
        "refusing to serve {0} without authentication: anyone who can reach it could read and cancel every task. \
         Configure API keys (--api-key-hash) or JWTs (--jwks-url, --jwt-issuer, --jwt-audience), \
         or pass --allow-anonymous if open access is intended"
    )]
    OpenOffLoopback(IpAddr),
}

/// Who a server lets in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only callers the configured schemes accept.
    Authenticated,
    /// Those, and callers without credentials as the anonymous principal.
    AuthenticatedOrAnonymous,
    /// Everyone, as the anonymous principal (no scheme configured).
    Anonymous,
}

/// The anonymous rule: without a scheme, anonymous access is the default
/// only on a loopback address; elsewhere it must be asked for.
pub fn access(
    has_schemes: bool,
    allow_anonymous: bool,
    listen: IpAddr,
) -> Result<Access, SettingsError> {
    match (has_schemes, allow_anonymous) {
        (true, false) => Ok(Access::Authenticated),
        (true, true) => Ok(Access::AuthenticatedOrAnonymous),
        (false, true) => Ok(Access::Anonymous),
        (false, false) if listen.is_loopback() => Ok(Access::Anonymous),
        (false, false) => Err(SettingsError::OpenOffLoopback(listen)),
    }
}

/// One `HASH=PRINCIPAL[@TENANT][;admin]` entry added to `keys`.
pub fn add_api_key(keys: ApiKeys, spec: &str) -> Result<ApiKeys, SettingsError> {
    let bad = |problem| SettingsError::ApiKey {
        spec: spec.to_owned(),
        problem,
    };
    let (hash, who) = spec
        .split_once('=')
        .ok_or_else(|| bad("expected HASH=PRINCIPAL[@TENANT][;admin]"))?;
    let (who, admin) = match who.split_once(';') {
        Some((who, "admin")) => (who, true),
        Some((_, flag)) => {
            return Err(SettingsError::ApiKeyFlag {
                spec: spec.to_owned(),
                flag: flag.to_owned(),
            });
        }
        None => (who, false),
    };
    let (principal, tenant) = match who.split_once('@') {
        Some((p, t)) => (p, Some(t)),
        None => (who, None),
    };
    if principal.is_empty() || tenant.is_some_and(str::is_empty) {
        return Err(bad(
            "the principal (and a tenant after @) must not be empty",
        ));
    }
    Ok(keys.key(hash, principal, tenant, admin)?)
}

/// The configured schemes (empty when none is).
pub fn schemes(s: &AuthSettings) -> Result<Schemes, SettingsError> {
    let mut schemes = Schemes::new();
    if let Some(url) = &s.jwks_url {
        let (Some(issuer), Some(audience)) = (&s.jwt_issuer, &s.jwt_audience) else {
            return Err(SettingsError::JwtIncomplete);
        };
        let mut config = JwtConfig::new(url, issuer, audience);
        if !s.jwt_algorithms.is_empty() {
            config.algorithms =
                JwtConfig::parse_algorithms(&s.jwt_algorithms).map_err(SettingsError::Jwt)?;
        }
        if let Some(secs) = s.jwt_leeway_secs {
            config.leeway = Duration::from_secs(secs);
        }
        if let Some(secs) = s.jwks_min_refetch_secs {
            config.min_refetch = Duration::from_secs(secs);
        }
        if let Some(secs) = s.jwks_revalidate_secs {
            config.revalidate_after = Duration::from_secs(secs);
        }
        config.tenant_claim.clone_from(&s.jwt_tenant_claim);
        if let Some(c) = &s.jwt_admin_claim {
            config.admin_claim.clone_from(c);
        }
        config.admin_value.clone_from(&s.jwt_admin_value);
        if let Some(path) = &s.jwks_ca_cert {
            let pem = std::fs::read(path).map_err(|source| SettingsError::CaCert {
                path: path.clone(),
                source,
            })?;
            config.jwks_ca_pem = Some(pem);
        }
        schemes = schemes.with(JwtBearer::new(config).map_err(SettingsError::Jwt)?);
    } else if s.jwt_issuer.is_some() || s.jwt_audience.is_some() || s.jwks_ca_cert.is_some() {
        return Err(SettingsError::NoJwksUrl);
    }
    if !s.api_key_hash.is_empty() {
        let keys = s
            .api_key_hash
            .iter()
            .try_fold(ApiKeys::new(), |keys, spec| add_api_key(keys, spec))?;
        schemes = schemes.with(keys);
    }
    Ok(schemes)
}

/// The schemes a server on `listen` checks callers with (`None`: everyone
/// is anonymous); an error when the settings are invalid or would serve
/// anonymous callers off loopback without being asked to.
pub fn caller_schemes(s: &AuthSettings, listen: IpAddr) -> Result<Option<Schemes>, SettingsError> {
    let schemes = schemes(s)?;
    match access(!schemes.is_empty(), s.allow_anonymous, listen)? {
        Access::Anonymous => {
            tracing::warn!(%listen, "no authentication: every caller is the anonymous principal");
            Ok(None)
        }
        access => Ok(Some(
            schemes.allow_anonymous(access == Access::AuthenticatedOrAnonymous),
        )),
    }
}

/// A new API key and its hash: the key goes to the caller, the hash to
/// [`AuthSettings::api_key_hash`].
#[derive(Debug, Clone)]
pub struct NewKey {
    /// The key (shown once, never stored).
    pub key: String,
    /// Its hash.
    pub hash: String,
}

/// Makes a new random API key with its hash.
pub fn new_key() -> NewKey {
    let key = crate::generate_api_key();
    let hash = crate::hash_api_key(&key);
    NewKey { key, hash }
}

/// Why [`read_key`] found no key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadKeyError {
    /// The input could not be read.
    #[error("reading the key from stdin")]
    Io(#[source] std::io::Error),
    /// The first line is empty.
    #[error("no key on stdin (e.g. `printf %s \"$KEY\" | switchboard auth hash-key`)")]
    Empty,
}

/// An API key read from the first line of `input` (stdin keeps it out of
/// the shell history and the process list), trimmed.
pub fn read_key(mut input: impl BufRead) -> Result<String, ReadKeyError> {
    let mut line = String::new();
    input.read_line(&mut line).map_err(ReadKeyError::Io)?;
    let key = line.trim();
    if key.is_empty() {
        return Err(ReadKeyError::Empty);
    }
    Ok(key.to_string())
}

#[cfg(test)]
mod tests;
