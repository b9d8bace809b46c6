//! The console's JSON/SSE API: each handler builds a client for the one
//! call (with a tap that collects its frames and, on a server's own
//! console, the caller's credentials), runs it and answers the result with
//! the frames, so the page's Debug view shows exactly what was said.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use switchboard_client::protocol::{
    A2AError, ListTaskPushNotificationConfigsRequest, ListTasksRequest, SendMessageRequest,
    TaskState,
};
use switchboard_client::{A2AClient, ClientBuilder, ClientError, ListedAgent, WireFrame, WireTap};
use switchboard_server::{Authenticator, Gate, Identity};

use crate::{BASE_PATH, ConsoleConfig};

type Shared = Arc<Console>;

/// The header every API request carries (see the crate docs).
pub(crate) const CONSOLE_HEADER: &str = "x-switchboard-console";
/// The header naming the agent a call is for: its path in the server's
/// listing (`/support`); without it, the server's own agent (`/`).
pub(crate) const AGENT_HEADER: &str = "x-switchboard-agent";

/// How long a fetched agent listing is trusted before it is read again.
const DIRECTORY_TTL: Duration = Duration::from_secs(30);

/// A console's settings and what it learnt of the server.
#[derive(Debug)]
pub(crate) struct Console {
    config: ConsoleConfig,
    /// The server's agent listing, when it was read.
    directory: Mutex<Option<(Instant, Arc<Vec<ListedAgent>>)>>,
}

impl Console {
    pub(crate) fn new(config: ConsoleConfig) -> Shared {
        Arc::new(Console {
            config,
            directory: Mutex::new(None),
        })
    }

    /// The server's agents (`None`: it lists none, so it has one), read
    /// with `builder` (the caller's client settings) at most every
    /// [`DIRECTORY_TTL`].
    async fn directory(
        &self,
        builder: &ClientBuilder,
    ) -> Result<Option<Arc<Vec<ListedAgent>>>, ClientError> {
        if let Ok(cached) = self.directory.lock()
            && let Some((at, agents)) = cached.as_ref()
            && at.elapsed() < DIRECTORY_TTL
        {
            return Ok(Some(agents.clone()));
        }
        let Some(agents) = builder.list_agents(&self.config.agent_url).await? else {
            return Ok(None);
        };
        let agents = Arc::new(agents);
        if let Ok(mut cached) = self.directory.lock() {
            *cached = Some((Instant::now(), agents.clone()));
        }
        Ok(Some(agents))
    }

    /// The URL of the agent the caller picked ([`AGENT_HEADER`]): the
    /// server's own, or one its listing names, under the console's agent
    /// URL. Any other path is refused: the console relays to the server's
    /// agents only, never to a URL a caller makes up.
    async fn agent_url(
        &self,
        head: &HeaderMap,
        builder: &ClientBuilder,
    ) -> Result<String, ConsoleError> {
        let path = match head.get(AGENT_HEADER) {
            None => return Ok(self.config.agent_url.clone()),
            Some(value) => value
                .to_str()
                .map_err(|_| ConsoleError::UnknownAgent("(not text)".into()))?,
        };
        if path == "/" {
            return Ok(self.config.agent_url.clone());
        }
        let listed = self
            .directory(builder)
            .await?
            .is_some_and(|agents| agents.iter().any(|a| a.path == path));
        if !listed {
            return Err(ConsoleError::UnknownAgent(path.to_owned()));
        }
        let base = switchboard_client::directory::server_base(&self.config.agent_url);
        Ok(format!("{base}{path}"))
    }
}

/// The most frames one answer carries; a longer stream's frames are still
/// shown as they pass, the count caps what one unary answer buffers.
const MAX_FRAMES: usize = 1_000;
/// The most bytes of one frame's body the page gets (the rest is cut,
/// marked so): the Debug view is for reading, not for bulk data.
const MAX_FRAME_BYTES: usize = 256 * 1024;
/// The largest request body the API reads (a message with its parts).
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Why an API call failed, answered once in [`IntoResponse`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConsoleError {
    /// The page sent something the API cannot use.
    #[error("{0}")]
    BadRequest(String),
    /// The agent picked is not one the server lists.
    #[error(
        "no agent at {0:?}: the console reaches the agents the server lists (GET api/agents) only"
    )]
    UnknownAgent(String),
    /// The agent (or the way to it) failed.
    #[error(transparent)]
    Client(#[from] ClientError),
}

impl ConsoleError {
    fn status(&self) -> StatusCode {
        match self {
            ConsoleError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ConsoleError::UnknownAgent(_) => StatusCode::NOT_FOUND,
            ConsoleError::Client(_) => StatusCode::BAD_GATEWAY,
        }
    }

    fn body(&self) -> Value {
        let code = match self {
            ConsoleError::Client(e) => e.code(),
            ConsoleError::BadRequest(_) | ConsoleError::UnknownAgent(_) => None,
        };
        json!({"message": self.to_string(), "code": code})
    }
}

/// The frames of the calls one API request makes.
#[derive(Debug, Default)]
struct Frames(Mutex<Vec<WireFrame>>);

impl WireTap for Frames {
    /// The Debug view shows the bytes on the wire of every call.
    fn wire_bytes(&self) -> bool {
        true
    }

    fn record(&self, mut frame: WireFrame) {
        if frame.body.len() > MAX_FRAME_BYTES {
            let mut cut = MAX_FRAME_BYTES;
            while !frame.body.is_char_boundary(cut) {
                cut -= 1;
            }
            frame.body.truncate(cut);
            frame.body.push_str("… (cut)");
        }
        if let Ok(mut frames) = self.0.lock()
            && frames.len() < MAX_FRAMES
        {
            frames.push(frame);
        }
    }
}

impl Frames {
    fn take(&self) -> Vec<Value> {
        let frames = match self.0.lock() {
            Ok(mut frames) => std::mem::take(&mut *frames),
            Err(_) => Vec::new(),
        };
        frames.iter().map(frame_json).collect()
    }
}

fn frame_json(frame: &WireFrame) -> Value {
    json!({
        "call": frame.call,
        "operation": frame.operation,
        "kind": frame.kind.label(),
        "seq": frame.seq,
        "body": frame.body,
    })
}

/// One API call's client and the frames it records.
struct Call {
    client: A2AClient,
    frames: Arc<Frames>,
}

impl Call {
    fn interface(&self) -> Value {
        let i = self.client.interface();
        json!({
            "url": self.client.endpoint(),
            "binding": i.protocol_binding,
            "version": i.protocol_version,
            "tenant": i.tenant,
        })
    }

    /// The answer to a unary call: its result as JSON, or its error, with
    /// the frames.
    fn answer<T: serde::Serialize, E: Into<ConsoleError>>(&self, result: Result<T, E>) -> Response {
        let frames = self.frames.take();
        match result.map_err(Into::into).and_then(|r| to_value(&r)) {
            Ok(result) => axum::Json(json!({
                "result": result,
                "frames": frames,
                "interface": self.interface(),
            }))
            .into_response(),
            Err(e) => error_response(&e, frames),
        }
    }
}

fn error_response(e: &ConsoleError, frames: Vec<Value>) -> Response {
    (
        e.status(),
        axum::Json(json!({"error": e.body(), "frames": frames})),
    )
        .into_response()
}

/// The client builder for one call of `config`'s agent.
fn builder(config: &ConsoleConfig, head: &HeaderMap, frames: &Arc<Frames>) -> ClientBuilder {
    let mut builder = config
        .client
        .clone()
        .extensions(config.extensions.iter().cloned())
        .tap(frames.clone());
    if config.forward_credentials {
        for name in [header::AUTHORIZATION.as_str(), "x-api-key"] {
            if let Some(value) = head.get(name).and_then(|v| v.to_str().ok()) {
                builder = builder.header(name, value);
            }
        }
    }
    builder
}

/// A client for the caller's picked agent, with the caller's settings.
async fn connect(console: &Console, head: &HeaderMap) -> Result<Call, Response> {
    let frames = Arc::new(Frames::default());
    let builder = builder(&console.config, head, &frames);
    let connected = match console.agent_url(head, &builder).await {
        Ok(url) => builder.connect(&url).await.map_err(ConsoleError::Client),
        Err(e) => Err(e),
    };
    match connected {
        Ok(client) => Ok(Call { client, frames }),
        Err(e) => Err(error_response(&e, frames.take())),
    }
}

fn to_value(value: &impl serde::Serialize) -> Result<Value, ConsoleError> {
    serde_json::to_value(value).map_err(|e| ConsoleError::BadRequest(e.to_string()))
}

/// The API without authentication of its own (see [`crate::router`]).
pub(crate) fn routes(state: Shared) -> Router {
    api(state).layer(axum::middleware::from_fn(require_console_header))
}

/// The API behind `authenticator` (see [`crate::authenticated`]).
pub(crate) fn authenticated_routes(state: Shared, authenticator: Arc<dyn Authenticator>) -> Router {
    api(state)
        .layer(axum::middleware::from_fn(
            move |request: Request, next: Next| {
                let authenticator = authenticator.clone();
                async move {
                    let (head, body) = request.into_parts();
                    match authenticator.authenticate(&head).await {
                        Ok(_) => next.run(Request::from_parts(head, body)).await,
                        Err(error) => refusal(&error, authenticator.challenge()),
                    }
                }
            },
        ))
        .layer(axum::middleware::from_fn(require_console_header))
}

/// A server's gate as an authenticator: it lets in whom the server's A2A
/// bindings let in, at their request rate.
#[derive(Debug)]
pub(crate) struct GateAuthenticator(pub Gate);

impl Authenticator for GateAuthenticator {
    fn authenticate<'a>(
        &'a self,
        head: &'a http::request::Parts,
    ) -> futures::future::BoxFuture<'a, Result<Identity, A2AError>> {
        Box::pin(self.0.authenticate(head))
    }

    fn challenge(&self) -> Option<header::HeaderValue> {
        self.0.challenge()
    }
}

/// A caller the gate refused: the REST binding's status and body, with the
/// scheme's challenge on a 401.
fn refusal(error: &A2AError, challenge: Option<header::HeaderValue>) -> Response {
    use switchboard_server::errors::{ErrorTable, rest_error_body};
    let status = ErrorTable::V1_0_0.status(error);
    let mut response = (
        status.http,
        [(header::CONTENT_TYPE, "application/json")],
        rest_error_body(error, status),
    )
        .into_response();
    if status.http == StatusCode::UNAUTHORIZED
        && let Some(challenge) = challenge
    {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

async fn require_console_header(request: Request, next: Next) -> Response {
    if request.headers().get(CONSOLE_HEADER).is_none() {
        return (
            StatusCode::FORBIDDEN,
            axum::Json(
                json!({"error": {"message": "console API calls carry X-Switchboard-Console: 1"}}),
            ),
        )
            .into_response();
    }
    next.run(request).await
}

fn api(state: Shared) -> Router {
    let at = |path: &str| format!("{BASE_PATH}/api/{path}");
    Router::new()
        .route(&at("agents"), get(agents))
        .route(&at("card"), get(card))
        .route(&at("send"), post(send))
        .route(&at("tasks"), get(list_tasks))
        .route(&at("tasks/{id}"), get(get_task))
        .route(&at("tasks/{id}/cancel"), post(cancel_task))
        .route(&at("tasks/{id}/subscribe"), get(subscribe))
        .route(&at("tasks/{id}/push-configs"), get(push_configs))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// The card as served (undecoded), what it breaks, its signature's status
/// and the interface the console's client picks from it.
async fn card(State(console): State<Shared>, head: HeaderMap) -> Response {
    let frames = Arc::new(Frames::default());
    let builder = builder(&console.config, &head, &frames);
    let agent_url = match console.agent_url(&head, &builder).await {
        Ok(url) => url,
        Err(e) => return error_response(&e, frames.take()),
    };
    let (card_url, document) = match builder.fetch_card_document(&agent_url).await {
        Ok(found) => found,
        Err(e) => return error_response(&ConsoleError::Client(e), frames.take()),
    };
    let issues = crate::validate_card(&document);
    let signature = signature_status(&builder, &agent_url, &document).await;
    let chosen = match builder.clone().connect(&agent_url).await {
        Ok(client) => {
            let i = client.interface();
            json!({"url": client.endpoint(), "binding": i.protocol_binding, "version": i.protocol_version})
        }
        Err(e) => json!({"error": e.to_string()}),
    };
    axum::Json(json!({
        "result": {
            "url": card_url,
            "card": document,
            "issues": issues,
            "signature": signature,
            "interface": chosen,
        },
        "frames": frames.take(),
    }))
    .into_response()
}

/// `GET api/agents`: the agents the console can talk to — the server's
/// listing, or its one agent (from its card) when it has none — each with
/// the path the page names it by in [`AGENT_HEADER`].
async fn agents(State(console): State<Shared>, head: HeaderMap) -> Response {
    let frames = Arc::new(Frames::default());
    let builder = builder(&console.config, &head, &frames);
    let rows = match console.directory(&builder).await {
        Ok(Some(agents)) => agents
            .iter()
            .map(|a| json!({"name": a.name, "description": a.description, "path": a.path}))
            .collect::<Vec<_>>(),
        Ok(None) => match builder.fetch_card_document(&console.config.agent_url).await {
            Ok((_, card)) => vec![json!({
                "name": card.get("name").and_then(Value::as_str).unwrap_or_default(),
                "description": card.get("description").and_then(Value::as_str).unwrap_or_default(),
                "path": "/",
            })],
            Err(e) => return error_response(&ConsoleError::Client(e), frames.take()),
        },
        Err(e) => return error_response(&ConsoleError::Client(e), frames.take()),
    };
    axum::Json(json!({"result": {"agents": rows}, "frames": frames.take()})).into_response()
}

/// `unsigned`, `verified` (against the JWKS its `jku` names on the card's
/// own origin) or `invalid` with the reason.
async fn signature_status(builder: &ClientBuilder, url: &str, document: &Value) -> Value {
    let signed = document
        .get("signatures")
        .and_then(Value::as_array)
        .is_some_and(|s| !s.is_empty());
    if !signed {
        return json!({"status": "unsigned"});
    }
    let verify = builder
        .clone()
        .verify_card(switchboard_client::CardTrust::SameOrigin);
    match verify.fetch_card(url).await {
        Ok(_) => json!({"status": "verified"}),
        Err(e) => json!({"status": "invalid", "reason": e.to_string()}),
    }
}

/// `POST api/send`: body `{"request": SendMessageRequest, "stream": bool}`.
#[derive(Debug, Deserialize)]
struct SendBody {
    request: Value,
    #[serde(default = "yes")]
    stream: bool,
}

fn yes() -> bool {
    true
}

async fn send(State(console): State<Shared>, head: HeaderMap, body: axum::body::Bytes) -> Response {
    let parsed = serde_json::from_slice::<SendBody>(&body)
        .map_err(|e| ConsoleError::BadRequest(format!("send: {e}")))
        .and_then(|b| {
            let stream = b.stream;
            serde_json::from_value::<SendMessageRequest>(b.request)
                .map(|r| (r, stream))
                .map_err(|e| ConsoleError::BadRequest(format!("SendMessageRequest: {e}")))
        });
    let (request, stream) = match parsed {
        Ok(p) => p,
        Err(e) => return error_response(&e, Vec::new()),
    };
    let call = match connect(&console, &head).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    if !stream {
        return call.answer(call.client.send_message(request).await);
    }
    let opened = call.client.send_streaming_message(request).await;
    stream_answer(call, opened)
}

async fn subscribe(
    State(console): State<Shared>,
    head: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let call = match connect(&console, &head).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    let opened = call.client.subscribe_to_task(id.as_str()).await;
    stream_answer(call, opened)
}

/// A stream as SSE: each event after the frames it produced; an error
/// (before or during the stream) as an `error` event; `end` last.
fn stream_answer(
    call: Call,
    opened: Result<switchboard_client::EventStream, ClientError>,
) -> Response {
    let interface = call.interface();
    let frames = call.frames.clone();
    let sse = async_stream::stream! {
        yield Ok::<Event, Infallible>(json_event("interface", &interface));
        match opened {
            Err(e) => {
                for f in frames.take() { yield Ok(json_event("frame", &f)); }
                yield Ok(json_event("error", &ConsoleError::Client(e).body()));
            }
            Ok(mut events) => {
                // Keeps the client (and its connection) alive with the stream.
                let _client = call.client;
                while let Some(item) = events.next().await {
                    for f in frames.take() { yield Ok(json_event("frame", &f)); }
                    match item {
                        Ok(event) => {
                            let event = json!({"seq": event.seq, "event": event.event});
                            yield Ok(json_event("event", &event));
                        }
                        Err(e) => yield Ok(json_event("error", &ConsoleError::Client(e).body())),
                    }
                }
                for f in frames.take() { yield Ok(json_event("frame", &f)); }
            }
        }
        yield Ok(Event::default().event("end").data("{}"));
    };
    sse_response(sse)
}

fn sse_response(
    stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Response {
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn json_event(name: &str, value: &Value) -> Event {
    Event::default().event(name).data(value.to_string())
}

/// `GET api/tasks?state=&contextId=&pageSize=&pageToken=`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    state: Option<String>,
    context_id: Option<String>,
    page_size: Option<i32>,
    page_token: Option<String>,
}

async fn list_tasks(
    State(console): State<Shared>,
    head: HeaderMap,
    Query(query): Query<ListQuery>,
) -> Response {
    let state = match query.state.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => match serde_json::from_value::<TaskState>(json!(s)) {
            Ok(state) => Some(state),
            Err(_) => {
                let e = ConsoleError::BadRequest(format!("unknown task state {s:?}"));
                return error_response(&e, Vec::new());
            }
        },
    };
    let call = match connect(&console, &head).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    let request = ListTasksRequest {
        context_id: query.context_id.filter(|c| !c.is_empty()),
        status: state,
        page_size: query.page_size,
        page_token: query.page_token.filter(|t| !t.is_empty()),
        history_length: Some(0),
        ..Default::default()
    };
    let result = call.client.list_tasks(request).await;
    call.answer(result)
}

async fn get_task(
    State(console): State<Shared>,
    head: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let call = match connect(&console, &head).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    let result = call.client.get_task(id.as_str()).await;
    call.answer(result)
}

async fn cancel_task(
    State(console): State<Shared>,
    head: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let call = match connect(&console, &head).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    let result = call.client.cancel_task(id.as_str()).await;
    call.answer(result)
}

async fn push_configs(
    State(console): State<Shared>,
    head: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let call = match connect(&console, &head).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    let request = ListTaskPushNotificationConfigsRequest {
        tenant: None,
        task_id: id,
        page_size: None,
        page_token: None,
    };
    let result = call.client.list_push_configs(request).await;
    call.answer(result)
}
