//! Interop: the official Python client (PyPI `a2a-sdk` 1.3.0) registers a
//! push config with its own push-config methods on the real `switchboard`
//! binary, and our signed deliveries reach a receiver it runs
//! (`interop/py/push_check.py`). Skipped without `interop/.venv` unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set, like `interop.rs`.
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

#[test]
fn official_python_client_sets_a_push_config_and_receives_deliveries() {
    let root = repo_root();
    let python = root.join("interop/.venv/bin/python");
    if !python.exists() {
        if std::env::var_os("SWITCHBOARD_REQUIRE_INTEROP").is_some() {
            panic!(
                "the a2a-sdk venv is missing at {}: run interop/setup.sh",
                python.display()
            );
        }
        eprintln!("skipping: the a2a-sdk venv is not installed (run interop/setup.sh)");
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
            &format!("sqlite://{}", dir.path().join("push-interop.db").display()),
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
        .arg(root.join("interop/py/push_check.py"))
        .arg(format!("http://127.0.0.1:{port}"))
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
        "push_check.py failed: {summary}\n{stdout}\n{stderr}"
    );
}
