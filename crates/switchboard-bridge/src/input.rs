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
//! ([`Addressing::context_id`] is set and [`Addressing::context_is_new`] is
//! not: the agent has the conversation up to its own last answer) that is
//! all that is sent. In a *new* context (none named, or one named before
//! the agent has any task in it, as a CopilotKit thread's first run) the
//! agent has seen nothing, so the messages before the turn travel too, as
//! A2A `Message` objects (assistant → `agent`, every other role → `user`,
//! `messageId` = the AG-UI id) in `message.metadata.agui.history`: the
//! most recent ones whose JSON fits [`BridgeConfig::max_history_bytes`]
//! (less the `context` and `tools` the message carries as well), with
//! `metadata.agui.historyOmitted` = how many older ones were left out, so
//! a thread of any length fits the agent's metadata limit.
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
//! | `state`, its keys other than `view` (the UI's own state), with [`BridgeConfig::forward_state`] | `message.metadata.agui.state` |
//! | `threadId`, `runId`, `parentRunId`, `state` (unless forwarded), `forwardedProps` | not sent |
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
    /// The A2A context to continue (`None`: a new one; the history goes
    /// along).
    pub context_id: Option<String>,
    /// The task to continue (`None`: a new task).
    pub task_id: Option<String>,
    /// The context is named, but the agent holds no task in it yet (a
    /// context whose id the bridge derives, such as a CopilotKit thread's,
    /// on its first run): the history goes along as in a new context.
    pub context_is_new: bool,
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
    if let Some(context) = input.context.as_ref().filter(|c| !c.is_empty()) {
        agui.insert("context".into(), to_json(context)?);
    }
    if let Some(tools) = input.tools.as_ref().filter(|t| !t.is_empty()) {
        agui.insert("tools".into(), to_json(tools)?);
    }
    if let Some(state) = ui_state(input.state.as_ref()).filter(|_| config.forward_state) {
        agui.insert("state".into(), state);
    }
    if addressing.context_id.is_none() || addressing.context_is_new {
        let used = json_len(&agui);
        let budget = config.max_history_bytes.saturating_sub(used);
        let history = History::fit(earlier, config, budget)?;
        uses_engram |= history.engram;
        if !history.messages.is_empty() {
            agui.insert("history".into(), Value::Array(history.messages));
        }
        if history.omitted > 0 {
            agui.insert("historyOmitted".into(), Value::from(history.omitted));
        }
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

/// The UI's own part of the client's state: its keys other than `view`
/// (the bridge's projection, which the agent has: it is what the agent
/// reported). `None` when that is nothing.
fn ui_state(state: Option<&Value>) -> Option<Value> {
    let Some(Value::Object(state)) = state else {
        return None;
    };
    let own: Map<String, Value> = state
        .iter()
        .filter(|(key, _)| key.as_str() != "view")
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    (!own.is_empty()).then_some(Value::Object(own))
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

/// The earlier conversation a message into a new context carries: the
/// most recent messages whose JSON fits the budget, oldest first, and how
/// many forwarded messages before them were left out. A thread of any
/// length fits the agent's limits this way; a client that dropped its
/// state loses the oldest turns only, and the agent is told it did.
struct History {
    messages: Vec<Value>,
    omitted: usize,
    /// A kept message is an Engram config message.
    engram: bool,
}

impl History {
    fn fit(
        earlier: &[AguiMessage],
        config: &BridgeConfig,
        budget: usize,
    ) -> Result<History, BridgeError> {
        let mut history = History {
            messages: Vec::new(),
            omitted: 0,
            engram: false,
        };
        // The array's brackets; each entry then costs its JSON and a comma.
        let mut used = 2;
        let mut full = false;
        for message in earlier.iter().rev() {
            let Some(forwarded) = forward(message, config)? else {
                continue;
            };
            if full {
                history.omitted += 1;
                continue;
            }
            let engram = forwarded.engram;
            let entry = to_json(&forwarded.into_message(message.id()))?;
            let size = json_len(&entry) + 1;
            if used + size > budget {
                // Older messages than one that does not fit are left out
                // too: the agent gets a contiguous, most recent stretch.
                full = true;
                history.omitted += 1;
                continue;
            }
            used += size;
            history.engram |= engram;
            history.messages.push(entry);
        }
        history.messages.reverse();
        Ok(history)
    }
}

/// The length of `value` as compact JSON (what the agent measures).
fn json_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing into a counter cannot fail; a value that cannot be written
    // would have failed `to_json` before.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
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

/// `text` as the bridge sends a user message with AG-UI id `id`: each part
/// tagged `{"agui": {"messageId": id, "role": "user"}}` (for other modules'
/// tests of what the agent already holds).
#[cfg(test)]
pub(crate) fn tagged_user_text(text: &str, id: &str) -> Message {
    let mut message = Message::user_text(text);
    for part in &mut message.parts {
        let mut tag = Map::new();
        tag.insert("agui".into(), json!({"messageId": id, "role": "user"}));
        part.metadata = Some(tag);
    }
    message
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use switchboard_agui::hitl::{FORM_RESPONSE_TYPE, FORM_TYPE};
    use switchboard_protocol::{PartContent, TaskState, TaskStatus};

    use super::*;

    const THREAD: &str = "THREAD-7f3a";
    const RUN: &str = "RUN-91c2";
    const PARENT_RUN: &str = "PARENT-RUN-55d0";
    const LEGACY_URI: &str = "https://a2ui.org/ext/a2a-ui/v0.1";

    /// A run of `messages` (AG-UI JSON) whose thread, run, parent run, state
    /// and forwarded props all name AG-UI ids, so a leak would show.
    fn input(messages: Value) -> RunAgentInput {
        RunAgentInput {
            thread_id: THREAD.into(),
            run_id: RUN.into(),
            parent_run_id: Some(PARENT_RUN.into()),
            messages: serde_json::from_value(messages).unwrap(),
            state: Some(json!({"threadId": THREAD, "view": {"contextId": "ctx-from-state"}})),
            forwarded_props: Some(json!({"runId": RUN, "a2a": {"mode": "stream"}})),
            ..RunAgentInput::default()
        }
    }

    fn new_context() -> Addressing {
        Addressing::default()
    }

    fn known_context() -> Addressing {
        Addressing {
            context_id: Some("ctx-1".into()),
            ..Addressing::default()
        }
    }

    fn send(input: &RunAgentInput, addressing: &Addressing, config: &BridgeConfig) -> Outbound {
        outbound(input, addressing, config).unwrap().unwrap()
    }

    /// The outbound message as the agent receives it, without its fresh id.
    fn wire(outbound: &Outbound) -> Value {
        let mut message = serde_json::to_value(&outbound.message).unwrap();
        message.as_object_mut().unwrap().remove("messageId");
        message
    }

    fn conversation() -> Value {
        json!([
            {"role": "system", "id": "s1", "content": "You are terse."},
            {"role": "user", "id": "u1", "content": "Hi"},
            {"role": "assistant", "id": "a1", "content": "Hello! What can I do?"},
            {"role": "user", "id": "u2", "content": "Book a flight to Oslo"},
        ])
    }

    #[test]
    fn a_new_context_gets_the_whole_history_and_the_turn_as_parts() {
        let out = send(
            &input(conversation()),
            &new_context(),
            &BridgeConfig::default(),
        );
        assert_eq!(
            wire(&out),
            json!({
                "role": "ROLE_USER",
                "parts": [{"text": "Book a flight to Oslo",
                           "metadata": {"agui": {"messageId": "u2", "role": "user"}}}],
                "metadata": {"agui": {"history": [
                    {"messageId": "u1", "role": "ROLE_USER",
                     "parts": [{"text": "Hi", "metadata": {"agui": {"messageId": "u1", "role": "user"}}}]},
                    {"messageId": "a1", "role": "ROLE_AGENT",
                     "parts": [{"text": "Hello! What can I do?",
                                "metadata": {"agui": {"messageId": "a1", "role": "assistant"}}}]},
                ]}},
            })
        );
        assert!(out.extensions.is_empty());
    }

    #[test]
    fn a_known_context_gets_only_the_turn() {
        let messages = json!([
            {"role": "user", "id": "u1", "content": "Hi"},
            {"role": "assistant", "id": "a1", "content": "Hello!"},
            {"role": "user", "id": "u2", "content": "Book a flight"},
            {"role": "user", "id": "u3", "content": "to Oslo"},
        ]);
        let addressing = Addressing {
            context_id: Some("ctx-1".into()),
            task_id: Some("task-1".into()),
            ..Addressing::default()
        };
        let out = send(&input(messages), &addressing, &BridgeConfig::default());
        assert_eq!(
            wire(&out),
            json!({
                "contextId": "ctx-1",
                "taskId": "task-1",
                "role": "ROLE_USER",
                "parts": [
                    {"text": "Book a flight", "metadata": {"agui": {"messageId": "u2", "role": "user"}}},
                    {"text": "to Oslo", "metadata": {"agui": {"messageId": "u3", "role": "user"}}},
                ],
            })
        );
    }

    #[test]
    fn a_named_context_the_agent_has_no_task_in_gets_the_history_too() {
        let fresh = Addressing {
            context_id: Some("ctx-thread".into()),
            context_is_new: true,
            ..Addressing::default()
        };
        let out = send(&input(conversation()), &fresh, &BridgeConfig::default());
        let wire = wire(&out);
        assert_eq!(wire["contextId"], "ctx-thread");
        assert_eq!(
            wire["metadata"]["agui"]["history"].as_array().map(Vec::len),
            Some(2),
            "{wire}"
        );
    }

    #[test]
    fn the_uis_state_goes_along_only_when_forwarded() {
        let mut run = input(json!([{"role": "user", "id": "u1", "content": "Hi"}]));
        run.state = Some(json!({"notes": ["a"], "view": {"contextId": "ctx-from-state"}}));
        let off = send(&run, &known_context(), &BridgeConfig::default());
        assert_eq!(off.message.metadata, None);
        let config = BridgeConfig {
            forward_state: true,
            ..BridgeConfig::default()
        };
        let on = send(&run, &known_context(), &config);
        assert_eq!(
            wire(&on)["metadata"],
            json!({"agui": {"state": {"notes": ["a"]}}}),
            "the UI's keys, not the bridge's view"
        );
    }

    #[test]
    fn every_outbound_message_has_a_fresh_id() {
        let run = input(conversation());
        let config = BridgeConfig::default();
        let first = send(&run, &new_context(), &config).message.message_id;
        let second = send(&run, &new_context(), &config).message.message_id;
        assert_ne!(first, second);
        for id in ["s1", "u1", "a1", "u2", THREAD, RUN, PARENT_RUN] {
            assert_ne!(first, id);
        }
    }

    #[test]
    fn a_tool_round_sends_the_results_and_keeps_the_calls_in_the_history() {
        let messages = json!([
            {"role": "user", "id": "u1", "content": "Weather in Paris and Rome?"},
            {"role": "assistant", "id": "a1", "toolCalls": [
                {"id": "call-1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call-2", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":"}},
            ]},
            {"role": "tool", "id": "t1", "toolCallId": "call-1", "content": "18°C"},
            {"role": "tool", "id": "t2", "toolCallId": "call-2", "content": "", "error": "timeout"},
        ]);
        let run = input(messages);
        let results = json!([
            {"data": {"type": "tool-result", "toolCallId": "call-1", "content": "18°C"},
             "metadata": {"agui": {"messageId": "t1", "role": "tool"}}},
            {"data": {"type": "tool-result", "toolCallId": "call-2", "content": "", "error": "timeout"},
             "metadata": {"agui": {"messageId": "t2", "role": "tool"}}},
        ]);

        let known = send(&run, &known_context(), &BridgeConfig::default());
        assert_eq!(wire(&known)["parts"], results);
        assert_eq!(wire(&known)["metadata"], Value::Null);

        let new = send(&run, &new_context(), &BridgeConfig::default());
        assert_eq!(wire(&new)["parts"], results);
        assert_eq!(
            wire(&new)["metadata"]["agui"]["history"][1],
            json!({"messageId": "a1", "role": "ROLE_AGENT", "parts": [
                // JSON arguments arrive as JSON, a half-streamed call as its text.
                {"data": {"type": "tool-call", "id": "call-1", "name": "get_weather",
                          "arguments": {"city": "Paris"}},
                 "metadata": {"agui": {"messageId": "a1", "role": "assistant"}}},
                {"data": {"type": "tool-call", "id": "call-2", "name": "get_weather",
                          "arguments": "{\"city\":"},
                 "metadata": {"agui": {"messageId": "a1", "role": "assistant"}}},
            ]})
        );
    }

    #[test]
    fn system_and_developer_messages_are_gated_or_forwarded_tagged() {
        let messages = json!([
            {"role": "system", "id": "s1", "content": "Be brief."},
            {"role": "developer", "id": "d1", "content": "Use metric units."},
            {"role": "user", "id": "u1", "content": "Weather?"},
        ]);
        let run = input(messages);
        let user_part =
            json!({"text": "Weather?", "metadata": {"agui": {"messageId": "u1", "role": "user"}}});

        let gated = send(&run, &known_context(), &BridgeConfig::default());
        assert_eq!(wire(&gated)["parts"], json!([user_part]));

        let forwarding = BridgeConfig {
            forward_system_messages: true,
            ..BridgeConfig::default()
        };
        let forwarded = send(&run, &known_context(), &forwarding);
        assert_eq!(forwarded.message.role, Role::User);
        assert_eq!(
            wire(&forwarded)["parts"],
            json!([
                {"text": "Be brief.", "metadata": {"agui": {"messageId": "s1", "role": "system"}}},
                {"text": "Use metric units.", "metadata": {"agui": {"messageId": "d1", "role": "developer"}}},
                user_part,
            ])
        );

        // In the history of a new context they follow the same rule, as user messages.
        let history = json!([
            {"role": "system", "id": "s1", "content": "Be brief."},
            {"role": "assistant", "id": "a1", "content": "Hi."},
            {"role": "user", "id": "u1", "content": "Weather?"},
        ]);
        let gated = send(
            &input(history.clone()),
            &new_context(),
            &BridgeConfig::default(),
        );
        assert_eq!(
            wire(&gated)["metadata"]["agui"]["history"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
        let forwarded = send(&input(history), &new_context(), &forwarding);
        assert_eq!(
            wire(&forwarded)["metadata"]["agui"]["history"][0],
            json!({"messageId": "s1", "role": "ROLE_USER", "parts": [
                {"text": "Be brief.", "metadata": {"agui": {"messageId": "s1", "role": "system"}}}]})
        );
    }

    #[test]
    fn nothing_new_is_nothing_to_send() {
        let cases = [
            ("no messages", json!([])),
            (
                "the agent spoke last",
                json!([{"role": "user", "id": "u1", "content": "Hi"},
                       {"role": "assistant", "id": "a1", "content": "Hello"}]),
            ),
            (
                "only a gated system message",
                json!([{"role": "system", "id": "s1", "content": "Be brief."}]),
            ),
            (
                "only activity and reasoning",
                json!([{"role": "activity", "id": "x1", "activityType": "HITL_FORM", "content": {}},
                       {"role": "reasoning", "id": "r1", "content": "thinking"}]),
            ),
            (
                "only empty text",
                json!([{"role": "user", "id": "u1", "content": ""}]),
            ),
        ];
        for (name, messages) in cases {
            for addressing in [new_context(), known_context()] {
                assert_eq!(
                    outbound(
                        &input(messages.clone()),
                        &addressing,
                        &BridgeConfig::default()
                    ),
                    Ok(None),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn activity_and_reasoning_are_not_forwarded() {
        let messages = json!([
            {"role": "user", "id": "u1", "content": "Hi"},
            {"role": "reasoning", "id": "r1", "content": "secret thoughts"},
            {"role": "assistant", "id": "a1", "content": "Hello"},
            {"role": "activity", "id": "x1", "activityType": "HITL_FORM", "content": {"stage": "done"}},
            {"role": "user", "id": "u2", "content": "Next"},
        ]);
        let out = send(&input(messages), &new_context(), &BridgeConfig::default());
        let text = serde_json::to_string(&out.message).unwrap();
        for absent in ["r1", "secret thoughts", "x1", "HITL_FORM"] {
            assert!(!text.contains(absent), "{absent} in {text}");
        }
        assert_eq!(
            wire(&out)["metadata"]["agui"]["history"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
    }

    #[test]
    fn content_parts_map_to_a2a_parts() {
        let tag = json!({"agui": {"messageId": "u1", "role": "user"}});
        let cases = [
            (
                json!({"type": "text", "text": "look", "id": "p1", "metadata": {"x": 1}}),
                json!({"text": "look", "metadata": tag}),
            ),
            (
                json!({"type": "image", "source": {"type": "data", "value": "aGVsbG8=", "mimeType": "image/png"}}),
                json!({"raw": "aGVsbG8=", "mediaType": "image/png", "metadata": tag}),
            ),
            (
                // Unpadded base64 is accepted, and written back padded.
                json!({"type": "audio", "source": {"type": "data", "value": "aGVsbG8", "mimeType": "audio/wav"}}),
                json!({"raw": "aGVsbG8=", "mediaType": "audio/wav", "metadata": tag}),
            ),
            (
                json!({"type": "video", "source": {"type": "url", "value": "https://x.test/v.mp4", "mimeType": "video/mp4"}}),
                json!({"url": "https://x.test/v.mp4", "mediaType": "video/mp4", "metadata": tag}),
            ),
            (
                json!({"type": "document", "source": {"type": "url", "value": "https://x.test/d"}}),
                json!({"url": "https://x.test/d", "metadata": tag}),
            ),
            (
                json!({"type": "document", "source": {"type": "file", "value": "file-123",
                                                      "provider": "openai", "mimeType": "application/pdf"}}),
                json!({"data": {"type": "file", "modality": "document", "value": "file-123",
                                "provider": "openai", "mimeType": "application/pdf"},
                       "metadata": tag}),
            ),
            (
                json!({"type": "image", "source": {"type": "file", "value": "img-9"}}),
                json!({"data": {"type": "file", "modality": "image", "value": "img-9"}, "metadata": tag}),
            ),
        ];
        for (part, expected) in cases {
            let messages = json!([{"role": "user", "id": "u1", "content": [part]}]);
            let out = send(&input(messages), &known_context(), &BridgeConfig::default());
            assert_eq!(wire(&out)["parts"], json!([expected]), "{part}");
        }
    }

    #[test]
    fn base64_that_does_not_decode_is_invalid_input() {
        let messages = json!([{"role": "user", "id": "u1", "content": [
            {"type": "image", "source": {"type": "data", "value": "not base64!", "mimeType": "image/png"}}
        ]}]);
        let err =
            outbound(&input(messages), &known_context(), &BridgeConfig::default()).unwrap_err();
        assert_eq!(err.code(), "bridge:invalid_input");
        let text = err.to_string();
        assert!(
            text.contains("message u1") && text.contains("image") && text.contains("base64"),
            "{text}"
        );
    }

    #[test]
    fn context_and_tools_travel_in_metadata() {
        let mut run = input(json!([{"role": "user", "id": "u1", "content": "Hi"}]));
        run.context = Some(
            serde_json::from_value(json!([{"description": "locale", "value": "nb-NO"}])).unwrap(),
        );
        run.tools = Some(
            serde_json::from_value(json!([{"name": "confirm", "description": "Ask the user",
                                           "parameters": {"type": "object"}}]))
            .unwrap(),
        );
        let out = send(&run, &known_context(), &BridgeConfig::default());
        assert_eq!(
            wire(&out)["metadata"],
            json!({"agui": {
                "context": [{"description": "locale", "value": "nb-NO"}],
                "tools": [{"name": "confirm", "description": "Ask the user", "parameters": {"type": "object"}}],
            }})
        );

        // Empty lists (the TS client always sends them) add nothing.
        run.context = Some(Vec::new());
        run.tools = Some(Vec::new());
        let out = send(&run, &known_context(), &BridgeConfig::default());
        assert_eq!(out.message.metadata, None);
    }

    #[test]
    fn no_ag_ui_identifier_reaches_the_agent() {
        let configs = [
            BridgeConfig::default(),
            BridgeConfig {
                forward_system_messages: true,
                engram: true,
                ..BridgeConfig::default()
            },
        ];
        for config in configs {
            for addressing in [new_context(), known_context()] {
                let out = send(&input(conversation()), &addressing, &config);
                let text = serde_json::to_string(&out.message).unwrap();
                for leak in [
                    THREAD,
                    RUN,
                    PARENT_RUN,
                    "threadId",
                    "runId",
                    "parentRunId",
                    "forwardedProps",
                    "ctx-from-state",
                ] {
                    assert!(!text.contains(leak), "{leak} in {text}");
                }
                assert!(
                    !out.extensions
                        .iter()
                        .any(|e| e.contains(THREAD) || e.contains(RUN))
                );
            }
        }
    }

    #[test]
    fn engram_messages_go_to_the_config_lane_only_when_enabled() {
        let messages = json!([
            {"role": "user", "id": "u1", "content": "use the small model",
             "metadata": {ENGRAM_URI: {"model": "small", "type": "ignored"}}},
            {"role": "user", "id": "u2", "content": "now summarise"},
        ]);
        let run = input(messages);
        let plain = json!({"text": "now summarise", "metadata": {"agui": {"messageId": "u2", "role": "user"}}});

        let on = BridgeConfig {
            engram: true,
            ..BridgeConfig::default()
        };
        let out = send(&run, &known_context(), &on);
        assert_eq!(out.extensions, vec![ENGRAM_URI.to_owned()]);
        assert_eq!(out.message.extensions, vec![ENGRAM_URI.to_owned()]);
        assert_eq!(
            wire(&out)["parts"],
            json!([
                {"data": {"type": "engram.config", "model": "small"},
                 "metadata": {ENGRAM_URI: {"model": "small", "type": "ignored"},
                              "agui": {"messageId": "u1", "role": "user"}}},
                plain,
            ])
        );

        let off = send(&run, &known_context(), &BridgeConfig::default());
        assert!(off.extensions.is_empty());
        assert!(off.message.extensions.is_empty());
        assert_eq!(
            wire(&off)["parts"],
            json!([
                {"text": "use the small model", "metadata": {"agui": {"messageId": "u1", "role": "user"}}},
                plain,
            ])
        );
        let text = serde_json::to_string(&off.message).unwrap();
        assert!(
            !text.contains(ENGRAM_URI) && !text.contains("engram"),
            "{text}"
        );

        for out in [&out, &off] {
            let text = serde_json::to_string(&out.message).unwrap();
            assert!(
                !text.contains(LEGACY_URI) && !text.contains("a2ui.org"),
                "{text}"
            );
            assert!(!out.extensions.iter().any(|e| e.contains("a2ui.org")));
        }
    }

    #[test]
    fn engram_in_the_history_activates_the_extension_and_tags_that_message() {
        let messages = json!([
            {"role": "system", "id": "s1", "content": "",
             "metadata": {ENGRAM_URI: {"temperature": 0.2}}},
            {"role": "assistant", "id": "a1", "content": "ok"},
            {"role": "user", "id": "u1", "content": "go"},
        ]);
        let on = BridgeConfig {
            engram: true,
            ..BridgeConfig::default()
        };
        // A config message is for the agent's config lane, so system gating
        // does not hold it back.
        let out = send(&input(messages), &new_context(), &on);
        assert_eq!(out.extensions, vec![ENGRAM_URI.to_owned()]);
        assert_eq!(
            wire(&out)["metadata"]["agui"]["history"][0],
            json!({"messageId": "s1", "role": "ROLE_USER", "extensions": [ENGRAM_URI], "parts": [
                {"data": {"type": "engram.config", "temperature": 0.2},
                 "metadata": {ENGRAM_URI: {"temperature": 0.2},
                              "agui": {"messageId": "s1", "role": "system"}}}]})
        );
    }

    #[test]
    fn an_engram_payload_must_be_an_object() {
        let on = BridgeConfig {
            engram: true,
            ..BridgeConfig::default()
        };
        for payload in [json!(true), json!("small"), json!([1]), json!(null)] {
            let messages = json!([{"role": "user", "id": "u1", "content": "x",
                                   "metadata": {ENGRAM_URI: payload}}]);
            let err = outbound(&input(messages), &known_context(), &on).unwrap_err();
            assert_eq!(err.code(), "bridge:invalid_input", "{payload}");
            assert!(err.to_string().contains("Engram payload"), "{err}");
        }
    }

    #[test]
    fn the_context_comes_back_from_the_projected_state() {
        let cases = [
            (json!({"view": {"contextId": "ctx-9"}}), Some("ctx-9")),
            (
                json!({"view": {"contextId": "ctx-9"}, "app": 1}),
                Some("ctx-9"),
            ),
            (json!({"view": {"contextId": ""}}), None),
            (json!({"view": {"contextId": "  "}}), None),
            (json!({"view": {"contextId": 3}}), None),
            (json!({"view": {}}), None),
            (json!({"a2a": {"contextId": "ctx-9"}}), None),
            (json!("view"), None),
            (Value::Null, None),
        ];
        for (state, expected) in cases {
            assert_eq!(context_from_state(&state).as_deref(), expected, "{state}");
        }
    }

    // --- resume ---

    fn form() -> Value {
        json!({"type": FORM_TYPE, "formId": "approve-1", "title": "Approve?",
               "fields": [{"name": "approved", "type": "boolean"}]})
    }

    /// Task `task-1` in context `ctx-1`, in `state`, whose status message
    /// (id `status-1`) holds `parts`; no status message when `parts` is `None`.
    fn task(state: TaskState, parts: Option<Vec<Part>>) -> Task {
        let mut status = TaskStatus::new(state);
        status.message = parts.map(|parts| {
            let mut message = Message::new(Role::Agent, parts);
            message.message_id = "status-1".into();
            message
        });
        Task {
            id: "task-1".into(),
            context_id: "ctx-1".into(),
            status,
            artifacts: None,
            history: None,
            metadata: None,
        }
    }

    fn form_task() -> Task {
        task(
            TaskState::InputRequired,
            Some(vec![Part::text("Approve?"), Part::data(form())]),
        )
    }

    fn text_task() -> Task {
        task(
            TaskState::InputRequired,
            Some(vec![Part::text("Which city?")]),
        )
    }

    fn entry(id: &str, status: ResumeStatus, payload: Option<Value>) -> ResumeEntry {
        ResumeEntry {
            interrupt_id: id.into(),
            status,
            payload,
            metadata: None,
        }
    }

    const PENDING: &str = "task-1:status-1";

    #[test]
    fn a_resolved_resume_answers_the_form_on_the_same_task() {
        let resume = [entry(
            PENDING,
            ResumeStatus::Resolved,
            Some(json!({"approved": true})),
        )];
        let out = resume_message(&resume, &form_task()).unwrap().unwrap();
        assert!(out.extensions.is_empty());
        assert_eq!(
            wire(&out),
            json!({"contextId": "ctx-1", "taskId": "task-1", "role": "ROLE_USER", "parts": [
                {"data": {"type": FORM_RESPONSE_TYPE, "formId": "approve-1",
                          "values": {"approved": true}}}]})
        );
    }

    #[test]
    fn a_resolved_resume_without_a_form_sends_the_payload() {
        let cases = [
            (json!("Oslo"), PartContent::Text("Oslo".into())),
            (
                json!({"city": "Oslo"}),
                PartContent::Data(json!({"city": "Oslo"})),
            ),
            (json!(42), PartContent::Data(json!(42))),
        ];
        for (payload, expected) in cases {
            let resume = [entry(
                PENDING,
                ResumeStatus::Resolved,
                Some(payload.clone()),
            )];
            let out = resume_message(&resume, &text_task()).unwrap().unwrap();
            let contents: Vec<_> = out.message.parts.iter().map(|p| &p.content).collect();
            assert_eq!(contents, vec![&expected], "{payload}");
            assert_eq!(out.message.task_id.as_deref(), Some("task-1"));
            assert_eq!(out.message.context_id.as_deref(), Some("ctx-1"));
        }

        let resume = [entry(PENDING, ResumeStatus::Resolved, None)];
        let err = resume_message(&resume, &text_task()).unwrap_err();
        assert_eq!(err.code(), "bridge:invalid_resume");
        assert!(err.to_string().contains("no payload"), "{err}");
    }

    #[test]
    fn a_cancelled_resume_sends_nothing() {
        for task in [form_task(), text_task()] {
            let resume = [entry(PENDING, ResumeStatus::Cancelled, None)];
            assert_eq!(resume_message(&resume, &task), Ok(None));
        }
    }

    #[test]
    fn a_resume_must_answer_exactly_the_pending_interrupt() {
        let resolved =
            |id: &str| entry(id, ResumeStatus::Resolved, Some(json!({"approved": true})));
        let cases: [(&str, Vec<ResumeEntry>, &[&str]); 5] = [
            (
                "unknown id",
                vec![resolved("task-1:other")],
                &["task-1:other", PENDING],
            ),
            (
                "another task",
                vec![resolved("task-2:status-1")],
                &["task-2:status-1"],
            ),
            (
                "an extra id",
                vec![resolved(PENDING), resolved("task-9:x")],
                &["task-9:x"],
            ),
            (
                "answered twice",
                vec![resolved(PENDING), resolved(PENDING)],
                &[PENDING, "2 times"],
            ),
            ("empty", vec![], &[PENDING]),
        ];
        for (name, resume, named) in cases {
            let err = resume_message(&resume, &form_task()).unwrap_err();
            assert_eq!(err.code(), "bridge:invalid_resume", "{name}");
            for text in named {
                assert!(err.to_string().contains(text), "{name}: {err}");
            }
        }
    }

    #[test]
    fn only_an_interrupted_task_can_be_resumed() {
        let resume = [entry(PENDING, ResumeStatus::Resolved, Some(json!("yes")))];
        for state in [
            TaskState::Working,
            TaskState::Completed,
            TaskState::Canceled,
        ] {
            let err =
                resume_message(&resume, &task(state, Some(vec![Part::text("?")]))).unwrap_err();
            assert_eq!(err.code(), "bridge:invalid_resume");
            assert!(err.to_string().contains(state.label()), "{err}");
        }
        // auth-required is an interrupt too.
        let auth = task(TaskState::AuthRequired, Some(vec![Part::text("Sign in")]));
        assert!(resume_message(&resume, &auth).unwrap().is_some());
    }

    #[test]
    fn without_a_status_message_the_interrupt_is_any_seq_of_the_task() {
        let bare = task(TaskState::InputRequired, None);
        let answer = |id: &str| {
            resume_message(
                &[entry(id, ResumeStatus::Resolved, Some(json!("ok")))],
                &bare,
            )
        };
        assert!(answer("task-1:17").unwrap().is_some());
        for id in ["task-1:", "task-2:17", "task-17", ""] {
            let err = answer(id).unwrap_err();
            assert_eq!(err.code(), "bridge:invalid_resume", "{id:?}");
            assert!(err.to_string().contains("task-1:<seq>"), "{err}");
        }
    }

    mod property {
        use proptest::prelude::*;

        use super::*;

        fn id() -> impl Strategy<Value = String> {
            // No `-`: the thread and run ids have one, so a leak is visible.
            "[a-z0-9]{1,6}"
        }

        fn text() -> impl Strategy<Value = String> {
            "[^-]{0,12}"
        }

        fn content() -> impl Strategy<Value = Value> {
            let source = prop_oneof![
                ("[A-Za-z0-9+/=]{0,12}", text())
                    .prop_map(|(v, m)| json!({"type": "data", "value": v, "mimeType": m})),
                (text(), proptest::option::of(text()))
                    .prop_map(|(v, m)| json!({"type": "url", "value": v, "mimeType": m})),
                (text(), proptest::option::of(text()))
                    .prop_map(|(v, p)| json!({"type": "file", "value": v, "provider": p})),
            ];
            let part = prop_oneof![
                text().prop_map(|t| json!({"type": "text", "text": t})),
                (
                    prop_oneof![
                        Just("image"),
                        Just("audio"),
                        Just("video"),
                        Just("document")
                    ],
                    source
                )
                    .prop_map(|(kind, source)| json!({"type": kind, "source": source})),
            ];
            prop_oneof![
                text().prop_map(Value::from),
                proptest::collection::vec(part, 0..3).prop_map(Value::from),
            ]
        }

        fn metadata() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(json!({})),
                Just(json!({"other": 1})),
                text().prop_map(|t| json!({ENGRAM_URI: {"setting": t}})),
                Just(json!({ENGRAM_URI: 3})),
            ]
        }

        fn message() -> impl Strategy<Value = Value> {
            let call = (id(), text(), text()).prop_map(|(id, name, arguments)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            });
            let role = prop_oneof![
                content().prop_map(|c| json!({"role": "user", "content": c})),
                (
                    proptest::option::of(text()),
                    proptest::collection::vec(call, 0..3)
                )
                    .prop_map(
                        |(c, calls)| json!({"role": "assistant", "content": c, "toolCalls": calls})
                    ),
                (content(), id(), proptest::option::of(text())).prop_map(|(c, call, error)| {
                    json!({"role": "tool", "content": c, "toolCallId": call, "error": error})
                }),
                (
                    prop_oneof![Just("system"), Just("developer"), Just("reasoning")],
                    text()
                )
                    .prop_map(|(role, c)| json!({"role": role, "content": c})),
                Just(json!({"role": "activity", "activityType": "X", "content": {}})),
            ];
            (role, id(), metadata()).prop_map(|(mut message, id, metadata)| {
                let fields = message.as_object_mut().unwrap();
                fields.retain(|_, v| !v.is_null());
                fields.insert("id".into(), Value::from(id));
                fields.insert("metadata".into(), metadata);
                message
            })
        }

        proptest! {
            #[test]
            fn any_input_converts_or_fails_cleanly_without_leaking_ids(
                messages in proptest::collection::vec(message(), 0..6),
                known in any::<bool>(),
                forward_system_messages in any::<bool>(),
                engram in any::<bool>(),
            ) {
                let run = input(Value::from(messages));
                let addressing = if known { known_context() } else { new_context() };
                let config = BridgeConfig { forward_system_messages, engram, ..BridgeConfig::default() };
                match outbound(&run, &addressing, &config) {
                    Ok(Some(out)) => {
                        let text = serde_json::to_string(&out.message).unwrap();
                        for leak in [THREAD, RUN, PARENT_RUN, LEGACY_URI] {
                            prop_assert!(!text.contains(leak), "{} in {}", leak, text);
                        }
                        prop_assert!(!out.message.parts.is_empty());
                        prop_assert_eq!(out.message.context_id, addressing.context_id);
                        prop_assert_eq!(out.extensions.is_empty(), !text.contains("engram.config"));
                    }
                    Ok(None) => {}
                    Err(err) => prop_assert_eq!(err.code(), "bridge:invalid_input"),
                }
            }
        }
    }
}
