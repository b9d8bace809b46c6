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
