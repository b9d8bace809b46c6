//! A2A 0.3 beside 1.0, end to end over real loopback HTTP: every 0.3
//! operation over the 0.3 JSON-RPC dialect and the 0.3 REST routes
//! (`/v1/...`), streams with `final`, errors, a tenant, the card's 0.3
//! interfaces and the hybrid card (the default), and tasks created in one version
//! read in the other.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_core::{InMemoryStore, PushConfigLimits, RequestHandler};
use switchboard_runtimes::builtin::{DemoAgent, demo_card};
use util::*;

async fn server_with(
    configure: impl FnOnce(switchboard_server::A2aServer) -> switchboard_server::A2aServer,
) -> TestServer {
    let store = Arc::new(InMemoryStore::new());
    let handler = RequestHandler::builder(
        DemoAgent {
            chunk_delay: Duration::ZERO,
        },
        demo_card(),
    )
    .store(store.clone())
    .push(store, PushConfigLimits::default())
    .build();
    TestServer::start_with(configure, handler).await
}

async fn server() -> TestServer {
    server_with(|s| s).await
}

/// A 0.3 user message in JSON-RPC shape.
fn msg03(text: &str) -> Value {
    json!({"kind": "message", "messageId": uuid(), "role": "user",
           "parts": [{"kind": "text", "text": text}]})
}

/// A 0.3 JSON-RPC call without `A2A-Version`, as 0.3 clients send it.
async fn rpc03(s: &TestServer, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let (status, v, _) = s.post_json(&body.to_string(), &[]).await;
    assert_eq!(status, 200);
    assert_eq!(v["id"], 7);
    v
}

/// A 0.3 JSON-RPC `message/send` of `text` that returns at once (as the
/// task starts); the whole response.
async fn send03_nonblocking(s: &TestServer, text: &str) -> Value {
    let params = json!({"message": msg03(text), "configuration": {"blocking": false}});
    rpc03(s, "message/send", params).await
}

/// A 0.3 REST `message:send` body: proto JSON, its message's parts in
/// `content`.
fn rest_body(text: &str) -> Value {
    json!({"message": {"messageId": uuid(), "role": "ROLE_USER", "content": [{"text": text}]}})
}

/// A 0.3 REST `message:send` of `text` that returns at once (as the task
/// starts); the response body.
async fn rest_send_nonblocking(s: &TestServer, text: &str) -> Value {
    let mut b = rest_body(text);
    b["configuration"] = json!({"blocking": false});
    let (status, v) = rest(s, Method::POST, "/v1/message:send", Some(b)).await;
    assert_eq!(status, 200, "{v}");
    v
}

/// A 0.3 JSON-RPC stream; returns the frames' `result`s (asserting no errors).
async fn stream03(s: &TestServer, method: &str, params: Value) -> Vec<Value> {
    let body = json!({"jsonrpc": "2.0", "id": "s", "method": method, "params": params});
    frames03(s.sse_post(&body, &[]).await)
        .await
        .iter()
        .map(|frame| {
            assert_eq!(frame["id"], "s");
            result(frame).clone()
        })
        .collect()
}

/// The frames of a 0.3 SSE stream (each a `message` event), as JSON.
async fn frames03(call: SseCall) -> Vec<Value> {
    assert!(call.content_type().starts_with("text/event-stream"));
    call.collect()
        .await
        .into_iter()
        .map(|f| {
            assert_eq!(f.event, "message", "{:?}", f.data);
            f.data
        })
        .collect()
}

/// A REST call without `A2A-Version`.
async fn rest(s: &TestServer, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let (status, text, _) = s.send(method, path, body.map(|b| b.to_string()), &[]).await;
    (
        status.as_u16(),
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}")),
    )
}

/// A REST GET of `path`, without `A2A-Version`.
async fn rest_get(s: &TestServer, path: &str) -> (u16, Value) {
    rest(s, Method::GET, path, None).await
}

/// A REST POST of the JSON `body` to `path`, without `A2A-Version`.
async fn rest_post(s: &TestServer, path: &str, body: Value) -> (u16, Value) {
    rest(s, Method::POST, path, Some(body)).await
}

async fn rest_stream(
    s: &TestServer,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Vec<Value> {
    let mut req = s.http.request(method, format!("{}{path}", s.base));
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    frames03(SseCall {
        resp: Some(req.send().await.unwrap()),
    })
    .await
}

fn reason(v: &Value) -> &str {
    v["error"]["details"][0]["reason"]
        .as_str()
        .unwrap_or_default()
}

/// Checks a 0.3 stream's shape: every item tagged, only the last one final.
fn check_final(items: &[Value], last_state: &str) {
    let (last, before) = items.split_last().expect("a stream has items");
    assert_eq!(last["kind"], "status-update", "{last}");
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], last_state);
    for it in before {
        assert!(
            ["task", "status-update", "artifact-update"].contains(&it["kind"].as_str().unwrap()),
            "{it}"
        );
        if it["kind"] == "status-update" {
            assert_eq!(it["final"], false, "{it}");
        }
    }
}

#[tokio::test]
async fn jsonrpc_03_every_operation() {
    let s = server().await;
    // message/send, blocking: a bare kind-tagged task, 0.3 spellings throughout.
    let v = rpc03(&s, "message/send", json!({"message": msg03("hello there")})).await;
    let task = result(&v);
    assert_eq!(task["kind"], "task");
    assert_eq!(task["status"]["state"], "completed");
    assert_eq!(task["artifacts"][0]["parts"][0]["kind"], "text");
    assert_eq!(task["history"][0]["kind"], "message");
    assert_eq!(task["history"][0]["role"], "user");
    let done = task["id"].as_str().unwrap().to_string();
    // A direct message reply.
    let v = rpc03(&s, "message/send", json!({"message": msg03("/message hi")})).await;
    assert_eq!(result(&v)["kind"], "message");
    assert_eq!(result(&v)["role"], "agent");
    // tasks/get with historyLength 0; unknown ids; missing id.
    let v = rpc03(&s, "tasks/get", json!({"id": done, "historyLength": 0})).await;
    assert_eq!(result(&v)["kind"], "task");
    assert!(result(&v).get("history").is_none());
    assert_eq!(
        err_code(&rpc03(&s, "tasks/get", json!({"id": "nope"})).await),
        -32001
    );
    assert_eq!(err_code(&rpc03(&s, "tasks/get", json!({})).await), -32602);
    // Non-blocking send, then tasks/cancel.
    let v = send03_nonblocking(&s, "/long 20").await;
    let long = result(&v)["id"].as_str().unwrap().to_string();
    assert!(["submitted", "working"].contains(&result(&v)["status"]["state"].as_str().unwrap()));
    let v = rpc03(&s, "tasks/cancel", json!({"id": long})).await;
    assert_eq!(result(&v)["kind"], "task");
    assert_eq!(result(&v)["status"]["state"], "canceled");
    assert_eq!(
        err_code(&rpc03(&s, "tasks/cancel", json!({"id": done})).await),
        -32002
    );
    // message/stream: task first, updates, a final completed status.
    let items = stream03(&s, "message/stream", json!({"message": msg03("stream me")})).await;
    assert_eq!(items[0]["kind"], "task");
    assert!(items.iter().any(|i| i["kind"] == "artifact-update"));
    check_final(&items, "completed");
    // tasks/resubscribe to a running task.
    let v = send03_nonblocking(&s, "/long 1").await;
    let id = result(&v)["id"].as_str().unwrap().to_string();
    let items = stream03(&s, "tasks/resubscribe", json!({"id": id})).await;
    assert_eq!(items[0]["kind"], "task");
    check_final(&items, "completed");
    // Push configs: set, get (with and without config id), list, delete.
    let set = rpc03(
        &s,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": done, "pushNotificationConfig": {"url": "https://hooks.example.com/a",
               "token": "tok", "authentication": {"schemes": ["Bearer"], "credentials": "c"}}}),
    )
    .await;
    let cfg = result(&set);
    assert_eq!(cfg["taskId"], done.as_str());
    assert_eq!(
        cfg["pushNotificationConfig"]["authentication"]["schemes"][0],
        "Bearer"
    );
    let cid = cfg["pushNotificationConfig"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for params in [
        json!({"id": done, "pushNotificationConfigId": cid}),
        json!({"id": done}),
    ] {
        let got = rpc03(&s, "tasks/pushNotificationConfig/get", params).await;
        assert_eq!(result(&got), cfg);
    }
    let list = rpc03(&s, "tasks/pushNotificationConfig/list", json!({"id": done})).await;
    assert_eq!(result(&list), &json!([cfg]));
    let del = rpc03(
        &s,
        "tasks/pushNotificationConfig/delete",
        json!({"id": done, "pushNotificationConfigId": cid}),
    )
    .await;
    assert_eq!(result(&del), &Value::Null);
    let list = rpc03(&s, "tasks/pushNotificationConfig/list", json!({"id": done})).await;
    assert_eq!(result(&list), &json!([]));
    assert_eq!(
        err_code(
            &rpc03(
                &s,
                "tasks/pushNotificationConfig/delete",
                json!({"id": done})
            )
            .await
        ),
        -32602
    );
    // The extended card is not offered by the demo agent.
    assert_eq!(
        err_code(&rpc03(&s, "agent/getAuthenticatedExtendedCard", json!({})).await),
        -32004
    );
    // Bad params: a non-object data part, a file with both bytes and uri.
    for part in [
        json!({"kind": "data", "data": [1]}),
        json!({"kind": "file", "file": {"bytes": "AA==", "uri": "https://x"}}),
        json!({"kind": "nope"}),
    ] {
        let m = json!({"kind": "message", "messageId": uuid(), "role": "user", "parts": [part]});
        assert_eq!(
            err_code(&rpc03(&s, "message/send", json!({"message": m})).await),
            -32602
        );
    }
    s.stop().await;
}

#[tokio::test]
async fn jsonrpc_version_rule() {
    let s = server().await;
    let send10 = |v: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": v,
               "params": {"message": user_msg("x")}})
        .to_string()
    };
    // A 1.0 method without A2A-Version is served as 1.0 (wrapped result).
    let (_, v, _) = s.post_json(&send10("SendMessage"), &[]).await;
    assert_eq!(
        result(&v)["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    // An explicit 0.3 on a 1.0 method: 0.3 has no such method.
    let (_, v, _) = s
        .post_json(&send10("SendMessage"), &[("A2A-Version", "0.3")])
        .await;
    assert_eq!(err_code(&v), -32601);
    // Versions nobody serves are refused for 0.3 names too.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
                      "params": {"message": msg03("x")}});
    let (_, v, _) = s
        .post_json(&body.to_string(), &[("A2A-Version", "2.0")])
        .await;
    assert_eq!(err_code(&v), -32009);
    let (_, v, _) = s
        .post_json(&body.to_string(), &[("A2A-Version", "0.3")])
        .await;
    assert_eq!(result(&v)["kind"], "task");
    // 0.3 has no ListTasks.
    assert_eq!(err_code(&rpc03(&s, "tasks/list", json!({})).await), -32601);
    s.stop().await;
}

#[tokio::test]
async fn rest_03_every_operation() {
    let s = server().await;
    let (st, v) = rest_post(&s, "/v1/message:send", rest_body("hi rest")).await;
    assert_eq!(st, 200, "{v}");
    let task = &v["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(task.get("kind").is_none());
    assert_eq!(task["history"][0]["content"][0]["text"], "hi rest");
    assert!(task["artifacts"][0]["parts"][0]["text"].is_string());
    let done = task["id"].as_str().unwrap().to_string();
    // The 0.3 proto's field name `request` is accepted too.
    let request = json!({"request": {"messageId": uuid(), "role": "ROLE_USER", "content": [{"text": "/message yo"}]}});
    let (st, v) = rest_post(&s, "/v1/message:send", request).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["message"]["role"], "ROLE_AGENT");
    // Get with historyLength; unknown id; no ListTasks in 0.3.
    let (st, v) = rest_get(&s, &format!("/v1/tasks/{done}?historyLength=1")).await;
    assert_eq!(st, 200);
    assert_eq!(v["history"].as_array().unwrap().len(), 1);
    let (st, v) = rest_get(&s, "/v1/tasks/nope").await;
    assert_eq!((st, reason(&v)), (404, "TASK_NOT_FOUND"));
    let (st, _) = rest_get(&s, "/v1/tasks").await;
    assert_eq!(st, 404);
    // Non-blocking, cancel (two-L CANCELLED), cancel again refused.
    let v = rest_send_nonblocking(&s, "/long 20").await;
    let long = v["task"]["id"].as_str().unwrap().to_string();
    let (st, v) = rest_post(
        &s,
        &format!("/v1/tasks/{long}:cancel"),
        json!({"name": format!("tasks/{long}")}),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["status"]["state"], "TASK_STATE_CANCELLED");
    let (_, v) = rest(&s, Method::POST, &format!("/v1/tasks/{long}:cancel"), None).await;
    assert_eq!(reason(&v), "TASK_NOT_CANCELABLE");
    // Stream: 0.3 ProtoJSON wrappers, `final` on the last status.
    let items = rest_stream(
        &s,
        Method::POST,
        "/v1/message:stream",
        Some(rest_body("stream rest")),
    )
    .await;
    assert!(items[0]["task"].is_object());
    let last = &items.last().unwrap()["statusUpdate"];
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(items.iter().any(|i| i["artifactUpdate"].is_object()));
    // Subscribe (GET, as in the 0.3 proto) to a running task.
    let v = rest_send_nonblocking(&s, "/long 1").await;
    let id = v["task"]["id"].as_str().unwrap().to_string();
    let items = rest_stream(&s, Method::GET, &format!("/v1/tasks/{id}:subscribe"), None).await;
    assert!(items[0]["task"].is_object());
    assert_eq!(items.last().unwrap()["statusUpdate"]["final"], true);
    // Push configs: create (proto request body), get, list, delete.
    let (st, cfg) = rest_post(&s, &format!("/v1/tasks/{done}/pushNotificationConfigs"), json!({"parent": format!("tasks/{done}"), "config": {"pushNotificationConfig": {"url": "https://hooks.example.com/r", "token": "t"}}}))
    .await;
    assert_eq!(st, 200, "{cfg}");
    let cid = cfg["pushNotificationConfig"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        cfg["name"],
        format!("tasks/{done}/pushNotificationConfigs/{cid}")
    );
    let path = format!("/v1/tasks/{done}/pushNotificationConfigs/{cid}");
    assert_eq!(rest_get(&s, &path).await, (200, cfg.clone()));
    let (_, list) = rest_get(&s, &format!("/v1/tasks/{done}/pushNotificationConfigs")).await;
    assert_eq!(list["configs"], json!([cfg]));
    assert_eq!(
        rest(&s, Method::DELETE, &path, None).await,
        (200, json!({}))
    );
    let (st, _) = rest_get(&s, &path).await;
    assert!((400..500).contains(&st), "{st}");
    // Extended card: not offered.
    let (_, v) = rest_get(&s, "/v1/card").await;
    assert_eq!(reason(&v), "UNSUPPORTED_OPERATION");
    // Bad bodies get their errors.
    let (st, v) = rest_post(&s, "/v1/message:send", json!({"message": {"messageId": "m", "role": "ROLE_USER", "content": [{"data": {"data": 3}}]}})).await;
    assert_eq!((st, reason(&v)), (400, "INVALID_PARAMS"));
    let resp = s
        .http
        .post(format!("{}/v1/message:send", s.base))
        .header("Content-Type", "application/json")
        .body("{nope")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    s.stop().await;
}

#[tokio::test]
async fn tenants_over_03_rest_and_cross_version_reads() {
    let s = server().await;
    // Created over 0.3 REST in tenant acme: visible there in both versions, not elsewhere.
    let (_, v) = rest_post(&s, "/acme/v1/message:send", json!({"message": {"messageId": uuid(), "role": "ROLE_USER", "content": [{"text": "in acme"}, {"file": {"fileWithBytes": "aGk=", "mimeType": "text/plain", "name": "b.bin"}}]}}))
    .await;
    let id = v["task"]["id"].as_str().unwrap().to_string();
    let (st, _) = rest_get(&s, &format!("/acme/v1/tasks/{id}")).await;
    assert_eq!(st, 200);
    let (st, _) = rest_get(&s, &format!("/v1/tasks/{id}")).await;
    assert_eq!(st, 404);
    let (status, body, _) = s
        .send(Method::GET, &format!("/acme/tasks/{id}"), None, V1)
        .await;
    assert_eq!(status, 200);
    let t10: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(t10["status"]["state"], "TASK_STATE_COMPLETED");
    let file = &t10["history"][0]["parts"][1];
    assert_eq!(file["raw"], "aGk=");
    assert_eq!(file["filename"], "b.bin");
    assert_eq!(file["mediaType"], "text/plain");

    // Created over 0.3 JSON-RPC (default tenant), read over 1.0 JSON-RPC and 1.0 REST.
    let v = rpc03(
        &s,
        "message/send",
        json!({"message": {"kind": "message", "messageId": uuid(), "role": "user",
               "parts": [{"kind": "text", "text": "from 0.3"},
                         {"kind": "data", "data": {"k": 1}},
                         {"kind": "file", "file": {"uri": "https://files.example/x", "mimeType": "text/plain"}}]}}),
    )
    .await;
    let id = result(&v)["id"].as_str().unwrap().to_string();
    let t10 = s.rpc("GetTask", json!({"id": id})).await;
    let parts = &result(&t10)["history"][0]["parts"];
    assert_eq!(parts[0]["text"], "from 0.3");
    assert_eq!(parts[1]["data"], json!({"k": 1}));
    assert_eq!(parts[2]["url"], "https://files.example/x");
    assert_eq!(result(&t10)["status"]["state"], "TASK_STATE_COMPLETED");
    let (status, _, _) = s.send(Method::GET, &format!("/tasks/{id}"), None, V1).await;
    assert_eq!(status, 200);

    // Created over 1.0 with a non-object data part, read over 0.3 (both dialects).
    let m = json!({"messageId": uuid(), "role": "ROLE_USER",
                   "parts": [{"text": "from 1.0"}, {"data": [1, 2]}]});
    let v = s.rpc("SendMessage", json!({"message": m})).await;
    let id = result(&v)["task"]["id"].as_str().unwrap().to_string();
    let v = rpc03(&s, "tasks/get", json!({"id": id})).await;
    let parts = &result(&v)["history"][0]["parts"];
    assert_eq!(parts[0], json!({"kind": "text", "text": "from 1.0"}));
    assert_eq!(
        parts[1],
        json!({"kind": "data", "data": {"value": [1, 2]}, "metadata": {"data_part_compat": true}})
    );
    assert_eq!(result(&v)["status"]["state"], "completed");
    let (_, v) = rest_get(&s, &format!("/v1/tasks/{id}")).await;
    assert_eq!(
        v["history"][0]["content"][1]["data"]["data"]["value"],
        json!([1, 2])
    );
    s.stop().await;
}

#[tokio::test]
async fn card_lists_03_interfaces_and_the_strict_card_is_opt_in() {
    let s = server_with(|srv| srv.hybrid_card(false)).await;
    let card = s.card().await;
    let ifaces = card["supportedInterfaces"].as_array().unwrap();
    let versions: Vec<(&str, &str)> = ifaces
        .iter()
        .map(|i| {
            (
                i["protocolBinding"].as_str().unwrap(),
                i["protocolVersion"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(versions[0].1, "1.0", "1.0 comes first");
    assert!(versions.contains(&("JSONRPC", "0.3")));
    assert!(versions.contains(&("HTTP+JSON", "0.3")));
    let first03 = versions.iter().position(|v| v.1 == "0.3").unwrap();
    assert!(versions[first03..].iter().all(|v| v.1 == "0.3"));
    assert!(
        card.get("url").is_none(),
        "no 0.3 fields on the strict card"
    );
    s.stop().await;

    // The default: the hybrid card.
    let s = server().await;
    let card = s.card().await;
    assert_eq!(card["url"], format!("{}/", s.base));
    assert_eq!(card["preferredTransport"], "JSONRPC");
    assert_eq!(card["protocolVersion"], "0.3.0");
    assert_eq!(card["additionalInterfaces"][1]["transport"], "HTTP+JSON");
    assert!(card["supportedInterfaces"].is_array());
    s.stop().await;
}

#[tokio::test]
async fn client_speaks_03_on_both_bindings_when_asked_and_prefers_10() {
    use futures::StreamExt;
    use switchboard_client::A2AClient;
    use switchboard_protocol::{
        ListTasksRequest, Message, SendMessageResponse, StreamResponse, TaskState,
    };
    let s = server().await;
    // Default: the card offers both, 1.0 wins.
    let c10 = A2AClient::connect(&s.base).await.unwrap();
    assert_eq!(c10.interface().protocol_version, "1.0");
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let c = A2AClient::builder()
            .preferred_versions(["0.3"])
            .preferred_bindings([binding])
            .connect(&s.base)
            .await
            .unwrap();
        assert_eq!(c.interface().protocol_version, "0.3");
        assert_eq!(c.interface().protocol_binding, binding);
        // send (blocking), read back over 1.0.
        let SendMessageResponse::Task(t) = c.send_text("over 0.3").await.unwrap() else {
            panic!("expected a task")
        };
        assert_eq!(t.status.state, TaskState::Completed);
        assert_eq!(c10.get_task(t.id.as_str()).await.unwrap().id, t.id);
        assert_eq!(
            c.get_task(t.id.as_str()).await.unwrap().status.state,
            TaskState::Completed
        );
        // A direct message.
        assert!(matches!(
            c.send_text("/message hi").await.unwrap(),
            SendMessageResponse::Message(_)
        ));
        // Stream: ends at completed.
        let mut events: Vec<StreamResponse> = Vec::new();
        let mut st = c
            .send_streaming_message(Message::user_text("stream 0.3"))
            .await
            .unwrap();
        while let Some(ev) = st.next().await {
            events.push(ev.unwrap().event);
        }
        assert!(matches!(events[0], StreamResponse::Task(_)));
        assert_eq!(events.last().unwrap().state(), Some(TaskState::Completed));
        // Non-blocking, subscribe, cancel.
        let long = send_long(&c).await;
        subscribe_then_cancel(&c, &long).await;
        // Errors keep their codes.
        assert_eq!(c.get_task("nope").await.unwrap_err().code(), Some(-32001));
        assert_eq!(
            c.cancel_task(t.id.as_str()).await.unwrap_err().code(),
            Some(-32002)
        );
        assert_eq!(
            c.list_tasks(ListTasksRequest::default())
                .await
                .unwrap_err()
                .code(),
            Some(-32004),
            "0.3 has no ListTasks"
        );
        // Push configs over 0.3 through the client.
        push_config_round_trip(&c, t.id.as_str(), "https://hooks.example.com/c").await;
    }
    s.stop().await;
}

#[tokio::test]
async fn cli_protocol_version_override() {
    let s = server().await;
    let base = s.base.clone();
    let run = move |args: Vec<&'static str>| {
        let base = base.clone();
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
                .args(&args)
                .args(["--url", &base])
                .output()
                .unwrap()
        })
    };
    // Over 0.3 a send works end to end...
    let out = run(vec![
        "send",
        "--protocol-version",
        "0.3",
        "--json",
        "hello cli",
    ])
    .await
    .unwrap();
    let stdout = success_stdout(&out);
    assert!(
        stdout.contains("TASK_STATE_COMPLETED") || stdout.contains("completed"),
        "{stdout}"
    );
    // ...but 0.3 has no ListTasks, which proves the override picked 0.3;
    // the default (1.0) lists fine.
    let out = run(vec!["list", "--protocol-version", "0.3"])
        .await
        .unwrap();
    let stderr = failure_stderr(&out);
    assert!(stderr.contains("0.3"), "{stderr}");
    success_stdout(&run(vec!["list"]).await.unwrap());
    s.stop().await;
}
