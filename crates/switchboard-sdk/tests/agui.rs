//! The `/agui` endpoint on an SDK-served agent (features `agui`, `auth`):
//! one call mounts it, behind the same gate as the A2A bindings.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Running, key_holder};
use serde_json::{Value, json};
use switchboard_sdk::prelude::*;

const KEY: &str = "sdk-agui-key-0123456789";

fn run_input(text: &str) -> Value {
    json!({
        "threadId": "thread-1",
        "runId": "run-1",
        "messages": [{"id": "u1", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    })
}

/// The `type` of every SSE event in `body`.
fn event_types(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .filter_map(|event| event["type"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sdk_agent_answers_agui_behind_its_gate() {
    let agent = agent_fn(|ctx, events| async move {
        events.working("thinking").await?;
        events
            .artifact_text("answer", format!("echo: {}", ctx.text()))
            .await?;
        Ok(())
    });
    let card = AgentCard::new("echo", "Echoes", "1.0").with_streaming(true);
    let handler = RequestHandler::builder(agent, card).build();
    // The endpoint before the authenticator: the gate it gets is the
    // server's as served, whatever the order of the calls.
    let running = Running::start(|base| {
        A2aServer::new(handler)
            .public_url(base)
            .agui_endpoint(EndpointConfig::default())
            .authenticator(key_holder(KEY))
    })
    .await;
    let base = running.base.clone();
    let http = reqwest::Client::new();
    let url = format!("{base}/agui");

    // Without the key: refused before the run starts, as on the bindings.
    let refused = http
        .post(&url)
        .json(&run_input("hello"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert!(refused.headers().contains_key("www-authenticate"));

    // With it: a whole AG-UI run over the hosted agent.
    let answer = http
        .post(&url)
        .header("x-api-key", KEY)
        .header("accept", "text/event-stream")
        .json(&run_input("hello"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let body = answer.text().await.unwrap();
    let types = event_types(&body);
    assert_eq!(
        types.first().map(String::as_str),
        Some("RUN_STARTED"),
        "{body}"
    );
    assert_eq!(
        types.last().map(String::as_str),
        Some("RUN_FINISHED"),
        "{body}"
    );
    assert!(body.contains("echo: hello"), "{body}");

    running.stop().await;
}
