//! Several agents on one `serve` (`[[agents]]` in the config file): two
//! agents of different runtimes (a program written for `a2a-cli --exec`,
//! and the built-in echo) beside the root agent, each with its own card,
//! listed at `/agents`, reached by our client and by the official Python
//! client at its own path, and never reaching each other's tasks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use proc::{
    Serve, get, interop_python, repo_root, run_interop_driver, success_stdout_of,
    switchboard_without_env, uuid,
};
use reqwest::StatusCode;
use serde_json::Value;

fn config() -> String {
    let reverse = repo_root().join("examples/exec/a2a_cli_reverse.py");
    format!(
        r#"
agent = "demo"

[[agents]]
name = "reverse"
path = "/reverse"
runtime = "exec"
description = "Reverses each line you send"
command = "python3"
args = ["-u", {reverse:?}]
max_concurrent = 2
[[agents.skills]]
id = "reverse"
name = "Reverse"
description = "Reverses text"
tags = ["text"]

[[agents]]
name = "echo"
path = "/echo"
runtime = "echo-task"
"#,
        reverse = reverse.to_str().unwrap()
    )
}

fn start(dir: &tempfile::TempDir) -> Serve {
    Serve::start_configured_sqlite(dir.path(), "agents", &config(), &[])
}

async fn json(url: &str) -> Value {
    let resp = get(url, &[]).await;
    assert_eq!(resp.status(), StatusCode::OK, "{url}");
    resp.json().await.unwrap()
}

/// `switchboard send --url URL TEXT`'s stdout (it must succeed).
fn send(url: &str, args: &[&str]) -> String {
    let out = switchboard_without_env()
        .args(["send", "--url", url])
        .args(args)
        .output()
        .unwrap();
    success_stdout_of(&format!("send to {url} failed: "), &out)
}

#[tokio::test]
async fn two_agents_of_different_runtimes_each_at_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let serve = start(&dir);
    let base = serve.base();

    let listed = json(&format!("{base}/agents")).await;
    let rows: Vec<(String, String, String)> = listed["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_string(),
                a["name"].as_str().unwrap().to_string(),
                a["card"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 3, "{listed}");
    assert_eq!(rows[0].0, "/");
    assert_eq!(
        rows[1],
        (
            "/reverse".into(),
            "reverse".into(),
            format!("{base}/reverse/.well-known/agent-card.json")
        )
    );
    assert_eq!(rows[2].0, "/echo");

    for (path, name) in [("/reverse", "reverse"), ("/echo", "echo")] {
        let card = json(&format!("{base}{path}/.well-known/agent-card.json")).await;
        assert_eq!(card["name"], name, "{card}");
        for i in proc::interfaces_under(&card, &format!("{base}{path}")) {
            assert_ne!(
                i["protocolBinding"], "GRPC",
                "gRPC reaches the root agent only"
            );
        }
    }
    let card = json(&format!("{base}/reverse/.well-known/agent-card.json")).await;
    assert_eq!(card["description"], "Reverses each line you send");
    assert_eq!(card["skills"][0]["id"], "reverse");
    let root = json(&format!("{base}/.well-known/agent-card.json")).await;
    assert_eq!(root["name"], "switchboard demo");

    let out = send(&format!("{base}/reverse"), &["hello agents"]);
    assert!(out.contains("stnega olleh"), "{out}");
    assert!(out.contains("[completed]"), "{out}");
    let out = send(&format!("{base}/echo"), &["ping pong"]);
    assert!(out.contains("ping pong"), "{out}");

    // A task of one agent is no other agent's: not found through another
    // path, and a follow-up there cannot run the wrong agent on it.
    let task_id = out
        .split_whitespace()
        .skip_while(|w| *w != "task")
        .nth(1)
        .unwrap()
        .to_string();
    let own = get(
        &format!("{base}/echo/tasks/{task_id}"),
        &[("A2A-Version", "1.0")],
    )
    .await;
    assert_eq!(own.status(), StatusCode::OK);
    for other in ["/reverse", ""] {
        let resp = get(
            &format!("{base}{other}/tasks/{task_id}"),
            &[("A2A-Version", "1.0")],
        )
        .await;
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "through {other:?}");
    }
    let out = switchboard_without_env()
        .args([
            "send",
            "--url",
            &format!("{base}/reverse"),
            "--task-id",
            &task_id,
            "hi",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Task not found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_official_python_client_talks_to_each_agent() {
    let Some(python) = interop_python(".venv") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let serve = start(&dir);
    run_interop_driver(
        &python,
        "interop/py/agents.py",
        &[
            &serve.base(),
            "/reverse",
            "abc def",
            "fed cba",
            "/echo",
            "from python",
            "from python",
        ],
        4,
    );
}

#[test]
fn config_check_shows_the_agents_and_names_a_bad_table() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.toml");
    std::fs::write(&good, config()).unwrap();
    let out = switchboard_without_env()
        .args(["config", "check", "--config", good.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("[[agents]]"), "{stdout}");
    assert!(stdout.contains("path = \"/reverse\""), "{stdout}");

    for (table, error) in [
        (
            "name = \"b\"\npath = \"/b\"\nruntime = \"llama\"",
            "unknown runtime \"llama\"",
        ),
        (
            "name = \"b\"\npath = \"/b\"\nruntime = \"exec\"",
            "missing field `command`",
        ),
        (
            "name = \"b\"\npath = \"/reverse\"\nruntime = \"echo\"",
            "clashes with [[agents]] #1",
        ),
    ] {
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, format!("{}\n[[agents]]\n{table}\n", config())).unwrap();
        let out = switchboard_without_env()
            .args(["config", "check", "--config", bad.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{table}");
        assert!(stderr.contains("[[agents]] #3 (\"b\")"), "{stderr}");
        assert!(stderr.contains(error), "{stderr}");
    }
}

const ROOT_KEY: &str = "root-key-4c1d";
const REVERSE_KEY: &str = "reverse-key-9e2a";
const ECHO_KEY: &str = "echo-key-77f0";

/// Two agents of different runtimes, each with its own API key (and the
/// echo agent with its own rate), beside a root agent with the server's.
fn keyed_config() -> String {
    let hash = switchboard_auth::hash_api_key;
    let reverse = repo_root().join("examples/exec/a2a_cli_reverse.py");
    format!(
        r#"
agent = "echo-task"

[auth]
api_key_hashes = ["{root}=root-caller"]

[[agents]]
name = "reverse"
path = "/reverse"
runtime = "exec"
command = "python3"
args = ["-u", {reverse:?}]
[agents.auth]
api_key_hashes = ["{rev}=reverse-caller"]

[[agents]]
name = "echo"
path = "/echo"
runtime = "echo-task"
[agents.auth]
api_key_hashes = ["{echo}=echo-caller"]
[agents.limits]
rate_per_second = 0.001
rate_burst = 3
"#,
        root = hash(ROOT_KEY),
        rev = hash(REVERSE_KEY),
        echo = hash(ECHO_KEY),
        reverse = reverse.to_str().unwrap()
    )
}

/// POSTs a JSON-RPC SendMessage to `url` with `key`: the status and body.
async fn send_with(url: &str, key: &str, text: &str) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .header("X-API-Key", key)
        .json(&serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"role": "ROLE_USER", "messageId": uuid(), "parts": [{"text": text}]}}
        }))
        .send()
        .await
        .unwrap();
    (
        resp.status().as_u16(),
        resp.json().await.unwrap_or_default(),
    )
}

/// The same over REST (`POST /message:send`): the status.
async fn rest_send_with(url: &str, key: &str, text: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{url}/message:send"))
        .header("A2A-Version", "1.0")
        .header("X-API-Key", key)
        .json(&serde_json::json!({
            "message": {"role": "ROLE_USER", "messageId": uuid(), "parts": [{"text": text}]}
        }))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn each_agent_lets_in_its_own_callers_only() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start_configured(dir.path(), "keyed", "memory", &keyed_config(), &[]);
    let base = serve.base();
    let (root, reverse, echo) = (
        base.clone(),
        format!("{base}/reverse"),
        format!("{base}/echo"),
    );

    // Each card advertises the API key scheme of its own agent.
    for url in [&root, &reverse, &echo] {
        let card = json(&format!("{url}/.well-known/agent-card.json")).await;
        assert_eq!(
            card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"]["name"], "X-API-Key",
            "{url}: {card}"
        );
    }

    // Its own key lets a caller in; any other key is refused, on JSON-RPC
    // (401, -31401) and on REST (401).
    for (url, own, others) in [
        (&reverse, REVERSE_KEY, [ROOT_KEY, ECHO_KEY]),
        (&echo, ECHO_KEY, [ROOT_KEY, REVERSE_KEY]),
        (&root, ROOT_KEY, [REVERSE_KEY, ECHO_KEY]),
    ] {
        let (status, body) = send_with(url, own, "abc").await;
        assert_eq!(status, 200, "{url} with its key: {body}");
        assert!(body["result"]["task"]["id"].is_string(), "{url}: {body}");
        for other in others {
            let (status, body) = send_with(url, other, "abc").await;
            assert_eq!(status, 401, "{url} with {other}: {body}");
            assert_eq!(body["error"]["code"], -31401, "{url} with {other}: {body}");
            assert_eq!(
                rest_send_with(url, other, "abc").await,
                401,
                "{url} REST {other}"
            );
        }
    }
    let (_, body) = send_with(&reverse, REVERSE_KEY, "hello agents").await;
    assert!(body.to_string().contains("stnega olleh"), "{body}");

    // The AG-UI endpoint of an agent is behind its gate too.
    let agui = reqwest::Client::new()
        .post(format!("{reverse}/agui"))
        .header("X-API-Key", ECHO_KEY)
        .json(&serde_json::json!({"threadId": "t", "runId": "r", "messages": [], "tools": [], "context": [], "state": {}, "forwardedProps": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(agui.status(), 401);

    // The echo agent's own rate: a burst of 3 (the first request taken
    // above), then refused; the root's rate is untouched.
    assert_eq!(rest_send_with(&echo, ECHO_KEY, "two").await, 200);
    assert_eq!(rest_send_with(&echo, ECHO_KEY, "three").await, 200);
    let (status, body) = send_with(&echo, ECHO_KEY, "four").await;
    assert_eq!(status, 429, "{body}");
    let (status, body) = send_with(&root, ROOT_KEY, "still in").await;
    assert_eq!(status, 200, "{body}");
}

/// A program for `a2a-cli --exec`'s contract that prints `before`, waits
/// until the file named by its input exists, then prints `after`.
const GATED: &str = r#"
import os, sys, time
gate = sys.stdin.read().strip()
print("before", flush=True)
for _ in range(1200):
    if os.path.exists(gate):
        break
    time.sleep(0.05)
print("after", flush=True)
"#;

fn reload_config(dir: &std::path::Path, third: bool, echo: bool) -> String {
    let script = dir.join("gated.py");
    std::fs::write(&script, GATED).unwrap();
    let mut config = format!(
        r#"
agent = "demo"

[[agents]]
name = "gated"
path = "/gated"
runtime = "exec"
command = "python3"
args = ["-u", {script:?}]
chunk = "\n"
"#,
        script = script.to_str().unwrap()
    );
    if echo {
        config
            .push_str("\n[[agents]]\nname = \"echo\"\npath = \"/echo\"\nruntime = \"echo-task\"\n");
    }
    if third {
        config.push_str(
            "\n[[agents]]\nname = \"third\"\npath = \"/third\"\nruntime = \"echo-message\"\n",
        );
    }
    config
}

/// The paths `/agents` lists, polled until `done` holds of them.
async fn listed_until(base: &str, what: &str, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    proc::poll_until(
        std::time::Duration::from_secs(20),
        std::time::Duration::from_millis(50),
        what,
        || async {
            let listed = json(&format!("{base}/agents")).await;
            listed["agents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["path"].as_str().unwrap().to_string())
                .collect::<Vec<String>>()
        },
        |paths: &Vec<String>| done(paths),
    )
    .await
}

#[tokio::test]
async fn sighup_adds_and_drops_agents_while_a_long_task_runs_on() {
    use futures::StreamExt as _;
    use switchboard_client::protocol::{Message, StreamResponse, TaskState};
    let dir = tempfile::tempdir().unwrap();
    let config = reload_config(dir.path(), false, true);
    let serve = Serve::start_configured_sqlite(dir.path(), "reload", &config, &[]);
    let base = serve.base();
    let file = dir.path().join("reload.toml");
    let gate = dir.path().join("gate");

    // A long task, streamed until its first chunk.
    let client = switchboard_client::A2AClient::builder()
        .no_reconnect()
        .connect(&format!("{base}/gated"))
        .await
        .unwrap();
    let mut stream = client
        .send_streaming_message(Message::user_text(gate.to_str().unwrap()))
        .await
        .unwrap();
    let mut shown = Vec::new();
    let task_id = loop {
        let event = stream.next().await.unwrap().unwrap();
        shown.push((event.seq.unwrap(), event.event.clone()));
        if let StreamResponse::ArtifactUpdate(a) = &event.event
            && a.artifact.text().contains("before")
        {
            break a.task_id.clone();
        }
    };

    // A third agent: in after SIGHUP, and it answers.
    std::fs::write(&file, reload_config(dir.path(), true, true)).unwrap();
    serve.signal("HUP");
    listed_until(&base, "the third agent listed", |p| {
        p.iter().any(|p| p == "/third")
    })
    .await;
    let out = send(&format!("{base}/third"), &["hello third"]);
    assert!(out.contains("hello third"), "{out}");

    // A broken file is refused; everything keeps serving.
    std::fs::write(&file, "[[agents]]\nname = \"x\"\n").unwrap();
    serve.signal("HUP");
    proc::poll_until(
        std::time::Duration::from_secs(20),
        std::time::Duration::from_millis(50),
        "the refusal logged",
        || async { serve.log() },
        |log: &String| log.contains("agents not reloaded"),
    )
    .await;
    let out = send(&format!("{base}/third"), &["still here"]);
    assert!(out.contains("still here"), "{out}");

    // The echo agent dropped: gone from the listing and its path.
    std::fs::write(&file, reload_config(dir.path(), true, false)).unwrap();
    serve.signal("HUP");
    listed_until(&base, "the echo agent gone", |p| {
        !p.iter().any(|p| p == "/echo")
    })
    .await;
    let card = get(&format!("{base}/echo/.well-known/agent-card.json"), &[]).await;
    assert_ne!(card.status(), StatusCode::OK);

    // The long task, on an agent that never changed, ends as it would
    // have, every event of it in its log.
    std::fs::write(&gate, b"open").unwrap();
    while let Some(event) = stream.next().await {
        let event = event.unwrap();
        shown.push((event.seq.unwrap(), event.event.clone()));
    }
    let last = &shown.last().unwrap().1;
    assert!(
        matches!(last, StreamResponse::StatusUpdate(u) if u.status.state == TaskState::Completed),
        "{last:?}"
    );
    let text: String = shown
        .iter()
        .filter_map(|(_, e)| match e {
            StreamResponse::ArtifactUpdate(a) => Some(a.artifact.text()),
            _ => None,
        })
        .collect();
    assert!(text.contains("before") && text.contains("after"), "{text}");
    let log = proc::log_replay(&format!("{base}/gated/"), &task_id, u64::MAX).await;
    let seqs: Vec<u64> = log.iter().map(|(s, _)| *s).collect();
    let shown_seqs: Vec<u64> = shown.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        seqs, shown_seqs,
        "every event shown is in the log, in order"
    );
}

#[tokio::test]
async fn a_root_without_an_agent_serves_a_directory_card_that_follows_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let config = |third: bool| {
        reload_config(dir.path(), third, true).replace("agent = \"demo\"", "agent = \"none\"")
    };
    let serve = Serve::start_configured(dir.path(), "reload", "memory", &config(false), &[]);
    let base = serve.base();
    let file = dir.path().join("reload.toml");
    let skills = |card: &Value| -> Vec<String> {
        card["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect()
    };

    // The server's card: one skill per agent, each naming its card.
    let card = json(&format!("{base}/.well-known/agent-card.json")).await;
    assert_eq!(skills(&card), ["gated", "echo"], "{card}");
    assert!(
        !card["supportedInterfaces"].as_array().unwrap().is_empty(),
        "{card}"
    );
    let echo = &card["skills"][1];
    assert!(
        echo["description"]
            .as_str()
            .unwrap()
            .contains(&format!("{base}/echo/.well-known/agent-card.json")),
        "{echo}"
    );
    assert_eq!(echo["tags"], serde_json::json!(["echo"]), "{echo}");
    let gated = &card["skills"][0];
    assert!(!gated["tags"].as_array().unwrap().is_empty(), "{gated}");

    // The root itself answers no message, and says where the agents are.
    let out = switchboard_without_env()
        .args(["send", "--url", &base, "hello"])
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("serves no agent"), "{said}");

    // A third agent after SIGHUP: in the card as in `/agents`.
    std::fs::write(&file, config(true)).unwrap();
    serve.signal("HUP");
    let card = proc::poll_until(
        std::time::Duration::from_secs(20),
        std::time::Duration::from_millis(50),
        "the third agent in the directory card",
        || async { json(&format!("{base}/.well-known/agent-card.json")).await },
        |card: &Value| skills(card).iter().any(|s| s == "third"),
    )
    .await;
    assert_eq!(skills(&card), ["gated", "echo", "third"], "{card}");

    // The official Python SDK reads it as an agent card, and follows each
    // skill to its agent's own card.
    if let Some(python) = interop_python(".venv") {
        run_interop_driver(
            &python,
            "interop/py/directory_card.py",
            &[&base, "gated", "echo", "third"],
            4,
        );
    }
}
