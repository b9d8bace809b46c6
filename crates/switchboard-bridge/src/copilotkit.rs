//! CopilotKit's runtime routes over the bridge: a CopilotKit frontend
//! (`@copilotkit/core`'s `CopilotKitCore`, whose agents are
//! `ProxiedCopilotRuntimeAgent`s) points its `runtimeUrl` at the bridge, with
//! no CopilotKit runtime in between.
//!
//! CopilotKit's runtime serves, under a base path ([`DEFAULT_BASE_PATH`]),
//! one route per operation ("multi-route", what the client tries first):
//!
//! | route | here |
//! |---|---|
//! | `GET {base}/info` | the one agent served, as CopilotKit's runtime info (`{version, agents: {<id>: {name, className, description}}, audioFileTranscriptionEnabled, mode: "sse"}`) |
//! | `POST {base}/agent/{id}/run` | a bridged run ([`crate::run`](mod@crate::run)) in the thread's context |
//! | `POST {base}/agent/{id}/connect` | the thread's latest task again: a reconnect run (its snapshot, then its updates while it runs) |
//! | `POST {base}/agent/{id}/stop/{threadId}` | `CancelTask` of the thread's running tasks; `{"stopped": bool, …}` |
//! | `POST {base}` | the same four as one route ("single-route"): a JSON envelope `{method, params, body}`, `method` one of `info`, `agent/run`, `agent/connect`, `agent/stop` |
//!
//! **Threads.** CopilotKit names a conversation by its `threadId` and
//! nothing else: a page that reloads asks to connect to a thread, a stop
//! button stops a thread. The bridge keeps no state, so a thread is an A2A
//! context whose id is derived from the caller and the thread
//! ([`crate::Backend::thread_context_id`]: `sbb-<caller tag>.t<hash of the
//! threadId>`). A run names that context (`forwardedProps.a2a.contextId`,
//! unless the client addresses a task or context itself), and connect and
//! stop find the thread's tasks with `ListTasks` of it. Another caller's
//! thread of the same name is another context: it cannot be connected to
//! or stopped, and a restarted bridge, or a replica, finds the same
//! tasks.
//!
//! **Connect never sends.** The connect input carries the client's
//! conversation; the messages of its trailing turn that no task of the
//! thread holds are left out, so connecting only shows what the agent
//! has. A page that reloaded sends no messages: it gets the whole thread
//! back, the earlier tasks' history and artifact text (of the most recent
//! [`crate::backend::CONTEXT_TASKS_READ`] tasks) before the latest task's
//! snapshot. A thread with no task yet is an empty stream (CopilotKit's
//! own runtime answers an unknown thread the same way).
//!
//! **The same door as `/agui`.** The router is built from the same
//! [`BackendFactory`] and [`EndpointConfig`] as [`crate::endpoint`] and is
//! meant to sit behind the same authentication layer (`switchboard bridge`
//! and `serve` put both routers behind one). Bodies are read up to
//! [`EndpointConfig::body_limit`] (`413` past it, `415` if not JSON); a
//! run or connect body that is not a `RunAgentInput` is a run that ends
//! in `RUN_ERROR`, as on `/agui`. An agent id other than
//! [`CopilotKitConfig::agent_id`] is `404` with
//! `{"error": "Agent not found", "message"}`; a malformed envelope or
//! parameter is `400` with `{"error": "invalid_request", "message"}`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::{StreamExt, stream};
use http::StatusCode;
use http::request::Parts;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use switchboard_agui::events::{
    AssistantMessage, Content, Message as AguiMessage, RunAgentInput, UserMessage,
};
use switchboard_protocol::{Role, Task};

use crate::BridgeError;
use crate::backend::{Backend, BackendFactory};
use crate::endpoint::{
    EndpointConfig, accepted_encoding, parse_input, read_json_body, refused, respond,
};
use crate::input::METADATA_KEY;
use crate::options::FORWARDED_PROPS_KEY;
use crate::run::run;

/// Where CopilotKit's docs mount the runtime (`/api/copilotkit`).
pub const DEFAULT_BASE_PATH: &str = "/api/copilotkit";

/// The `className` the info route gives the agent (CopilotKit's runtime
/// reports its agent's JavaScript class; the client only displays it).
const CLASS_NAME: &str = "SwitchboardBridge";

/// How the CopilotKit routes are served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopilotKitConfig {
    /// The base path (`/api/copilotkit`): the client's `runtimeUrl`.
    pub base_path: String,
    /// The id the agent is served under (the bridged agent's name, unless
    /// configured).
    pub agent_id: String,
    /// The agent's description in the info route.
    pub description: String,
    /// Body limit, keep-alive and run configuration, as `/agui`'s.
    pub endpoint: EndpointConfig,
}

/// Why a CopilotKit request is refused before any run starts. Each maps to
/// one status and JSON body ([`IntoResponse`]).
#[derive(Debug, thiserror::Error)]
pub enum CopilotKitError {
    /// The path or envelope names an agent the router does not serve.
    #[error("Agent '{0}' does not exist")]
    UnknownAgent(String),
    /// A malformed single-route envelope or parameter.
    #[error("{0}")]
    InvalidRequest(String),
    /// The backend could not serve the caller, or the agent failed.
    #[error(transparent)]
    Bridge(#[from] BridgeError),
}

impl IntoResponse for CopilotKitError {
    fn into_response(self) -> Response {
        let message = self.to_string();
        let (status, body) = match &self {
            CopilotKitError::UnknownAgent(_) => (
                StatusCode::NOT_FOUND,
                json!({"error": "Agent not found", "message": message}),
            ),
            CopilotKitError::InvalidRequest(_) => (
                StatusCode::BAD_REQUEST,
                json!({"error": "invalid_request", "message": message}),
            ),
            CopilotKitError::Bridge(e) => {
                let status = match e {
                    BridgeError::AgentUnavailable(_)
                    | BridgeError::Agent { .. }
                    | BridgeError::AgentProtocol(_) => StatusCode::BAD_GATEWAY,
                    _ => StatusCode::BAD_REQUEST,
                };
                (
                    status,
                    json!({"error": "bridge_error", "code": e.code(), "message": message}),
                )
            }
        };
        (status, axum::Json(body)).into_response()
    }
}

struct Shared {
    factory: Box<dyn BackendFactory>,
    config: CopilotKitConfig,
}

impl Shared {
    fn check_agent(&self, agent_id: &str) -> Result<(), CopilotKitError> {
        if agent_id == self.config.agent_id {
            Ok(())
        } else {
            Err(CopilotKitError::UnknownAgent(agent_id.to_owned()))
        }
    }

    /// Waits for `call` at most the run's agent timeout.
    async fn timed<T>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, BridgeError>>,
    ) -> Result<T, BridgeError> {
        let limit = self.config.endpoint.run.agent_timeout;
        tokio::time::timeout(limit, call).await.unwrap_or_else(|_| {
            Err(BridgeError::AgentUnavailable(format!(
                "{what}: no answer within {}s",
                limit.as_secs_f32()
            )))
        })
    }
}

/// The CopilotKit routes under `config.base_path` over `factory` (see the
/// module docs).
pub fn router(factory: impl BackendFactory, config: CopilotKitConfig) -> Router {
    let base = config.base_path.trim_end_matches('/').to_owned();
    let shared = Arc::new(Shared {
        factory: Box::new(factory),
        config,
    });
    let single = if base.is_empty() { "/" } else { base.as_str() };
    Router::new()
        .route(single, post(single_route))
        .route(&format!("{base}/info"), get(info))
        .route(&format!("{base}/agent/{{agent_id}}/run"), post(run_route))
        .route(
            &format!("{base}/agent/{{agent_id}}/connect"),
            post(connect_route),
        )
        .route(
            &format!("{base}/agent/{{agent_id}}/stop/{{thread_id}}"),
            post(stop_route),
        )
        .with_state(shared)
}

async fn info(State(shared): State<Arc<Shared>>) -> Response {
    axum::Json(runtime_info(&shared.config)).into_response()
}

/// CopilotKit's runtime info of the one agent served.
fn runtime_info(config: &CopilotKitConfig) -> Value {
    let mut agents = Map::new();
    agents.insert(
        config.agent_id.clone(),
        json!({
            "name": config.agent_id,
            "className": CLASS_NAME,
            "description": config.description,
        }),
    );
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "agents": agents,
        "audioFileTranscriptionEnabled": false,
        "a2uiEnabled": false,
        "mode": "sse",
    })
}

/// Which of the two AG-UI runs a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Run,
    Connect,
}

async fn run_route(
    State(shared): State<Arc<Shared>>,
    Path(agent_id): Path<String>,
    request: Request,
) -> Response {
    agent_run(&shared, &agent_id, request, Kind::Run).await
}

async fn connect_route(
    State(shared): State<Arc<Shared>>,
    Path(agent_id): Path<String>,
    request: Request,
) -> Response {
    agent_run(&shared, &agent_id, request, Kind::Connect).await
}

async fn agent_run(shared: &Shared, agent_id: &str, request: Request, kind: Kind) -> Response {
    if let Err(e) = shared.check_agent(agent_id) {
        return e.into_response();
    }
    let (head, body) = request.into_parts();
    match read_json_body(&head, body, shared.config.endpoint.body_limit).await {
        Ok(bytes) => events(shared, &head, &bytes, kind).await,
        Err(refusal) => refusal,
    }
}

/// The AG-UI run of `body` (a `RunAgentInput`) as `kind` asks.
async fn events(shared: &Shared, head: &Parts, body: &[u8], kind: Kind) -> Response {
    let endpoint = &shared.config.endpoint;
    let encoding = accepted_encoding(head);
    let input = match parse_input(body) {
        Ok(input) => input,
        Err(events) => return respond(events, encoding, endpoint.keep_alive),
    };
    let backend = match shared.factory.backend(head).await {
        Ok(backend) => backend,
        Err(e) => {
            return respond(
                stream::iter(refused(input, &e)),
                encoding,
                endpoint.keep_alive,
            );
        }
    };
    let context_id = backend.thread_context_id(&input.thread_id);
    let input = match kind {
        Kind::Run => in_thread(input, &context_id),
        Kind::Connect => {
            let reload = input.messages.is_empty();
            let tasks = match thread_tasks(shared, backend.as_ref(), &context_id, reload).await {
                Ok(tasks) => tasks,
                Err(e) => {
                    let events = stream::iter(refused(input, &e));
                    return respond(events, encoding, endpoint.keep_alive);
                }
            };
            match reconnect_input(input, &context_id, &tasks) {
                Some(input) => input,
                // No task yet: nothing to show.
                None => return respond(stream::empty(), encoding, endpoint.keep_alive),
            }
        }
    };
    respond(
        run(backend, endpoint.run.clone(), input).boxed(),
        encoding,
        endpoint.keep_alive,
    )
}

/// `input`, its run in the thread's context: `forwardedProps.a2a.contextId`
/// is set unless the client addresses a task or a context itself (the run
/// checks those are the caller's).
fn in_thread(mut input: RunAgentInput, context_id: &str) -> RunAgentInput {
    let props = input
        .forwarded_props
        .get_or_insert_with(|| Value::Object(Map::new()));
    if props.is_null() {
        *props = Value::Object(Map::new());
    }
    let Some(props) = props.as_object_mut() else {
        return input;
    };
    let options = props
        .entry(FORWARDED_PROPS_KEY)
        .or_insert_with(|| Value::Object(Map::new()));
    if options.is_null() {
        *options = Value::Object(Map::new());
    }
    // A malformed `a2a` is left for the run to report.
    if let Some(options) = options.as_object_mut()
        && !options.contains_key("taskId")
        && !options.contains_key("contextId")
    {
        options.insert("contextId".into(), Value::String(context_id.to_owned()));
    }
    input
}

/// The reconnect run of a connect `input` to the thread whose context is
/// `context_id` and whose tasks are `tasks`: its latest task, with nothing
/// to send. `None` when the thread has no task.
fn reconnect_input(
    mut input: RunAgentInput,
    context_id: &str,
    tasks: &[Task],
) -> Option<RunAgentInput> {
    let latest = tasks
        .iter()
        .filter(|task| task.context_id == context_id)
        .max_by_key(|task| task.status.timestamp)?;
    // What the agent holds of the client's messages: the parts the bridge
    // sent carry the AG-UI message they came from.
    let held: std::collections::HashSet<&str> = tasks
        .iter()
        .flat_map(Task::history)
        .flat_map(|m| &m.parts)
        .filter_map(|p| {
            p.metadata
                .as_ref()?
                .get(METADATA_KEY)?
                .get("messageId")?
                .as_str()
        })
        .collect();
    if input.messages.is_empty() {
        // A page that reloaded holds nothing: the thread's earlier turns
        // come first, the reconnect's snapshot adds the latest task's.
        input.messages = earlier_turns(tasks, &latest.id);
    }
    let turn_start = input
        .messages
        .iter()
        .rposition(|m| matches!(m, AguiMessage::Assistant(_)))
        .map_or(0, |i| i + 1);
    let mut index = 0;
    input.messages.retain(|m| {
        let keep = index < turn_start || held.contains(m.id());
        index += 1;
        keep
    });
    input.resume = None;
    let mut props = match input.forwarded_props.take() {
        Some(Value::Object(props)) => props,
        _ => Map::new(),
    };
    props.insert(
        FORWARDED_PROPS_KEY.into(),
        json!({"mode": "stream", "taskId": latest.id, "contextId": context_id}),
    );
    input.forwarded_props = Some(Value::Object(props));
    Some(input)
}

/// The thread's most recent tasks (`ListTasks` of its context); for a
/// page that reloaded (`reload`), with their artifacts.
async fn thread_tasks(
    shared: &Shared,
    backend: &dyn Backend,
    context_id: &str,
    reload: bool,
) -> Result<Vec<Task>, BridgeError> {
    let mut tasks = shared
        .timed("ListTasks", backend.list_tasks(context_id))
        .await?;
    if reload {
        with_artifacts(shared, backend, &mut tasks).await;
    }
    Ok(tasks)
}

/// `tasks` (a `ListTasks` page, which leaves artifacts out) with the
/// artifacts of all but the latest, read with `GetTask` at once: a reloaded
/// page shows the earlier answers too. A task that cannot be read is shown
/// as listed.
async fn with_artifacts(shared: &Shared, backend: &dyn Backend, tasks: &mut [Task]) {
    let latest = tasks
        .iter()
        .max_by_key(|t| t.status.timestamp)
        .map(|t| t.id.clone());
    let reads = tasks
        .iter_mut()
        .filter(|t| t.artifacts.is_none() && Some(&t.id) != latest.as_ref())
        .map(|task| async move {
            match shared.timed("GetTask", backend.get_task(&task.id)).await {
                Ok(full) if full.id == task.id && full.context_id == task.context_id => {
                    *task = full
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(task_id = %task.id, error = %e, "GetTask failed"),
            }
        });
    futures::future::join_all(reads).await;
}

/// The conversation of the thread's tasks other than `latest`, oldest
/// first, as AG-UI messages: each task's history (a user message under the
/// client's id, which its parts carry) and the text of its artifacts.
fn earlier_turns(tasks: &[Task], latest: &str) -> Vec<AguiMessage> {
    let mut earlier: Vec<&Task> = tasks.iter().filter(|t| t.id != latest).collect();
    earlier.sort_by_key(|t| t.status.timestamp);
    let mut messages = Vec::new();
    for task in earlier {
        for m in task.history() {
            let text = m.text();
            if text.is_empty() {
                continue;
            }
            messages.push(match m.role {
                Role::User => {
                    let id = m
                        .parts
                        .iter()
                        .find_map(|p| {
                            p.metadata
                                .as_ref()?
                                .get(METADATA_KEY)?
                                .get("messageId")?
                                .as_str()
                        })
                        .unwrap_or(&m.message_id);
                    AguiMessage::User(UserMessage {
                        id: id.to_owned(),
                        content: Content::Text(text),
                        ..UserMessage::default()
                    })
                }
                _ => AguiMessage::Assistant(AssistantMessage {
                    id: format!("{}:{}", task.id, m.message_id),
                    content: Some(text),
                    ..AssistantMessage::default()
                }),
            });
        }
        for artifact in task.artifacts.iter().flatten() {
            // The parts of a streamed artifact are its chunks, in order.
            let text: String = artifact.parts.iter().filter_map(|p| p.as_text()).collect();
            if !text.is_empty() {
                messages.push(AguiMessage::Assistant(AssistantMessage {
                    id: format!("{}:{}", task.id, artifact.artifact_id),
                    content: Some(text),
                    ..AssistantMessage::default()
                }));
            }
        }
    }
    messages
}

async fn stop_route(
    State(shared): State<Arc<Shared>>,
    Path((agent_id, thread_id)): Path<(String, String)>,
    request: Request,
) -> Response {
    let (head, body) = request.into_parts();
    // The body (`{"runId"}`, optional) is not needed, only bounded.
    if axum::body::to_bytes(body, shared.config.endpoint.body_limit)
        .await
        .is_err()
    {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body could not be read within {} bytes",
                shared.config.endpoint.body_limit
            ),
        )
            .into_response();
    }
    stop(&shared, &head, &agent_id, &thread_id)
        .await
        .into_response()
}

/// Cancels the thread's running tasks (not those paused on an interrupt:
/// their run is over). CopilotKit's answer: `stopped`, and when it did,
/// the `RUN_ERROR` the client shows for the stopped run.
async fn stop(
    shared: &Shared,
    head: &Parts,
    agent_id: &str,
    thread_id: &str,
) -> Result<axum::Json<Value>, CopilotKitError> {
    shared.check_agent(agent_id)?;
    let backend = shared.factory.backend(head).await?;
    let context_id = backend.thread_context_id(thread_id);
    let tasks = shared
        .timed("ListTasks", backend.list_tasks(&context_id))
        .await?;
    let mut stopped = Vec::new();
    for task in tasks.iter().filter(|t| {
        t.context_id == context_id
            && !t.status.state.is_terminal()
            && !t.status.state.is_interrupted()
    }) {
        match cancel(shared, backend.as_ref(), &task.id).await {
            Ok(true) => stopped.push(task.id.clone()),
            Ok(false) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(axum::Json(if stopped.is_empty() {
        json!({"stopped": false, "message": format!("No active run for thread '{thread_id}'.")})
    } else {
        json!({
            "stopped": true,
            "taskIds": stopped,
            "interrupt": {"type": "RUN_ERROR", "message": "Run stopped by user", "code": "STOPPED"},
        })
    }))
}

/// `CancelTask`; `false` when the task ended on its own meanwhile.
async fn cancel(
    shared: &Shared,
    backend: &dyn Backend,
    task_id: &str,
) -> Result<bool, BridgeError> {
    match shared
        .timed("CancelTask", backend.cancel_task(task_id))
        .await
    {
        Ok(_) => Ok(true),
        Err(e) => {
            let now = shared.timed("GetTask", backend.get_task(task_id)).await?;
            if now.status.state.is_terminal() {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

/// The single-route envelope.
#[derive(Debug, Deserialize)]
struct Envelope {
    method: String,
    #[serde(default)]
    params: Option<Map<String, Value>>,
    #[serde(default)]
    body: Option<Value>,
}

async fn single_route(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (head, body) = request.into_parts();
    let bytes = match read_json_body(&head, body, shared.config.endpoint.body_limit).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal,
    };
    match single(&shared, &head, &bytes).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn single(shared: &Shared, head: &Parts, bytes: &[u8]) -> Result<Response, CopilotKitError> {
    let envelope: Envelope = serde_json::from_slice(bytes)
        .map_err(|e| CopilotKitError::InvalidRequest(format!("invalid envelope: {e}")))?;
    let param = |key: &str| {
        envelope
            .params
            .as_ref()
            .and_then(|p| p.get(key))
            .and_then(Value::as_str)
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| {
                CopilotKitError::InvalidRequest(format!("missing or invalid parameter '{key}'"))
            })
    };
    let kind = match envelope.method.as_str() {
        "info" => return Ok(axum::Json(runtime_info(&shared.config)).into_response()),
        "agent/stop" => {
            let agent_id = param("agentId")?;
            let thread_id = param("threadId")?;
            return Ok(stop(shared, head, agent_id, thread_id)
                .await?
                .into_response());
        }
        "agent/run" => Kind::Run,
        "agent/connect" => Kind::Connect,
        other => {
            return Err(CopilotKitError::InvalidRequest(format!(
                "unsupported method '{other}'"
            )));
        }
    };
    shared.check_agent(param("agentId")?)?;
    let body = envelope
        .body
        .as_ref()
        .ok_or_else(|| CopilotKitError::InvalidRequest("missing body".into()))?;
    let body = serde_json::to_vec(body)
        .map_err(|e| CopilotKitError::InvalidRequest(format!("invalid body: {e}")))?;
    Ok(events(shared, head, &body, kind).await)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use switchboard_protocol::{Message, TaskState, TaskStatus};

    use super::*;
    use crate::Owner;

    fn owner(principal: &str) -> Owner {
        Owner::of(principal)
    }

    fn input(value: Value) -> RunAgentInput {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_run_is_put_in_its_thread_unless_it_addresses_a_task_or_context() {
        let context = owner("key:alice").thread_context_id("t");
        for props in [
            Value::Null,
            json!({}),
            json!({"app": 1}),
            json!({"a2a": null}),
            json!({"a2a": {"mode": "send"}}),
        ] {
            let run = in_thread(
                input(
                    json!({"threadId": "t", "runId": "r", "messages": [], "forwardedProps": props}),
                ),
                &context,
            );
            let props = run.forwarded_props.unwrap();
            assert_eq!(props["a2a"]["contextId"], context.as_str(), "{props}");
        }
        for a2a in [
            json!({"taskId": "x"}),
            json!({"contextId": "c"}),
            json!("send"),
        ] {
            let run = in_thread(
                input(
                    json!({"threadId": "t", "runId": "r", "messages": [], "forwardedProps": {"a2a": a2a.clone()}}),
                ),
                &context,
            );
            assert_eq!(run.forwarded_props.unwrap()["a2a"], a2a);
        }
    }

    #[test]
    fn a_connect_resumes_the_latest_task_and_sends_nothing_new() {
        let context = owner("key:alice").thread_context_id("t");
        let sent = crate::input::tagged_user_text("hi", "u1");
        let task = |id: &str, at: &str, history: Vec<Message>| {
            let mut status = TaskStatus::new(TaskState::Working);
            status.timestamp = Some(at.parse().unwrap());
            Task {
                id: id.into(),
                context_id: context.clone(),
                status,
                artifacts: None,
                history: Some(history),
                metadata: None,
            }
        };
        let tasks = [
            task("old", "2026-01-01T00:00:00Z", vec![]),
            task("new", "2026-01-02T00:00:00Z", vec![sent]),
        ];
        let connect = input(json!({
            "threadId": "t", "runId": "r",
            "messages": [
                {"id": "u0", "role": "user", "content": "earlier"},
                {"id": "a0", "role": "assistant", "content": "answer"},
                {"id": "u1", "role": "user", "content": "hi"},
                {"id": "u2", "role": "user", "content": "never sent"},
            ],
            "forwardedProps": {"app": 1, "a2a": {"mode": "send"}},
        }));
        let run = reconnect_input(connect.clone(), &context, &tasks).unwrap();
        let ids: Vec<&str> = run.messages.iter().map(AguiMessage::id).collect();
        assert_eq!(ids, ["u0", "a0", "u1"]);
        let props = run.forwarded_props.unwrap();
        assert_eq!(props["app"], 1);
        assert_eq!(
            props["a2a"],
            json!({"mode": "stream", "taskId": "new", "contextId": context})
        );
        assert!(reconnect_input(connect, &context, &[]).is_none());
    }

    #[test]
    fn a_reloaded_page_gets_the_earlier_turns_of_its_thread() {
        let context = owner("key:alice").thread_context_id("t");
        let asked = crate::input::tagged_user_text("hi", "u1");
        let task = |id: &str, at: &str, history: Vec<Message>, chunks: &[&str]| {
            let mut status = TaskStatus::new(TaskState::Completed);
            status.timestamp = Some(at.parse().unwrap());
            let parts = chunks.iter().map(|c| switchboard_protocol::Part::text(*c));
            let mut artifact = switchboard_protocol::Artifact::new(parts.collect());
            artifact.artifact_id = format!("{id}-answer");
            Task {
                id: id.into(),
                context_id: context.clone(),
                status,
                artifacts: Some(vec![artifact]),
                history: Some(history),
                metadata: None,
            }
        };
        // Newest first, as ListTasks answers.
        let tasks = [
            task("second", "2026-01-03T00:00:00Z", vec![], &["later"]),
            task(
                "first",
                "2026-01-02T00:00:00Z",
                vec![asked],
                &["You said: ", "hi"],
            ),
            task("zeroth", "2026-01-01T00:00:00Z", vec![], &[]),
        ];
        let reload = input(json!({"threadId": "t", "runId": "r", "messages": []}));
        let run = reconnect_input(reload, &context, &tasks).unwrap();
        let messages: Vec<(&str, String)> = run
            .messages
            .iter()
            .map(|m| match m {
                AguiMessage::User(u) => (m.id(), format!("{:?}", u.content)),
                AguiMessage::Assistant(a) => (m.id(), a.content.clone().unwrap()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            messages,
            [
                ("u1", format!("{:?}", Content::Text("hi".into()))),
                ("first:first-answer", "You said: hi".into()),
            ]
        );
        assert_eq!(run.forwarded_props.unwrap()["a2a"]["taskId"], "second");
    }

    #[test]
    fn the_info_names_the_agent_as_copilotkit_reads_it() {
        let info = runtime_info(&CopilotKitConfig {
            base_path: DEFAULT_BASE_PATH.into(),
            agent_id: "demo".into(),
            description: "the demo".into(),
            endpoint: EndpointConfig::default(),
        });
        assert_eq!(info["mode"], "sse");
        assert_eq!(info["agents"]["demo"]["name"], "demo");
        assert_eq!(info["agents"]["demo"]["description"], "the demo");
        assert!(info["version"].is_string());
    }
}
