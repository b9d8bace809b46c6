//! Wire-level checks of the client against a scripted HTTP server.
//!
//! The official sample servers (see `official_samples.rs`) show that the
//! client interoperates; this file pins down what it sends and how it reads
//! the answers a well-behaved agent does *not* give: HTTP error statuses,
//! bad JSON, mismatched ids, unknown error codes, mid-stream errors, hangs.
//!
//! The scripted server is a few lines of tokio: it accepts a connection,
//! reads one HTTP/1.1 request (headers, then `Content-Length` bytes), records
//! it, and writes the canned reply the test chose, then closes the
//! connection (which also ends an SSE body).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scripted;

use std::time::Duration;

use futures::StreamExt;
use scripted::{Reply, Seen, serve};
use serde_json::{Value, json};
use switchboard_client::protocol::{A2AError, ListTasksRequest, StreamResponse, TaskState};
use switchboard_client::{A2AClient, ClientError};

fn json_reply(body: Value) -> Reply {
    Reply::Http {
        status: 200,
        content_type: "application/json",
        body: body.to_string(),
    }
}

fn sse_reply(body: &str) -> Reply {
    Reply::Http {
        status: 200,
        content_type: "text/event-stream",
        body: body.to_string(),
    }
}

fn task_json(id: &str, state: &str) -> Value {
    json!({"id": id, "contextId": "ctx", "status": {"state": state}})
}

/// Answers every JSON-RPC call with `result`, echoing the id.
fn echo_result(result: Value) -> impl Fn(&Seen) -> Reply {
    move |seen| json_reply(json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": result}))
}

/// Every item of a streamed "hi", errors included, to the stream's end.
async fn stream_hi(
    client: &A2AClient,
) -> Vec<Result<switchboard_client::StreamEvent, ClientError>> {
    let message = switchboard_client::protocol::Message::user_text("hi");
    client
        .send_streaming_message(message)
        .await
        .unwrap()
        .collect()
        .await
}

#[tokio::test]
async fn requests_carry_headers_ids_and_params() {
    let (base, log) = serve(echo_result(task_json("t1", "TASK_STATE_WORKING"))).await;
    let client = A2AClient::builder()
        .bearer_token("s3cret")
        .header("X-Trace", "abc")
        .extensions(["urn:a", "urn:b"])
        .from_endpoint(&format!("{base}/rpc"))
        .unwrap();
    assert!(client.card().is_none());
    let task = client.get_task("t1").await.unwrap();
    assert_eq!(task.id, "t1");
    assert_eq!(task.status.state, TaskState::Working);
    client.cancel_task("t1").await.unwrap();

    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    let get = &seen[0];
    assert_eq!(get.method, "POST");
    assert_eq!(get.target, "/rpc");
    assert_eq!(get.header("content-type"), Some("application/json"));
    assert_eq!(get.header("a2a-version"), Some("1.0"));
    assert_eq!(get.header("a2a-extensions"), Some("urn:a,urn:b"));
    assert_eq!(get.header("authorization"), Some("Bearer s3cret"));
    assert_eq!(get.header("x-trace"), Some("abc"));
    assert_eq!(get.body["jsonrpc"], "2.0");
    assert_eq!(get.body["method"], "GetTask");
    assert_eq!(get.body["params"], json!({"id": "t1"}));
    assert_eq!(seen[1].body["method"], "CancelTask");
    assert_ne!(get.body["id"], seen[1].body["id"], "ids must be unique");
}

#[tokio::test]
async fn connect_reads_the_card_and_copies_the_tenant() {
    let (base, log) = serve(|seen| {
        if seen.method == "GET" {
            let port = seen.header("host").unwrap().to_string();
            json_reply(json!({
                "name": "mock",
                "description": "d",
                "version": "1",
                "supportedInterfaces": [
                    {"url": "custom.example:443", "protocolBinding": "urn:example:custom", "protocolVersion": "1.0"},
                    {"url": format!("http://{port}/v03"), "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                    {"url": format!("http://{port}/v1"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "acme"}
                ],
                "capabilities": {"streaming": true}
            }))
        } else {
            json_reply(json!({"jsonrpc": "2.0", "id": seen.body["id"],
                "result": {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}}))
        }
    })
    .await;
    let client = A2AClient::connect(&base).await.unwrap();
    assert_eq!(client.card().unwrap().name, "mock");
    assert!(client.endpoint().ends_with("/v1"), "{}", client.endpoint());
    assert_eq!(client.interface().tenant.as_deref(), Some("acme"));
    let page = client
        .list_tasks(ListTasksRequest::default())
        .await
        .unwrap();
    assert!(page.tasks.is_empty());

    let seen = log.lock().unwrap().clone();
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].target, "/.well-known/agent-card.json");
    assert_eq!(seen[1].target, "/v1");
    assert_eq!(seen[1].body["method"], "ListTasks");
    assert_eq!(seen[1].body["params"], json!({"tenant": "acme"}));
}

#[tokio::test]
async fn card_without_a_usable_interface_is_reported() {
    let (base, _) = serve(|_| {
        json_reply(json!({
            "name": "old", "description": "", "version": "1",
            "supportedInterfaces": [{"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": "0.2"}]
        }))
    })
    .await;
    let err = A2AClient::connect(&format!("{base}/.well-known/agent-card.json"))
        .await
        .unwrap_err();
    match err {
        ClientError::NoSupportedInterface { offered } => {
            assert_eq!(offered, ["JSONRPC 0.2 at http://x/"])
        }
        other => panic!("{other:?}"),
    }
    // The card itself can still be read.
    let card = A2AClient::builder().fetch_card(&base).await.unwrap();
    assert_eq!(card.name, "old");
}

#[tokio::test]
async fn rpc_errors_keep_their_code_whatever_the_http_status() {
    let (base, _) = serve(|seen| Reply::Http {
        status: 500,
        content_type: "application/json",
        body: json!({"jsonrpc": "2.0", "id": seen.body["id"],
            "error": {"code": -32001, "message": "Task not found: t9"}})
        .to_string(),
    })
    .await;
    let client = A2AClient::from_endpoint(&base).unwrap();
    let err = client.get_task("t9").await.unwrap_err();
    assert_eq!(err.code(), Some(-32001));
    assert!(matches!(
        err,
        ClientError::Protocol(A2AError::TaskNotFound(_))
    ));
    assert!(err.to_string().contains("-32001"), "{err}");
}

#[tokio::test]
async fn unknown_rpc_codes_are_not_lost() {
    let (base, _) = serve(|seen| {
        json_reply(json!({"jsonrpc": "2.0", "id": seen.body["id"],
            "error": {"code": -32000, "message": "custom failure"}}))
    })
    .await;
    let err = A2AClient::from_endpoint(&base)
        .unwrap()
        .get_task("x")
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("custom failure") && text.contains("-32000"),
        "{text}"
    );
}

#[tokio::test]
async fn http_errors_and_bad_bodies() {
    let (base, _) = serve(|seen| match seen.target.as_str() {
        "/404" => Reply::Http {
            status: 404,
            content_type: "text/html",
            body: "<h1>nope</h1>".into(),
        },
        "/garbage" => Reply::Http {
            status: 200,
            content_type: "application/json",
            body: "{not json".into(),
        },
        "/wrong-id" => json_reply(json!({"jsonrpc": "2.0", "id": "other", "result": {}})),
        "/wrong-shape" => {
            json_reply(json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {"id": 5}}))
        }
        _ => json_reply(json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": null})),
    })
    .await;
    let at = |p: &str| A2AClient::from_endpoint(&format!("{base}{p}")).unwrap();

    match at("/404").get_task("x").await.unwrap_err() {
        ClientError::Http { status, body } => {
            assert_eq!(status, 404);
            assert!(body.contains("nope"));
        }
        other => panic!("{other:?}"),
    }
    for path in ["/garbage", "/wrong-id", "/wrong-shape"] {
        let err = at(path).get_task("x").await.unwrap_err();
        assert!(matches!(err, ClientError::Decode(_)), "{path}: {err:?}");
        assert_eq!(err.code(), None);
    }
    // DeleteTaskPushNotificationConfig returns `"result": null`.
    at("/null").delete_push_config(("t", "c")).await.unwrap();
}

#[tokio::test]
async fn transport_failures_and_timeouts() {
    // A port with nothing listening.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let err = A2AClient::from_endpoint(&format!("http://127.0.0.1:{port}/"))
        .unwrap()
        .get_task("x")
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err:?}");

    let (base, _) = serve(|_| Reply::Hang).await;
    let client = A2AClient::builder()
        .timeout(Duration::from_millis(300))
        .from_endpoint(&base)
        .unwrap();
    let err = client.get_task("x").await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    let err = client.subscribe_to_task("x").await.err().unwrap();
    assert!(err.is_timeout(), "{err:?}");
}

fn frame(id: &Value, result: Value) -> String {
    format!(
        "data: {}\n\n",
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    )
}

#[tokio::test]
async fn sse_events_ids_and_error_frames() {
    let (base, log) = serve(|seen| {
        let id = &seen.body["id"];
        let mut body = String::from(": keep-alive\n\n");
        body.push_str("id: 1\n");
        body.push_str(&frame(
            id,
            json!({"task": task_json("t1", "TASK_STATE_SUBMITTED")}),
        ));
        body.push_str("id: 2\n");
        body.push_str(&frame(
            id,
            json!({"statusUpdate": {"taskId": "t1", "contextId": "ctx",
            "status": {"state": "TASK_STATE_WORKING"}}}),
        ));
        body.push_str(&format!(
            "event: error\ndata: {}\n\n",
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "boom"}})
        ));
        // Anything after the error is ignored.
        body.push_str(&frame(
            id,
            json!({"task": task_json("t1", "TASK_STATE_COMPLETED")}),
        ));
        sse_reply(&body)
    })
    .await;
    let client = A2AClient::from_endpoint(&base).unwrap();
    let items = stream_hi(&client).await;
    assert_eq!(items.len(), 3, "{items:?}");
    let first = items[0].as_ref().unwrap();
    assert_eq!(first.seq, Some(1));
    assert!(matches!(first.event, StreamResponse::Task(_)));
    let second = items[1].as_ref().unwrap();
    assert_eq!(second.seq, Some(2));
    assert_eq!(second.event.state(), Some(TaskState::Working));
    let err = items[2].as_ref().unwrap_err();
    assert_eq!(err.code(), Some(-32603), "{err}");

    let seen = log.lock().unwrap().clone();
    assert_eq!(seen[0].body["method"], "SendStreamingMessage");
    assert_eq!(seen[0].header("accept"), Some("text/event-stream"));
    assert_eq!(seen[0].header("a2a-version"), Some("1.0"));
    assert_eq!(seen[0].body["params"]["message"]["role"], "ROLE_USER");
}

#[tokio::test]
async fn sse_error_member_and_bad_events_end_the_stream() {
    let (base, _) = serve(|seen| {
        let id = &seen.body["id"];
        match seen.body["params"]["id"].as_str() {
            Some("rpc-error") => sse_reply(&format!(
                "{}data: {}\n\n{}",
                frame(
                    id,
                    json!({"task": task_json("rpc-error", "TASK_STATE_WORKING")})
                ),
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": "gone"}}),
                frame(
                    id,
                    json!({"task": task_json("rpc-error", "TASK_STATE_WORKING")})
                ),
            )),
            Some("bad-json") => sse_reply("data: {oops\n\ndata: {}\n\n"),
            Some("bad-shape") => sse_reply(&frame(id, json!({"nothing": 1}))),
            Some("multi-line") => {
                let json = json!({"jsonrpc": "2.0", "id": id,
                    "result": {"task": task_json("multi-line", "TASK_STATE_WORKING")}})
                .to_string();
                // A JSON document split over two `data:` lines (between
                // tokens, where the joining newline is whitespace).
                let (a, b) = json.split_at(json.find(',').unwrap() + 1);
                sse_reply(&format!("data: {a}\ndata: {b}\n\n"))
            }
            _ => json_reply(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32004, "message": "terminal"}})),
        }
    })
    .await;
    let client = A2AClient::from_endpoint(&base).unwrap();
    let run = |id: &'static str| {
        let client = client.clone();
        async move {
            client
                .subscribe_to_task(id)
                .await
                .unwrap()
                .collect::<Vec<_>>()
                .await
        }
    };

    let items = run("rpc-error").await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[1].as_ref().unwrap_err().code(), Some(-32001));

    let items = run("bad-json").await;
    assert_eq!(items.len(), 1);
    assert!(matches!(items[0], Err(ClientError::Decode(_))), "{items:?}");

    let items = run("bad-shape").await;
    assert_eq!(items.len(), 1);
    assert!(matches!(items[0], Err(ClientError::Decode(_))), "{items:?}");

    let items = run("multi-line").await;
    assert_eq!(items.len(), 1);
    assert!(items[0].is_ok(), "{items:?}");

    // A JSON error instead of a stream fails the call itself.
    let err = client.subscribe_to_task("other").await.err().unwrap();
    assert_eq!(err.code(), Some(-32004));
}

/// Collects what a tap sees.
#[derive(Debug, Default)]
struct Recorder(std::sync::Mutex<Vec<switchboard_client::WireFrame>>);

impl switchboard_client::WireTap for Recorder {
    fn record(&self, frame: switchboard_client::WireFrame) {
        self.0.lock().unwrap().push(frame);
    }
}

#[tokio::test]
async fn a_tap_sees_each_calls_request_answer_events_and_errors() {
    use switchboard_client::FrameKind;
    let (base, _log) = serve(|seen| {
        let id = &seen.body["id"];
        match seen.body["method"].as_str() {
            Some("GetTask") => json_reply(json!({"jsonrpc": "2.0", "id": id, "result": task_json("t1", "TASK_STATE_WORKING")})),
            Some("CancelTask") => json_reply(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32002, "message": "not cancelable"}})),
            _ => {
                let mut body = String::from("id: 1\n");
                body.push_str(&frame(id, json!({"task": task_json("t1", "TASK_STATE_SUBMITTED")})));
                body.push_str("id: 2\n");
                body.push_str(&frame(id, json!({"statusUpdate": {"taskId": "t1", "contextId": "ctx",
                    "status": {"state": "TASK_STATE_COMPLETED"}}})));
                sse_reply(&body)
            }
        }
    })
    .await;
    let tap = std::sync::Arc::new(Recorder::default());
    let client = A2AClient::builder()
        .tap(tap.clone())
        .no_reconnect()
        .from_endpoint(&base)
        .unwrap();
    client.get_task("t1").await.unwrap();
    client.cancel_task("t1").await.unwrap_err();
    let events = stream_hi(&client).await;
    assert_eq!(events.len(), 2);

    let frames = tap.0.lock().unwrap().clone();
    let seen: Vec<(u64, &str, FrameKind, Option<u64>)> = frames
        .iter()
        .map(|f| (f.call, f.operation, f.kind, f.seq))
        .collect();
    assert_eq!(
        seen,
        [
            (1, "GetTask", FrameKind::Request, None),
            (1, "GetTask", FrameKind::Response, None),
            (2, "CancelTask", FrameKind::Request, None),
            (2, "CancelTask", FrameKind::Error, None),
            (3, "SendStreamingMessage", FrameKind::Request, None),
            (3, "SendStreamingMessage", FrameKind::Event, Some(1)),
            (3, "SendStreamingMessage", FrameKind::Event, Some(2)),
        ]
    );
    // Bodies are the 1.0 JSON of the objects, not the binding's envelope.
    assert_eq!(
        serde_json::from_str::<Value>(&frames[0].body).unwrap(),
        json!({"id": "t1"})
    );
    let answer: Value = serde_json::from_str(&frames[1].body).unwrap();
    assert_eq!(answer["id"], "t1");
    assert!(
        frames[3].body.contains("not cancelable"),
        "{}",
        frames[3].body
    );
    let event: Value = serde_json::from_str(&frames[6].body).unwrap();
    assert_eq!(
        event["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}
