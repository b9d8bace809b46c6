//! From AG-UI messages to the outbound A2A message.
//!
//! An AG-UI client sends the whole conversation on every run; an A2A agent
//! wants one message with what is new. [`outbound`] builds that message
//! (`docs/adr/0001` for the identifiers, `docs/adr/0002` for Engram),
//! [`resume_message`] builds the answer to an interrupted task.
//!
//! ## What the agent has not seen
//!
//! The **turn** is the messages after the last assistant message: the
//! user's text and parts, the results of the tool calls the agent asked
//! for, forwarded system/developer messages. Its parts are the outbound
//! message's parts (role `user`). In a *known* context
//! ([`Addressing::context_id`] is set: the agent has the conversation up to
//! its own last answer) that is all that is sent. In a *new* context the
//! agent has seen nothing, so the messages before the turn travel too, as
//! A2A `Message` objects (assistant → `agent`, every other role → `user`,
//! `messageId` = the AG-UI id) in `message.metadata.agui.history`.
//! Nothing new (no turn, or a turn of only dropped messages) is `Ok(None)`:
//! the run reconnects instead of sending.
//!
//! ## The mapping
//!
//! | AG-UI | A2A |
//! |---|---|
//! | `user` text / `text` part | text part |
//! | `image`/`audio`/`video`/`document` part, `data` source | raw part (base64 decoded), `mediaType` = `mimeType` |
//! | … `url` source | url part, `mediaType` = `mimeType` if given |
//! | … `file` source (a provider's handle) | data part `{"type": "file", "modality", "value", "provider"?, "mimeType"?}` |
//! | `assistant` text | text part (history only) |
//! | `assistant` tool call | data part `{"type": "tool-call", "id", "name", "arguments"}` (`arguments` parsed when it is JSON text) |
//! | `tool` message | data part `{"type": "tool-result", "toolCallId", "content", "error"?}` (`content` as AG-UI sent it) |
//! | `system` / `developer` | dropped; with [`BridgeConfig::forward_system_messages`] a text part in a `user` message |
//! | `activity` / `reasoning` | dropped (the UI's own rendering, not conversation) |
//! | Engram config message (see below) | data part `{"type": "engram.config", ...payload}` |
//! | `context` | `message.metadata.agui.context` |
//! | `tools` (frontend tools) | `message.metadata.agui.tools` |
//! | `threadId`, `runId`, `parentRunId`, `state`, `forwardedProps` | not sent |
//!
//! Every part, in the turn and in the history, carries
//! `metadata.agui = {"messageId": <AG-UI id>, "role": <AG-UI role>}`, so the
//! agent can tell a forwarded system message from the user's words and
//! relate parts to the messages the UI shows. A part's own AG-UI `metadata`
//! and `id` are not forwarded.
//!
//! ## Identifiers
//!
//! The outbound message gets a fresh `messageId`; its `contextId` and
//! `taskId` are the run's [`Addressing`] and nothing else. AG-UI's thread
//! and run ids name the UI's conversation and runs, not the agent's: they
//! are never put in the message, its metadata or its parts. The context a
//! client remembers is the one the bridge projected into its state on an
//! earlier run, read back with [`context_from_state`].
//!
//! ## Engram
//!
//! With [`BridgeConfig::engram`] on, a message (of any forwarded role, a
//! gated system/developer one included: it addresses the agent's config
//! lane, not the UI's model) whose `metadata` holds the key [`ENGRAM_URI`]
//! is a config message. Its payload (that key's value, a JSON object) is
//! sent instead of its content, as one data part
//! `{"type": "engram.config", ...payload}` (the `type` always wins) whose
//! metadata also holds `[ENGRAM_URI]: payload`; the A2A message that
//! carries it lists the URI in `extensions`, and so does
//! [`Outbound::extensions`], which the run driver sends as
//! `A2A-Extensions`. With Engram off the key means nothing: the message is
//! an ordinary one. The legacy `https://a2ui.org/ext/a2a-ui/v0.1` is never
//! sent.

use serde_json::{Map, Value, json};
use switchboard_agui::events::{
    Content, ContentPart, JsonObject, MediaPart, Message as AguiMessage, PartSource, ResumeEntry,
    ResumeStatus, RunAgentInput, ToolCall,
};
use switchboard_agui::hitl::HitlForm;
use switchboard_protocol::serde_util::base64_bytes;
use switchboard_protocol::{Message, Metadata, Part, Role, Task};

use crate::options::ENGRAM_URI;
use crate::{BridgeConfig, BridgeError};

/// The metadata key under which the bridge puts what it adds for the agent
/// (part tags, history, context, tools).
pub const METADATA_KEY: &str = "agui";

/// The `type` of the data part that carries an Engram config payload.
pub const ENGRAM_CONFIG_TYPE: &str = "engram.config";

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

/// The A2A context the bridge projected into the client's state on an
/// earlier run (`/view/contextId`), if the state holds a non-empty one.
pub fn context_from_state(state: &Value) -> Option<String> {
    state
        .pointer("/view/contextId")
        .and_then(Value::as_str)
        .filter(|id| !id.trim().is_empty())
        .map(str::to_owned)
}

/// The message to send for `input`, addressed to `addressing`; `None` when
/// the input holds nothing the agent has not seen (a reconnect).
///
/// Content the bridge cannot carry (base64 that does not decode, an Engram
/// payload that is not an object) is [`BridgeError::InvalidInput`].
pub fn outbound(
    input: &RunAgentInput,
    addressing: &Addressing,
    config: &BridgeConfig,
) -> Result<Option<Outbound>, BridgeError> {
    let turn_start = input
        .messages
        .iter()
        .rposition(|m| matches!(m, AguiMessage::Assistant(_)))
        .map_or(0, |last_assistant| last_assistant + 1);
    let (earlier, turn) = input.messages.split_at(turn_start);

    let mut uses_engram = false;
    let mut parts = Vec::new();
    for message in turn {
        if let Some(forwarded) = forward(message, config)? {
            uses_engram |= forwarded.engram;
            parts.extend(forwarded.parts);
        }
    }
    if parts.is_empty() {
        return Ok(None);
    }

    let mut agui = Map::new();
    if addressing.context_id.is_none() {
        let mut history = Vec::new();
        for message in earlier {
            if let Some(forwarded) = forward(message, config)? {
                uses_engram |= forwarded.engram;
                history.push(to_json(&forwarded.into_message(message.id()))?);
            }
        }
        if !history.is_empty() {
            agui.insert("history".into(), Value::Array(history));
        }
    }
    if let Some(context) = input.context.as_ref().filter(|c| !c.is_empty()) {
        agui.insert("context".into(), to_json(context)?);
    }
    if let Some(tools) = input.tools.as_ref().filter(|t| !t.is_empty()) {
        agui.insert("tools".into(), to_json(tools)?);
    }

    let mut message = Message::new(Role::User, parts);
    message.context_id = addressing.context_id.clone();
    message.task_id = addressing.task_id.clone();
    if !agui.is_empty() {
        message.metadata = Some(Metadata::from_iter([(
            METADATA_KEY.to_owned(),
            Value::Object(agui),
        )]));
    }
    let extensions = if uses_engram {
        vec![ENGRAM_URI.to_owned()]
    } else {
        Vec::new()
    };
    message.extensions = extensions.clone();
    Ok(Some(Outbound {
        message,
        extensions,
    }))
}

/// The message that answers the interrupt of `task` (paused in
/// `input-required` or `auth-required`) as `resume` says; `Ok(None)` when
/// the resume cancels it (the run driver then cancels the task).
///
/// `resume` must answer exactly the task's one pending interrupt, whose id
/// is `"<taskId>:<messageId of the status message>"` (`"<taskId>:<seq>"`
/// when the status has no message; a snapshot does not know the seq, so
/// then any id under `"<taskId>:"` is taken as that interrupt). A resolved
/// answer to a form (`a2a.hitl.form` in the status message) becomes its
/// `a2a.hitl.formResponse` with the payload as `values`; without a form, a
/// string payload becomes a text part and any other JSON a data part.
pub fn resume_message(
    resume: &[ResumeEntry],
    task: &Task,
) -> Result<Option<Outbound>, BridgeError> {
    if !task.status.state.is_interrupted() {
        return Err(BridgeError::InvalidResume(format!(
            "task {} has no pending interrupt (it is {})",
            task.id,
            task.status.state.label()
        )));
    }
    let pending = PendingInterrupt::of(task);
    let unknown: Vec<&str> = resume
        .iter()
        .map(|entry| entry.interrupt_id.as_str())
        .filter(|id| !pending.is(id))
        .collect();
    if !unknown.is_empty() {
        return Err(BridgeError::InvalidResume(format!(
            "unknown interrupt ids {}; the pending interrupt is {pending}",
            unknown.join(", ")
        )));
    }
    let entry = match resume {
        [entry] => entry,
        [] => {
            return Err(BridgeError::InvalidResume(format!(
                "resume is empty; the pending interrupt is {pending}"
            )));
        }
        [first, ..] => {
            return Err(BridgeError::InvalidResume(format!(
                "interrupt {} is answered {} times",
                first.interrupt_id,
                resume.len()
            )));
        }
    };
    if entry.status == ResumeStatus::Cancelled {
        return Ok(None);
    }
    let form = task.status.message.as_ref().and_then(HitlForm::find);
    let part = match (form, &entry.payload) {
        (Some(form), payload) => form.response(payload.clone().unwrap_or(Value::Null)),
        (None, Some(Value::String(text))) => Part::text(text.clone()),
        (None, Some(payload)) => Part::data(payload.clone()),
        (None, None) => {
            return Err(BridgeError::InvalidResume(format!(
                "the answer to interrupt {} has no payload, and task {} asked for no form",
                entry.interrupt_id, task.id
            )));
        }
    };
    let mut message = Message::new(Role::User, vec![part]);
    message.context_id = Some(task.context_id.clone()).filter(|id| !id.is_empty());
    message.task_id = Some(task.id.clone());
    Ok(Some(Outbound {
        message,
        extensions: Vec::new(),
    }))
}

/// The one interrupt an interrupted task has, as the converter names it.
enum PendingInterrupt {
    /// `"<taskId>:<messageId>"`: the status has a message.
    Exact(String),
    /// `"<taskId>:<seq>"`: no message, the seq is the stream's.
    Prefix(String),
}

impl PendingInterrupt {
    fn of(task: &Task) -> PendingInterrupt {
        match &task.status.message {
            Some(message) => PendingInterrupt::Exact(format!("{}:{}", task.id, message.message_id)),
            None => PendingInterrupt::Prefix(format!("{}:", task.id)),
        }
    }

    fn is(&self, id: &str) -> bool {
        match self {
            PendingInterrupt::Exact(expected) => id == expected,
            PendingInterrupt::Prefix(prefix) => id.len() > prefix.len() && id.starts_with(prefix),
        }
    }
}

impl std::fmt::Display for PendingInterrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PendingInterrupt::Exact(id) => f.write_str(id),
            PendingInterrupt::Prefix(prefix) => write!(f, "{prefix}<seq>"),
        }
    }
}

/// One AG-UI message as the agent gets it.
struct Forwarded {
    role: Role,
    parts: Vec<Part>,
    /// It is an Engram config message.
    engram: bool,
}

impl Forwarded {
    /// As an entry of `metadata.agui.history`.
    fn into_message(self, id: &str) -> Message {
        let mut message = Message::new(self.role, self.parts);
        message.message_id = id.to_owned();
        if self.engram {
            message.extensions = vec![ENGRAM_URI.to_owned()];
        }
        message
    }
}

/// `message` as the agent gets it, its parts tagged; `None` when it is not
/// forwarded (activity, reasoning, gated system/developer, no content).
fn forward(message: &AguiMessage, config: &BridgeConfig) -> Result<Option<Forwarded>, BridgeError> {
    let id = message.id();
    let (role_name, metadata) = match message {
        AguiMessage::Developer(m) => ("developer", &m.metadata),
        AguiMessage::System(m) => ("system", &m.metadata),
        AguiMessage::Assistant(m) => ("assistant", &m.metadata),
        AguiMessage::User(m) => ("user", &m.metadata),
        AguiMessage::Tool(m) => ("tool", &m.metadata),
        AguiMessage::Activity(_) | AguiMessage::Reasoning(_) => return Ok(None),
    };
    let role = if matches!(message, AguiMessage::Assistant(_)) {
        Role::Agent
    } else {
        Role::User
    };
    let tag = json!({"messageId": id, "role": role_name});

    let engram_payload = metadata
        .as_ref()
        .and_then(|m| m.get(ENGRAM_URI))
        .filter(|_| config.engram);
    if let Some(payload) = engram_payload {
        let part = engram_part(id, payload)?;
        return Ok(Some(Forwarded {
            role,
            parts: vec![tagged(part, &tag)],
            engram: true,
        }));
    }

    let parts = match message {
        AguiMessage::Developer(m) | AguiMessage::System(m) => {
            if !config.forward_system_messages {
                return Ok(None);
            }
            text_part(&m.content).into_iter().collect()
        }
        AguiMessage::User(m) => content_parts(id, &m.content)?,
        AguiMessage::Tool(m) => {
            let mut result = json!({
                "type": "tool-result",
                "toolCallId": m.tool_call_id,
                "content": to_json(&m.content)?,
            });
            if let (Some(error), Value::Object(result)) = (&m.error, &mut result) {
                result.insert("error".into(), Value::from(error.as_str()));
            }
            vec![Part::data(result)]
        }
        AguiMessage::Assistant(m) => {
            let text = m.content.as_deref().and_then(text_part);
            let calls = m.tool_calls.iter().flatten().map(tool_call_part);
            text.into_iter().chain(calls).collect()
        }
        AguiMessage::Activity(_) | AguiMessage::Reasoning(_) => return Ok(None),
    };
    if parts.is_empty() {
        return Ok(None);
    }
    Ok(Some(Forwarded {
        role,
        parts: parts.into_iter().map(|p| tagged(p, &tag)).collect(),
        engram: false,
    }))
}

/// `part` with `metadata.agui` set to `tag` (other metadata kept).
fn tagged(mut part: Part, tag: &Value) -> Part {
    part.metadata
        .get_or_insert_with(Metadata::new)
        .insert(METADATA_KEY.to_owned(), tag.clone());
    part
}

/// A text part, or nothing for empty text.
fn text_part(text: &str) -> Option<Part> {
    (!text.is_empty()).then(|| Part::text(text))
}

fn content_parts(id: &str, content: &Content) -> Result<Vec<Part>, BridgeError> {
    match content {
        Content::Text(text) => Ok(text_part(text).into_iter().collect()),
        Content::Parts(parts) => {
            let mut out = Vec::with_capacity(parts.len());
            for part in parts {
                let converted = match part {
                    ContentPart::Text { text, .. } => text_part(text),
                    ContentPart::Image(media) => Some(media_part(id, "image", media)?),
                    ContentPart::Audio(media) => Some(media_part(id, "audio", media)?),
                    ContentPart::Video(media) => Some(media_part(id, "video", media)?),
                    ContentPart::Document(media) => Some(media_part(id, "document", media)?),
                };
                out.extend(converted);
            }
            Ok(out)
        }
    }
}

/// A media content part: bytes inline, by URL, or a provider's handle the
/// agent may or may not be able to resolve (so it goes as described data).
fn media_part(id: &str, modality: &str, media: &MediaPart) -> Result<Part, BridgeError> {
    match &media.source {
        PartSource::Data { value, mime_type } => {
            let bytes = base64_bytes::decode(value).map_err(|e| {
                BridgeError::InvalidInput(format!(
                    "message {id}: the {modality} part's data source: {e}"
                ))
            })?;
            Ok(Part::raw(bytes, mime_type.as_str()))
        }
        PartSource::Url { value, mime_type } => {
            let part = Part::url(value.as_str());
            Ok(match mime_type {
                Some(mime_type) => part.with_media_type(mime_type.as_str()),
                None => part,
            })
        }
        PartSource::File {
            value,
            provider,
            mime_type,
        } => {
            let mut file = Map::new();
            file.insert("type".into(), json!("file"));
            file.insert("modality".into(), json!(modality));
            file.insert("value".into(), json!(value));
            if let Some(provider) = provider {
                file.insert("provider".into(), json!(provider));
            }
            if let Some(mime_type) = mime_type {
                file.insert("mimeType".into(), json!(mime_type));
            }
            Ok(Part::data(Value::Object(file)))
        }
    }
}

/// An assistant's tool call. AG-UI carries the arguments as JSON text; the
/// agent gets them as JSON, or as the text when it is not JSON (a call
/// the UI recorded half-streamed is still the agent's own call).
fn tool_call_part(call: &ToolCall) -> Part {
    let arguments = serde_json::from_str::<Value>(&call.function.arguments)
        .unwrap_or_else(|_| Value::from(call.function.arguments.as_str()));
    Part::data(json!({
        "type": "tool-call",
        "id": call.id,
        "name": call.function.name,
        "arguments": arguments,
    }))
}

/// The config part of an Engram message: the payload's keys plus
/// `"type": "engram.config"`, and the payload again under the URI in the
/// part's metadata (where extension-aware agents look for it).
fn engram_part(id: &str, payload: &Value) -> Result<Part, BridgeError> {
    let Value::Object(fields) = payload else {
        return Err(BridgeError::InvalidInput(format!(
            "message {id}: the Engram payload (metadata[\"{ENGRAM_URI}\"]) must be a JSON object"
        )));
    };
    let mut data: JsonObject = fields.clone();
    data.insert("type".into(), json!(ENGRAM_CONFIG_TYPE));
    let part = Part::data(Value::Object(data));
    Ok(part.with_metadata(Metadata::from_iter([(
        ENGRAM_URI.to_owned(),
        payload.clone(),
    )])))
}

fn to_json(value: &impl serde::Serialize) -> Result<Value, BridgeError> {
    serde_json::to_value(value)
        .map_err(|e| BridgeError::InvalidInput(format!("cannot forward a value as JSON: {e}")))
}
