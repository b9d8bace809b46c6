//! The web console (`serve`'s `/console/`, `switchboard console --agent`)
//! as users meet it.
//!
//! The browser tests drive real headless Chromium (Debian's `chromium`)
//! through `interop/console/drive.mjs` (npm `playwright-core`, `axe-core`,
//! installed by `interop/console/setup.sh`, which `interop/setup.sh` runs):
//! every flow against the demo agent, the agent picker of a `serve` with
//! several agents, and the official Python sample behind `switchboard
//! console --agent`.
//!
//! Screenshots: each run writes them under the target directory
//! (`target/tmp/console-screenshots/`), so running the tests leaves the work
//! tree as it was. `SWITCHBOARD_UPDATE_SCREENSHOTS=1` writes them into
//! `docs/console/` instead, where the README links them: set it to refresh
//! the committed ones after a change to the page.
//!
//! Without Chromium or the npm packages they are skipped with a message,
//! unless `SWITCHBOARD_REQUIRE_INTEROP` is set (as in CI), which makes that
//! a failure.
//!
//! The API tests need no browser: the gate in front of the console's API,
//! `--no-console`, each caller's own tasks, the agents a picker may reach
//! (and every other path refused), and a remote agent reached over gRPC and
//! over A2A 0.3 through `switchboard console`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use serde_json::{Value, json};
use switchboard_auth::hash_api_key;

/// The Chromium the driver launches; `None` (skip) without it, unless
/// `SWITCHBOARD_REQUIRE_INTEROP` is set.
fn chromium() -> Option<std::path::PathBuf> {
    let path = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| "/usr/bin/chromium".into());
    proc::interop_installed("chromium", &path).then_some(path)
}

/// `node` with the driver's packages, and Chromium.
fn browser() -> Option<std::path::PathBuf> {
    let node = proc::interop_node("console", "playwright-core")?;
    proc::interop_node("console", "axe-core")?;
    chromium()?;
    Some(node)
}

/// Where the browser tests save their screenshots (see the module docs).
fn screenshots() -> String {
    screenshot_dir(std::env::var_os("SWITCHBOARD_UPDATE_SCREENSHOTS").as_deref())
        .to_string_lossy()
        .into_owned()
}

/// `docs/console/` when `update` is `1`, else a directory under the
/// target directory.
fn screenshot_dir(update: Option<&std::ffi::OsStr>) -> std::path::PathBuf {
    if update.is_some_and(|v| v == "1") {
        proc::repo_root().join("docs/console")
    } else {
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots")
    }
}

#[test]
fn screenshots_go_to_the_docs_only_when_asked() {
    let docs = proc::repo_root().join("docs/console");
    assert_eq!(screenshot_dir(Some("1".as_ref())), docs);
    for other in [None, Some("0".as_ref()), Some("".as_ref())] {
        let dir = screenshot_dir(other);
        assert_ne!(dir, docs, "{other:?}");
        assert!(
            dir.starts_with(proc::repo_root().join("target"))
                || !dir.starts_with(proc::repo_root()),
            "{} is not under the target directory",
            dir.display()
        );
    }
}

/// A `serve` config with the demo at `/`, a second demo at `/demo` and an
/// echo agent at `/echo`.
const TWO_AGENTS: &str = r#"
agent = "demo"

[[agents]]
name = "demo agent"
path = "/demo"
runtime = "demo"
description = "The demo agent, under a prefix"

[[agents]]
name = "echo agent"
path = "/echo"
runtime = "echo-task"
description = "Echoes what you send, as a task"
"#;

#[test]
fn the_console_picks_each_agent_of_serve_in_a_browser() {
    let Some(node) = browser() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let serve = proc::Serve::start_configured(dir.path(), "agents", "memory", TWO_AGENTS, &[]);
    let url = format!("{}/console/", serve.base());
    let out = proc::run_interop_driver(
        &node,
        "interop/console/drive.mjs",
        &["agents", &url, &screenshots()],
        5,
    );
    assert!(out.contains("ok - keyboard alone picks /echo"), "{out}");
}

#[test]
fn every_flow_of_the_console_against_the_demo_agent_in_a_browser() {
    let Some(node) = browser() else {
        return;
    };
    let serve = proc::Serve::start("memory");
    let url = format!("{}/console/", serve.base());
    let out = proc::run_interop_driver(
        &node,
        "interop/console/drive.mjs",
        &["demo", &url, &screenshots()],
        15,
    );
    assert!(out.contains("ok - agent text with <script> and <img onerror> renders inert"));
}

#[test]
fn the_console_fronts_the_official_python_sample_in_a_browser() {
    let Some(node) = browser() else {
        return;
    };
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let sample = proc::PythonServer::start(&python, "py/helloworld_sample.py");
    let console = proc::ConsoleProc::start(&sample.base, &[]);
    proc::run_interop_driver(
        &node,
        "interop/console/drive.mjs",
        &["sample", &console.url(), &screenshots()],
        4,
    );
}

/// A console API call: status and JSON body.
async fn api(
    method: reqwest::Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .request(method, url)
        .header("X-Switchboard-Console", "1");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// The events of a console stream (`POST api/send`), by SSE event name.
async fn send_stream(base: &str, text: &str, headers: &[(&str, &str)]) -> Vec<(String, Value)> {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/console/api/send"))
        .header("X-Switchboard-Console", "1")
        .json(&json!({"request": {"message": {
            "messageId": uuid::Uuid::new_v4().to_string(),
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }}}));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = request.send().await.unwrap().text().await.unwrap();
    body.split("\n\n")
        .filter_map(|block| {
            let mut name = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(n) = line.strip_prefix("event:") {
                    name = Some(n.trim().to_owned());
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim_start());
                }
            }
            Some((name?, serde_json::from_str(&data).ok()?))
        })
        .collect()
}

const ALICE: &str = "sb_console-alice";
const BOB: &str = "sb_console-bob";

#[tokio::test]
async fn serve_gates_the_console_api_and_shows_each_caller_its_own_tasks() {
    let keys = format!("{}=alice,{}=bob", hash_api_key(ALICE), hash_api_key(BOB));
    let serve = proc::Serve::start_with("memory", &["--api-key-hash", &keys]);
    let base = serve.base();
    // The page is there for anyone (it holds no agent data)…
    let page = reqwest::get(format!("{base}/console/")).await.unwrap();
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    // …its API only for callers the A2A bindings let in.
    let tasks = format!("{base}/console/api/tasks");
    let (status, body) = api(reqwest::Method::GET, &tasks, &[], None).await;
    assert_eq!(status, 401, "{body}");
    let (status, _) = api(
        reqwest::Method::GET,
        &tasks,
        &[("x-api-key", "sb_wrong")],
        None,
    )
    .await;
    assert_eq!(status, 401);
    // Without the console header, even a good key gets nothing.
    let bare = reqwest::Client::new()
        .get(&tasks)
        .header("x-api-key", ALICE)
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status(), 403);

    // Alice's task, through the console: its frames come with it.
    let events = send_stream(&base, "hello from alice", &[("x-api-key", ALICE)]).await;
    let kinds: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"interface"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"end"), "{kinds:?}");
    assert!(!kinds.contains(&"error"), "{events:?}");
    let frames: Vec<&Value> = events
        .iter()
        .filter(|(n, _)| n == "frame")
        .map(|(_, v)| v)
        .collect();
    assert_eq!(frames[0]["kind"], "request");
    assert_eq!(frames[0]["operation"], "SendStreamingMessage");
    assert!(frames.iter().any(|f| f["kind"] == "event" && f["seq"] == 1));
    // The bytes on the wire too: the HTTP request as sent, her key masked…
    let wire = |kind: &str| -> Vec<&str> {
        frames
            .iter()
            .filter(|f| f["kind"] == kind)
            .map(|f| f["body"].as_str().unwrap())
            .collect()
    };
    let sent = wire("wire-request");
    assert_eq!(sent.len(), 1, "{frames:?}");
    assert!(sent[0].starts_with("POST http://127.0.0.1:"), "{}", sent[0]);
    assert!(sent[0].contains("\na2a-version: 1.0\n"), "{}", sent[0]);
    assert!(sent[0].contains("\nx-api-key: •••• ("), "{}", sent[0]);
    assert!(!sent[0].contains(ALICE), "{}", sent[0]);
    assert!(
        sent[0].contains(r#""method":"SendStreamingMessage""#)
            && sent[0].contains("hello from alice"),
        "the body as sent: {}",
        sent[0]
    );
    // …the answer's head, and its event stream as it arrived.
    let head = wire("wire-response");
    assert!(
        head[0].starts_with("HTTP 200 OK\n") && head[0].contains("content-type: text/event-stream"),
        "{head:?}"
    );
    let streamed: String = wire("wire-chunk").concat();
    assert!(
        streamed.contains("id: 1\n") || streamed.contains("id:1\n"),
        "{streamed}"
    );
    assert!(
        streamed.contains("data: {") || streamed.contains("data:{"),
        "{streamed}"
    );
    assert!(streamed.contains("TASK_STATE_COMPLETED"), "{streamed}");
    let task_id = events
        .iter()
        .find_map(|(n, v)| {
            (n == "event")
                .then(|| v["event"]["task"]["id"].as_str())
                .flatten()
        })
        .unwrap()
        .to_owned();

    // The console calls the agent as its caller: Alice sees her task, Bob
    // does not, in the list or by id.
    let (status, body) = api(reqwest::Method::GET, &tasks, &[("x-api-key", ALICE)], None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["tasks"][0]["id"], task_id.as_str());
    assert_eq!(body["frames"][0]["operation"], "ListTasks");
    let (status, body) = api(reqwest::Method::GET, &tasks, &[("x-api-key", BOB)], None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["tasks"], json!([]), "{body}");
    let one = format!("{base}/console/api/tasks/{task_id}");
    let (status, body) = api(reqwest::Method::GET, &one, &[("x-api-key", BOB)], None).await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["error"]["code"], -32001, "TaskNotFound: {body}");
    let (status, body) = api(reqwest::Method::GET, &one, &[("x-api-key", ALICE)], None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["status"]["state"], "TASK_STATE_COMPLETED");

    // The card view names what the served card breaks (nothing here).
    let card = format!("{base}/console/api/card");
    let (status, body) = api(reqwest::Method::GET, &card, &[("x-api-key", ALICE)], None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["issues"], json!([]), "{body}");
    assert_eq!(body["result"]["signature"]["status"], "unsigned");
}

#[tokio::test]
async fn the_console_reaches_the_listed_agents_only_with_the_callers_credentials() {
    let keys = format!("{}=alice,{}=bob", hash_api_key(ALICE), hash_api_key(BOB));
    let dir = tempfile::tempdir().unwrap();
    let serve = proc::Serve::start_configured(
        dir.path(),
        "agents",
        "memory",
        TWO_AGENTS,
        &["--api-key-hash", &keys],
    );
    let base = serve.base();
    let alice = ("x-api-key", ALICE);
    let (status, body) = api(
        reqwest::Method::GET,
        &format!("{base}/console/api/agents"),
        &[alice],
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let listed: Vec<(&str, &str)> = body["result"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["path"].as_str().unwrap(), a["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            ("/", "switchboard demo"),
            ("/demo", "demo agent"),
            ("/echo", "echo agent")
        ]
    );

    // Alice's message to the echo agent goes to its own URL…
    let events = send_stream(
        &base,
        "hello echo",
        &[alice, ("x-switchboard-agent", "/echo")],
    )
    .await;
    assert_eq!(events[0].0, "interface", "{events:?}");
    let url = events[0].1["url"].as_str().unwrap();
    assert!(url.trim_end_matches('/').ends_with("/echo"), "{url}");
    let task = events
        .iter()
        .find_map(|(n, v)| {
            (n == "event")
                .then(|| v["event"]["task"]["id"].as_str())
                .flatten()
        })
        .expect("a task")
        .to_owned();
    // …and its card, tasks and task are the echo agent's, as Alice.
    let at = |agent: &'static str, who: &'static str| {
        [("x-api-key", who), ("x-switchboard-agent", agent)]
    };
    let card = format!("{base}/console/api/card");
    let (status, body) = api(reqwest::Method::GET, &card, &at("/echo", ALICE), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["card"]["name"], "echo agent");
    let tasks = format!("{base}/console/api/tasks");
    let ids = |body: &Value| -> Vec<String> {
        body["result"]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (status, body) = api(reqwest::Method::GET, &tasks, &at("/echo", ALICE), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(ids(&body), std::slice::from_ref(&task));
    // Another agent does not have it; another caller does not see it.
    for (agent, who) in [("/demo", ALICE), ("/", ALICE), ("/echo", BOB)] {
        let (status, body) = api(reqwest::Method::GET, &tasks, &at(agent, who), None).await;
        assert_eq!(status, 200, "{agent} as {who}: {body}");
        assert!(ids(&body).is_empty(), "{agent} as {who}: {body}");
    }
    let one = format!("{base}/console/api/tasks/{task}");
    let (status, body) = api(reqwest::Method::GET, &one, &at("/demo", ALICE), None).await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["error"]["code"], -32001, "TaskNotFound: {body}");
    // Without credentials the picked agent's gate refuses the caller.
    let (status, _) = api(
        reqwest::Method::GET,
        &tasks,
        &[("x-switchboard-agent", "/echo")],
        None,
    )
    .await;
    assert_eq!(status, 401);

    // No open relay: a path the server does not list, or anything else,
    // reaches nothing.
    for agent in [
        "/nope",
        "/echo/",
        "/echo/../demo",
        "//127.0.0.1:9/",
        "http://127.0.0.1:9",
        "@127.0.0.1:9",
    ] {
        let headers = [alice, ("x-switchboard-agent", agent)];
        let (status, body) = api(reqwest::Method::GET, &tasks, &headers, None).await;
        assert_eq!(status, 404, "{agent}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no agent at"),
            "{agent}: {body}"
        );
    }
}

#[tokio::test]
async fn the_debug_frames_of_a_large_call_are_cut_and_say_how_much() {
    let serve = proc::Serve::start("memory");
    let text = "x".repeat(300_000);
    let events = send_stream(&serve.base(), &text, &[]).await;
    let frames: Vec<&Value> = events
        .iter()
        .filter(|(n, _)| n == "frame")
        .map(|(_, v)| v)
        .collect();
    let sent = frames
        .iter()
        .find(|f| f["kind"] == "wire-request")
        .expect("the request's bytes");
    let body = sent["body"].as_str().unwrap();
    assert!(
        body.len() < 80_000,
        "one frame is bounded: {} bytes",
        body.len()
    );
    let more: usize = body
        .rsplit_once("… ")
        .and_then(|(_, tail)| tail.strip_suffix(" bytes more"))
        .unwrap_or_else(|| panic!("cut with what is left: {}", &body[body.len() - 100..]))
        .parse()
        .unwrap();
    assert!(more > 230_000, "{more}");
    // The whole call's frames stay within its budget too.
    let wire: usize = frames
        .iter()
        .filter(|f| f["kind"].as_str().unwrap().starts_with("wire-"))
        .map(|f| f["body"].as_str().unwrap().len())
        .sum();
    assert!(wire < 1_200_000, "{wire} bytes of wire frames");
}

#[tokio::test]
async fn no_console_turns_it_off() {
    let serve = proc::Serve::start_with("memory", &["--no-console"]);
    let page = reqwest::get(format!("{}/console/", serve.base()))
        .await
        .unwrap();
    assert_eq!(page.status(), 404);
}

#[tokio::test]
async fn the_console_reaches_a_remote_agent_over_grpc_and_a2a_0_3() {
    let serve = proc::Serve::start("memory");
    for (flags, binding, version) in [
        (&["--prefer-binding", "HTTP+JSON"][..], "HTTP+JSON", "1.0"),
        (&["--prefer-binding", "GRPC"], "GRPC", "1.0"),
        (&["--prefer-version", "0.3"], "JSONRPC", "0.3"),
        (
            &["--prefer-binding", "GRPC", "--prefer-version", "0.3"],
            "GRPC",
            "0.3",
        ),
    ] {
        let console = proc::ConsoleProc::start(&serve.base(), flags);
        assert!(
            console.line.contains(&format!("{binding} {version}")),
            "{}",
            console.line
        );
        let base = format!("http://127.0.0.1:{}", console.port);
        let events = send_stream(&base, "/steps 2", &[]).await;
        let what = format!("{binding} {version}");
        let interface = &events[0].1;
        assert_eq!(interface["binding"], binding, "{what}: {events:?}");
        assert_eq!(interface["version"], version, "{what}");
        let states: Vec<&str> = events
            .iter()
            .filter(|(n, _)| n == "event")
            .filter_map(|(_, v)| v["event"]["statusUpdate"]["status"]["state"].as_str())
            .collect();
        assert_eq!(
            states.last(),
            Some(&"TASK_STATE_COMPLETED"),
            "{what}: {events:?}"
        );
        // Frames are the 1.0 JSON whatever the binding carried.
        assert!(
            events.iter().any(|(n, v)| n == "frame"
                && v["kind"] == "event"
                && v["body"].as_str().unwrap().contains("statusUpdate")),
            "{what}: {events:?}"
        );
        // The HTTP bindings' bytes as sent, in their own dialect; gRPC
        // (protobuf) has only the decoded frames.
        let sent: Vec<&str> = events
            .iter()
            .filter(|(n, v)| n == "frame" && v["kind"] == "wire-request")
            .map(|(_, v)| v["body"].as_str().unwrap())
            .collect();
        match (binding, version) {
            ("GRPC", _) => assert!(sent.is_empty(), "{what}: {sent:?}"),
            ("HTTP+JSON", _) => {
                assert!(sent[0].starts_with("POST http://"), "{what}: {sent:?}");
                assert!(sent[0].contains("/message:stream\n"), "{what}: {sent:?}");
            }
            _ => assert!(
                sent[0].contains(r#""method":"message/stream""#),
                "{what}: 0.3's method name on the wire: {sent:?}"
            ),
        }
    }
}
