//! `switchboard serve` on a SQLite file keeps every task across a restart,
//! even when the process is killed without warning.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Serve {
    child: Child,
    base: String,
}

impl Serve {
    fn start(db: &std::path::Path, port: u16) -> Serve {
        let child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args([
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--store",
                &format!("sqlite://{}", db.display()),
            ])
            .env("SWITCHBOARD_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "serve did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Serve {
            child,
            base: format!("http://127.0.0.1:{port}/"),
        }
    }

    /// SIGKILL: no chance to flush anything.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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

fn msg(text: &str) -> Value {
    json!({"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]})
}

#[tokio::test(flavor = "multi_thread")]
async fn tasks_survive_kill_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("restart.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();

    let s = Serve::start(&db, port);
    let completed = rpc(
        &s.base,
        "SendMessage",
        json!({"message": msg("before the crash")}),
    )
    .await["task"]
        .clone();
    let asking = rpc(&s.base, "SendMessage", json!({"message": msg("/ask")})).await["task"].clone();
    let failed = rpc(
        &s.base,
        "SendMessage",
        json!({"message": msg("/fail on purpose")}),
    )
    .await["task"]
        .clone();
    assert_eq!(completed["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(asking["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(failed["status"]["state"], "TASK_STATE_FAILED");
    let before: Vec<Value> = {
        let mut v = Vec::new();
        for t in [&completed, &asking, &failed] {
            v.push(rpc(&s.base, "GetTask", json!({"id": t["id"]})).await);
        }
        v
    };
    let list_before = rpc(&s.base, "ListTasks", json!({"includeArtifacts": true})).await;
    s.kill();

    let s = Serve::start(&db, port);
    for (t, old) in [&completed, &asking, &failed].into_iter().zip(&before) {
        let now = rpc(&s.base, "GetTask", json!({"id": t["id"]})).await;
        assert_eq!(&now, old, "task {} changed across the restart", t["id"]);
    }
    let list_after = rpc(&s.base, "ListTasks", json!({"includeArtifacts": true})).await;
    assert_eq!(list_after, list_before);
    assert_eq!(list_after["totalSize"], 3);

    // The interrupted task continues on the new process.
    let mut answer = msg("Grace");
    answer["taskId"] = asking["id"].clone();
    let done = rpc(&s.base, "SendMessage", json!({"message": answer})).await["task"].clone();
    assert_eq!(done["id"], asking["id"]);
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    let text = done["artifacts"][0]["parts"][0]["text"].as_str().unwrap();
    assert!(text.contains("Hello, Grace!"), "{text}");
    // Terminal tasks stay immutable after the restart too.
    let mut late = msg("again");
    late["taskId"] = completed["id"].clone();
    let v: Value = reqwest::Client::new()
        .post(&s.base)
        .header("Content-Type", "application/json")
        .header("A2A-Version", "1.0")
        .body(json!({"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": late}}).to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["error"]["code"], -32004);
}
