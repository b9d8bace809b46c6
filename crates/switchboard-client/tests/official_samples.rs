//! The switchboard client against the official A2A SDK sample servers.
//!
//! `interop/` holds two demo agents built on the official SDKs (Python
//! `a2a-sdk` and JS `@a2a-js/sdk`), both implementing the "demo-agent
//! contract" described in `interop/README.md`:
//!
//! * ordinary text → a task: working, an `echo` artifact in two chunks, completed;
//! * `/long S` → a task that stays working for S seconds unless canceled;
//! * `/message X` → a direct agent message;
//! * `/ask` → input-required; a follow-up on the same task completes it.
//!
//! Each test spawns one sample server as a child process on a free loopback
//! port (killed when the test ends, pass or fail), waits until its agent card
//! answers, and drives every client operation through it. Every step runs
//! under a timeout, so a misbehaving server fails the test instead of
//! hanging it.
//!
//! Spawning and skipping live in `common/mod.rs`. Setup: `bash interop/setup.sh` installs `interop/.venv` and
//! `interop/node_modules`. Without them the tests are skipped with a note on
//! stderr, unless `SWITCHBOARD_REQUIRE_INTEROP` is set, in which case a
//! missing setup is a failure (use that in CI).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use switchboard_client::protocol::{
    A2AError, ListTasksRequest, Message, Role, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig, TaskState,
};
use switchboard_client::{A2AClient, ClientError, EventStream, StreamEvent};

use common::{SampleServer, Sdk, start};

/// Time limit of one ordinary step.
const STEP: Duration = Duration::from_secs(20);

/// Runs one step under a time limit, naming it on timeout.
async fn step<T>(name: &str, limit: Duration, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(limit, fut).await {
        Ok(v) => v,
        Err(_) => panic!("step `{name}` did not finish within {limit:?}"),
    }
}

/// Runs a step that must fail and returns its error.
async fn refused<T>(
    who: &str,
    name: &str,
    call: impl Future<Output = Result<T, ClientError>>,
) -> ClientError {
    step(name, STEP, call)
        .await
        .err()
        .unwrap_or_else(|| panic!("[{who}] {name} must fail"))
}

/// Reads a stream to its end (the server closing it).
async fn collect(stream: EventStream) -> Vec<Result<StreamEvent, ClientError>> {
    stream.collect().await
}

/// Runs a send step that must answer with a task, and returns the task.
async fn sent_task(
    who: &str,
    name: &str,
    send: impl Future<Output = Result<SendMessageResponse, ClientError>>,
) -> Task {
    match step(name, STEP, send).await {
        Ok(SendMessageResponse::Task(t)) => t,
        Ok(other) => panic!("[{who}] {name}: expected a task, got {other:?}"),
        Err(e) => panic!("[{who}] {name}: {e}"),
    }
}

fn artifact_text(task: &Task) -> String {
    task.artifacts()
        .iter()
        .map(|a| a.text())
        .collect::<Vec<_>>()
        .join("")
}

fn non_blocking(text: &str) -> SendMessageRequest {
    let mut req = SendMessageRequest::new(Message::user_text(text));
    req.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    req
}

/// The whole scenario against one server.
async fn scenario(server: &SampleServer, sdk: Sdk) {
    scenario_over(server, sdk, "JSONRPC").await;
}

/// The scenario over the card's interface of `binding`.
async fn scenario_over(server: &SampleServer, sdk: Sdk, binding: &str) {
    let who = server.name;

    // card: discovery picks the interface of the preferred binding (by
    // default the card's first: JSON-RPC 1.0).
    let client = step(
        "card",
        STEP,
        A2AClient::builder()
            .preferred_bindings([binding])
            .connect(&server.base),
    )
    .await
    .unwrap_or_else(|e| panic!("[{who}] connect: {e}"));
    let card = client.card().expect("connect keeps the card");
    assert!(!card.name.is_empty(), "[{who}] card name is empty");
    assert!(
        card.supports_streaming(),
        "[{who}] card must declare streaming"
    );
    assert_eq!(client.interface().protocol_binding, binding);
    if binding == "GRPC" {
        assert_eq!(Some(client.endpoint()), server.grpc.as_deref());
    } else if binding == "HTTP+JSON" {
        // The sample serves REST under /rest.
        assert!(
            client
                .endpoint()
                .starts_with(&format!("{}/rest", server.base)),
            "[{who}] {}",
            client.endpoint()
        );
    } else {
        assert_eq!(client.endpoint(), format!("{}/", server.base));
    }
    assert_eq!(client.interface().tenant, None, "[{who}] no tenant");

    // send_blocking: the echo task completes with the text in its artifact.
    let task = sent_task(who, "send_blocking", client.send_text("hello interop")).await;
    assert_eq!(task.status.state, TaskState::Completed, "[{who}] {task:?}");
    assert!(
        artifact_text(&task).contains("hello interop"),
        "[{who}] artifact text: {:?}",
        task.artifacts()
    );

    // send_message_reply: `/message hi` is a direct agent message.
    let reply = step("send_message_reply", STEP, client.send_text("/message hi"))
        .await
        .unwrap_or_else(|e| panic!("[{who}] /message: {e}"));
    match reply {
        SendMessageResponse::Message(m) => {
            assert_eq!(m.role, Role::Agent);
            assert!(m.text().contains("hi"), "[{who}] {m:?}");
        }
        other => panic!("[{who}] /message: expected a message, got {other:?}"),
    }

    // send_nonblocking: returnImmediately answers before the work is done.
    let send = client.send_message(non_blocking("/long 30"));
    let long = sent_task(who, "send_nonblocking", send).await;
    assert!(
        matches!(long.status.state, TaskState::Submitted | TaskState::Working),
        "[{who}] non-blocking state {:?}",
        long.status.state
    );

    // get: the same task, still running.
    let got = step("get", STEP, client.get_task(long.id.as_str()))
        .await
        .unwrap_or_else(|e| panic!("[{who}] get: {e}"));
    assert_eq!(got.id, long.id);
    assert!(
        !got.status.state.is_terminal(),
        "[{who}] get: {:?}",
        got.status.state
    );

    // list: both official servers implement ListTasks; filter by context.
    let list = step(
        "list",
        STEP,
        client.list_tasks(ListTasksRequest {
            context_id: Some(long.context_id.clone()),
            ..Default::default()
        }),
    )
    .await
    .unwrap_or_else(|e| panic!("[{who}] list: {e}"));
    assert!(
        list.tasks.iter().any(|t| t.id == long.id),
        "[{who}] list misses {}: {list:?}",
        long.id
    );
    assert!(
        list.tasks.iter().all(|t| t.context_id == long.context_id),
        "[{who}] list has other contexts: {list:?}"
    );

    // subscribe: the first item is the task itself.
    let mut sub = step(
        "subscribe",
        STEP,
        client.subscribe_to_task(long.id.as_str()),
    )
    .await
    .unwrap_or_else(|e| panic!("[{who}] subscribe: {e}"));
    let first = step("subscribe first item", STEP, sub.next())
        .await
        .expect("subscribe stream ended before its first item")
        .unwrap_or_else(|e| panic!("[{who}] subscribe first item: {e}"));
    match &first.event {
        StreamResponse::Task(t) => assert_eq!(t.id, long.id),
        other => panic!("[{who}] subscribe: first item is not the task: {other:?}"),
    }
    assert_eq!(first.seq, None, "the samples send no SSE ids");

    // cancel: the task is CANCELED, the subscriber sees it, its stream ends.
    let canceled = step("cancel", STEP, client.cancel_task(long.id.as_str()))
        .await
        .unwrap_or_else(|e| panic!("[{who}] cancel: {e}"));
    assert_eq!(canceled.id, long.id);
    assert_eq!(canceled.status.state, TaskState::Canceled, "[{who}]");
    let rest = step("subscribe end", Duration::from_secs(10), collect(sub)).await;
    let rest: Vec<StreamEvent> = rest
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("[{who}] subscribe stream error: {e}")))
        .collect();
    let last = rest.last().expect("subscribe saw no event after the task");
    assert_eq!(
        last.event.state(),
        Some(TaskState::Canceled),
        "[{who}] last subscribe event: {:?}",
        last.event
    );

    // Canceling again: Python says -32002 (not cancelable); the JS server
    // returns an already-CANCELED task as it is.
    match step("cancel again", STEP, client.cancel_task(long.id.as_str())).await {
        Err(e) => assert_eq!(e.code(), Some(-32002), "[{who}] {e}"),
        Ok(t) => {
            assert_eq!(sdk, Sdk::Js, "[{who}] second cancel succeeded: {t:?}");
            assert_eq!(t.status.state, TaskState::Canceled);
        }
    }

    // Subscribing to a finished task is refused before any stream starts.
    let subscribe = client.subscribe_to_task(long.id.as_str());
    let err = refused(who, "subscribe terminal", subscribe).await;
    assert_eq!(err.code(), Some(-32004), "[{who}] {err}");

    // stream: Task first, artifact updates, COMPLETED last, then closed.
    let events = step("stream", STEP, async {
        let stream = client
            .send_streaming_message(Message::user_text("hello stream"))
            .await
            .unwrap_or_else(|e| panic!("[{who}] stream: {e}"));
        collect(stream).await
    })
    .await;
    let events: Vec<StreamEvent> = events
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("[{who}] stream error: {e}")))
        .collect();
    let task_id = match &events.first().expect("empty stream").event {
        StreamResponse::Task(t) => t.id.clone(),
        other => panic!("[{who}] stream: first item is not a task: {other:?}"),
    };
    let mut streamed = String::new();
    for ev in &events {
        if let StreamResponse::ArtifactUpdate(u) = &ev.event {
            assert_eq!(u.task_id, task_id);
            streamed.push_str(&u.artifact.text());
        }
    }
    assert!(
        streamed.contains("hello stream"),
        "[{who}] streamed artifact text {streamed:?}"
    );
    match &events.last().expect("non-empty").event {
        StreamResponse::StatusUpdate(u) => {
            assert_eq!(u.status.state, TaskState::Completed, "[{who}]")
        }
        other => panic!("[{who}] stream: last item is not a status update: {other:?}"),
    }

    // A streamed `/message` is one Message, then the stream closes.
    let events = step("stream message", STEP, async {
        collect(
            client
                .send_streaming_message(Message::user_text("/message streamed"))
                .await
                .unwrap_or_else(|e| panic!("[{who}] stream /message: {e}")),
        )
        .await
    })
    .await;
    assert_eq!(events.len(), 1, "[{who}] {events:?}");
    match &events[0] {
        Ok(StreamEvent {
            event: StreamResponse::Message(m),
            ..
        }) => assert!(m.text().contains("streamed")),
        other => panic!("[{who}] stream /message: {other:?}"),
    }

    // input_required: `/ask`, then a follow-up on the same task.
    let asked = sent_task(who, "/ask", client.send_text("/ask")).await;
    assert_eq!(asked.status.state, TaskState::InputRequired, "[{who}]");
    let question = asked
        .status
        .message
        .as_ref()
        .map(Message::text)
        .unwrap_or_default();
    assert!(question.contains("name"), "[{who}] question {question:?}");
    let answer = Message::user_text("Ada")
        .with_task_id(asked.id.clone())
        .with_context_id(asked.context_id.clone());
    let done = sent_task(who, "ask follow-up", client.send_message(answer)).await;
    assert_eq!(done.id, asked.id);
    assert_eq!(done.status.state, TaskState::Completed, "[{who}]");
    assert!(artifact_text(&done).contains("Ada"), "[{who}] {done:?}");

    // get_unknown: -32001, as a TaskNotFound error, for unary and stream calls.
    let unknown = uuid::Uuid::new_v4().to_string();
    let err = refused(who, "get_unknown", client.get_task(unknown.as_str())).await;
    assert_eq!(err.code(), Some(-32001), "[{who}] {err}");
    assert!(matches!(
        err,
        ClientError::Protocol(A2AError::TaskNotFound(_))
    ));
    let subscribe = client.subscribe_to_task(unknown.as_str());
    let err = refused(who, "subscribe_unknown", subscribe).await;
    assert_eq!(err.code(), Some(-32001), "[{who}] {err}");

    // Push configs and the extended card are not offered by the samples:
    // the errors must come back with their A2A codes.
    let push = TaskPushNotificationConfig {
        tenant: None,
        id: None,
        task_id: Some(asked.id.clone()),
        url: "http://127.0.0.1:9/hook".into(),
        token: None,
        authentication: None,
    };
    let id = asked.id.as_str();
    let config = (id, "cfg");
    let push_not_supported = [
        refused(who, "create_push_config", client.create_push_config(push)).await,
        refused(who, "list_push_configs", client.list_push_configs(id)).await,
        refused(who, "get_push_config", client.get_push_config(config)).await,
        refused(who, "delete_push_config", client.delete_push_config(config)).await,
    ];
    for err in push_not_supported {
        assert_eq!(err.code(), Some(-32003), "[{who}] {err}");
    }
    let card = client.get_extended_agent_card();
    let err = refused(who, "get_extended_agent_card", card).await;
    assert_eq!(err.code(), Some(-32004), "[{who}] {err}");
}

#[tokio::test]
async fn python_sdk_sample_server() {
    let Some(server) = start(Sdk::Python).await else {
        return;
    };
    scenario(&server, Sdk::Python).await;
}

/// Our REST transport against the official Python SDK's HTTP+JSON routes
/// (`create_rest_routes`, under `/rest`): the same scenario.
#[tokio::test]
async fn python_sdk_sample_server_over_rest() {
    let Some(server) = start(Sdk::Python).await else {
        return;
    };
    scenario_over(&server, Sdk::Python, "HTTP+JSON").await;
}

/// Our gRPC transport against the official Python SDK's gRPC server
/// (`GrpcHandler` on grpc.aio): the same scenario.
#[cfg(feature = "grpc")]
#[tokio::test]
async fn python_sdk_sample_server_over_grpc() {
    let Some(server) = start(Sdk::Python).await else {
        return;
    };
    scenario_over(&server, Sdk::Python, "GRPC").await;
}

#[tokio::test]
async fn js_sdk_sample_server() {
    let Some(server) = start(Sdk::Js).await else {
        return;
    };
    scenario(&server, Sdk::Js).await;
}
