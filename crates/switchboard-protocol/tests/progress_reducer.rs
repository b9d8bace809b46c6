//! The client-side [`ProgressReducer`]: folding stream items into "what is
//! in progress right now". Covers snapshot semantics (a missing tracker is
//! no longer active), where payloads are read from (status-update metadata,
//! the status message of a `Task`), tolerance of invalid payloads from other
//! servers, and the end of everything when the task finishes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use switchboard_protocol::progress::*;
use switchboard_protocol::{
    Message, Metadata, StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

fn md(payload: Value) -> Metadata {
    let mut m = Metadata::new();
    m.insert(TASK_PROGRESS_URI.into(), payload);
    m
}

fn update(
    state: TaskState,
    event_md: Option<Metadata>,
    msg_md: Option<Metadata>,
) -> StreamResponse {
    let mut status = TaskStatus::new(state);
    if let Some(m) = msg_md {
        let mut msg = Message::agent_text("progress");
        msg.metadata = Some(m);
        status.message = Some(msg);
    }
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: "t1".into(),
        context_id: "c1".into(),
        status,
        metadata: event_md,
    })
}

fn ids(ts: &[ProgressTracker]) -> Vec<&str> {
    ts.iter().map(|t| t.id.as_str()).collect()
}

#[test]
fn snapshots_replace_the_active_set() {
    let mut r = ProgressReducer::new();
    assert!(r.is_empty());
    r.apply(&update(
        TaskState::Working,
        Some(md(json!({"trackers": [
            {"id": "a", "progress": 1, "total": 4},
            {"id": "b", "progress": 0}
        ]}))),
        None,
    ));
    assert_eq!(ids(r.active()), vec!["a", "b"]);
    // b completes (included once), a is still running.
    r.apply(&update(
        TaskState::Working,
        Some(md(json!({"trackers": [
            {"id": "a", "progress": 2, "total": 4},
            {"id": "b", "progress": 7, "status": "completed"}
        ]}))),
        None,
    ));
    assert_eq!(ids(r.active()), vec!["a"]);
    assert_eq!(ids(r.finished()), vec!["b"]);
    assert_eq!(
        r.tracker("b").unwrap().status,
        Some(TrackerStatus::Completed)
    );
    // b omitted from now on; a disappears without a status: no longer active.
    r.apply(&update(
        TaskState::Working,
        Some(md(json!({"trackers": [{"id": "c", "progress": 1}]}))),
        None,
    ));
    assert_eq!(ids(r.active()), vec!["c"]);
    assert_eq!(ids(r.finished()), vec!["b", "a"]);
    assert_eq!(r.tracker("a").unwrap().progress, Some(2.0));
    assert_eq!(r.snapshots(), 3);
    assert!(r.violations().is_empty());
}

#[test]
fn reads_the_status_message_when_the_event_has_no_entry() {
    let mut r = ProgressReducer::new();
    let found = r.apply(&update(
        TaskState::Working,
        None,
        Some(md(json!({"trackers": [{"id": "m", "progress": 3}]}))),
    ));
    assert!(found);
    assert_eq!(ids(r.active()), vec!["m"]);
    // Event metadata wins when both are present.
    r.apply(&update(
        TaskState::Working,
        Some(md(json!({"trackers": [{"id": "e", "progress": 1}]}))),
        Some(md(json!({"trackers": [{"id": "m", "progress": 4}]}))),
    ));
    assert_eq!(ids(r.active()), vec!["e"]);
    assert_eq!(r.snapshots(), 2, "one payload per item, not two");
}

#[test]
fn reads_task_items_from_the_status_message_then_task_metadata() {
    let mut msg = Message::agent_text("working");
    msg.metadata = Some(md(
        json!({"trackers": [{"id": "x", "progress": 5, "total": 10}]}),
    ));
    let task = Task {
        id: "t1".into(),
        context_id: "c1".into(),
        status: TaskStatus::new(TaskState::Working).with_message(msg),
        artifacts: None,
        history: None,
        metadata: None,
    };
    let mut r = ProgressReducer::new();
    assert!(r.apply(&StreamResponse::Task(task.clone())));
    assert_eq!(r.tracker("x").unwrap().fraction(), Some(0.5));

    let mut mirrored = task;
    mirrored.status.message = None;
    mirrored.metadata = Some(md(json!({"trackers": [{"id": "y", "progress": 1}]})));
    let mut r = ProgressReducer::new();
    assert!(r.apply_task(&mirrored));
    assert_eq!(ids(r.active()), vec!["y"]);
}

#[test]
fn items_without_progress_change_nothing() {
    let mut r = ProgressReducer::new();
    r.apply_metadata(&md(json!({"trackers": [{"id": "a"}]})));
    assert!(!r.apply(&update(TaskState::Working, None, None)));
    assert!(!r.apply(&StreamResponse::Message(Message::agent_text("hi"))));
    assert_eq!(ids(r.active()), vec!["a"]);
}

#[test]
fn a_terminal_task_ends_every_tracker() {
    let mut r = ProgressReducer::new();
    r.apply_metadata(&md(json!({"trackers": [{"id": "a", "progress": 1}]})));
    r.apply(&update(TaskState::Canceled, None, None));
    assert!(r.active().is_empty());
    assert_eq!(ids(r.finished()), vec!["a"]);
}

#[test]
fn invalid_payloads_are_recorded_and_applied_as_far_as_possible() {
    let mut r = ProgressReducer::new();
    r.apply_metadata(&md(json!({"trackers": [
        {"id": "a", "progress": 5, "total": 3, "eta": 1},
        {"progress": 2},
        {"id": "b", "status": "paused", "progress": 1}
    ]})));
    assert_eq!(ids(r.active()), vec!["a", "b"]);
    assert_eq!(
        r.tracker("b").unwrap().status,
        None,
        "unknown status dropped"
    );
    let mut got: Vec<ProgressRule> = r.violations().iter().map(|v| v.rule).collect();
    got.sort_by_key(|r| r.as_str());
    assert_eq!(
        got,
        vec![
            ProgressRule::AdditionalProperties,
            ProgressRule::Enum,
            ProgressRule::ProgressExceedsTotal,
            ProgressRule::Required
        ]
    );
    // Garbage that cannot be read at all is recorded and otherwise ignored.
    r.apply_metadata(&md(json!("nonsense")));
    assert_eq!(ids(r.active()), vec!["a", "b"]);
    assert_eq!(r.violation_count(), 5);
}

#[test]
fn regressions_are_recorded_against_the_last_known_value() {
    let mut r = ProgressReducer::new();
    r.apply_metadata(&md(
        json!({"trackers": [{"id": "a", "progress": 5, "total": 10}]}),
    ));
    r.apply_metadata(&md(json!({"trackers": []})));
    // a comes back lower than it left.
    r.apply_metadata(&md(
        json!({"trackers": [{"id": "a", "progress": 2, "total": 10}]}),
    ));
    assert_eq!(r.violations().len(), 1);
    assert_eq!(r.violations()[0].rule, ProgressRule::NonMonotonic);
    assert_eq!(ids(r.active()), vec!["a"]);
    assert!(r.finished().is_empty(), "a is active again");
}

#[test]
fn declared_limits_can_be_enforced_by_the_client() {
    let limits = ProgressLimits {
        max_trackers: 1,
        ..ProgressLimits::default()
    };
    let mut r = ProgressReducer::with_limits(limits);
    r.apply_metadata(&md(json!({"trackers": [{"id": "a"}, {"id": "b"}]})));
    assert_eq!(r.violations()[0].rule, ProgressRule::MaxTrackers);
    assert_eq!(r.active().len(), 2, "still shown");
}

#[test]
fn the_kept_violation_list_is_bounded() {
    let mut r = ProgressReducer::new();
    for _ in 0..1000 {
        r.apply_metadata(&md(json!({"trackers": [{"id": "a", "eta": 1}]})));
    }
    assert_eq!(r.violation_count(), 1000);
    assert!(r.violations().len() <= 256);
}
