//! A2A agents as the model's tools.
//!
//! Each `[[agents]]` tool is another agent named by its card URL. Its
//! function is derived from the card: the card's name (made a valid
//! function name) or the configured `name`, the card's description, and
//! one string parameter, `message`. Calling it sends that message to the
//! agent as a new A2A task (streamed), whose id and context go into the
//! tool-call part's metadata (`a2a_task_id`, `a2a_context_id`,
//! `a2a_agent_url`), so a UI can show the call as a subagent and open its
//! task. The task's artifacts (or its final status message, or a direct
//! reply) are the tool's result; a task that fails, is rejected or
//! canceled is a failed call, reported to the model as such.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use serde_json::{Value, json};
use switchboard_client::{A2AClient, EventStream};
use switchboard_protocol::{Message, StreamResponse, TaskState};

use super::{LlmError, ToolConfig};

/// Metadata key on a tool-call part: the A2A task the call started.
pub const A2A_TASK_ID: &str = "a2a_task_id";
/// Metadata key on a tool-call part: that task's context.
pub const A2A_CONTEXT_ID: &str = "a2a_context_id";
/// Metadata key on a tool-call part: the called agent's card URL.
pub const A2A_AGENT_URL: &str = "a2a_agent_url";

/// The built-in tool that asks the caller.
pub const ASK_USER: &str = "ask_user";

/// A tool agent, its card read.
#[derive(Debug, Clone)]
pub(crate) struct A2aTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) url: String,
    pub(crate) client: Arc<A2AClient>,
}

impl A2aTool {
    /// Reads the card at `config.a2a`.
    pub(crate) async fn resolve(config: &ToolConfig, timeout: Duration) -> Result<Self, LlmError> {
        let tool_error = |reason: String| LlmError::Tool {
            url: config.a2a.clone(),
            reason,
        };
        let connect = A2AClient::builder()
            .connect_timeout(timeout)
            .connect(&config.a2a);
        let client = tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| tool_error(format!("its card did not come within {timeout:?}")))?
            .map_err(|e| tool_error(format!("its card could not be read: {e}")))?;
        let card = client.card().ok_or_else(|| tool_error("no card".into()))?;
        let name = function_name(config.name.as_deref().unwrap_or(&card.name));
        if name.is_empty() {
            return Err(tool_error(format!(
                "the card's name {:?} makes no function name; set `name`",
                card.name
            )));
        }
        let description = config
            .description
            .clone()
            .unwrap_or_else(|| card.description.clone());
        Ok(A2aTool {
            name,
            description,
            url: config.a2a.clone(),
            client: Arc::new(client),
        })
    }

    /// The function the model sees.
    pub(crate) fn function(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {
                        "message": {
                            "type": "string",
                            "description": format!("The message to send to the {} agent", self.name),
                        }
                    },
                    "required": ["message"],
                },
            },
        })
    }

    /// Starts the call: the task's first event read, so its id is known.
    /// Its result keeps at most `max_result` bytes.
    pub(crate) async fn start(&self, arguments: &str, max_result: usize) -> Started {
        let message = message_argument(arguments);
        let mut stream = match self
            .client
            .send_streaming_message(Message::user_text(message))
            .await
        {
            Ok(stream) => stream,
            Err(e) => return Started::Failed(format!("the agent could not be called: {e}")),
        };
        match stream.next().await {
            Some(Ok(first)) => {
                let (task, context) = match &first.event {
                    StreamResponse::Task(t) => (Some(t.id.clone()), Some(t.context_id.clone())),
                    StreamResponse::StatusUpdate(u) => {
                        (Some(u.task_id.clone()), Some(u.context_id.clone()))
                    }
                    StreamResponse::ArtifactUpdate(u) => {
                        (Some(u.task_id.clone()), Some(u.context_id.clone()))
                    }
                    _ => (None, None),
                };
                let mut outcome = Outcome {
                    max: max_result,
                    ..Outcome::default()
                };
                outcome.take(first.event);
                Started::Running(Box::new(Call {
                    task_id: task,
                    context_id: context,
                    stream,
                    outcome,
                    client: self.client.clone(),
                }))
            }
            Some(Err(e)) => Started::Failed(format!("the agent failed: {e}")),
            None => Started::Failed("the agent closed the stream at once".into()),
        }
    }
}

/// A call just started.
pub(crate) enum Started {
    Running(Box<Call>),
    Failed(String),
}

/// A call whose task runs.
pub(crate) struct Call {
    pub(crate) task_id: Option<String>,
    pub(crate) context_id: Option<String>,
    stream: EventStream,
    outcome: Outcome,
    client: Arc<A2AClient>,
}

impl Call {
    /// Reads the task to its end: the result text, or why it failed.
    pub(crate) async fn finish(mut self) -> Result<String, String> {
        while let Some(item) = self.stream.next().await {
            match item {
                Ok(event) => self.outcome.take(event.event),
                Err(e) => return Err(format!("the agent's stream failed: {e}")),
            }
        }
        self.outcome.result()
    }

    /// What asks the agent to cancel the task (best effort, in the
    /// background), kept apart from the call, which is consumed reading it.
    pub(crate) fn canceler(&self) -> impl Fn() + Send + Sync + 'static {
        let (id, client) = (self.task_id.clone(), self.client.clone());
        move || {
            if let Some(id) = id.clone() {
                let client = client.clone();
                tokio::spawn(async move {
                    let _ = client.cancel_task(id.as_str()).await;
                });
            }
        }
    }
}

/// What a called agent produced so far.
#[derive(Debug, Default)]
struct Outcome {
    /// Artifact texts by id, in the order they appeared.
    artifacts: Vec<(String, String)>,
    state: Option<TaskState>,
    status_text: String,
    reply: Option<String>,
    /// Most bytes of artifact text kept, all artifacts together.
    max: usize,
    kept: usize,
    cut: bool,
}

impl Outcome {
    fn take(&mut self, event: StreamResponse) {
        match event {
            StreamResponse::Task(task) => {
                for a in task.artifacts() {
                    self.artifact(&a.artifact_id, &concat(&a.parts), false);
                }
                self.status(task.status);
            }
            StreamResponse::Message(m) => self.reply = Some(m.text()),
            StreamResponse::StatusUpdate(u) => self.status(u.status),
            StreamResponse::ArtifactUpdate(u) => {
                self.artifact(
                    &u.artifact.artifact_id,
                    &concat(&u.artifact.parts),
                    u.append,
                );
            }
            _ => {}
        }
    }

    fn status(&mut self, status: switchboard_protocol::TaskStatus) {
        self.state = Some(status.state);
        if let Some(m) = status.message {
            self.status_text = m.text();
        }
    }

    fn artifact(&mut self, id: &str, text: &str, append: bool) {
        let index = match self.artifacts.iter().position(|(i, _)| i == id) {
            Some(i) => {
                if !append {
                    self.kept -= self.artifacts[i].1.len();
                    self.artifacts[i].1.clear();
                }
                i
            }
            None => {
                self.artifacts.push((id.to_owned(), String::new()));
                self.artifacts.len() - 1
            }
        };
        let room = self.max.saturating_sub(self.kept);
        let take = if text.len() <= room {
            text
        } else {
            self.cut = true;
            let mut end = room;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            &text[..end]
        };
        self.kept += take.len();
        self.artifacts[index].1.push_str(take);
    }

    fn result(self) -> Result<String, String> {
        if let Some(mut reply) = self.reply {
            if reply.len() > self.max {
                let mut end = self.max;
                while !reply.is_char_boundary(end) {
                    end -= 1;
                }
                reply.truncate(end);
                reply.push_str(CUT_NOTE);
            }
            return Ok(reply);
        }
        let cut = self.cut;
        let mut text = self
            .artifacts
            .into_iter()
            .map(|(_, t)| t)
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        if cut {
            text.push_str(CUT_NOTE);
        }
        match self.state {
            Some(TaskState::Completed) if text.is_empty() => Ok(self.status_text),
            Some(TaskState::Completed) => Ok(text),
            Some(TaskState::InputRequired) | Some(TaskState::AuthRequired) => Ok(format!(
                "{text}{}(the agent asks: {})",
                if text.is_empty() { "" } else { "\n" },
                self.status_text
            )),
            Some(state) if state.is_terminal() => Err(format!(
                "the agent's task ended {state}{}",
                if self.status_text.is_empty() {
                    String::new()
                } else {
                    format!(": {}", self.status_text)
                }
            )),
            _ => Err("the agent's stream ended before its task did".into()),
        }
    }
}

/// What a result cut at `max_tool_result_bytes` ends with.
const CUT_NOTE: &str = "\n[the tool's result was cut off here: max_tool_result_bytes]";

/// The text parts of a chunk, as streamed (no separator).
fn concat(parts: &[switchboard_protocol::Part]) -> String {
    parts.iter().filter_map(|p| p.as_text()).collect()
}

/// The `message` argument; a model that wrote something else is taken at
/// its word (the whole arguments text, or its only string value).
fn message_argument(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => match map.get("message").and_then(Value::as_str) {
            Some(m) => m.to_owned(),
            None => {
                let strings: Vec<&str> = map.values().filter_map(Value::as_str).collect();
                match strings.as_slice() {
                    [only] => (*only).to_owned(),
                    _ => arguments.to_owned(),
                }
            }
        },
        Ok(Value::String(s)) => s,
        _ => arguments.to_owned(),
    }
}

/// The `question` argument of `ask_user`.
pub(crate) fn question_argument(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v) => v
            .get("question")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| message_argument(arguments)),
        Err(_) => arguments.to_owned(),
    }
}

/// The `ask_user` function.
pub(crate) fn ask_user_function() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": ASK_USER,
            "description": "Ask the user a question and wait for the answer. Use it when you need information only the user has.",
            "parameters": {
                "type": "object",
                "properties": {
                    "question": {"type": "string", "description": "The question for the user"}
                },
                "required": ["question"],
            },
        },
    })
}

/// `name` made a function name: `[A-Za-z0-9_-]`, at most 64 characters.
pub(crate) fn function_name(name: &str) -> String {
    let mut out: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    out.truncate(64);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_arguments() {
        assert_eq!(function_name("Word counter 2.0"), "Word_counter_2_0");
        assert_eq!(message_argument(r#"{"message":"hi"}"#), "hi");
        assert_eq!(message_argument(r#"{"text":"hi"}"#), "hi");
        assert_eq!(message_argument("not json"), "not json");
        assert_eq!(question_argument(r#"{"question":"who?"}"#), "who?");
    }
}
