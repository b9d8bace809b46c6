//! `switchboard serve` on a SQLite file keeps every task across a restart,
//! even when the process is killed without warning.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use proc::{Serve, call, rpc};
use serde_json::{Value, json};

fn msg(text: &str) -> Value {
    json!({"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// Sends `text` over JSON-RPC; the task it made.
async fn send_task(base: &str, text: &str) -> Value {
    rpc(base, "SendMessage", json!({"message": msg(text)})).await["task"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn tasks_survive_kill_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("restart.db");
    let store = format!("sqlite://{}", db.display());

    let s = Serve::start(&store);
    let completed = send_task(&s.base(), "before the crash").await;
    let asking = send_task(&s.base(), "/ask").await;
    let failed = send_task(&s.base(), "/fail on purpose").await;
    assert_eq!(completed["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(asking["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(failed["status"]["state"], "TASK_STATE_FAILED");
    let before: Vec<Value> = {
        let mut v = Vec::new();
        for t in [&completed, &asking, &failed] {
            v.push(rpc(&s.base(), "GetTask", json!({"id": t["id"]})).await);
        }
        v
    };
    let list_before = rpc(&s.base(), "ListTasks", json!({"includeArtifacts": true})).await;
    s.kill();

    let s = Serve::start(&store);
    for (t, old) in [&completed, &asking, &failed].into_iter().zip(&before) {
        let now = rpc(&s.base(), "GetTask", json!({"id": t["id"]})).await;
        assert_eq!(&now, old, "task {} changed across the restart", t["id"]);
    }
    let list_after = rpc(&s.base(), "ListTasks", json!({"includeArtifacts": true})).await;
    assert_eq!(list_after, list_before);
    assert_eq!(list_after["totalSize"], 3);

    // The interrupted task continues on the new process.
    let mut answer = msg("Grace");
    answer["taskId"] = asking["id"].clone();
    let done = rpc(&s.base(), "SendMessage", json!({"message": answer})).await["task"].clone();
    assert_eq!(done["id"], asking["id"]);
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    let text = done["artifacts"][0]["parts"][0]["text"].as_str().unwrap();
    assert!(text.contains("Hello, Grace!"), "{text}");
    // Terminal tasks stay immutable after the restart too.
    let mut late = msg("again");
    late["taskId"] = completed["id"].clone();
    let v = call(&s.base(), "SendMessage", json!({"message": late})).await;
    assert_eq!(v["error"]["code"], -32004);
}
