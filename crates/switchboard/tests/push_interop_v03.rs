//! Interop: the official Python client of the 0.3 line (PyPI `a2a-sdk`
//! 0.3.x in `interop/.venv03`) registers a push config with its own
//! `set_task_callback` on the real `switchboard` binary, over the 0.3
//! JSON-RPC dialect and the 0.3 REST routes, and our deliveries reach a
//! receiver it runs and parse as its 0.3 `Task` type
//! (`interop/py03/push_check.py`). Skipped without the venv unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set, like `interop_v03.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn check(binding: &str) {
    let root = repo_root();
    let python = root.join("interop/.venv03/bin/python");
    if !python.exists() {
        if std::env::var_os("SWITCHBOARD_REQUIRE_INTEROP").is_some() {
            panic!(
                "the a2a-sdk 0.3 venv is missing at {}: run interop/setup.sh",
                python.display()
            );
        }
        eprintln!("skipping: the a2a-sdk 0.3 venv is not installed (run interop/setup.sh)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
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
            "--store",
            &format!("sqlite://{}", dir.path().join("push03.db").display()),
            "--push-allow-host",
            "127.0.0.1",
        ])
        .env("SWITCHBOARD_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "serve did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = Command::new(&python)
        .arg(root.join("interop/py03/push_check.py"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(binding)
        .current_dir(&root)
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    let summary = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success() && summary == "interop: 5 passed, 0 failed",
        "push_check.py {binding} failed: {summary}\n{stdout}\n{stderr}"
    );
}

#[test]
fn official_python_03_client_gets_03_tasks_pushed_over_jsonrpc() {
    check("jsonrpc");
}

#[test]
fn official_python_03_client_gets_03_tasks_pushed_over_rest() {
    check("rest");
}
