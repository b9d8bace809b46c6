//! A store whose disk fills up, or whose file cannot be written, on a real
//! `serve`: writes fail with a clear error, `/readyz` answers 503 while they
//! do, and once the cause is gone writes succeed again without a restart.
//!
//! The full disk is a real one: a small tmpfs mounted for the test (which
//! needs root; without it the test says so and skips), filled with a file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use proc::{Serve, call, poll_until};
use serde_json::{Value, json};

/// A mount made for a test, undone (lazily, so a process still holding a
/// file cannot keep it) when dropped.
struct Mount {
    target: PathBuf,
    /// The directory a tmpfs was mounted on, removed after the unmount.
    _dir: Option<tempfile::TempDir>,
}

impl Mount {
    /// A tmpfs of `size` (e.g. `4m`) on a fresh directory, or `None` (after
    /// printing why) when this process may not mount.
    fn tmpfs(test: &str, size: &str) -> Option<Mount> {
        Mount::tmpfs_with(test, &format!("size={size}"))
    }

    /// [`Mount::tmpfs`] owned by the user `postgres` (the one the test
    /// PostgreSQL server runs as under root), for a tablespace.
    fn tmpfs_for_postgres(test: &str, size: &str) -> Option<Mount> {
        let id = |flag: &str| {
            let out = Command::new("id").args([flag, "postgres"]).output().ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        let (Some(uid), Some(gid)) = (id("-u"), id("-g")) else {
            eprintln!("skipping {test}: there is no user postgres");
            return None;
        };
        Mount::tmpfs_with(test, &format!("size={size},mode=0700,uid={uid},gid={gid}"))
    }

    fn tmpfs_with(test: &str, options: &str) -> Option<Mount> {
        let dir = tempfile::tempdir().unwrap();
        mount(test, &["-t", "tmpfs", "-o", options, "tmpfs"], dir.path())?;
        Some(Mount {
            target: dir.path().to_path_buf(),
            _dir: Some(dir),
        })
    }

    /// `file` made read-only where it is, for everyone, root included: a
    /// read-only bind mount of the file onto itself. Its directory stays
    /// writable, as for a file whose permissions forbid writing.
    fn read_only(test: &str, file: &Path) -> Option<Mount> {
        let source = file.to_str().unwrap();
        mount(test, &["--bind", source], file)?;
        let guard = Mount {
            target: file.to_path_buf(),
            _dir: None,
        };
        mount(test, &["-o", "remount,ro,bind"], file)?;
        Some(guard)
    }

    fn path(&self) -> &Path {
        &self.target
    }
}

/// Runs `mount ARGS TARGET`. Without root that cannot work: `None`, after
/// printing why the test skips. As root, a failure fails the test.
fn mount(test: &str, args: &[&str], target: &Path) -> Option<()> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if !root {
        eprintln!("skipping {test}: mounting file systems needs root");
        return None;
    }
    let out = Command::new("mount")
        .args(args)
        .arg(target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mount {args:?} {target:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(())
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.target).status();
    }
}

/// Fills the file system of `dir` with one file, `dir/filler`, until a
/// write fails for lack of space; returns its path.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    for chunk in [64 * 1024, 4096, 1] {
        let block = vec![0_u8; chunk];
        while file.write_all(&block).is_ok() {}
    }
    let _ = file.sync_all();
    path
}

fn message(text: &str) -> Value {
    json!({"message": {
        "messageId": uuid::Uuid::new_v4().to_string(),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }})
}

async fn readyz(base: &str) -> (u16, Value) {
    let resp = reqwest::get(format!("{base}/readyz")).await.unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

/// Polls `/readyz` until it answers 200 (`what` names the moment on a
/// failure): readiness comes back in the background.
async fn until_ready(base: &str, what: &str) {
    poll_until(
        WITHIN,
        EVERY,
        what,
        || readyz(base),
        |(status, _)| *status == 200,
    )
    .await;
}

/// A SendMessage that must succeed: the task it answered.
async fn send_ok(base: &str, text: &str) -> Value {
    let v = call(base, "SendMessage", message(text)).await;
    assert!(v.get("error").is_none(), "SendMessage {text:?} failed: {v}");
    v["result"]["task"].clone()
}

const WITHIN: Duration = Duration::from_secs(20);
const EVERY: Duration = Duration::from_millis(100);

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_fails_sqlite_writes_until_space_is_back_without_a_restart() {
    let test = "a_full_disk_fails_sqlite_writes_until_space_is_back_without_a_restart";
    let Some(fs) = Mount::tmpfs(test, "4m") else {
        return;
    };
    let store = format!("sqlite://{}", fs.path().join("sb.db").display());
    let serve = Serve::start(&store);
    let base = serve.base();
    let task = send_ok(&base, "before the disk fills").await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(readyz(&base).await.0, 200);

    let filler = fill(fs.path());
    // Writes fail while the disk is full, each with an error that says so
    // (not a poisoned writer's complaint about transactions).
    for i in 0..3 {
        let v = call(&base, "SendMessage", message(&format!("full {i}"))).await;
        let error = &v["error"];
        assert_eq!(error["code"], -32603, "{v}");
        let text = error["message"].as_str().unwrap();
        assert!(text.contains("full"), "the error names the cause: {text}");
    }
    let (status, body) = readyz(&base).await;
    assert_eq!(status, 503, "not ready while writes fail: {body}");
    assert!(body["reason"].as_str().unwrap().contains("full"), "{body}");

    std::fs::remove_file(&filler).unwrap();
    // Ready again, and writes work again, without a restart.
    until_ready(&base, "/readyz answers 200 once space is back").await;
    for i in 0..5 {
        let task = send_ok(&base, &format!("after {i}")).await;
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    }
    assert_eq!(readyz(&base).await.0, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_sqlite_file_is_not_ready() {
    let test = "a_read_only_sqlite_file_is_not_ready";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sb.db");
    let store = format!("sqlite://{}", db.display());
    {
        let mut first = Serve::start(&store);
        send_ok(&first.base(), "while writable").await;
        assert!(first.terminate(WITHIN));
    }
    let Some(_ro) = Mount::read_only(test, &db) else {
        return;
    };
    let serve = Serve::start(&store);
    let base = serve.base();
    let (status, body) = readyz(&base).await;
    assert_eq!(status, 503, "a read-only database is not ready: {body}");
    assert!(
        body["reason"].as_str().unwrap().contains("readonly"),
        "{body}"
    );
    let v = call(&base, "SendMessage", message("read-only")).await;
    assert_eq!(v["error"]["code"], -32603, "{v}");
    // Reads still work.
    let v = call(&base, "ListTasks", json!({})).await;
    assert_eq!(v["result"]["totalSize"], 1, "{v}");
}

/// The answer to a SendMessage made while the disk is full: the error it
/// reports, whether as a JSON-RPC error or as the task's failure.
fn failure_text(v: &Value) -> Option<String> {
    if let Some(message) = v["error"]["message"].as_str() {
        return Some(message.to_string());
    }
    let status = &v["result"]["task"]["status"];
    (status["state"] == "TASK_STATE_FAILED").then(|| {
        status["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_fails_postgres_writes_until_space_is_back_without_a_restart() {
    let test = "a_full_disk_fails_postgres_writes_until_space_is_back_without_a_restart";
    // The database's tables live on the small file system (a tablespace);
    // the server's own files, its write-ahead log among them, do not.
    let Some(fs) = Mount::tmpfs_for_postgres(test, "32m") else {
        return;
    };
    let Some(pg) = switchboard_store_postgres::testing::start_or_skip(test) else {
        return;
    };
    let url = pg.database_in(fs.path()).await.unwrap();
    let serve = Serve::start(&url);
    let base = serve.base();
    send_ok(&base, "before the disk fills").await;
    assert_eq!(readyz(&base).await.0, 200);

    let filler = fill(fs.path());
    // Commits fail once the tables need a page more; each says why, as
    // PostgreSQL said it (no panic, no Rust debug form).
    let mut failures = Vec::new();
    for i in 0..40 {
        let v = call(
            &base,
            "SendMessage",
            message(&format!("full {i} {}", "f".repeat(50_000))),
        )
        .await;
        if let Some(text) = failure_text(&v) {
            failures.push(text);
            if failures.len() == 3 {
                break;
            }
        }
    }
    assert!(!failures.is_empty(), "no write failed on a full disk");
    for text in &failures {
        assert!(
            text.contains("No space left on device"),
            "the cause: {text}"
        );
        assert!(!text.contains("PgDatabaseError"), "no debug form: {text}");
    }
    let (status, body) = readyz(&base).await;
    assert_eq!(status, 503, "not ready while writes fail: {body}");
    let reason = body["reason"].as_str().unwrap();
    assert!(reason.contains("No space left on device"), "{body}");

    std::fs::remove_file(&filler).unwrap();
    // Writes work again without a restart, and the server is ready again.
    let task = poll_until(
        WITHIN,
        EVERY,
        "SendMessage succeeds once space is back",
        || async { call(&base, "SendMessage", message("after")).await },
        |v| failure_text(v).is_none(),
    )
    .await;
    assert_eq!(
        task["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{task}"
    );
    until_ready(&base, "/readyz answers 200 once writes work").await;
    for i in 0..3 {
        send_ok(&base, &format!("after {i}")).await;
    }
    drop(serve);
    drop(pg);
}
