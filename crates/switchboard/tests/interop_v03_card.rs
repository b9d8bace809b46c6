//! The official A2A 0.3 Python client (PyPI `a2a-sdk` 0.3.x, in
//! `interop/.venv03`) against the real `switchboard serve` with **no card
//! flags**: it must discover the agent from the default card, complete a
//! send and a stream, and see the A2A error (TaskNotFound, UnsupportedOperation)
//! when it streams to an unknown or a finished task, not a transport error
//! (`interop/py03/default_card.py`).
//!
//! Skipped with a message when the venv is missing, unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set (as in CI); `interop/setup.sh`
//! installs it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Steps `default_card.py` runs; all must pass.
const STEPS: u32 = 7;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn venv03() -> Option<PathBuf> {
    let python = repo_root().join("interop/.venv03/bin/python");
    if python.exists() {
        return Some(python);
    }
    if std::env::var_os("SWITCHBOARD_REQUIRE_INTEROP").is_some() {
        panic!(
            "the a2a-sdk 0.3 venv is missing at {}: run interop/setup.sh",
            python.display()
        );
    }
    eprintln!(
        "skipping: the a2a-sdk 0.3 venv is not installed at {} (run interop/setup.sh)",
        python.display()
    );
    None
}

/// `switchboard serve` on a free loopback port, in memory, default card.
struct Served {
    child: std::process::Child,
    url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve() -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--listen", "127.0.0.1:0", "--store", "memory"])
        .env("SWITCHBOARD_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The first stdout line says where it listens, once it does.
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    Served { child, url }
}

#[test]
fn python_03_client_discovers_the_default_card_and_sees_stream_errors() {
    let Some(python) = venv03() else { return };
    let s = serve();
    let root = repo_root();
    let out = Command::new(python)
        .arg(root.join("interop/py03/default_card.py"))
        .arg(&s.url)
        .current_dir(&root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    let summary = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success() && summary == format!("interop: {STEPS} passed, 0 failed"),
        "default_card.py failed: {summary}\n{stdout}\n{stderr}"
    );
}
