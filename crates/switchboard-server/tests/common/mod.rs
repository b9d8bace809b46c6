//! What the property tests share: the echo agent's server, in-process
//! requests through `tower::ServiceExt::oneshot`, the JSON-RPC codes the
//! spec names, and random JSON built from a binding's own vocabulary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use axum::body::Body;
use http::Request;
use proptest::prelude::*;
use serde_json::{Value, json};
use switchboard_core::{RequestHandler, agent_fn};
use switchboard_protocol::AgentCard;
use switchboard_server::A2aServer;
use tower::ServiceExt;

/// Every JSON-RPC error code of the spec (1.0 and 0.3 alike).
pub const CODES: [i64; 14] = [
    -32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32004, -32005, -32006, -32007,
    -32008, -32009,
];

/// A server whose agent echoes the text it gets as an artifact, on the
/// in-memory store, with streaming on and a 64 KiB body limit.
pub fn echo_server() -> A2aServer {
    let agent = agent_fn(|ctx, events| async move {
        events.artifact_text("echo", ctx.text()).await?;
        Ok(())
    });
    let card = AgentCard::new("fuzz", "fuzz target", "1").with_streaming(true);
    A2aServer::new(RequestHandler::builder(agent, card).build()).max_body_bytes(64 * 1024)
}

/// One request's answer: status, content type, body.
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON; for a stream, its first frame's data.
    pub fn first_json(&self) -> Value {
        let text = String::from_utf8_lossy(&self.body);
        if self.content_type.starts_with("text/event-stream") {
            let first = text
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .expect("a stream has frames");
            return serde_json::from_str(first).unwrap();
        }
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("non-JSON body ({e}): {text}"))
    }
}

/// Sends `req` to `router` and reads the whole answer.
pub async fn send(router: axum::Router, req: Request<Body>) -> Answer {
    let resp = router.oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    // Streams from the echo agent end on their own; the timeout only
    // guards against a hang being reported as a pass.
    let body = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        axum::body::to_bytes(resp.into_body(), usize::MAX),
    )
    .await
    .expect("the answer never ended")
    .unwrap()
    .to_vec();
    Answer {
        status,
        content_type,
        body,
    }
}

/// Random JSON: nulls, booleans, numbers, short printable strings and the
/// given `words`, nested up to four deep in arrays and in objects whose
/// keys are drawn from `keys`. Drawing from a binding's own method, field
/// and enum names makes a fair share of the values almost valid calls,
/// which reach deeper into the decoders than noise does.
pub fn arb_json(words: Vec<&'static str>, keys: Vec<&'static str>) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[ -~]{0,10}".prop_map(Value::String),
        prop::sample::select(words).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        let key = prop::sample::select(keys.clone()).prop_map(String::from);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key, inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
