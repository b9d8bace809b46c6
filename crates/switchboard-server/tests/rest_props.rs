//! Random paths, methods, queries, headers and bodies against the REST
//! routes, in-process through `tower::ServiceExt::oneshot`.
//!
//! The property: the router never panics and never answers 5xx (the only
//! documented 5xx is 500 INTERNAL for an internal failure, which this echo
//! agent on the in-memory store cannot produce), and every answer is either
//! a success (JSON or SSE) or a Google API error body whose `code` equals
//! the HTTP status and whose first detail is an A2A `ErrorInfo`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::body::Body;
use common::{Answer, echo_server, send};
use http::Request;
use proptest::prelude::*;
use serde_json::{Value, json};
use switchboard_protocol::A2AError;
use switchboard_server::ErrorTable;

fn router(table: ErrorTable) -> axum::Router {
    echo_server().error_table(table).router()
}

/// Whether `reason` is one this server may answer with: any A2A error's
/// but those of authentication and quotas (this server checks neither).
fn expected_reason(reason: &str) -> bool {
    const NEVER: [&str; 3] = ["UNAUTHENTICATED", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED"];
    A2AError::REASONS.contains(&reason) && !NEVER.contains(&reason)
}

const STATUSES: [&str; 5] = [
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "FAILED_PRECONDITION",
    "UNIMPLEMENTED",
    "INTERNAL",
];

fn check(a: &Answer) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(&a.body).into_owned();
    prop_assert!(a.status < 500, "status {}: {}", a.status, text);
    if a.content_type.starts_with("text/event-stream") {
        prop_assert_eq!(a.status, 200);
        // Every data line is JSON: a StreamResponse, or a Google error
        // after `event: error`.
        let mut error_event = false;
        for line in text.lines() {
            if line == "event: error" {
                error_event = true;
            }
            if let Some(data) = line.strip_prefix("data: ") {
                let v: Value = serde_json::from_str(data).unwrap();
                if error_event {
                    check_error_body(&v, v["error"]["code"].as_u64().unwrap_or(0) as u16)?;
                } else {
                    prop_assert!(v.is_object() && v.get("error").is_none(), "{}", data);
                }
            }
        }
        return Ok(());
    }
    prop_assert!(
        a.content_type.starts_with("application/json"),
        "content type {:?}: {}",
        a.content_type,
        text
    );
    let v: Value =
        serde_json::from_slice(&a.body).unwrap_or_else(|e| panic!("non-JSON body ({e}): {text}"));
    if (200..300).contains(&a.status) {
        prop_assert!(v.get("error").is_none(), "{}", v);
        return Ok(());
    }
    check_error_body(&v, a.status)
}

fn check_error_body(v: &Value, status: u16) -> Result<(), TestCaseError> {
    let e = &v["error"];
    prop_assert_eq!(e["code"].as_u64(), Some(u64::from(status)), "{}", v);
    prop_assert!(
        STATUSES.contains(&e["status"].as_str().unwrap_or("")),
        "{}",
        v
    );
    prop_assert!(e["message"].is_string(), "{}", v);
    let info = &e["details"][0];
    prop_assert_eq!(&info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
    prop_assert_eq!(&info["domain"], "a2a-protocol.org");
    prop_assert!(
        expected_reason(info["reason"].as_str().unwrap_or("")),
        "{}",
        v
    );
    Ok(())
}

/// Path segments: route names, ids, verbs, tenants, junk and escapes.
fn arb_segment() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "message:send",
            "message:stream",
            "tasks",
            "extendedAgentCard",
            "pushNotificationConfigs",
            "t1:cancel",
            "t1:subscribe",
            "t1",
            "acme",
            "v1",
            "%3A",
            "%ff",
            "%zz",
            "a%2Fb",
            ":cancel",
            "message",
            ".well-known",
        ])
        .prop_map(String::from),
        "[a-zA-Z0-9:._~%-]{0,8}",
    ]
}

fn arb_random_path() -> impl Strategy<Value = String> {
    (prop::collection::vec(arb_segment(), 1..6), any::<bool>()).prop_map(|(segs, trailing)| {
        let mut p = format!("/{}", segs.join("/"));
        if trailing {
            p.push('/');
        }
        p
    })
}

/// A real route shape, with an optional tenant and random ids.
fn arb_route_path() -> impl Strategy<Value = String> {
    let tenant = prop::sample::select(vec!["", "/acme", "/tasks", "/a%2Fb", "/%ff", "/v1"]);
    let template = prop::sample::select(vec![
        "/message:send",
        "/message:stream",
        "/tasks",
        "/tasks/{id}",
        "/tasks/{id}:cancel",
        "/tasks/{id}:subscribe",
        "/tasks/{id}/pushNotificationConfigs",
        "/tasks/{id}/pushNotificationConfigs/{id}",
        "/extendedAgentCard",
    ]);
    (tenant, template, arb_segment())
        .prop_map(|(t, tpl, id)| format!("{t}{}", tpl.replace("{id}", &id)))
}

fn arb_path() -> impl Strategy<Value = String> {
    prop_oneof![1 => arb_random_path(), 3 => arb_route_path()]
}

fn arb_query() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "historyLength",
        "history_length",
        "pageSize",
        "pageToken",
        "contextId",
        "status",
        "statusTimestampAfter",
        "includeArtifacts",
        "A2A-Version",
        "x",
    ]);
    let value = prop_oneof![
        prop::sample::select(vec![
            "1",
            "0",
            "-1",
            "1000",
            "true",
            "false",
            "yes",
            "TASK_STATE_WORKING",
            "RUNNING",
            "2025-11-09T10:30:00Z",
            "yesterday",
            "1.0",
            "%ff",
            "a+b",
        ])
        .prop_map(String::from),
        "[a-zA-Z0-9%+._-]{0,6}",
    ];
    prop::collection::vec((key, value), 0..4).prop_map(|pairs| {
        pairs
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    })
}

fn arb_body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        Just(b"{}".to_vec()),
        Just(
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}})
                .to_string()
                .into_bytes()
        ),
        Just(
            json!({"id": "other", "tenant": "x"})
                .to_string()
                .into_bytes()
        ),
        Just(
            json!({"url": "https://example.com/hook"})
                .to_string()
                .into_bytes()
        ),
        Just(b"[1,2]".to_vec()),
        Just(b"{\"message\": ".to_vec()),
        prop::collection::vec(any::<u8>(), 0..64),
    ]
}

fn build(
    method: &str,
    path: &str,
    query: &str,
    body: Vec<u8>,
    content_type: Option<&str>,
    version: Option<&str>,
) -> Option<Request<Body>> {
    let uri = if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    };
    let uri: http::Uri = uri.parse().ok()?;
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    req.body(Body::from(body)).ok()
}

/// A 1.0 POST with a body of `content_type`.
fn post(path: &str, body: Vec<u8>, content_type: &str) -> Request<Body> {
    build("POST", path, "", body, Some(content_type), Some("1.0")).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn random_rest_requests(
        method in prop::sample::select(vec!["GET", "GET", "POST", "POST", "DELETE", "PUT", "HEAD"]),
        path in arb_path(),
        query in arb_query(),
        body in arb_body(),
        content_type in prop::sample::select(vec![Some("application/json"), Some("application/json"), Some("application/a2a+json"), Some("text/plain"), None]),
        version in prop::sample::select(vec![Some("1.0"), Some("1.0"), Some("1"), None, Some("0.3"), Some("x")]),
        table in prop::sample::select(vec![ErrorTable::V1_0_1, ErrorTable::V1_0_0]),
    ) {
        let Some(req) = build(method, &path, &query, body, content_type, version) else {
            return Ok(());
        };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let a = rt.block_on(send(router(table), req));
        // The JSON-RPC endpoint and the card share the router; they are
        // covered by their own tests.
        if path == "/" || path.starts_with("/.well-known/agent-card.json") {
            return Ok(());
        }
        if method == "HEAD" {
            prop_assert!(a.status < 500);
            return Ok(());
        }
        check(&a)?;
    }
}

#[tokio::test]
async fn well_formed_calls_succeed_and_errors_carry_the_table_status() {
    let msg = json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}});
    let req = post(
        "/acme/message:send",
        msg.to_string().into_bytes(),
        "application/json",
    );
    let a = send(router(ErrorTable::default()), req).await;
    assert_eq!(a.status, 200);
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");

    let req = post("/message:send", msg.to_string().into_bytes(), "text/plain");
    let a = send(router(ErrorTable::V1_0_0), req).await;
    assert_eq!(a.status, 415);
    check(&a).unwrap();

    let big = vec![b' '; 65 * 1024];
    let req = post("/message:send", big, "application/json");
    let a = send(router(ErrorTable::default()), req).await;
    assert_eq!(a.status, 413);
    check(&a).unwrap();

    let req = post(
        "/message:stream",
        msg.to_string().into_bytes(),
        "application/json",
    );
    let a = send(router(ErrorTable::default()), req).await;
    assert!(a.content_type.starts_with("text/event-stream"));
    let text = String::from_utf8(a.body.clone()).unwrap();
    assert!(text.contains("id: 1\n"), "{text}");
    assert!(text.contains("\"statusUpdate\""), "{text}");
    check(&a).unwrap();
}
