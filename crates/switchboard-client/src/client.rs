//! [`A2AClient`]: one agent, every A2A operation, as typed async methods.
//!
//! A client is built in one of three ways:
//!
//! * [`A2AClient::connect`] (or [`ClientBuilder::connect`]) reads the agent
//!   card, walks its `supportedInterfaces` in order and uses the first one
//!   this crate has a transport for (`JSONRPC`, `HTTP+JSON` or `GRPC`,
//!   version `1.x`); [`ClientBuilder::preferred_bindings`] changes the order.
//! * [`ClientBuilder::from_card`] does the same with a card you already have.
//! * [`A2AClient::from_endpoint`] skips discovery and talks JSON-RPC 1.0 to a
//!   URL you know.
//!
//! The chosen interface's `tenant`, when set, is copied into every request
//! that does not name a tenant itself, as the spec requires.
//!
//! Methods take the protocol's request objects, or anything that converts
//! into one through [`IntoRequest`]: `client.get_task("task-id")` and
//! `client.get_task(GetTaskRequest { .. })` both work.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use jsonwebtoken::jwk::JwkSet;
use reqwest::header::{ACCEPT, HeaderMap, HeaderName, HeaderValue};
use switchboard_protocol::card::{BINDING_GRPC, BINDING_JSONRPC};
use switchboard_protocol::{
    A2AError, A2aRequest, A2aResponse, AGENT_CARD_PATH, AgentCard, AgentInterface,
    CancelTaskRequest, EXTENSIONS_HEADER, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, Operation, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef, VERSION_HEADER,
};

use crate::card_signature::{self, CardTrust};
use crate::error::{ClientError, flatten_chain};
use crate::request::IntoRequest;
use crate::resume::{self, ReconnectPolicy, Resubscribe};
use crate::transport::{self, Http, Transport};

/// The answer of the variant `$op`, or a Decode error for any other.
macro_rules! answer {
    ($answer:expr, $op:ident) => {
        match $answer {
            A2aResponse::$op(value) => Ok(value),
            other => Err(ClientError::Decode(format!(
                "{} answered as {}",
                Operation::$op,
                other.operation()
            ))),
        }
    };
}

/// The named unary methods. Each is [`A2AClient::call`] (which fills in
/// the interface's tenant) with the request wrapped in the operation's
/// `A2aRequest` variant, and the answer unwrapped from the same variant.
macro_rules! unary_methods {
    ($(
        $(#[$doc:meta])*
        $name:ident($request:ty) -> $answer:ty = $op:ident;
    )*) => {$(
        $(#[$doc])*
        pub async fn $name(&self, request: $request) -> Result<$answer, ClientError> {
            answer!(self.call(A2aRequest::$op(request.into_request())).await?, $op)
        }
    )*};
}

/// One item of a stream: the event, plus the SSE `id:` when the server sent
/// a numeric one (servers that support resuming number their events).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamEvent {
    /// The SSE event id, if the server sent a numeric `id:` field.
    pub seq: Option<u64>,
    /// The event: a task snapshot, a message, a status or an artifact update.
    pub event: StreamResponse,
}

/// The stream returned by [`A2AClient::send_streaming_message`] and
/// [`A2AClient::subscribe_to_task`].
///
/// It yields events until the server closes the stream. An error (from the
/// agent, the network or decoding) is always the last item.
///
/// A dropped connection does not end it: the client resubscribes after the
/// last event it yielded (`Last-Event-ID`) and carries on, each event once;
/// see [`crate::resume`] and [`ClientBuilder::reconnect`].
pub type EventStream = BoxStream<'static, Result<StreamEvent, ClientError>>;

/// Builds an [`A2AClient`] with options. Start with [`A2AClient::builder`].
///
/// ```no_run
/// # async fn demo() -> Result<(), switchboard_client::ClientError> {
/// use std::time::Duration;
/// use switchboard_client::A2AClient;
///
/// let client = A2AClient::builder()
///     .timeout(Duration::from_secs(30))
///     .bearer_token("secret")
///     .extension("https://example.com/ext/v1")
///     .connect("https://agent.example.com")
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct ClientBuilder {
    preferred_bindings: Vec<String>,
    preferred_versions: Vec<String>,
    timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    headers: Vec<(String, String)>,
    extensions: Vec<String>,
    reconnect: ReconnectPolicy,
    card_trust: Option<CardTrust>,
    roots: crate::tls::TrustedRoots,
    oauth: Option<crate::oauth::ClientCredentials>,
    tap: Option<Arc<dyn crate::tap::WireTap>>,
}

impl ClientBuilder {
    /// A builder with default options: the card's interface order, no
    /// request timeout, a 10 s connect timeout, no extra headers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Restricts and orders the bindings to use, e.g. `["JSONRPC"]`.
    ///
    /// By default the card's own order (the agent's preference) decides.
    /// With a list, the first listed binding that the card offers (with a
    /// supported version) and this crate implements wins; unlisted bindings
    /// are not used. Names are compared case-insensitively. This crate
    /// implements `JSONRPC`, `HTTP+JSON` and `GRPC`, each in A2A 1.0 and
    /// 0.3 (see [`Self::preferred_versions`]); e.g. `["HTTP+JSON"]` forces
    /// the REST binding when the card offers it.
    pub fn preferred_bindings(
        mut self,
        bindings: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.preferred_bindings = bindings.into_iter().map(Into::into).collect();
        self
    }

    /// Restricts and orders the protocol versions to use, e.g. `["0.3"]`.
    ///
    /// Default: `1.0`, then `0.3` — a card offering both is spoken in 1.0
    /// whatever its order. Within one version the binding rule of
    /// [`ClientBuilder::preferred_bindings`] applies. Over 0.3 there is no
    /// tenant and no ListTasks (it answers UnsupportedOperation).
    pub fn preferred_versions(
        mut self,
        versions: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.preferred_versions = versions.into_iter().map(Into::into).collect();
        self
    }

    /// Time limit of a whole unary request, and of the wait for a stream's
    /// first response bytes (a running stream is never cut).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Time limit for establishing a connection (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Adds a header to every request, the card fetch included (e.g.
    /// `Authorization`). Invalid names or values are reported when the
    /// client is built.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Shorthand for `header("Authorization", "Bearer <token>")`.
    pub fn bearer_token(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header("Authorization", value)
    }

    /// Requests an extension: its URI is sent in the `A2A-Extensions` header.
    pub fn extension(mut self, uri: impl Into<String>) -> Self {
        self.extensions.push(uri.into());
        self
    }

    /// Requests several extensions (see [`ClientBuilder::extension`]).
    pub fn extensions(mut self, uris: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.extensions.extend(uris.into_iter().map(Into::into));
        self
    }

    /// How streams resume after a dropped connection (see [`ReconnectPolicy`];
    /// on by default).
    pub fn reconnect(mut self, policy: ReconnectPolicy) -> Self {
        self.reconnect = policy;
        self
    }

    /// Requires the agent card to be signed by a trusted key (see
    /// [`crate::card_signature`]): [`connect`](Self::connect) and
    /// [`fetch_card`](Self::fetch_card) then fail with
    /// [`ClientError::CardSignature`] for an unsigned card or one whose
    /// signatures do not verify. Off by default.
    pub fn verify_card(mut self, trust: CardTrust) -> Self {
        self.card_trust = Some(trust);
        self
    }

    /// Trusts the CA certificate(s) in `pem` for `https` servers on every
    /// binding (gRPC included), beside the built-in Mozilla roots (see
    /// [`crate::tls`]). For a private CA; a PEM that does not parse is
    /// reported when the client is built.
    pub fn add_root_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        std::sync::Arc::make_mut(&mut self.roots.pems).push(pem.into());
        self
    }

    /// Authenticates with OAuth 2.0 client credentials: every request, on
    /// every binding, carries an access token from the credentials' token
    /// endpoint, cached until shortly before it expires and renewed once
    /// when the agent refuses it (see [`crate::oauth`]).
    pub fn oauth(mut self, credentials: crate::oauth::ClientCredentials) -> Self {
        self.oauth = Some(credentials);
        self
    }

    /// Turns automatic stream reconnection off: a dropped stream ends with
    /// its transport error.
    pub fn no_reconnect(self) -> Self {
        self.reconnect(ReconnectPolicy::disabled())
    }

    /// Reports every call's request, answer and stream events to `tap`
    /// (see [`crate::tap`]); without one, nothing is recorded.
    pub fn tap(mut self, tap: Arc<dyn crate::tap::WireTap>) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Fetches the agent card at `url` (an agent base URL or the card's own
    /// URL) and builds a client for the best interface it offers.
    pub async fn connect(self, url: &str) -> Result<A2AClient, ClientError> {
        let http = self.http()?;
        let card_url = card_url(url)?;
        let card = fetch_card_with(&http, card_url.clone()).await?;
        self.check_signature(&http, &card, &card_url).await?;
        self.build_from_card(http, card, Some(&card_url))
    }

    /// Builds a client for the best interface of a card you already have.
    /// Interface URLs must be absolute.
    pub fn from_card(self, card: AgentCard) -> Result<A2AClient, ClientError> {
        let http = self.http()?;
        self.build_from_card(http, card, None)
    }

    /// Builds a client that talks JSON-RPC (A2A 1.0) to `url` directly,
    /// without reading a card. [`A2AClient::card`] is then `None`.
    pub fn from_endpoint(self, url: &str) -> Result<A2AClient, ClientError> {
        let http = self.http()?;
        let interface = AgentInterface {
            url: url.to_string(),
            protocol_binding: BINDING_JSONRPC.to_string(),
            tenant: None,
            protocol_version: switchboard_protocol::card::PROTOCOL_VERSION.to_string(),
        };
        let transport = crate::tap::Tapped::wrap(
            crate::oauth::authorize(
                transport::build_http::<transport::jsonrpc::JsonRpcTransport, false>(
                    &interface, &http,
                )?,
                &http,
            ),
            self.tap.clone(),
        );
        Ok(A2AClient::assemble(None, interface, transport, http).with_reconnect(self.reconnect))
    }

    /// Fetches an agent card without building a client (e.g. to show a
    /// card whose interfaces this crate cannot use). `url` is an agent base
    /// URL or the card's own URL.
    pub async fn fetch_card(&self, url: &str) -> Result<AgentCard, ClientError> {
        let http = self.http()?;
        let card_url = card_url(url)?;
        let card = fetch_card_with(&http, card_url.clone()).await?;
        self.check_signature(&http, &card, &card_url).await?;
        Ok(card)
    }

    /// The agent card at `url` as the JSON document it is, undecoded: for
    /// tools that check it against the spec (a field the typed card would
    /// default or drop is still there, or still missing). Returns the URL
    /// the card was read from too. The signature is not checked.
    pub async fn fetch_card_document(
        &self,
        url: &str,
    ) -> Result<(String, serde_json::Value), ClientError> {
        let http = self.http()?;
        let card_url = card_url(url)?;
        let body = get_json_body(&http, card_url.clone(), "application/json").await?;
        let document = serde_json::from_slice(&body)
            .map_err(|e| ClientError::Decode(format!("agent card at {card_url}: {e}")))?;
        Ok((card_url.to_string(), document))
    }

    /// The agents the server at `url` (its base URL, or an agent's card
    /// URL at its root) hosts, from its `GET /agents` listing (see
    /// [`crate::directory`]): `None` when it has no listing (404), as a
    /// server with one agent, or one that is not switchboard's.
    pub async fn list_agents(
        &self,
        url: &str,
    ) -> Result<Option<Vec<crate::directory::ListedAgent>>, ClientError> {
        let http = self.http()?;
        let base = crate::directory::server_base(url);
        let listing = format!("{base}{}", crate::directory::DIRECTORY_PATH);
        let listing = reqwest::Url::parse(&listing)
            .map_err(|e| ClientError::Config(format!("invalid server URL {url:?}: {e}")))?;
        let body = match get_json_body(&http, listing.clone(), "application/json").await {
            Ok(body) => body,
            Err(ClientError::Http { status: 404, .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let directory: crate::directory::Directory = serde_json::from_slice(&body)
            .map_err(|e| ClientError::Decode(format!("agent listing at {listing}: {e}")))?;
        Ok(Some(directory.agents))
    }

    /// Verifies `card` as [`verify_card`](Self::verify_card) asked, if it did.
    async fn check_signature(
        &self,
        http: &Http,
        card: &AgentCard,
        card_url: &reqwest::Url,
    ) -> Result<(), ClientError> {
        let keys = match &self.card_trust {
            None => return Ok(()),
            Some(CardTrust::Keys(keys)) => keys.clone(),
            Some(CardTrust::SameOrigin) => same_origin_keys(http, card, card_url).await?,
        };
        card_signature::verify_card(card, &keys)?;
        Ok(())
    }

    fn build_from_card(
        self,
        http: Http,
        mut card: AgentCard,
        card_url: Option<&reqwest::Url>,
    ) -> Result<A2AClient, ClientError> {
        assume_v1_where_unversioned(&mut card, card_url);
        let Some(mut interface) =
            select_versioned(&card, &self.preferred_versions, &self.preferred_bindings)
        else {
            let offered = card.supported_interfaces.iter().map(describe).collect();
            return Err(ClientError::NoSupportedInterface { offered });
        };
        // Proto3 writes an unset string as "" (the JS SDK's cards do): an
        // empty tenant means "no tenant".
        interface.tenant = interface.tenant.filter(|t| !t.is_empty());
        // A relative interface URL is resolved against the card's URL
        // (a gRPC interface's `host:port` is a target, not a relative URL).
        if !interface
            .protocol_binding
            .trim()
            .eq_ignore_ascii_case(BINDING_GRPC)
            && reqwest::Url::parse(&interface.url).is_err()
            && let Some(base) = card_url
            && let Ok(joined) = base.join(&interface.url)
        {
            interface.url = joined.to_string();
        }
        let factory = transport::factory_for(&interface).ok_or_else(|| {
            ClientError::Config(format!("no transport for {}", interface.protocol_binding))
        })?;
        let transport = crate::tap::Tapped::wrap(
            crate::oauth::authorize((factory.build)(&interface, &http)?, &http),
            self.tap.clone(),
        );
        Ok(A2AClient::assemble(Some(card), interface, transport, http)
            .with_reconnect(self.reconnect))
    }

    pub(crate) fn http(&self) -> Result<Http, ClientError> {
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ClientError::Config(format!("invalid header name {name:?}: {e}")))?;
            let value = HeaderValue::from_str(value).map_err(|e| {
                ClientError::Config(format!("invalid value for header {name}: {e}"))
            })?;
            headers.append(name, value);
        }
        if !self.extensions.is_empty() {
            let joined = self.extensions.join(",");
            let value = HeaderValue::from_str(&joined)
                .map_err(|e| ClientError::Config(format!("invalid extension URI list: {e}")))?;
            headers.insert(EXTENSIONS_HEADER, value);
        }
        // Our config names its provider; this is for reqwest clients that
        // the rest of the program builds without one.
        crate::tls::install_default_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout.unwrap_or(Duration::from_secs(10)))
            .tls_backend_preconfigured(self.roots.client_config()?)
            .build()
            .map_err(|e| ClientError::Config(flatten_chain(&e)))?;
        let tokens = self.oauth.clone().map(|credentials| {
            std::sync::Arc::new(crate::oauth::TokenSource::new(credentials, client.clone()))
        });
        Ok(Http {
            client,
            headers,
            timeout: self.timeout,
            #[cfg(feature = "grpc")]
            roots: self.roots.clone(),
            tokens,
        })
    }
}

/// `BINDING VERSION at URL`, naming what the card left out.
fn describe(i: &AgentInterface) -> String {
    let binding = match i.protocol_binding.trim() {
        "" => "(no protocolBinding)",
        b => b,
    };
    let version = match i.protocol_version.trim() {
        "" => "(no protocolVersion)",
        v => v,
    };
    format!("{binding} {version} at {}", i.url)
}

/// Takes every interface of `supportedInterfaces` that names no
/// `protocolVersion` as 1.0.
///
/// The 1.0 card requires the field, but cards the official Python SDK
/// builds from its own samples leave it out (the SDK itself only warns),
/// and `supportedInterfaces` is a 1.0 field: a 0.3 card lists its endpoints
/// under `url`/`additionalInterfaces` instead. So the card's own shape says
/// which version is meant. A warning is logged once per card URL.
fn assume_v1_where_unversioned(card: &mut AgentCard, card_url: Option<&reqwest::Url>) {
    let mut assumed = Vec::new();
    for i in &mut card.supported_interfaces {
        if i.protocol_version.trim().is_empty() {
            i.protocol_version = switchboard_protocol::card::PROTOCOL_VERSION.to_string();
            assumed.push(format!("{} at {}", i.protocol_binding, i.url));
        }
    }
    if assumed.is_empty() {
        return;
    }
    static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let key = card_url.map_or_else(|| card.name.clone(), |u| u.to_string());
    let first = WARNED.lock().is_ok_and(|mut warned| {
        if warned.contains(&key) {
            return false;
        }
        // Bounded: past 256 cards nothing more is remembered (such a card
        // is warned about on every build), the list never grows without end.
        if warned.len() < 256 {
            warned.push(key.clone());
        }
        true
    });
    if first {
        tracing::warn!(
            card = %key,
            interfaces = %assumed.join(", "),
            "the agent card lists interfaces without protocolVersion; taking them as 1.0 \
             (supportedInterfaces is the 1.0 card's field)"
        );
    }
}

/// The versions tried when the caller names none: 1.0 first.
const DEFAULT_VERSIONS: [&str; 2] = ["1.0", "0.3"];

/// Picks the interface: the first preferred version (default 1.0, then 0.3)
/// the card offers with a usable binding, chosen by [`select_interface`].
fn select_versioned(
    card: &AgentCard,
    versions: &[String],
    bindings: &[String],
) -> Option<AgentInterface> {
    let defaults: Vec<String> = DEFAULT_VERSIONS.iter().map(|v| v.to_string()).collect();
    let versions = if versions.is_empty() {
        &defaults
    } else {
        versions
    };
    versions.iter().find_map(|want| {
        let want = want.trim();
        let mut only = card.clone();
        only.supported_interfaces.retain(|i| {
            let have = i.protocol_version.trim();
            if want.starts_with('1') {
                transport::is_v1(have)
            } else {
                transport::v03::is_v03(have) && transport::v03::is_v03(want)
            }
        });
        select_interface(&only, bindings)
    })
}

/// Picks the interface to use: the card's order, or the caller's binding
/// preference, among interfaces this crate has a transport for.
fn select_interface(card: &AgentCard, preferred: &[String]) -> Option<AgentInterface> {
    let usable = |i: &&AgentInterface| transport::factory_for(i).is_some();
    if preferred.is_empty() {
        return card.supported_interfaces.iter().find(usable).cloned();
    }
    preferred.iter().find_map(|binding| {
        card.supported_interfaces
            .iter()
            .filter(|i| {
                i.protocol_binding
                    .trim()
                    .eq_ignore_ascii_case(binding.trim())
            })
            .find(usable)
            .cloned()
    })
}

/// Turns an agent base URL into its card URL; a URL that already points at
/// a JSON document or into `/.well-known/` is taken as the card URL.
fn card_url(input: &str) -> Result<reqwest::Url, ClientError> {
    let mut url = reqwest::Url::parse(input.trim())
        .map_err(|e| ClientError::Config(format!("invalid agent URL {input:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ClientError::Config(format!(
            "agent URL {url} is not http(s)"
        )));
    }
    let path = url.path().to_string();
    if path.ends_with(".json") || path.contains("/.well-known/") {
        return Ok(url);
    }
    let base = path.trim_end_matches('/');
    url.set_path(&format!("{base}{AGENT_CARD_PATH}"));
    Ok(url)
}

/// The keys published at the `jku`s of `card`'s signatures that are on the
/// card URL's origin (others are not followed; see [`crate::card_signature`]).
async fn same_origin_keys(
    http: &Http,
    card: &AgentCard,
    card_url: &reqwest::Url,
) -> Result<JwkSet, ClientError> {
    let mut keys = JwkSet { keys: Vec::new() };
    let mut fetched = Vec::new();
    for signature in &card.signatures {
        let Some(jku) = card_signature::protected_header(signature)
            .ok()
            .and_then(|h| h.jku)
            .filter(|jku| card_signature::same_origin(jku, card_url) && !fetched.contains(jku))
        else {
            continue;
        };
        let url = reqwest::Url::parse(&jku)
            .map_err(|e| ClientError::Config(format!("jku {jku:?}: {e}")))?;
        let body = get_json_body(http, url, "application/jwk-set+json, application/json").await?;
        let set: JwkSet = serde_json::from_slice(&body)
            .map_err(|e| ClientError::Decode(format!("JWKS at {jku}: {e}")))?;
        keys.keys.extend(set.keys);
        fetched.push(jku);
    }
    Ok(keys)
}

/// GETs `url` with the client's headers and timeout; the body of a 2xx
/// answer, or the HTTP error.
async fn get_json_body(
    http: &Http,
    url: reqwest::Url,
    accept: &'static str,
) -> Result<Bytes, ClientError> {
    let req = http
        .client
        .get(url.clone())
        .headers(http.request_headers())
        .header(ACCEPT, HeaderValue::from_static(accept))
        .header(VERSION_HEADER, HeaderValue::from_static("1.0"));
    let (status, body) = http.send_bounded(req, MAX_DOCUMENT_BYTES).await?;
    let Some(body) = body else {
        return Err(ClientError::Decode(format!(
            "{url}: the document is larger than {MAX_DOCUMENT_BYTES} bytes, the most this client reads"
        )));
    };
    if !status.is_success() {
        return Err(transport::http_error(status, &body));
    }
    Ok(body)
}

/// Largest agent card or JWKS the client reads (1 MiB): far above any real
/// one, and a bound on what a hostile server can make it buffer.
pub const MAX_DOCUMENT_BYTES: usize = 1 << 20;

async fn fetch_card_with(http: &Http, url: reqwest::Url) -> Result<AgentCard, ClientError> {
    let body = get_json_body(http, url.clone(), "application/json").await?;
    serde_json::from_slice(&body)
        .map_err(|e| ClientError::Decode(format!("agent card at {url}: {e}")))
}

/// A client for one A2A agent. Cheap to clone; clones share connections.
///
/// See the [crate docs](crate) for an end-to-end example.
#[derive(Debug, Clone)]
pub struct A2AClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    card: Option<AgentCard>,
    interface: AgentInterface,
    transport: Box<dyn Transport>,
    http: Http,
    reconnect: ReconnectPolicy,
}

impl A2AClient {
    fn assemble(
        card: Option<AgentCard>,
        interface: AgentInterface,
        transport: Box<dyn Transport>,
        http: Http,
    ) -> Self {
        A2AClient {
            inner: Arc::new(Inner {
                card,
                interface,
                transport,
                http,
                reconnect: ReconnectPolicy::default(),
            }),
        }
    }

    /// Sets the reconnect policy of a client that was just assembled (and
    /// so is not shared yet).
    fn with_reconnect(mut self, policy: ReconnectPolicy) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.reconnect = policy;
        }
        self
    }

    /// A builder for clients with options (timeouts, headers, extensions,
    /// binding preference).
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// Connects with default options: fetches the agent card at `url` (an
    /// agent base URL such as `https://agent.example.com`, or the card URL
    /// itself) and picks the first interface this crate supports.
    pub async fn connect(url: &str) -> Result<Self, ClientError> {
        ClientBuilder::new().connect(url).await
    }

    /// A client that talks JSON-RPC (A2A 1.0) to `jsonrpc_url` directly,
    /// without fetching a card.
    pub fn from_endpoint(jsonrpc_url: &str) -> Result<Self, ClientError> {
        ClientBuilder::new().from_endpoint(jsonrpc_url)
    }

    /// The agent card the client was built from (`None` for
    /// [`A2AClient::from_endpoint`]).
    pub fn card(&self) -> Option<&AgentCard> {
        self.inner.card.as_ref()
    }

    /// The interface in use: URL, binding, version and tenant.
    pub fn interface(&self) -> &AgentInterface {
        &self.inner.interface
    }

    /// The URL requests are sent to.
    pub fn endpoint(&self) -> &str {
        self.inner.transport.endpoint()
    }

    /// A client for the same agent that also requests the extensions
    /// `uris` (sent in `A2A-Extensions`, after the builder's own). For a
    /// caller that activates an extension on some calls only: keep this
    /// client next to the plain one and use it for those calls.
    ///
    /// The new client shares the connection pool, OAuth tokens and options
    /// of this one, but has its own transport: a gRPC one opens its own
    /// connection on first use, so make it once, not per call.
    pub fn with_extensions(
        &self,
        uris: impl IntoIterator<Item = impl Into<String>>,
    ) -> Result<A2AClient, ClientError> {
        let inner = &self.inner;
        let mut http = inner.http.clone();
        let mut all: Vec<String> = http
            .headers
            .get(EXTENSIONS_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(',').map(|u| u.trim().to_string()).collect())
            .unwrap_or_default();
        for uri in uris.into_iter().map(Into::into) {
            if !all.contains(&uri) {
                all.push(uri);
            }
        }
        let value = HeaderValue::from_str(&all.join(","))
            .map_err(|e| ClientError::Config(format!("invalid extension URI list: {e}")))?;
        http.headers.insert(EXTENSIONS_HEADER, value);
        let factory = transport::factory_for(&inner.interface).ok_or_else(|| {
            ClientError::Config(format!(
                "no transport for {}",
                inner.interface.protocol_binding
            ))
        })?;
        let transport = crate::oauth::authorize((factory.build)(&inner.interface, &http)?, &http);
        Ok(
            A2AClient::assemble(inner.card.clone(), inner.interface.clone(), transport, http)
                .with_reconnect(inner.reconnect),
        )
    }

    /// Fetches an agent card (with this client's headers and timeout).
    /// `url` is an agent base URL or a card URL.
    pub async fn fetch_card(&self, url: &str) -> Result<AgentCard, ClientError> {
        fetch_card_with(&self.inner.http, card_url(url)?).await
    }

    unary_methods! {
        /// `SendMessage`: sends a message and returns the task that handles it
        /// (finished or interrupted, unless `returnImmediately` was set) or the
        /// agent's direct reply.
        send_message(impl IntoRequest<SendMessageRequest>) -> SendMessageResponse = SendMessage;
    }

    /// Sends one user text message (`SendMessage` with a fresh message id).
    pub async fn send_text(
        &self,
        text: impl Into<String>,
    ) -> Result<SendMessageResponse, ClientError> {
        self.send_message(Message::user_text(text)).await
    }

    /// `SendStreamingMessage`: sends a message and streams what happens: a
    /// `Task` first, then status and artifact updates, until the server
    /// closes the stream (or a single `Message`).
    pub async fn send_streaming_message(
        &self,
        request: impl IntoRequest<SendMessageRequest>,
    ) -> Result<EventStream, ClientError> {
        let req = A2aRequest::SendStreamingMessage(request.into_request());
        self.resumable_stream(req, None).await
    }

    unary_methods! {
        /// `GetTask`: the current state of a task.
        get_task(impl IntoRequest<GetTaskRequest>) -> Task = GetTask;
        /// `ListTasks`: one page of tasks, filtered by context, state, time.
        list_tasks(ListTasksRequest) -> ListTasksResponse = ListTasks;
        /// `CancelTask`: asks the agent to cancel a task; returns the task.
        cancel_task(impl IntoRequest<CancelTaskRequest>) -> Task = CancelTask;
    }

    /// `SubscribeToTask`: streams a running task's events; the first item is
    /// the current `Task`.
    pub async fn subscribe_to_task(
        &self,
        request: impl IntoRequest<SubscribeToTaskRequest>,
    ) -> Result<EventStream, ClientError> {
        let req = request.into_request();
        let id = req.id.clone();
        self.resumable_stream(A2aRequest::SubscribeToTask(req), Some(id))
            .await
    }

    unary_methods! {
        /// `CreateTaskPushNotificationConfig`: registers a webhook for a task.
        create_push_config(TaskPushNotificationConfig) -> TaskPushNotificationConfig = CreateTaskPushNotificationConfig;
        /// `GetTaskPushNotificationConfig`: one webhook of a task, by
        /// `(task_id, config_id)` or a [`TaskPushNotificationConfigRef`].
        get_push_config(impl IntoRequest<TaskPushNotificationConfigRef>) -> TaskPushNotificationConfig = GetTaskPushNotificationConfig;
        /// `ListTaskPushNotificationConfigs`: the webhooks of a task.
        list_push_configs(impl IntoRequest<ListTaskPushNotificationConfigsRequest>) -> ListTaskPushNotificationConfigsResponse = ListTaskPushNotificationConfigs;
        /// `DeleteTaskPushNotificationConfig`: removes one webhook of a task.
        delete_push_config(impl IntoRequest<TaskPushNotificationConfigRef>) -> () = DeleteTaskPushNotificationConfig;
    }

    /// `GetExtendedAgentCard`: the card as the agent shows it to this
    /// (authenticated) caller. The card held by the client is not replaced.
    ///
    /// A2A 0.3 gRPC has no "not configured" answer: its `GetAgentCard` is
    /// also how a 0.3 client reads the public card. So over that combination,
    /// an agent whose card does not declare an extended card gets the
    /// spec's `UnsupportedOperation` from the client, as on the other
    /// bindings, instead of its public card.
    pub async fn get_extended_agent_card(&self) -> Result<AgentCard, ClientError> {
        let i = &self.inner.interface;
        if i.protocol_binding == BINDING_GRPC
            && i.protocol_version.starts_with("0.")
            && self
                .inner
                .card
                .as_ref()
                .is_some_and(|c| c.capabilities.extended_agent_card != Some(true))
        {
            return Err(ClientError::Protocol(A2AError::UnsupportedOperation(
                "the agent card declares no extended card".into(),
            )));
        }
        let mut req = GetExtendedAgentCardRequest::default();
        self.fill_tenant(&mut req.tenant);
        answer!(
            self.call(A2aRequest::GetExtendedAgentCard(req)).await?,
            GetExtendedAgentCard
        )
    }

    fn fill_tenant(&self, tenant: &mut Option<String>) {
        if tenant.is_none() {
            tenant.clone_from(&self.inner.interface.tenant);
        }
    }

    /// Runs any unary operation: the request (its tenant filled in from
    /// the interface, like every method here) goes over the client's
    /// binding, typed both ways. The named methods above are this plus the
    /// answer's type; this one reaches operations they do not name.
    pub async fn call(&self, mut request: A2aRequest) -> Result<A2aResponse, ClientError> {
        self.fill_request_tenant(&mut request);
        // With tracing on, the call is a span whose context the request
        // carries as `traceparent` (see `switchboard_telemetry::trace`).
        let span = switchboard_telemetry::trace::client_span(request.operation().name());
        tracing::Instrument::instrument(self.inner.transport.call(request), span).await
    }

    /// Runs any streaming operation (see [`A2AClient::call`]). The stream is
    /// not resumed after a dropped connection; the named methods' are.
    pub async fn stream(&self, mut request: A2aRequest) -> Result<EventStream, ClientError> {
        self.fill_request_tenant(&mut request);
        let span = switchboard_telemetry::trace::client_span(request.operation().name());
        let stream =
            tracing::Instrument::instrument(self.inner.transport.stream(request, None), span)
                .await?;
        Ok(stop_after_error(stream))
    }

    /// The binding requests go over.
    #[cfg(feature = "agui")]
    pub(crate) fn transport(&self) -> &dyn crate::transport::Transport {
        self.inner.transport.as_ref()
    }

    pub(crate) fn fill_request_tenant(&self, request: &mut A2aRequest) {
        if request.tenant().is_empty()
            && let Some(t) = &self.inner.interface.tenant
        {
            request.set_tenant(t);
        }
    }
}

impl A2AClient {
    /// Opens a streaming operation (its tenant filled in) that resumes
    /// itself after a dropped connection. `task_id` is the task to
    /// resubscribe to when the request names it; a new message's task is
    /// learnt from the stream.
    async fn resumable_stream(
        &self,
        mut request: A2aRequest,
        task_id: Option<String>,
    ) -> Result<EventStream, ClientError> {
        self.fill_request_tenant(&mut request);
        let tenant = Some(request.tenant())
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        let stream = self.stream(request).await?;
        Ok(self.resumable(stream, task_id, tenant))
    }

    /// Makes `stream` resume after a dropped connection (see [`crate::resume`]).
    fn resumable(
        &self,
        stream: EventStream,
        task_id: Option<String>,
        tenant: Option<String>,
    ) -> EventStream {
        let policy = self.inner.reconnect;
        if !policy.is_enabled() {
            return stream;
        }
        let client = self.clone();
        let resubscribe: Resubscribe = Arc::new(move |id, after| {
            let client = client.clone();
            let tenant = tenant.clone();
            Box::pin(async move { client.resubscribe(id, tenant, after).await })
        });
        resume::resuming(stream, task_id, policy, resubscribe)
    }

    /// `SubscribeToTask` with `Last-Event-ID: after`.
    async fn resubscribe(
        &self,
        id: String,
        tenant: Option<String>,
        after: u64,
    ) -> Result<EventStream, ClientError> {
        let req = A2aRequest::SubscribeToTask(SubscribeToTaskRequest { id, tenant });
        let span = switchboard_telemetry::trace::client_span(req.operation().name());
        let stream =
            tracing::Instrument::instrument(self.inner.transport.stream(req, Some(after)), span)
                .await?;
        Ok(stop_after_error(stream))
    }
}

/// Ends a stream right after its first error.
fn stop_after_error<S>(stream: S) -> EventStream
where
    S: futures::Stream<Item = Result<StreamEvent, ClientError>> + Send + 'static,
{
    stream
        .scan(false, |failed, item| {
            let out = if *failed {
                None
            } else {
                *failed = item.is_err();
                Some(item)
            };
            futures::future::ready(out)
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn iface(binding: &str, version: &str, url: &str) -> AgentInterface {
        AgentInterface {
            url: url.into(),
            protocol_binding: binding.into(),
            tenant: None,
            protocol_version: version.into(),
        }
    }

    /// A card offering `interfaces`, in that order.
    fn card_with(interfaces: Vec<AgentInterface>) -> AgentCard {
        let mut card = AgentCard::new("a", "b", "1");
        card.supported_interfaces = interfaces;
        card
    }

    #[test]
    fn card_url_from_base_and_card_urls() {
        let u = |s: &str| card_url(s).unwrap().to_string();
        assert_eq!(u("http://h:1"), "http://h:1/.well-known/agent-card.json");
        assert_eq!(u("http://h:1/"), "http://h:1/.well-known/agent-card.json");
        assert_eq!(
            u("http://h/agents/a/"),
            "http://h/agents/a/.well-known/agent-card.json"
        );
        assert_eq!(u("http://h/card.json"), "http://h/card.json");
        assert_eq!(
            u("http://h/.well-known/agent-card.json"),
            "http://h/.well-known/agent-card.json"
        );
        assert!(matches!(card_url("nope"), Err(ClientError::Config(_))));
        assert!(matches!(card_url("ftp://h/"), Err(ClientError::Config(_))));
    }

    #[test]
    fn selection_follows_card_order_and_versions() {
        let card = card_with(vec![
            iface("urn:custom", "1.0", "h:1"),
            iface("JSONRPC", "0.3", "http://h/v03"),
            iface("jsonrpc", "1.0", "http://h/v1"),
            iface("JSONRPC", "1.1", "http://h/v11"),
            iface("GRPC", "0.3", "h:3"),
            iface("grpc", "1.0", "h:2"),
        ]);
        // 1.0 is preferred over an earlier 0.3 entry unless 0.3 is asked for.
        let got = select_versioned(&card, &[], &[]).unwrap();
        assert_eq!(got.url, "http://h/v1");
        let got = select_versioned(&card, &[], &["HTTP+JSON".into(), "JSONRPC".into()]).unwrap();
        assert_eq!(got.url, "http://h/v1");
        // gRPC: 1.x by default, the 0.3 service when 0.3 is asked for.
        #[cfg(feature = "grpc")]
        {
            let got = select_versioned(&card, &[], &["GRPC".into()]).unwrap();
            assert_eq!(got.url, "h:2");
            let got = select_versioned(&card, &["0.3".into()], &["GRPC".into()]).unwrap();
            assert_eq!(got.url, "h:3");
        }
        let got = select_versioned(&card, &["0.3".into()], &[]).unwrap();
        assert_eq!(got.url, "http://h/v03");
        let got = select_versioned(&card, &["0.3".into(), "1.0".into()], &[]).unwrap();
        assert_eq!(got.url, "http://h/v03");
        assert!(select_versioned(&card, &["0.2".into()], &[]).is_none());
        // Card order still decides among bindings of one version.
        let got = select_interface(&card, &[]).unwrap();
        assert_eq!(got.url, "http://h/v03");
    }

    /// Without the `grpc` feature, gRPC interfaces are not usable: a card's
    /// other bindings are picked before them, and a gRPC-only card has no
    /// interface for this client.
    #[cfg(not(feature = "grpc"))]
    #[test]
    fn without_grpc_grpc_interfaces_are_passed_over() {
        let card = card_with(vec![
            iface("GRPC", "1.0", "h:2"),
            iface("JSONRPC", "1.0", "http://h/v1"),
        ]);
        let got = select_versioned(&card, &[], &["GRPC".into(), "JSONRPC".into()]).unwrap();
        assert_eq!(got.url, "http://h/v1");
        let only = card_with(vec![iface("GRPC", "1.0", "h:2")]);
        let err = ClientBuilder::new().from_card(only).unwrap_err();
        assert!(
            matches!(err, ClientError::NoSupportedInterface { .. }),
            "{err:?}"
        );
    }

    #[test]
    fn no_supported_interface_lists_offers() {
        let card = card_with(vec![
            iface("urn:custom", "1.0", "h:1"),
            iface("JSONRPC", "0.2", "http://h/"),
        ]);
        let err = ClientBuilder::new().from_card(card).unwrap_err();
        match &err {
            ClientError::NoSupportedInterface { offered } => {
                assert_eq!(
                    offered,
                    &["urn:custom 1.0 at h:1", "JSONRPC 0.2 at http://h/"]
                );
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(err.to_string().contains("urn:custom 1.0 at h:1"));
    }

    #[test]
    fn an_unversioned_interface_of_a_1_0_card_is_1_0() {
        // The shape of the official Python SDK's helloworld sample card.
        let card: AgentCard = serde_json::from_value(serde_json::json!({
            "name": "Hello World Agent",
            "supportedInterfaces": [{"protocolBinding": "JSONRPC", "url": "http://127.0.0.1:9999"}],
            "capabilities": {"streaming": true},
            "skills": [],
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "version": "0.0.1",
            "description": "d"
        }))
        .unwrap();
        let client = ClientBuilder::new().from_card(card).unwrap();
        assert_eq!(client.interface().protocol_version, "1.0");
        assert_eq!(client.interface().url, "http://127.0.0.1:9999");
        // A binding this client lacks stays unusable; the refusal lists the
        // interface as the 1.0 it was taken for, and names fields left out.
        let card = card_with(vec![iface("urn:custom", "", "h:1")]);
        let err = ClientBuilder::new()
            .preferred_versions(["0.3"])
            .from_card(card)
            .unwrap_err();
        assert!(err.to_string().contains("urn:custom 1.0 at h:1"), "{err}");
        assert_eq!(
            describe(&iface("", "", "h:1")),
            "(no protocolBinding) (no protocolVersion) at h:1"
        );
    }

    #[test]
    fn tenant_is_copied_from_the_interface() {
        let mut i = iface("JSONRPC", "1.0", "http://h/");
        i.tenant = Some("t1".into());
        let card = card_with(vec![i]);
        let client = ClientBuilder::new().from_card(card).unwrap();
        let mut t = None;
        client.fill_tenant(&mut t);
        assert_eq!(t.as_deref(), Some("t1"));
        let mut own = Some("mine".to_string());
        client.fill_tenant(&mut own);
        assert_eq!(own.as_deref(), Some("mine"));
    }

    #[test]
    fn empty_tenant_is_no_tenant() {
        let mut i = iface("JSONRPC", "1.0", "http://h/");
        i.tenant = Some(String::new());
        let card = card_with(vec![i]);
        let client = ClientBuilder::new().from_card(card).unwrap();
        assert_eq!(client.interface().tenant, None);
    }

    #[test]
    fn relative_interface_url_is_resolved_against_the_card() {
        let card = card_with(vec![iface("JSONRPC", "1.0", "/rpc")]);
        let base = reqwest::Url::parse("http://h:9/.well-known/agent-card.json").unwrap();
        let http = ClientBuilder::new().http().unwrap();
        let client = ClientBuilder::new()
            .build_from_card(http, card, Some(&base))
            .unwrap();
        assert_eq!(client.endpoint(), "http://h:9/rpc");
    }

    #[test]
    fn with_extensions_adds_to_the_builders_extensions() {
        let header = |c: &A2AClient| {
            c.inner
                .http
                .headers
                .get(EXTENSIONS_HEADER)
                .map(|v| v.to_str().unwrap().to_string())
        };
        let plain = ClientBuilder::new().from_endpoint("http://h/").unwrap();
        assert_eq!(header(&plain), None);
        let base = ClientBuilder::new()
            .extension("urn:a")
            .from_endpoint("http://h/")
            .unwrap();
        let more = base.with_extensions(["urn:b", "urn:a"]).unwrap();
        assert_eq!(header(&more).as_deref(), Some("urn:a,urn:b"));
        assert_eq!(header(&base).as_deref(), Some("urn:a"));
        assert_eq!(more.endpoint(), base.endpoint());
        let err = plain.with_extensions(["bad\nuri"]).unwrap_err();
        assert!(matches!(err, ClientError::Config(_)), "{err:?}");
    }

    #[test]
    fn bad_headers_are_config_errors() {
        let err = ClientBuilder::new()
            .header("X-Bad", "a\nb")
            .from_endpoint("http://h/")
            .unwrap_err();
        assert!(matches!(err, ClientError::Config(_)), "{err:?}");
        let err = ClientBuilder::new()
            .header("bad name", "v")
            .from_endpoint("http://h/")
            .unwrap_err();
        assert!(matches!(err, ClientError::Config(_)), "{err:?}");
    }
}
