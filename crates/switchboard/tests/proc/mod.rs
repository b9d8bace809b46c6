//! Helpers for tests that drive the real `switchboard serve` process: start
//! it on a store, kill it with SIGKILL, read a task's event log raw, and a
//! loopback TCP proxy that cuts connections at chosen byte offsets.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::Value;
use switchboard_client::protocol::{AgentCard, StreamResponse, Task, TaskState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

// Also `util::io`: a binary may hold both harnesses.
#[allow(clippy::duplicate_mod)]
pub mod io;

// Each test binary uses some of them.
#[allow(unused_imports)]
pub use io::{api_key_hashes, success_stdout, success_stdout_of, uuid, whole_answer};

/// The repository's root.
pub fn repo_root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The `switchboard` binary with none of the caller's `SWITCHBOARD_*`
/// variables: a test sets exactly the settings it checks, whatever the
/// shell running `cargo test` exports.
pub fn switchboard_without_env() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_switchboard"));
    for (key, _) in std::env::vars() {
        if key.starts_with("SWITCHBOARD_") {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// Runs `cmd` to its end with `stdin` as its standard input, both outputs
/// captured.
pub fn output_with_stdin(cmd: &mut Command, stdin: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Checks the demo agent's answer to a message containing `text`: a
/// finished task with an artifact that repeats the text (`what` names the
/// call in a failure).
pub fn assert_demo_answer(task: &Task, text: &str, what: impl std::fmt::Display) {
    assert_eq!(task.status.state, TaskState::Completed, "{what}");
    assert!(
        task.artifacts().iter().any(|a| a.text().contains(text)),
        "{what}: the reply artifact echoes the text: {task:?}"
    );
}

/// The Python of the interop venv `venv` (`interop/.venv`, `interop/.venv03`,
/// made by `interop/setup.sh`); `None` (skip) when it is not installed,
/// unless `SWITCHBOARD_REQUIRE_INTEROP` is set, which makes that a failure.
pub fn interop_python(venv: &str) -> Option<std::path::PathBuf> {
    let python = repo_root().join("interop").join(venv).join("bin/python");
    interop_installed(&format!("interop/{venv}"), &python).then_some(python)
}

/// The resident set of process `pid` now and at its peak so far (`VmRSS`,
/// `VmHWM`), in KiB, from `/proc/<pid>/status`.
pub fn memory_kib_of(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// An interop sample server, `interop/<script>` run by `python` with
/// `--port P` on a free loopback port, its stderr the test's own; killed
/// on drop.
pub struct PythonServer {
    child: Child,
    /// `http://127.0.0.1:P`.
    pub base: String,
}

impl PythonServer {
    /// Starts it and waits until it accepts connections (uvicorn accepts
    /// them once the app, card route included, is up).
    pub fn start(python: &std::path::Path, script: &str) -> PythonServer {
        PythonServer::start_with(python, script, &[])
    }

    /// [`PythonServer::start`] with more arguments for the script.
    pub fn start_with(python: &std::path::Path, script: &str, args: &[&str]) -> PythonServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(python)
            .arg(repo_root().join("interop").join(script))
            .args(["--port", &port.to_string()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        // Owned before anything can panic, so that `Drop` stops the process.
        let server = PythonServer {
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "interop/{script} did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `node`, when the npm package `package` is installed in
/// `interop/{dir}/node_modules` (by `interop/setup.sh`); `None` (skip)
/// otherwise, unless `SWITCHBOARD_REQUIRE_INTEROP` is set.
pub fn interop_node(dir: &str, package: &str) -> Option<std::path::PathBuf> {
    let modules = repo_root()
        .join("interop")
        .join(dir)
        .join("node_modules")
        .join(package);
    interop_installed(package, &modules).then(|| std::path::PathBuf::from("node"))
}

/// An AG-UI client's set-up: `node` with the npm package `package` of
/// `interop/agui`, and a bridge (with `bridge_flags`) in front of `serve`
/// (with `serve_flags`) on the memory store. `None` (skip) as
/// [`interop_node`].
pub fn agui_node_and_bridge(
    package: &str,
    serve_flags: &[&str],
    bridge_flags: &[&str],
) -> Option<(std::path::PathBuf, Serve, BridgeProc)> {
    let node = interop_node("agui", package)?;
    let serve = Serve::start_with("memory", serve_flags);
    let bridge = BridgeProc::start(&serve.base(), bridge_flags);
    Some((node, serve, bridge))
}

/// Whether `what`, an interop dependency expected at `path`, is installed.
/// A missing one skips the test with a message, or fails it when
/// `SWITCHBOARD_REQUIRE_INTEROP` is set (as in CI).
pub fn interop_installed(what: &str, path: &std::path::Path) -> bool {
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
        "skipping: {what} is not installed at {} (run interop/setup.sh)",
        path.display()
    );
    false
}

/// A running `switchboard serve`, listening on a loopback port it picked
/// itself (`--listen 127.0.0.1:0`): the port is read from the first line it
/// prints, so no other process can take it in between, and that line is
/// also the sign that it accepts connections.
pub struct Serve {
    child: Child,
    pub port: u16,
    /// Where its stderr goes, if it was started with [`Serve::start_configured`]
    /// or [`Serve::start_logging`].
    log: Option<std::path::PathBuf>,
    /// The lines it prints on stdout after the first.
    stdout: mpsc::Receiver<String>,
}

impl Serve {
    /// Starts `serve` on `store` (`memory`, `sqlite://…`, `postgres://…`)
    /// and waits until it accepts connections.
    pub fn start(store: &str) -> Serve {
        Serve::start_with(store, &[])
    }

    /// [`Serve::start`] with more `serve` flags (e.g. `--push-allow-host`).
    pub fn start_with(store: &str, extra: &[&str]) -> Serve {
        Serve::spawn(store, extra, None)
    }

    /// [`Serve::start_with`] plus a config file: `config` (TOML) is written
    /// to `dir/{name}.toml`, and stderr goes to `dir/{name}.log` ([`Serve::log`]).
    pub fn start_configured(
        dir: &std::path::Path,
        name: &str,
        store: &str,
        config: &str,
        extra: &[&str],
    ) -> Serve {
        let config_file = dir.join(format!("{name}.toml"));
        std::fs::write(&config_file, config).unwrap();
        let mut args = vec!["--config", config_file.to_str().unwrap()];
        args.extend_from_slice(extra);
        Serve::spawn(store, &args, Some(dir.join(format!("{name}.log"))))
    }

    /// [`Serve::start_configured`] on a SQLite file of its own,
    /// `dir/{name}.db`.
    pub fn start_configured_sqlite(
        dir: &std::path::Path,
        name: &str,
        config: &str,
        extra: &[&str],
    ) -> Serve {
        let store = format!("sqlite://{}", dir.join(format!("{name}.db")).display());
        Serve::start_configured(dir, name, &store, config, extra)
    }

    /// [`Serve::start_with`] with stderr going to `log` ([`Serve::log`]).
    pub fn start_logging(store: &str, extra: &[&str], log: &std::path::Path) -> Serve {
        Serve::spawn(store, extra, Some(log.to_path_buf()))
    }

    /// [`Serve::start_logging`] with environment variables set for it
    /// (e.g. the `OTEL_*` ones).
    pub fn start_env(
        store: &str,
        extra: &[&str],
        env: &[(&str, &str)],
        log: &std::path::Path,
    ) -> Serve {
        Serve::spawn_env(store, extra, env, Some(log.to_path_buf()))
    }

    fn spawn(store: &str, extra: &[&str], log: Option<std::path::PathBuf>) -> Serve {
        Serve::spawn_env(store, extra, &[], log)
    }

    fn spawn_env(
        store: &str,
        extra: &[&str],
        env: &[(&str, &str)],
        log: Option<std::path::PathBuf>,
    ) -> Serve {
        // The test's own reqwest clients need the process's rustls provider.
        switchboard_client::tls::install_default_provider();
        let stderr = match &log {
            Some(path) => Stdio::from(std::fs::File::create(path).unwrap()),
            None => Stdio::inherit(),
        };
        let (child, stdout) = spawn_reading_stdout(
            Command::new(env!("CARGO_BIN_EXE_switchboard"))
                .args(["serve", "--listen", "127.0.0.1:0", "--store", store])
                .args(extra)
                .env("SWITCHBOARD_LOG", "warn")
                .env_remove("SWITCHBOARD_CONFIG")
                .env_remove("SWITCHBOARD_PUBLIC_URL")
                .envs(env.iter().copied())
                .stderr(stderr),
        );
        let mut serve = Serve {
            child,
            port: 0,
            log,
            stdout,
        };
        let line = first_line(
            &serve.stdout,
            &mut serve.child,
            &format!("serve on {store}"),
            || log_text(serve.log.as_deref()),
        );
        serve.port = listening_port(&line);
        serve
    }
    /// The next line it prints on stdout after the first (e.g. the
    /// `metrics_listen` address), waiting up to `within`.
    pub fn next_line(&self, within: Duration) -> Option<String> {
        self.stdout.recv_timeout(within).ok()
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Its resident set now and at its peak so far (`VmRSS`, `VmHWM`), in
    /// KiB, from `/proc/<pid>/status`.
    pub fn memory_kib(&self) -> (u64, u64) {
        memory_kib_of(self.child.id())
    }

    /// What it wrote to stderr so far (empty unless started with
    /// [`Serve::start_configured`] or [`Serve::start_logging`]).
    pub fn log(&self) -> String {
        log_text(self.log.as_deref())
    }

    /// Its push signing keys (JWKS).
    pub fn jwks_url(&self) -> String {
        format!("{}/.well-known/jwks.json", self.base())
    }

    /// SIGTERM (a graceful shutdown), then waits up to `within` for the
    /// process to exit. Returns whether it exited successfully in time.
    pub fn terminate(&mut self, within: Duration) -> bool {
        terminate_child(&mut self.child, within)
    }

    /// Sends it `signal` (a `kill` name: `HUP`, `TERM`, …).
    pub fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal} failed");
    }

    /// SIGKILL: the process gets no chance to flush or finish anything.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawns `command` without stdin; each line it prints on stdout is sent
/// (once complete) on the receiver, read until the process closes it, so it
/// never blocks on a full pipe.
fn spawn_reading_stdout(command: &mut Command) -> (Child, mpsc::Receiver<String>) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            // Nobody listening any more is fine: keep draining the pipe.
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// The first line a server prints on `stdout`, the one saying where it
/// listens, waiting up to 30 s; fails the test with `what`, how the
/// process ended and its `log` when none comes. Its owner must hold `child`
/// already, so that dropping it stops the process if this panics.
fn first_line(
    stdout: &mpsc::Receiver<String>,
    child: &mut Child,
    what: &str,
    log: impl FnOnce() -> String,
) -> String {
    stdout
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|e| {
            panic!(
                "{what} printed no address ({e}): {:?}\n{}",
                child.try_wait(),
                log()
            )
        })
}

/// What a server wrote to the stderr file `log` so far (empty without one).
fn log_text(log: Option<&std::path::Path>) -> String {
    log.and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
}

/// The port in `serve`'s first line, `switchboard listening on
/// http://127.0.0.1:PORT (card: …)`, or `bridge`'s, `switchboard bridge
/// listening on http://127.0.0.1:PORT/agui (agent: …)`.
pub fn listening_port(line: &str) -> u16 {
    line.split_whitespace()
        .find_map(|w| {
            w.strip_prefix("http://127.0.0.1:")
                .or_else(|| w.strip_prefix("https://127.0.0.1:"))
        })
        .and_then(|rest| rest.split('/').next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("no loopback address in {line:?}"))
}

/// A JSON-RPC 1.0 request to the server at `base`, ready to send (add
/// headers such as `Accept: text/event-stream` first).
pub fn request(base: &str, method: &str, params: Value) -> reqwest::RequestBuilder {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    reqwest::Client::new()
        .post(format!("{}/", base.trim_end_matches('/')))
        .header("Content-Type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body.to_string())
}

/// Asserts that the CLI's plain output `out` of the demo's `/progress` task
/// holds one final line per tracker (download, index and scan), once each.
pub fn assert_one_final_progress_line_per_tracker(out: &str) {
    for done in [
        "progress ✓ download 40/40 completed",
        "progress ✓ index 25/25 completed",
        "progress ✓ scan 30 completed",
    ] {
        assert_eq!(
            out.lines().filter(|l| *l == done).count(),
            1,
            "{done:?} in\n{out}"
        );
    }
}

/// Asserts that the progress `counts` of a tracker (`what`) never went
/// back and that the last is above the first.
pub fn assert_advances(what: &str, counts: &[f64]) {
    assert!(
        counts.windows(2).all(|w| w[0] <= w[1]),
        "{what} went back: {counts:?}"
    );
    assert!(
        counts.first() < counts.last(),
        "{what} never advanced: {counts:?}"
    );
}

/// GETs `url` with exactly these headers.
pub async fn get(url: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    headers
        .iter()
        .fold(reqwest::Client::new().get(url), |req, (k, v)| {
            req.header(*k, *v)
        })
        .send()
        .await
        .unwrap()
}

/// Sends a JSON-RPC 1.0 call to the server at `base` with these headers
/// too (an `Accept` for a stream, a `Last-Event-ID`, credentials); returns
/// the response as it came.
pub async fn send_rpc(
    base: &str,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    headers
        .iter()
        .fold(request(base, method, params), |req, (k, v)| {
            req.header(*k, *v)
        })
        .send()
        .await
        .unwrap()
}

/// A JSON-RPC 1.0 call to the server at `base`: the whole response
/// (`result` or `error`).
pub async fn call(base: &str, method: &str, params: Value) -> Value {
    send_rpc(base, method, params, &[])
        .await
        .json()
        .await
        .unwrap()
}

/// A JSON-RPC 1.0 call that must succeed; its `result`.
pub async fn rpc(base: &str, method: &str, params: Value) -> Value {
    let v = call(base, method, params).await;
    assert!(v.get("error").is_none(), "{method} failed: {v}");
    v["result"].clone()
}

/// GETs `url` and decodes its body as JSON, whatever the status.
pub async fn get_json<T: serde::de::DeserializeOwned>(url: &str) -> T {
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

/// Probes with `probe` every `every` until `done` holds of what it
/// returns, and returns that; panics after `within` with `what` and the
/// last probe. For conditions the server reaches in the background.
pub async fn poll_until<T, F, Fut>(
    within: Duration,
    every: Duration,
    what: &str,
    mut probe: F,
    done: impl Fn(&T) -> bool,
) -> T
where
    T: std::fmt::Debug,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let deadline = Instant::now() + within;
    loop {
        let got = probe().await;
        if done(&got) {
            return got;
        }
        assert!(Instant::now() < deadline, "never: {what}: {got:?}");
        tokio::time::sleep(every).await;
    }
}

/// A webhook on loopback (its URL is returned, `…/hook`) that answers every
/// POST `ok` and reports what `read` takes from it (its headers and body).
pub async fn webhook<T: Send + 'static>(
    read: impl Fn(&axum::http::HeaderMap, &[u8]) -> T + Clone + Send + Sync + 'static,
) -> (String, tokio::sync::mpsc::UnboundedReceiver<T>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let _ = tx.send(read(&headers, &body));
                async { "ok" }
            },
        ),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rx)
}

/// The server's card with every interface URL moved to `port` (a proxy in
/// front of the server), so a client built from it goes through the proxy.
pub async fn card_via(server_base: &str, port: u16) -> AgentCard {
    let mut card: AgentCard = get_json(&format!("{server_base}/.well-known/agent-card.json")).await;
    for iface in &mut card.supported_interfaces {
        // gRPC interfaces are `host:port`, the others URLs.
        let bare = !iface.url.contains("://");
        let full = if bare {
            format!("http://{}", iface.url)
        } else {
            iface.url.clone()
        };
        let mut url = reqwest::Url::parse(&full).unwrap();
        url.set_port(Some(port)).unwrap();
        iface.url = if bare {
            format!("{}:{port}", url.host_str().unwrap())
        } else {
            url.to_string()
        };
    }
    card
}

/// The task's event log as the server replays it to `SubscribeToTask` with
/// `Last-Event-ID: 0`, read over JSON-RPC, until event `upto` or the end of
/// the stream (whichever is first; a task that still runs never ends).
pub async fn log_replay(server_base: &str, task_id: &str, upto: u64) -> Vec<(u64, StreamResponse)> {
    let params = serde_json::json!({"id": task_id});
    let headers = [("Accept", "text/event-stream"), ("Last-Event-ID", "0")];
    let resp = send_rpc(server_base, "SubscribeToTask", params, &headers).await;
    assert!(
        resp.status().is_success(),
        "replay of {task_id}: {}",
        resp.status()
    );
    let mut events = resp.bytes_stream().eventsource();
    let mut out = Vec::new();
    let read = async {
        while let Some(ev) = events.next().await {
            let ev = ev.unwrap();
            let v: Value = serde_json::from_str(&ev.data).unwrap();
            assert!(v.get("error").is_none(), "replay of {task_id}: {v}");
            let seq: u64 = ev.id.parse().unwrap();
            out.push((seq, serde_json::from_value(v["result"].clone()).unwrap()));
            if seq >= upto {
                break;
            }
        }
    };
    // A replay of a finished task ends by itself; one of an unfinished task
    // is cut once it reached `upto`, or after this bound.
    let _ = tokio::time::timeout(Duration::from_secs(10), read).await;
    out
}

/// A tiny seeded generator (xorshift64*): reproducible cut points without
/// a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Where a [`CuttingProxy`] cuts each connection.
#[derive(Debug, Clone, Copy)]
pub enum Cut {
    /// Never: everything passes through.
    Never,
    /// After a random number of server bytes below the given bound.
    Random(u64),
    /// Right after the head (status line and headers) of the first
    /// response: the client gets a 200 and then nothing.
    AfterHead,
}

/// A loopback TCP proxy to `127.0.0.1:upstream` that closes connections
/// as [`Cut`] says. Its own port stays while the upstream may change
/// ([`CuttingProxy::retarget`]): a client pointed at the proxy follows a
/// restarted server to its new port.
pub struct CuttingProxy {
    pub port: u16,
    /// Connections cut so far.
    pub cuts: Arc<AtomicU64>,
    upstream: Arc<AtomicU16>,
    task: tokio::task::JoinHandle<()>,
}

impl CuttingProxy {
    pub async fn start(upstream: u16, seed: u64, cut: Cut) -> CuttingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cuts = Arc::new(AtomicU64::new(0));
        let counter = cuts.clone();
        let upstream = Arc::new(AtomicU16::new(upstream));
        let target = upstream.clone();
        let task = tokio::spawn(async move {
            let mut rng = Rng::new(seed);
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let budget = match cut {
                    Cut::Never => Budget::Unlimited,
                    Cut::Random(max) => Budget::Bytes(rng.below(max)),
                    Cut::AfterHead => Budget::Head,
                };
                let counter = counter.clone();
                let upstream = target.load(Ordering::Relaxed);
                tokio::spawn(async move {
                    // A refused upstream (the server is restarting) drops the
                    // client at once, like a dead server would.
                    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                        return;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    if pipe(client, server, budget).await {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        CuttingProxy {
            port,
            cuts,
            upstream,
            task,
        }
    }

    /// Sends new connections to `127.0.0.1:upstream` from now on.
    pub fn retarget(&self, upstream: u16) {
        self.upstream.store(upstream, Ordering::Relaxed);
    }

    pub fn cuts(&self) -> u64 {
        self.cuts.load(Ordering::Relaxed)
    }
}

impl Drop for CuttingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How much of the server's answer one connection passes on.
#[derive(Debug, Clone, Copy)]
enum Budget {
    Unlimited,
    Bytes(u64),
    Head,
}

/// Copies both ways until either side closes or the server→client budget
/// runs out; `true` when the budget cut the connection.
async fn pipe(client: TcpStream, server: TcpStream, budget: Budget) -> bool {
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let up = async {
        let _ = tokio::io::copy(&mut cr, &mut sw).await;
    };
    let down = async {
        let mut left = match budget {
            Budget::Bytes(n) => n,
            Budget::Unlimited | Budget::Head => u64::MAX,
        };
        let mut seen = Vec::new();
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match sr.read(&mut buf).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => n,
            };
            if matches!(budget, Budget::Head) {
                // Cut at the blank line that ends the response head.
                let before = seen.len();
                seen.extend_from_slice(&buf[..n]);
                if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                    left = (end + 4).saturating_sub(before) as u64;
                }
            }
            let take = usize::try_from(left.min(n as u64)).unwrap_or(n);
            if cw.write_all(&buf[..take]).await.is_err() {
                return false;
            }
            left -= take as u64;
            if left == 0 {
                return true;
            }
        }
    };
    // Whichever ends first ends the connection: both halves are dropped.
    tokio::select! {
        () = up => false,
        cut = down => cut,
    }
}

/// Runs an interop driver script (`interop/…`) with `program` (a Python or
/// `node`) and `args`, from the repository root, and asserts that it ended
/// well: exit code 0 and a last line `interop: {steps} passed, 0 failed`.
/// Prints its output and returns it, for checks on what the driver saw.
pub fn run_interop_driver(
    program: &std::path::Path,
    script: &str,
    args: &[&str],
    steps: u32,
) -> String {
    let root = repo_root();
    let out = Command::new(program)
        .arg(root.join(script))
        .args(args)
        .current_dir(&root)
        .output()
        .unwrap();
    interop_driver_passed(&format!("{script} {}", args.join(" ")), &out, steps)
}

/// Asserts that an interop driver's run (`out`, named `what` in messages)
/// exited 0 with the last line `interop: {steps} passed, 0 failed`; prints
/// its output and returns it.
pub fn interop_driver_passed(what: &str, out: &std::process::Output, steps: u32) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    let summary = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success() && summary == format!("interop: {steps} passed, 0 failed"),
        "{what} failed: {summary}\n{stdout}\n{stderr}"
    );
    stdout
}

/// Which front a [`FrontProc`] runs: its subcommand, the variable that sets
/// its log level, and the path it serves at.
pub trait Front {
    const COMMAND: &'static str;
    const LOG_VAR: &'static str;
    const PATH: &'static str;
}

/// `switchboard bridge`: AG-UI at `/agui`.
pub enum Bridge {}
/// `switchboard console`: the console page at `/console/`.
pub enum Console {}
/// `switchboard mcp` over streamable HTTP at `/mcp`.
pub enum Mcp {}

impl Front for Bridge {
    const COMMAND: &'static str = "bridge";
    const LOG_VAR: &'static str = "SWITCHBOARD_BRIDGE_LOG";
    const PATH: &'static str = "/agui";
}

impl Front for Console {
    const COMMAND: &'static str = "console";
    const LOG_VAR: &'static str = "SWITCHBOARD_CONSOLE_LOG";
    const PATH: &'static str = "/console/";
}

impl Front for Mcp {
    const COMMAND: &'static str = "mcp";
    const LOG_VAR: &'static str = "SWITCHBOARD_MCP_LOG";
    const PATH: &'static str = "/mcp";
}

/// A running `switchboard bridge`, `console` or `mcp` in front of agents,
/// listening on a loopback port it picked itself (read, like [`Serve`]'s,
/// from the one line it prints once it accepts connections).
pub struct FrontProc<F: Front> {
    child: Child,
    pub port: u16,
    /// Its first line on stdout.
    pub line: String,
    front: std::marker::PhantomData<F>,
}

pub type BridgeProc = FrontProc<Bridge>;
pub type ConsoleProc = FrontProc<Console>;
pub type McpProc = FrontProc<Mcp>;

impl<F: Front> FrontProc<F> {
    /// Starts `switchboard <command> --agent <agent>… --listen 127.0.0.1:0`
    /// with `extra` flags and waits until it accepts connections.
    fn spawn(agents: &[&str], extra: &[&str]) -> FrontProc<F> {
        switchboard_client::tls::install_default_provider();
        let mut cmd = switchboard_without_env();
        cmd.arg(F::COMMAND);
        for agent in agents {
            cmd.args(["--agent", agent]);
        }
        let (child, stdout) = spawn_reading_stdout(
            cmd.args(["--listen", "127.0.0.1:0"])
                .args(extra)
                .env(F::LOG_VAR, "warn")
                .stderr(Stdio::inherit()),
        );
        // Owned before anything can panic, so that `Drop` stops the process.
        let mut front = FrontProc {
            child,
            port: 0,
            line: String::new(),
            front: std::marker::PhantomData,
        };
        // Its stderr is the test's own: nothing to add on a failure.
        front.line = first_line(&stdout, &mut front.child, F::COMMAND, String::new);
        front.port = listening_port(&front.line);
        front
    }

    /// The URL it serves at (at the default path).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}{}", self.port, F::PATH)
    }

    /// SIGTERM, then waits up to `within`; whether it exited successfully.
    pub fn terminate(&mut self, within: Duration) -> bool {
        terminate_child(&mut self.child, within)
    }
}

impl BridgeProc {
    /// Starts `switchboard bridge` in front of the agent at `agent`.
    pub fn start(agent: &str, extra: &[&str]) -> BridgeProc {
        FrontProc::spawn(&[agent], extra)
    }
}

impl ConsoleProc {
    /// Starts `switchboard console` in front of the agent at `agent`.
    pub fn start(agent: &str, extra: &[&str]) -> ConsoleProc {
        FrontProc::spawn(&[agent], extra)
    }
}

impl McpProc {
    /// Starts `switchboard mcp` in front of the agents `agents` (each an
    /// `--agent` value).
    pub fn start(agents: &[&str], extra: &[&str]) -> McpProc {
        FrontProc::spawn(agents, extra)
    }
}

impl<F: Front> Drop for FrontProc<F> {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `script` of `interop/agui` (where its packages are) with `node` and
/// `args`; the JSON report it prints (panics when the script fails or
/// prints no report).
pub fn agui_node_report<I, A>(node: &std::path::Path, script: &str, args: I) -> Value
where
    I: IntoIterator<Item = A>,
    A: AsRef<std::ffi::OsStr>,
{
    let dir = repo_root().join("interop/agui");
    let out = Command::new(node)
        .arg(dir.join(script))
        .args(args)
        .current_dir(&dir)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{script} printed no report ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The interfaces a card offers: at least one, each at a URL under
/// `prefix`.
pub fn interfaces_under<'a>(card: &'a Value, prefix: &str) -> &'a [Value] {
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    assert!(!interfaces.is_empty(), "{card}");
    for i in interfaces {
        let url = i["url"].as_str().unwrap();
        assert!(url.starts_with(prefix), "{url} in {card}");
    }
    interfaces
}

/// The text of the artifacts in an AG-UI bridge's state view (those of
/// `task_id` only, if given), joined in order.
pub fn view_artifact_text(view: &Value, task_id: Option<&str>) -> String {
    view["artifacts"]
        .as_object()
        .unwrap()
        .values()
        .filter(|a| task_id.is_none_or(|id| a["taskId"] == id))
        .flat_map(|a| a["parts"].as_array().unwrap())
        .filter_map(|p| p["text"].as_str())
        .collect()
}

/// The `role` messages of an AG-UI client's report (`interop/agui/summary.mjs`).
pub fn report_messages<'a>(report: &'a Value, role: &str) -> Vec<&'a Value> {
    report["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == role)
        .collect()
}

/// The text of every `role` message of a report, one per line.
pub fn report_contents(report: &Value, role: &str) -> String {
    report_messages(report, role)
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// SIGTERM to `child`, then waits up to `within`; whether it exited
/// successfully in time.
fn terminate_child(child: &mut Child, within: Duration) -> bool {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -TERM failed");
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.success();
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
