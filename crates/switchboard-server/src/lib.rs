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
//!   gRPC services (unary methods framed by hand in `grpc_unary.rs`, the
//!   streaming ones on tonic), everything else to the HTTP routes;
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
//!   one call: [`A2aServer::push`] (see [`push`]).
//!
//! ```no_run
//! # async fn run(handler: switchboard_core::RequestHandler) -> std::io::Result<()> {
//! use switchboard_server::A2aServer;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! A2aServer::new(handler).public_url("http://127.0.0.1:8080").serve(listener, std::future::pending()).await
//! # }
//! ```

mod conn;
pub mod errors;
pub mod grpc;
mod grpc_unary;
mod grpc_v03;
mod jsonrpc;
mod jsonrpc_v03;
pub mod params;
#[cfg(feature = "push")]
pub mod push;
mod rest;
mod rest_v03;

pub use errors::ErrorTable;

use std::future::Future;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use switchboard_core::RequestHandler;
use switchboard_protocol::card::{
    BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC, PROTOCOL_VERSION,
};
use switchboard_protocol::{AGENT_CARD_PATH, AgentCard, AgentInterface};

/// The default cap on request bodies: 10 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) handler: RequestHandler,
    pub(crate) max_body_bytes: usize,
    pub(crate) error_table: ErrorTable,
    card_json: Bytes,
    card_etag: HeaderValue,
}

/// An A2A server: a handler plus how it is exposed.
#[derive(Debug, Clone)]
pub struct A2aServer {
    handler: RequestHandler,
    public_url: String,
    rpc_path: String,
    max_body_bytes: usize,
    error_table: ErrorTable,
    /// The push signing keys served at `/.well-known/jwks.json`.
    jwks: Option<std::sync::Arc<dyn switchboard_core::push::JwksSource>>,
    hybrid_card: bool,
    /// Per-binding URLs that replace the ones derived from `public_url`.
    interface_urls: Vec<(String, String)>,
    /// Push notifications to wire up at `serve` (see [`A2aServer::push`]).
    #[cfg(feature = "push")]
    push: Option<push::Wired>,
}

impl A2aServer {
    /// A server for `handler`, JSON-RPC at `/`, public URL `http://127.0.0.1:8080`.
    pub fn new(handler: RequestHandler) -> Self {
        A2aServer {
            handler,
            public_url: "http://127.0.0.1:8080".into(),
            rpc_path: "/".into(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            error_table: ErrorTable::default(),
            jwks: None,
            hybrid_card: true,
            interface_urls: Vec::new(),
            #[cfg(feature = "push")]
            push: None,
        }
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

    /// Which spec version's error → HTTP/gRPC status table the REST binding
    /// uses (default [`ErrorTable::V1_0_1`]).
    pub fn error_table(mut self, table: ErrorTable) -> Self {
        self.error_table = table;
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
            // gRPC targets are `host:port`, on the same port as HTTP.
            let authority = self
                .public_url
                .split_once("://")
                .map_or(self.public_url.as_str(), |(_, rest)| rest);
            card.supported_interfaces.push(AgentInterface {
                url: self.url_for(BINDING_GRPC, authority.to_string()),
                protocol_binding: BINDING_GRPC.into(),
                tenant: None,
                protocol_version: PROTOCOL_VERSION.into(),
            });
        }
        if !card
            .supported_interfaces
            .iter()
            .any(|i| i.protocol_version.starts_with("0.3"))
        {
            card.supported_interfaces
                .extend(v03_interfaces(&card.supported_interfaces));
        }
        card.capabilities.push_notifications = Some(self.handler.push_enabled());
        card
    }

    /// The whole server as an axum router (to nest or serve yourself):
    /// card, JSON-RPC endpoint, REST routes and both gRPC services.
    pub fn router(&self) -> Router {
        Router::new().fallback_service(self.front())
    }

    /// The one-port front: the HTTP routes plus the gRPC services.
    fn front(&self) -> Dispatch {
        let card = self.card();
        let card_json = if self.hybrid_card {
            serde_json::to_vec(&switchboard_protocol::v03::card::hybrid_card(&card))
        } else {
            serde_json::to_vec(&card)
        };
        let card_json = Bytes::from(card_json.unwrap_or_default());
        let etag = format!("\"{:016x}\"", fnv1a(&card_json));
        let state = AppState {
            handler: self.handler.clone(),
            max_body_bytes: self.max_body_bytes,
            error_table: self.error_table,
            card_json,
            card_etag: HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"0\"")),
        };
        let mut router = Router::new().route(AGENT_CARD_PATH, get(agent_card));
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
        if self.rpc_path == "/" {
            router = router.route("/", post(jsonrpc::handle));
        } else {
            router = router
                .route(&self.rpc_path, post(jsonrpc::handle))
                .route(&format!("{}/", self.rpc_path), post(jsonrpc::handle));
        }
        let http = router
            .merge(rest::routes())
            .fallback(not_found)
            .with_state(state);
        let v1 = grpc::GrpcBinding::new(self.handler.clone(), self.error_table);
        let v03 = grpc_v03::GrpcV03::new(self.handler.clone(), self.error_table, &card);
        Dispatch {
            http,
            grpc_v1: grpc::service(v1.clone(), self.max_body_bytes),
            grpc_v03: grpc_v03::service(v03.clone(), self.max_body_bytes),
            unary_v1: v1,
            unary_v03: v03,
            max_grpc_message: self.max_body_bytes,
        }
    }

    /// Serves on `listener` until `shutdown` resolves, then stops accepting,
    /// lets running tasks settle (up to 10 s) and ends open streams. With
    /// [`push`](Self::push), delivers push notifications meanwhile and stops
    /// the delivery worker last.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        #[cfg(feature = "push")]
        let push = match &self.push {
            Some(wired) => Some(
                wired
                    .start(&self.public_url)
                    .map_err(std::io::Error::other)?,
            ),
            None => None,
        };
        let handler = self.handler.clone();
        // The front itself, not `router()`'s Router around it: one routing
        // step less on every request.
        let front = self.front();
        let stop = tokio_util::sync::CancellationToken::new();
        let stop2 = stop.clone();
        tokio::spawn(async move {
            shutdown.await;
            // Settle running tasks first so streams deliver their final events.
            handler.shutdown(Duration::from_secs(10)).await;
            stop2.cancel();
        });
        let served = conn::serve(listener, front, stop).await;
        // Last, so that the final events of settling tasks are queued first.
        #[cfg(feature = "push")]
        if let Some(push) = push {
            push.stop().await;
        }
        served
    }
}

/// One port, two protocols: a request whose content type is
/// `application/grpc…` goes to the gRPC service its path names (1.0's
/// `lf.a2a.v1.A2AService` or 0.3's `a2a.v1.A2AService`), everything else to
/// the HTTP router. Unary methods are framed by hand (`grpc_unary`), the
/// streaming ones go to tonic. Dispatching here, by prefix, rather than
/// through tonic's own router keeps the gRPC path one routing step long.
#[derive(Clone)]
struct Dispatch {
    http: Router,
    grpc_v1: switchboard_proto::v1::a2a_service_server::A2aServiceServer<grpc::GrpcBinding>,
    grpc_v03: switchboard_proto::v03::a2a_service_server::A2aServiceServer<grpc_v03::GrpcV03>,
    unary_v1: grpc::GrpcBinding,
    unary_v03: grpc_v03::GrpcV03,
    max_grpc_message: usize,
}

impl tower::Service<axum::extract::Request> for Dispatch {
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = futures::future::BoxFuture<'static, Result<Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        // Every inner service is always ready.
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: axum::extract::Request) -> Self::Future {
        use tower::ServiceExt as _;
        if !grpc::is_grpc(req.headers()) {
            return Box::pin(self.http.clone().oneshot(req));
        }
        let path = req.uri().path();
        let max = self.max_grpc_message;
        if let Some(method) = method_of(
            path,
            switchboard_proto::v1::a2a_service_server::SERVICE_NAME,
        ) {
            match grpc_unary::v1(method) {
                Some(unary) => unary(self.unary_v1.clone(), req, max),
                None => call_grpc(self.grpc_v1.clone(), req, self.unary_v1.table()),
            }
        } else if let Some(method) = method_of(
            path,
            switchboard_proto::v03::a2a_service_server::SERVICE_NAME,
        ) {
            match grpc_unary::v03(method) {
                Some(unary) => unary(self.unary_v03.clone(), req, max),
                None => call_grpc(self.grpc_v03.clone(), req, self.unary_v03.table()),
            }
        } else {
            // What tonic answers for a service it does not have.
            let resp = tonic::Status::unimplemented("").into_http::<axum::body::Body>();
            Box::pin(std::future::ready(Ok(resp)))
        }
    }
}

/// Calls one gRPC service, with protobuf decode errors made A2A Parse errors.
fn call_grpc<S>(
    svc: S,
    req: axum::extract::Request,
    table: ErrorTable,
) -> futures::future::BoxFuture<'static, Result<Response, std::convert::Infallible>>
where
    S: tower::Service<
            axum::extract::Request,
            Response = http::Response<tonic::body::Body>,
            Error = std::convert::Infallible,
        > + Send
        + 'static,
    S::Future: Send + 'static,
{
    use tower::ServiceExt as _;
    Box::pin(async move {
        let resp = svc.oneshot(req).await?;
        Ok(grpc::rewrite_decode_error(table, resp).map(axum::body::Body::new))
    })
}

/// The method a gRPC path (`/{service}/{method}`) names, if it names `service`.
fn method_of<'a>(path: &'a str, service: &str) -> Option<&'a str> {
    path.strip_prefix('/')?
        .strip_prefix(service)?
        .strip_prefix('/')
}

async fn agent_card(State(app): State<AppState>, headers: HeaderMap) -> Response {
    if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v == app.card_etag)
    {
        return (
            StatusCode::NOT_MODIFIED,
            [(header::ETAG, app.card_etag.clone())],
        )
            .into_response();
    }
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=300"),
            ),
            (header::ETAG, app.card_etag.clone()),
        ],
        app.card_json.clone(),
    )
        .into_response()
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
