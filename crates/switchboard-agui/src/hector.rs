//! Hector's event vocabulary, for UIs built on it.
//!
//! Hector (seed 004) opted clients in to "AG-UI" with the same switch we use
//! (`Accept: application/x-agui-events`, `?format=agui`), but answered with
//! its own, Anthropic-style vocabulary: named SSE events (`event:` lines)
//! such as `message_start`, `content_block_delta` or `thinking_stop`. The
//! official `@ag-ui/client` rejects those, so switchboard serves AG-UI 1.0 on
//! that switch and this vocabulary only when asked for by name:
//! `?format=agui-hector` on the same endpoints.
//!
//! [`HectorTranslator`] reads the AG-UI events the [`crate::convert`]er made
//! and renames them; it decides nothing about the A2A stream itself.
//!
//! | AG-UI 1.0 | Hector |
//! |---|---|
//! | `RUN_STARTED` | `task_start {taskId, contextId}`, `message_start {messageId, contextId, role: "agent"}` |
//! | `TEXT_MESSAGE_START/CONTENT/END` | `content_block_start {blockId, blockType: "text"}`, `content_block_delta {blockId, delta}`, `content_block_stop {blockId}` |
//! | `REASONING_START`, `REASONING_MESSAGE_CONTENT`, `REASONING_END` | `thinking_start {thinkingId}`, `thinking_delta {thinkingId, delta}`, `thinking_stop {thinkingId}` |
//! | `TOOL_CALL_START/ARGS/END` | `tool_call_start {toolCallId, toolName, arguments}` (at the end, with the whole arguments) |
//! | `TOOL_CALL_RESULT` | `tool_call_stop {toolCallId, result, isError}` |
//! | `STATE_SNAPSHOT` / `STATE_DELTA` / `ACTIVITY_*` | `task_update {taskId, snapshot}` / `{taskId, delta}` / `{taskId, activity}` |
//! | `RUN_FINISHED` | `message_stop {messageId}`, then `task_complete {taskId, outcome}` (success, cancelled) or `task_update {taskId, state: "input-required", interrupts}` |
//! | `RUN_ERROR` | `message_stop {messageId}` (if a run was open), `task_error {taskId, error, code}` |
//!
//! `messageId` and `taskId` are the AG-UI `runId`, `contextId` its
//! `threadId`. Events with no Hector counterpart (`REASONING_MESSAGE_START`,
//! …) are left out.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::events::{Content, Event, EventKind, RunFinishedOutcome};

/// One Hector event: its SSE `event:` name and its `data:` document.
#[derive(Debug, Clone, PartialEq)]
pub struct HectorEvent {
    /// The `event:` name, e.g. `content_block_delta`.
    pub name: &'static str,
    /// The payload.
    pub data: Value,
}

impl HectorEvent {
    fn new(name: &'static str, data: Value) -> Self {
        HectorEvent { name, data }
    }
}

/// Renames one AG-UI stream into Hector's vocabulary. It keeps what it needs
/// across events (the open run, tool calls' names and arguments), so feed it
/// every event of a stream, in order.
#[derive(Debug, Default)]
pub struct HectorTranslator {
    /// The open run's id (Hector's task and message id).
    run: Option<String>,
    /// Tool calls begun but not ended: name and arguments so far.
    calls: HashMap<String, (String, String)>,
}

impl HectorTranslator {
    /// A translator for a new stream.
    pub fn new() -> Self {
        Self::default()
    }

    fn task(&self) -> Value {
        json!(self.run.as_deref().unwrap_or_default())
    }

    /// The Hector events for one AG-UI event (none, one or two).
    pub fn translate(&mut self, event: &Event) -> Vec<HectorEvent> {
        match &event.kind {
            EventKind::RunStarted(e) => {
                self.run = Some(e.run_id.clone());
                vec![
                    HectorEvent::new(
                        "task_start",
                        json!({"taskId": e.run_id, "contextId": e.thread_id}),
                    ),
                    HectorEvent::new(
                        "message_start",
                        json!({"messageId": e.run_id, "contextId": e.thread_id, "role": "agent"}),
                    ),
                ]
            }
            EventKind::TextMessageStart(e) => vec![HectorEvent::new(
                "content_block_start",
                json!({"blockId": e.message_id, "blockType": "text"}),
            )],
            EventKind::TextMessageContent(e) => vec![HectorEvent::new(
                "content_block_delta",
                json!({"blockId": e.message_id, "delta": e.delta}),
            )],
            EventKind::TextMessageEnd(e) => vec![HectorEvent::new(
                "content_block_stop",
                json!({"blockId": e.message_id}),
            )],
            EventKind::ReasoningStart(e) => vec![HectorEvent::new(
                "thinking_start",
                json!({"thinkingId": e.message_id}),
            )],
            EventKind::ReasoningMessageContent(e) => vec![HectorEvent::new(
                "thinking_delta",
                json!({"thinkingId": e.message_id, "delta": e.delta}),
            )],
            EventKind::ReasoningEnd(e) => vec![HectorEvent::new(
                "thinking_stop",
                json!({"thinkingId": e.message_id}),
            )],
            EventKind::ToolCallStart(e) => {
                self.calls.insert(
                    e.tool_call_id.clone(),
                    (e.tool_call_name.clone(), String::new()),
                );
                Vec::new()
            }
            EventKind::ToolCallArgs(e) => {
                if let Some((_, args)) = self.calls.get_mut(&e.tool_call_id) {
                    args.push_str(&e.delta);
                }
                Vec::new()
            }
            EventKind::ToolCallEnd(e) => {
                let Some((name, args)) = self.calls.remove(&e.tool_call_id) else {
                    return Vec::new();
                };
                // Hector sends arguments as an object; text that is not JSON stays text.
                let arguments = serde_json::from_str(&args).unwrap_or(Value::String(args));
                vec![HectorEvent::new(
                    "tool_call_start",
                    json!({"toolCallId": e.tool_call_id, "toolName": name, "arguments": arguments}),
                )]
            }
            EventKind::ToolCallResult(e) => {
                let result = match &e.content {
                    Content::Text(t) => json!(t),
                    parts => serde_json::to_value(parts).unwrap_or(Value::Null),
                };
                let is_error = event
                    .metadata
                    .as_ref()
                    .and_then(|m| m.get("a2a"))
                    .and_then(|a| a.get("isError"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                vec![HectorEvent::new(
                    "tool_call_stop",
                    json!({"toolCallId": e.tool_call_id, "result": result, "isError": is_error}),
                )]
            }
            EventKind::StateSnapshot(e) => vec![HectorEvent::new(
                "task_update",
                json!({"taskId": self.task(), "snapshot": e.snapshot}),
            )],
            EventKind::StateDelta(e) => vec![HectorEvent::new(
                "task_update",
                json!({"taskId": self.task(), "delta": e.delta}),
            )],
            EventKind::ActivitySnapshot(_) | EventKind::ActivityDelta(_) => {
                let mut activity = serde_json::to_value(&event.kind).unwrap_or(Value::Null);
                if let Some(o) = activity.as_object_mut() {
                    o.remove("type");
                }
                vec![HectorEvent::new(
                    "task_update",
                    json!({"taskId": self.task(), "activity": activity}),
                )]
            }
            EventKind::RunFinished(e) => {
                self.run = None;
                let stop = HectorEvent::new("message_stop", json!({"messageId": e.run_id}));
                let end = match &e.outcome {
                    Some(RunFinishedOutcome::Interrupt { interrupts }) => HectorEvent::new(
                        "task_update",
                        json!({"taskId": e.run_id, "state": "input-required", "interrupts": interrupts}),
                    ),
                    Some(RunFinishedOutcome::Cancelled) => HectorEvent::new(
                        "task_complete",
                        json!({"taskId": e.run_id, "outcome": "cancelled"}),
                    ),
                    _ => HectorEvent::new(
                        "task_complete",
                        json!({"taskId": e.run_id, "outcome": "success"}),
                    ),
                };
                vec![stop, end]
            }
            EventKind::RunError(e) => {
                let mut out = Vec::new();
                let mut error = Map::new();
                if let Some(run) = self.run.take() {
                    out.push(HectorEvent::new(
                        "message_stop",
                        json!({"messageId": run.clone()}),
                    ));
                    error.insert("taskId".into(), json!(run));
                }
                error.insert("error".into(), json!(e.message));
                if let Some(code) = &e.code {
                    error.insert("code".into(), json!(code));
                }
                out.push(HectorEvent::new("task_error", Value::Object(error)));
                out
            }
            _ => Vec::new(),
        }
    }
}
