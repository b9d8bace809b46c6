//! `google.rpc.ErrorInfo.metadata.taskId` is the task id, exactly, on every
//! binding and version: for each error that names a task (TaskNotFound from
//! GetTask, SubscribeToTask and a missing push config, TaskNotCancelable from
//! cancelling a finished task), over JSON-RPC, REST and gRPC, A2A 1.0 and
//! 0.3. The server is wired with `A2aServer::push` on a handler built without
//! push, so the push-config error also shows that call enabling push.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use switchboard_core::RequestHandler;
use switchboard_proto::v1 as pb;
use switchboard_proto::v03 as pb03;
use switchboard_runtimes::builtin::{DemoAgent, demo_card};
use switchboard_server::push::PushOptions;
use tonic_types::StatusExt;
use util::{TestServer, result};

async fn server() -> TestServer {
    let handler = RequestHandler::builder(
        DemoAgent {
            chunk_delay: Duration::ZERO,
        },
        demo_card(),
    )
    .build();
    TestServer::start_with(|s| s.push(PushOptions::new()).unwrap(), handler).await
}

/// The ErrorInfo of a JSON error body: JSON-RPC `error.data` or the REST
/// `error.details`.
fn error_info(body: &Value) -> &Value {
    let details = body["error"]["data"]
        .as_array()
        .or_else(|| body["error"]["details"].as_array())
        .unwrap_or_else(|| panic!("no error details in {body}"));
    details
        .iter()
        .find(|d| d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
        .unwrap_or_else(|| panic!("no ErrorInfo in {body}"))
}

/// Asserts the ErrorInfo's reason and that `metadata.taskId` is `task_id`.
fn assert_json(what: &str, body: &Value, reason: &str, task_id: &str) {
    let info = error_info(body);
    assert_eq!(info["reason"], reason, "{what}: {body}");
    assert_eq!(info["metadata"]["taskId"], task_id, "{what}: {body}");
}

fn assert_grpc(what: &str, st: &tonic::Status, reason: &str, task_id: &str) {
    let info = st
        .get_details_error_info()
        .unwrap_or_else(|| panic!("{what}: no ErrorInfo in {st:?}"));
    assert_eq!(info.reason, reason, "{what}: {st:?}");
    assert_eq!(
        info.metadata.get("taskId").map(String::as_str),
        Some(task_id),
        "{what}: {st:?}"
    );
}

/// A JSON-RPC call in the 0.3 dialect (no `A2A-Version`, as 0.3 clients send it).
async fn rpc03(s: &TestServer, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params});
    s.post_json(&body.to_string(), &[]).await.1
}

/// The one event of a 0.3 stream that failed before it began.
async fn stream03_error(s: &TestServer, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": method, "params": params});
    let call = s.sse_post(&body, &[]).await;
    assert!(call.content_type().starts_with("text/event-stream"));
    let frames = call.collect().await;
    assert_eq!(frames.len(), 1, "{frames:?}");
    frames[0].data.clone()
}

async fn rest(s: &TestServer, method: reqwest::Method, path: &str, v1: bool) -> Value {
    let mut req = s.http.request(method, format!("{}{path}", s.base));
    if v1 {
        req = req.header("A2A-Version", "1.0");
    }
    let resp = req.send().await.unwrap();
    assert!(resp.status().is_client_error(), "{path}: {}", resp.status());
    resp.json().await.unwrap()
}

/// The error status of a gRPC stream that must fail: before the stream,
/// or as its first item.
async fn stream_error<T: std::fmt::Debug>(
    opened: Result<tonic::Response<tonic::Streaming<T>>, tonic::Status>,
) -> tonic::Status {
    match opened {
        Err(st) => st,
        Ok(stream) => stream.into_inner().next().await.unwrap().unwrap_err(),
    }
}

fn v1<T>(body: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(body);
    r.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_info_task_id_is_the_task_id_on_every_binding() {
    let s = server().await;
    // A finished task: cannot be cancelled, and has no push config "nope".
    let done = result(
        &s.rpc_send_configured("hello", json!({"returnImmediately": false}))
            .await,
    )["task"]
        .clone();
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    let done = done["id"].as_str().unwrap().to_string();
    let unknown = "no-such-task";
    const NOT_FOUND: &str = "TASK_NOT_FOUND";
    const NOT_CANCELABLE: &str = "TASK_NOT_CANCELABLE";

    // JSON-RPC, A2A 1.0.
    let v = s.rpc("GetTask", json!({"id": unknown})).await;
    assert_json("jsonrpc GetTask", &v, NOT_FOUND, unknown);
    let v = s.rpc("SubscribeToTask", json!({"id": unknown})).await;
    assert_json("jsonrpc SubscribeToTask", &v, NOT_FOUND, unknown);
    let v = s
        .rpc(
            "GetTaskPushNotificationConfig",
            json!({"taskId": done, "id": "nope"}),
        )
        .await;
    assert_json(
        "jsonrpc GetTaskPushNotificationConfig",
        &v,
        NOT_FOUND,
        &done,
    );
    let v = s.rpc("CancelTask", json!({"id": done})).await;
    assert_json("jsonrpc CancelTask", &v, NOT_CANCELABLE, &done);

    // JSON-RPC, A2A 0.3.
    let v = rpc03(&s, "tasks/get", json!({"id": unknown})).await;
    assert_json("jsonrpc 0.3 tasks/get", &v, NOT_FOUND, unknown);
    let v = stream03_error(&s, "tasks/resubscribe", json!({"id": unknown})).await;
    assert_json("jsonrpc 0.3 tasks/resubscribe", &v, NOT_FOUND, unknown);
    let v = rpc03(
        &s,
        "tasks/pushNotificationConfig/get",
        json!({"id": done, "pushNotificationConfigId": "nope"}),
    )
    .await;
    assert_json("jsonrpc 0.3 push config get", &v, NOT_FOUND, &done);
    let v = rpc03(&s, "tasks/cancel", json!({"id": done})).await;
    assert_json("jsonrpc 0.3 tasks/cancel", &v, NOT_CANCELABLE, &done);

    // REST, A2A 1.0 and 0.3 (`/v1`).
    use reqwest::Method;
    for (prefix, v1) in [("", true), ("/v1", false)] {
        // (operation, method, path, reason, the task it names)
        let cases = [
            (
                "get",
                Method::GET,
                format!("{prefix}/tasks/{unknown}"),
                NOT_FOUND,
                unknown,
            ),
            (
                "subscribe",
                Method::GET,
                format!("{prefix}/tasks/{unknown}:subscribe"),
                NOT_FOUND,
                unknown,
            ),
            (
                "push config get",
                Method::GET,
                format!("{prefix}/tasks/{done}/pushNotificationConfigs/nope"),
                NOT_FOUND,
                done.as_str(),
            ),
            (
                "cancel",
                Method::POST,
                format!("{prefix}/tasks/{done}:cancel"),
                NOT_CANCELABLE,
                done.as_str(),
            ),
        ];
        for (op, method, path, reason, task_id) in cases {
            let v = rest(&s, method, &path, v1).await;
            assert_json(&format!("rest{prefix} {op}"), &v, reason, task_id);
        }
    }

    // gRPC, A2A 1.0.
    let mut g = pb::a2a_service_client::A2aServiceClient::connect(s.base.clone())
        .await
        .unwrap();
    let st = g
        .get_task(v1(pb::GetTaskRequest {
            id: unknown.into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_grpc("grpc GetTask", &st, NOT_FOUND, unknown);
    let st = stream_error(
        g.subscribe_to_task(v1(pb::SubscribeToTaskRequest {
            id: unknown.into(),
            ..Default::default()
        }))
        .await,
    )
    .await;
    assert_grpc("grpc SubscribeToTask", &st, NOT_FOUND, unknown);
    let st = g
        .get_task_push_notification_config(v1(pb::GetTaskPushNotificationConfigRequest {
            task_id: done.clone(),
            id: "nope".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_grpc("grpc GetTaskPushNotificationConfig", &st, NOT_FOUND, &done);
    let st = g
        .cancel_task(v1(pb::CancelTaskRequest {
            id: done.clone(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_grpc("grpc CancelTask", &st, NOT_CANCELABLE, &done);

    // gRPC, A2A 0.3 (`a2a.v1.A2AService`, names instead of ids).
    let mut g = pb03::a2a_service_client::A2aServiceClient::connect(s.base.clone())
        .await
        .unwrap();
    let st = g
        .get_task(pb03::GetTaskRequest {
            name: format!("tasks/{unknown}"),
            history_length: 0,
        })
        .await
        .unwrap_err();
    assert_grpc("grpc 0.3 GetTask", &st, NOT_FOUND, unknown);
    let st = stream_error(
        g.task_subscription(pb03::TaskSubscriptionRequest {
            name: format!("tasks/{unknown}"),
        })
        .await,
    )
    .await;
    assert_grpc("grpc 0.3 TaskSubscription", &st, NOT_FOUND, unknown);
    let st = g
        .get_task_push_notification_config(pb03::GetTaskPushNotificationConfigRequest {
            name: format!("tasks/{done}/pushNotificationConfigs/nope"),
        })
        .await
        .unwrap_err();
    assert_grpc("grpc 0.3 push config get", &st, NOT_FOUND, &done);
    let st = g
        .cancel_task(pb03::CancelTaskRequest {
            name: format!("tasks/{done}"),
        })
        .await
        .unwrap_err();
    assert_grpc("grpc 0.3 CancelTask", &st, NOT_CANCELABLE, &done);

    s.stop().await;
}
