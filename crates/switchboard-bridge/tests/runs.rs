//! The bridge over real loopback HTTP: an AG-UI client's POSTs in, the
//! scripted agent (hosted by `switchboard-server`) behind it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use switchboard_agui::events::{EventKind, Message as AguiMessage, RunFinishedOutcome};
use switchboard_agui::hitl::FORM_RESPONSE_TYPE;
use switchboard_bridge::HostedAgent;
use switchboard_protocol::{PartContent, TaskState};

#[tokio::test]
async fn a_streamed_run_carries_the_task_to_its_end() {
    let (script, _, bridge) = setup().await;
    let answer = bridge.say("/stream please", json!({})).await;
    assert_eq!(answer.status, 200);
    assert!(answer.content_type.starts_with("text/event-stream"));
    assert_eq!(answer.cache_control, "no-cache");
    let EventKind::RunStarted(started) = &answer.events[0].kind else {
        panic!("{:?}", answer.types());
    };
    assert_eq!(
        (started.thread_id.as_str(), started.run_id.as_str()),
        (THREAD_ID, RUN_ID)
    );
    assert!(
        answer.text().contains("Once upon a time."),
        "{}",
        answer.text()
    );
    assert!(answer.text().contains("the end"), "{}", answer.text());
    answer.check_succeeded().unwrap();
    let state = answer.state_snapshot().expect("a STATE_SNAPSHOT");
    assert!(task_id_in(state).is_some(), "{state}");
    // The agent got the user's text, and nothing of AG-UI's run ids.
    let received = script.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].text(), "/stream please");
    assert_no_agui_ids(&script);
}

#[tokio::test]
async fn a_direct_reply_is_a_run_with_one_text_message() {
    let (script, _, bridge) = setup().await;
    let answer = bridge.say("/text", json!({})).await;
    assert_eq!(
        answer.types(),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(answer.text(), "hello from the agent");
    assert_no_agui_ids(&script);
}

#[tokio::test]
async fn the_hosted_backend_runs_as_the_caller() {
    let script = Arc::new(Script::default());
    let handler = scripted_handler(script.clone());
    let bridge = bridge(HostedAgent::anonymous(handler), fast_config()).await;
    let answer = bridge.say("/stream", json!({})).await;
    assert!(
        answer.text().contains("Once upon a time."),
        "{}",
        answer.text()
    );
    answer.check_succeeded().unwrap();
    assert_no_agui_ids(&script);
}

#[tokio::test]
async fn protobuf_is_answered_when_asked_for_by_name() {
    let (_, _, bridge) = setup().await;
    let body = input(json!([user("u1", "/stream")]), json!({})).to_string();
    let answer = bridge
        .post(
            body,
            "application/json",
            Some("application/vnd.ag-ui.event+proto"),
        )
        .await
        .verified();
    assert_eq!(answer.content_type, "application/vnd.ag-ui.event+proto");
    assert!(
        answer.text().contains("Once upon a time."),
        "{}",
        answer.text()
    );
}

#[tokio::test]
async fn send_mode_starts_a_task_then_injects_into_it() {
    let (script, client, bridge) = setup().await;
    let send = json!({"a2a": {"mode": "send"}});
    let started = bridge.say("/ask", send).await;
    started.check_succeeded().unwrap();
    let task_id = task_id_in(started.state_snapshot().expect("the task in the state")).unwrap();
    // The task asks; the next send run answers it on the same task.
    wait_for_state(&client, &task_id, TaskState::InputRequired).await;
    let inject = json!({"a2a": {"mode": "send", "taskId": task_id}});
    let injected = bridge
        .run_verified(json!([user("u1", "/ask"), user("u2", "blue")]), inject)
        .await;
    injected.check_succeeded().unwrap();
    wait_for_state(&client, &task_id, TaskState::Completed).await;
    let received = script.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[1].task_id.as_deref(), Some(task_id.as_str()));
    assert_eq!(received[1].text(), "blue");
    assert_no_agui_ids(&script);
}

#[tokio::test]
async fn a_reconnect_mid_task_starts_from_the_snapshot_without_duplicates() {
    let (script, client, bridge) = setup().await;
    let started = bridge.say("/slow", json!({"a2a": {"mode": "send"}})).await;
    let task_id = task_id_in(started.state_snapshot().unwrap()).unwrap();
    script.reached.notified().await;
    // Reconnect: the task, no new message.
    let reconnect = input(json!([]), json!({"a2a": {"taskId": task_id}}));
    let run = tokio::spawn(async move { bridge.run(&reconnect).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    script.release.notify_one();
    let answer = run.await.unwrap().verified();
    let types = answer.types();
    assert_eq!(
        &types[..3],
        ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT"]
    );
    let snapshot = answer.messages_snapshot().unwrap();
    let snapshot_text: String = snapshot
        .iter()
        .filter_map(|m| match m {
            AguiMessage::Assistant(a) => a.content.clone(),
            _ => None,
        })
        .collect();
    let all = format!("{snapshot_text}{}", answer.text());
    assert_eq!(all.matches("part one;").count(), 1, "{all}");
    assert_eq!(all.matches("part two.").count(), 1, "{all}");
    assert!(snapshot_text.contains("part one;"), "{snapshot_text}");
    assert!(answer.text().contains("part two."), "{}", answer.text());
    answer.check_succeeded().unwrap();
    // Message ids are unique across the snapshot and the live part.
    let mut ids: Vec<&str> = snapshot.iter().map(|m| m.id()).collect();
    for e in &answer.events {
        if let EventKind::TextMessageStart(s) = &e.kind {
            ids.push(&s.message_id);
        }
    }
    let unique: std::collections::HashSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    wait_for_state(&client, &task_id, TaskState::Completed).await;
}

#[tokio::test]
async fn a_reconnect_to_a_finished_task_is_its_snapshot_and_ending() {
    let (script, _, bridge) = setup().await;
    let first = bridge.say("/stream", json!({})).await;
    let task_id = task_id_in(first.state_snapshot().unwrap()).unwrap();
    let types = [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ];
    for (mode, again) in reconnect_in_both_modes(&bridge, &task_id, &types).await {
        let text = serde_json::to_string(again.messages_snapshot().unwrap()).unwrap();
        assert!(text.contains("Once upon a time."), "{mode}: {text}");
        assert!(text.contains("the end"), "{mode}: {text}");
    }
    // Reconnecting sent the agent nothing.
    assert_eq!(script.received().len(), 1);
}

/// Reconnects to `task_id` in stream and in send mode; each answer must be
/// the events `types`. Returns the answers by mode.
async fn reconnect_in_both_modes(
    bridge: &Bridge,
    task_id: &str,
    types: &[&str],
) -> Vec<(&'static str, Answer)> {
    let mut answers = Vec::new();
    for mode in ["stream", "send"] {
        let again = bridge.reconnect(mode, task_id).await;
        assert_eq!(again.types(), types, "{mode}");
        answers.push((mode, again));
    }
    answers
}

/// Runs `/approve` to its interrupt; returns the interrupt id and task id.
async fn interrupted(bridge: &Bridge) -> (String, String) {
    let answer = bridge.say("/approve", json!({})).await;
    assert!(
        answer.text().contains("Approve the transfer?"),
        "{}",
        answer.text()
    );
    let Some(RunFinishedOutcome::Interrupt { interrupts }) = answer.outcome() else {
        panic!("{:?}", answer.types());
    };
    let task_id = task_id_in(answer.state_snapshot().unwrap()).unwrap();
    (interrupts[0].id.clone(), task_id)
}

#[tokio::test]
async fn a_resolved_resume_answers_the_form_and_streams_to_the_end() {
    let (script, client, bridge) = setup().await;
    let (interrupt_id, task_id) = interrupted(&bridge).await;
    let mut resume = input(json!([user("u1", "/approve")]), json!({}));
    resume["resume"] = json!([{
        "interruptId": interrupt_id, "status": "resolved", "payload": {"approved": true}
    }]);
    let answer = bridge.run(&resume).await.verified();
    answer.check_succeeded().unwrap();
    assert!(
        answer.text().contains("approved: {\"approved\":true}"),
        "{}",
        answer.text()
    );
    // The question was shown by the first run; the resume does not repeat it.
    assert!(
        !answer.text().contains("Approve the transfer?"),
        "{}",
        answer.text()
    );
    let received = script.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[1].task_id.as_deref(), Some(task_id.as_str()));
    let data: Vec<&Value> = received[1]
        .parts
        .iter()
        .filter_map(|p| match &p.content {
            PartContent::Data(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(
        data,
        [&json!({"type": FORM_RESPONSE_TYPE, "formId": "f1", "values": {"approved": true}})]
    );
    assert_no_agui_ids(&script);
    wait_for_state(&client, &task_id, TaskState::Completed).await;
}

#[tokio::test]
async fn a_reconnect_to_a_paused_task_presents_its_interrupt_again() {
    let (script, _, bridge) = setup().await;
    let (interrupt_id, task_id) = interrupted(&bridge).await;
    let types = [
        "RUN_STARTED",
        "ACTIVITY_SNAPSHOT",
        "STATE_SNAPSHOT",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ];
    for (mode, again) in reconnect_in_both_modes(&bridge, &task_id, &types).await {
        let Some(RunFinishedOutcome::Interrupt { interrupts }) = again.outcome() else {
            panic!("{mode}: {:?}", again.outcome());
        };
        // The same interrupt, in both modes: its id comes from the status
        // message (ADR 0001, rule 5), which a GetTask snapshot carries too.
        assert_eq!(interrupts[0].reason, "input_required", "{mode}");
        let metadata = interrupts[0].metadata.as_ref().unwrap();
        assert_eq!(metadata["taskId"], json!(task_id), "{mode}");
        assert_eq!(interrupts[0].id, interrupt_id, "{mode}");
        // The form's activity is shown again, under the interrupt's id.
        let EventKind::ActivitySnapshot(a) = &again.events[1].kind else {
            unreachable!()
        };
        assert_eq!(a.message_id, interrupt_id, "{mode}");
        let text = serde_json::to_string(again.messages_snapshot().unwrap()).unwrap();
        assert!(text.contains("Approve the transfer?"), "{mode}: {text}");
    }
    assert_eq!(script.received().len(), 1);
}

#[tokio::test]
async fn a_cancelled_resume_cancels_the_task() {
    let (script, client, bridge) = setup().await;
    let (interrupt_id, task_id) = interrupted(&bridge).await;
    let mut resume = input(json!([user("u1", "/approve")]), json!({}));
    resume["resume"] = json!([{"interruptId": interrupt_id, "status": "cancelled"}]);
    let answer = bridge.run(&resume).await.verified();
    assert_eq!(
        answer.outcome(),
        Some(&RunFinishedOutcome::Cancelled),
        "{:?}",
        answer.types()
    );
    let task = client.get_task(task_id.as_str()).await.unwrap();
    assert_eq!(task.status.state, TaskState::Canceled);
    // Nothing was sent to the agent for the cancel.
    assert_eq!(script.received().len(), 1);
}

#[tokio::test]
async fn a_failing_agent_ends_the_run_with_run_error() {
    let (_, _, bridge) = setup().await;
    let answer = bridge.say("/fail", json!({})).await;
    answer.assert_run_error("a2a:failed", "the agent broke");
}

#[tokio::test]
async fn a_silent_agent_ends_the_run_after_the_timeout() {
    let script = Arc::new(Script::default());
    let (_, client) = agent(script.clone()).await;
    let mut config = fast_config();
    config.run.agent_timeout = Duration::from_millis(700);
    let bridge = bridge(switchboard_bridge::RemoteBackend::new(client), config).await;
    let started = std::time::Instant::now();
    let answer = bridge.say("/silent", json!({})).await;
    answer.run_error("bridge:agent_unavailable");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The quiet stream got keep-alive comments meanwhile.
    assert!(
        String::from_utf8_lossy(&answer.body).contains(": keep-alive\n\n"),
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    script.release.notify_one();
}

/// Polls GetTask until the task is in `state` (agents finish on their own
/// tasks, after the bridge's run ended).
async fn wait_for_state(client: &switchboard_client::A2AClient, task_id: &str, state: TaskState) {
    for _ in 0..100 {
        let task = client.get_task(task_id).await.unwrap();
        if task.status.state == state {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {task_id} never reached {state:?}");
}

#[tokio::test]
async fn a_huge_agent_event_is_read_well_within_the_agent_timeout() {
    // One 12 MiB A2A event through a remote agent: the SSE of the agent's
    // answer is read in one pass, so the run is not taken for a silent
    // agent (the bridge's agent timeout here: 5 s between events).
    let (_, _, bridge) = setup().await;
    let answer = bridge.say("/big 12", json!({})).await.verified();
    assert!(answer.error().is_none(), "{:?}", answer.error());
    let text = answer.text();
    assert_eq!(text.len(), 12 << 20);
    assert!(text.bytes().all(|b| b == b'y'));
}
