//! Several agents on one `serve` (`[[agents]]` in the config file): two
//! agents of different runtimes (a program written for `a2a-cli --exec`,
//! and the built-in echo) beside the root agent, each with its own card,
//! listed at `/agents`, reached by our client and by the official Python
//! client at its own path, and never reaching each other's tasks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use proc::{Serve, get, interop_python, repo_root, run_interop_driver, switchboard_without_env};
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
    let store = format!("sqlite://{}", dir.path().join("agents.db").display());
    Serve::start_configured(dir.path(), "agents", &store, &config(), &[])
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
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "send to {url} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
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
        let interfaces = card["supportedInterfaces"].as_array().unwrap();
        assert!(!interfaces.is_empty(), "{card}");
        for i in interfaces {
            let url = i["url"].as_str().unwrap();
            assert!(url.starts_with(&format!("{base}{path}")), "{url} in {card}");
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
