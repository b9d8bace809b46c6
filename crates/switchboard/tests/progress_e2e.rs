#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The task-progress extension end to end, against the real `switchboard`
//! binary serving the demo agent: a client that activates the extension sees
//! valid, monotonic trackers in the stream and in GetTask; one that does not
//! sees none anywhere; and `A2A-Extensions` is echoed only to the activating
//! caller.

mod proc;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures::StreamExt;
use proc::Serve;
use serde_json::{Value, json};
use switchboard_client::{A2AClient, EventStream};
use switchboard_protocol::progress::{
    ProgressLimits, ProgressPayload, ProgressReducer, TASK_PROGRESS_URI, TrackerStatus,
    check_monotonic, validate,
};
use switchboard_protocol::{
    GetTaskRequest, Message, Metadata, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, StreamResponse, Task, TaskState,
};

/// `switchboard serve` with the demo agent on the memory store, on a port
/// of its choosing; killed on drop.
fn serve_demo() -> Serve {
    Serve::start_with("memory", &["--agent", "demo"])
}

/// Bounds a test step.
async fn within<T>(secs: u64, what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(secs), f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no result within {secs} s"))
}

/// Streams `text` through `client` to its end (bounded by 60 s): every
/// event, in order.
async fn stream_events(client: &A2AClient, text: &str) -> Vec<StreamResponse> {
    let stream = open_stream(client, text).await;
    let events = stream.map(|item| item.unwrap().event).collect();
    within(60, &format!("the {text} stream"), events).await
}

/// Opens a stream of `text` through `client` (bounded by 30 s).
async fn open_stream(client: &A2AClient, text: &str) -> EventStream {
    let request = SendMessageRequest::new(Message::user_text(text));
    within(30, "open stream", client.send_streaming_message(request))
        .await
        .unwrap()
}

async fn client(base: &str, activate: bool) -> A2AClient {
    let mut b = A2AClient::builder().timeout(Duration::from_secs(30));
    if activate {
        b = b.extension(TASK_PROGRESS_URI);
    }
    within(30, "connect", b.connect(base)).await.unwrap()
}

fn progress_entry(md: Option<&Metadata>) -> Option<&Value> {
    md.and_then(|m| m.get(TASK_PROGRESS_URI))
}

/// Reads, validates (raw JSON and typed) and returns a progress entry.
fn checked_payload(raw: &Value, limits: &ProgressLimits) -> ProgressPayload {
    let payload = ProgressPayload::from_value(raw, limits)
        .unwrap_or_else(|e| panic!("invalid progress payload {raw}: {e}"));
    if let Err(v) = validate(&payload, limits) {
        panic!("payload {raw} breaks the rules: {v:?}");
    }
    payload
}

/// Starts a job without waiting for it (returnImmediately).
async fn start_job(client: &A2AClient, text: &str) -> Task {
    let mut req = SendMessageRequest::new(Message::user_text(text));
    req.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    match within(30, "send", client.send_message(req)).await.unwrap() {
        SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

async fn get(client: &A2AClient, id: &str) -> Task {
    within(
        30,
        "GetTask",
        client.get_task(GetTaskRequest {
            tenant: None,
            id: id.to_string(),
            history_length: Some(0),
        }),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn an_activating_client_sees_valid_monotonic_trackers_in_the_stream() {
    let server = serve_demo();
    let client = client(&server.base(), true).await;
    let card = client.card().expect("connected through the card");
    assert!(
        card.capabilities
            .extensions
            .iter()
            .any(|e| e.uri == TASK_PROGRESS_URI),
        "the demo card declares task-progress"
    );
    let limits = ProgressLimits::from_card(card).expect("declared limits");

    let events = stream_events(&client, "/progress 2").await;

    let mut reducer = ProgressReducer::with_limits(limits.clone());
    let mut previous: Option<ProgressPayload> = None;
    let mut last_seen: HashMap<String, f64> = HashMap::new();
    let mut ids = HashSet::new();
    let mut snapshots = 0;
    let mut download_done = false;
    let mut last_state = None;
    for event in events {
        if let Some(s) = event.state() {
            last_state = Some(s);
        }
        reducer.apply(&event);
        let StreamResponse::StatusUpdate(u) = &event else {
            continue;
        };
        let on_event = progress_entry(u.metadata.as_ref());
        let on_message =
            progress_entry(u.status.message.as_ref().and_then(|m| m.metadata.as_ref()));
        assert_eq!(
            on_event, on_message,
            "the event and its status message carry the same snapshot"
        );
        let Some(raw) = on_event else { continue };
        let payload = checked_payload(raw, &limits);
        snapshots += 1;
        if let Some(prev) = &previous {
            let v = check_monotonic(prev, &payload);
            assert!(v.is_empty(), "not monotonic: {v:?}");
        }
        for t in &payload.trackers {
            ids.insert(t.id.clone());
            let p = t.progress.expect("the demo always reports progress");
            if let Some(before) = last_seen.insert(t.id.clone(), p) {
                assert!(p >= before, "{} went back from {before} to {p}", t.id);
            }
            if t.id == "download" && t.status == Some(TrackerStatus::Completed) {
                assert_eq!((t.progress, t.total), (Some(40.0), Some(40.0)));
                download_done = true;
            }
        }
        previous = Some(payload);
    }

    assert_eq!(last_state, Some(TaskState::Completed));
    assert!(snapshots >= 4, "only {snapshots} progress snapshots");
    assert_eq!(
        ids,
        HashSet::from(["download", "index", "scan"].map(String::from))
    );
    assert!(download_done, "download never reached 40/40 completed");
    assert_eq!(
        reducer.violation_count(),
        0,
        "violations: {:?}",
        reducer.violations()
    );
    assert!(reducer.active().is_empty());
    let download = reducer.tracker("download").unwrap();
    assert_eq!(download.summary(), "download done");
}

#[tokio::test]
async fn get_task_shows_progress_to_activating_callers_only() {
    let server = serve_demo();
    let activated = client(&server.base(), true).await;
    let plain = client(&server.base(), false).await;
    let limits = ProgressLimits::from_card(activated.card().unwrap()).unwrap();

    let task = start_job(&activated, "/progress 3").await;
    let mut with_progress = 0;
    let mut downloads = Vec::new();
    let state = within(60, "polling GetTask", async {
        loop {
            let t = get(&activated, &task.id).await;
            if let Some(raw) =
                progress_entry(t.status.message.as_ref().and_then(|m| m.metadata.as_ref()))
            {
                assert_eq!(t.status.state, TaskState::Working);
                let payload = checked_payload(raw, &limits);
                if let Some(d) = payload.tracker("download") {
                    downloads.push(d.progress.unwrap_or(0.0));
                }
                with_progress += 1;
            }
            // The same task, read by a caller that did not activate it.
            let hidden = get(&plain, &task.id).await;
            let text = serde_json::to_string(&hidden).unwrap();
            assert!(
                !text.contains(TASK_PROGRESS_URI),
                "progress leaked to a caller that did not activate it: {text}"
            );
            if t.status.state.is_terminal() {
                break t.status.state;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert_eq!(state, TaskState::Completed);
    assert!(
        with_progress >= 3,
        "GetTask showed progress only {with_progress} times"
    );
    proc::assert_advances("download, between polls,", &downloads);
}

#[tokio::test]
async fn a_client_that_does_not_activate_sees_no_trackers() {
    let server = serve_demo();
    let plain = client(&server.base(), false).await;
    let events = stream_events(&plain, "/progress 1").await;
    let mut reducer = ProgressReducer::new();
    let mut statuses = 0;
    let mut task_id = None;
    let mut last_state = None;
    for event in events {
        let text = serde_json::to_string(&event).unwrap();
        assert!(!text.contains(TASK_PROGRESS_URI), "{text}");
        assert!(!reducer.apply(&event), "a progress entry: {text}");
        if let StreamResponse::StatusUpdate(_) = &event {
            statuses += 1;
        }
        if task_id.is_none() {
            task_id = event.task_id().map(str::to_string);
        }
        last_state = event.state().or(last_state);
    }
    assert_eq!(last_state, Some(TaskState::Completed));
    // The job still reports, as plain status text.
    assert!(statuses >= 4, "{statuses} status updates");
    assert!(reducer.is_empty());
    let t = get(&plain, task_id.as_deref().unwrap()).await;
    assert!(
        !serde_json::to_string(&t)
            .unwrap()
            .contains(TASK_PROGRESS_URI)
    );

    // A running job, polled without activation.
    let task = start_job(&plain, "/progress 2").await;
    within(30, "polling GetTask", async {
        loop {
            let t = get(&plain, &task.id).await;
            let text = serde_json::to_string(&t).unwrap();
            assert!(!text.contains(TASK_PROGRESS_URI), "{text}");
            if t.status.state.is_terminal() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn the_extensions_header_is_echoed_only_to_the_activating_caller() {
    let server = serve_demo();
    let task = start_job(&client(&server.base(), false).await, "/progress 1").await;
    let http = reqwest::Client::new();
    let call = |method: &str, params: Value, extensions: Option<&str>| {
        let mut req = http
            .post(format!("{}/", server.base()))
            .header("Content-Type", "application/json")
            .header("A2A-Version", "1.0")
            .body(
                json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string(),
            );
        if let Some(e) = extensions {
            req = req.header("A2A-Extensions", e);
        }
        req.send()
    };
    let echoed = |resp: &reqwest::Response| {
        resp.headers()
            .get_all("a2a-extensions")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|s| s.trim().to_string())
            .collect::<Vec<_>>()
    };
    let get_params = json!({"id": task.id});

    let resp = within(
        30,
        "GetTask",
        call("GetTask", get_params.clone(), Some(TASK_PROGRESS_URI)),
    )
    .await
    .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(echoed(&resp), [TASK_PROGRESS_URI]);

    let resp = within(30, "GetTask", call("GetTask", get_params.clone(), None))
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(echoed(&resp).is_empty(), "{:?}", echoed(&resp));

    // An extension the agent does not support is not echoed either.
    let resp = within(
        30,
        "GetTask",
        call(
            "GetTask",
            get_params,
            Some("https://example.com/not-supported/v1"),
        ),
    )
    .await
    .unwrap();
    assert!(echoed(&resp).is_empty(), "{:?}", echoed(&resp));

    // The streaming response echoes it too.
    let stream_params = json!({"message": {"messageId": "m-ext", "role": "ROLE_USER",
        "parts": [{"text": "/progress 1"}]}});
    let resp = within(
        30,
        "SendStreamingMessage",
        call(
            "SendStreamingMessage",
            stream_params.clone(),
            Some(TASK_PROGRESS_URI),
        ),
    )
    .await
    .unwrap();
    assert_eq!(echoed(&resp), [TASK_PROGRESS_URI]);
    let body = within(60, "stream body", resp.text()).await.unwrap();
    assert!(
        body.contains(TASK_PROGRESS_URI),
        "no progress in the stream"
    );

    let mut plain_params = stream_params;
    plain_params["message"]["messageId"] = json!("m-plain");
    let resp = within(
        30,
        "SendStreamingMessage",
        call("SendStreamingMessage", plain_params, None),
    )
    .await
    .unwrap();
    assert!(echoed(&resp).is_empty(), "{:?}", echoed(&resp));
    let body = within(60, "stream body", resp.text()).await.unwrap();
    assert!(!body.contains(TASK_PROGRESS_URI), "progress leaked: {body}");
}
