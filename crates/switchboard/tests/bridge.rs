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
use proc::{BridgeProc, Serve, switchboard_without_env};
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
    /// A `200`, the official client's rules, and one terminal event, last.
    fn verified(self) -> Self {
        assert_eq!(self.status, 200, "{:?}", self.headers);
        self.check_ended().unwrap();
        self
    }

    /// The state after the run: the snapshot with every delta applied.
    fn final_state(&self) -> Value {
        let mut state = Value::Null;
        for e in &self.events {
            match &e.kind {
                EventKind::StateSnapshot(s) => state = s.snapshot.clone(),
                EventKind::StateDelta(d) => {
                    switchboard_agui::patch::apply(&mut state, &d.delta).unwrap();
                }
                _ => {}
            }
        }
        state
    }
}

/// POSTs `body` to `url` with `headers` and reads the whole answer.
async fn post(url: &str, body: &Value, headers: &[(&str, &str)]) -> Answer {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = tokio::time::timeout(Duration::from_secs(30), request.send())
        .await
        .expect("the endpoint answers")
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = tokio::time::timeout(Duration::from_secs(60), response.bytes())
        .await
        .expect("the run ends")
        .unwrap();
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
    let state = answer.final_state();
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
    let state = first.final_state();
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
    let state = second.final_state();
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
