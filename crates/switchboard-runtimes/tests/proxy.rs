//! The proxy runtime through a real engine, in front of remote agents
//! served on loopback by `switchboard-server`: a remote that does not
//! stream (a blocking send), one that stays silent past `timeout`, and
//! `max_concurrent`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod engine;

use std::sync::Arc;
use std::time::Duration;

use engine::status_text;
use switchboard_core::{AgentExecutor, CallContext, RequestHandler, agent_fn};
use switchboard_protocol::{
    A2AError, AgentCard, Message, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, Task, TaskState,
};
use switchboard_runtimes::proxy::{ProxyAgent, ProxyConfig};
use tokio::sync::Notify;

/// Serves `agent` with `card` on a loopback port; its base URL.
async fn remote(agent: impl AgentExecutor, card: AgentCard) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = switchboard_server::A2aServer::new(RequestHandler::builder(agent, card).build())
        .public_url(&base);
    tokio::spawn(server.serve(listener, std::future::pending()));
    base
}

/// Our handler over a proxy of `base`.
async fn proxy(config: ProxyConfig) -> RequestHandler {
    let agent = ProxyAgent::connect("proxy", config).await.unwrap();
    let card = agent.card();
    RequestHandler::builder(agent, card).build()
}

async fn send(h: &RequestHandler, text: &str) -> Result<Task, A2AError> {
    let mut request = SendMessageRequest::new(Message::user_text(text));
    request.configuration = Some(SendMessageConfiguration::default());
    match h.send_message(&CallContext::anonymous(), request).await? {
        SendMessageResponse::Task(task) => Ok(task),
        other => panic!("a task: {other:?}"),
    }
}

#[tokio::test]
async fn a_remote_that_does_not_stream_is_sent_to_then_followed() {
    // Its card says it does not stream: the proxy sends a blocking
    // message and mirrors the task it answers with.
    let card = AgentCard::new("plain", "does not stream", "1").with_streaming(false);
    let base = remote(
        agent_fn(|ctx, events| async move {
            events.working("thinking").await?;
            events
                .batch()
                .artifact_text("answer", format!("plain: {}", ctx.text()))
                .complete()
                .commit()
                .await?;
            Ok(())
        }),
        card,
    )
    .await;
    let h = proxy(ProxyConfig::new(&base)).await;
    let task = send(&h, "hi").await.unwrap();
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    assert!(
        task.artifacts().iter().any(|a| a.text() == "plain: hi"),
        "{task:?}"
    );
}

#[tokio::test]
async fn a_silent_remote_fails_the_task_at_the_timeout_naming_it() {
    let card = AgentCard::new("silent", "never answers", "1").with_streaming(true);
    let base = remote(
        agent_fn(|_ctx, events| async move {
            events.working("started").await?;
            events.cancelled().await;
            Ok(())
        }),
        card,
    )
    .await;
    let mut config = ProxyConfig::new(&base);
    config.timeout = Duration::from_millis(300);
    let h = proxy(config).await;
    let task = send(&h, "hello?").await.unwrap();
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    let reason = status_text(&task.status);
    assert!(
        reason.contains("timeout") && reason.contains(&base),
        "{reason}"
    );
}

#[tokio::test]
async fn beyond_max_concurrent_a_message_is_refused_not_queued() {
    let release = Arc::new(Notify::new());
    let started = Arc::new(Notify::new());
    let card = AgentCard::new("gated", "waits", "1").with_streaming(true);
    let (gate, running) = (release.clone(), started.clone());
    let base = remote(
        agent_fn(move |_ctx, events| {
            let (gate, running) = (gate.clone(), running.clone());
            async move {
                events.working("waiting").await?;
                running.notify_one();
                gate.notified().await;
                events.complete_with("done").await?;
                Ok(())
            }
        }),
        card,
    )
    .await;
    let mut config = ProxyConfig::new(&base);
    config.max_concurrent = 1;
    let h = proxy(config).await;
    let first = {
        let h = h.clone();
        tokio::spawn(async move { send(&h, "one").await })
    };
    // Once the first reached the remote, it holds the one slot.
    started.notified().await;
    let refused = send(&h, "two").await.unwrap_err();
    assert!(
        matches!(refused, A2AError::ResourceExhausted(_)),
        "{refused:?}"
    );
    release.notify_one();
    let first = first.await.unwrap().unwrap();
    assert_eq!(first.status.state, TaskState::Completed, "{first:?}");
}
