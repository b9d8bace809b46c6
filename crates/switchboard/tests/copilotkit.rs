//! CopilotKit's runtime routes (`/api/copilotkit`) of `switchboard bridge`
//! and `serve`, as real processes over loopback: who may call them, whose
//! threads a caller reaches, and what a bad request gets. (CopilotKit's own
//! client drives them in `copilotkit_node.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use proc::{BridgeProc, Serve, api_key_hashes, whole_answer};
use serde_json::{Value, json};
use switchboard_agui::events::{Event, EventKind};
use switchboard_agui::run::RunEvents;
use switchboard_agui::sse::SseDecoder;

const ALICE: &str = "sb_alice-copilotkit-key";
const BOB: &str = "sb_bob-copilotkit-key";

/// One answer of a CopilotKit route: its status, its JSON body (a JSON
/// answer) or its AG-UI events (an SSE one).
struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    json: Value,
    events: Vec<Event>,
}

impl RunEvents for Answer {
    fn events(&self) -> &[Event] {
        &self.events
    }
}

impl Answer {
    /// The one task of the run's `/view`: its id and state.
    fn only_task(&self) -> (String, String) {
        let state = self.final_state().unwrap();
        let tasks = state["view"]["tasksById"].as_object().unwrap();
        assert_eq!(tasks.len(), 1, "{state}");
        let (id, task) = tasks.iter().next().unwrap();
        (id.clone(), task["state"].as_str().unwrap().to_owned())
    }
}

/// `method` of `url` with `body` (sent as `content_type`) and `headers`,
/// its whole answer read.
async fn call(
    method: reqwest::Method,
    url: &str,
    body: Option<(&str, String)>,
    headers: &[(&str, &str)],
) -> Answer {
    let mut request = reqwest::Client::new().request(method, url);
    if let Some((content_type, body)) = body {
        request = request.header("content-type", content_type).body(body);
    }
    let (status, headers, body) = whole_answer(request, headers).await;
    let status = status.as_u16();
    let sse = headers
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let (json, events) = if sse {
        let mut decoder = SseDecoder::new();
        let events = decoder.push(&body).unwrap();
        assert!(decoder.is_idle());
        (Value::Null, events.into_iter().map(|e| e.event).collect())
    } else {
        (
            serde_json::from_slice(&body).unwrap_or(Value::Null),
            Vec::new(),
        )
    };
    Answer {
        status,
        headers,
        json,
        events,
    }
}

async fn post(url: &str, body: &Value, headers: &[(&str, &str)]) -> Answer {
    call(
        reqwest::Method::POST,
        url,
        Some(("application/json", body.to_string())),
        headers,
    )
    .await
}

/// A CopilotKit run input of `thread`: one user message, nothing else but
/// what `forwarded` adds.
fn input(thread: &str, text: &str, forwarded: Value) -> Value {
    json!({
        "threadId": thread,
        "runId": format!("run-{text}"),
        "messages": [{"id": format!("u-{thread}"), "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": forwarded,
    })
}

/// A bridge (with `flags`) in front of `serve` whose CopilotKit agent id is
/// `demo`, and that agent's routes.
fn demo_bridge(serve: &Serve, flags: &[&str]) -> (BridgeProc, Routes) {
    let mut flags = flags.to_vec();
    flags.extend(["--copilotkit-agent-id", "demo"]);
    let bridge = BridgeProc::start(&serve.base(), &flags);
    let routes = Routes {
        base: format!("http://127.0.0.1:{}/api/copilotkit", bridge.port),
        agent: "demo".into(),
    };
    (bridge, routes)
}

/// The routes of one agent under `base`.
struct Routes {
    base: String,
    agent: String,
}

impl Routes {
    fn run(&self) -> String {
        format!("{}/agent/{}/run", self.base, self.agent)
    }
    fn connect(&self) -> String {
        format!("{}/agent/{}/connect", self.base, self.agent)
    }
    fn stop(&self, thread: &str) -> String {
        format!("{}/agent/{}/stop/{thread}", self.base, self.agent)
    }
}

/// Alice starts a long task on a thread; Bob, naming the same thread,
/// neither sees nor stops it; Alice connects to it and stops it.
async fn a_thread_is_its_callers_only(
    routes: &Routes,
    alice: &[(&str, &str)],
    bob: &[(&str, &str)],
) {
    let thread = "thread-of-alice";
    // A send-mode run: the task starts and the run reports it at once.
    let started = post(
        &routes.run(),
        &input(thread, "/long 60", json!({"a2a": {"mode": "send"}})),
        alice,
    )
    .await;
    assert_eq!(started.status, 200, "{:?}", started.json);
    started.check_ended().unwrap();
    let (task, state) = started.only_task();
    assert!(state == "working" || state == "submitted", "{state}");

    // Bob's thread of the same name is another conversation: empty.
    let theirs = post(&routes.connect(), &input(thread, "", json!({})), bob).await;
    assert_eq!(theirs.status, 200);
    assert_eq!(theirs.types(), Vec::<&str>::new());
    let not_stopped = post(&routes.stop(thread), &json!({}), bob).await;
    assert_eq!(not_stopped.status, 200);
    assert_eq!(not_stopped.json["stopped"], false, "{}", not_stopped.json);

    // Alice stops it; her connect shows it canceled.
    let stopped = post(&routes.stop(thread), &json!({}), alice).await;
    assert_eq!(stopped.status, 200);
    assert_eq!(stopped.json["stopped"], true, "{}", stopped.json);
    assert_eq!(stopped.json["taskIds"], json!([task]));
    assert_eq!(stopped.json["interrupt"]["code"], "STOPPED");
    let again = post(&routes.connect(), &input(thread, "", json!({})), alice).await;
    assert_eq!(again.status, 200);
    again.check_ended().unwrap();
    assert_eq!(again.only_task(), (task, "canceled".to_owned()));
    // Nothing left to stop.
    let twice = post(&routes.stop(thread), &json!({}), alice).await;
    assert_eq!(twice.json["stopped"], false, "{}", twice.json);
}

fn keys() -> String {
    api_key_hashes(&[(ALICE, "alice"), (BOB, "bob")])
}

#[tokio::test]
async fn the_bridge_keeps_each_callers_threads_to_the_caller() {
    let serve = Serve::start("memory");
    let keys = keys();
    let (_bridge, routes) = demo_bridge(&serve, &["--api-key-hash", &keys]);
    a_thread_is_its_callers_only(&routes, &[("x-api-key", ALICE)], &[("x-api-key", BOB)]).await;
}

#[tokio::test]
async fn serve_keeps_each_callers_threads_to_the_caller() {
    let serve = Serve::start_with("memory", &["--api-key-hash", &keys()]);
    let routes = Routes {
        base: format!("{}/api/copilotkit", serve.base()),
        // The card's name.
        agent: "switchboard%20demo".into(),
    };
    a_thread_is_its_callers_only(&routes, &[("x-api-key", ALICE)], &[("x-api-key", BOB)]).await;
}

/// The `MESSAGES_SNAPSHOT` of a run: each message as `role: text`.
fn snapshot(answer: &Answer) -> Vec<String> {
    let messages = answer
        .events
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            EventKind::MessagesSnapshot(s) => Some(&s.messages),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no MESSAGES_SNAPSHOT: {:?}", answer.types()));
    messages
        .iter()
        .map(|m| {
            let m = serde_json::to_value(m).unwrap();
            format!(
                "{}: {}",
                m["role"].as_str().unwrap(),
                m["content"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[tokio::test]
async fn a_reloaded_page_gets_its_whole_thread_back_and_sends_nothing() {
    let serve = Serve::start("memory");
    let (_bridge, routes) = demo_bridge(&serve, &[]);
    let thread = "thread-of-two-turns";
    let first = post(&routes.run(), &input(thread, "first words", json!({})), &[]).await;
    first.check_succeeded().unwrap();
    // The second turn: the client sends the whole conversation again.
    let mut second = input(thread, "second words here", json!({}));
    second["messages"] = json!([
        {"id": "u-1", "role": "user", "content": "first words"},
        {"id": "a-1", "role": "assistant", "content": first.text()},
        {"id": "u-2", "role": "user", "content": "second words here"},
    ]);
    let second = post(&routes.run(), &second, &[]).await;
    second.check_succeeded().unwrap();
    let (task, _) = second.only_task();

    // A reload: the page holds nothing but the thread id.
    let mut reload = input(thread, "", json!({}));
    reload["messages"] = json!([]);
    let back = post(&routes.connect(), &reload, &[]).await;
    assert_eq!(back.status, 200);
    back.check_ended().unwrap();
    let said = snapshot(&back);
    let expected = [
        "user: first words",
        "assistant: You said: first words",
        "user: second words here",
        "assistant: You said: second words here",
    ];
    let mut at = 0;
    for line in &said {
        if at < expected.len() && line.starts_with(expected[at]) {
            at += 1;
        }
    }
    assert_eq!(at, expected.len(), "{said:#?}");
    // A reconnect to the second task, not a third one.
    assert_eq!(back.only_task().0, task);
}

#[tokio::test]
async fn the_routes_admit_only_the_bridges_callers() {
    let serve = Serve::start("memory");
    let keys = keys();
    let bridge = BridgeProc::start(&serve.base(), &["--api-key-hash", &keys]);
    let base = format!("http://127.0.0.1:{}/api/copilotkit", bridge.port);
    let routes = Routes {
        base: base.clone(),
        agent: "switchboard%20demo".into(),
    };
    let info = format!("{base}/info");
    let refused = call(reqwest::Method::GET, &info, None, &[]).await;
    assert_eq!(refused.status, 401);
    assert!(refused.headers.contains_key("www-authenticate"));
    for url in [
        routes.run(),
        routes.connect(),
        routes.stop("t"),
        base.clone(),
    ] {
        let refused = post(
            &url,
            &input("t", "hello", json!({})),
            &[("x-api-key", "sb_nobody")],
        )
        .await;
        assert_eq!(refused.status, 401, "{url}");
    }
    let info = call(reqwest::Method::GET, &info, None, &[("x-api-key", ALICE)]).await;
    assert_eq!(info.status, 200);
    assert_eq!(info.json["mode"], "sse", "{}", info.json);
    let agent = &info.json["agents"]["switchboard demo"];
    assert_eq!(agent["name"], "switchboard demo", "{}", info.json);
    assert!(
        agent["description"]
            .as_str()
            .unwrap()
            .contains("Send /help")
    );
    // The single route answers the same.
    let single = post(&base, &json!({"method": "info"}), &[("x-api-key", ALICE)]).await;
    assert_eq!(single.json, info.json);
}

#[tokio::test]
async fn unknown_agents_and_malformed_requests_get_clear_errors() {
    let serve = Serve::start("memory");
    let bridge = BridgeProc::start(
        &serve.base(),
        &["--copilotkit-agent-id", "demo", "--max-body-bytes", "4096"],
    );
    let base = format!("http://127.0.0.1:{}/api/copilotkit", bridge.port);
    let nobody = Routes {
        base: base.clone(),
        agent: "nobody".into(),
    };
    let demo = Routes {
        base: base.clone(),
        agent: "demo".into(),
    };

    // An agent the bridge does not serve: 404, on every route.
    let body = input("t", "hello", json!({}));
    for url in [nobody.run(), nobody.connect(), nobody.stop("t")] {
        let answer = post(&url, &body, &[]).await;
        assert_eq!(answer.status, 404, "{url}");
        assert_eq!(answer.json["error"], "Agent not found", "{url}");
        assert!(answer.json["message"].as_str().unwrap().contains("nobody"));
    }
    for method in ["agent/run", "agent/connect", "agent/stop"] {
        let envelope = json!({"method": method, "params": {"agentId": "nobody", "threadId": "t"}, "body": body});
        let answer = post(&base, &envelope, &[]).await;
        assert_eq!(answer.status, 404, "{method}");
        assert_eq!(answer.json["error"], "Agent not found", "{method}");
    }

    // Not a RunAgentInput: a run that says which field is wrong.
    for url in [demo.run(), demo.connect()] {
        let answer = post(
            &url,
            &json!({"threadId": "t", "runId": "r", "messages": 3}),
            &[],
        )
        .await;
        assert_eq!(answer.status, 200, "{url}");
        answer.check_ended().unwrap();
        let (code, message) = answer.error().unwrap();
        assert_eq!(code, "bridge:invalid_input", "{url}");
        assert!(message.contains("messages"), "{message}");
    }

    // A malformed envelope or parameter: 400 with the reason.
    for (envelope, reason) in [
        (json!({"params": {}}), "method"),
        (json!({"method": "agent/teleport"}), "agent/teleport"),
        (
            json!({"method": "agent/stop", "params": {"agentId": "demo"}}),
            "threadId",
        ),
        (json!({"method": "agent/run", "params": {}}), "agentId"),
        (
            json!({"method": "agent/run", "params": {"agentId": "demo"}}),
            "body",
        ),
    ] {
        let answer = post(&base, &envelope, &[]).await;
        assert_eq!(answer.status, 400, "{envelope}");
        assert_eq!(answer.json["error"], "invalid_request", "{envelope}");
        assert!(
            answer.json["message"].as_str().unwrap().contains(reason),
            "{envelope}: {}",
            answer.json
        );
    }

    // Not JSON, or past the body limit.
    for url in [demo.run(), demo.connect(), base.clone()] {
        let answer = call(
            reqwest::Method::POST,
            &url,
            Some(("text/plain", "hello".into())),
            &[],
        )
        .await;
        assert_eq!(answer.status, 415, "{url}");
    }
    let big = input("t", &"x".repeat(8192), json!({}));
    for url in [demo.run(), demo.connect(), demo.stop("t"), base.clone()] {
        let answer = post(&url, &big, &[]).await;
        assert_eq!(answer.status, 413, "{url}");
    }
}

#[tokio::test]
async fn serve_turns_its_copilotkit_routes_off_with_its_agui_endpoint() {
    let on = Serve::start("memory");
    let info = format!("{}/api/copilotkit/info", on.base());
    let answer = call(reqwest::Method::GET, &info, None, &[]).await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.json["agents"]["switchboard demo"]["name"],
        "switchboard demo"
    );
    let off = Serve::start_with("memory", &["--agui-endpoint=false"]);
    let info = format!("{}/api/copilotkit/info", off.base());
    let answer = call(reqwest::Method::GET, &info, None, &[]).await;
    assert_eq!(answer.status, 404);
}

#[tokio::test]
async fn a_connect_to_a_running_task_follows_it_to_its_end() {
    let serve = Serve::start("memory");
    let (_bridge, routes) = demo_bridge(&serve, &[]);
    let thread = "thread-still-working";
    // The task starts; the run that started it is over (a closed page).
    let started = post(
        &routes.run(),
        &input(thread, "/long 6", json!({"a2a": {"mode": "send"}})),
        &[],
    )
    .await;
    started.check_ended().unwrap();
    let (task, state) = started.only_task();
    assert!(state == "working" || state == "submitted", "{state}");

    // The page comes back while it works (it has seconds to go): the
    // snapshot, then its updates.
    let mut reload = input(thread, "", json!({}));
    reload["messages"] = json!([]);
    let back = post(&routes.connect(), &reload, &[]).await;
    assert_eq!(back.status, 200);
    back.check_succeeded().unwrap();
    assert_eq!(back.only_task(), (task, "completed".to_owned()));
    let types = back.types();
    let snapshot = types
        .iter()
        .position(|t| *t == "MESSAGES_SNAPSHOT")
        .unwrap();
    assert!(
        types[snapshot..].contains(&"TEXT_MESSAGE_CONTENT"),
        "no update after the snapshot: {types:?}"
    );
}
