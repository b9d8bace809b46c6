//! The backends on their own: per-call extensions reach the agent (remote
//! and hosted alike), and a run whose client went away leaves the task
//! running.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use futures::StreamExt;
use serde_json::json;
use switchboard_agui::events::EventKind;
use switchboard_agui::sse::SseDecoder;
use switchboard_bridge::options::ENGRAM_URI;
use switchboard_bridge::{Backend, HostedBackend, RemoteBackend};
use switchboard_core::{CallContext, RequestHandler, agent_fn};
use switchboard_protocol::card::AgentExtension;
use switchboard_protocol::{AgentCard, Message, SendMessageRequest, TaskState};

/// An agent whose card declares Engram and that records, per message,
/// the extensions active for the call.
fn engram_agent(seen: Arc<Mutex<Vec<Vec<String>>>>) -> RequestHandler {
    let agent = agent_fn(move |ctx, events| {
        let seen = seen.clone();
        async move {
            seen.lock()
                .unwrap()
                .push(ctx.call.activated_extensions.clone());
            events.complete_with("ok").await?;
            Ok(())
        }
    });
    let card = AgentCard::new("engram", "declares Engram", "1")
        .with_streaming(true)
        .with_extension(AgentExtension {
            uri: ENGRAM_URI.into(),
            description: None,
            required: false,
            params: None,
        });
    RequestHandler::builder(agent, card).build()
}

async fn sends_with_and_without_engram(backend: &dyn Backend) {
    let engram = [ENGRAM_URI.to_owned()];
    backend
        .send_message(SendMessageRequest::new(Message::user_text("a")), &[])
        .await
        .unwrap();
    backend
        .send_message(SendMessageRequest::new(Message::user_text("b")), &engram)
        .await
        .unwrap();
    let stream = backend
        .send_streaming_message(SendMessageRequest::new(Message::user_text("c")), &engram)
        .await
        .unwrap();
    let items: Vec<_> = stream.collect().await;
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    backend
        .send_message(SendMessageRequest::new(Message::user_text("d")), &[])
        .await
        .unwrap();
}

fn assert_engram_per_call(seen: &Mutex<Vec<Vec<String>>>) {
    let engram = vec![ENGRAM_URI.to_owned()];
    assert_eq!(
        *seen.lock().unwrap(),
        [vec![], engram.clone(), engram, vec![]]
    );
}

#[tokio::test]
async fn the_remote_backend_requests_extensions_per_call() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = host(engram_agent(seen.clone())).await;
    sends_with_and_without_engram(&RemoteBackend::new(client)).await;
    assert_engram_per_call(&seen);
}

#[tokio::test]
async fn the_hosted_backend_activates_extensions_per_call() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let backend = HostedBackend::new(engram_agent(seen.clone()), CallContext::anonymous());
    sends_with_and_without_engram(&backend).await;
    assert_engram_per_call(&seen);
}

#[tokio::test]
async fn a_client_that_goes_away_leaves_the_task_running() {
    let (script, client, bridge) = setup().await;
    let body = input(json!([user("u1", "/slow")]), json!({}));
    let response = bridge
        .http
        .post(&bridge.url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    // Read until the task's id is in the state, then hang up.
    let mut chunks = response.bytes_stream();
    let mut decoder = SseDecoder::new();
    let task_id = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(10), chunks.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let found = decoder
            .push(&chunk)
            .unwrap()
            .into_iter()
            .find_map(|e| match &e.event.kind {
                EventKind::StateSnapshot(s) => task_id_in(&s.snapshot),
                _ => None,
            });
        if let Some(id) = found {
            break id;
        }
    };
    drop(chunks);
    script.reached.notified().await;
    script.release.notify_one();
    for _ in 0..100 {
        let task = client.get_task(task_id.as_str()).await.unwrap();
        if task.status.state == TaskState::Completed {
            return;
        }
        assert_eq!(task.status.state, TaskState::Working);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the task did not complete after the client left");
}

#[tokio::test]
async fn the_hosted_agent_runs_each_request_as_its_admitted_caller() {
    let principals = Arc::new(Mutex::new(Vec::new()));
    let seen = principals.clone();
    let agent = agent_fn(move |ctx, events| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().push(ctx.call.principal.clone());
            events.complete_with("ok").await?;
            Ok(())
        }
    });
    let card = AgentCard::new("who", "records its callers", "1").with_streaming(true);
    let handler = RequestHandler::builder(agent, card).build();
    // Admission as `serve` does it: from the request head, or refused.
    let admit: switchboard_bridge::backend::Admit = Arc::new(|head| {
        let user = head
            .headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        Box::pin(async move {
            let user = user.ok_or_else(|| {
                switchboard_protocol::A2AError::Unauthenticated("who are you?".into())
            })?;
            let mut call = CallContext::anonymous();
            call.principal = user;
            Ok(call)
        })
    });
    let bridge = bridge(
        switchboard_bridge::HostedAgent::new(handler, admit),
        fast_config(),
    )
    .await;
    let body = input(json!([user("u1", "hi")]), json!({})).to_string();
    let answer = bridge
        .http
        .post(&bridge.url)
        .header("content-type", "application/json")
        .header("x-user", "alice")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let mut decoder = SseDecoder::new();
    let events = decoder.push(&answer.bytes().await.unwrap()).unwrap();
    let last = events.last().map(|e| e.event.type_name());
    assert_eq!(last, Some("RUN_FINISHED"));
    assert_eq!(*principals.lock().unwrap(), ["alice"]);
    // No identity: the run is refused with the admission's error.
    let refused = bridge.post(body, "application/json", None).await.verified();
    assert_eq!(refused.types(), ["RUN_STARTED", "RUN_ERROR"]);
    refused.assert_run_error("bridge:agent_error", "who are you?");
    assert_eq!(principals.lock().unwrap().len(), 1);
}
