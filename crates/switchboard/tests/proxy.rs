//! Remote agents behind `serve` (`runtime = "proxy"`): agents on the
//! official Python SDK (`interop/py/helloworld_sample.py`, the published
//! sample's shape; `interop/py/slow_sample.py`, one whose tasks wait for a
//! gate file, ask for input and can be canceled, behind a bearer token)
//! reached through our server: the card rewritten to our URLs, our CLI and
//! client driving them, follow-ups and cancels reaching the remote task,
//! failures named, `kill -9` of our server mid-task re-attached to the
//! remote task after the restart (nothing shown lost or repeated), and one audit line per call without the credential.
//!
//! The Python venv comes from `interop/setup.sh`; without it the tests are
//! skipped with a message, unless `SWITCHBOARD_REQUIRE_INTEROP` is set.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::time::Duration;

use futures::StreamExt as _;
use proc::{
    PythonServer, Serve, interop_python, log_replay, poll_until, switchboard_without_env,
    view_artifact_text,
};
use serde_json::Value;
use switchboard_client::A2AClient;
use switchboard_client::protocol::{Message, StreamResponse, TaskState};

/// The remote's bearer token: it must reach the remote, and no log line.
const TOKEN: &str = "remote-secret-t0ken-8b1f";

/// Logs the audit lines (and warnings) as JSON; the access log stays off
/// (its per-request `enabled!` check once made the writer drop the next
/// audit line on that thread: see `switchboard_telemetry::logging`).
const LOG: &str = "warn,switchboard::audit=info";

fn config(hello: &str, slow: &str) -> String {
    format!(
        r#"
agent = "demo"
log_format = "json"

[[agents]]
name = "hello"
path = "/hello"
runtime = "proxy"
url = "{hello}"

[[agents]]
name = "slow"
path = "/slow"
runtime = "proxy"
url = "{slow}"
token_env = "SLOW_TOKEN"
timeout = 30

[[agents]]
name = "wrong"
path = "/wrong"
runtime = "proxy"
url = "{slow}"
token_env = "WRONG_TOKEN"
"#
    )
}

fn start(dir: &std::path::Path, store: &str, hello: &str, slow: &str) -> Serve {
    let file = dir.join("proxy.toml");
    std::fs::write(&file, config(hello, slow)).unwrap();
    Serve::start_env(
        store,
        &[
            "--config",
            file.to_str().unwrap(),
            "--push-allow-host",
            "127.0.0.1",
        ],
        &[
            ("SLOW_TOKEN", TOKEN),
            ("WRONG_TOKEN", "not-the-token"),
            ("SWITCHBOARD_LOG", LOG),
        ],
        &dir.join("proxy.log"),
    )
}

/// `switchboard ARGS…`: its stdout, whether it succeeded.
fn cli(args: &[&str]) -> (String, bool) {
    let out = switchboard_without_env().args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (format!("{stdout}\n{stderr}"), out.status.success())
}

/// The audit lines of the server's log, parsed.
fn audit_lines(serve: &Serve) -> Vec<Value> {
    serve
        .log()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["target"] == "switchboard::audit")
        .collect()
}

/// Polls the server's log until an audit line for `task_id` with `outcome`
/// is there (the log writer writes lines shortly after they are made).
async fn audit_line(serve: &Serve, task_id: &str, outcome: &str) -> Value {
    poll_until(
        Duration::from_secs(10),
        Duration::from_millis(50),
        &format!("an audit line for {task_id} ({outcome})"),
        || async {
            audit_lines(serve)
                .into_iter()
                .find(|l| l["task_id"] == task_id && l["outcome"] == outcome)
        },
        |line: &Option<Value>| line.is_some(),
    )
    .await
    .unwrap()
}

fn task_id_of(cli_out: &str) -> String {
    cli_out
        .split_whitespace()
        .skip_while(|w| *w != "task")
        .nth(1)
        .unwrap()
        .to_string()
}

/// Polls `remote` until its task `id` is canceled (`what` names it on a
/// failure): a proxy cancels the remote task in the background.
async fn until_canceled(remote: &A2AClient, id: &str, what: &str) {
    poll_until(
        Duration::from_secs(10),
        Duration::from_millis(50),
        what,
        || async { remote.get_task(id).await.unwrap().status.state },
        |s: &TaskState| *s == TaskState::Canceled,
    )
    .await;
}

/// The official Python samples the proxy goes in front of: helloworld, and
/// the slow one behind a bearer token (none without the interop venv).
fn samples() -> Option<(PythonServer, PythonServer)> {
    let python = interop_python(".venv")?;
    let hello = PythonServer::start(&python, "py/helloworld_sample.py");
    let slow = PythonServer::start_with(&python, "py/slow_sample.py", &["--token", TOKEN]);
    Some((hello, slow))
}

#[tokio::test]
async fn the_official_sample_behind_our_proxy() {
    let Some((hello, slow)) = samples() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let serve = start(dir.path(), "memory", &hello.base, &slow.base);
    let base = serve.base();

    // The card is the remote's, its interfaces ours only.
    let card: Value = proc::get_json(&format!("{base}/hello/.well-known/agent-card.json")).await;
    assert_eq!(card["name"], "hello", "{card}");
    assert_eq!(card["description"], "Just a hello world agent", "{card}");
    assert_eq!(card["skills"][0]["id"], "echo_bot", "{card}");
    assert_eq!(card["capabilities"]["streaming"], true, "{card}");
    assert_ne!(card["capabilities"]["extendedAgentCard"], true, "{card}");
    proc::interfaces_under(&card, &format!("{base}/hello"));
    assert!(
        !card.to_string().contains(&hello.base),
        "the remote's URL is not in our card: {card}"
    );

    // Our CLI, blocking and streaming.
    let (out, ok) = cli(&["send", "--url", &format!("{base}/hello"), "hi"]);
    assert!(ok, "{out}");
    assert!(out.contains("[completed]"), "{out}");
    assert!(
        out.contains("Hello, World! I have received your request (hi)"),
        "{out}"
    );
    let sent = task_id_of(&out);
    let (out, ok) = cli(&["stream", "--url", &format!("{base}/hello"), "there"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("Hello, World! I have received your request (there)"),
        "{out}"
    );
    let line = audit_line(&serve, &sent, &TaskState::Completed.to_string()).await;
    assert_eq!(line["agent"], "hello", "{line}");
    assert_eq!(line["principal"], "anonymous", "{line}");
    assert_eq!(line["remote"], hello.base, "{line}");
    assert!(
        line["remote_task_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{line}"
    );
    assert!(
        line["timestamp"].is_string() && line["duration_ms"].is_u64(),
        "{line}"
    );

    // One local conversation is one remote conversation.
    let hello_url = format!("{base}/hello");
    let (out, _) = cli(&["send", "--url", &hello_url, "--context-id", "conv-1", "one"]);
    let first = rpc_task(&hello_url, &task_id_of(&out)).await;
    let (out, _) = cli(&["send", "--url", &hello_url, "--context-id", "conv-1", "two"]);
    let second = rpc_task(&hello_url, &task_id_of(&out)).await;
    let (out, _) = cli(&[
        "send",
        "--url",
        &hello_url,
        "--context-id",
        "conv-2",
        "three",
    ]);
    let other = rpc_task(&hello_url, &task_id_of(&out)).await;
    let remote_context = |task: &Value| remote_meta(task, "switchboard.proxy.remoteContextId");
    assert_eq!(remote_context(&first), remote_context(&second));
    assert_ne!(remote_context(&first), remote_context(&other));
    assert_ne!(
        remote_context(&first),
        "conv-1",
        "never the caller's own id"
    );

    // A question: the answer goes to the remote task; the token reached it.
    let slow_url = format!("{base}/slow");
    let (out, ok) = cli(&["send", "--url", &slow_url, "ask"]);
    assert!(ok && out.contains("[input-required]"), "{out}");
    assert!(out.contains("What is your name?"), "{out}");
    let asked = task_id_of(&out);
    let (out, ok) = cli(&["send", "--url", &slow_url, "--task-id", &asked, "Bob"]);
    assert!(ok && out.contains("[completed]"), "{out}");
    assert!(out.contains("hello Bob"), "{out}");
    let task = rpc_task(&slow_url, &asked).await;
    let remote_id = remote_task_of(&task);

    // Push, on the mounted agent: a webhook of a task waiting for input
    // hears it complete once answered.
    let card: Value = proc::get_json(&format!("{slow_url}/.well-known/agent-card.json")).await;
    assert_eq!(card["capabilities"]["pushNotifications"], true, "{card}");
    let (hook, mut heard) =
        proc::webhook(|_, body| serde_json::from_slice::<Value>(body).unwrap_or_default()).await;
    let (out, _) = cli(&["send", "--url", &slow_url, "ask"]);
    let pushed = task_id_of(&out);
    proc::rpc(
        &format!("{slow_url}/"),
        "CreateTaskPushNotificationConfig",
        serde_json::json!({"taskId": pushed, "url": hook}),
    )
    .await;
    let (out, ok) = cli(&["send", "--url", &slow_url, "--task-id", &pushed, "Ann"]);
    assert!(ok && out.contains("hello Ann"), "{out}");
    let completed = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let body = heard.recv().await.unwrap();
            if body.to_string().contains("TASK_STATE_COMPLETED") {
                return body;
            }
        }
    })
    .await
    .expect("a push of the completed task");
    assert!(completed.to_string().contains(&pushed), "{completed}");

    // A cancel of a task waiting for input cancels the remote one.
    let (out, _) = cli(&["send", "--url", &slow_url, "ask"]);
    let waiting = task_id_of(&out);
    let remote_waiting = remote_task_of(&rpc_task(&slow_url, &waiting).await);
    assert_ne!(remote_waiting, remote_id);
    let (out, ok) = cli(&["cancel", "--url", &slow_url, &waiting]);
    assert!(ok, "{out}");
    let remote = A2AClient::builder()
        .bearer_token(TOKEN)
        .connect(&slow.base)
        .await
        .unwrap();
    until_canceled(&remote, &remote_waiting, "the remote task canceled").await;

    // A cancel while the remote works cancels it too.
    let ours = A2AClient::connect(&slow_url).await.unwrap();
    let mut stream = ours
        .send_streaming_message(Message::user_text("wait"))
        .await
        .unwrap();
    let (task_id, remote_working) = loop {
        let event = stream.next().await.unwrap().unwrap().event;
        if let StreamResponse::StatusUpdate(u) = &event
            && let Some(md) = &u.metadata
            && let Some(r) = md.get("switchboard.proxy.remoteTaskId")
        {
            break (u.task_id.clone(), r.as_str().unwrap().to_string());
        }
    };
    let canceled = ours.cancel_task(task_id.clone()).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    until_canceled(&remote, &remote_working, "the working remote task canceled").await;

    // Refused credentials: the task fails saying so.
    let (out, _) = cli(&["send", "--url", &format!("{base}/wrong"), "hi"]);
    assert!(out.contains("[failed]"), "{out}");
    assert!(out.contains("refused") && out.contains("401"), "{out}");

    // The remote gone: the task fails saying so, at once.
    drop(hello);
    let (out, _) = cli(&["send", "--url", &format!("{base}/hello"), "anyone?"]);
    assert!(out.contains("[failed]"), "{out}");
    assert!(out.contains("unreachable"), "{out}");
    let gone = task_id_of(&out);
    audit_line(&serve, &gone, "unreachable").await;

    // No audit line (and no other line) carries the credential.
    assert!(audit_lines(&serve).len() >= 6, "{}", serve.log());
    assert!(!serve.log().contains(TOKEN), "{}", serve.log());
}

/// GetTask over our JSON-RPC at `agent_url`, as JSON.
async fn rpc_task(agent_url: &str, id: &str) -> Value {
    proc::rpc(
        &format!("{agent_url}/"),
        "GetTask",
        serde_json::json!({ "id": id }),
    )
    .await
}

/// The remote task id our task keeps in its history's metadata.
fn remote_task_of(task: &Value) -> String {
    remote_meta(task, "switchboard.proxy.remoteTaskId")
}

/// The metadata `key` our task keeps in its history (or status message).
fn remote_meta(task: &Value, key: &str) -> String {
    let mut messages: Vec<&Value> = task["history"].as_array().into_iter().flatten().collect();
    messages.extend(task["status"].get("message"));
    messages
        .iter()
        .find_map(|m| m["metadata"][key].as_str())
        .unwrap_or_else(|| panic!("no {key} in {task}"))
        .to_string()
}

#[tokio::test]
async fn kill_9_mid_task_reattaches_to_the_remote_task() {
    let Some((hello, slow)) = samples() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("proxy.db").display());
    let serve = start(dir.path(), &store, &hello.base, &slow.base);
    let slow_url = format!("{}/slow", serve.base());
    let gate = dir.path().join("gate");

    // Streamed until the remote's first chunk is mirrored; the remote then
    // waits for the gate.
    let client = A2AClient::builder()
        .no_reconnect()
        .connect(&slow_url)
        .await
        .unwrap();
    let mut stream = client
        .send_streaming_message(Message::user_text(format!("gate {}", gate.display())))
        .await
        .unwrap();
    let mut shown = Vec::new();
    let task_id = loop {
        let event = stream.next().await.unwrap().unwrap();
        let seq = event.seq.unwrap();
        shown.push((seq, event.event.clone()));
        if let StreamResponse::ArtifactUpdate(a) = &event.event
            && a.artifact.text() == "before"
        {
            break a.task_id.clone();
        }
    };
    serve.kill();
    drop(stream);

    // Restarted, the task is re-attached to its remote task, which still
    // waits: a client resubscribing to us sees it through to the end.
    let serve = start(dir.path(), &store, &hello.base, &slow.base);
    let slow_url = format!("{}/slow", serve.base());
    let client = A2AClient::builder()
        .no_reconnect()
        .connect(&slow_url)
        .await
        .unwrap();
    let mut resumed = client.subscribe_to_task(task_id.clone()).await.unwrap();
    let first = resumed.next().await.unwrap().unwrap();
    let StreamResponse::Task(at) = &first.event else {
        panic!("a subscription starts with the task: {first:?}");
    };
    assert_eq!(
        at.status.state,
        TaskState::Working,
        "still working after the restart: {at:?}"
    );
    std::fs::write(&gate, b"open").unwrap();
    let mut seqs = vec![first.seq.unwrap()];
    let end = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let event = resumed.next().await.unwrap().unwrap();
            seqs.push(event.seq.unwrap());
            if let StreamResponse::StatusUpdate(u) = &event.event
                && u.status.state.is_terminal()
            {
                return u.status.state;
            }
        }
    })
    .await
    .expect("the re-attached task ends");
    assert_eq!(end, TaskState::Completed, "the remote's end, mirrored");
    for pair in seqs.windows(2) {
        assert_eq!(
            pair[1],
            pair[0] + 1,
            "contiguous after the restart: {seqs:?}"
        );
    }

    // The log: every event shown before the kill, unchanged; then the
    // rest, numbered on without a gap, each remote chunk in it once.
    let log = log_replay(&format!("{slow_url}/"), &task_id, u64::MAX).await;
    for (seq, event) in &shown {
        let logged = log.iter().find(|(s, _)| s == seq);
        match (logged, event) {
            (Some((_, StreamResponse::Task(_))), StreamResponse::Task(_)) => {}
            (Some((_, logged)), event) => assert_eq!(logged, event, "event {seq}"),
            (None, _) => panic!("event {seq} lost: {log:?}"),
        }
    }
    let numbers: Vec<u64> = log.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        numbers,
        (1..=numbers.len() as u64).collect::<Vec<_>>(),
        "the log is numbered 1, 2, 3, … without a gap"
    );
    assert_eq!(
        numbers.last(),
        seqs.last(),
        "the subscription saw the end of the log"
    );
    let chunks: Vec<String> = log
        .iter()
        .filter_map(|(_, e)| match e {
            StreamResponse::ArtifactUpdate(a) => Some(a.artifact.text()),
            _ => None,
        })
        .collect();
    assert_eq!(chunks, ["before", "after"], "each chunk once: {log:?}");
    let task = rpc_task(&slow_url, &task_id).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    let texts: Vec<&str> = task["artifacts"][0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert_eq!(texts, ["before", "after"], "the remote's result: {task}");
    drop(serve);
}

#[test]
fn an_unreachable_remote_stops_the_start_naming_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        format!(
            "[[agents]]\nname = \"gone\"\npath = \"/gone\"\nruntime = \"proxy\"\nurl = \"{url}\"\n"
        ),
    )
    .unwrap();
    let out = switchboard_without_env()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--store",
            "memory",
            "--config",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("\"gone\"") && stderr.contains("unreachable"),
        "{stderr}"
    );
}

/// The official Python SDK's sample agent (the demo agent's contract:
/// text → an artifact "echo: …", `/message X` → a direct reply, `/ask` →
/// input-required) behind our proxy, driven by the official
/// `@ag-ui/client` through the proxy agent's own `<path>/agui`.
#[test]
fn the_agui_client_drives_the_proxied_sample_at_its_path() {
    let Some(node) = proc::interop_node("agui", "@ag-ui/client") else {
        return;
    };
    let Some(python) = interop_python(".venv") else {
        return;
    };
    let sample = PythonServer::start(&python, "py/sample_server.py");
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[[agents]]\nname = \"sample\"\npath = \"/sample\"\nruntime = \"proxy\"\nurl = \"{}\"\n",
        sample.base
    );
    let serve = Serve::start_configured(dir.path(), "agui", "memory", &config, &[]);
    let url = format!("{}/sample/agui", serve.base());
    let report = proc::agui_node_report(&node, "bridge.mjs", [url.as_str(), "sample"]);
    let sample_run = &report["sample"];
    let runs = &sample_run["runs"];
    for (name, outcome) in [
        ("echo", "success"),
        ("message", "success"),
        ("ask", "interrupt"),
        ("answer", "success"),
    ] {
        let run = &runs[name];
        assert_eq!(run["failure"], Value::Null, "{name}: {run}");
        assert_eq!(run["runErrors"], serde_json::json!([]), "{name}: {run}");
        assert_eq!(run["outcome"], outcome, "{name}: {run}");
    }
    let echo = &runs["echo"];
    let text = view_artifact_text(&echo["state"]["view"], None);
    assert_eq!(text, "echo: hello sample", "{echo}");
    let new = runs["message"]["newMessages"].as_array().unwrap();
    assert_eq!(new[0]["content"], "hi there", "{}", runs["message"]);
    let task_id = sample_run["taskId"].as_str().unwrap();
    let view = &sample_run["final"]["state"]["view"];
    assert_eq!(view["tasksById"][task_id]["state"], "completed", "{view}");
    let greeting = view_artifact_text(view, Some(task_id));
    assert_eq!(greeting, "Hello, Ada!", "{view}");
}
