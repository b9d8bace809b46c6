//! The JSON-lines mode's two vocabularies: what a program writes on stdout
//! ([`ProgramLine`]) and what it reads on stdin ([`InputLine`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchboard_protocol::Message;

/// One line a program writes: a JSON object whose `type` says what it is.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ProgramLine {
    /// A working status with this text.
    Status {
        /// What the program is doing.
        text: String,
    },
    /// One chunk of an artifact: the first chunk of an `id` (default: its
    /// `name`, else `output`) starts the artifact, later ones append, `last`
    /// closes it (a later chunk of the same id then starts a new one).
    Artifact {
        /// Which artifact this chunk belongs to.
        #[serde(default)]
        id: Option<String>,
        /// The artifact's name (sent with its first chunk).
        #[serde(default)]
        name: Option<String>,
        /// A text part.
        #[serde(default)]
        text: Option<String>,
        /// A JSON data part.
        #[serde(default)]
        data: Option<Value>,
        /// The part's media type.
        #[serde(default)]
        media_type: Option<String>,
        /// The artifact's last chunk.
        #[serde(default)]
        last: bool,
    },
    /// A progress tracker (task-progress extension): the first line of a
    /// `tracker` starts it, later ones update it; `state` `completed` or
    /// `failed` ends it.
    Progress {
        /// The tracker's id.
        tracker: String,
        /// Work done.
        #[serde(default)]
        progress: Option<f64>,
        /// Work in all, when known.
        #[serde(default)]
        total: Option<f64>,
        /// A hint for people.
        #[serde(default)]
        message: Option<String>,
        /// `completed` or `failed` ends the tracker.
        #[serde(default)]
        state: Option<TrackerEnd>,
    },
    /// A question: the task turns input-required, and the caller's answer
    /// (a message on the same task) comes back as an `answer` line on stdin.
    Ask {
        /// The question.
        text: String,
    },
    /// The task completes (optionally with a message); the program should exit.
    Complete {
        /// A closing word.
        #[serde(default)]
        text: Option<String>,
    },
    /// The task fails with this reason; the program should exit.
    Fail {
        /// Why.
        text: String,
    },
}

/// How a progress tracker ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrackerEnd {
    /// Done.
    Completed,
    /// Given up.
    Failed,
}

/// One line the program reads on stdin.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputLine<'a> {
    /// The message that started the run (always the first line).
    Message {
        /// Its text parts, joined with newlines.
        text: String,
        /// The whole message, as A2A 1.0 JSON.
        message: &'a Message,
        /// The task.
        task_id: &'a str,
        /// The conversation.
        context_id: &'a str,
    },
    /// The answer to the last `ask`.
    Answer {
        /// Its text parts, joined with newlines.
        text: String,
        /// The whole message.
        message: &'a Message,
    },
}

impl InputLine<'_> {
    /// The line as written: compact JSON and a newline.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_else(|_| b"{}".to_vec());
        line.push(b'\n');
        line
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn program_lines_parse_and_unknown_fields_are_refused() {
        let line: ProgramLine =
            serde_json::from_str(r#"{"type":"artifact","name":"out","text":"hi","last":true}"#)
                .unwrap();
        assert_eq!(
            line,
            ProgramLine::Artifact {
                id: None,
                name: Some("out".into()),
                text: Some("hi".into()),
                data: None,
                media_type: None,
                last: true
            }
        );
        let line: ProgramLine = serde_json::from_str(
            r#"{"type":"progress","tracker":"t","progress":2,"total":4,"state":"completed"}"#,
        )
        .unwrap();
        assert!(matches!(
            line,
            ProgramLine::Progress {
                state: Some(TrackerEnd::Completed),
                ..
            }
        ));
        assert!(serde_json::from_str::<ProgramLine>(r#"{"type":"status","txt":"x"}"#).is_err());
        assert!(serde_json::from_str::<ProgramLine>(r#"{"type":"shout","text":"x"}"#).is_err());
    }

    #[test]
    fn input_lines_are_one_json_object_per_line() {
        let m = Message::user_text("hello\nworld");
        let line = InputLine::Message {
            text: m.text(),
            message: &m,
            task_id: "t",
            context_id: "c",
        }
        .to_line();
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["type"], "message");
        assert_eq!(v["text"], "hello\nworld");
        assert_eq!(v["task_id"], "t");
        assert_eq!(v["message"]["parts"][0]["text"], "hello\nworld");
    }
}
