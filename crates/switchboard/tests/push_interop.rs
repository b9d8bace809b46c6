//! Interop: the official Python client (PyPI `a2a-sdk` 1.3.0) registers a
//! push config with its own push-config methods on the real `switchboard`
//! binary, and our signed deliveries reach a receiver it runs
//! (`interop/py/push_check.py`). Skipped without `interop/.venv` unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set, like `interop.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::process::Command;

use proc::Serve;

#[test]
fn official_python_client_sets_a_push_config_and_receives_deliveries() {
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let root = proc::repo_root();
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("push-interop.db").display());
    let server = Serve::start_with(&store, &["--push-allow-host", "127.0.0.1"]);
    let out = Command::new(&python)
        .arg(root.join("interop/py/push_check.py"))
        .arg(server.base())
        .current_dir(&root)
        .output()
        .unwrap();
    drop(server);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    let summary = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success() && summary == "interop: 5 passed, 0 failed",
        "push_check.py failed: {summary}\n{stdout}\n{stderr}"
    );
}
