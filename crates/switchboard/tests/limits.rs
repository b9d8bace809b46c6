//! Issue 21 item 6: every request limit of the engine hit once, over
//! JSON-RPC (-32602 InvalidParams) and REST (HTTP 400), each followed by a
//! normal request that still works; and the default history length of
//! GetTask and ListTasks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use serde_json::{Value, json};
use switchboard::demo::{DemoAgent, demo_card};
use switchboard_core::{HandlerConfig, Limits, RequestHandler};
use util::*;

fn limits() -> Limits {
    Limits {
        max_id_bytes: 64,
        max_parts_per_message: 3,
        max_part_bytes: 1000,
        max_message_bytes: 2500,
        max_metadata_bytes: 500,
        default_history_length: 1,
    }
}

async fn server() -> TestServer {
    let handler = RequestHandler::builder(DemoAgent::default(), demo_card())
        .config(HandlerConfig {
            limits: limits(),
            ..HandlerConfig::default()
        })
        .build();
    TestServer::start(handler).await
}

/// A message over each limit, and the field its error names.
fn over_the_limits() -> Vec<(&'static str, Value, &'static str)> {
    let long = "x".repeat(65);
    let msg = |extra: Value| {
        let mut m = json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": "hi"}]});
        for (k, v) in extra.as_object().into_iter().flatten() {
            m[k] = v.clone();
        }
        json!({ "message": m })
    };
    vec![
        (
            "messageId length",
            msg(json!({"messageId": long})),
            "message.messageId",
        ),
        (
            "contextId length",
            msg(json!({"contextId": long})),
            "message.contextId",
        ),
        (
            "taskId length",
            msg(json!({"taskId": long})),
            "message.taskId",
        ),
        (
            "parts per message",
            msg(json!({"parts": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]})),
            "message.parts",
        ),
        (
            "part size",
            msg(json!({"parts": [{"text": "y".repeat(1001)}]})),
            "message.parts[0]",
        ),
        (
            "message size",
            msg(
                json!({"parts": [{"text": "y".repeat(900)}, {"text": "y".repeat(900)}, {"text": "y".repeat(900)}]}),
            ),
            "message",
        ),
        (
            "message metadata",
            msg(json!({"metadata": {"k": "z".repeat(501)}})),
            "message.metadata",
        ),
        (
            "part metadata",
            msg(json!({"parts": [{"text": "a", "metadata": {"k": "z".repeat(501)}}]})),
            "message.parts[0].metadata",
        ),
        (
            "request metadata",
            {
                let mut m = msg(json!({}));
                m["metadata"] = json!({"k": "z".repeat(501)});
                m
            },
            "metadata",
        ),
    ]
}

#[tokio::test]
async fn each_limit_is_invalid_params_on_jsonrpc_and_the_server_keeps_serving() {
    let s = server().await;
    for (name, params, field) in over_the_limits() {
        let v = s.rpc("SendMessage", params).await;
        assert_eq!(err_code(&v), -32602, "{name}: {v}");
        assert!(
            v.to_string().contains(field),
            "{name}: the error names {field}: {v}"
        );
        let ok = s
            .rpc("SendMessage", json!({"message": user_msg("still here")}))
            .await;
        assert!(ok.get("result").is_some(), "{name}: then {ok}");
    }
    // An id too long to be a task of this server, on GetTask and ListTasks.
    let v = s.rpc("GetTask", json!({"id": "t".repeat(65)})).await;
    assert_eq!(err_code(&v), -32602, "{v}");
    let v = s
        .rpc("ListTasks", json!({"contextId": "c".repeat(65)}))
        .await;
    assert_eq!(err_code(&v), -32602, "{v}");
    println!("{} limits hit over JSON-RPC", over_the_limits().len() + 2);
    s.stop().await;
}

#[tokio::test]
async fn each_limit_is_400_on_rest_and_the_server_keeps_serving() {
    let s = server().await;
    let post = |params: Value| {
        s.http
            .post(format!("{}/message:send", s.base))
            .header("A2A-Version", "1.0")
            .json(&params)
            .send()
    };
    for (name, params, field) in over_the_limits() {
        let resp = post(params).await.unwrap();
        assert_eq!(resp.status(), 400, "{name}");
        let body = resp.text().await.unwrap();
        assert!(body.contains(field), "{name}: {body}");
        let ok = post(json!({"message": user_msg("still here")}))
            .await
            .unwrap();
        assert_eq!(
            ok.status(),
            200,
            "{name}: then {}",
            ok.text().await.unwrap()
        );
    }
    s.stop().await;
}

#[tokio::test]
async fn get_and_list_return_the_default_history_unless_asked() {
    let s = server().await;
    let v = s
        .rpc(
            "SendMessage",
            json!({"message": user_msg("hello"), "configuration": {"historyLength": 100}}),
        )
        .await;
    let task = &result(&v)["task"];
    let full = task["history"].as_array().map_or(0, Vec::len);
    assert!(full >= 1, "{task}");
    let id = task["id"].as_str().unwrap();
    let got = s.rpc("GetTask", json!({"id": id})).await;
    let history = |t: &Value| t["history"].as_array().map_or(0, Vec::len);
    assert_eq!(history(result(&got)), 1.min(full), "{got}");
    let got = s
        .rpc("GetTask", json!({"id": id, "historyLength": 100}))
        .await;
    assert_eq!(history(result(&got)), full, "asked for: {got}");
    let listed = s.rpc("ListTasks", json!({})).await;
    for t in result(&listed)["tasks"].as_array().unwrap() {
        assert!(history(t) <= 1, "{t}");
    }
    println!("history: {full} stored, 1 returned by default");
    s.stop().await;
}
