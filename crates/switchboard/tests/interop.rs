//! Interop: the official A2A clients (PyPI `a2a-sdk` 1.x, npm `@a2a-js/sdk`)
//! drive our server, served by the real `switchboard` binary on SQLite,
//! through send (blocking and not), stream, get, list, cancel and subscribe.
//!
//! The drivers live in `interop/` and are installed by `interop/setup.sh`
//! (the test command runs it). Without them the test is skipped with a
//! message, unless `SWITCHBOARD_REQUIRE_INTEROP` is set, as it is in CI.
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

/// A `switchboard serve` child process on a free port with a fresh SQLite file.
struct Served {
    child: std::process::Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve() -> Served {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let db = dir.path().join("interop.db");
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
    let url = format!("http://127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "switchboard serve did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Served {
        child,
        url,
        _dir: dir,
    }
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
    let s = serve();
    run_driver(&python, "interop/py/drive.py", &s.url);
}

#[test]
fn official_js_client_drives_switchboard() {
    let modules = repo_root().join("interop/node_modules/@a2a-js/sdk");
    if !interop_ready("@a2a-js/sdk", &modules) {
        return;
    }
    let s = serve();
    run_driver(&PathBuf::from("node"), "interop/js/drive.mjs", &s.url);
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
    let s = serve();
    let root = repo_root();
    let out = Command::new(&python)
        .arg(root.join("interop/py/drive.py"))
        .args(["--transport", "GRPC", &s.url])
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
