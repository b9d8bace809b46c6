//! # switchboard-server
//!
//! Puts a [`RequestHandler`] on the network. Bindings translate; they do not
//! decide: every protocol rule lives in `switchboard-core`, and this crate
//! only decodes the wire form, calls the handler and encodes the answer.
//!
//! Served today:
//! - the JSON-RPC 2.0 binding (POST, SSE for the streaming methods) at the
//!   configured path, with and without a trailing `/`;
//! - the HTTP+JSON (REST) binding at the server root, every route also under
//!   `/{tenant}/` (see `rest.rs`), errors in the Google API error format
//!   with statuses from one [`ErrorTable`];
//! - the gRPC binding (`grpc.rs`, service `lf.a2a.v1.A2AService`) on the
//!   same port: requests with content type `application/grpc…` go to the
//!   gRPC services (1.0 methods framed by hand in `grpc_frame.rs`, from
//!   the operation table), everything else to the HTTP routes;
//! - the A2A 0.3 dialects beside 1.0 on the same URLs: 0.3 JSON-RPC method
//!   names on the JSON-RPC endpoint (`jsonrpc_v03.rs`), 0.3 REST routes under
//!   `/v1` (`rest_v03.rs`), 0.3 gRPC (`a2a.v1.A2AService`, `grpc_v03.rs`)
//!   beside the 1.0 service; the version rule is in [`params`];
//! - the public agent card at `/.well-known/agent-card.json`, with
//!   `supportedInterfaces` filled in from the public URL (1.0 entries first,
//!   then the 0.3 ones; a binding served elsewhere, e.g. behind a proxy, gets
//!   its own URL with [`A2aServer::interface_url`]), `ETag` and
//!   `Cache-Control`. By default it is the *hybrid* card: the 1.0 card plus
//!   the 0.3 top-level fields, so that 0.3 clients can discover the 0.3
//!   interfaces; [`A2aServer::hybrid_card`]`(false)` serves a strict 1.0
//!   card instead;
//! - with the `push` feature (on by default), push notifications wired in
//!   one call: [`A2aServer::push`] (see [`push`]);
//! - with the `ops` feature (on by default), health and readiness probes,
//!   `/metrics`, request ids and the access log in one call:
//!   `A2aServer::ops` (see the `ops` module);
//! - more agents under path prefixes, each an `A2aServer` of its own with
//!   its card at `<path>/.well-known/agent-card.json`, listed at
//!   `GET /agents`: [`A2aServer::mount`] (see [`mount`]).
//!
//! ```no_run
//! # async fn run(handler: switchboard_core::RequestHandler) -> std::io::Result<()> {
//! use switchboard_server::A2aServer;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! A2aServer::new(handler).public_url("http://127.0.0.1:8080").serve(listener, std::future::pending()).await
//! # }
//! ```

// `Box::pin` with the future built in its box (see the macro's docs).
pub(crate) use switchboard_core::pin_in_place;

// AG-UI on the streaming endpoints; without the feature, a stub that never opts in.
#[cfg_attr(not(feature = "agui"), path = "agui_off.rs")]
mod agui;
pub mod budget;
mod conn;
pub mod errors;
pub mod gate;
#[cfg(feature = "grpc")]
pub mod grpc;
#[cfg(feature = "grpc")]
mod grpc_frame;
#[cfg(feature = "grpc")]
mod grpc_front;
#[cfg(feature = "grpc")]
mod grpc_v03;
mod jsonrpc;
mod jsonrpc_v03;
pub mod limits;
pub mod mount;
#[cfg(feature = "ops")]
pub mod ops;
pub mod params;
mod preamble;
#[cfg(feature = "push")]
pub mod push;
pub mod rate;
mod rest;
mod rest_v03;
mod serve_router;
pub mod settings;
mod shutdown;
pub mod sse;
pub mod tls;

pub use errors::ErrorTable;
pub use gate::{Anyone, Authenticator, Gate, Identity};
pub use limits::ConnectionLimits;
pub use mount::MountError;
/// The one way a route reads a request body under a limit (routes added
/// from outside, such as the MCP front's, read theirs as the bindings do).
pub use preamble::read_body;
pub use rate::RequestRate;
pub use serve_router::{Front, SHUTDOWN_GRACE, serve_router};
pub use shutdown::shutdown_signal;
pub use tls::ServerTls;

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use switchboard_core::RequestHandler;
use switchboard_protocol::card::{
    BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC, PROTOCOL_VERSION,
};
use switchboard_protocol::{AGENT_CARD_PATH, AgentCard, AgentInterface};

/// The default cap on request bodies: 10 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// What the HTTP handlers share. axum clones the state into every request
/// (the `State` extractor), so it is one `Arc`: a clone is one count, not
/// one per field.
#[derive(Clone)]
pub(crate) struct AppState(Arc<AppStateInner>);

impl std::ops::Deref for AppState {
    type Target = AppStateInner;
    fn deref(&self) -> &AppStateInner {
        &self.0
    }
}

pub(crate) struct AppStateInner {
    pub(crate) handler: RequestHandler,
    pub(crate) gate: Gate,
    pub(crate) max_body_bytes: usize,
    pub(crate) error_table: ErrorTable,
    card_json: Bytes,
    card_etag: HeaderValue,
    /// When this card was built (whole seconds, as HTTP dates are).
    card_modified: std::time::SystemTime,
}

/// The whole server as one type-erased tower service: what a layer given
/// to [`A2aServer::layer`] wraps. Cloneable and `Sync`, its future a
/// [`BoxFuture`](futures::future::BoxFuture), like tower's
/// `BoxCloneSyncService`, but each layer costs a request at most one box:
/// the layer's future, its answer turned into a [`Response`] inside it, or
/// none when the layer's future already is this type's own future (a layer
/// that boxes its own future, as `switchboard`'s `Observe` does). (tower's
/// type boxes a future that may be boxed already, and turning the answer
/// into a response needed a `map_response` around the layer.)
pub struct FrontService(Box<dyn ErasedService>);

type FrontFuture = futures::future::BoxFuture<'static, Result<Response, Infallible>>;

/// What [`FrontService`] erases: a cloneable service with boxed futures.
trait ErasedService: Send + Sync {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>>;
    fn call(&mut self, req: axum::extract::Request) -> FrontFuture;
    fn clone_box(&self) -> Box<dyn ErasedService>;
}

impl Clone for FrontService {
    fn clone(&self) -> Self {
        FrontService(self.0.clone_box())
    }
}

impl fmt::Debug for FrontService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FrontService")
    }
}

impl tower::Service<axum::extract::Request> for FrontService {
    type Response = Response;
    type Error = Infallible;
    type Future = FrontFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: axum::extract::Request) -> FrontFuture {
        self.0.call(req)
    }
}

/// A service made by a layer given to [`A2aServer::layer`], erased.
#[derive(Clone)]
struct Layered<S>(S);

impl<S> ErasedService for Layered<S>
where
    S: tower::Service<axum::extract::Request, Error = Infallible> + Clone + Send + Sync + 'static,
    S::Response: IntoResponse + 'static,
    S::Future: Send + 'static,
{
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: axum::extract::Request) -> FrontFuture {
        match already_front(self.0.call(req)) {
            Ok(front) => front,
            Err(answer) => Box::pin(async move {
                let Ok(answer) = answer.await;
                Ok(answer.into_response())
            }),
        }
    }

    fn clone_box(&self) -> Box<dyn ErasedService> {
        Box::new(self.clone())
    }
}

/// `future` as it is when its type is [`FrontFuture`] (so its answer is a
/// [`Response`] already), else `Err(future)`: boxing it again would cost the
/// request an allocation, and its poll one more indirect call.
fn already_front<F: 'static>(mut future: F) -> Result<FrontFuture, F> {
    match (&mut future as &mut dyn std::any::Any).downcast_mut::<FrontFuture>() {
        // What is left in its place is dropped unpolled; a zero-sized
        // future, its box allocates nothing.
        Some(front) => Ok(std::mem::replace(front, Box::pin(std::future::pending()))),
        None => Err(future),
    }
}

/// A layer added with [`A2aServer::layer`], applied when the server is built.
type LayerFn = Arc<dyn Fn(FrontService) -> FrontService + Send + Sync>;

/// Builds routes from a server's gate ([`A2aServer::gated_routes`]).
type GatedRoutes = Arc<dyn Fn(Gate) -> Router + Send + Sync>;

/// An A2A server: a handler plus how it is exposed.
///
/// Built like an axum `Router`: besides the A2A bindings it serves routes
/// added with [`A2aServer::merge`] / [`A2aServer::route`] on the same port,
/// wraps everything (every binding, gRPC included, and the added routes) in
/// the tower layers given to [`A2aServer::layer`], and authenticates every
/// A2A call with the [`Authenticator`] given to [`A2aServer::authenticator`].
#[derive(Clone)]
pub struct A2aServer {
    handler: RequestHandler,
    public_url: String,
    rpc_path: String,
    max_body_bytes: usize,
    error_table: ErrorTable,
    /// The push signing keys served at `/.well-known/jwks.json`.
    jwks: Option<std::sync::Arc<dyn switchboard_core::push::JwksSource>>,
    hybrid_card: bool,
    authenticator: Option<Arc<dyn Authenticator>>,
    /// Request rate per principal (see [`rate`]), shared by every gate.
    request_rate: Option<Arc<rate::RateLimiter>>,
    /// Routes added from outside, served beside the bindings.
    extra: Router,
    /// Routes made from the gate when the server is assembled (see
    /// [`A2aServer::gated_routes`]).
    gated: Vec<GatedRoutes>,
    /// Layers added from outside, innermost first.
    layers: Vec<LayerFn>,
    /// Per-binding URLs that replace the ones derived from `public_url`.
    interface_urls: Vec<(String, String)>,
    /// What clients may hold of connections (see [`limits`]).
    connection_limits: ConnectionLimits,
    /// TLS on the listener (see [`tls`]); `None`: plaintext.
    tls: Option<ServerTls>,
    /// Push notifications to wire up at `serve` (see [`A2aServer::push`]).
    #[cfg(feature = "push")]
    push: Option<push::Wired>,
    /// Sign the served card with the push keys (see [`A2aServer::sign_card`]).
    #[cfg(feature = "push")]
    sign_card: bool,
    /// Agents served under path prefixes (see [`A2aServer::mount`]).
    mounts: Vec<(String, A2aServer)>,
    /// The mounted agents requests are routed to now (see [`mount`]).
    live: mount::LiveMounts,
    /// Whether a [`mount::MountReloader`] may change the mounted set.
    reloadable: bool,
    /// Whether the root's card describes the server as a directory of the
    /// mounted agents (see [`A2aServer::directory_card`]).
    directory_card: bool,
    /// Whether the card lists a gRPC interface: a mounted agent's does not
    /// (gRPC calls carry no path prefix; see [`mount`]).
    grpc_interface: bool,
}

impl fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("A2aServer")
            .field("public_url", &self.public_url)
            .field("rpc_path", &self.rpc_path)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("error_table", &self.error_table)
            .field("hybrid_card", &self.hybrid_card)
            .field("interface_urls", &self.interface_urls)
            .field("authenticator", &self.authenticator)
            .field("layers", &self.layers.len())
            .field("connection_limits", &self.connection_limits)
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

impl A2aServer {
    /// A server for `handler`, JSON-RPC at `/`, public URL `http://127.0.0.1:8080`.
    pub fn new(handler: RequestHandler) -> Self {
        // reqwest clients built without a TLS config of their own (JWKS
        // fetches, tests, the program around us) ask rustls for the
        // process's default provider and panic without one: make it ring,
        // the one provider of the build, unless one is set already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        A2aServer {
            handler,
            public_url: "http://127.0.0.1:8080".into(),
            rpc_path: "/".into(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            error_table: ErrorTable::default(),
            jwks: None,
            hybrid_card: true,
            authenticator: None,
            request_rate: None,
            extra: Router::new(),
            gated: Vec::new(),
            layers: Vec::new(),
            interface_urls: Vec::new(),
            connection_limits: ConnectionLimits::default(),
            tls: None,
            #[cfg(feature = "push")]
            push: None,
            #[cfg(feature = "push")]
            sign_card: false,
            mounts: Vec::new(),
            live: mount::LiveMounts::default(),
            reloadable: false,
            directory_card: false,
            grpc_interface: true,
        }
    }

    /// Serves `agent` — another server's handler, card, limits and routes —
    /// under `path` (e.g. `/support`) beside this one: its card at
    /// `<path>/.well-known/agent-card.json` with interfaces under
    /// `<path>`, its JSON-RPC endpoint at `<path>`, its REST routes below
    /// it; `GET /agents` then lists every agent. Unless `agent` has its
    /// own, this server's authenticator and request rate guard it; this
    /// server's layers wrap it, and [`serve`](Self::serve) recovers, drains
    /// and runs push for it too. gRPC reaches this (the root) agent only.
    /// See [`mount`].
    ///
    /// ```
    /// # fn f(root: switchboard_core::RequestHandler, support: switchboard_core::RequestHandler) -> Result<(), switchboard_server::MountError> {
    /// use switchboard_server::A2aServer;
    /// let server = A2aServer::new(root)
    ///     .public_url("https://agents.example.com")
    ///     .mount("/support", A2aServer::new(support))?;
    /// # let _ = server; Ok(()) }
    /// ```
    pub fn mount(mut self, path: &str, agent: A2aServer) -> Result<Self, MountError> {
        let path = mount::normalize(path)?;
        let first = mount::first_segment(&path);
        if self
            .mounts
            .iter()
            .any(|(p, _)| mount::first_segment(p) == first)
        {
            return Err(MountError::Taken(path));
        }
        self.mounts.push((path, agent));
        Ok(self)
    }

    /// A handle that replaces the mounted agents while the server runs
    /// ([`mount::MountReloader::replace`]; e.g. on SIGHUP). Call it once
    /// the server is configured (authenticator, rate, push): agents mounted
    /// through it get this server's settings as they are now. Without
    /// mounts at start, `GET /agents` is served from then on too.
    pub fn mount_reloader(&mut self) -> mount::MountReloader {
        self.reloadable = true;
        let mut root = self.clone();
        root.mounts.clear();
        mount::MountReloader {
            root,
            live: self.live.clone(),
        }
    }

    /// The mounted agent at `path` as this server serves it: its URLs under
    /// this server's public URL, no gRPC interface, this server's gate
    /// where it has none of its own.
    pub(crate) fn mounted(&self, path: &str, agent: &A2aServer) -> A2aServer {
        let mut agent = agent.clone();
        agent.public_url = format!("{}{path}", self.public_url);
        agent.grpc_interface = false;
        if agent.authenticator.is_none() {
            agent.authenticator = self.authenticator.clone();
        }
        if agent.request_rate.is_none() {
            agent.request_rate = self.request_rate.clone();
        }
        // Push as this server's: the same store's outbox, drained by this
        // server's worker, signed with its keys (published under the
        // agent's path too).
        #[cfg(feature = "push")]
        if let Some(wired) = &self.push
            && agent.push.is_none()
        {
            match wired.share_with(&agent.handler) {
                Ok(()) => agent.jwks = Some(wired.keys.clone()),
                Err(e) => tracing::warn!(path, error = %e, "push stays off for the mounted agent"),
            }
        }
        agent
    }

    /// `GET /agents`: this agent at `/`, then the mounted ones.
    fn directory(public_url: &str, card: &AgentCard, mounted: &[mount::Live]) -> Bytes {
        let row = |path: &str, base: &str, card: &AgentCard| mount::Listed {
            name: card.name.clone(),
            description: card.description.clone(),
            path: path.to_string(),
            url: format!("{base}/"),
            card: format!("{base}{AGENT_CARD_PATH}"),
        };
        let mut rows = vec![row("/", public_url, card)];
        rows.extend(
            mounted
                .iter()
                .map(|m| row(&m.path, &m.server.public_url, m.server.handler.card())),
        );
        mount::directory(&rows)
    }

    /// Authenticates every A2A call (JSON-RPC, REST and gRPC, both
    /// versions) with `auth` before anything else about it is read; see
    /// [`gate`]. The served card advertises its schemes
    /// ([`Authenticator::describe`]). Without one, every caller is the
    /// anonymous principal, and an extended card
    /// ([`RequestHandlerBuilder::extended_card`](switchboard_core::RequestHandlerBuilder::extended_card))
    /// can never be fetched: serving one then logs a warning.
    pub fn authenticator(mut self, auth: impl Authenticator) -> Self {
        self.authenticator = Some(Arc::new(auth));
        self
    }

    /// Limits each principal's request rate (see [`rate`]): `None` (the
    /// default of a library server) does not limit; `serve` limits by
    /// default.
    pub fn request_rate(mut self, rate: Option<RequestRate>) -> Self {
        self.request_rate = rate.map(|r| Arc::new(rate::RateLimiter::new(r)));
        self
    }

    /// The gate the bindings run (authentication, extensions): routes added
    /// with [`A2aServer::merge`] call [`Gate::admit`] to get the same
    /// [`switchboard_core::CallContext`] an A2A call gets.
    pub fn gate(&self) -> Gate {
        Gate::new(
            self.handler.clone(),
            self.authenticator.clone(),
            self.request_rate.clone(),
        )
    }

    /// Serves `router`'s routes on the same port as the bindings (health
    /// checks, metrics, AG-UI, a console). They are matched before the REST
    /// binding's catch-all; a path the bindings own (the JSON-RPC path, the
    /// card) panics here like overlapping routes in axum, and so does a
    /// router with a fallback. Added routes do not pass the gate by
    /// themselves: call [`A2aServer::gate`]'s [`Gate::admit`] where a route
    /// needs the caller.
    pub fn merge(mut self, router: Router) -> Self {
        self.extra = self.extra.merge(router);
        self
    }

    /// Serves the routes `make` builds from this server's gate, beside the
    /// bindings (as [`A2aServer::merge`] does). `make` is called when the
    /// server is assembled ([`serve`](Self::serve), [`router`](Self::router)),
    /// with the gate as it is then: whatever authenticator and request rate
    /// are set, before or after this call, guard these routes too. An
    /// endpoint that must let in exactly whom the A2A bindings let in (the
    /// AG-UI endpoint, a console) is added this way.
    pub fn gated_routes(mut self, make: impl Fn(Gate) -> Router + Send + Sync + 'static) -> Self {
        self.gated.push(Arc::new(make));
        self
    }

    /// Adds one route (see [`A2aServer::merge`]).
    pub fn route(mut self, path: &str, method_router: MethodRouter) -> Self {
        self.extra = self.extra.route(path, method_router);
        self
    }

    /// Wraps the whole server — every binding, gRPC included, the card and
    /// the added routes — in a tower layer (request ids, tracing, limits,
    /// metrics). Layers added later wrap the earlier ones. Like axum's
    /// `Router::layer`, the wrapped service must not fail (`Infallible`):
    /// turn errors into responses inside the layer.
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<FrontService> + Send + Sync + 'static,
        L::Service: tower::Service<axum::extract::Request, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower::Service<axum::extract::Request>>::Response: IntoResponse + 'static,
        <L::Service as tower::Service<axum::extract::Request>>::Future: Send + 'static,
    {
        self.layers.push(Arc::new(move |inner: FrontService| {
            FrontService(Box::new(Layered(layer.layer(inner))))
        }));
        self
    }

    /// Whether the card carries the A2A 0.3 top-level fields beside the 1.0
    /// ones (default `true`).
    ///
    /// The *hybrid* card adds `url`, `preferredTransport`,
    /// `protocolVersion` and `additionalInterfaces`, derived from the card's
    /// 0.3 interfaces (and only when it has some). 0.3 clients, such as the
    /// official `a2a-sdk` 0.3.x, refuse a card without `url`, so without
    /// these fields they cannot discover the 0.3 interfaces this server
    /// serves; 1.0 clients ignore them. Pass `false` for a *strict* 1.0
    /// card, when a strict 1.0 validator (which refuses unknown fields)
    /// must accept the card and no 0.3 client needs to read it.
    pub fn hybrid_card(mut self, on: bool) -> Self {
        self.hybrid_card = on;
        self
    }

    /// Serves, at the root's `/.well-known/agent-card.json`, a card that
    /// describes this server as a directory of its mounted agents: the
    /// root's card with one skill per mounted agent, following reloads
    /// (see [`mount`]). For a server whose root agent only points callers
    /// to the mounted ones. Off by default; without mounted agents (or a
    /// [`mount_reloader`](Self::mount_reloader)) it changes nothing.
    pub fn directory_card(mut self, on: bool) -> Self {
        self.directory_card = on;
        self
    }

    /// Advertises `url` for `binding` (`"JSONRPC"`, `"HTTP+JSON"` or
    /// `"GRPC"`, the `BINDING_*` constants) in the card, in place of the URL
    /// derived from [`public_url`](Self::public_url): for an agent behind a
    /// proxy that routes a binding elsewhere, or serving gRPC on another
    /// host or port. The 0.3 interface of that binding (and so the hybrid
    /// card's `url`/`additionalInterfaces`) gets the same URL. gRPC URLs are
    /// `host:port`. Has no effect when the handler's card lists its own
    /// interfaces. It only changes what the card says: this server still
    /// serves every binding on the port it is given.
    ///
    /// ```
    /// # fn f(handler: switchboard_core::RequestHandler) {
    /// use switchboard_protocol::card::BINDING_GRPC;
    /// let server = switchboard_server::A2aServer::new(handler)
    ///     .public_url("https://agent.example.com")
    ///     .interface_url(BINDING_GRPC, "grpc.agent.example.com:443");
    /// let card = server.card();
    /// assert!(card.supported_interfaces.iter().any(|i| i.protocol_binding == BINDING_GRPC
    ///     && i.url == "grpc.agent.example.com:443"));
    /// # }
    /// ```
    pub fn interface_url(mut self, binding: impl Into<String>, url: impl Into<String>) -> Self {
        let binding = binding.into();
        self.interface_urls.retain(|(b, _)| *b != binding);
        self.interface_urls.push((binding, url.into()));
        self
    }

    /// The URL the card gives `binding`: its override, else `derived`.
    fn url_for(&self, binding: &str, derived: String) -> String {
        self.interface_urls
            .iter()
            .find(|(b, _)| b == binding)
            .map_or(derived, |(_, url)| url.clone())
    }

    /// Turns on push notifications, wired in one call: the handler accepts
    /// push configs (kept in its task store), checked by the SSRF guard
    /// with `options`' allowed hosts; the signing keys are published at
    /// `/.well-known/jwks.json`; and [`serve`](Self::serve) runs the
    /// delivery worker, with the same allowed hosts, until it stops. See
    /// the [`push` module](crate::push).
    ///
    /// Fails when the task store keeps no push configs (every store of this
    /// workspace does) or the signing keys cannot be loaded.
    #[cfg(feature = "push")]
    pub fn push(mut self, options: push::PushOptions) -> Result<Self, push::PushError> {
        let wired = push::wire(&self.handler, options)?;
        self.jwks = Some(wired.keys.clone());
        self.push = Some(wired);
        Ok(self)
    }

    /// Signs the agent card (A2A card signatures: a JWS over the card's
    /// canonical JSON, [`AgentCard::signing_payload`]) with the key set that
    /// signs push notifications, so [`push`](Self::push) must be wired too.
    /// The protected header names the key (`kid`) and where to fetch it
    /// (`jku`: this server's `/.well-known/jwks.json`), so clients verify it
    /// the same way as notifications. The card is signed when the router is
    /// built; after retiring the key that signed it, restart the server.
    #[cfg(feature = "push")]
    pub fn sign_card(mut self, on: bool) -> Self {
        self.sign_card = on;
        self
    }

    /// Publishes the keys that sign push notifications at
    /// `/.well-known/jwks.json` (served when the handler has push enabled).
    /// The source is asked on every request, so key rotations show at once.
    pub fn jwks(mut self, source: std::sync::Arc<dyn switchboard_core::push::JwksSource>) -> Self {
        self.jwks = Some(source);
        self
    }

    /// The URL clients reach this server at (scheme, host, port), used in
    /// the card's interfaces.
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = url.into().trim_end_matches('/').to_string();
        self
    }

    /// Where the JSON-RPC endpoint lives (default `/`).
    pub fn rpc_path(mut self, path: impl Into<String>) -> Self {
        let p = path.into();
        let trimmed = p.trim_matches('/');
        self.rpc_path = if trimmed.is_empty() {
            "/".into()
        } else {
            format!("/{trimmed}")
        };
        self
    }

    /// The largest request body accepted (default [`DEFAULT_MAX_BODY_BYTES`]).
    pub fn max_body_bytes(mut self, n: usize) -> Self {
        self.max_body_bytes = n;
        self
    }

    /// Timeouts and caps on connections, enforced by [`serve`](Self::serve)
    /// (default: [`ConnectionLimits::default`], safe for the open internet;
    /// see [`limits`]).
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.connection_limits = limits;
        self
    }

    /// Which spec version's error → HTTP/gRPC status table the REST binding
    /// uses (default [`ErrorTable::V1_0_1`]).
    pub fn error_table(mut self, table: ErrorTable) -> Self {
        self.error_table = table;
        self
    }

    /// Serves TLS (see [`tls`]): every binding over one TLS listener, ALPN
    /// `h2` and `http/1.1`, the certificate reloaded when its files change.
    /// The card's URLs come from [`public_url`](Self::public_url), which
    /// should then be `https://…` (the derived gRPC interface is then
    /// `https://host:port`, telling clients to use TLS).
    pub fn tls(mut self, tls: ServerTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// The card as served: the handler's card with this server's interfaces
    /// (unless the card lists its own) and the capabilities it implements.
    pub fn card(&self) -> AgentCard {
        let mut card = self.handler.card().clone();
        if card.supported_interfaces.is_empty() {
            let url = if self.rpc_path == "/" {
                format!("{}/", self.public_url)
            } else {
                format!("{}{}", self.public_url, self.rpc_path)
            };
            card.supported_interfaces.push(AgentInterface {
                url: self.url_for(BINDING_JSONRPC, url),
                protocol_binding: BINDING_JSONRPC.into(),
                tenant: None,
                protocol_version: PROTOCOL_VERSION.into(),
            });
            card.supported_interfaces.push(AgentInterface {
                url: self.url_for(BINDING_HTTP_JSON, self.public_url.clone()),
                protocol_binding: BINDING_HTTP_JSON.into(),
                tenant: None,
                protocol_version: PROTOCOL_VERSION.into(),
            });
            // gRPC targets are `host:port`, on the same port as HTTP;
            // behind TLS `https://host:port`, since a bare target means
            // cleartext HTTP/2 to clients.
            #[cfg(feature = "grpc")]
            if self.grpc_interface {
                let target = match self.public_url.split_once("://") {
                    Some(("https", _)) => self.public_url.clone(),
                    Some((_, authority)) => authority.to_string(),
                    None => self.public_url.clone(),
                };
                card.supported_interfaces.push(AgentInterface {
                    url: self.url_for(BINDING_GRPC, target),
                    protocol_binding: BINDING_GRPC.into(),
                    tenant: None,
                    protocol_version: PROTOCOL_VERSION.into(),
                });
            }
        }
        if !card
            .supported_interfaces
            .iter()
            .any(|i| i.protocol_version.starts_with("0.3"))
        {
            card.supported_interfaces
                .extend(v03_interfaces(&card.supported_interfaces));
        }
        if let Some(auth) = &self.authenticator {
            auth.describe(&mut card);
        }
        card.capabilities.push_notifications = Some(self.handler.push_enabled());
        #[cfg(feature = "push")]
        if let Some(wired) = self.push.as_ref().filter(|_| self.sign_card) {
            let jku = format!("{}{}", self.public_url, switchboard_core::push::JWKS_PATH);
            match wired.keys.sign_card(&card, Some(&jku)) {
                Ok(signature) => card.signatures.push(signature),
                // Only a card nested beyond reason has no canonical form;
                // serving it unsigned is then the honest answer.
                Err(e) => tracing::error!(error = %e, "the agent card could not be signed"),
            }
        }
        card
    }

    /// The whole server as an axum router (to nest or serve yourself):
    /// card, JSON-RPC endpoint, REST routes, both gRPC services, the added
    /// routes, inside the added layers.
    pub fn router(&self) -> Router {
        Router::new().fallback_service(self.layered())
    }

    /// The front inside the added layers.
    fn layered(&self) -> FrontService {
        self.layers
            .iter()
            .fold(FrontService(Box::new(self.front())), |svc, layer| {
                layer(svc)
            })
    }

    /// The one-port front: the HTTP routes plus the gRPC services.
    fn front(&self) -> Dispatch {
        let card = self.card();
        if card.capabilities.extended_agent_card == Some(true) && self.authenticator.is_none() {
            // The engine gives the extended card to authenticated callers
            // only, and without an authenticator every caller is anonymous.
            tracing::warn!(
                agent = %card.name,
                "an extended agent card is configured but no authenticator: every caller is anonymous, so no one can fetch it (set A2aServer::authenticator)"
            );
        }
        // The extended card shows the same interfaces and schemes.
        self.handler.complete_extended_card(&card);
        let card_json = if self.hybrid_card {
            serde_json::to_vec(&switchboard_protocol::v03::card::hybrid_card(&card))
        } else {
            serde_json::to_vec(&card)
        };
        let card_json = Bytes::from(card_json.unwrap_or_default());
        let etag = format!("\"{:016x}\"", fnv1a(&card_json));
        let gate = self.gate();
        let state = AppState(Arc::new(AppStateInner {
            handler: self.handler.clone(),
            gate: gate.clone(),
            max_body_bytes: self.max_body_bytes,
            error_table: self.error_table,
            card_json,
            card_etag: HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"0\"")),
            card_modified: whole_seconds(std::time::SystemTime::now()),
        }));
        let mounts = (self.reloadable || !self.mounts.is_empty()).then(|| self.live.clone());
        let mut router = match mounts.clone().filter(|_| self.directory_card) {
            Some(live) => {
                let (root, hybrid) = (card.clone(), self.hybrid_card);
                Router::new().route(
                    AGENT_CARD_PATH,
                    get(move |headers: HeaderMap| {
                        let card = mount::directory_card(&root, &live.current());
                        async move { directory_card(&card, hybrid, &headers) }
                    }),
                )
            }
            None => Router::new().route(AGENT_CARD_PATH, get(agent_card)),
        };
        if let Some(jwks) = self.jwks.clone().filter(|_| self.handler.push_enabled()) {
            router = router.route(
                switchboard_core::push::JWKS_PATH,
                get(move || {
                    let body = jwks.jwks().to_string();
                    async move {
                        (
                            [
                                (header::CONTENT_TYPE, "application/jwk-set+json"),
                                // Short: receivers must see a rotation soon.
                                (header::CACHE_CONTROL, "public, max-age=60"),
                            ],
                            body,
                        )
                    }
                }),
            );
        }
        let rpc = RpcRoute::new(&self.rpc_path, state.clone());
        for path in &rpc.paths {
            router = router.route(path, post(jsonrpc::handle));
        }
        let mut http = router
            .merge(rest::routes())
            .fallback(not_found)
            .with_state(state)
            .merge(self.extra.clone());
        self.live.start(|| {
            self.mounts
                .iter()
                .map(|(path, agent)| {
                    let server = self.mounted(path, agent);
                    let router = server.router();
                    mount::Live {
                        path: path.clone(),
                        server,
                        router,
                    }
                })
                .collect()
        });
        if let Some(live) = mounts.clone() {
            let (public_url, card) = (self.public_url.clone(), card.clone());
            http = http.route(
                mount::DIRECTORY_PATH,
                get(move || {
                    let body = Self::directory(&public_url, &card, &live.current());
                    async move { ([(header::CONTENT_TYPE, "application/json")], body) }
                }),
            );
        }
        let http = self
            .gated
            .iter()
            .fold(http, |http, make| http.merge(make(gate.clone())));
        Dispatch(Arc::new(DispatchInner {
            rpc,
            http,
            mounts,
            #[cfg(feature = "grpc")]
            grpc: grpc_front::GrpcFront::new(
                &self.handler,
                &gate,
                self.error_table,
                &card,
                self.max_body_bytes,
            ),
            gate,
        }))
    }

    /// Serves on `listener` until `shutdown` resolves (e.g.
    /// [`shutdown_signal`]: Ctrl-C or SIGTERM), then stops accepting,
    /// lets running tasks settle (up to 10 s) and ends open streams.
    /// Connections are held to the [`connection_limits`](Self::connection_limits)
    /// (timeouts, caps; see [`limits`]). With
    /// [`push`](Self::push), delivers push notifications meanwhile and stops
    /// the delivery worker last. Before the first connection is accepted,
    /// the runs a previous process left unfinished in a durable store are
    /// resumed by their agents or failed ([`RequestHandler::recover_abandoned`],
    /// each agent its own; [`RequestHandler::fail_unclaimed_abandoned`],
    /// what no mounted agent took), so no caller sees them working
    /// without a run.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        self.handler.recover_abandoned().await;
        let mounted: Vec<A2aServer> = self
            .mounts
            .iter()
            .map(|(path, agent)| self.mounted(path, agent))
            .collect();
        for agent in &mounted {
            agent.handler.recover_abandoned().await;
        }
        // What no agent took back: tasks of agents no longer mounted.
        self.handler.fail_unclaimed_abandoned().await;
        #[cfg(feature = "push")]
        let mut push = Vec::new();
        #[cfg(feature = "push")]
        for server in std::iter::once(&self).chain(&mounted) {
            if let Some(wired) = &server.push {
                push.push(
                    wired
                        .start(&server.public_url)
                        .map_err(std::io::Error::other)?,
                );
            }
        }
        let root = self.handler.clone();
        let live = self.live.clone();
        let stop = tokio_util::sync::CancellationToken::new();
        let stop2 = stop.clone();
        tokio::spawn(async move {
            shutdown.await;
            // The agents mounted at the end (a reload may have changed them).
            let handlers: Vec<RequestHandler> = std::iter::once(root)
                .chain(live.current().iter().map(|m| m.server.handler.clone()))
                .collect();
            // Settle running tasks first so streams deliver their final
            // events: every agent's at once, within the same 10 s.
            futures::future::join_all(
                handlers
                    .iter()
                    .map(|handler| handler.shutdown(Duration::from_secs(10))),
            )
            .await;
            stop2.cancel();
        });
        let limits = self.connection_limits.clone();
        let acceptor = self.tls.as_ref().map(|tls| {
            tokio::spawn(tls.clone().watch(stop.clone()));
            tokio_rustls::TlsAcceptor::from(tls.config())
        });
        let wire = conn::Wire::new(&RpcRoute::paths(&self.rpc_path));
        let served = if self.layers.is_empty() {
            // The front itself, not a boxed service or `router()`'s Router
            // around it: one indirection less on every request.
            conn::serve(listener, self.front(), limits, wire, acceptor, stop).await
        } else {
            conn::serve(listener, self.layered(), limits, wire, acceptor, stop).await
        };
        // Last, so that the final events of settling tasks are queued first.
        #[cfg(feature = "push")]
        for push in push {
            push.stop().await;
        }
        served
    }
}

/// One port, two protocols: a request whose content type is
/// `application/grpc…` goes to the gRPC front (`grpc_front.rs`, feature
/// `grpc`), everything else to the HTTP router. The connection code clones
/// the service for every request, so the parts sit behind one `Arc`.
#[derive(Clone)]
struct Dispatch(Arc<DispatchInner>);

struct DispatchInner {
    /// The JSON-RPC endpoint, matched first; its paths are routed in
    /// `http` too, for users of `router()` alone.
    rpc: RpcRoute,
    http: Router,
    /// The mounted agents, matched by path prefix before `http`.
    mounts: Option<mount::LiveMounts>,
    /// Authenticates gRPC calls (the HTTP bindings run it themselves).
    gate: Gate,
    #[cfg(feature = "grpc")]
    grpc: grpc_front::GrpcFront,
}

impl tower::Service<axum::extract::Request> for Dispatch {
    type Response = Response;
    type Error = std::convert::Infallible;
    /// The HTTP router's own future, unboxed: the layers around this
    /// service box it anyway, and without layers the connection code takes
    /// it as it is.
    type Future = futures::future::Either<
        axum::routing::future::RouteFuture<Infallible>,
        futures::future::BoxFuture<'static, Result<Response, Self::Error>>,
    >;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Every inner service is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: axum::extract::Request) -> Self::Future {
        use futures::future::Either;
        let grpc = is_grpc(req.headers());
        if !grpc && self.0.rpc.is_for(&req) {
            let app = self.0.rpc.app.clone();
            return Either::Right(pin_in_place!(async move {
                Ok(jsonrpc::handle(axum::extract::State(app), req).await)
            }));
        }
        if !grpc {
            if let Some(mounts) = &self.0.mounts
                && let Some((mut router, inner)) = mounts.find(req.uri().path())
            {
                return Either::Left(router.call(mount::strip(req, &inner)));
            }
            // The router is always ready (axum's `poll_ready` is `Ready`).
            return Either::Left(self.0.http.clone().call(req));
        }
        #[cfg(feature = "grpc")]
        {
            Either::Right(grpc_front::call(&self.0.gate, &self.0.grpc, req))
        }
        #[cfg(not(feature = "grpc"))]
        {
            let _ = &self.0.gate;
            Either::Right(Box::pin(std::future::ready(Ok(grpc_unimplemented()))))
        }
    }
}

/// The JSON-RPC endpoint, matched before the router: every A2A call of the
/// JSON-RPC binding is a POST to this one path, so an exact comparison
/// finds it. Through the router the same call walks the route tree, gets
/// two request extensions (the matched path and the path parameters, a map
/// allocation and a box each) and passes two type-erased services, each
/// boxing its future: code that the instruction cache holds on every
/// request (the bench's loads are all JSON-RPC; bench/RESULTS.md session 20).
struct RpcRoute {
    /// The configured path, and for a path other than `/` the same with a
    /// trailing slash: what the router routes and what is matched here.
    paths: Vec<String>,
    app: AppState,
}

impl RpcRoute {
    fn new(rpc_path: &str, app: AppState) -> Self {
        RpcRoute {
            paths: Self::paths(rpc_path),
            app,
        }
    }

    /// The paths the endpoint at `rpc_path` answers on.
    fn paths(rpc_path: &str) -> Vec<String> {
        let mut paths = vec![rpc_path.to_string()];
        if rpc_path != "/" {
            paths.push(format!("{rpc_path}/"));
        }
        paths
    }

    /// Whether `req`, not a gRPC call, is a JSON-RPC call: a POST to one of
    /// the paths.
    fn is_for(&self, req: &axum::extract::Request) -> bool {
        req.method() == http::Method::POST && self.paths.iter().any(|p| p == req.uri().path())
    }
}

/// The front as the innermost [`FrontService`]: the router's future in a
/// box, the gRPC front's as it comes (boxed already).
impl ErasedService for Dispatch {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        tower::Service::poll_ready(self, cx)
    }

    fn call(&mut self, req: axum::extract::Request) -> FrontFuture {
        match tower::Service::call(self, req) {
            futures::future::Either::Left(http) => Box::pin(http),
            futures::future::Either::Right(grpc) => grpc,
        }
    }

    fn clone_box(&self) -> Box<dyn ErasedService> {
        Box::new(self.clone())
    }
}

/// `true` when a request is gRPC (`application/grpc`, `application/grpc+proto`, …).
fn is_grpc(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/grpc"))
}

/// The answer to a gRPC call on a server built without the `grpc` feature:
/// a trailers-only UNIMPLEMENTED, as gRPC servers answer unknown services.
#[cfg(not(feature = "grpc"))]
fn grpc_unimplemented() -> Response {
    let mut resp = Response::new(axum::body::Body::empty());
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    headers.insert("grpc-status", HeaderValue::from_static("12"));
    headers.insert(
        "grpc-message",
        HeaderValue::from_static("this server is built without gRPC"),
    );
    resp
}

/// How long clients and caches may reuse the card without asking again.
pub const CARD_MAX_AGE_SECS: u64 = 300;

/// The public card, with HTTP caching: `ETag` (a hash of the bytes served),
/// `Last-Modified` (when this server built it) and `Cache-Control:
/// public, max-age=300`. A conditional request is answered `304 Not
/// Modified` without the body when `If-None-Match` names the current tag
/// (or `*`), or, only when there is no `If-None-Match` (RFC 9110 §13.2.2),
/// when `If-Modified-Since` is not before `Last-Modified`.
async fn agent_card(State(app): State<AppState>, headers: HeaderMap) -> Response {
    let last_modified = httpdate::fmt_http_date(app.card_modified);
    let not_modified = match headers.get(header::IF_NONE_MATCH) {
        Some(tags) => etag_matches(tags, &app.card_etag),
        None => headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok())
            .is_some_and(|since| since >= app.card_modified),
    };
    let cache = [
        (header::ETAG, app.card_etag.clone()),
        (
            header::LAST_MODIFIED,
            HeaderValue::from_str(&last_modified).unwrap_or(HeaderValue::from_static("")),
        ),
        (
            header::CACHE_CONTROL,
            HeaderValue::from_str(&format!("public, max-age={CARD_MAX_AGE_SECS}"))
                .unwrap_or(HeaderValue::from_static("public")),
        ),
    ];
    if not_modified {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        cache,
        app.card_json.clone(),
    )
        .into_response()
}

/// The directory card (see [`A2aServer::directory_card`]): made at each
/// request from the agents mounted then, so caches must ask again each
/// time (`no-cache`); its `ETag` (a hash of the bytes) lets them do that
/// with a `304 Not Modified`.
fn directory_card(card: &AgentCard, hybrid: bool, headers: &HeaderMap) -> Response {
    let json = if hybrid {
        serde_json::to_vec(&switchboard_protocol::v03::card::hybrid_card(card))
    } else {
        serde_json::to_vec(card)
    };
    let json = Bytes::from(json.unwrap_or_default());
    let etag = HeaderValue::from_str(&format!("\"{:016x}\"", fnv1a(&json)))
        .unwrap_or(HeaderValue::from_static("\"0\""));
    let cache = [
        (header::ETAG, etag.clone()),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
    ];
    if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|tags| etag_matches(tags, &etag))
    {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        cache,
        json,
    )
        .into_response()
}

/// Whether an `If-None-Match` list names `etag` (weak comparison, `*` matches).
fn etag_matches(list: &HeaderValue, etag: &HeaderValue) -> bool {
    let ours = etag.to_str().unwrap_or_default();
    list.to_str().unwrap_or_default().split(',').any(|tag| {
        let tag = tag.trim();
        tag == "*" || tag.trim_start_matches("W/") == ours
    })
}

/// `t` without its fraction of a second: HTTP dates have whole seconds, so
/// `If-Modified-Since: <our Last-Modified>` must compare equal.
fn whole_seconds(t: std::time::SystemTime) -> std::time::SystemTime {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    std::time::UNIX_EPOCH + Duration::from_secs(secs)
}

async fn not_found() -> Response {
    let body = serde_json::json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "no such route; the agent card is at /.well-known/agent-card.json"}});
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A small stable hash for the card's ETag.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The 0.3 interfaces beside the 1.0 ones: the same endpoints, since one
/// URL serves both versions (JSON-RPC by method name, REST under `/v1`).
/// JSON-RPC, HTTP+JSON and gRPC (0.3 gRPC is `a2a.v1.A2AService` on the
/// same port, `grpc_v03.rs`), in the 1.0 interfaces' order.
fn v03_interfaces(v1: &[AgentInterface]) -> Vec<AgentInterface> {
    v1.iter()
        .filter(|i| {
            i.protocol_version == PROTOCOL_VERSION
                && (i.protocol_binding == BINDING_JSONRPC
                    || i.protocol_binding == BINDING_HTTP_JSON
                    || i.protocol_binding == BINDING_GRPC)
        })
        .map(|i| AgentInterface {
            protocol_version: switchboard_protocol::v03::PROTOCOL_VERSION.into(),
            ..i.clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_a_front_future_passes_through_unboxed() {
        let boxed: FrontFuture = Box::pin(async { Ok(StatusCode::IM_A_TEAPOT.into_response()) });
        let Ok(front) = already_front(boxed) else {
            panic!("a FrontFuture is passed through")
        };
        let Ok(resp) = front.await;
        assert_eq!(resp.status(), StatusCode::IM_A_TEAPOT, "the same future");

        // Same output, another type: given back to be wrapped.
        let plain = async { Ok::<_, Infallible>(StatusCode::ACCEPTED.into_response()) };
        let Err(plain) = already_front(plain) else {
            panic!("only a FrontFuture passes through")
        };
        let Ok(resp) = plain.await;
        assert_eq!(resp.status(), StatusCode::ACCEPTED, "given back untouched");
    }
}
