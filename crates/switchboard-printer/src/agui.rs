//! `switchboard client stream --agui`: the AG-UI view of a stream.
//!
//! The server is asked for AG-UI events instead of A2A frames
//! (`switchboard_client::A2AClient::agui_stream`, feature `agui`) and each event is one
//! line: its type, then its fields as `name=value` in name order (values in
//! JSON, so text keeps its quotes and escapes and a line never breaks), e.g.
//!
//! ```text
//! RUN_STARTED protocolVersion="1.0" runId="task-1" threadId="ctx-1"
//! REASONING_MESSAGE_CONTENT delta="Counting words…" messageId="task-1:answer:r1"
//! TOOL_CALL_START toolCallId="call-1" toolCallName="word_count"
//! ```
//!
//! With `--json` each line is the event's AG-UI JSON as the server sent it.

use serde_json::Value;
use switchboard_agui::{Event, EventKind};

/// The line printed for `event`.
pub fn render(event: &Event, json: bool) -> String {
    let value = serde_json::to_value(event).unwrap_or(Value::Null);
    if json {
        return value.to_string();
    }
    let mut line = event.type_name().to_owned();
    if let Value::Object(fields) = value {
        // Sorted here: a JSON object's own order depends on serde_json's
        // features, which another crate in the build may switch.
        let mut fields: Vec<(&String, &Value)> = fields.iter().collect();
        fields.sort_by(|a, b| a.0.cmp(b.0));
        for (name, v) in fields.into_iter().filter(|(k, _)| k.as_str() != "type") {
            line.push(' ');
            line.push_str(name);
            line.push('=');
            line.push_str(&v.to_string());
        }
    }
    line
}

/// `true` for the event that ends a run in failure.
pub fn is_run_error(event: &Event) -> bool {
    matches!(event.kind, EventKind::RunError(_))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use switchboard_agui::events::TextMessageContent;

    #[test]
    fn one_line_per_event_with_json_values() {
        let e = Event::new(TextMessageContent {
            message_id: "m1".into(),
            delta: "two\nlines".into(),
            subagent_run_id: None,
        });
        assert_eq!(
            render(&e, false),
            r#"TEXT_MESSAGE_CONTENT delta="two\nlines" messageId="m1""#
        );
        let raw: Value = serde_json::from_str(&render(&e, true)).unwrap();
        assert_eq!(raw["type"], "TEXT_MESSAGE_CONTENT");
        assert!(!is_run_error(&e));
    }
}
