//! AG-UI on the A2A streaming endpoints of a real `serve` (loopback): the
//! opt-in on JSON-RPC and REST, the encodings, Hector's vocabulary, and
//! resuming with `Last-Event-ID: <seq>.<i>`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use futures::StreamExt;
use proc::{Serve, get, send_rpc};
use serde_json::{Value, json};
use switchboard_agui::proto::ProtoDecoder;
use switchboard_agui::sse::{SseDecoder, SseEvent};
use switchboard_agui::{Event, Verifier};

fn user(text: &str) -> Value {
    json!({"message": {"role": "ROLE_USER", "messageId": uuid(), "parts": [{"text": text}]}})
}

fn uuid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "m-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Reads AG-UI SSE frames until the stream ends or `limit` frames arrived
/// (then drops the connection: an interrupted stream).
async fn read_sse(resp: reqwest::Response, limit: Option<usize>) -> Vec<SseEvent> {
    assert!(resp.status().is_success(), "status {}", resp.status());
    let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("text/event-stream"), "content type {ct}");
    let mut body = resp.bytes_stream();
    let mut dec = SseDecoder::new();
    let mut out = Vec::new();
    while let Some(chunk) = body.next().await {
        out.extend(dec.push(&chunk.unwrap()).unwrap());
        if limit.is_some_and(|l| out.len() >= l) {
            out.truncate(limit.unwrap());
            return out;
        }
    }
    out
}

fn verified(frames: &[SseEvent]) -> Vec<Event> {
    let mut v = Verifier::new();
    for f in frames {
        v.observe(&f.event)
            .unwrap_or_else(|e| panic!("verifier: {e} at {:?}", f.event));
    }
    frames.iter().map(|f| f.event.clone()).collect()
}

fn types(frames: &[SseEvent]) -> Vec<&'static str> {
    frames.iter().map(|f| f.event.type_name()).collect()
}

fn run_id(frames: &[SseEvent]) -> String {
    let v = serde_json::to_value(&frames[0].event).unwrap();
    v["runId"].as_str().unwrap().to_owned()
}

/// The JSON-RPC opt-in to AG-UI: this `Accept` on a streaming call.
const AGUI: (&str, &str) = ("Accept", "application/x-agui-events");

/// SendStreamingMessage of `text` over REST, opted in to the vocabulary
/// `format` by the query parameter.
async fn stream_rest(base: &str, format: &str, text: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{base}/message:stream?format={format}"))
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/json")
        .body(user(text).to_string())
        .send()
        .await
        .unwrap()
}

/// SubscribeToTask over REST, resumed after `last_event_id`.
async fn resume_rest(base: &str, task: &str, last_event_id: &str) -> reqwest::Response {
    get(
        &format!("{base}/tasks/{task}:subscribe?format=agui"),
        &[("A2A-Version", "1.0"), ("Last-Event-ID", last_event_id)],
    )
    .await
}

#[tokio::test]
async fn tool_stream_over_jsonrpc_resumes_exactly_at_every_cut() {
    let s = Serve::start("memory");
    let base = s.base();
    let resp = send_rpc(
        &base,
        "SendStreamingMessage",
        user("/tool count these words"),
        &[AGUI],
    )
    .await;
    let full = read_sse(resp, None).await;
    verified(&full);
    let t = types(&full);
    assert_eq!(t.first(), Some(&"RUN_STARTED"));
    assert_eq!(t.last(), Some(&"RUN_FINISHED"));
    for needed in [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ] {
        assert!(t.contains(&needed), "{needed} missing from {t:?}");
    }
    // Every frame of the task has a resume id.
    assert!(full.iter().all(|f| f.id.is_some()));
    let task = run_id(&full);

    // Cut after every frame: the rest, resumed, completes it exactly, and
    // opens with the run's RUN_STARTED again (id-less) so that an AG-UI
    // client can consume it on its own.
    for k in 1..full.len() {
        let id = full[k - 1].id.clone().unwrap();
        let rest = read_sse(resume_rest(&base, &task, &id).await, None).await;
        assert_eq!(rest[0].event, full[0].event, "resumed after {id}");
        assert_eq!(rest[0].id, None, "resumed after {id}");
        assert_eq!(rest[1..], full[k..], "resumed after {id}");
    }
    // A plain <seq> resumes after every event of that A2A item.
    let last = full.last().unwrap().id.clone().unwrap();
    assert!(!last.contains('.'));
    let rest = read_sse(resume_rest(&base, &task, &last).await, None).await;
    assert!(rest.is_empty());
    // `0`: the whole story again, identical.
    let again = read_sse(resume_rest(&base, &task, "0").await, None).await;
    assert_eq!(again, full);
}

#[tokio::test]
async fn a_live_stream_cut_mid_run_and_resumed_equals_the_whole_stream() {
    let s = Serve::start("memory");
    let base = s.base();
    // REST SendStreamingMessage, opted in by the query parameter; `/think`
    // streams its parts one by one.
    let resp = stream_rest(&base, "agui", "/think why is the sky blue").await;
    let head = read_sse(resp, Some(4)).await;
    assert_eq!(head.len(), 4);
    let task = run_id(&head);
    let id = head.last().unwrap().id.clone().unwrap();
    let rest = read_sse(resume_rest(&base, &task, &id).await, None).await;
    assert_eq!(types(&rest[..1]), ["RUN_STARTED"]);
    let mut joined = head.clone();
    // Put together, the resumed stream's own RUN_STARTED is dropped.
    joined.extend(rest.into_iter().skip(1));
    let whole = read_sse(resume_rest(&base, &task, "0").await, None).await;
    assert_eq!(joined, whole);
    verified(&joined);
    let t = types(&joined);
    for needed in [
        "REASONING_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_END",
        "TEXT_MESSAGE_CONTENT",
        "STATE_SNAPSHOT",
        "RUN_FINISHED",
    ] {
        assert!(t.contains(&needed), "{needed} missing from {t:?}");
    }
}

#[tokio::test]
async fn malformed_last_event_id_is_invalid_params_on_both_bindings() {
    let s = Serve::start("memory");
    let base = s.base();
    let headers = [AGUI, ("Last-Event-ID", "3.x")];
    let resp = send_rpc(&base, "SubscribeToTask", json!({"id": "nope"}), &headers).await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let resp = resume_rest(&base, "nope", "3.x").await;
    assert_eq!(resp.status(), 400);
    // A well-formed id for an unknown task is the ordinary A2A error.
    let body: Value = send_rpc(&base, "SubscribeToTask", json!({"id": "nope"}), &[AGUI])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["error"]["code"], -32001, "{body}");
}

#[tokio::test]
async fn without_the_opt_in_the_stream_stays_a2a_and_protobuf_matches_sse() {
    let s = Serve::start("memory");
    let base = s.base();
    let sse = [("Accept", "text/event-stream")];
    let resp = send_rpc(&base, "SendStreamingMessage", user("hello"), &sse).await;
    let text = resp.text().await.unwrap();
    assert!(text.contains("\"jsonrpc\":\"2.0\""), "{text}");
    assert!(!text.contains("RUN_STARTED"));

    // Protobuf only when named; same events as SSE for the same task.
    let proto = [("Accept", "application/vnd.ag-ui.event+proto")];
    let resp = send_rpc(&base, "SendStreamingMessage", user("/tool a b c"), &proto).await;
    assert_eq!(
        resp.headers()["content-type"],
        "application/vnd.ag-ui.event+proto"
    );
    let bytes = resp.bytes().await.unwrap();
    let mut dec = ProtoDecoder::new();
    let events = dec.push(&bytes).unwrap();
    assert!(dec.is_idle());
    let task = match &events[0].kind {
        switchboard_agui::EventKind::RunStarted(r) => r.run_id.clone(),
        other => panic!("first event {other:?}"),
    };
    let sse = read_sse(resume_rest(&base, &task, "0").await, None).await;
    let sse_events: Vec<Event> = sse.into_iter().map(|f| f.event).collect();
    assert_eq!(events, sse_events);
}

#[tokio::test]
async fn hector_vocabulary_on_request() {
    let s = Serve::start("memory");
    let base = s.base();
    let text = stream_rest(&base, "agui-hector", "/think hi")
        .await
        .text()
        .await
        .unwrap();
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(names[..2], ["task_start", "message_start"], "{text}");
    for needed in [
        "thinking_start",
        "thinking_delta",
        "thinking_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_stop",
        "task_complete",
    ] {
        assert!(names.contains(&needed), "{needed} missing: {names:?}");
    }
    assert!(!text.contains("RUN_STARTED"));
}

#[tokio::test]
async fn the_rust_client_reads_and_resumes_agui_streams_on_both_bindings() {
    use switchboard_client::A2AClient;
    use switchboard_client::protocol::{
        A2aRequest, Message, SendMessageRequest, SubscribeToTaskRequest,
    };
    let s = Serve::start("memory");
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let client = A2AClient::builder()
            .preferred_bindings([binding])
            .connect(&s.base())
            .await
            .unwrap();
        assert_eq!(client.interface().protocol_binding, binding);
        let request = A2aRequest::SendStreamingMessage(SendMessageRequest::new(
            Message::user_text("/tool one two three"),
        ));
        let items: Vec<_> = client
            .agui_stream(request, None)
            .await
            .unwrap()
            .map(Result::unwrap)
            .collect()
            .await;
        let events: Vec<Event> = items.iter().map(|i| i.event.clone()).collect();
        Verifier::verify_all(&events).unwrap();
        let t: Vec<&str> = events.iter().map(Event::type_name).collect();
        assert!(t.contains(&"TOOL_CALL_RESULT"), "{t:?}");
        let task = match &events[0].kind {
            switchboard_agui::EventKind::RunStarted(r) => r.run_id.clone(),
            other => panic!("first event {other:?}"),
        };
        // Resume half-way through with the id of an item.
        let k = items.len() / 2;
        let resume = A2aRequest::SubscribeToTask(SubscribeToTaskRequest {
            tenant: None,
            id: task,
        });
        let rest: Vec<_> = client
            .agui_stream(resume, items[k - 1].id.as_deref())
            .await
            .unwrap()
            .map(Result::unwrap)
            .collect()
            .await;
        // The run's RUN_STARTED again (id-less), then exactly the rest.
        assert_eq!(rest[0].id, None, "{binding}");
        assert_eq!(rest[0].event, items[0].event, "{binding}");
        assert_eq!(rest[1..], items[k..], "{binding}");
        // Errors before the stream are A2A errors.
        let missing = A2aRequest::SubscribeToTask(SubscribeToTaskRequest {
            tenant: None,
            id: "no-such-task".into(),
        });
        let err = client.agui_stream(missing, None).await.err().unwrap();
        assert_eq!(err.code(), Some(-32001), "{binding}: {err}");
    }
}

#[test]
fn cli_stream_agui_prints_one_line_per_event() {
    let s = Serve::start("memory");
    let run = |json: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"));
        cmd.args(["stream", "--agui", "--url", &s.base()]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.args(["/think", "why"]).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let human = run(false);
    let lines: Vec<&str> = human.lines().collect();
    assert!(lines[0].starts_with("RUN_STARTED "), "{human}");
    assert!(
        lines.last().unwrap().starts_with("RUN_FINISHED "),
        "{human}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("REASONING_MESSAGE_CONTENT "))
    );
    let json = run(true);
    let events: Vec<Event> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Verifier::verify_all(&events).unwrap();
    assert_eq!(events.len(), lines.len());

    // Progress is on by default, as on the A2A stream: the trackers arrive
    // as ACTIVITY events; --no-progress leaves the extension off.
    let progress = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(["stream", "--agui", "--url", &s.base()])
            .args(extra)
            .args(["/progress", "0.5"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let on = progress(&[]);
    assert!(
        on.lines()
            .any(|l| l.starts_with("ACTIVITY_SNAPSHOT activityType=\"a2a-task-progress\"")),
        "{on}"
    );
    let off = progress(&["--no-progress"]);
    assert!(!off.contains("ACTIVITY_"), "{off}");
}
