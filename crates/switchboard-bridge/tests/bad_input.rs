//! Bad input and bad agents: every one ends the run with `RUN_ERROR` and a
//! clear message, never a hang.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use axum::routing::post;
use common::*;
use serde_json::json;
use switchboard_agui::events::{Event, EventKind};
use switchboard_bridge::RemoteBackend;
use switchboard_client::A2AClient;

#[tokio::test]
async fn a_body_that_is_not_json_is_a_run_error() {
    let (script, _, bridge) = setup().await;
    let answer = bridge
        .post("{not json".into(), "application/json", None)
        .await
        .verified_error();
    assert_eq!(answer.status, 200);
    // No ids can be read: the RUN_ERROR is the whole stream.
    assert_eq!(answer.types(), ["RUN_ERROR"]);
    answer.assert_run_error("bridge:invalid_input", "invalid RunAgentInput");
    assert!(script.received().is_empty());
}

#[tokio::test]
async fn a_json_body_that_is_not_a_run_agent_input_names_its_run() {
    let (_, _, bridge) = setup().await;
    let body = json!({"threadId": "t1", "runId": "r1", "messages": "nope"});
    let answer = bridge.run(&body).await.verified();
    assert_eq!(answer.types(), ["RUN_STARTED", "RUN_ERROR"]);
    let EventKind::RunStarted(started) = &answer.events[0].kind else {
        unreachable!()
    };
    assert_eq!(
        (started.thread_id.as_str(), started.run_id.as_str()),
        ("t1", "r1")
    );
    answer.assert_run_error("bridge:invalid_input", "messages: invalid type");
}

#[tokio::test]
async fn the_wrong_content_type_or_a_too_large_body_is_refused() {
    let (_, _, bridge) = setup().await;
    let body = input(json!([user("u1", "/text")]), json!({})).to_string();
    let answer = bridge.post(body, "text/plain", None).await;
    assert_eq!(answer.status, 415);
    let mut config = fast_config();
    config.body_limit = 64;
    let small = common::bridge(
        RemoteBackend::new(A2AClient::from_endpoint("http://127.0.0.1:9/").unwrap()),
        config,
    )
    .await;
    let body = input(json!([user("u1", &"x".repeat(200))]), json!({})).to_string();
    let answer = small
        .post(body, "application/json; charset=utf-8", None)
        .await;
    assert_eq!(answer.status, 413);
}

#[tokio::test]
async fn an_unknown_mode_is_a_run_error() {
    let (script, _, bridge) = setup().await;
    let answer = bridge.say("/text", json!({"a2a": {"mode": "poll"}})).await;
    assert_eq!(answer.types(), ["RUN_STARTED", "RUN_ERROR"]);
    answer.assert_run_error("bridge:invalid_options", "forwardedProps.a2a");
    assert!(script.received().is_empty());
}

#[tokio::test]
async fn a_task_of_another_context_is_a_run_error() {
    let (script, _, bridge) = setup().await;
    let first = bridge.say("/stream", json!({})).await;
    let task_id = task_id_in(first.state_snapshot().unwrap()).unwrap();
    // Another context of the same caller.
    let other = switchboard_bridge::Owner::of(switchboard_core::ANONYMOUS).new_context_id();
    let answer = bridge
        .run_verified(
            json!([user("u2", "more")]),
            json!({"a2a": {"taskId": task_id, "contextId": other}}),
        )
        .await;
    answer.assert_run_error("bridge:context_mismatch", &task_id);
    // A context that is not the caller's is not there at all.
    let answer = bridge
        .run_verified(
            json!([user("u2", "more")]),
            json!({"a2a": {"taskId": task_id, "contextId": "some-other-context"}}),
        )
        .await;
    answer.assert_run_error("bridge:unknown_context", "some-other-context");
    assert_eq!(script.received().len(), 1);
}

#[tokio::test]
async fn an_unknown_task_is_the_agents_error() {
    let (_, _, bridge) = setup().await;
    let answer = bridge
        .run_verified(json!([]), json!({"a2a": {"taskId": "no-such-task"}}))
        .await;
    let message = answer.run_error("bridge:agent_error");
    assert!(
        message.contains("-32001") || message.contains("no-such-task"),
        "{message}"
    );
}

#[tokio::test]
async fn nothing_to_send_is_a_run_error() {
    let (_, _, bridge) = setup().await;
    let answer = bridge.run_verified(json!([]), json!({})).await;
    answer.run_error("bridge:nothing_to_send");
}

#[tokio::test]
async fn an_agent_that_is_down_is_a_run_error_within_the_timeout() {
    // A port that was just free: nothing listens there.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let client = A2AClient::from_endpoint(&format!("http://127.0.0.1:{port}/")).unwrap();
    let bridge = common::bridge(RemoteBackend::new(client), fast_config()).await;
    let started = std::time::Instant::now();
    let answer = bridge.say("/text", json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    answer.run_error("bridge:agent_unavailable");
}

#[tokio::test]
async fn an_agent_answering_garbage_is_a_run_error() {
    let garbage = axum::Router::new()
        .route(
            "/json",
            post(|| async { axum::Json(json!({"hello": "world"})) }),
        )
        .route(
            "/html",
            post(|| async { axum::response::Html("<html><body>Welcome to nginx!</body></html>") }),
        );
    let addr = serve(garbage).await;
    for path in ["json", "html"] {
        let client = A2AClient::from_endpoint(&format!("http://{addr}/{path}")).unwrap();
        let bridge = common::bridge(RemoteBackend::new(client), fast_config()).await;
        for mode in ["stream", "send"] {
            let answer = bridge.say("/text", json!({"a2a": {"mode": mode}})).await;
            let (code, message) = answer.error().unwrap();
            assert_eq!(code, "bridge:agent_protocol", "{path} {mode}: {message}");
        }
    }
}

trait VerifiedError {
    fn verified_error(self) -> Self;
}

impl VerifiedError for Answer {
    /// A stream that is one RUN_ERROR (no ids to start a run with) passes
    /// the official client's rules too.
    fn verified_error(self) -> Self {
        switchboard_agui::Verifier::verify_all(&self.events).unwrap();
        assert!(self.events.last().is_some_and(Event::ends_run));
        self
    }
}
