//! Test harness: a real server on a loopback port, and a raw JSON-RPC
//! client that shows exactly what goes over the wire.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use switchboard_client::{A2AClient, ClientError, StreamEvent};
use switchboard_core::{InMemoryStore, PushConfigLimits, RequestHandler};
use switchboard_protocol::{
    A2AError, GetTaskRequest, Message, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef, TaskState,
};
use switchboard_runtimes::builtin::{DemoAgent, demo_card};
use switchboard_server::A2aServer;
use tokio::sync::oneshot;

pub mod edge;
// The same file as `proc::io`: a binary may hold both harnesses.
#[allow(clippy::duplicate_mod)]
#[path = "../proc/io.rs"]
pub mod io;
pub mod push;

// Each test binary uses some of them.
#[allow(unused_imports)]
pub use io::{failure_stderr, success_stdout, uuid};

/// The header of a 1.0 call.
pub const V1: &[(&str, &str)] = &[("A2A-Version", "1.0")];

/// Every binding × protocol version a server offers, as (binding, version).
pub const COMBOS: [(&str, &str); 6] = [
    ("JSONRPC", "1.0"),
    ("HTTP+JSON", "1.0"),
    ("GRPC", "1.0"),
    ("JSONRPC", "0.3"),
    ("HTTP+JSON", "0.3"),
    ("GRPC", "0.3"),
];

/// The demo agent, streaming without delay, on an in-memory store that also
/// keeps push configs (to receivers on 127.0.0.1 only).
pub fn demo_push_handler() -> RequestHandler {
    let store = Arc::new(InMemoryStore::new());
    let limits = PushConfigLimits {
        allow_hosts: vec!["127.0.0.1".into()],
        ..Default::default()
    };
    RequestHandler::builder(
        DemoAgent {
            chunk_delay: Duration::ZERO,
        },
        demo_card(),
    )
    .store(store.clone())
    .push(store, limits)
    .build()
}

/// The demo agent with its default pacing; no store or push set up.
pub fn demo_handler() -> RequestHandler {
    RequestHandler::builder(DemoAgent::default(), demo_card()).build()
}

/// Sends `request`, any protobuf message, as a unary gRPC call to the
/// method at `path`, whatever that method's own request type is; the error
/// status the server answers with (panics on a success).
pub async fn raw_unary_error<M>(
    channel: tonic::transport::Channel,
    path: &'static str,
    request: tonic::Request<M>,
) -> tonic::Status
where
    M: prost::Message + Send + Sync + 'static,
{
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    // Whatever comes back is not read: `()` decodes any answer.
    let codec: tonic_prost::ProstCodec<M, ()> = tonic_prost::ProstCodec::default();
    grpc.unary(request, http::uri::PathAndQuery::from_static(path), codec)
        .await
        .unwrap_err()
}

/// A message of two varint fields, tags 1 and 2. Sent in place of a
/// request that has a string at a tag given a non-zero value here, it is
/// bytes that are not that request (fields that are zero are not sent).
#[derive(Clone, PartialEq, prost::Message)]
pub struct VarintFields {
    #[prost(int64, tag = "1")]
    pub first: i64,
    #[prost(int64, tag = "2")]
    pub second: i64,
}

/// Sends `request`, bytes that are not the message the method at `path`
/// takes, as a unary call: the answer is a Parse error (INVALID_ARGUMENT,
/// reason PARSE_ERROR of the A2A domain), not INTERNAL.
pub async fn assert_parse_error<M>(
    channel: tonic::transport::Channel,
    path: &'static str,
    request: tonic::Request<M>,
) where
    M: prost::Message + Send + Sync + 'static,
{
    use tonic_types::StatusExt;
    let st = raw_unary_error(channel, path, request).await;
    assert_eq!(st.code(), tonic::Code::InvalidArgument, "{st:?}");
    let info = st.get_details_error_info().expect("an ErrorInfo detail");
    assert_eq!(
        (info.reason.as_str(), info.domain.as_str()),
        ("PARSE_ERROR", "a2a-protocol.org")
    );
}

/// The `first-event-id` a gRPC stream's answer names in its metadata: the
/// sequence number of its first item.
pub fn first_event_id<T>(resp: &tonic::Response<T>) -> u64 {
    resp.metadata()
        .get("first-event-id")
        .expect("a first-event-id")
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Every item of a gRPC stream, to its end (panics on an error status).
pub async fn grpc_items<T>(resp: tonic::Response<tonic::Streaming<T>>) -> Vec<T> {
    resp.into_inner().map(Result::unwrap).collect().await
}

/// `request` with the gRPC metadata `key: value` added.
pub fn with_metadata<T>(
    mut request: tonic::Request<T>,
    key: &'static str,
    value: &str,
) -> tonic::Request<T> {
    request.metadata_mut().insert(key, value.parse().unwrap());
    request
}

/// `request` resuming a stream after event `last_event_id` (its
/// `last-event-id` metadata).
pub fn resuming<T>(request: tonic::Request<T>, last_event_id: &str) -> tonic::Request<T> {
    with_metadata(request, "last-event-id", last_event_id)
}

/// The extensions a gRPC answer says are active (its `a2a-extensions`
/// metadata), if it names any.
pub fn echoed_extensions<T>(resp: &tonic::Response<T>) -> Option<&str> {
    let value = resp.metadata().get("a2a-extensions")?;
    Some(value.to_str().unwrap())
}

/// Runs the `switchboard` CLI with `args` to its end; fails after 30 s.
pub async fn run_cli<I, S>(args: I) -> std::process::Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the CLI hung")
    .unwrap()
}

/// The task of a `SendMessage` answer (panics on a direct message).
pub fn task_of(r: SendMessageResponse) -> Task {
    match r {
        SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// The A2A error a client call failed with (panics on any other failure).
pub fn protocol_error(e: ClientError) -> A2AError {
    match e {
        ClientError::Protocol(a) => a,
        other => panic!("expected an A2A error, got {other:?}"),
    }
}

/// GetTask of `id` with at most `history_length` history messages.
pub fn get_with_history(id: &str, history_length: i32) -> GetTaskRequest {
    GetTaskRequest {
        tenant: None,
        id: id.into(),
        history_length: Some(history_length),
    }
}

/// A push config for `task_id` to post to `url`, with `token` if given;
/// the server names it.
pub fn push_config(task_id: &str, url: &str, token: Option<&str>) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: None,
        id: None,
        task_id: Some(task_id.into()),
        url: url.into(),
        token: token.map(Into::into),
        authentication: None,
    }
}

/// The reference to push config `id` of `task_id`.
pub fn push_config_ref(task_id: &str, id: &str) -> TaskPushNotificationConfigRef {
    TaskPushNotificationConfigRef {
        tenant: None,
        task_id: task_id.into(),
        id: id.into(),
    }
}

/// The four push config operations through `c`, on the task `task_id`:
/// create a config (to `url`, with a token), get it and list it (both
/// return it as created), delete it (the list is empty again). Returns the
/// error a get of the deleted config then gets.
pub async fn push_config_round_trip(c: &A2AClient, task_id: &str, url: &str) -> ClientError {
    let created = c
        .create_push_config(push_config(task_id, url, Some("tok")))
        .await
        .unwrap();
    let id = created.id.clone().expect("the server names the config");
    assert_eq!(created.task_id.as_deref(), Some(task_id));
    assert_eq!(created.token.as_deref(), Some("tok"));
    let r = push_config_ref(task_id, &id);
    assert_eq!(c.get_push_config(r.clone()).await.unwrap(), created);
    let listed = c.list_push_configs(task_id).await.unwrap();
    assert_eq!(listed.configs, [created]);
    c.delete_push_config(r.clone()).await.unwrap();
    let listed = c.list_push_configs(task_id).await.unwrap();
    assert!(
        listed.configs.is_empty(),
        "deleted, still listed: {listed:?}"
    );
    c.get_push_config(r).await.unwrap_err()
}

/// A direct reply: `/message hi there` through `c` comes back as a message,
/// not a task.
pub async fn assert_direct_message(c: &A2AClient) {
    match c.send_text("/message hi there").await.unwrap() {
        SendMessageResponse::Message(m) => assert!(m.text().contains("hi there")),
        other => panic!("expected a message, got {other:?}"),
    }
}

/// The errors of the operations on a task through `c` arrive typed, with
/// their ids: an unknown task, a cancel or subscription of `finished`.
pub async fn assert_typed_errors(c: &A2AClient, finished: &Task) {
    let err = protocol_error(c.get_task("no-such-task").await.unwrap_err());
    assert_eq!(err, A2AError::TaskNotFound("no-such-task".into()));
    let err = protocol_error(c.cancel_task(finished.id.as_str()).await.unwrap_err());
    assert!(
        matches!(err, A2AError::TaskNotCancelable { ref task_id, .. } if *task_id == finished.id),
        "{err:?}"
    );
    let err = match c.subscribe_to_task(finished.id.as_str()).await {
        Err(e) => protocol_error(e),
        Ok(_) => panic!("subscribing to a finished task must fail"),
    };
    assert!(matches!(err, A2AError::UnsupportedOperation(_)), "{err:?}");
}

/// Streams `text` through `c` to the end: the task first, then artifact
/// updates, the completed status last, numbered one by one. Returns the
/// items.
pub async fn stream_to_completion(c: &A2AClient, text: &str) -> Vec<StreamEvent> {
    let items: Vec<StreamEvent> = c
        .send_streaming_message(Message::user_text(text))
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    assert!(
        matches!(items[0].event, StreamResponse::Task(_)),
        "{items:?}"
    );
    assert_eq!(
        items.last().unwrap().event.state(),
        Some(TaskState::Completed)
    );
    let first = items[0].seq.expect("numbered items");
    for (k, it) in items.iter().enumerate() {
        assert_eq!(it.seq, Some(first + k as u64));
    }
    assert!(
        items
            .iter()
            .any(|i| matches!(i.event, StreamResponse::ArtifactUpdate(_)))
    );
    items
}

/// Starts `/long 30` through `c` without waiting for it (it runs for 30 s);
/// the task as it started, not finished.
pub async fn send_long(c: &A2AClient) -> Task {
    let long = task_of(
        c.send_message(SendMessageRequest {
            configuration: Some(SendMessageConfiguration {
                return_immediately: true,
                ..Default::default()
            }),
            ..SendMessageRequest::new(Message::user_text("/long 30"))
        })
        .await
        .unwrap(),
    );
    assert!(!long.status.state.is_terminal(), "{long:?}");
    long
}

/// Subscribes through `c` to the running task `long`, then cancels it: the
/// subscription starts with the task and ends with the cancel.
pub async fn subscribe_then_cancel(c: &A2AClient, long: &Task) {
    let mut sub = c.subscribe_to_task(long.id.as_str()).await.unwrap();
    let first = sub.next().await.unwrap().unwrap();
    assert!(
        matches!(first.event, StreamResponse::Task(ref t) if t.id == long.id),
        "a subscription starts with the task: {first:?}"
    );
    let canceled = c.cancel_task(long.id.as_str()).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let rest: Vec<_> = tokio::time::timeout(Duration::from_secs(10), sub.collect::<Vec<_>>())
        .await
        .expect("the subscription ends after the cancel");
    assert_eq!(
        rest.last().unwrap().as_ref().unwrap().event.state(),
        Some(TaskState::Canceled)
    );
}

/// A server running in this process on 127.0.0.1:<free port>.
pub struct TestServer {
    pub base: String,
    pub http: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    pub async fn start(handler: RequestHandler) -> TestServer {
        Self::start_with(|s| s, handler).await
    }

    pub async fn start_with(
        configure: impl FnOnce(A2aServer) -> A2aServer,
        handler: RequestHandler,
    ) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let base = format!("http://{addr}");
        let server = configure(A2aServer::new(handler).public_url(&base));
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            server
                .serve(listener, async move {
                    let _ = rx.await;
                })
                .await
                .unwrap();
        });
        TestServer {
            base,
            http: reqwest::Client::new(),
            stop: Some(tx),
            task: Some(task),
        }
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(15), t).await;
        }
    }

    /// Our client on the card's interface of `binding` and `version`
    /// (asserted: it is the one the client chose), each call bounded by 20 s.
    pub async fn client_on(&self, binding: &str, version: &str) -> A2AClient {
        let c = A2AClient::builder()
            .preferred_bindings([binding])
            .preferred_versions([version])
            .timeout(Duration::from_secs(20))
            .connect(&self.base)
            .await
            .unwrap();
        assert_eq!(c.interface().protocol_binding, binding);
        assert_eq!(c.interface().protocol_version, version);
        c
    }

    /// Our client on the card's GRPC interface of `version`, whose URL is
    /// the server's bare `host:port` (gRPC names no scheme).
    pub async fn grpc_client(&self, version: &str) -> A2AClient {
        let c = self.client_on("GRPC", version).await;
        assert_eq!(c.endpoint(), self.base.trim_start_matches("http://"));
        c
    }

    /// A gRPC channel (one HTTP/2 connection) to the server.
    pub async fn grpc_channel(&self) -> tonic::transport::Channel {
        tonic::transport::Channel::from_shared(self.base.clone())
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    pub fn url(&self) -> String {
        format!("{}/", self.base)
    }

    /// GETs `path` (below the base URL) and decodes the body as JSON,
    /// whatever the status.
    pub async fn get_json(&self, path: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The agent card the server publishes, as JSON.
    pub async fn card(&self) -> Value {
        self.get_json("/.well-known/agent-card.json").await
    }

    /// POSTs a JSON-RPC call with `A2A-Version: 1.0`; returns the decoded body.
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        self.post_json(&body.to_string(), V1).await.1
    }

    /// SendMessage over JSON-RPC of a user message with `text`; returns the
    /// decoded body.
    pub async fn rpc_send_text(&self, text: &str) -> Value {
        self.rpc("SendMessage", json!({"message": user_msg(text)}))
            .await
    }

    /// SendMessage over JSON-RPC of a user message with `text` and the
    /// send `configuration`; returns the decoded body.
    pub async fn rpc_send_configured(&self, text: &str, configuration: Value) -> Value {
        let params = json!({"message": user_msg(text), "configuration": configuration});
        self.rpc("SendMessage", params).await
    }

    /// Sends `n` messages in the context `context_id` over JSON-RPC, each
    /// making a task ("task 0", "task 1", …): something to list.
    pub async fn send_tasks_in_context(&self, context_id: &str, n: usize) {
        for i in 0..n {
            let mut m = user_msg(&format!("task {i}"));
            m["contextId"] = json!(context_id);
            result(&self.rpc("SendMessage", json!({"message": m})).await);
        }
    }

    /// POSTs raw bytes with the given headers (Content-Type defaults to JSON).
    pub async fn post_json(
        &self,
        body: &str,
        headers: &[(&str, &str)],
    ) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
        self.post_json_at("/", body, headers).await
    }

    /// POSTs raw bytes to `path` (below the base URL) with the given headers
    /// (Content-Type defaults to JSON); the answer must be JSON.
    pub async fn post_json_at(
        &self,
        path: &str,
        body: &str,
        headers: &[(&str, &str)],
    ) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
        let (status, text, hdrs) = self
            .send(reqwest::Method::POST, path, Some(body.to_string()), headers)
            .await;
        let v: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
        (status, v, hdrs)
    }

    /// Sends `method path` (below the base URL) with exactly these headers
    /// and `body`, if any (its Content-Type defaults to JSON); returns the
    /// status, the body as text and the headers. Fails after 30 s without
    /// an answer, or 60 s more without its end.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<String>,
        headers: &[(&str, &str)],
    ) -> (reqwest::StatusCode, String, reqwest::header::HeaderMap) {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                req = req.header("Content-Type", "application/json");
            }
            req = req.body(b);
        }
        let (status, hdrs, body) = io::whole_answer(req, headers).await;
        (status, String::from_utf8_lossy(&body).into_owned(), hdrs)
    }

    /// Opens an SSE call; returns a stream of (id, JSON-RPC response) frames.
    pub async fn sse(&self, method: &str, params: Value) -> SseCall {
        let body = json!({"jsonrpc": "2.0", "id": "s1", "method": method, "params": params});
        self.sse_post(
            &body,
            &[("A2A-Version", "1.0"), ("Accept", "text/event-stream")],
        )
        .await
    }

    /// POSTs the JSON-RPC `body` with the given headers (and a JSON
    /// Content-Type) for a stream, whatever the version or method.
    pub async fn sse_post(&self, body: &Value, headers: &[(&str, &str)]) -> SseCall {
        let mut req = self
            .http
            .post(self.url())
            .header("Content-Type", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.body(body.to_string()).send().await.unwrap();
        SseCall { resp: Some(resp) }
    }
}

pub struct SseCall {
    pub resp: Option<reqwest::Response>,
}

/// One SSE frame.
#[derive(Debug, Clone)]
pub struct Frame {
    pub id: Option<String>,
    pub event: String,
    pub data: Value,
}

impl SseCall {
    pub fn content_type(&self) -> String {
        self.resp.as_ref().unwrap().headers()["content-type"]
            .to_str()
            .unwrap()
            .to_string()
    }

    /// Reads frames until the server closes the stream (bounded by a timeout).
    pub async fn collect(mut self) -> Vec<Frame> {
        use eventsource_stream::Eventsource;
        let resp = self.resp.take().unwrap();
        let mut events = Box::pin(resp.bytes_stream().eventsource());
        let mut out = Vec::new();
        while let Some(frame) = next_frame(&mut events).await {
            out.push(frame);
        }
        out
    }

    /// Waits for the first frame, then reads the rest in the background
    /// until the server closes the stream; the task's frames include the
    /// first. For a subscription the first frame is the task snapshot, so
    /// once this returns the server has the subscriber: whatever happens to
    /// the task from then on reaches it.
    pub async fn follow(mut self) -> tokio::task::JoinHandle<Vec<Frame>> {
        use eventsource_stream::Eventsource;
        let resp = self.resp.take().unwrap();
        let mut events = Box::pin(resp.bytes_stream().eventsource());
        let first = next_frame(&mut events)
            .await
            .expect("the stream ended before its first frame");
        tokio::spawn(async move {
            let mut out = vec![first];
            while let Some(frame) = next_frame(&mut events).await {
                out.push(frame);
            }
            out
        })
    }
}

/// The next frame of an SSE stream; `None` at its end. Panics on an error
/// or when nothing comes for 20 s.
async fn next_frame<S, E>(events: &mut S) -> Option<Frame>
where
    S: futures::Stream<Item = Result<eventsource_stream::Event, E>> + Unpin,
    E: std::fmt::Display,
{
    match tokio::time::timeout(Duration::from_secs(20), events.next())
        .await
        .expect("stream stalled")
    {
        None => None,
        Some(Ok(ev)) => Some(Frame {
            id: if ev.id.is_empty() { None } else { Some(ev.id) },
            event: ev.event,
            data: serde_json::from_str(&ev.data).unwrap(),
        }),
        Some(Err(e)) => panic!("SSE error: {e}"),
    }
}

/// Walks a task list page by page: `page(token)` fetches the page at
/// `token` ("" first) and returns the list result as JSON. Asserts that
/// every page reports `total` tasks and a page size of `size`, and that the
/// pages hold each task once; returns the tasks of all pages.
pub async fn all_pages<F, Fut>(mut page: F, total: u64, size: u64) -> Vec<Value>
where
    F: FnMut(String) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let mut token = String::new();
    let mut tasks = Vec::new();
    loop {
        let r = page(token).await;
        assert_eq!(r["totalSize"], total, "{r}");
        assert_eq!(r["pageSize"], size, "{r}");
        tasks.extend(r["tasks"].as_array().unwrap().iter().cloned());
        token = r["nextPageToken"].as_str().unwrap().to_string();
        if token.is_empty() {
            break;
        }
    }
    let mut ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len() as u64, total);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len() as u64, total, "a task on two pages");
    tasks
}

/// A user message in 1.0 JSON.
pub fn user_msg(text: &str) -> Value {
    json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// The error code of a JSON-RPC error body (panics on success).
pub fn err_code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error, got {v}"))
}

/// The `result` of a JSON-RPC body (panics on error).
pub fn result(v: &Value) -> &Value {
    assert!(v.get("error").is_none(), "unexpected error: {v}");
    &v["result"]
}

/// All text parts of an artifact joined.
pub fn artifact_text(artifact: &Value) -> String {
    artifact["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("")
}
