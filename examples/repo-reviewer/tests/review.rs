//! Runs the example as a process, as a user would: on a temporary SQLite
//! file, with an API key given by its hash, over real loopback sockets. A
//! review over each binding (progress, the chunked report, the form and its
//! answer), a cancel in the middle of a walk that cannot finish by itself,
//! the key refused where it is missing, `/agui`, `/healthz` and `/metrics`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use switchboard_client::A2AClient;
use switchboard_client::protocol::card::{BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC};
use switchboard_client::protocol::progress::{ProgressPayload, TASK_PROGRESS_URI, TrackerStatus};
use switchboard_client::protocol::{
    Message, Role, SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState,
};
use switchboard_sdk::agui::hitl::HitlForm;
use switchboard_sdk::auth::hash_api_key;

const KEY: &str = "sb_repo-reviewer-test-key-0123456789";

/// The example serving on a free loopback port with a fresh SQLite file;
/// killed when dropped.
struct Reviewer {
    child: Child,
    base: String,
    _store: tempfile::TempDir,
}

impl Reviewer {
    fn start() -> Reviewer {
        let store = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", store.path().join("reviews.db").display());
        let mut child = Command::new(env!("CARGO_BIN_EXE_repo-reviewer"))
            .args(["--listen", "127.0.0.1:0", "--store", &url])
            .env("SWITCHBOARD_API_KEY_HASH", hash_api_key(KEY))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = line.trim().to_string();
        assert!(base.starts_with("http://127.0.0.1:"), "first line {line:?}");
        Reviewer {
            child,
            base,
            _store: store,
        }
    }

    /// A client with the key, following progress, on `binding`.
    async fn client(&self, binding: &str) -> A2AClient {
        A2AClient::builder()
            .header("x-api-key", KEY)
            .extension(TASK_PROGRESS_URI)
            .preferred_bindings([binding])
            .connect(&self.base)
            .await
            .unwrap()
    }

    /// Bytes the process has read so far (`/proc/PID/io`, `rchar`).
    fn bytes_read(&self) -> u64 {
        let io = std::fs::read_to_string(format!("/proc/{}/io", self.child.id())).unwrap();
        io.lines()
            .find_map(|l| l.strip_prefix("rchar: "))
            .and_then(|n| n.trim().parse().ok())
            .expect("rchar in /proc/PID/io")
    }
}

impl Drop for Reviewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tree of `n` files in directories of 100: even ones `.rs`, odd ones
/// `.md`, file `i` of `i % 5 + 1` lines. Returns the total line count.
fn tree(root: &Path, n: usize) -> u64 {
    let mut lines = 0;
    for i in 0..n {
        let dir = root.join(format!("d{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        let ext = if i % 2 == 0 { "rs" } else { "md" };
        let count = i % 5 + 1;
        std::fs::write(dir.join(format!("f{i:05}.{ext}")), "line\n".repeat(count)).unwrap();
        lines += count as u64;
    }
    lines
}

/// The `files` and `bytes` trackers of a progress snapshot, if it has them.
fn progress(event: &StreamResponse) -> Option<ProgressPayload> {
    let StreamResponse::StatusUpdate(update) = event else {
        return None;
    };
    ProgressPayload::from_metadata(update.metadata.as_ref()?)?.ok()
}

/// What one streamed review showed.
struct Review {
    task_id: String,
    snapshots: Vec<ProgressPayload>,
    chunks: Vec<(bool, bool, String)>,
    last: Option<StreamResponse>,
}

async fn stream_review(client: &A2AClient, dir: &Path) -> Review {
    let message = Message::user_text(dir.display().to_string());
    let mut stream = client.send_streaming_message(message).await.unwrap();
    let mut review = Review {
        task_id: String::new(),
        snapshots: Vec::new(),
        chunks: Vec::new(),
        last: None,
    };
    while let Some(item) = stream.next().await {
        let event = item.unwrap().event;
        if let Some(id) = event.task_id() {
            review.task_id = id.to_string();
        }
        review.snapshots.extend(progress(&event));
        if let StreamResponse::ArtifactUpdate(a) = &event {
            review
                .chunks
                .push((a.append, a.last_chunk, a.artifact.text()));
        }
        review.last = Some(event);
    }
    review
}

/// The form the task waits on, from its input-required status.
fn waiting_form(last: &StreamResponse) -> (String, HitlForm) {
    let StreamResponse::StatusUpdate(update) = last else {
        panic!("the stream ends on a status update, got {last:?}");
    };
    assert_eq!(update.status.state, TaskState::InputRequired);
    let question = update.status.message.as_ref().expect("a question");
    let form = HitlForm::find(question).expect("a form in the question");
    (question.text(), form)
}

/// Answers the form of task `id` with `keep`.
async fn answer(client: &A2AClient, id: &str, form: &HitlForm, keep: bool) -> Task {
    let reply =
        Message::new(Role::User, vec![form.response(json!({"keep": keep}))]).with_task_id(id);
    match client
        .send_message(SendMessageRequest::new(reply))
        .await
        .unwrap()
    {
        SendMessageResponse::Task(task) => task,
        other => panic!("a task, got {other:?}"),
    }
}

/// A whole review over `binding`: progress up to every file, the report in
/// several chunks (the last flagged), the form, and the task finished by
/// the answer (`keep`: completed, else canceled).
async fn review_over(reviewer: &Reviewer, binding: &str, keep: bool) {
    let dir = tempfile::tempdir().unwrap();
    let lines = tree(dir.path(), 2_000);
    let client = reviewer.client(binding).await;
    let review = stream_review(&client, dir.path()).await;

    // A finished tracker is sent once more, completed, then left out.
    let latest = |id: &str| {
        let found = review.snapshots.iter().rev().find_map(|p| p.tracker(id));
        found
            .cloned()
            .unwrap_or_else(|| panic!("{binding}: no {id} tracker"))
    };
    let files = latest("files");
    assert_eq!(files.total, Some(2_000.0), "{binding}");
    assert_eq!(files.progress, Some(2_000.0), "{binding}");
    assert_eq!(files.status, Some(TrackerStatus::Completed), "{binding}");
    let bytes = latest("bytes");
    assert_eq!(bytes.progress, bytes.total, "{binding}");
    assert_eq!(bytes.status, Some(TrackerStatus::Completed), "{binding}");
    assert!(
        review.snapshots.len() >= 2,
        "{binding}: trackers start, then finish"
    );

    assert!(review.chunks.len() >= 3, "{binding}: {:?}", review.chunks);
    let (first, rest) = review.chunks.split_first().unwrap();
    assert!(!first.0, "the first chunk starts the artifact");
    assert!(rest.iter().all(|c| c.0), "later chunks append");
    let flagged: Vec<bool> = review.chunks.iter().map(|c| c.1).collect();
    assert_eq!(flagged.iter().filter(|f| **f).count(), 1, "{flagged:?}");
    assert_eq!(flagged.last(), Some(&true), "the last chunk is flagged");
    let report: String = review.chunks.iter().map(|c| c.2.as_str()).collect();
    assert!(report.contains("rs: 1000 files"), "{report}");
    assert!(report.contains("md: 1000 files"), "{report}");
    assert!(
        report.contains(&format!("total: 2000 files, {lines} lines")),
        "{report}"
    );

    let (question, form) = waiting_form(review.last.as_ref().unwrap());
    assert!(question.contains("2000 files"), "{question}");
    assert_eq!(form.form_id, "keep");
    // A reply that does not answer the form asks again.
    let plain = Message::user_text("what?").with_task_id(&review.task_id);
    let again = client
        .send_message(SendMessageRequest::new(plain))
        .await
        .unwrap();
    let SendMessageResponse::Task(again) = again else {
        panic!("a task")
    };
    assert_eq!(again.status.state, TaskState::InputRequired);

    let done = answer(&client, &review.task_id, &form, keep).await;
    let expected = if keep {
        TaskState::Completed
    } else {
        TaskState::Canceled
    };
    assert_eq!(done.status.state, expected, "{binding}");
    // The report stays on the task, whole, in the SQLite store.
    let task = client.get_task(review.task_id.as_str()).await.unwrap();
    assert_eq!(task.status.state, expected);
    assert_eq!(task.artifacts().len(), 1);
    let parts = &task.artifacts()[0].parts;
    let stored: String = parts.iter().filter_map(|p| p.as_text()).collect();
    assert_eq!(stored, report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_over_jsonrpc_reports_progress_and_a_chunked_report_then_asks() {
    let reviewer = Reviewer::start();
    review_over(&reviewer, BINDING_JSONRPC, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_over_rest_and_grpc() {
    let reviewer = Reviewer::start();
    review_over(&reviewer, BINDING_HTTP_JSON, true).await;
    review_over(&reviewer, BINDING_GRPC, false).await;
}

/// A walk that cannot end by itself (a sparse file of 1 TiB to read) is
/// canceled: the task ends canceled without a report, and the process
/// stops reading.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_walk() {
    let dir = tempfile::tempdir().unwrap();
    tree(&dir.path().join("a"), 200);
    let huge = std::fs::File::create(dir.path().join("m.bin")).unwrap();
    huge.set_len(1 << 40).unwrap();
    tree(&dir.path().join("z"), 200);

    let reviewer = Reviewer::start();
    let client = reviewer.client(BINDING_JSONRPC).await;
    let message = Message::user_text(dir.path().display().to_string());
    let mut stream = client.send_streaming_message(message).await.unwrap();
    let mut task_id = None;
    // Reading: the trackers started, so the listing is done.
    while let Some(item) = stream.next().await {
        let event = item.unwrap().event;
        task_id = event.task_id().map(str::to_string).or(task_id);
        if progress(&event).is_some_and(|p| p.tracker("bytes").is_some()) {
            break;
        }
    }
    let task_id = task_id.expect("a task");
    let canceled = client.cancel_task(task_id.as_str()).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let mut last = None;
    while let Some(item) = stream.next().await {
        last = item.unwrap().event.state().or(last);
    }
    assert_eq!(last, Some(TaskState::Canceled), "the stream ends canceled");

    // The walk stopped: the process reads nothing more. (Had it gone on, it
    // would read gigabytes a second until the end of the terabyte.)
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let before = reviewer.bytes_read();
        // Time passing, to see that nothing is read in it.
        tokio::time::sleep(Duration::from_millis(300)).await;
        if reviewer.bytes_read() - before < 1 << 20 {
            break;
        }
        assert!(Instant::now() < deadline, "the walk goes on reading");
    }
    let task = client.get_task(task_id.as_str()).await.unwrap();
    assert_eq!(task.status.state, TaskState::Canceled);
    assert!(task.artifacts().is_empty(), "no report: {task:?}");
}

/// Every binding and `/agui` refuse a call without the key; the card,
/// `/healthz` and `/metrics` need none; `/agui` with the key runs a review.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_guards_every_binding_and_agui_runs_a_review() {
    let reviewer = Reviewer::start();
    let base = &reviewer.base;
    switchboard_client::tls::install_default_provider();
    let http = reqwest::Client::new();

    let card: Value = http
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(card["securitySchemes"].is_object(), "{card}");
    assert_eq!(
        card["capabilities"]["extensions"][0]["uri"], TASK_PROGRESS_URI,
        "{card}"
    );
    let bindings: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["protocolBinding"].as_str())
        .collect();
    for binding in [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC] {
        assert!(bindings.contains(&binding), "{bindings:?}");
    }

    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}});
    let refused = http.post(base).json(&rpc).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let refused = http.get(format!("{base}/tasks/t")).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let keyless = A2AClient::builder()
        .preferred_bindings([BINDING_GRPC])
        .connect(base)
        .await
        .unwrap();
    let refused = keyless.get_task("t").await.unwrap_err();
    assert!(
        refused.to_string().contains("Authentication required"),
        "{refused}"
    );
    let dir = tempfile::tempdir().unwrap();
    let lines = tree(dir.path(), 20);
    let run = json!({
        "threadId": "thread-1",
        "runId": "run-1",
        "messages": [{"id": "u1", "role": "user", "content": dir.path().display().to_string()}],
        "tools": [], "context": [], "state": {}, "forwardedProps": {},
    });
    let agui = format!("{base}/agui");
    let refused = http.post(&agui).json(&run).send().await.unwrap();
    assert_eq!(refused.status(), 401);

    let answer = http
        .post(&agui)
        .header("x-api-key", KEY)
        .header("accept", "text/event-stream")
        .json(&run)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let body = answer.text().await.unwrap();
    let types: Vec<String> = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .filter_map(|event| event["type"].as_str().map(str::to_string))
        .collect();
    assert_eq!(types.first().map(String::as_str), Some("RUN_STARTED"));
    assert_eq!(types.last().map(String::as_str), Some("RUN_FINISHED"));
    assert!(
        body.contains(&format!("total: 20 files, {lines} lines")),
        "{body}"
    );
    assert!(body.contains("Keep the report?"), "the form: {body}");

    for (path, status) in [("/healthz", 200), ("/readyz", 200)] {
        let got = http.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(got.status(), status, "{path}");
    }
    let metrics = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("switchboard_requests_total{"),
        "requests counted: {metrics}"
    );
}
