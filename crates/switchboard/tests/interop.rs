//! Interop: the official A2A clients (PyPI `a2a-sdk` 1.x, npm `@a2a-js/sdk`)
//! drive our server, served by the real `switchboard` binary on SQLite,
//! through send (blocking and not), stream, get, list, cancel and subscribe.
//!
//! The drivers live in `interop/` and are installed by `interop/setup.sh`
//! (the test command runs it). Without them the test is skipped with a
//! message, unless `SWITCHBOARD_REQUIRE_INTEROP` is set, as it is in CI.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::path::PathBuf;

use proc::{Serve, interop_node, interop_python, run_interop_driver};

/// Steps each driver runs; all must pass: the 11 of the scenario and, with
/// `--agui-hints`, `think` and `tool` (the demo agent's AG-UI-hinted parts
/// reach the official SDKs as ordinary, valid A2A: issue 18).
const STEPS: u32 = 13;

/// Runs the driver `script` with `program` (`None`: not installed, skip)
/// and `flags` against `switchboard serve` on a fresh SQLite file; returns
/// the driver's output.
fn drive(program: Option<PathBuf>, script: &str, flags: &[&str]) -> Option<String> {
    let program = program?;
    let dir = tempfile::tempdir().unwrap();
    let s = Serve::start(&format!(
        "sqlite://{}",
        dir.path().join("interop.db").display()
    ));
    let base = s.base();
    let args: Vec<&str> = flags
        .iter()
        .copied()
        .chain(["--agui-hints", base.as_str()])
        .collect();
    Some(run_interop_driver(&program, script, &args, STEPS))
}

#[test]
fn official_python_client_drives_switchboard() {
    drive(interop_python(".venv"), "interop/py/drive.py", &[]);
}

#[test]
fn official_js_client_drives_switchboard() {
    drive(
        interop_node(".", "@a2a-js/sdk"),
        "interop/js/drive.mjs",
        &[],
    );
}

/// The official Python client over gRPC (`drive.py --transport GRPC`, the
/// SDK's `GrpcTransport` on a grpc.aio channel) against the real binary:
/// the same 13 steps, on the card's GRPC interface.
#[test]
fn official_python_client_over_grpc() {
    let flags = ["--transport", "GRPC"];
    if let Some(stdout) = drive(interop_python(".venv"), "interop/py/drive.py", &flags) {
        assert!(
            stdout.contains("\"transport\": \"GrpcTransport\""),
            "the SDK did not use its gRPC transport: {stdout}"
        );
    }
}
