//! Random 0.3 calls against both 0.3 dialects: never a panic, never a 5xx,
//! every answer a well-formed success or an error with the spec's code
//! (JSON-RPC) or a Google error with an ErrorInfo reason (REST `/v1`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::body::Body;
use common::{CODES, echo_server};
use http::Request;
use proptest::prelude::*;
use serde_json::{Value, json};

async fn send(req: Request<Body>) -> (u16, String, Value) {
    let a = common::send(echo_server().router(), req).await;
    let v = a.first_json();
    (a.status, a.content_type, v)
}

/// Random JSON in the 0.3 vocabulary (part kinds, roles, field names).
fn arb_json() -> impl Strategy<Value = Value> {
    let words = vec![
        "text",
        "file",
        "data",
        "message",
        "user",
        "agent",
        "AA==",
        "https://x/y",
    ];
    let keys = vec![
        "kind",
        "messageId",
        "role",
        "parts",
        "content",
        "text",
        "file",
        "bytes",
        "uri",
        "fileWithBytes",
        "fileWithUri",
        "data",
        "message",
        "request",
        "configuration",
        "blocking",
        "historyLength",
        "id",
        "taskId",
        "pushNotificationConfig",
        "pushNotificationConfigId",
        "url",
        "config",
        "authentication",
        "schemes",
    ];
    common::arb_json(words, keys)
}

/// Every 0.3 JSON-RPC method, from the operation table.
fn v03_methods() -> Vec<&'static str> {
    switchboard_protocol::Operation::ALL
        .iter()
        .filter_map(|op| op.v03_name())
        .collect()
}

/// 0.3 message params with a random part (or wholly random params).
fn arb_params() -> impl Strategy<Value = Value> {
    prop_oneof![
        arb_json().prop_map(
            |part| json!({"message": {"kind": "message", "messageId": "m",
            "role": "user", "parts": [part]}})
        ),
        arb_json(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn random_03_jsonrpc_calls(
        method in prop::sample::select(v03_methods()),
        params in arb_params(),
        version in prop::sample::select(vec![None, Some("0.3"), Some("1.0"), Some("9")]),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut req = Request::post("/").header("content-type", "application/json");
        if let Some(v) = version {
            req = req.header("A2A-Version", v);
        }
        let (status, _, v) = rt.block_on(send(req.body(Body::from(body.to_string())).unwrap()));
        prop_assert_eq!(status, 200);
        prop_assert_eq!(&v["jsonrpc"], "2.0");
        if let Some(err) = v.get("error") {
            let code = err["code"].as_i64().unwrap();
            prop_assert!(CODES.contains(&code), "unexpected code {}", code);
            if version == Some("9") {
                // The envelope is checked before the version.
                prop_assert!(code == -32009 || code == -32600, "code {}", code);
            }
        } else {
            prop_assert!(version != Some("9"));
            prop_assert!(v.get("result").is_some());
        }
    }

    #[test]
    fn random_03_rest_requests(
        route in prop::sample::select(vec![
            ("POST", "/v1/message:send"), ("POST", "/v1/message:stream"),
            ("GET", "/v1/tasks/t1"), ("POST", "/v1/tasks/t1:cancel"),
            ("GET", "/v1/tasks/t1:subscribe"), ("POST", "/v1/tasks/t1/pushNotificationConfigs"),
            ("GET", "/v1/tasks/t1/pushNotificationConfigs"), ("DELETE", "/v1/tasks/t1/pushNotificationConfigs/c"),
            ("GET", "/v1/card"), ("GET", "/v1/tasks"), ("PUT", "/v1/message:send"),
            ("POST", "/acme/v1/message:send"),
        ]),
        body in prop_oneof![
            arb_json().prop_map(|part| json!({"message": {"messageId": "m", "role": "ROLE_USER", "content": [part]}})),
            arb_json(),
        ],
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let req = Request::builder()
            .method(route.0)
            .uri(route.1)
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        let (status, ct, v) = rt.block_on(send(req));
        prop_assert!(status < 500, "status {} for {:?}: {}", status, route, v);
        if status >= 400 {
            prop_assert!(ct.starts_with("application/json"));
            prop_assert!(v["error"]["details"][0]["reason"].is_string(), "{}", v);
        }
    }
}
