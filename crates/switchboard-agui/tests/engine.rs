//! The converter on real engine streams: an agent emits hinted parts with
//! [`TaskEventsExt::agui_writer`], the engine commits them to its log, and
//! the AG-UI view of the live stream equals the view of the log replayed
//! (A2A `SubscribeToTask` after 0) — whole, or resumed after any frame.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use futures::StreamExt;
use serde_json::json;
use switchboard_agui::hints::{PartHints, PartRole};
use switchboard_agui::{Converter, ConverterOptions, Frame, ResumePoint, TaskEventsExt, Verifier};
use switchboard_core::{CallContext, LoggedEvent, RequestHandler, agent_fn};
use switchboard_protocol::{
    AgentCard, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest,
};

fn handler() -> RequestHandler {
    let agent = agent_fn(|_ctx, events| async move {
        events.working("thinking it over").await?;
        let mut w = events.agui_writer("answer");
        w.thinking("The user greets me. ").await?;
        w.thinking("I should greet back.").await?;
        w.text("Hello").await?;
        w.text(", friend.").await?;
        w.code("println!(\"hi\");").await?;
        w.tool_call("call-1", "lookup", json!({"who": "friend"}))
            .await?;
        w.tool_result("call-1", "a friend").await?;
        w.tool_call("call-2", "weather", json!({})).await?;
        w.tool_error("call-2", "no network").await?;
        w.error("one tool failed").await?;
        w.text("Bye.").await?;
        w.finish().await?;
        Ok(())
    });
    let card = AgentCard::new("hinted", "emits hinted parts", "1.0").with_streaming(true);
    RequestHandler::builder(agent, card).build()
}

async fn collect(s: switchboard_core::EventStream) -> Vec<LoggedEvent> {
    s.map(|r| r.expect("stream item")).collect().await
}

/// The whole live stream of a streamed message of `text`.
async fn stream_text(h: &RequestHandler, call: &CallContext, text: &str) -> Vec<LoggedEvent> {
    let request = SendMessageRequest::new(Message::user_text(text));
    collect(h.send_streaming_message(call, request).await.unwrap()).await
}

fn convert(conv: &mut Converter, items: &[LoggedEvent]) -> Vec<Frame> {
    items.iter().flat_map(|i| conv.convert_logged(i)).collect()
}

#[tokio::test]
async fn live_stream_and_replayed_log_give_the_same_events() {
    let h = handler();
    let call = CallContext::anonymous();
    let live = stream_text(&h, &call, "hi").await;
    // The parts are ordinary A2A parts with hints in their metadata.
    let hinted: Vec<PartRole> = live
        .iter()
        .filter_map(|e| match &e.event {
            StreamResponse::ArtifactUpdate(u) => Some(PartHints::read(&u.artifact.parts[0]).role()),
            _ => None,
        })
        .collect();
    assert!(hinted.contains(&PartRole::Reasoning));
    assert!(hinted.contains(&PartRole::ToolResult));

    let frames = convert(&mut Converter::new(ConverterOptions::default()), &live);
    let events: Vec<_> = frames.iter().map(|f| f.event.clone()).collect();
    Verifier::verify_all(&events).unwrap();
    let types: Vec<&str> = events.iter().map(|e| e.type_name()).collect();
    for t in [
        "RUN_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_END",
        "TEXT_MESSAGE_CONTENT",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "RUN_FINISHED",
    ] {
        assert!(types.contains(&t), "{t} missing from {types:?}");
    }
    assert_eq!(types.last(), Some(&"RUN_FINISHED"));

    let task_id = live[0].event.task_id().unwrap().to_owned();
    let req = SubscribeToTaskRequest {
        tenant: None,
        id: task_id,
    };
    let replay = collect(h.resubscribe_to_task(&call, req.clone(), 0).await.unwrap()).await;
    assert_eq!(
        convert(&mut Converter::new(ConverterOptions::default()), &replay),
        frames,
        "the replayed log must read exactly like the live stream"
    );
    // A client that dropped after any frame reconnects with its id and gets the rest.
    for (k, f) in frames.iter().enumerate().step_by(3) {
        let point = ResumePoint::parse(f.id.as_deref().unwrap()).unwrap();
        let replay = collect(h.resubscribe_to_task(&call, req.clone(), 0).await.unwrap()).await;
        let rest = convert(
            &mut Converter::resuming(ConverterOptions::default(), point),
            &replay,
        );
        assert_eq!(rest, frames[k + 1..].to_vec());
    }
}

/// `agui_writer` takes its name as `artifact_writer` does (`impl
/// Into<String>`): an owned, formatted name needs no `&`.
#[tokio::test]
async fn a_hinted_writer_is_named_like_an_artifact_writer() {
    let agent = agent_fn(|ctx, events| async move {
        let name: String = format!("report for {}", ctx.text());
        let mut w = events.agui_writer(name);
        w.text("all good").await?;
        w.finish().await?;
        let plain = events.artifact_writer(String::from("plain"));
        plain.finish(switchboard_protocol::Part::text("ok")).await?;
        Ok(())
    });
    let card = AgentCard::new("named", "names its artifacts", "1.0").with_streaming(true);
    let h = RequestHandler::builder(agent, card).build();
    let call = CallContext::anonymous();
    let live = stream_text(&h, &call, "src").await;
    let names: Vec<String> = live
        .iter()
        .filter_map(|e| match &e.event {
            StreamResponse::ArtifactUpdate(u) if !u.append => u.artifact.name.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["report for src", "plain"]);
}
