//! Random bodies and headers against the JSON-RPC endpoint: never a panic,
//! never a 5xx, always a JSON-RPC response with the spec's codes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::body::Body;
use common::{CODES, echo_server, send};
use http::Request;
use proptest::prelude::*;
use serde_json::{Value, json};

fn router() -> axum::Router {
    echo_server().router()
}

async fn post(
    router: axum::Router,
    body: Vec<u8>,
    content_type: &str,
    version: Option<&str>,
) -> (u16, Value) {
    let mut req = Request::post("/").header("content-type", content_type);
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    // A stream's frames are JSON-RPC responses each: the first stands for all.
    let a = send(router, req.body(Body::from(body)).unwrap()).await;
    (a.status, a.first_json())
}

fn check(status: u16, v: &Value) -> Result<(), TestCaseError> {
    prop_assert!(status == 200 || status == 413, "status {status}: {v}");
    prop_assert_eq!(&v["jsonrpc"], "2.0");
    if let Some(err) = v.get("error") {
        let code = err["code"].as_i64().unwrap();
        prop_assert!(CODES.contains(&code), "unexpected code {code}");
        prop_assert!(err["message"].is_string());
        prop_assert_eq!(&err["data"][0]["domain"], "a2a-protocol.org");
    } else {
        prop_assert!(v.get("result").is_some());
    }
    Ok(())
}

/// The 1.0 method names, as method names and as random values.
const METHODS: [&str; 7] = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "GetExtendedAgentCard",
];

/// Random JSON in the 1.0 JSON-RPC vocabulary.
fn arb_json() -> impl Strategy<Value = Value> {
    let words = [
        &METHODS[..],
        &["ROLE_USER", "TASK_STATE_WORKING", "2.0", "hi"],
    ]
    .concat();
    let keys = vec![
        "jsonrpc",
        "id",
        "method",
        "params",
        "message",
        "messageId",
        "role",
        "parts",
        "text",
        "data",
        "configuration",
        "historyLength",
        "returnImmediately",
        "taskId",
        "contextId",
        "pageSize",
    ];
    common::arb_json(words, keys)
}

/// Requests shaped like real calls, with random parts swapped in.
fn arb_call() -> impl Strategy<Value = Value> {
    let method = prop::sample::select(
        [&METHODS[..], &["CreateTaskPushNotificationConfig", "Nope"]].concat(),
    );
    (method, arb_json(), any::<bool>()).prop_map(|(m, params, valid_msg)| {
        let params = if valid_msg {
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}, "id": params})
        } else {
            params
        };
        json!({"jsonrpc": "2.0", "id": 1, "method": m, "params": params})
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(body in prop::collection::vec(any::<u8>(), 0..512)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (status, v) = rt.block_on(post(router(), body, "application/json", Some("1.0")));
        check(status, &v)?;
    }

    #[test]
    fn random_json(v in arb_json(), version in prop::sample::select(vec![Some("1.0"), None, Some("0.3"), Some("x")])) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (status, resp) = rt.block_on(post(router(), serde_json::to_vec(&v).unwrap(), "application/json", version));
        check(status, &resp)?;
    }

    #[test]
    fn random_calls(call in arb_call(), ct in prop::sample::select(vec!["application/json", "application/a2a+json; charset=utf-8", "text/plain"])) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (status, resp) = rt.block_on(post(router(), serde_json::to_vec(&call).unwrap(), ct, Some("1.0")));
        check(status, &resp)?;
        if ct == "text/plain" {
            prop_assert_eq!(resp["error"]["code"].as_i64(), Some(-32005));
        }
    }
}

#[tokio::test]
async fn oversize_is_413_with_a_jsonrpc_error() {
    let big = vec![b' '; 65 * 1024];
    let (status, v) = post(router(), big, "application/json", Some("1.0")).await;
    assert_eq!(status, 413);
    assert_eq!(v["error"]["code"], -32600);
}
