//! `serve` with a retention policy deletes the oldest finished tasks of its
//! SQLite file and keeps the rest, and unfinished tasks, intact.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::time::{Duration, Instant};

use proc::{Serve, call, rpc};
use serde_json::json;

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
    let config = "retention_max_finished = 3\nretention_interval_secs = 1\n";
    let serve = Serve::start_configured_sqlite(dir.path(), "ret", config, &[]);
    let base = serve.base();

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
    let gone = call(&base, "GetTask", json!({"id": done[0]})).await;
    assert_eq!(gone["error"]["code"], -32001, "purged: {gone}");
}
