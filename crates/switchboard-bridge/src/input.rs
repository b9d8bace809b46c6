//! From AG-UI messages to the outbound A2A message.
//!
//! Interface used by the run driver; the conversion itself (history the
//! agent has not seen, tool results, gating of system/developer messages,
//! metadata layering, the Engram lane) is issue 20's input work. Until it
//! lands, [`outbound`] forwards the text of the latest user message only.

use serde_json::Value;
use switchboard_agui::events::{Content, Message as AguiMessage, ResumeEntry, RunAgentInput};
use switchboard_agui::hitl::HitlForm;
use switchboard_protocol::{Message, Part, Role, Task};

use crate::{BridgeConfig, BridgeError};

/// Where the outbound message goes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Addressing {
    /// The A2A context to continue (`None`: the agent starts one).
    pub context_id: Option<String>,
    /// The task to continue (`None`: a new task).
    pub task_id: Option<String>,
}

/// The A2A message a run sends, and the extensions it activates
/// (`A2A-Extensions`).
#[derive(Debug, Clone, PartialEq)]
pub struct Outbound {
    /// The message.
    pub message: Message,
    /// Extension URIs to request for this call.
    pub extensions: Vec<String>,
}

/// The message to send for `input`, addressed to `addressing`; `None` when
/// the input holds nothing the agent has not seen (a reconnect).
pub fn outbound(
    input: &RunAgentInput,
    addressing: &Addressing,
    _config: &BridgeConfig,
) -> Result<Option<Outbound>, BridgeError> {
    let Some(text) = input.messages.iter().rev().find_map(|m| match m {
        AguiMessage::User(user) => match &user.content {
            Content::Text(text) => Some(text.clone()),
            _ => None,
        },
        _ => None,
    }) else {
        return Ok(None);
    };
    let mut message = Message::new(Role::User, vec![Part::text(text)]);
    message.context_id = addressing.context_id.clone();
    message.task_id = addressing.task_id.clone();
    Ok(Some(Outbound {
        message,
        extensions: Vec::new(),
    }))
}

/// The message that answers the interrupt of `task` (paused in
/// `input-required`) as `resume` says; `Ok(None)` when the resume cancels
/// it (the run driver then cancels the task).
pub fn resume_message(
    resume: &[ResumeEntry],
    task: &Task,
) -> Result<Option<Outbound>, BridgeError> {
    let [entry] = resume else {
        return Err(BridgeError::InvalidResume(format!(
            "expected one resume entry for task {}, got {}",
            task.id,
            resume.len()
        )));
    };
    if entry.status == switchboard_agui::events::ResumeStatus::Cancelled {
        return Ok(None);
    }
    let form = task
        .status
        .message
        .as_ref()
        .and_then(HitlForm::find)
        .ok_or_else(|| {
            BridgeError::InvalidResume(format!("task {} is not waiting for a form", task.id))
        })?;
    let values = entry.payload.clone().unwrap_or(Value::Null);
    let mut message = Message::new(Role::User, vec![form.response(values)]);
    message.context_id = Some(task.context_id.clone());
    message.task_id = Some(task.id.clone());
    Ok(Some(Outbound {
        message,
        extensions: Vec::new(),
    }))
}
