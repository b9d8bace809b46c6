//! End-to-end tests of the HTTP+JSON (REST) binding over real loopback HTTP,
//! with the demo agent: every route (plain and tenant-prefixed), both
//! subscribe verbs, SSE framing with sequence ids and `Last-Event-ID`
//! resume, query parameters, every A2A error with its HTTP status and
//! ErrorInfo reason under both error tables (spec v1.0.0 and v1.0.1), and
//! the switchboard client driving the server over REST.
//!
//! The REST binding shares the engine with JSON-RPC, so a task created over
//! one binding is visible over the other; that is checked too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;
mod util;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use switchboard_client::protocol::{
    A2AError, AgentInterface, ListTasksRequest, Message, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, StreamResponse, TaskState,
};
use switchboard_client::{A2AClient, ClientError};
use switchboard_server::ErrorTable;
use util::edge::{FailingStore, edge_card, edge_handler};
use util::*;

async fn demo_server() -> TestServer {
    TestServer::start(demo_handler()).await
}

async fn demo_server_with(table: ErrorTable) -> TestServer {
    TestServer::start_with(|s| s.error_table(table), demo_handler()).await
}

/// The google.rpc status names of the errors these tests expect.
const FP: &str = "FAILED_PRECONDITION";
const IA: &str = "INVALID_ARGUMENT";
const NF: &str = "NOT_FOUND";
const UN: &str = "UNIMPLEMENTED";

/// A REST answer: status, JSON body, headers.
type Answer = (StatusCode, Value, HeaderMap);

/// A REST call with `A2A-Version: 1.0` and a JSON body (if any).
async fn call(s: &TestServer, method: Method, path: &str, body: Option<Value>) -> Answer {
    call_with(
        s,
        method,
        path,
        body.map(|b| b.to_string()),
        &[("A2A-Version", "1.0")],
    )
    .await
}

/// A REST GET of `path` with `A2A-Version: 1.0`.
async fn get(s: &TestServer, path: &str) -> Answer {
    call(s, Method::GET, path, None).await
}

/// A REST POST of the JSON `body` to `path` with `A2A-Version: 1.0`.
async fn post(s: &TestServer, path: &str, body: Value) -> Answer {
    call(s, Method::POST, path, Some(body)).await
}

/// A REST call with exactly these headers (Content-Type defaults to JSON
/// when there is a body).
async fn call_with(
    s: &TestServer,
    method: Method,
    path: &str,
    body: Option<String>,
    headers: &[(&str, &str)],
) -> Answer {
    let (status, text, hdrs) = s.send(method, path, body, headers).await;
    let ct = hdrs
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    assert!(
        ct.starts_with("application/json"),
        "{path}: content type {ct:?}, body {text}"
    );
    let v: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {text}"));
    (status, v, hdrs)
}

/// Opens an SSE call.
async fn sse(
    s: &TestServer,
    method: Method,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> SseCall {
    let mut req = s
        .http
        .request(method, format!("{}{path}", s.base))
        .header("A2A-Version", "1.0")
        .header("Accept", "text/event-stream");
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    SseCall {
        resp: Some(req.send().await.unwrap()),
    }
}

/// Opens the stream of a message with `text` sent to `path` (a
/// `…/message:stream` route).
async fn stream_text(s: &TestServer, path: &str, text: &str) -> SseCall {
    sse(s, Method::POST, path, Some(send_body(text)), &[]).await
}

/// Sends `text` over REST; the task it made (which must be one).
async fn send_task(s: &TestServer, text: &str) -> Value {
    let a = post(s, "/message:send", send_body(text)).await;
    ok(&a)["task"].clone()
}

/// Starts `/long 30` (under the route prefix `prefix`: "" or a tenant's
/// "/{tenant}") without waiting for it; its task id.
async fn start_long(s: &TestServer, prefix: &str) -> String {
    let body =
        json!({"message": user_msg("/long 30"), "configuration": {"returnImmediately": true}});
    let a = post(s, &format!("{prefix}/message:send"), body).await;
    ok(&a)["task"]["id"].as_str().unwrap().to_string()
}

/// Subscribes to `path` (a task's `:subscribe`) with both verbs, GET and
/// POST. Once this returns both streams have their first frame (the task),
/// so both are subscribed; the handles read the rest of their frames.
async fn subscribe_both_verbs(
    s: &TestServer,
    path: &str,
) -> [tokio::task::JoinHandle<Vec<Frame>>; 2] {
    let mut handles = Vec::new();
    for method in [Method::GET, Method::POST] {
        let call = sse(s, method, path, None, &[]).await;
        assert!(call.content_type().starts_with("text/event-stream"));
        handles.push(call.follow().await);
    }
    handles.try_into().unwrap()
}

/// Asserts a success and returns its body.
fn ok(a: &Answer) -> &Value {
    assert_eq!(a.0, 200, "unexpected error: {}", a.1);
    assert!(a.1.get("error").is_none(), "{}", a.1);
    &a.1
}

/// Asserts a Google API error body with this HTTP status, status name and
/// ErrorInfo reason.
fn expect_error(a: &Answer, http: u16, status: &str, reason: &str) {
    let (st, v, _) = a;
    assert_eq!(st.as_u16(), http, "{v}");
    let e = &v["error"];
    assert_eq!(e["code"], http, "{v}");
    assert_eq!(e["status"], status, "{v}");
    assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
    let info = &e["details"][0];
    assert_eq!(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
    assert_eq!(info["reason"], reason, "{v}");
    assert_eq!(info["domain"], "a2a-protocol.org");
    assert!(info["metadata"].is_object());
}

fn send_body(text: &str) -> Value {
    json!({"message": user_msg(text)})
}

fn seqs(frames: &[Frame]) -> Vec<u64> {
    frames
        .iter()
        .map(|f| {
            f.id.as_ref()
                .expect("every frame has an id")
                .parse()
                .unwrap()
        })
        .collect()
}

fn state_of_frame(f: &Frame) -> Option<&str> {
    f.data["statusUpdate"]["status"]["state"]
        .as_str()
        .or_else(|| f.data["task"]["status"]["state"].as_str())
}

#[tokio::test]
async fn card_offers_jsonrpc_first_then_http_json() {
    let s = demo_server().await;
    let card = s.card().await;
    let ifaces = card["supportedInterfaces"].as_array().unwrap();
    // Two 1.0 HTTP entries, gRPC, then the same three for 0.3.
    assert_eq!(ifaces.len(), 6, "{card}");
    assert_eq!(ifaces[3]["protocolVersion"], "0.3");
    assert_eq!(ifaces[4]["protocolVersion"], "0.3");
    assert_eq!(ifaces[5]["protocolVersion"], "0.3");
    assert_eq!(ifaces[5]["protocolBinding"], "GRPC");
    assert_eq!(ifaces[5]["url"], s.base.trim_start_matches("http://"));
    assert_eq!(ifaces[0]["protocolBinding"], "JSONRPC");
    assert_eq!(ifaces[1]["protocolBinding"], "HTTP+JSON");
    assert_eq!(ifaces[1]["protocolVersion"], "1.0");
    assert_eq!(ifaces[1]["url"], s.base.as_str());
    assert_eq!(ifaces[2]["protocolBinding"], "GRPC");
    assert_eq!(ifaces[2]["url"], s.base.trim_start_matches("http://"));
    s.stop().await;
}

#[tokio::test]
async fn send_get_list_with_history_length() {
    let s = demo_server().await;
    let task = send_task(&s, "hello big world").await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(artifact_text(&task["artifacts"][0]).contains("Reversed: dlrow gib olleh"));
    let id = task["id"].as_str().unwrap().to_string();
    let history_len = task["history"].as_array().unwrap().len();
    assert!(history_len >= 1);

    // historyLength: unset = all, 0 = field omitted, N = the last N.
    let all = get(&s, &format!("/tasks/{id}")).await;
    assert_eq!(ok(&all)["id"], id.as_str());
    assert_eq!(all.1["history"].as_array().unwrap().len(), history_len);
    let none = get(&s, &format!("/tasks/{id}?historyLength=0")).await;
    assert!(ok(&none).get("history").is_none());
    let one = get(&s, &format!("/tasks/{id}?historyLength=1")).await;
    assert_eq!(ok(&one)["history"].as_array().unwrap().len(), 1);
    let snake = get(&s, &format!("/tasks/{id}?history_length=0")).await;
    assert!(ok(&snake).get("history").is_none());
    let refused = get(&s, &format!("/tasks/{id}?historyLength=-1")).await;
    expect_error(&refused, 400, IA, "INVALID_PARAMS");
    // ...and on SendMessage's configuration.
    let a = call(
        &s,
        Method::POST,
        "/message:send",
        Some(json!({"message": user_msg("x"), "configuration": {"historyLength": 0}})),
    )
    .await;
    assert!(ok(&a)["task"].get("history").is_none());

    // A direct message reply.
    let a = post(&s, "/message:send", send_body("/message hi")).await;
    assert_eq!(ok(&a)["message"]["parts"][0]["text"], "You said: hi");

    // ListTasks without a filter: all four REQUIRED fields, no artifacts.
    let list = get(&s, "/tasks").await;
    let l = ok(&list);
    for f in ["tasks", "nextPageToken", "pageSize", "totalSize"] {
        assert!(l.get(f).is_some(), "ListTasks lacks {f}");
    }
    assert!(
        l["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == id.as_str())
    );
    assert!(l["tasks"][0].get("artifacts").is_none());
    s.stop().await;
}

#[tokio::test]
async fn nonblocking_subscribe_both_verbs_then_cancel() {
    let s = demo_server().await;
    let id = start_long(&s, "").await;
    let [h1, h2] = subscribe_both_verbs(&s, &format!("/tasks/{id}:subscribe")).await;

    // Cancel with an empty body and no Content-Type.
    let c = call_with(
        &s,
        Method::POST,
        &format!("/tasks/{id}:cancel"),
        None,
        &[("A2A-Version", "1.0")],
    )
    .await;
    assert_eq!(ok(&c)["status"]["state"], "TASK_STATE_CANCELED");
    let (f1, f2) = (h1.await.unwrap(), h2.await.unwrap());
    for frames in [&f1, &f2] {
        assert_eq!(
            frames[0].data["task"]["id"],
            id.as_str(),
            "starts with the task"
        );
        assert!(frames.iter().all(|f| f.data.get("jsonrpc").is_none()));
        assert_eq!(
            state_of_frame(frames.last().unwrap()),
            Some("TASK_STATE_CANCELED")
        );
        let ids = seqs(frames);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    }
    assert_eq!(seqs(&f1).last(), seqs(&f2).last());

    // Terminal now: cancel (with `{}`) and subscribe are refused.
    let refused = post(&s, &format!("/tasks/{id}:cancel"), json!({})).await;
    expect_error(&refused, 400, FP, "TASK_NOT_CANCELABLE");
    let refused = call(&s, Method::POST, &format!("/tasks/{id}:subscribe"), None).await;
    expect_error(&refused, 400, FP, "UNSUPPORTED_OPERATION");
    // A body naming another task is refused: the path decides.
    let refused = post(&s, &format!("/tasks/{id}:cancel"), json!({"id": "other"})).await;
    expect_error(&refused, 400, IA, "INVALID_PARAMS");
    s.stop().await;
}

#[tokio::test]
async fn streams_carry_sequence_ids_and_resume_with_last_event_id() {
    let s = demo_server().await;
    let call_ = stream_text(&s, "/message:stream", "stream me").await;
    assert!(call_.content_type().starts_with("text/event-stream"));
    let frames = call_.collect().await;
    assert!(frames.len() >= 6, "{frames:?}");
    assert_eq!(seqs(&frames), (1..=frames.len() as u64).collect::<Vec<_>>());
    assert_eq!(
        frames[0].data["task"]["status"]["state"],
        "TASK_STATE_SUBMITTED"
    );
    assert!(
        frames
            .iter()
            .all(|f| f.event.is_empty() || f.event == "message")
    );
    let chunks: Vec<&Value> = frames
        .iter()
        .filter_map(|f| f.data.get("artifactUpdate"))
        .collect();
    assert_eq!(chunks.len(), 4);
    assert_eq!(
        state_of_frame(frames.last().unwrap()),
        Some("TASK_STATE_COMPLETED")
    );
    let id = frames[0].data["task"]["id"].as_str().unwrap().to_string();

    // Resume after event 2, with both verbs: the rest of the log, same ids.
    for method in [Method::GET, Method::POST] {
        let resumed = sse(
            &s,
            method,
            &format!("/tasks/{id}:subscribe"),
            None,
            &[("Last-Event-ID", "2")],
        )
        .await
        .collect()
        .await;
        assert_eq!(seqs(&resumed), seqs(&frames[2..]));
        for (a, b) in resumed.iter().zip(&frames[2..]) {
            assert_eq!(a.data, b.data);
        }
    }
    // Resuming at the end: nothing left, the stream just ends.
    let last = frames.len().to_string();
    let rest = sse(
        &s,
        Method::GET,
        &format!("/tasks/{id}:subscribe"),
        None,
        &[("Last-Event-ID", last.as_str())],
    )
    .await
    .collect()
    .await;
    assert!(rest.is_empty());
    // A Last-Event-ID that is not ours.
    for bad in ["abc", "9999"] {
        let a = call_with(
            &s,
            Method::GET,
            &format!("/tasks/{id}:subscribe"),
            None,
            &[("A2A-Version", "1.0"), ("Last-Event-ID", bad)],
        )
        .await;
        expect_error(&a, 400, IA, "INVALID_PARAMS");
    }
    // Streaming a direct message: one event, then the stream closes.
    let frames = stream_text(&s, "/message:stream", "/message yo")
        .await
        .collect()
        .await;
    assert_eq!(frames.len(), 1);
    assert_eq!(
        frames[0].data["message"]["parts"][0]["text"],
        "You said: yo"
    );
    s.stop().await;
}

#[tokio::test]
async fn tenant_prefixed_routes_are_scoped() {
    let s = demo_server().await;
    let a = post(&s, "/acme/message:send", send_body("hi acme")).await;
    let id = ok(&a)["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        ok(&get(&s, &format!("/acme/tasks/{id}")).await)["id"],
        id.as_str()
    );
    // Not visible in the default tenant or another one.
    for path in [format!("/tasks/{id}"), format!("/other/tasks/{id}")] {
        expect_error(&get(&s, &path).await, 404, NF, "TASK_NOT_FOUND");
    }
    let in_acme = get(&s, "/acme/tasks").await;
    assert!(
        ok(&in_acme)["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == id.as_str())
    );
    let in_default = get(&s, "/tasks").await;
    assert!(
        !ok(&in_default)["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == id.as_str())
    );
    // The same tenant over JSON-RPC sees it; the body may repeat the tenant.
    let v = s.rpc("GetTask", json!({"id": id, "tenant": "acme"})).await;
    assert_eq!(result(&v)["id"], id.as_str());
    let mut body = send_body("again");
    body["tenant"] = json!("acme");
    ok(&post(&s, "/acme/message:send", body.clone()).await);
    // ...but a body naming a different tenant is refused.
    let refused = post(&s, "/message:send", body).await;
    expect_error(&refused, 400, IA, "INVALID_PARAMS");

    // Subscribe (both verbs) and cancel under the tenant.
    let long = start_long(&s, "/acme").await;
    let [h1, h2] = subscribe_both_verbs(&s, &format!("/acme/tasks/{long}:subscribe")).await;
    let refused = call(&s, Method::POST, &format!("/tasks/{long}:cancel"), None).await;
    expect_error(&refused, 404, NF, "TASK_NOT_FOUND");
    let c = post(&s, &format!("/acme/tasks/{long}:cancel"), json!({})).await;
    assert_eq!(ok(&c)["status"]["state"], "TASK_STATE_CANCELED");
    for h in [h1, h2] {
        let frames = h.await.unwrap();
        assert_eq!(
            state_of_frame(frames.last().unwrap()),
            Some("TASK_STATE_CANCELED")
        );
    }
    // A stream under a tenant, and the push and card routes under it.
    let frames = stream_text(&s, "/acme/message:stream", "streamed in acme")
        .await
        .collect()
        .await;
    let sid = frames[0].data["task"]["id"].as_str().unwrap().to_string();
    ok(&get(&s, &format!("/acme/tasks/{sid}")).await);
    let refused = get(&s, "/acme/tasks/t/pushNotificationConfigs").await;
    expect_error(&refused, 400, FP, "PUSH_NOTIFICATION_NOT_SUPPORTED");
    let refused = get(&s, "/acme/extendedAgentCard").await;
    expect_error(&refused, 400, FP, "UNSUPPORTED_OPERATION");
    // A tenant named like a route is not a tenant: `/tasks/tasks` reads task "tasks".
    expect_error(&get(&s, "/tasks/tasks").await, 404, NF, "TASK_NOT_FOUND");
    s.stop().await;
}

#[tokio::test]
async fn list_paging_and_filters_via_query_parameters() {
    let s = demo_server().await;
    s.send_tasks_in_context("rest-paging", 7).await;
    let page = |token: String| {
        let s = &s;
        async move {
            let a = get(
                s,
                &format!(
                    "/tasks?contextId=rest-paging&pageSize=3&includeArtifacts=true&historyLength=0&pageToken={token}"
                ),
            )
            .await;
            ok(&a).clone()
        }
    };
    for t in all_pages(page, 7, 3).await {
        assert!(t["artifacts"].is_array());
        assert!(t.get("history").is_none());
    }

    let total = |q: String| {
        let s = &s;
        async move {
            let a = get(s, &format!("/tasks?contextId=rest-paging&{q}")).await;
            ok(&a)["totalSize"].as_i64().unwrap()
        }
    };
    assert_eq!(total("status=TASK_STATE_COMPLETED".into()).await, 7);
    assert_eq!(total("status=TASK_STATE_WORKING".into()).await, 0);
    assert_eq!(
        total("statusTimestampAfter=2000-01-01T00:00:00Z".into()).await,
        7
    );
    assert_eq!(
        total("statusTimestampAfter=2999-01-01T00%3A00%3A00Z".into()).await,
        0
    );
    assert_eq!(
        total("include_artifacts=false&unknownParam=1".into()).await,
        7
    );

    for (q, field) in [
        ("pageSize=abc", "pageSize"),
        ("pageSize=1000", "pageSize"),
        ("includeArtifacts=yes", "includeArtifacts"),
        ("status=RUNNING", "status"),
        ("statusTimestampAfter=yesterday", "statusTimestampAfter"),
        ("historyLength=1.5", "historyLength"),
        ("pageToken=not-a-token", "pageToken"),
    ] {
        let a = get(&s, &format!("/tasks?{q}")).await;
        expect_error(&a, 400, IA, "INVALID_PARAMS");
        assert!(
            a.1["error"]["message"].as_str().unwrap().contains(field),
            "{q}: {}",
            a.1
        );
    }
    s.stop().await;
}

#[tokio::test]
async fn tasks_cross_bindings() {
    let s = demo_server().await;
    // REST → JSON-RPC.
    let t = send_task(&s, "/ask").await;
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let v = s.rpc("GetTask", json!({"id": t["id"]})).await;
    assert_eq!(result(&v), &t);
    // ...follow up over JSON-RPC, read the result over REST.
    let mut answer = user_msg("Ada");
    answer["taskId"] = t["id"].clone();
    let v = s.rpc("SendMessage", json!({"message": answer})).await;
    assert_eq!(
        result(&v)["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let got = call(
        &s,
        Method::GET,
        &format!("/tasks/{}", t["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert!(artifact_text(&ok(&got)["artifacts"][0]).contains("Hello, Ada!"));
    // JSON-RPC → REST.
    let v = s.rpc_send_text("/auth").await;
    let id = result(&v)["task"]["id"].as_str().unwrap().to_string();
    let got = get(&s, &format!("/tasks/{id}")).await;
    assert_eq!(ok(&got)["status"]["state"], "TASK_STATE_AUTH_REQUIRED");
    let c = call(&s, Method::POST, &format!("/tasks/{id}:cancel"), None).await;
    assert_eq!(ok(&c)["status"]["state"], "TASK_STATE_CANCELED");
    let v = s.rpc("GetTask", json!({"id": id})).await;
    assert_eq!(result(&v)["status"]["state"], "TASK_STATE_CANCELED");
    s.stop().await;
}

/// The (HTTP, status name) an error has in each table.
struct Row {
    v101: (u16, &'static str),
    v100: (u16, &'static str),
}

impl Row {
    fn get(&self, table: ErrorTable) -> (u16, &'static str) {
        match table {
            ErrorTable::V1_0_0 => self.v100,
            _ => self.v101,
        }
    }
}

#[tokio::test]
async fn demo_errors_in_both_tables() {
    for table in [ErrorTable::V1_0_1, ErrorTable::V1_0_0] {
        let s = demo_server_with(table).await;
        let check = |a: Answer, row: Row, reason: &'static str| {
            let (http, status) = row.get(table);
            expect_error(&a, http, status, reason);
        };
        let v1 = [("A2A-Version", "1.0")];

        // TaskNotFound.
        check(
            get(&s, "/tasks/no-such-task").await,
            Row {
                v101: (404, "NOT_FOUND"),
                v100: (404, "NOT_FOUND"),
            },
            "TASK_NOT_FOUND",
        );
        let a = get(&s, "/tasks/no-such-task").await;
        assert_eq!(
            a.1["error"]["details"][0]["metadata"]["taskId"],
            "no-such-task"
        );
        // TaskNotCancelable.
        let done = send_task(&s, "done").await;
        let id = done["id"].as_str().unwrap().to_string();
        check(
            call(&s, Method::POST, &format!("/tasks/{id}:cancel"), None).await,
            Row {
                v101: (400, FP),
                v100: (409, FP),
            },
            "TASK_NOT_CANCELABLE",
        );
        // PushNotificationNotSupported, on all four push routes.
        for (m, path, body) in [
            (
                Method::POST,
                "/tasks/t/pushNotificationConfigs",
                Some(json!({"url": "https://example.com/hook"})),
            ),
            (
                Method::GET,
                "/tasks/t/pushNotificationConfigs?pageSize=5",
                None,
            ),
            (Method::GET, "/tasks/t/pushNotificationConfigs/c", None),
            (Method::DELETE, "/tasks/t/pushNotificationConfigs/c", None),
        ] {
            check(
                call(&s, m, path, body).await,
                Row {
                    v101: (400, FP),
                    v100: (400, UN),
                },
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
            );
        }
        // UnsupportedOperation: no extended card; a message to a finished task.
        check(
            get(&s, "/extendedAgentCard").await,
            Row {
                v101: (400, FP),
                v100: (400, UN),
            },
            "UNSUPPORTED_OPERATION",
        );
        let mut more = user_msg("more");
        more["taskId"] = json!(id);
        check(
            post(&s, "/message:send", json!({"message": more})).await,
            Row {
                v101: (400, FP),
                v100: (400, UN),
            },
            "UNSUPPORTED_OPERATION",
        );
        // ContentTypeNotSupported: the request's, and a part's media type.
        let ct = Row {
            v101: (400, IA),
            v100: (415, IA),
        };
        check(
            call_with(
                &s,
                Method::POST,
                "/message:send",
                Some(send_body("x").to_string()),
                &[("A2A-Version", "1.0"), ("Content-Type", "text/plain")],
            )
            .await,
            ct,
            "CONTENT_TYPE_NOT_SUPPORTED",
        );
        let img = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"raw": "AAEC", "mediaType": "image/png"}]}});
        check(
            post(&s, "/message:send", img).await,
            Row {
                v101: (400, IA),
                v100: (415, IA),
            },
            "CONTENT_TYPE_NOT_SUPPORTED",
        );
        // application/a2a+json is accepted too.
        let a = call_with(
            &s,
            Method::POST,
            "/message:send",
            Some(send_body("x").to_string()),
            &[
                ("A2A-Version", "1.0"),
                ("Content-Type", "application/a2a+json; charset=utf-8"),
            ],
        )
        .await;
        ok(&a);
        // VersionNotSupported: missing (= 0.3), empty, or another major.
        let vns = || Row {
            v101: (400, FP),
            v100: (400, UN),
        };
        check(
            call_with(&s, Method::GET, "/tasks", None, &[]).await,
            vns(),
            "VERSION_NOT_SUPPORTED",
        );
        check(
            call_with(
                &s,
                Method::POST,
                "/message:send",
                Some(send_body("x").to_string()),
                &[],
            )
            .await,
            vns(),
            "VERSION_NOT_SUPPORTED",
        );
        check(
            call_with(&s, Method::GET, "/tasks", None, &[("A2A-Version", "2.0")]).await,
            vns(),
            "VERSION_NOT_SUPPORTED",
        );
        let a = call_with(&s, Method::GET, "/tasks", None, &[]).await;
        assert_eq!(a.1["error"]["details"][0]["metadata"]["version"], "0.3");
        // The query parameter form works.
        ok(&call_with(&s, Method::GET, "/tasks?A2A-Version=1.0", None, &[]).await);
        // Parse and InvalidParams.
        check(
            call_with(
                &s,
                Method::POST,
                "/message:send",
                Some("{\"message\": ".into()),
                &v1,
            )
            .await,
            Row {
                v101: (400, IA),
                v100: (400, IA),
            },
            "PARSE_ERROR",
        );
        for bad in [
            json!({}),
            json!([1]),
            json!({"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}),
        ] {
            check(
                post(&s, "/message:send", bad).await,
                Row {
                    v101: (400, IA),
                    v100: (400, IA),
                },
                "INVALID_PARAMS",
            );
        }
        // Unknown routes: 404 JSON; a known route with the wrong method: 405.
        for path in [
            "/nope",
            "/v1/tasks",
            "/tasks/t/x",
            "/a/b/c/d/e/f",
            "/tasks/t:frobnicate:cancel/x",
        ] {
            check(
                get(&s, path).await,
                Row {
                    v101: (404, "NOT_FOUND"),
                    v100: (404, "NOT_FOUND"),
                },
                "METHOD_NOT_FOUND",
            );
        }
        let a = call(&s, Method::DELETE, "/message:send", None).await;
        expect_error(&a, 405, UN, "METHOD_NOT_FOUND");
        assert_eq!(a.2["allow"], "POST");
        let a = get(&s, "/tasks/t:cancel").await;
        expect_error(&a, 405, UN, "METHOD_NOT_FOUND");
        // A path that is not valid percent-encoding.
        check(
            get(&s, "/tasks/%ff%fe").await,
            Row {
                v101: (400, IA),
                v100: (400, IA),
            },
            "INVALID_REQUEST",
        );
        s.stop().await;
    }
}

#[tokio::test]
async fn oversize_body_is_413() {
    let s = TestServer::start_with(|srv| srv.max_body_bytes(4096), demo_handler()).await;
    for path in ["/message:send", "/acme/message:stream"] {
        let a = call(&s, Method::POST, path, Some(send_body(&"x".repeat(10_000)))).await;
        expect_error(&a, 413, IA, "INVALID_REQUEST");
    }
    ok(&post(&s, "/message:send", send_body("small")).await);
    s.stop().await;
}

#[tokio::test]
async fn agent_and_server_errors_in_both_tables() {
    for table in [ErrorTable::V1_0_1, ErrorTable::V1_0_0] {
        let s = TestServer::start_with(
            |srv| srv.error_table(table),
            edge_handler(edge_card(true, true), None),
        )
        .await;
        let v100 = table == ErrorTable::V1_0_0;
        // ExtensionSupportRequired.
        let a = post(&s, "/message:send", send_body("hi")).await;
        expect_error(&a, 400, FP, "EXTENSION_SUPPORT_REQUIRED");
        assert_eq!(
            a.1["error"]["details"][0]["metadata"]["extension"],
            "urn:x-required"
        );
        let ext = [
            ("A2A-Version", "1.0"),
            (
                "A2A-Extensions",
                "urn:x-required, urn:x-optional, urn:unknown",
            ),
        ];
        let a = call_with(
            &s,
            Method::POST,
            "/message:send",
            Some(send_body("hi").to_string()),
            &ext,
        )
        .await;
        assert_eq!(ok(&a)["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(a.2["a2a-extensions"], "urn:x-required,urn:x-optional");
        // InvalidAgentResponse.
        let a = call_with(
            &s,
            Method::POST,
            "/message:send",
            Some(send_body("empty-reply").to_string()),
            &ext,
        )
        .await;
        if v100 {
            expect_error(&a, 502, "INTERNAL", "INVALID_AGENT_RESPONSE");
        } else {
            expect_error(&a, 500, "INTERNAL", "INVALID_AGENT_RESPONSE");
        }
        assert_eq!(
            a.2["a2a-extensions"], "urn:x-required,urn:x-optional",
            "echoed on errors too"
        );
        // ExtendedAgentCardNotConfigured.
        let a = call_with(&s, Method::GET, "/extendedAgentCard", None, &ext).await;
        expect_error(&a, 400, FP, "EXTENDED_AGENT_CARD_NOT_CONFIGURED");
        // Streams echo the extensions header too.
        let resp = sse(
            &s,
            Method::POST,
            "/message:stream",
            Some(send_body("hi")),
            &ext[1..],
        )
        .await;
        assert_eq!(
            resp.resp.as_ref().unwrap().headers()["a2a-extensions"],
            "urn:x-required,urn:x-optional"
        );
        let frames = resp.collect().await;
        assert_eq!(
            state_of_frame(frames.last().unwrap()),
            Some("TASK_STATE_COMPLETED")
        );
        s.stop().await;

        // Internal: the store fails. Streaming not declared: UnsupportedOperation.
        let s = TestServer::start_with(
            |srv| srv.error_table(table),
            edge_handler(edge_card(false, false), Some(Arc::new(FailingStore))),
        )
        .await;
        let a = get(&s, "/tasks/anything").await;
        expect_error(&a, 500, "INTERNAL", "INTERNAL_ERROR");
        let a = get(&s, "/tasks").await;
        expect_error(&a, 500, "INTERNAL", "INTERNAL_ERROR");
        let unsupported = if v100 { UN } else { FP };
        expect_error(
            &post(&s, "/message:stream", send_body("x")).await,
            400,
            unsupported,
            "UNSUPPORTED_OPERATION",
        );
        expect_error(
            &get(&s, "/tasks/x:subscribe").await,
            400,
            unsupported,
            "UNSUPPORTED_OPERATION",
        );
        s.stop().await;
    }
}

/// Runs `f` under a timeout so a hang fails the test.
async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("step timed out")
}

#[tokio::test]
async fn our_client_drives_every_operation_over_rest() {
    let s = demo_server().await;
    let client = s.client_on("HTTP+JSON", "1.0").await;
    assert_eq!(client.interface().url, s.base);
    // By default the card's order wins: JSON-RPC.
    let default = A2AClient::connect(&s.base).await.unwrap();
    assert_eq!(default.interface().protocol_binding, "JSONRPC");

    // send
    let task = match within(client.send_text("hello rest")).await.unwrap() {
        SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    };
    assert_eq!(task.status.state, TaskState::Completed);
    match within(client.send_text("/message hi")).await.unwrap() {
        SendMessageResponse::Message(m) => assert_eq!(m.text(), "You said: hi"),
        other => panic!("expected a message, got {other:?}"),
    }
    // get (with historyLength through the query string)
    let got = within(client.get_task(task.id.as_str())).await.unwrap();
    assert_eq!(got.id, task.id);
    let req = switchboard_client::protocol::GetTaskRequest {
        tenant: None,
        id: task.id.clone(),
        history_length: Some(0),
    };
    assert!(
        within(client.get_task(req))
            .await
            .unwrap()
            .history
            .is_none()
    );
    // stream
    let mut events = within(client.send_streaming_message(Message::user_text("stream rest")))
        .await
        .unwrap();
    let mut items = Vec::new();
    while let Some(item) = within(events.next()).await {
        items.push(item.unwrap());
    }
    assert!(matches!(items[0].event, StreamResponse::Task(_)));
    assert_eq!(
        items.iter().map(|e| e.seq.unwrap()).collect::<Vec<_>>(),
        (1..=items.len() as u64).collect::<Vec<_>>()
    );
    match &items.last().unwrap().event {
        StreamResponse::StatusUpdate(u) => assert_eq!(u.status.state, TaskState::Completed),
        other => panic!("{other:?}"),
    }
    // list, with a context filter and paging
    let ctx = task.context_id.clone();
    let page = within(client.list_tasks(ListTasksRequest {
        context_id: Some(ctx.clone()),
        page_size: Some(1),
        include_artifacts: Some(true),
        status: Some(TaskState::Completed),
        ..Default::default()
    }))
    .await
    .unwrap();
    assert_eq!(page.total_size, 1);
    assert_eq!(page.tasks[0].id, task.id);
    assert!(page.tasks[0].artifacts.is_some());
    // subscribe + cancel
    let mut req = SendMessageRequest::new(Message::user_text("/long 30"));
    req.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    let long = match within(client.send_message(req)).await.unwrap() {
        SendMessageResponse::Task(t) => t,
        other => panic!("{other:?}"),
    };
    let mut sub = within(client.subscribe_to_task(long.id.as_str()))
        .await
        .unwrap();
    let first = within(sub.next()).await.unwrap().unwrap();
    assert!(matches!(first.event, StreamResponse::Task(ref t) if t.id == long.id));
    let canceled = within(client.cancel_task(long.id.as_str())).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let mut last = first;
    while let Some(item) = within(sub.next()).await {
        last = item.unwrap();
    }
    match last.event {
        StreamResponse::StatusUpdate(u) => assert_eq!(u.status.state, TaskState::Canceled),
        StreamResponse::Task(t) => assert_eq!(t.status.state, TaskState::Canceled),
        other => panic!("{other:?}"),
    }
    // errors keep their A2A identity
    let err = within(client.get_task("no-such-task")).await.unwrap_err();
    assert_eq!(err.code(), Some(-32001));
    assert_eq!(
        err.as_protocol(),
        Some(&A2AError::TaskNotFound("no-such-task".into()))
    );
    let err = within(client.cancel_task(long.id.as_str()))
        .await
        .unwrap_err();
    assert!(
        matches!(err.as_protocol(), Some(A2AError::TaskNotCancelable { task_id, .. }) if *task_id == long.id),
        "{err:?}"
    );
    let err = within(client.subscribe_to_task(long.id.as_str()))
        .await
        .err()
        .unwrap();
    assert_eq!(err.code(), Some(-32004));
    let err = within(client.list_push_configs("t")).await.unwrap_err();
    assert_eq!(err.code(), Some(-32003));
    let err = within(client.delete_push_config(("t", "c")))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(-32003));
    let err = within(client.get_extended_agent_card()).await.unwrap_err();
    assert_eq!(err.code(), Some(-32004));
    let err = within(client.list_tasks(ListTasksRequest {
        page_size: Some(1000),
        ..Default::default()
    }))
    .await
    .unwrap_err();
    assert_eq!(err.code(), Some(-32602));
    s.stop().await;
}

#[tokio::test]
async fn our_client_copies_the_card_tenant_into_rest_paths() {
    let s = demo_server().await;
    let mut card = A2AClient::builder().fetch_card(&s.base).await.unwrap();
    card.supported_interfaces = vec![AgentInterface {
        url: format!("{}/", s.base),
        protocol_binding: "HTTP+JSON".into(),
        tenant: Some("team a:1".into()),
        protocol_version: "1.0".into(),
    }];
    let client = A2AClient::builder().from_card(card.clone()).unwrap();
    let task = match within(client.send_text("tenant rest")).await.unwrap() {
        SendMessageResponse::Task(t) => t,
        other => panic!("{other:?}"),
    };
    // The tenant (with its space and colon) arrived as a tenant, not a route.
    let v = s
        .rpc("GetTask", json!({"id": task.id, "tenant": "team a:1"}))
        .await;
    assert_eq!(result(&v)["id"], task.id.as_str());
    assert_eq!(
        err_code(&s.rpc("GetTask", json!({"id": task.id})).await),
        -32001
    );
    assert_eq!(
        within(client.get_task(task.id.as_str())).await.unwrap().id,
        task.id
    );
    let page = within(client.list_tasks(ListTasksRequest::default()))
        .await
        .unwrap();
    assert!(page.tasks.iter().any(|t| t.id == task.id));

    // A tenant that REST cannot express is refused before anything is sent.
    card.supported_interfaces[0].tenant = Some("tasks".into());
    let client = A2AClient::builder().from_card(card).unwrap();
    let err = within(client.send_text("x")).await.unwrap_err();
    assert!(matches!(err, ClientError::Config(_)), "{err:?}");
    s.stop().await;
}

/// The official Python client (a2a-sdk 1.3.0, `interop/py/drive.py --transport HTTP+JSON`)
/// runs the demo scenario, AG-UI-hinted parts included, over HTTP+JSON against this server. Skipped when
/// `interop/.venv` is missing, unless `SWITCHBOARD_REQUIRE_INTEROP` is set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_python_client_over_rest() {
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let root = proc::repo_root();
    let s = demo_server().await;
    let out = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(&python)
            .arg(root.join("interop/py/drive.py"))
            .args(["--transport", "HTTP+JSON", "--agui-hints", &s.base])
            .current_dir(&root)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Python driver hung")
    .unwrap();
    let stdout = proc::interop_driver_passed("drive.py --transport HTTP+JSON", &out, 13);
    assert!(
        stdout.contains("\"transport\": \"RestTransport\""),
        "the SDK did not use its REST transport: {stdout}"
    );
    s.stop().await;
}
