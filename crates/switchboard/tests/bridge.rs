//! `switchboard bridge` and `serve`'s `/agui`, as real processes over
//! loopback: an AG-UI client's POSTs in, the demo agent behind them.
//!
//! Every answer is checked with the official client's ordering rules
//! (`switchboard_agui::Verifier`), and every run must end with exactly one
//! RUN_FINISHED or RUN_ERROR, last.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::time::{Duration, Instant};

use futures::StreamExt;
use proc::{BridgeProc, Serve, api_key_hashes, switchboard_without_env, whole_answer};
use serde_json::{Value, json};
use switchboard_agui::events::{Event, EventKind, RunFinishedOutcome};
use switchboard_agui::run::RunEvents;
use switchboard_agui::sse::SseDecoder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const THREAD_ID: &str = "thread-SECRET-b1";
const RUN_ID: &str = "run-SECRET-b1";
const API_KEY: &str = "sb_bridge-test-key";

/// A `RunAgentInput`: one user message, the client's `state`, and
/// `resume` entries when it answers an interrupt.
fn input(text: &str, state: Value, resume: Option<Value>) -> Value {
    let mut input = json!({
        "threadId": THREAD_ID,
        "runId": RUN_ID,
        "messages": [{"id": "u1", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": state,
        "forwardedProps": {},
    });
    if let Some(resume) = resume {
        input["resume"] = resume;
    }
    input
}

/// One answer of an AG-UI endpoint.
struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    events: Vec<Event>,
}

impl RunEvents for Answer {
    fn events(&self) -> &[Event] {
        &self.events
    }
}

impl Answer {
    /// A `200`, the official client's rules, one terminal event, last, and
    /// a `timestamp` on every event.
    fn verified(self) -> Self {
        assert_eq!(self.status, 200, "{:?}", self.headers);
        self.check_ended().unwrap();
        for event in &self.events {
            assert!(event.timestamp.is_some(), "{:?}", event.type_name());
        }
        self
    }
}

/// POSTs `body` to `url` with `headers` and reads the whole answer.
async fn post(url: &str, body: &Value, headers: &[(&str, &str)]) -> Answer {
    let request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    let (status, headers, body) = whole_answer(request, headers).await;
    let status = status.as_u16();
    let events = if status == 200 {
        let mut decoder = SseDecoder::new();
        let events = decoder.push(&body).unwrap();
        assert!(decoder.is_idle());
        events.into_iter().map(|e| e.event).collect()
    } else {
        Vec::new()
    };
    Answer {
        status,
        headers,
        events,
    }
}

/// A plain text run: the demo agent's reply streamed to its end.
async fn plain_run(url: &str, headers: &[(&str, &str)]) {
    let answer = post(url, &input("hello bridge", json!({}), None), headers)
        .await
        .verified();
    answer.check_succeeded().unwrap();
    assert!(
        answer.text().contains("You said: hello bridge"),
        "{}",
        answer.text()
    );
    let state = answer.final_state().unwrap();
    let tasks = state["view"]["tasksById"].as_object().unwrap();
    assert_eq!(tasks.len(), 1, "{state}");
    let task = tasks.values().next().unwrap();
    assert_eq!(task["state"], "completed", "{state}");
    assert_eq!(task["contextId"], state["view"]["contextId"], "{state}");
}

/// `/approve`: an interrupt carrying the form, then a resolved resume that
/// completes the task.
async fn approve_and_resume(url: &str) {
    let first = post(url, &input("/approve the deploy", json!({}), None), &[])
        .await
        .verified();
    let Some(RunFinishedOutcome::Interrupt { interrupts }) = first.outcome() else {
        panic!("{:?} {:?}", first.types(), first.error());
    };
    assert_eq!(interrupts.len(), 1);
    let interrupt_id = interrupts[0].id.clone();
    let state = first.final_state().unwrap();
    assert!(
        state["view"]["pendingInterrupts"][&interrupt_id].is_object(),
        "{state}"
    );
    assert!(
        first.events.iter().any(
            |e| matches!(&e.kind, EventKind::ActivitySnapshot(a) if a.activity_type == "HITL_FORM")
        ),
        "{:?}",
        first.types()
    );
    // The client sends its state back, as AG-UI clients do.
    let resume = json!([{
        "interruptId": interrupt_id, "status": "resolved", "payload": {"approved": true}
    }]);
    let second = post(url, &input("/approve the deploy", state, Some(resume)), &[])
        .await
        .verified();
    second.check_succeeded().unwrap();
    assert!(second.text().contains("approved"), "{}", second.text());
    let state = second.final_state().unwrap();
    assert_eq!(
        state["view"]["pendingInterrupts"],
        json!({}),
        "the interrupt is resolved: {state}"
    );
    let task = state["view"]["tasksById"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert_eq!(task["state"], "completed", "{state}");
}

#[tokio::test]
async fn the_bridge_streams_a_run_and_carries_an_interrupt_through_its_resume() {
    let serve = Serve::start("memory");
    let mut bridge = BridgeProc::start(&serve.base(), &[]);
    assert_eq!(
        bridge.line,
        format!(
            "switchboard bridge listening on http://127.0.0.1:{}/agui (agent: switchboard demo at {}/, JSONRPC)",
            bridge.port,
            serve.base()
        )
    );
    plain_run(&bridge.url(), &[]).await;
    approve_and_resume(&bridge.url()).await;
    assert!(
        bridge.terminate(Duration::from_secs(15)),
        "SIGTERM stops the bridge gracefully"
    );
}

#[tokio::test]
async fn the_bridge_reaches_the_agent_over_the_binding_it_prefers() {
    let serve = Serve::start("memory");
    for binding in ["HTTP+JSON", "GRPC"] {
        let bridge = BridgeProc::start(&serve.base(), &["--prefer-binding", binding]);
        assert!(
            bridge.line.ends_with(&format!(", {binding})")),
            "{}",
            bridge.line
        );
        plain_run(&bridge.url(), &[]).await;
        approve_and_resume(&bridge.url()).await;
    }
}

#[tokio::test]
async fn serve_answers_the_same_runs_at_its_own_agui() {
    let serve = Serve::start("memory");
    let url = format!("{}/agui", serve.base());
    plain_run(&url, &[]).await;
    approve_and_resume(&url).await;
}

#[tokio::test]
async fn serve_turns_its_agui_endpoint_off() {
    let serve = Serve::start_with("memory", &["--agui-endpoint=false"]);
    let answer = post(
        &format!("{}/agui", serve.base()),
        &input("hello", json!({}), None),
        &[],
    )
    .await;
    assert_ne!(answer.status, 200);
}

#[tokio::test]
async fn serve_admits_agui_callers_as_its_a2a_bindings_do() {
    let key = format!("{}=ci", switchboard_auth::hash_api_key(API_KEY));
    let serve = Serve::start_with("memory", &["--api-key-hash", &key]);
    let url = format!("{}/agui", serve.base());
    let refused = post(&url, &input("hello", json!({}), None), &[]).await;
    assert_eq!(refused.status, 401);
    assert!(
        refused.headers.contains_key("www-authenticate"),
        "{:?}",
        refused.headers
    );
    let refused = post(
        &url,
        &input("hello", json!({}), None),
        &[("x-api-key", "sb_wrong")],
    )
    .await;
    assert_eq!(refused.status, 401);
    plain_run(&url, &[("x-api-key", API_KEY)]).await;
    // A bridge in front of it sends the key as one of its agent headers.
    let header = format!("X-API-Key: {API_KEY}");
    let bridge = BridgeProc::start(&serve.base(), &["--agent-header", &header]);
    plain_run(&bridge.url(), &[]).await;
}

#[tokio::test]
async fn a_bridge_with_api_keys_refuses_callers_without_one() {
    let serve = Serve::start("memory");
    let key = format!("{}=ui", switchboard_auth::hash_api_key(API_KEY));
    let bridge = BridgeProc::start(&serve.base(), &["--api-key-hash", &key]);
    let refused = post(&bridge.url(), &input("hello", json!({}), None), &[]).await;
    assert_eq!(refused.status, 401);
    assert!(
        refused.headers.contains_key("www-authenticate"),
        "{:?}",
        refused.headers
    );
    plain_run(
        &bridge.url(),
        &[("authorization", &format!("Bearer {API_KEY}"))],
    )
    .await;
}

#[test]
fn a_bridge_to_an_unreachable_agent_exits_2_with_a_clear_message() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let agent = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    let out = switchboard_without_env()
        .args(["bridge", "--agent", &agent, "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("switchboard bridge: cannot use the agent at") && stderr.contains(&agent),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing listened: {out:?}");
    // Not a URL at all: the same clear failure.
    let out = switchboard_without_env()
        .args(["bridge", "--agent", "not a url", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[tokio::test]
async fn an_agent_that_dies_mid_run_ends_the_run_with_run_error() {
    let serve = Serve::start("memory");
    let bridge = BridgeProc::start(&serve.base(), &["--agent-timeout-secs", "3"]);
    let response = reqwest::Client::new()
        .post(bridge.url())
        .header("content-type", "application/json")
        .body(input("/long 60", json!({}), None).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    // The task is running: its first status is through.
    while !events
        .iter()
        .any(|e: &Event| matches!(e.kind, EventKind::StateDelta(_)))
    {
        let chunk = tokio::time::timeout(Duration::from_secs(30), body.next())
            .await
            .expect("the run starts")
            .expect("the stream is open")
            .unwrap();
        events.extend(decoder.push(&chunk).unwrap().into_iter().map(|e| e.event));
    }
    serve.kill();
    let died = Instant::now();
    let rest = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(chunk) = body.next().await {
            events.extend(
                decoder
                    .push(&chunk.unwrap())
                    .unwrap()
                    .into_iter()
                    .map(|e| e.event),
            );
        }
        events
    })
    .await
    .expect("the run ends once the agent is gone");
    assert!(
        died.elapsed() < Duration::from_secs(20),
        "{:?}",
        died.elapsed()
    );
    let answer = Answer {
        status: 200,
        headers: Default::default(),
        events: rest,
    }
    .verified();
    let (code, message) = answer.error().expect("a RUN_ERROR");
    assert_eq!(code, "bridge:agent_unavailable", "{message}");
}

#[tokio::test]
async fn a_silent_client_is_closed_within_the_header_timeout() {
    let serve = Serve::start("memory");
    let bridge = BridgeProc::start(&serve.base(), &["--header-read-timeout-ms", "500"]);
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", bridge.port))
        .await
        .unwrap();
    tcp.write_all(b"POST /agui HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
        .await
        .unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut buf))
        .await
        .expect("the bridge closes the connection");
    // Closed (EOF or reset), with no answer to a request it never got.
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// A `RunAgentInput` of `messages` with `state`, `forwardedProps.a2a` =
/// `a2a` (when not null) and `resume` entries.
fn run_input(messages: Value, state: Value, a2a: Value, resume: Option<Value>) -> Value {
    let mut input = json!({
        "threadId": THREAD_ID,
        "runId": RUN_ID,
        "messages": messages,
        "tools": [],
        "context": [],
        "state": state,
        "forwardedProps": {},
    });
    if !a2a.is_null() {
        input["forwardedProps"]["a2a"] = a2a;
    }
    if let Some(resume) = resume {
        input["resume"] = resume;
    }
    input
}

/// A run of `messages` on `bridge` from `state`, read to its end and
/// verified.
async fn run_on(bridge: &BridgeProc, messages: Value, state: Value) -> Answer {
    let input = run_input(messages, state, Value::Null, None);
    post(&bridge.url(), &input, &[]).await.verified()
}

/// The one task in the `/view` of a run's final state: its id and state.
fn view_task(state: &Value) -> (String, String) {
    let tasks = state["view"]["tasksById"].as_object().unwrap();
    assert_eq!(tasks.len(), 1, "{state}");
    let (id, task) = tasks.iter().next().unwrap();
    (id.clone(), task["state"].as_str().unwrap_or("").to_owned())
}

/// The task `id` as `serve` holds it (JSON-RPC GetTask, `headers` added).
async fn agent_task(serve: &Serve, id: &str, headers: &[(&str, &str)]) -> Value {
    let mut request = proc::request(&serve.base(), "GetTask", json!({"id": id}));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let answer: Value = request.send().await.unwrap().json().await.unwrap();
    assert!(answer["error"].is_null(), "{answer}");
    answer["result"].clone()
}

/// Polls `serve` until task `id` is in `state` (30 s at most).
async fn wait_for_task_state(serve: &Serve, id: &str, state: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let task = agent_task(serve, id, &[]).await;
        if task["status"]["state"] == state {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "task {id} never got to {state}: {task}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The RUN_ERROR of a run refused as if the task did not exist.
fn assert_not_found(answer: &Answer, what: &str) {
    let (code, message) = answer
        .error()
        .unwrap_or_else(|| panic!("{what}: no RUN_ERROR in {:?}", answer.types()));
    assert!(
        code == "bridge:agent_error" || code == "bridge:unknown_context",
        "{what}: {code} {message}"
    );
    assert!(message.contains("not found"), "{what}: {message}");
    assert!(
        !answer.text().contains("name"),
        "{what}: nothing of the task is shown: {}",
        answer.text()
    );
}

#[tokio::test]
async fn the_bridge_scopes_every_task_and_context_to_its_caller() {
    const AGENT_KEY: &str = "sb_the-bridge-itself";
    const ALICE: &str = "sb_alice-key";
    const BOB: &str = "sb_bob-key";
    let agent_key = format!("{}=bridge", switchboard_auth::hash_api_key(AGENT_KEY));
    let serve = Serve::start_with("memory", &["--api-key-hash", &agent_key]);
    let callers = api_key_hashes(&[(ALICE, "alice"), (BOB, "bob")]);
    let header = format!("X-API-Key: {AGENT_KEY}");
    let flags = ["--api-key-hash", &callers, "--agent-header", &header];
    // Two replicas of the bridge, and later a third: no bridge state.
    let one = BridgeProc::start(&serve.base(), &flags);
    let two = BridgeProc::start(&serve.base(), &flags);
    let alice = [("x-api-key", ALICE)];
    let bob = [("x-api-key", BOB)];
    let ask = json!([{"id": "u1", "role": "user", "content": "/ask"}]);

    let first = post(
        &one.url(),
        &run_input(ask.clone(), json!({}), Value::Null, None),
        &alice,
    )
    .await
    .verified();
    let Some(RunFinishedOutcome::Interrupt { interrupts }) = first.outcome() else {
        panic!("{:?} {:?}", first.types(), first.error());
    };
    let interrupt = interrupts[0].id.clone();
    let alice_state = first.final_state().unwrap();
    let (task, _) = view_task(&alice_state);
    let context = alice_state["view"]["contextId"]
        .as_str()
        .unwrap()
        .to_owned();
    let hello = json!([{"id": "b1", "role": "user", "content": "hello"}]);

    // Bob names alice's task, interrupt or context every way a run can.
    let attempts = [
        (
            "stream into her task",
            run_input(hello.clone(), json!({}), json!({"taskId": task}), None),
        ),
        (
            "send into her task",
            run_input(
                hello.clone(),
                json!({}),
                json!({"mode": "send", "taskId": task}),
                None,
            ),
        ),
        (
            "reconnect to her task",
            run_input(json!([]), json!({}), json!({"taskId": task}), None),
        ),
        (
            "view her task",
            run_input(
                json!([]),
                json!({}),
                json!({"mode": "send", "taskId": task}),
                None,
            ),
        ),
        (
            "cancel her task",
            run_input(
                json!([]),
                json!({}),
                json!({"mode": "cancel", "taskId": task}),
                None,
            ),
        ),
        (
            "resume her interrupt",
            run_input(
                ask.clone(),
                json!({}),
                Value::Null,
                Some(json!([{"interruptId": interrupt, "status": "resolved", "payload": "Bob"}])),
            ),
        ),
        (
            "resume her interrupt with her state",
            run_input(
                ask.clone(),
                alice_state.clone(),
                Value::Null,
                Some(json!([{"interruptId": interrupt, "status": "resolved", "payload": "Bob"}])),
            ),
        ),
        (
            "cancel her interrupt",
            run_input(
                ask.clone(),
                json!({}),
                Value::Null,
                Some(json!([{"interruptId": interrupt, "status": "cancelled"}])),
            ),
        ),
        (
            "continue her context",
            run_input(
                hello.clone(),
                json!({}),
                json!({"contextId": context}),
                None,
            ),
        ),
    ];
    for (what, body) in &attempts {
        for bridge in [&one, &two] {
            let answer = post(&bridge.url(), body, &bob).await.verified();
            assert_not_found(&answer, what);
        }
    }
    // Her state's context is not his: his run starts a context of his own.
    let his = post(
        &two.url(),
        &run_input(hello.clone(), alice_state.clone(), Value::Null, None),
        &bob,
    )
    .await
    .verified();
    his.check_succeeded().unwrap();
    let his_state = his.final_state().unwrap();
    assert_ne!(
        his_state["view"]["contextId"],
        json!(context),
        "{his_state}"
    );
    // Her task is untouched, and hers on any replica, a new one included.
    drop(one);
    let three = BridgeProc::start(&serve.base(), &flags);
    let view = post(
        &three.url(),
        &run_input(
            json!([]),
            json!({}),
            json!({"mode": "send", "taskId": task}),
            None,
        ),
        &alice,
    )
    .await
    .verified();
    assert_eq!(view_task(&view.final_state().unwrap()).1, "input-required");
    let resume = json!([{"interruptId": interrupt, "status": "resolved", "payload": "Alice"}]);
    let done = post(
        &two.url(),
        &run_input(ask.clone(), alice_state.clone(), Value::Null, Some(resume)),
        &alice,
    )
    .await
    .verified();
    done.check_succeeded().unwrap();
    assert!(done.text().contains("Hello, Alice!"), "{}", done.text());
}

#[tokio::test]
async fn a_user_message_reaches_the_agent_once_after_a_run_without_text() {
    let serve = Serve::start("memory");
    let bridge = BridgeProc::start(&serve.base(), &[]);
    let reject = json!({"id": "u1", "role": "user", "content": "/reject"});
    let first = run_on(&bridge, json!([reject]), json!({})).await;
    let state = first.final_state().unwrap();
    assert!(state["view"]["contextId"].is_string(), "{state}");
    // The client sends the whole thread again: the rejected message has
    // no assistant answer after it.
    let again = json!({"id": "u2", "role": "user", "content": "still there?"});
    let second = run_on(&bridge, json!([reject, again]), state).await;
    second.check_succeeded().unwrap();
    assert!(
        second.text().contains("You said: still there?"),
        "{}",
        second.text()
    );
    assert!(!second.text().contains("/reject"), "{}", second.text());
}

#[tokio::test]
async fn a_run_can_cancel_its_task_and_a_disconnect_can_too() {
    let serve = Serve::start("memory");
    let bridge = BridgeProc::start(&serve.base(), &[]);
    let long = json!([{"id": "u1", "role": "user", "content": "/long 60"}]);
    let started = post(
        &bridge.url(),
        &run_input(long.clone(), json!({}), json!({"mode": "send"}), None),
        &[],
    )
    .await
    .verified();
    let (task, state) = view_task(&started.final_state().unwrap());
    assert!(state == "working" || state == "submitted", "{state}");
    let cancel = cancel_run(&bridge, &task).await;
    assert!(cancel.error().is_none(), "{:?}", cancel.error());
    assert_eq!(view_task(&cancel.final_state().unwrap()).1, "canceled");
    assert_eq!(
        agent_task(&serve, &task, &[]).await["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    // Cancelling an ended task reports it, and changes nothing.
    let again = cancel_run(&bridge, &task).await;
    assert_eq!(view_task(&again.final_state().unwrap()).1, "canceled");

    // A client that goes away: the task keeps running, unless the bridge
    // is told to cancel it then.
    let cancelling = BridgeProc::start(&serve.base(), &["--cancel-on-disconnect"]);
    let kept = leave_a_run(&bridge, &long).await;
    let canceled = leave_a_run(&cancelling, &long).await;
    wait_for_task_state(&serve, &canceled, "TASK_STATE_CANCELED").await;
    // By now the first bridge has had as long to cancel its task.
    assert_eq!(
        agent_task(&serve, &kept, &[]).await["status"]["state"],
        "TASK_STATE_WORKING"
    );
}

/// A cancel-mode run of `task` on `bridge`, read to its end.
async fn cancel_run(bridge: &BridgeProc, task: &str) -> Answer {
    let forwarded = json!({"mode": "cancel", "taskId": task});
    let input = run_input(json!([]), json!({}), forwarded, None);
    post(&bridge.url(), &input, &[]).await.verified()
}

/// Starts a streamed run of `messages` on `bridge`, reads it until its
/// task is in the state, and goes away; the task's id.
async fn leave_a_run(bridge: &BridgeProc, messages: &Value) -> String {
    let response = reqwest::Client::new()
        .post(bridge.url())
        .header("content-type", "application/json")
        .body(run_input(messages.clone(), json!({}), Value::Null, None).to_string())
        .send()
        .await
        .unwrap();
    let mut body = response.bytes_stream();
    let mut decoder = SseDecoder::new();
    let mut answer = Answer {
        status: 200,
        headers: Default::default(),
        events: Vec::new(),
    };
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(30), body.next())
            .await
            .expect("the run starts")
            .expect("the stream is open")
            .unwrap();
        answer
            .events
            .extend(decoder.push(&chunk).unwrap().into_iter().map(|e| e.event));
        let state = answer.final_state().unwrap();
        if let Some(id) = state["view"]["tasksById"]
            .as_object()
            .and_then(|t| t.keys().next())
        {
            return id.clone();
        }
    }
}

#[tokio::test]
async fn a_long_thread_without_client_state_fits_the_agent() {
    let serve = Serve::start("memory");
    let bridge = BridgeProc::start(&serve.base(), &[]);
    let mut messages = Vec::new();
    for i in 0..2000 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        messages.push(json!({
            "id": format!("m{i}"),
            "role": role,
            "content": format!("message number {i} of a long conversation about nothing much"),
        }));
    }
    messages.push(json!({"id": "last", "role": "user", "content": "the last word"}));
    let answer = run_on(&bridge, Value::from(messages), json!({})).await;
    answer.check_succeeded().unwrap();
    assert!(
        answer.text().contains("You said: the last word"),
        "{}",
        answer.text()
    );
    let (task, _) = view_task(&answer.final_state().unwrap());
    let task = agent_task(&serve, &task, &[]).await;
    let agui = &task["history"][0]["metadata"]["agui"];
    let kept = agui["history"].as_array().unwrap().len();
    let omitted = agui["historyOmitted"].as_u64().unwrap();
    assert!(kept > 10, "the most recent turns travel: {kept}");
    assert_eq!(
        kept as u64 + omitted,
        2000,
        "the agent is told what was left out"
    );
    assert_eq!(
        agui["history"][kept - 1]["messageId"],
        "m1999",
        "the kept ones are the most recent"
    );
}

#[tokio::test]
async fn a_repeated_resume_of_an_answered_interrupt_shows_the_task() {
    let serve = Serve::start("memory");
    let bridge = BridgeProc::start(&serve.base(), &[]);
    let ask = json!([{"id": "u1", "role": "user", "content": "/ask"}]);
    let first = run_on(&bridge, ask.clone(), json!({})).await;
    let Some(RunFinishedOutcome::Interrupt { interrupts }) = first.outcome() else {
        panic!("{:?}", first.types());
    };
    // AG-UI's interrupt rule: the state and the messages a resume needs
    // come right before the interrupting RUN_FINISHED.
    let types = first.types();
    assert_eq!(
        types[types.len() - 3..],
        ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"],
        "{types:?}"
    );
    let EventKind::MessagesSnapshot(snapshot) = &first.events[first.events.len() - 2].kind else {
        unreachable!()
    };
    let messages = serde_json::to_value(&snapshot.messages).unwrap();
    assert_eq!(messages[0]["id"], "u1", "{messages}");
    assert!(
        messages.to_string().contains("What is your name?"),
        "{messages}"
    );
    let resume = json!([{"interruptId": interrupts[0].id, "status": "resolved", "payload": "Ann"}]);
    let state = first.final_state().unwrap();
    for _ in 0..2 {
        let answer = post(
            &bridge.url(),
            &run_input(
                ask.clone(),
                state.clone(),
                Value::Null,
                Some(resume.clone()),
            ),
            &[],
        )
        .await
        .verified();
        answer.check_succeeded().unwrap();
        assert_eq!(view_task(&answer.final_state().unwrap()).1, "completed");
    }
}

/// An agent that refuses the bridge's request as too large (its body
/// limit, HTTP 413) is reported as that, with the agent's reason, over
/// each HTTP binding; not as an unreachable agent whose connection reset.
#[tokio::test]
async fn an_agent_that_refuses_the_request_as_too_large_is_reported_so() {
    let serve = Serve::start_with("memory", &["--max-body-bytes", "4096"]);
    // Far larger than the socket buffers, so the agent refuses it long
    // before the bridge has sent it all (the bridge takes up to 32 MiB).
    let text = "x".repeat(6 * 1024 * 1024);
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let bridge = BridgeProc::start(
            &serve.base(),
            &["--prefer-binding", binding, "--max-body-bytes", "33554432"],
        );
        let answer = post(&bridge.url(), &input(&text, json!({}), None), &[])
            .await
            .verified();
        let (code, message) = answer.error().expect("a RUN_ERROR");
        assert_eq!(code, "bridge:request_too_large", "{binding}: {message}");
        assert!(
            message.contains("the request body exceeds 4096 bytes"),
            "{binding}: {message}"
        );
    }
}
