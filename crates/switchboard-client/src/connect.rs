//! How to reach an agent, as plain data: [`ConnectOptions`] gathers what a
//! caller says about the connection (credentials, preferred bindings and
//! versions, card verification, trusted CAs, time limits) and becomes a
//! [`ClientBuilder`] in one call.
//!
//! It is what a command line or a configuration file turns into: the
//! `switchboard` binary's client flags (`--header`, `--api-key`, `--token`,
//! `--binding`, `--protocol-version`, …) and its fronts' `--agent-*` flags
//! each fill one, so every program that reaches agents for someone treats
//! the same settings the same way.
//!
//! ```no_run
//! # async fn run() -> Result<(), switchboard_client::ClientError> {
//! use switchboard_client::ConnectOptions;
//!
//! let mut options = ConnectOptions::default();
//! options.api_key = Some("secret".into());
//! options.bindings = vec!["GRPC".into()];
//! let client = options.builder().connect("https://agent.example.com").await?;
//! # let _ = client; Ok(()) }
//! ```
//!
//! ## Settings as a person writes them
//!
//! [`AgentSettings`] is the same thing one step earlier: text still to be
//! checked, as flags or a file state it (`Name: value` header lines, a
//! timeout in seconds, a CA certificate's path, OAuth client credentials
//! with the secret in a file or the [`OAUTH_CLIENT_SECRET_ENV`] variable).
//! [`AgentSettings::options`] checks it, reads the files, trims the
//! secrets and gives the [`ConnectOptions`]; what it rejects is a
//! [`SettingsError`] naming the setting by its flag (`--header`,
//! `--timeout`, `--oauth-token-url`, …), since that is where a person
//! wrote it. [`parse_header`] and [`parse_binding`] check one
//! `Name: value` header or one binding name, for a parser that checks
//! each value as it is read.

use std::path::PathBuf;
use std::time::Duration;

use crate::{CardTrust, ClientBuilder, ClientCredentials};

/// What a caller says about reaching an agent (see the module docs). Empty
/// by default: a [`ClientBuilder::new`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ConnectOptions {
    /// Headers sent with every request, the card fetch included.
    pub headers: Vec<(String, String)>,
    /// An API key, sent as `X-API-Key`.
    pub api_key: Option<String>,
    /// A bearer token, sent as `Authorization: Bearer …`.
    pub bearer_token: Option<String>,
    /// The time limit of each request ([`ClientBuilder::timeout`]).
    pub timeout: Option<Duration>,
    /// The bindings to use, in order of preference; empty: the card's order
    /// ([`ClientBuilder::preferred_bindings`]).
    pub bindings: Vec<String>,
    /// The A2A versions to speak, in order of preference; empty: 1.0 where
    /// offered ([`ClientBuilder::preferred_versions`]).
    pub versions: Vec<String>,
    /// Require a card signed by a key on the card's own origin
    /// ([`CardTrust::SameOrigin`]).
    pub verify_card: bool,
    /// CA certificates (PEM) trusted for `https` agents besides the
    /// built-in roots.
    pub root_certificates_pem: Vec<Vec<u8>>,
    /// OAuth 2.0 client credentials for every request.
    pub oauth: Option<ClientCredentials>,
}

impl ConnectOptions {
    /// A client builder with every option applied; the agent's URL is
    /// given to its [`connect`](ClientBuilder::connect).
    pub fn builder(&self) -> ClientBuilder {
        let mut b = ClientBuilder::new();
        for (name, value) in &self.headers {
            b = b.header(name, value);
        }
        if let Some(key) = &self.api_key {
            b = b.header("X-API-Key", key);
        }
        if let Some(token) = &self.bearer_token {
            b = b.bearer_token(token);
        }
        if let Some(timeout) = self.timeout {
            b = b.timeout(timeout);
        }
        if !self.bindings.is_empty() {
            b = b.preferred_bindings(self.bindings.iter().cloned());
        }
        if !self.versions.is_empty() {
            b = b.preferred_versions(self.versions.iter().cloned());
        }
        if self.verify_card {
            b = b.verify_card(CardTrust::SameOrigin);
        }
        for pem in &self.root_certificates_pem {
            b = b.add_root_certificate_pem(pem.clone());
        }
        if let Some(credentials) = &self.oauth {
            b = b.oauth(credentials.clone());
        }
        b
    }
}

/// The variable holding the OAuth 2.0 client secret when no secret file
/// is given (a secret on a command line would show in `ps` and the shell's
/// history).
pub const OAUTH_CLIENT_SECRET_ENV: &str = "SWITCHBOARD_OAUTH_CLIENT_SECRET";

/// How to reach an agent as a person states it, unchecked (see the module
/// docs); [`AgentSettings::options`] makes it [`ConnectOptions`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct AgentSettings {
    /// Extra headers, each `Name: value`.
    pub headers: Vec<String>,
    /// An API key, sent as `X-API-Key` (surrounding whitespace ignored).
    pub api_key: Option<String>,
    /// A bearer token (surrounding whitespace ignored).
    pub token: Option<String>,
    /// The time limit of each request, in seconds.
    pub timeout_secs: Option<f64>,
    /// The one binding to use, by its card name (`JSONRPC`, `HTTP+JSON`,
    /// `GRPC`).
    pub binding: Option<String>,
    /// The one A2A version to speak (`1.0`, `0.3`).
    pub protocol_version: Option<String>,
    /// Require a card signed by a key on the card's own origin.
    pub verify_card: bool,
    /// A CA certificate (PEM) to trust beside the built-in roots.
    pub ca_cert: Option<PathBuf>,
    /// OAuth 2.0 client credentials.
    pub oauth: OAuthSettings,
}

/// OAuth 2.0 client credentials as a person states them: all of the token
/// endpoint, the client id and the secret, or none.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct OAuthSettings {
    /// The token endpoint's URL; without it, no OAuth.
    pub token_url: Option<String>,
    /// The client id.
    pub client_id: Option<String>,
    /// The file holding the client secret; without it the secret is read
    /// from [`OAUTH_CLIENT_SECRET_ENV`].
    pub client_secret_file: Option<PathBuf>,
    /// The scopes to ask for.
    pub scopes: Vec<String>,
}

/// Why [`AgentSettings`] cannot be used; each names the flag it came from.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// A header line without a `:`.
    #[error("--header {0:?} is not in the form \"Name: value\"")]
    Header(String),
    /// A timeout that is not a usable number of seconds.
    #[error("--timeout {secs}: {reason}")]
    Timeout {
        /// The number given.
        secs: f64,
        /// Why it is unusable.
        reason: std::time::TryFromFloatSecsError,
    },
    /// A file that cannot be read; `flag` is the setting that named it.
    #[error("{flag} {}: {source}", path.display())]
    File {
        /// The setting (`--ca-cert`, `--oauth-client-secret-file`).
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// What reading it said.
        source: std::io::Error,
    },
    /// An incomplete set of OAuth settings.
    #[error("{0}")]
    OAuth(&'static str),
    /// OAuth without a secret file and without the variable.
    #[error(
        "--oauth-token-url needs the client secret in {OAUTH_CLIENT_SECRET_ENV} or --oauth-client-secret-file"
    )]
    NoSecret,
}

impl AgentSettings {
    /// The settings, checked, as [`ConnectOptions`]: headers split, secrets
    /// trimmed, the CA certificate and the OAuth secret read.
    pub fn options(&self) -> Result<ConnectOptions, SettingsError> {
        let mut options = ConnectOptions::default();
        for h in &self.headers {
            let (name, value) = h
                .split_once(':')
                .ok_or_else(|| SettingsError::Header(h.clone()))?;
            options
                .headers
                .push((name.trim().to_owned(), value.trim().to_owned()));
        }
        options.api_key = self.api_key.as_ref().map(|key| key.trim().to_owned());
        options.bearer_token = self.token.as_ref().map(|token| token.trim().to_owned());
        if let Some(secs) = self.timeout_secs {
            let t = Duration::try_from_secs_f64(secs)
                .map_err(|reason| SettingsError::Timeout { secs, reason })?;
            options.timeout = Some(t);
        }
        options.bindings = self.binding.iter().cloned().collect();
        options.versions = self.protocol_version.iter().cloned().collect();
        options.verify_card = self.verify_card;
        if let Some(path) = &self.ca_cert {
            let pem = std::fs::read(path).map_err(|source| SettingsError::File {
                flag: "--ca-cert",
                path: path.clone(),
                source,
            })?;
            options.root_certificates_pem.push(pem);
        }
        options.oauth = self.oauth.credentials()?;
        Ok(options)
    }
}

impl OAuthSettings {
    /// The client credentials these settings ask for, if any.
    pub fn credentials(&self) -> Result<Option<ClientCredentials>, SettingsError> {
        let Some(token_url) = &self.token_url else {
            if self.client_id.is_some() || self.client_secret_file.is_some() {
                return Err(SettingsError::OAuth(
                    "--oauth-client-id and --oauth-client-secret-file need --oauth-token-url",
                ));
            }
            return Ok(None);
        };
        let Some(id) = &self.client_id else {
            return Err(SettingsError::OAuth(
                "--oauth-token-url needs --oauth-client-id",
            ));
        };
        let secret = match &self.client_secret_file {
            Some(path) => std::fs::read_to_string(path).map_err(|source| SettingsError::File {
                flag: "--oauth-client-secret-file",
                path: path.clone(),
                source,
            })?,
            None => std::env::var(OAUTH_CLIENT_SECRET_ENV).map_err(|_| SettingsError::NoSecret)?,
        };
        let credentials = self.scopes.iter().fold(
            ClientCredentials::new(token_url, id.trim(), secret.trim()),
            |c, scope| c.scope(scope),
        );
        Ok(Some(credentials))
    }
}

/// One `Name: value` header, both parts trimmed and valid in HTTP.
pub fn parse_header(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once(':')
        .ok_or_else(|| format!("expected `Name: value`, got {s:?}"))?;
    let (name, value) = (name.trim(), value.trim());
    reqwest::header::HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("{name:?} is not a valid header name"))?;
    reqwest::header::HeaderValue::from_str(value)
        .map_err(|_| format!("the value of {name} is not valid"))?;
    Ok((name.to_owned(), value.to_owned()))
}

/// A binding's card name (`JSONRPC`, `HTTP+JSON`, `GRPC`) from any case.
pub fn parse_binding(s: &str) -> Result<String, String> {
    use switchboard_protocol::card::{BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC};
    let binding = s.trim().to_ascii_uppercase();
    if [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC].contains(&binding.as_str()) {
        Ok(binding)
    } else {
        Err(format!(
            "unknown binding {s:?}: use JSONRPC, HTTP+JSON or GRPC"
        ))
    }
}
