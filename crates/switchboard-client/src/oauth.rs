//! OAuth 2.0 client credentials (RFC 6749 §4.4): the client gets its own
//! access token from a token endpoint and sends it as a bearer token on
//! every binding.
//!
//! [`ClientBuilder::oauth`](crate::ClientBuilder::oauth) turns it on. The
//! token is requested on first use (`grant_type=client_credentials`, the
//! client id and secret in HTTP Basic authentication as §2.3.1 prefers, the
//! scopes space-separated) and cached until shortly before its
//! `expires_in` runs out (a tenth of its life, at most 60 s, early). When the
//! agent still refuses it (HTTP 401, or the binding's `Unauthenticated`
//! error: the issuer may have revoked it, or clocks disagree) the token is
//! dropped, a new one fetched, and the request sent once more; a second
//! refusal is the caller's error.
//!
//! Secrets stay secret: [`ClientCredentials`]'s `Debug` masks the secret,
//! and errors carry the token endpoint's status and answer, never the
//! request.

use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;
use switchboard_protocol::{A2AError, A2aRequest, A2aResponse};
use tokio::time::Instant;

use crate::client::EventStream;
use crate::error::ClientError;
use crate::transport::{ClientFuture, Transport};

/// What the client authenticates to the token endpoint with.
#[derive(Clone)]
pub struct ClientCredentials {
    token_url: String,
    client_id: String,
    client_secret: String,
    scopes: Vec<String>,
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("token_url", &self.token_url)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl ClientCredentials {
    /// Credentials for the token endpoint at `token_url`.
    pub fn new(
        token_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        ClientCredentials {
            token_url: token_url.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            scopes: Vec::new(),
        }
    }

    /// Asks for a scope (repeatable; none: the endpoint's default).
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scopes.push(scope.into());
        self
    }
}

/// The token endpoint's successful answer (RFC 6749 §5.1).
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
}

/// A token and when to stop using it.
#[derive(Clone)]
struct Cached {
    token: String,
    refresh_at: Option<Instant>,
}

/// Gets, caches and renews the access token.
pub(crate) struct TokenSource {
    credentials: ClientCredentials,
    http: reqwest::Client,
    cached: RwLock<Option<Cached>>,
    /// One fetch at a time: concurrent callers wait for it and share it.
    fetching: tokio::sync::Mutex<()>,
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSource")
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

/// How long before `expires_in` runs out a token is renewed.
fn margin(expires_in: Duration) -> Duration {
    (expires_in / 10).min(Duration::from_secs(60))
}

impl TokenSource {
    pub(crate) fn new(credentials: ClientCredentials, http: reqwest::Client) -> Self {
        TokenSource {
            credentials,
            http,
            cached: RwLock::new(None),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The cached token while it is fresh.
    pub(crate) fn current(&self) -> Option<String> {
        let cached = self.cached.read().unwrap_or_else(PoisonError::into_inner);
        cached
            .as_ref()
            .filter(|c| c.refresh_at.is_none_or(|at| Instant::now() < at))
            .map(|c| c.token.clone())
    }

    /// The last token got, fresh or not: what requests are sent with (the
    /// transport made sure it was fresh just before).
    pub(crate) fn latest(&self) -> Option<String> {
        let cached = self.cached.read().unwrap_or_else(PoisonError::into_inner);
        cached.as_ref().map(|c| c.token.clone())
    }

    /// A fresh token: the cached one, else a new one from the endpoint.
    pub(crate) async fn ensure(&self) -> Result<String, ClientError> {
        if let Some(token) = self.current() {
            return Ok(token);
        }
        let _one = self.fetching.lock().await;
        // Someone else may have fetched while this waited.
        if let Some(token) = self.current() {
            return Ok(token);
        }
        self.fetch().await
    }

    /// Drops `refused` (if it is still the cached token) and gets a new one.
    pub(crate) async fn renew(&self, refused: Option<&str>) -> Result<String, ClientError> {
        let _one = self.fetching.lock().await;
        {
            let mut cached = self.cached.write().unwrap_or_else(PoisonError::into_inner);
            match cached.as_ref() {
                // Renewed by someone else already.
                Some(c) if Some(c.token.as_str()) != refused => return Ok(c.token.clone()),
                _ => *cached = None,
            }
        }
        self.fetch().await
    }

    async fn fetch(&self) -> Result<String, ClientError> {
        let c = &self.credentials;
        let form = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "client_credentials");
            if !c.scopes.is_empty() {
                form.append_pair("scope", &c.scopes.join(" "));
            }
            form.finish()
        };
        // RFC 6749 §2.3.1: id and secret form-encoded, then Basic.
        let encode =
            |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            encode(&c.client_id),
            encode(&c.client_secret)
        ));
        let resp = self
            .http
            .post(&c.token_url)
            .header(reqwest::header::AUTHORIZATION, format!("Basic {basic}"))
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(form)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| {
                ClientError::OAuth(format!(
                    "token endpoint {}: {}",
                    c.token_url,
                    crate::error::flatten_chain(&e)
                ))
            })?;
        let status = resp.status();
        let body = resp
            .bytes()
            .await
            .map_err(|e| ClientError::OAuth(format!("token endpoint {}: {e}", c.token_url)))?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body[..body.len().min(512)]).into_owned();
            return Err(ClientError::OAuth(format!(
                "token endpoint {} answered {status}: {text}",
                c.token_url
            )));
        }
        let answer: TokenAnswer = serde_json::from_slice(&body).map_err(|e| {
            ClientError::OAuth(format!(
                "token endpoint {} answered no access token: {e}",
                c.token_url
            ))
        })?;
        if answer
            .token_type
            .as_deref()
            .is_some_and(|t| !t.eq_ignore_ascii_case("bearer"))
        {
            return Err(ClientError::OAuth(format!(
                "token endpoint {} issued a {:?} token; only bearer tokens are supported",
                c.token_url, answer.token_type
            )));
        }
        let refresh_at = answer.expires_in.map(|secs| {
            let life = Duration::from_secs(secs);
            Instant::now() + (life - margin(life))
        });
        *self.cached.write().unwrap_or_else(PoisonError::into_inner) = Some(Cached {
            token: answer.access_token.clone(),
            refresh_at,
        });
        Ok(answer.access_token)
    }
}

/// Whether the agent refused the credentials (worth one retry with a new token).
fn refused(e: &ClientError) -> bool {
    matches!(
        e,
        ClientError::Http { status: 401, .. } | ClientError::Protocol(A2AError::Unauthenticated(_))
    )
}

/// A transport whose requests carry the token (the bindings read it from
/// the [`TokenSource`] when they build a request); a refused request is
/// retried once with a new token.
#[derive(Debug)]
pub(crate) struct Authorized {
    pub inner: Box<dyn Transport>,
    pub tokens: Arc<TokenSource>,
}

/// `transport`, authorized with `http`'s tokens when it has a token source.
pub(crate) fn authorize(
    transport: Box<dyn Transport>,
    http: &crate::transport::Http,
) -> Box<dyn Transport> {
    match &http.tokens {
        Some(tokens) => Box::new(Authorized {
            inner: transport,
            tokens: tokens.clone(),
        }),
        None => transport,
    }
}

impl Authorized {
    /// Runs `attempt` with the current token and, when the agent refuses
    /// it, once more with a new one.
    fn retried<'a, T, F>(&'a self, attempt: F) -> ClientFuture<'a, T>
    where
        T: Send + 'a,
        F: Fn() -> ClientFuture<'a, T> + Send + 'a,
    {
        Box::pin(async move {
            let token = self.tokens.ensure().await?;
            match attempt().await {
                Err(e) if refused(&e) => {
                    self.tokens.renew(Some(&token)).await?;
                    attempt().await
                }
                other => other,
            }
        })
    }
}

impl Transport for Authorized {
    fn endpoint(&self) -> &str {
        self.inner.endpoint()
    }

    fn call(&self, request: A2aRequest) -> ClientFuture<'_, A2aResponse> {
        self.retried(move || self.inner.call(request.clone()))
    }

    fn stream(&self, request: A2aRequest, after: Option<u64>) -> ClientFuture<'_, EventStream> {
        self.retried(move || self.inner.stream(request.clone(), after))
    }

    #[cfg(feature = "agui")]
    fn open_agui(
        &self,
        request: A2aRequest,
        last_event_id: Option<String>,
    ) -> ClientFuture<'_, reqwest::Response> {
        self.retried(move || self.inner.open_agui(request.clone(), last_event_id.clone()))
    }
}
