//! `serve` with a retention policy deletes the oldest finished tasks of its
//! SQLite file and keeps the rest, and unfinished tasks, intact.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

async fn rpc(base: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let v: Value = reqwest::Client::new()
        .post(base)
        .header("Content-Type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(v.get("error").is_none(), "{method} failed: {v}");
    v["result"].clone()
}

async fn send(base: &str, text: &str, wait: bool) -> String {
    let r = rpc(
        base,
        "SendMessage",
        json!({
            "message": {"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]},
            "configuration": {"returnImmediately": !wait}
        }),
    )
    .await;
    r["task"]["id"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn retention_keeps_the_newest_finished_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sb.toml");
    std::fs::write(
        &config,
        format!(
            "store = \"sqlite://{}\"\nretention_max_finished = 3\nretention_interval_secs = 1\n",
            dir.path().join("ret.db").display()
        ),
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--config",
        ])
        .arg(&config)
        .env("SWITCHBOARD_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "serve did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let base = format!("http://127.0.0.1:{port}/");

    let long = send(&base, "/long 60", false).await;
    let mut done = Vec::new();
    for i in 0..6 {
        done.push(send(&base, &format!("task {i}"), true).await);
    }
    // Within a few retention runs, only the newest three finished tasks
    // (and the unfinished one) are left.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let list = rpc(&base, "ListTasks", json!({"pageSize": 100})).await;
        let ids: Vec<&str> = list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        if list["totalSize"] == 4 {
            assert!(ids.contains(&long.as_str()), "the running task stays");
            for kept in &done[3..] {
                assert!(ids.contains(&kept.as_str()), "newest kept: {ids:?}");
            }
            break;
        }
        assert!(Instant::now() < deadline, "retention did not run: {list}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let gone = reqwest::Client::new()
        .post(&base)
        .header("Content-Type", "application/json")
        .header("A2A-Version", "1.0")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": done[0]}})
                .to_string(),
        )
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(gone["error"]["code"], -32001, "purged: {gone}");
    let _ = child.kill();
    let _ = child.wait();
}
