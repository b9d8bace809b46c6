//! Interop with A2A 0.3: the official SDKs of the 0.3 line (PyPI `a2a-sdk`
//! 0.3.x in its own venv `interop/.venv03`, npm `@a2a-js/sdk` 0.3.x in
//! `interop/js03`) drive the real
//! `switchboard` binary, served with `--hybrid-card` on SQLite, over the 0.3
//! JSON-RPC dialect, the 0.3 REST routes and (Python) the 0.3 gRPC service
//! `a2a.v1.A2AService` with the SDK's `GrpcTransport`: it reads the hybrid card, then
//! send (blocking and not), get, cancel, stream, resubscribe, the push-config
//! operations and an error case (`interop/py03/drive.py`, `interop/js03/drive.mjs`).
//!
//! Skipped with a message when the venv is missing, unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set (as in CI); `interop/setup.sh`
//! installs it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::path::PathBuf;

use proc::{Serve, run_interop_driver};

/// Steps `drive.py` runs; all must pass.
const STEPS: u32 = 13;
/// Over gRPC, two more: the card's GRPC interface and GetAgentCard.
const GRPC_STEPS: u32 = STEPS + 2;

fn js03() -> Option<PathBuf> {
    proc::interop_node("js03", "@a2a-js/sdk")
}

fn drive(binding: &str) {
    let Some(python) = proc::interop_python(".venv03") else {
        return;
    };
    let steps = if binding == "grpc" { GRPC_STEPS } else { STEPS };
    run(python, "interop/py03/drive.py", binding, steps);
}

fn run(program: PathBuf, script: &str, binding: &str, steps: u32) {
    // `serve --hybrid-card` on a fresh SQLite file. The drivers' push
    // configs name hooks.example.com, which resolves nowhere: the SSRF guard
    // refuses such a name at creation unless it is allowed.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("interop03.db");
    let s = Serve::start_with(
        &format!("sqlite://{}", db.display()),
        &["--hybrid-card", "--push-allow-host", "hooks.example.com"],
    );
    run_interop_driver(&program, script, &[&s.base(), binding], steps);
}

#[test]
fn official_python_03_client_drives_switchboard_over_jsonrpc() {
    drive("jsonrpc");
}

#[test]
fn official_python_03_client_drives_switchboard_over_rest() {
    drive("rest");
}

#[test]
fn official_python_03_client_drives_switchboard_over_grpc() {
    drive("grpc");
}

#[test]
fn official_js_03_client_drives_switchboard_over_jsonrpc() {
    if let Some(node) = js03() {
        run(node, "interop/js03/drive.mjs", "jsonrpc", STEPS);
    }
}

#[test]
fn official_js_03_client_drives_switchboard_over_rest() {
    if let Some(node) = js03() {
        run(node, "interop/js03/drive.mjs", "rest", STEPS);
    }
}
