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
use std::process::Command;

use proc::{Serve, repo_root};

fn interop_ready(what: &str, path: &std::path::Path) -> bool {
    if path.exists() {
        return true;
    }
    if std::env::var_os("SWITCHBOARD_REQUIRE_INTEROP").is_some() {
        panic!(
            "{what} is missing at {}: run interop/setup.sh",
            path.display()
        );
    }
    eprintln!(
        "skipping: {what} not installed at {} (run interop/setup.sh)",
        path.display()
    );
    false
}

/// `switchboard serve` on a fresh SQLite file (in `dir`).
fn serve(dir: &tempfile::TempDir) -> Serve {
    let db = dir.path().join("interop.db");
    Serve::start(&format!("sqlite://{}", db.display()))
}

fn run_driver(program: &std::path::Path, script: &str, url: &str) {
    let root = repo_root();
    let out = Command::new(program)
        .arg(root.join(script))
        .arg(url)
        .current_dir(&root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    let summary = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success()
            && summary.starts_with("interop: ")
            && summary.ends_with(" passed, 0 failed"),
        "{script} failed: {summary}\n{stdout}\n{stderr}"
    );
    let passed: u32 = summary
        .trim_start_matches("interop: ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(passed, 11, "every scenario step ran");
}

#[test]
fn official_python_client_drives_switchboard() {
    let python = repo_root().join("interop/.venv/bin/python");
    if !interop_ready("the a2a-sdk venv", &python) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = serve(&dir);
    run_driver(&python, "interop/py/drive.py", &s.base());
}

#[test]
fn official_js_client_drives_switchboard() {
    let modules = repo_root().join("interop/node_modules/@a2a-js/sdk");
    if !interop_ready("@a2a-js/sdk", &modules) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = serve(&dir);
    run_driver(&PathBuf::from("node"), "interop/js/drive.mjs", &s.base());
}

/// The official Python client over gRPC (`drive.py --transport GRPC`, the
/// SDK's `GrpcTransport` on a grpc.aio channel) against the real binary:
/// the same 11 steps, on the card's GRPC interface.
#[test]
fn official_python_client_over_grpc() {
    let python = repo_root().join("interop/.venv/bin/python");
    if !interop_ready("the a2a-sdk venv", &python) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = serve(&dir);
    let root = repo_root();
    let out = Command::new(&python)
        .arg(root.join("interop/py/drive.py"))
        .args(["--transport", "GRPC", &s.base()])
        .current_dir(&root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    let summary = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success() && summary == "interop: 11 passed, 0 failed",
        "drive.py --transport GRPC failed: {summary}\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("\"transport\": \"GrpcTransport\""),
        "the SDK did not use its gRPC transport: {stdout}"
    );
}
