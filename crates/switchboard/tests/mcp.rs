//! `switchboard mcp`: A2A agents as MCP tools, driven by the official MCP
//! clients (the Python SDK, PyPI `mcp`; the TypeScript SDK, npm
//! `@modelcontextprotocol/sdk`) over stdio and streamable HTTP, in front of
//! `switchboard serve --agent demo` and of the official Python A2A sample.
//!
//! The drivers (`interop/mcp/drive.py`, `interop/mcp/drive.mjs`) list the
//! tools, call one, count the progress of `/steps 5`, answer `/ask`'s
//! elicitation (and `/approve`'s form), cancel `/long 30`, and check the errors of `/fail`,
//! `/reject`, `/auth` and an unknown tool; each test then checks at the
//! agent that the canceled call's task ended canceled. Hostile callers of
//! the HTTP endpoint (no credentials, another caller's session, huge and
//! malformed bodies) are checked here with raw HTTP.
//!
//! The Python venv and the npm packages come from `interop/setup.sh`;
//! without them those tests are skipped with a message, unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set (as in CI).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::process::Stdio;
use std::time::{Duration, Instant};

use proc::{McpProc, Serve, api_key_hashes};
use reqwest::StatusCode;
use serde_json::{Value, json};
use switchboard_client::A2AClient;
use switchboard_protocol::{ListTasksRequest, TaskState};

/// The steps of the driver's `demo` suite.
const DEMO_STEPS: u32 = 15;

/// `switchboard mcp --agent <agent>` over stdio, as a driver's command line.
fn stdio_command(agent: &str) -> Vec<String> {
    vec![
        "--stdio".into(),
        env!("CARGO_BIN_EXE_switchboard").into(),
        "mcp".into(),
        "--agent".into(),
        agent.into(),
        "--log".into(),
        "warn".into(),
    ]
}

/// The tasks of the agent at `base` that were started by `text` and are in
/// `state`.
async fn tasks_in(base: &str, text: &str, state: TaskState) -> usize {
    let client = A2AClient::connect(base).await.unwrap();
    let page = client
        .list_tasks(ListTasksRequest {
            page_size: Some(100),
            ..Default::default()
        })
        .await
        .unwrap();
    page.tasks
        .iter()
        .filter(|t| t.status.state == state)
        .filter(|t| t.history().first().is_some_and(|m| m.text() == text))
        .count()
}

/// Waits (bounded) until the agent at `base` holds `n` canceled `/long 30`
/// tasks: what every canceled MCP call must leave behind.
async fn canceled_long_tasks(base: &str, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let canceled = tasks_in(base, "/long 30", TaskState::Canceled).await;
        if canceled >= n {
            assert_eq!(canceled, n, "one canceled task per canceled call");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{canceled} of {n} /long tasks canceled; working: {}",
            tasks_in(base, "/long 30", TaskState::Working).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs the Python driver's `suite` with `args` and `mode`, expecting `steps`.
fn python_driver(
    python: &std::path::Path,
    suite: &str,
    mode: &str,
    target: &[String],
    steps: u32,
) -> String {
    let mut args = vec![suite.to_owned(), "--mode".into(), mode.into()];
    args.extend_from_slice(target);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    proc::run_interop_driver(python, "interop/mcp/drive.py", &args, steps)
}

#[tokio::test]
async fn the_python_sdk_drives_the_demo_agent_over_stdio_and_http() {
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let serve = Serve::start("memory");
    let http = McpProc::start(&[&serve.base()], &[]);
    assert!(http.line.contains("3 tools"), "{}", http.line);
    let mut canceled = 0;
    // legacy: the initialize handshake (2025-11-25, elicitation/create);
    // auto: 2026-07-28 (input-required results).
    for mode in ["legacy", "auto"] {
        for target in [
            stdio_command(&serve.base()),
            vec!["--url".into(), http.url()],
        ] {
            let out = python_driver(&python, "demo", mode, &target, DEMO_STEPS);
            assert!(out.contains("canceled-after: "), "{out}");
            canceled += 1;
            canceled_long_tasks(&serve.base(), canceled).await;
        }
    }
}

#[tokio::test]
async fn the_python_sdk_drives_the_official_python_sample() {
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let sample = proc::PythonServer::start(&python, "py/helloworld_sample.py");
    let http = McpProc::start(&[&sample.base], &[]);
    for mode in ["legacy", "auto"] {
        python_driver(&python, "sample", mode, &stdio_command(&sample.base), 2);
        python_driver(&python, "sample", mode, &["--url".into(), http.url()], 2);
    }
}

#[tokio::test]
async fn an_unreachable_agent_is_a_clear_error() {
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    // Unreachable at start: `mcp` exits 2 and says why; a host's connection
    // fails (no hang).
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port())
    };
    let out = proc::switchboard_without_env()
        .args(["mcp", "--agent", &closed])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot use the agent at {closed}")),
        "{stderr}"
    );
    python_driver(&python, "dead", "legacy", &stdio_command(&closed), 1);

    // Gone after start: a call is a tool error naming the agent, at once.
    let serve = Serve::start("memory");
    let http = McpProc::start(&[&serve.base()], &[]);
    serve.kill();
    python_driver(&python, "gone", "legacy", &["--url".into(), http.url()], 1);
}

#[tokio::test]
async fn the_typescript_sdk_drives_the_demo_agent_and_the_official_sample() {
    let Some(node) = proc::interop_node("mcp", "@modelcontextprotocol/sdk") else {
        return;
    };
    let serve = Serve::start("memory");
    let http = McpProc::start(&[&serve.base()], &[]);
    let mut canceled = 0;
    for target in [
        stdio_command(&serve.base()),
        vec!["--url".into(), http.url()],
    ] {
        let mut args = vec!["demo"];
        args.extend(target.iter().map(String::as_str));
        let out = proc::run_interop_driver(&node, "interop/mcp/drive.mjs", &args, DEMO_STEPS);
        assert!(out.contains("canceled-after: "), "{out}");
        canceled += 1;
        canceled_long_tasks(&serve.base(), canceled).await;
    }
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let sample = proc::PythonServer::start(&python, "py/helloworld_sample.py");
    let http = McpProc::start(&[&sample.base], &[]);
    for target in [
        stdio_command(&sample.base),
        vec!["--url".into(), http.url()],
    ] {
        let mut args = vec!["sample"];
        args.extend(target.iter().map(String::as_str));
        proc::run_interop_driver(&node, "interop/mcp/drive.mjs", &args, 2);
    }
}

/// A raw MCP client over streamable HTTP, for what the SDKs never send.
struct Raw {
    url: String,
    http: reqwest::Client,
}

impl Raw {
    fn new(url: String) -> Raw {
        Raw {
            url,
            http: reqwest::Client::new(),
        }
    }

    async fn post(
        &self,
        key: Option<&str>,
        session: Option<&str>,
        body: impl Into<reqwest::Body>,
    ) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body);
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send().await.unwrap()
    }

    /// Opens a legacy session as `key`'s caller; its id.
    async fn initialize(&self, key: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let response = self.post(Some(key), None, init.to_string()).await;
        assert_eq!(response.status(), StatusCode::OK);
        let session = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = self
            .post(Some(key), Some(&session), initialized.to_string())
            .await;
        assert!(response.status().is_success(), "{}", response.status());
        session
    }

    /// `tools/list` on `session` as `key`'s caller: the status, and the
    /// JSON-RPC answer (read from the SSE stream or the JSON body).
    async fn tools_list(&self, key: &str, session: &str) -> (StatusCode, Value) {
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let response = self.post(Some(key), Some(session), list.to_string()).await;
        (
            response.status(),
            answer_of(&response.text().await.unwrap()),
        )
    }
}

/// The JSON-RPC message in a body: JSON, or the last `data:` of an SSE
/// stream that holds one.
fn answer_of(body: &str) -> Value {
    if let Ok(value) = serde_json::from_str(body) {
        return value;
    }
    body.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data:"))
        .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {body:?}"))
}

const ALICE: &str = "alice-mcp-key";
const BOB: &str = "bob-mcp-key";

fn keys() -> String {
    api_key_hashes(&[(ALICE, "alice"), (BOB, "bob")])
}

#[tokio::test]
async fn the_http_endpoint_refuses_hostile_callers() {
    let serve = Serve::start("memory");
    let mcp = McpProc::start(&[&serve.base()], &["--api-key-hash", &keys()]);
    let raw = Raw::new(mcp.url());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});

    // No credentials, or wrong ones: 401 with the scheme's challenge.
    for key in [None, Some("not-a-key")] {
        let response = raw.post(key, None, init.to_string()).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{key:?}");
        assert!(response.headers().contains_key("www-authenticate"));
    }

    // A session is its opener's only: another caller naming it is told it
    // does not exist, as for a made-up id.
    let session = raw.initialize(ALICE).await;
    let (status, answer) = raw.tools_list(ALICE, &session).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answer["result"]["tools"].as_array().unwrap().len(),
        3,
        "{answer}"
    );
    for (key, id) in [(BOB, session.as_str()), (ALICE, "made-up")] {
        let (status, answer) = raw.tools_list(key, id).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{key} {id}");
        assert_eq!(answer["error"]["message"], "Session not found", "{answer}");
    }

    // A huge body is refused as too large, and its client reads the 413
    // (not a reset): the rest of the body is read and dropped.
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"pad\":\"{}\"}}",
        "a".repeat(2 << 20)
    );
    let response = raw.post(Some(ALICE), None, huge).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let answer = answer_of(&response.text().await.unwrap());
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exceeds"),
        "{answer}"
    );
    for (body, code) in [
        ("{\"jsonrpc\": nope", -32700),
        ("[]", -32600),
        ("{\"id\": 1}", -32600),
    ] {
        let response = raw.post(Some(ALICE), None, body).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let answer = answer_of(&response.text().await.unwrap());
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
    }
}

#[tokio::test]
async fn several_agents_are_one_server_with_prefixed_tools() {
    let demo = Serve::start("memory");
    let other = Serve::start_with("memory", &["--agent", "echo-task"]);
    let mcp = McpProc::start(&[&format!("d={}", demo.base()), &other.base()], &[]);
    let raw = Raw::new(mcp.url());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let response = raw.post(None, None, init.to_string()).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let answer = answer_of(&response.text().await.unwrap());
    assert!(
        answer["result"]["serverInfo"]["description"]
            .as_str()
            .unwrap()
            .contains("switchboard demo"),
        "{answer}"
    );
    raw.post(
        None,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    )
    .await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let response = raw.post(None, Some(&session), list.to_string()).await;
    let answer = answer_of(&response.text().await.unwrap());
    let names: Vec<&str> = answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"d__analyse") && names.contains(&"d__lifecycle"),
        "{names:?}"
    );
    assert!(
        names
            .iter()
            .any(|n| !n.starts_with("d__") && n.contains("__")),
        "the other agent's tools carry its card's name: {names:?}"
    );
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "d__analyse", "arguments": {"message": "two agents"}}});
    let response = raw.post(None, Some(&session), call.to_string()).await;
    let answer = answer_of(&response.text().await.unwrap());
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(answer.to_string().contains("stnega owt"), "{text} {answer}");
}
