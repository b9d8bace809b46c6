//! The console's JSON/SSE API: each call builds a client for the one
//! call (with a tap that collects its frames and, on a server's own
//! console, the caller's credentials), runs it and answers the result with
//! the frames, so the page's Debug view shows exactly what was said.
//!
//! The whole API is one axum handler, [`endpoint`], that checks the console
//! header and the caller, then picks the call from the path ([`Endpoint`]).
//! Each axum handler, extractor and middleware, and each type decoded or
//! encoded through serde, is generic code compiled once more for its use;
//! one handler and the operation table's own requests and answers
//! ([`A2aRequest`], [`A2aResponse`], which the client already decodes and
//! encodes) keep what the console adds to a binary to its own logic. The
//! unary calls go through [`A2AClient::call`]; the streams through the
//! server's one SSE writer ([`switchboard_server::sse`]).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};
use switchboard_client::protocol::{
    A2AError, A2aRequest, A2aResponse, ListTaskPushNotificationConfigsRequest, Operation,
};
use switchboard_client::{
    A2AClient, ClientBuilder, ClientError, IntoRequest, ListedAgent, WireFrame, WireTap,
};
use switchboard_server::sse::{SseFrame, sse_response};
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
    /// Who may call the API (`None`: whoever reaches it, see
    /// [`crate::router`]).
    authenticator: Option<Arc<dyn Authenticator>>,
    /// The server's agent listing, when it was read.
    directory: Mutex<Option<(Instant, Arc<Vec<ListedAgent>>)>>,
}

impl Console {
    pub(crate) fn new(
        config: ConsoleConfig,
        authenticator: Option<Arc<dyn Authenticator>>,
    ) -> Shared {
        Arc::new(Console {
            config,
            authenticator,
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

/// Why an API call failed, answered once in [`error_response`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConsoleError {
    /// The page sent something the API cannot use.
    #[error("{0}")]
    BadRequest(String),
    /// The path names no API call.
    #[error("no console API call at {0:?}")]
    NoSuchCall(String),
    /// The call exists with another method.
    #[error("this console API call is {0}")]
    WrongMethod(Method),
    /// The request's body is over [`MAX_BODY_BYTES`].
    #[error("the request's body is over {MAX_BODY_BYTES} bytes")]
    TooLarge,
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
            ConsoleError::NoSuchCall(_) | ConsoleError::UnknownAgent(_) => StatusCode::NOT_FOUND,
            ConsoleError::WrongMethod(_) => StatusCode::METHOD_NOT_ALLOWED,
            ConsoleError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ConsoleError::Client(_) => StatusCode::BAD_GATEWAY,
        }
    }

    fn body(&self) -> Value {
        let code = match self {
            ConsoleError::Client(e) => e.code(),
            _ => None,
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

    /// Runs a unary operation and answers its result as JSON, or its
    /// error, with the frames.
    async fn unary(self, request: A2aRequest) -> Response {
        let result = self.client.call(request).await;
        let frames = self.frames.take();
        match result
            .map_err(ConsoleError::Client)
            .and_then(|r| to_value(&r))
        {
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
    let mut response = (
        e.status(),
        axum::Json(json!({"error": e.body(), "frames": frames})),
    )
        .into_response();
    if let ConsoleError::WrongMethod(allowed) = e
        && let Ok(allow) = HeaderValue::from_str(allowed.as_str())
    {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    response
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

/// An answer of the agent as the page gets it: the operation's 1.0 JSON.
/// Only the answers of the console's calls are encoded here (each type's
/// encoder is code the console adds to the binary).
fn to_value(answer: &A2aResponse) -> Result<Value, ConsoleError> {
    let value = match answer {
        A2aResponse::SendMessage(r) => serde_json::to_value(r),
        A2aResponse::GetTask(task) | A2aResponse::CancelTask(task) => serde_json::to_value(task),
        A2aResponse::ListTasks(r) => serde_json::to_value(r),
        A2aResponse::ListTaskPushNotificationConfigs(r) => serde_json::to_value(r),
        A2aResponse::SendStreamingMessage(event) | A2aResponse::SubscribeToTask(event) => {
            serde_json::to_value(event)
        }
        other => {
            return Err(ConsoleError::BadRequest(format!(
                "{} is not a console call",
                other.operation()
            )));
        }
    };
    value.map_err(|e| ConsoleError::BadRequest(e.to_string()))
}

/// The API's calls, by the path under `api/` (see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Endpoint {
    /// `GET agents`.
    Agents,
    /// `GET card`.
    Card,
    /// `POST send`.
    Send,
    /// `GET tasks`.
    ListTasks,
    /// `GET tasks/{id}`.
    GetTask(String),
    /// `POST tasks/{id}/cancel`.
    CancelTask(String),
    /// `GET tasks/{id}/subscribe`.
    Subscribe(String),
    /// `GET tasks/{id}/push-configs`.
    PushConfigs(String),
}

impl Endpoint {
    /// The call at `path` (under `api/`, as sent: a task id is
    /// percent-decoded here, so it may hold a `/`) with `method`.
    fn parse(method: &Method, path: &str) -> Result<Endpoint, ConsoleError> {
        let unknown = || ConsoleError::NoSuchCall(path.to_owned());
        let id = |raw: &str| match percent_encoding::percent_decode_str(raw).decode_utf8() {
            Ok(id) if !id.is_empty() => Ok(id.into_owned()),
            _ => Err(unknown()),
        };
        let segments: Vec<&str> = path.split('/').collect();
        let (endpoint, allowed) = match segments.as_slice() {
            ["agents"] => (Endpoint::Agents, Method::GET),
            ["card"] => (Endpoint::Card, Method::GET),
            ["send"] => (Endpoint::Send, Method::POST),
            ["tasks"] => (Endpoint::ListTasks, Method::GET),
            ["tasks", task] => (Endpoint::GetTask(id(task)?), Method::GET),
            ["tasks", task, "cancel"] => (Endpoint::CancelTask(id(task)?), Method::POST),
            ["tasks", task, "subscribe"] => (Endpoint::Subscribe(id(task)?), Method::GET),
            ["tasks", task, "push-configs"] => (Endpoint::PushConfigs(id(task)?), Method::GET),
            _ => return Err(unknown()),
        };
        let head_of_get = allowed == Method::GET && method == Method::HEAD;
        if method != allowed && !head_of_get {
            return Err(ConsoleError::WrongMethod(allowed));
        }
        Ok(endpoint)
    }
}

/// The API's routes: every path under `api/` to [`endpoint`].
pub(crate) fn routes(state: Shared) -> Router {
    Router::new()
        .route(
            &format!("{BASE_PATH}/api/{{*call}}"),
            axum::routing::any(endpoint),
        )
        .with_state(state)
}

/// Every API call: the console header, then the caller (when the console
/// has an authenticator), then the call the path names.
async fn endpoint(State(console): State<Shared>, request: Request) -> Response {
    let (head, body) = request.into_parts();
    if !head.headers.contains_key(CONSOLE_HEADER) {
        return (
            StatusCode::FORBIDDEN,
            axum::Json(
                json!({"error": {"message": "console API calls carry X-Switchboard-Console: 1"}}),
            ),
        )
            .into_response();
    }
    if let Some(authenticator) = &console.authenticator
        && let Err(error) = authenticator.authenticate(&head).await
    {
        return refusal(&error, authenticator.challenge());
    }
    let prefix = format!("{BASE_PATH}/api/");
    let path = head.uri.path().strip_prefix(prefix.as_str()).unwrap_or("");
    let call = match Endpoint::parse(&head.method, path) {
        Ok(call) => call,
        Err(e) => return error_response(&e, Vec::new()),
    };
    let headers = &head.headers;
    match call {
        Endpoint::Agents => agents(&console, headers).await,
        Endpoint::Card => card(&console, headers).await,
        Endpoint::Send => send(&console, headers, body).await,
        Endpoint::ListTasks => match list_request(head.uri.query()) {
            Ok(request) => unary(&console, headers, request).await,
            Err(e) => error_response(&e, Vec::new()),
        },
        Endpoint::GetTask(id) => {
            unary(&console, headers, A2aRequest::GetTask(id.into_request())).await
        }
        Endpoint::CancelTask(id) => {
            unary(&console, headers, A2aRequest::CancelTask(id.into_request())).await
        }
        Endpoint::PushConfigs(task_id) => {
            let request = ListTaskPushNotificationConfigsRequest {
                tenant: None,
                task_id,
                page_size: None,
                page_token: None,
            };
            let request = A2aRequest::ListTaskPushNotificationConfigs(request);
            unary(&console, headers, request).await
        }
        Endpoint::Subscribe(id) => {
            let call = match connect(&console, headers).await {
                Ok(call) => call,
                Err(response) => return response,
            };
            let opened = call.client.subscribe_to_task(id).await;
            stream_answer(call, opened)
        }
    }
}

/// A unary operation for the caller's picked agent.
async fn unary(console: &Console, head: &HeaderMap, request: A2aRequest) -> Response {
    match connect(console, head).await {
        Ok(call) => call.unary(request).await,
        Err(response) => response,
    }
}

/// `GET api/tasks?state=&contextId=&pageSize=&pageToken=`: the
/// `ListTasks` request (without histories), decoded as the HTTP+JSON
/// binding decodes one, so a state is named as in the spec.
fn list_request(query: Option<&str>) -> Result<A2aRequest, ConsoleError> {
    let mut fields = serde_json::Map::new();
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if value.is_empty() {
            continue;
        }
        let (field, value) = match &*key {
            "state" => ("status", Value::String(value.into_owned())),
            "contextId" => ("contextId", Value::String(value.into_owned())),
            "pageToken" => ("pageToken", Value::String(value.into_owned())),
            "pageSize" => match value.parse::<i32>() {
                Ok(size) => ("pageSize", Value::from(size)),
                Err(_) => {
                    return Err(ConsoleError::BadRequest(format!(
                        "pageSize {value:?} is not a number"
                    )));
                }
            },
            _ => continue,
        };
        fields.insert(field.to_owned(), value);
    }
    fields.insert("historyLength".to_owned(), Value::from(0));
    A2aRequest::from_value(Operation::ListTasks, Value::Object(fields))
        .map_err(|e| ConsoleError::BadRequest(format!("ListTasksRequest: {e}")))
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

/// The card as served (undecoded), what it breaks, its signature's status
/// and the interface the console's client picks from it.
async fn card(console: &Console, head: &HeaderMap) -> Response {
    let frames = Arc::new(Frames::default());
    let builder = builder(&console.config, head, &frames);
    let agent_url = match console.agent_url(head, &builder).await {
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
async fn agents(console: &Console, head: &HeaderMap) -> Response {
    let frames = Arc::new(Frames::default());
    let builder = builder(&console.config, head, &frames);
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

/// `POST api/send`: body `{"request": SendMessageRequest, "stream": bool}`
/// (`stream` true when left out).
async fn send(console: &Console, head: &HeaderMap, body: Body) -> Response {
    let (request, stream) = match send_request(body).await {
        Ok(parsed) => parsed,
        Err(e) => return error_response(&e, Vec::new()),
    };
    let call = match connect(console, head).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    if !stream {
        return call.unary(A2aRequest::SendMessage(request)).await;
    }
    let opened = call.client.send_streaming_message(request).await;
    stream_answer(call, opened)
}

/// The message of a `send` body, decoded as the HTTP+JSON binding decodes
/// a `SendMessageRequest`, and whether to stream its answer.
async fn send_request(
    body: Body,
) -> Result<(switchboard_client::protocol::SendMessageRequest, bool), ConsoleError> {
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| ConsoleError::TooLarge)?;
    let bad = |what: &str| ConsoleError::BadRequest(format!("send: {what}"));
    let Ok(Value::Object(mut body)) = serde_json::from_slice::<Value>(&bytes) else {
        return Err(bad("the body is not a JSON object"));
    };
    let stream = match body.remove("stream") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(stream)) => stream,
        Some(_) => return Err(bad("`stream` is not a boolean")),
    };
    let Some(request) = body.remove("request") else {
        return Err(bad("no `request`"));
    };
    match A2aRequest::from_value(Operation::SendMessage, request) {
        Ok(A2aRequest::SendMessage(request)) => Ok((request, stream)),
        Ok(_) => Err(bad("not a SendMessageRequest")),
        Err(e) => Err(ConsoleError::BadRequest(format!("SendMessageRequest: {e}"))),
    }
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
        yield json_event("interface", &interface);
        match opened {
            Err(e) => {
                for f in frames.take() { yield json_event("frame", &f); }
                yield json_event("error", &ConsoleError::Client(e).body());
            }
            Ok(mut events) => {
                // Keeps the client (and its connection) alive with the stream.
                let _client = call.client;
                while let Some(item) = events.next().await {
                    for f in frames.take() { yield json_event("frame", &f); }
                    let event = item.map_err(ConsoleError::Client).and_then(|event| {
                        let answer = A2aResponse::SendStreamingMessage(event.event);
                        Ok(json!({"seq": event.seq, "event": to_value(&answer)?}))
                    });
                    match event {
                        Ok(event) => yield json_event("event", &event),
                        Err(e) => yield json_event("error", &e.body()),
                    }
                }
                for f in frames.take() { yield json_event("frame", &f); }
            }
        }
        yield SseFrame::named("end", "{}".to_owned());
    };
    sse_response(sse, &[])
}

fn json_event(name: &'static str, value: &Value) -> SseFrame {
    SseFrame::named(name, value.to_string())
}
