//! Interop: the official Python client of the 0.3 line (PyPI `a2a-sdk`
//! 0.3.x in `interop/.venv03`) registers a push config with its own
//! `set_task_callback` on the real `switchboard` binary, over the 0.3
//! JSON-RPC dialect and the 0.3 REST routes, and our deliveries reach a
//! receiver it runs and parse as its 0.3 `Task` type
//! (`interop/py03/push_check.py`). Skipped without the venv unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set, like `interop_v03.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use proc::Serve;

fn check(binding: &str) {
    let Some(python) = proc::interop_python(".venv03") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("push03.db").display());
    let server = Serve::start_with(&store, &["--push-allow-host", "127.0.0.1"]);
    proc::run_interop_driver(
        &python,
        "interop/py03/push_check.py",
        &[&server.base(), binding],
        5,
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
