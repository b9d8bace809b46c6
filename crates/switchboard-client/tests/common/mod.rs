//! Starting the official A2A SDK sample servers from `interop/` for tests.
//!
//! [`start`] spawns `interop/py/sample_server.py` (on the venv's Python) or
//! `interop/js/sample_server.mjs` (on `node`) on a free loopback port, waits
//! until its agent card answers, and hands back a [`SampleServer`] that
//! kills the process when dropped. The server's stderr goes to a temporary
//! log file that is printed only if the test panics.
//!
//! When `interop/.venv` or `interop/node_modules` is missing (run
//! `bash interop/setup.sh`), [`start`] returns `None` after a note on
//! stderr, so the calling test can skip itself, unless the environment
//! variable `SWITCHBOARD_REQUIRE_INTEROP` is set: then a missing setup is a
//! test failure.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use switchboard_client::A2AClient;

/// The workspace root, found from this crate's manifest directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/switchboard-client has two ancestors")
        .to_path_buf()
}

/// A sample server child process; killed (and reaped) on drop. Its stderr
/// goes to a log file that is shown only when the test fails.
pub struct SampleServer {
    child: Child,
    /// The agent base URL, e.g. `http://127.0.0.1:41234`.
    pub base: String,
    /// `python` or `js`.
    pub name: &'static str,
    /// The gRPC target (`127.0.0.1:<port>`) when the sample also serves
    /// gRPC (the Python one does).
    pub grpc: Option<String>,
    log: PathBuf,
}

impl SampleServer {
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for SampleServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!(
                "--- stderr of the {} sample server ({}):\n{}",
                self.name,
                self.log.display(),
                self.log_tail()
            );
        } else {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// Which official SDK's sample to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sdk {
    /// `a2a-sdk` (Python).
    Python,
    /// `@a2a-js/sdk` (JS).
    Js,
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("local addr").port()
}

/// Starts the sample server of `sdk`, or returns `None` (after saying why)
/// when its setup is missing and interop is not required.
pub async fn start(sdk: Sdk) -> Option<SampleServer> {
    let root = repo_root();
    let interop = root.join("interop");
    let (name, setup_dir, program, script) = match sdk {
        Sdk::Python => (
            "python",
            interop.join(".venv"),
            interop.join(".venv/bin/python"),
            interop.join("py/sample_server.py"),
        ),
        Sdk::Js => (
            "js",
            interop.join("node_modules"),
            PathBuf::from("node"),
            interop.join("js/sample_server.mjs"),
        ),
    };
    if !setup_dir.exists() {
        let msg = format!(
            "{} is missing: run `bash interop/setup.sh` to test against the official {name} SDK sample",
            setup_dir.display()
        );
        if std::env::var_os("SWITCHBOARD_REQUIRE_INTEROP").is_some() {
            panic!("SWITCHBOARD_REQUIRE_INTEROP is set but {msg}");
        }
        eprintln!("SKIPPED official {name} sample: {msg}");
        return None;
    }
    let port = free_port();
    let log = std::env::temp_dir().join(format!(
        "switchboard-client-{name}-sample-{}-{port}.log",
        std::process::id()
    ));
    let log_file = std::fs::File::create(&log).expect("create the server log file");
    // The Python sample also serves gRPC; its card lists it after JSON-RPC.
    let grpc_port = (sdk == Sdk::Python).then(free_port);
    let mut cmd = Command::new(&program);
    cmd.arg(&script).arg("--port").arg(port.to_string());
    if let Some(p) = grpc_port {
        cmd.arg("--grpc-port").arg(p.to_string());
    }
    let child = cmd
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log_file))
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start {} {}: {e}",
                program.display(),
                script.display()
            )
        });
    let mut server = SampleServer {
        child,
        base: format!("http://127.0.0.1:{port}"),
        name,
        grpc: grpc_port.map(|p| format!("127.0.0.1:{p}")),
        log,
    };
    wait_for_card(&mut server).await;
    Some(server)
}

/// Polls the agent card until it answers (30 s at most).
async fn wait_for_card(server: &mut SampleServer) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let builder = A2AClient::builder().timeout(Duration::from_secs(2));
    loop {
        if let Some(status) = server.child.try_wait().expect("try_wait") {
            panic!(
                "the {} sample server exited early: {status}\n{}",
                server.name,
                server.log_tail()
            );
        }
        match builder.fetch_card(&server.base).await {
            Ok(_) => return,
            Err(e) if Instant::now() > deadline => {
                panic!(
                    "the {} sample server did not answer in 30 s: {e}",
                    server.name
                )
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}
