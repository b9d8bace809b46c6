//! The decoders under test, each driven through the real server.
//!
//! Every HTTP-facing target sends its input to an in-process
//! [`A2aServer`] router (no socket: a
//! request is one `tower` call), so the whole path is exercised — binding
//! detection, the preamble, the body decoder, the operation, the answer and
//! its encoder — exactly as a remote caller reaches it. The oracle is the
//! project's promise for bad input: a clear error of the kind the spec
//! names, **never a panic, a hang or a 500** (for gRPC: never `INTERNAL` or
//! `UNKNOWN`).

use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use futures::FutureExt as _;
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt as _;
use prost::Message as _;
use serde_json::{Value, json};
use switchboard_core::{InMemoryStore, RequestHandler, agent_fn};
use switchboard_protocol::{AgentCard, AgentSkill, Operation};
use switchboard_server::A2aServer;

/// What a target saw that it must never see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// A panic, with its message.
    Panic(String),
    /// An HTTP 5xx answer.
    ServerError(u16, String),
    /// A gRPC answer with status INTERNAL or UNKNOWN.
    GrpcInternal(String, String),
    /// No complete answer within [`ANSWER_LIMIT`].
    Hang,
}

/// How long one answer (head and whole body) may take.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// A fuzz target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// JSON-RPC 2.0 bodies (A2A 1.0 and 0.3 methods) to `POST /`.
    JsonRpc,
    /// HTTP+JSON: `METHOD PATH` on the first line, the body after it
    /// (A2A 1.0 routes, with and without a tenant; 0.3 routes under `/v1`).
    Rest,
    /// gRPC: the method name on the first line, then the framed protobuf
    /// body (A2A 1.0 `lf.a2a.v1` and 0.3 `a2a.v1`).
    Grpc,
    /// Task-progress extension payloads, decoded and validated.
    Progress,
    /// AG-UI input (`RunAgentInput` JSON) and AG-UI protobuf events.
    Agui,
}

impl Target {
    /// Every target.
    pub const ALL: &'static [Target] = &[
        Target::JsonRpc,
        Target::Rest,
        Target::Grpc,
        Target::Progress,
        Target::Agui,
    ];

    /// Its command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Target::JsonRpc => "jsonrpc",
            Target::Rest => "rest",
            Target::Grpc => "grpc",
            Target::Progress => "progress",
            Target::Agui => "agui",
        }
    }

    /// The target a name names.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.iter().copied().find(|t| t.name() == name)
    }
}

/// The server under test, and the id of a task it already finished (so
/// seeds reach the "found" paths too).
#[derive(Debug, Clone)]
pub struct Harness {
    router: Router,
    task_id: String,
}

impl Harness {
    /// A server with an echo agent and push configs, tasks in memory.
    pub async fn start() -> Harness {
        let agent = agent_fn(|ctx, events| async move {
            events
                .complete_with(format!("echo: {}", ctx.text()))
                .await?;
            Ok(())
        });
        let card = AgentCard::new("fuzz", "echo", "1.0")
            .with_streaming(true)
            .with_skill(AgentSkill::new("echo", "Echo", "Echoes", &["echo"]));
        let handler = RequestHandler::builder(agent, card)
            .store(std::sync::Arc::new(InMemoryStore::with_max_terminal_tasks(
                2_000,
            )))
            .build();
        let server = A2aServer::new(handler).public_url("http://127.0.0.1:9");
        let server = match server.clone().push(
            // The webhook hosts of the seed requests resolve to a public
            // address without DNS, so creation is decided the same way
            // on every machine.
            switchboard_server::push::PushOptions::new().resolver(std::sync::Arc::new(
                switchboard_server::push::StaticResolver::new()
                    .with("example.com", &[std::net::IpAddr::from([93, 184, 215, 14])]),
            )),
        ) {
            Ok(with_push) => with_push,
            Err(_) => server,
        };
        let mut harness = Harness {
            router: server.router(),
            task_id: String::new(),
        };
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": "m0", "role": "ROLE_USER", "parts": [{"text": "seed"}]}}});
        let req = http_request(
            Method::POST,
            "/",
            "application/json",
            body.to_string().into_bytes(),
        );
        if let Ok(resp) = harness.router.clone().oneshot_call(req).await
            && let Ok(v) = serde_json::from_slice::<Value>(&resp.body)
        {
            harness.task_id = v["result"]["task"]["id"]
                .as_str()
                .unwrap_or("t-1")
                .to_string();
        }
        harness
    }

    /// A harness around any router (to check the oracle itself).
    pub fn with_router(router: Router) -> Harness {
        Harness {
            router,
            task_id: String::new(),
        }
    }

    /// Valid inputs of `target`, the starting points of mutation.
    pub fn seeds(&self, target: Target) -> Vec<Vec<u8>> {
        let id = if self.task_id.is_empty() {
            "t-1"
        } else {
            &self.task_id
        };
        match target {
            Target::JsonRpc => jsonrpc_seeds(id),
            Target::Rest => rest_seeds(id),
            Target::Grpc => grpc_seeds(id),
            Target::Progress => progress_seeds(),
            Target::Agui => agui_seeds(),
        }
    }

    /// Runs one input; `Err` is a finding.
    pub async fn run(&self, target: Target, input: &[u8]) -> Result<(), Finding> {
        let run = async {
            match target {
                Target::JsonRpc => {
                    self.http(http_request(
                        Method::POST,
                        "/",
                        "application/json",
                        input.to_vec(),
                    ))
                    .await
                }
                Target::Rest => self.rest(input).await,
                Target::Grpc => self.grpc(input).await,
                Target::Progress => {
                    decode_progress(input);
                    Ok(())
                }
                Target::Agui => {
                    decode_agui(input);
                    Ok(())
                }
            }
        };
        match AssertUnwindSafe(tokio::time::timeout(ANSWER_LIMIT, run))
            .catch_unwind()
            .await
        {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(Finding::Hang),
            Err(panic) => Err(Finding::Panic(panic_message(&*panic))),
        }
    }

    async fn http(&self, req: Request<Body>) -> Result<(), Finding> {
        let answer = self.router.clone().oneshot_call(req).await?;
        if answer.status.is_server_error() {
            let body = String::from_utf8_lossy(&answer.body[..answer.body.len().min(300)]);
            return Err(Finding::ServerError(
                answer.status.as_u16(),
                body.into_owned(),
            ));
        }
        if let Some((code, message)) = answer.grpc_status {
            // 2 UNKNOWN, 13 INTERNAL: the server's own failure, not the
            // input's — except the framing errors gRPC itself classes as
            // INTERNAL ("Error parsing request proto", compression misuse:
            // grpc/doc/statuscodes.md, codes generated by the library).
            if (code == "2" || code == "13") && !is_grpc_framing_error(&message) {
                return Err(Finding::GrpcInternal(code, message));
            }
        }
        Ok(())
    }

    async fn rest(&self, input: &[u8]) -> Result<(), Finding> {
        let (head, body) = split_line(input);
        let head = String::from_utf8_lossy(head);
        let (method, path) = head.split_once(' ').unwrap_or(("GET", &head));
        let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET);
        // An unparsable path never reaches a server (the client's HTTP
        // library refuses it), so it is not a server input.
        if path.parse::<http::Uri>().is_err() || !path.starts_with('/') {
            return Ok(());
        }
        self.http(http_request(
            method,
            path,
            "application/json",
            body.to_vec(),
        ))
        .await
    }

    async fn grpc(&self, input: &[u8]) -> Result<(), Finding> {
        let (head, body) = split_line(input);
        let path = String::from_utf8_lossy(head);
        if path.parse::<http::Uri>().is_err() || !path.starts_with('/') {
            return Ok(());
        }
        let mut req = http_request(Method::POST, &path, "application/grpc", body.to_vec());
        req.headers_mut()
            .insert("te", http::HeaderValue::from_static("trailers"));
        *req.version_mut() = http::Version::HTTP_2;
        self.http(req).await
    }
}

/// The parts of an answer the oracle looks at.
struct Answer {
    status: StatusCode,
    body: bytes::Bytes,
    grpc_status: Option<(String, String)>,
}

trait OneshotCall {
    async fn oneshot_call(self, req: Request<Body>) -> Result<Answer, Finding>;
}

impl OneshotCall for Router {
    async fn oneshot_call(self, req: Request<Body>) -> Result<Answer, Finding> {
        use tower::ServiceExt as _;
        let Ok(resp) = self.oneshot(req).await;
        let status = resp.status();
        let header_status = grpc_status(resp.headers());
        let collected = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| Finding::ServerError(status.as_u16(), format!("body: {e}")))?;
        let trailer_status = collected.trailers().and_then(grpc_status);
        Ok(Answer {
            status,
            grpc_status: trailer_status.or(header_status),
            body: collected.to_bytes(),
        })
    }
}

fn grpc_status(headers: &http::HeaderMap) -> Option<(String, String)> {
    let code = headers.get("grpc-status")?.to_str().ok()?.to_string();
    let message = headers
        .get("grpc-message")
        .and_then(|m| m.to_str().ok())
        .unwrap_or("")
        .to_string();
    Some((code, message))
}

/// Whether a `grpc-message` (percent-encoded) is one of the framing errors
/// the gRPC library answers INTERNAL by its own specification: a truncated
/// frame, a missing message, a compression flag without an encoding.
fn is_grpc_framing_error(message: &str) -> bool {
    let message = message.replace("%20", " ");
    [
        "Unexpected EOF decoding stream",
        "Missing request message",
        "compressed-flag but no grpc-encoding",
        "invalid compression flag",
    ]
    .iter()
    .any(|known| message.contains(known))
}

fn http_request(method: Method, path: &str, content_type: &str, body: Vec<u8>) -> Request<Body> {
    let mut req = Request::new(Body::from(body));
    *req.method_mut() = method;
    *req.uri_mut() = path.parse().unwrap_or_else(|_| http::Uri::from_static("/"));
    if let Ok(ct) = http::HeaderValue::from_str(content_type) {
        req.headers_mut().insert(http::header::CONTENT_TYPE, ct);
    }
    req.extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40_000))));
    req
}

fn split_line(input: &[u8]) -> (&[u8], &[u8]) {
    match input.iter().position(|b| *b == b'\n') {
        Some(i) => (&input[..i], &input[i + 1..]),
        None => (input, &[]),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// 1.0 params per operation (`{id}` = an existing task).
fn params_1_0(op: Operation, id: &str) -> Value {
    let message = json!({"messageId": "m1", "role": "ROLE_USER",
        "parts": [{"text": "hi"}, {"data": {"k": [1, 2]}}, {"url": "https://example.com/f", "mediaType": "text/plain"}],
        "metadata": {"a": 1}});
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage => json!({
            "message": message,
            "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 3},
            "metadata": {"x": "y"}}),
        Operation::GetTask => json!({"id": id, "historyLength": 2}),
        Operation::ListTasks => {
            json!({"pageSize": 5, "status": "TASK_STATE_COMPLETED", "historyLength": 1})
        }
        Operation::CancelTask | Operation::SubscribeToTask => json!({"id": id}),
        Operation::CreateTaskPushNotificationConfig => json!({"taskId": id,
            "url": "https://example.com/hook", "token": "tok",
            "authentication": {"scheme": "Bearer", "credentials": "c"}}),
        Operation::GetTaskPushNotificationConfig | Operation::DeleteTaskPushNotificationConfig => {
            json!({"taskId": id, "id": "cfg-1"})
        }
        Operation::ListTaskPushNotificationConfigs => json!({"taskId": id, "pageSize": 2}),
        _ => json!({}),
    }
}

/// 0.3 params per operation.
fn params_0_3(op: Operation, id: &str) -> Value {
    let message = json!({"kind": "message", "messageId": "m1", "role": "user",
        "parts": [{"kind": "text", "text": "hi"}, {"kind": "data", "data": {"k": 1}},
                  {"kind": "file", "file": {"uri": "https://example.com/f", "mimeType": "text/plain"}}]});
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage => {
            json!({"message": message, "configuration": {"blocking": true, "historyLength": 2}})
        }
        Operation::GetTask => json!({"id": id, "historyLength": 1}),
        Operation::CreateTaskPushNotificationConfig => json!({"taskId": id,
            "pushNotificationConfig": {"url": "https://example.com/hook", "token": "t"}}),
        Operation::GetTaskPushNotificationConfig | Operation::DeleteTaskPushNotificationConfig => {
            json!({"id": id, "pushNotificationConfigId": "cfg-1"})
        }
        _ => json!({"id": id}),
    }
}

fn jsonrpc_seeds(id: &str) -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (i, op) in Operation::ALL.iter().enumerate() {
        seeds.push(
            json!({"jsonrpc": "2.0", "id": i, "method": op.name(), "params": params_1_0(*op, id)}),
        );
        if let Some(name) = op.v03_name() {
            seeds.push(json!({"jsonrpc": "2.0", "id": format!("r{i}"), "method": name, "params": params_0_3(*op, id)}));
        }
    }
    seeds.push(json!([{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": id}}]));
    seeds
        .into_iter()
        .map(|v| v.to_string().into_bytes())
        .collect()
}

fn rest_seeds(id: &str) -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for op in Operation::ALL {
        let route = op.rest();
        let path = route
            .template
            .replace(
                "{id}",
                if route.template.contains("{taskId}") {
                    "cfg-1"
                } else {
                    id
                },
            )
            .replace("{taskId}", id);
        let body = params_1_0(*op, id).to_string();
        for verb in route.verbs {
            let query = if route.query.is_empty() {
                ""
            } else {
                "?pageSize=2&historyLength=1"
            };
            for prefix in ["", "/tenant-a"] {
                seeds.push(format!("{verb} {prefix}{path}{query}\n{body}").into_bytes());
            }
        }
    }
    // A2A 0.3's REST routes.
    seeds.push(
        format!(
            "POST /v1/message:send\n{}",
            params_0_3(Operation::SendMessage, id)
        )
        .into_bytes(),
    );
    seeds.push(format!("GET /v1/tasks/{id}?historyLength=1\n").into_bytes());
    seeds.push(format!("POST /v1/tasks/{id}:cancel\n{{}}").into_bytes());
    seeds
}

fn frame(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 5);
    out.push(0);
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out
}

fn grpc_seeds(id: &str) -> Vec<Vec<u8>> {
    use switchboard_proto::v1 as pb;
    let message = pb::Message {
        message_id: "m1".into(),
        role: 1,
        parts: vec![pb::Part {
            content: Some(pb::part::Content::Text("hi".into())),
            ..Default::default()
        }],
        ..Default::default()
    };
    let send = pb::SendMessageRequest {
        message: Some(message),
        ..Default::default()
    }
    .encode_to_vec();
    let by_id = pb::GetTaskRequest {
        id: id.into(),
        history_length: Some(2),
        ..Default::default()
    }
    .encode_to_vec();
    let list = pb::ListTasksRequest {
        page_size: Some(3),
        ..Default::default()
    }
    .encode_to_vec();
    let mut seeds = Vec::new();
    for service in ["lf.a2a.v1.A2AService", "a2a.v1.A2AService"] {
        for (method, body) in [
            ("SendMessage", &send),
            ("SendStreamingMessage", &send),
            ("GetTask", &by_id),
            ("CancelTask", &by_id),
            ("SubscribeToTask", &by_id),
            ("TaskSubscription", &by_id),
            ("ListTasks", &list),
            ("GetTaskPushNotificationConfig", &by_id),
            ("ListTaskPushNotificationConfigs", &by_id),
            ("GetExtendedAgentCard", &Vec::new()),
        ] {
            let mut seed = format!("/{service}/{method}\n").into_bytes();
            seed.extend(frame(body));
            seeds.push(seed);
        }
    }
    seeds
}

fn progress_seeds() -> Vec<Vec<u8>> {
    [
        json!({"trackers": [{"id": "a", "progress": 3, "total": 10, "message": "copying", "status": "running"}]}),
        json!({"trackers": [{"id": "a", "progress": 10, "total": 10, "status": "completed"},
                            {"id": "b", "parent": "a", "progress": 0.5}]}),
    ]
    .iter()
    .map(|v| v.to_string().into_bytes())
    .collect()
}

fn decode_progress(input: &[u8]) {
    if let Ok(value) = serde_json::from_slice::<Value>(input) {
        let limits = switchboard_protocol::progress::ProgressLimits::default();
        if let Ok(payload) =
            switchboard_protocol::progress::ProgressPayload::from_value(&value, &limits)
        {
            let _ = switchboard_protocol::progress::validate(&payload, &limits);
        }
    }
}

fn agui_seeds() -> Vec<Vec<u8>> {
    [json!({"threadId": "th", "runId": "r1", "state": {"a": 1},
        "messages": [{"id": "m1", "role": "user", "content": "hi"},
                     {"id": "m2", "role": "assistant", "content": "", "toolCalls": [
                        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}],
        "tools": [{"name": "f", "description": "d", "parameters": {"type": "object"}}],
        "context": [{"description": "d", "value": "v"}], "forwardedProps": {}})]
    .iter()
    .map(|v| v.to_string().into_bytes())
    .collect()
}

fn decode_agui(input: &[u8]) {
    let _ = serde_json::from_slice::<switchboard_agui::events::RunAgentInput>(input);
    let _ = serde_json::from_slice::<switchboard_agui::events::Event>(input);
    let _ = switchboard_agui::proto::decode_event(input);
}
