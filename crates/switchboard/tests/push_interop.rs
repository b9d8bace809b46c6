//! Interop: the official Python client (PyPI `a2a-sdk` 1.3.0) registers a
//! push config with its own push-config methods on the real `switchboard`
//! binary, and our signed deliveries reach a receiver it runs
//! (`interop/py/push_check.py`). Skipped without `interop/.venv` unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set, like `interop.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use proc::Serve;

#[test]
fn official_python_client_sets_a_push_config_and_receives_deliveries() {
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("push-interop.db").display());
    let server = Serve::start_with(&store, &["--push-allow-host", "127.0.0.1"]);
    proc::run_interop_driver(&python, "interop/py/push_check.py", &[&server.base()], 5);
}
