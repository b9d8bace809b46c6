//! Part hints: what an A2A part *is*, written into its `metadata`.
//!
//! A2A parts are text, bytes, URLs or JSON; A2A does not say whether a text
//! part is the answer, the model's reasoning or a code listing, nor that a
//! JSON part is a tool call. AG-UI UIs need exactly that. The hints, named as
//! in the AG-UI metadata schema (seed 004), say it in the part's `metadata`,
//! which A2A leaves open for extensions — so every hinted part is still an
//! ordinary, valid A2A part, and A2A-only clients simply ignore the keys.
//!
//! | key | type | meaning |
//! |---|---|---|
//! | `agui_event_type` | string | `content_block`, `thinking`, `tool_call`, `task`, `error` or `message` |
//! | `agui_block_type` | string | for content blocks: `text`, `thinking` or `code` |
//! | `agui_block_id` | string | the block this part belongs to (parts with the same id continue it) |
//! | `agui_block_index` | integer | the block's position within its message |
//! | `agui_tool_call_id` | string | the tool call (calls and results) |
//! | `agui_tool_name` | string | the tool (calls) |
//! | `agui_is_error` | boolean | on tool results: whether the tool failed; its *presence* marks a result |
//! | `agui_subagent_run_id` | string | the part is the output of another agent's run, this one (a task the agent delegated to) |
//! | `agui_subagent_name` | string | that agent's name |
//! | `agui_predict_state` | array | on tool calls: `[{"state_key", "tool_argument"}]`, the state keys a UI may predict from the call's arguments while it streams |
//!
//! Readers ([`PartHints::read`]) also accept the unprefixed keys Hector's
//! code writes (`event_type`, `block_type`, `block_id`, `block_index`,
//! `tool_call_id`, `tool_name`, `is_error`); the prefixed key wins when both
//! are present. Writers always use the prefixed keys.
//!
//! Tool calls and results are data parts shaped as the seed shows:
//! a call is `{"id", "name", "arguments"}`, a result
//! `{"tool_call_id", "content", "error"}` (readers also take the payload
//! wrapped once more in `{"data": …}`, as 0.3-era producers write it).
//!
//! Update metadata (a status update's or an artifact update's, or a status
//! message's) may hold [`AGENT_STATE`] (`agui_state`): the agent's own
//! state, a JSON object whose keys replace those it reported before (see
//! [`crate::view`]).
//!
//! Agents emit hinted parts with [`TaskEventsExt::agui_writer`]: a
//! [`HintedWriter`] streams text, reasoning, code, tool calls, tool results
//! and errors as the chunks of one artifact, numbering blocks as it goes.

use serde_json::{Map, Value, json};
use switchboard_core::{ArtifactWriter, EmitError, TaskEvents};
use switchboard_protocol::{Metadata, Part, PartContent};

/// `agui_event_type`.
pub const EVENT_TYPE: &str = "agui_event_type";
/// `agui_block_type`.
pub const BLOCK_TYPE: &str = "agui_block_type";
/// `agui_block_id`.
pub const BLOCK_ID: &str = "agui_block_id";
/// `agui_block_index`.
pub const BLOCK_INDEX: &str = "agui_block_index";
/// `agui_tool_call_id`.
pub const TOOL_CALL_ID: &str = "agui_tool_call_id";
/// `agui_tool_name`.
pub const TOOL_NAME: &str = "agui_tool_name";
/// `agui_is_error`.
pub const IS_ERROR: &str = "agui_is_error";
/// `agui_subagent_run_id`.
pub const SUBAGENT_RUN_ID: &str = "agui_subagent_run_id";
/// `agui_subagent_name`.
pub const SUBAGENT_NAME: &str = "agui_subagent_name";
/// `agui_predict_state`.
pub const PREDICT_STATE: &str = "agui_predict_state";
/// `agui_state`: in update metadata, the agent's own state (an object).
pub const AGENT_STATE: &str = "agui_state";

/// The hint event types of the seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HintEventType {
    /// `content_block`.
    ContentBlock,
    /// `thinking`.
    Thinking,
    /// `tool_call` (calls and results).
    ToolCall,
    /// `task`.
    Task,
    /// `error`.
    Error,
    /// `message`.
    Message,
    /// Any other value, kept as written.
    Other(String),
}

impl HintEventType {
    /// Reads a value (unknown ones are kept as [`HintEventType::Other`]).
    pub fn parse(s: &str) -> Self {
        match s {
            "content_block" => Self::ContentBlock,
            "thinking" => Self::Thinking,
            "tool_call" => Self::ToolCall,
            "task" => Self::Task,
            "error" => Self::Error,
            "message" => Self::Message,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The value as written in metadata.
    pub fn as_str(&self) -> &str {
        match self {
            Self::ContentBlock => "content_block",
            Self::Thinking => "thinking",
            Self::ToolCall => "tool_call",
            Self::Task => "task",
            Self::Error => "error",
            Self::Message => "message",
            Self::Other(s) => s,
        }
    }
}

/// The hint block types of the seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockType {
    /// `text`.
    Text,
    /// `thinking`.
    Thinking,
    /// `code`.
    Code,
    /// Any other value, kept as written.
    Other(String),
}

impl BlockType {
    /// Reads a value.
    pub fn parse(s: &str) -> Self {
        match s {
            "text" => Self::Text,
            "thinking" => Self::Thinking,
            "code" => Self::Code,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The value as written in metadata.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Text => "text",
            Self::Thinking => "thinking",
            Self::Code => "code",
            Self::Other(s) => s,
        }
    }
}

/// The hints of one part, as read from (or to be written to) its metadata.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartHints {
    /// `agui_event_type`.
    pub event_type: Option<HintEventType>,
    /// `agui_block_type`.
    pub block_type: Option<BlockType>,
    /// `agui_block_id`.
    pub block_id: Option<String>,
    /// `agui_block_index`.
    pub block_index: Option<u64>,
    /// `agui_tool_call_id`.
    pub tool_call_id: Option<String>,
    /// `agui_tool_name`.
    pub tool_name: Option<String>,
    /// `agui_is_error`; present (even `false`) only on tool results.
    pub is_error: Option<bool>,
    /// `agui_subagent_run_id`.
    pub subagent_run_id: Option<String>,
    /// `agui_subagent_name`.
    pub subagent_name: Option<String>,
}

/// What a part is, once its hints are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartRole {
    /// No hints: an ordinary part.
    Plain,
    /// Answer text.
    Text,
    /// Model reasoning.
    Reasoning,
    /// A code listing.
    Code,
    /// A tool call.
    ToolCall,
    /// A tool's result.
    ToolResult,
    /// An error report.
    Error,
}

impl PartHints {
    /// Reads the hints of `part` (none when it has no metadata).
    pub fn read(part: &Part) -> PartHints {
        part.metadata
            .as_ref()
            .map(PartHints::from_metadata)
            .unwrap_or_default()
    }

    /// Reads hints from metadata, prefixed keys first, then unprefixed ones.
    pub fn from_metadata(metadata: &Metadata) -> PartHints {
        let get = |key: &str| {
            metadata
                .get(key)
                .or_else(|| metadata.get(key.trim_start_matches("agui_")))
        };
        let string = |key: &str| get(key).and_then(Value::as_str).map(str::to_owned);
        PartHints {
            event_type: get(EVENT_TYPE)
                .and_then(Value::as_str)
                .map(HintEventType::parse),
            block_type: get(BLOCK_TYPE)
                .and_then(Value::as_str)
                .map(BlockType::parse),
            block_id: string(BLOCK_ID),
            block_index: get(BLOCK_INDEX).and_then(|v| {
                v.as_u64()
                    .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            }),
            tool_call_id: string(TOOL_CALL_ID),
            tool_name: string(TOOL_NAME),
            is_error: get(IS_ERROR).and_then(Value::as_bool),
            subagent_run_id: string(SUBAGENT_RUN_ID),
            subagent_name: string(SUBAGENT_NAME),
        }
    }

    /// `true` when no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == PartHints::default()
    }

    /// Writes the hints that are set into `metadata`, with prefixed keys.
    pub fn write_to(&self, metadata: &mut Metadata) {
        let mut put = |k: &str, v: Value| {
            metadata.insert(k.to_owned(), v);
        };
        if let Some(t) = &self.event_type {
            put(EVENT_TYPE, json!(t.as_str()));
        }
        if let Some(t) = &self.block_type {
            put(BLOCK_TYPE, json!(t.as_str()));
        }
        if let Some(id) = &self.block_id {
            put(BLOCK_ID, json!(id));
        }
        if let Some(i) = self.block_index {
            put(BLOCK_INDEX, json!(i));
        }
        if let Some(id) = &self.tool_call_id {
            put(TOOL_CALL_ID, json!(id));
        }
        if let Some(n) = &self.tool_name {
            put(TOOL_NAME, json!(n));
        }
        if let Some(e) = self.is_error {
            put(IS_ERROR, json!(e));
        }
        if let Some(id) = &self.subagent_run_id {
            put(SUBAGENT_RUN_ID, json!(id));
        }
        if let Some(n) = &self.subagent_name {
            put(SUBAGENT_NAME, json!(n));
        }
    }

    /// Returns `part` with these hints added to its metadata.
    pub fn apply(&self, mut part: Part) -> Part {
        self.write_to(part.metadata.get_or_insert_with(Map::new));
        part
    }

    /// Marks the part as output of another agent's run (`run_id`, the
    /// agent named `name`).
    pub fn from_subagent(mut self, run_id: &str, name: &str) -> Self {
        self.subagent_run_id = Some(run_id.to_owned());
        self.subagent_name = Some(name.to_owned());
        self
    }

    /// What the hinted part is (the subagent keys say whose it is, not
    /// what). Thinking wins over everything (either key
    /// says so); a `tool_call` part with `is_error` present is a result, as
    /// the seed's readers decide; an `error` event type is an error report.
    pub fn role(&self) -> PartRole {
        let et = self.event_type.as_ref();
        let bt = self.block_type.as_ref();
        if et == Some(&HintEventType::Thinking) || bt == Some(&BlockType::Thinking) {
            return PartRole::Reasoning;
        }
        match et {
            Some(HintEventType::ToolCall) if self.is_error.is_some() => PartRole::ToolResult,
            Some(HintEventType::ToolCall) => PartRole::ToolCall,
            Some(HintEventType::Error) => PartRole::Error,
            _ if bt == Some(&BlockType::Code) => PartRole::Code,
            Some(_) => PartRole::Text,
            None if bt.is_some() || self.block_id.is_some() => PartRole::Text,
            None => PartRole::Plain,
        }
    }
}

fn block(kind: HintEventType, block: BlockType, id: &str, index: u64) -> PartHints {
    PartHints {
        event_type: Some(kind),
        block_type: Some(block),
        block_id: Some(id.to_owned()),
        block_index: Some(index),
        ..PartHints::default()
    }
}

/// A text content block part.
pub fn text_part(text: impl Into<String>, block_id: &str, block_index: u64) -> Part {
    block(
        HintEventType::ContentBlock,
        BlockType::Text,
        block_id,
        block_index,
    )
    .apply(Part::text(text))
}

/// A thinking (reasoning) block part.
pub fn thinking_part(text: impl Into<String>, block_id: &str, block_index: u64) -> Part {
    block(
        HintEventType::Thinking,
        BlockType::Thinking,
        block_id,
        block_index,
    )
    .apply(Part::text(text))
}

/// A code block part.
pub fn code_part(code: impl Into<String>, block_id: &str, block_index: u64) -> Part {
    block(
        HintEventType::ContentBlock,
        BlockType::Code,
        block_id,
        block_index,
    )
    .apply(Part::text(code))
}

/// A tool call part: data `{"id", "name", "arguments"}`.
pub fn tool_call_part(id: &str, name: &str, arguments: Value) -> Part {
    PartHints {
        event_type: Some(HintEventType::ToolCall),
        tool_call_id: Some(id.to_owned()),
        tool_name: Some(name.to_owned()),
        ..PartHints::default()
    }
    .apply(Part::data(
        json!({"id": id, "name": name, "arguments": arguments}),
    ))
}

/// A tool result part: data `{"tool_call_id", "content", "error"}`; `error`
/// set marks a failed call (`agui_is_error: true`).
pub fn tool_result_part(tool_call_id: &str, content: &str, error: Option<&str>) -> Part {
    PartHints {
        event_type: Some(HintEventType::ToolCall),
        tool_call_id: Some(tool_call_id.to_owned()),
        is_error: Some(error.is_some()),
        ..PartHints::default()
    }
    .apply(Part::data(json!({
        "tool_call_id": tool_call_id,
        "content": content,
        "error": error.unwrap_or(""),
    })))
}

/// An error report part (text).
pub fn error_part(message: impl Into<String>) -> Part {
    PartHints {
        event_type: Some(HintEventType::Error),
        ..PartHints::default()
    }
    .apply(Part::text(message))
}

/// A tool call read from a hinted part.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallHint {
    /// The call's id (hint first, then the payload's `id`).
    pub id: String,
    /// The tool (hint first, then the payload's `name`).
    pub name: String,
    /// The arguments (the payload's `arguments`, or a text part's text as JSON).
    pub arguments: Value,
}

/// A tool result read from a hinted part.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultHint {
    /// The call it answers.
    pub tool_call_id: String,
    /// The result text (a non-string `content` is rendered as JSON).
    pub content: String,
    /// The error text, when the tool failed.
    pub error: Option<String>,
}

/// The data payload of a part, unwrapped once from `{"data": …}` when that
/// is all it holds.
fn payload(part: &Part) -> Option<&Map<String, Value>> {
    let PartContent::Data(Value::Object(obj)) = &part.content else {
        return None;
    };
    match obj.get("data") {
        Some(Value::Object(inner)) if obj.len() == 1 => Some(inner),
        _ => Some(obj),
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Reads a tool call from a part hinted as one; `None` when it names no call id.
pub fn read_tool_call(part: &Part, hints: &PartHints) -> Option<ToolCallHint> {
    let data = payload(part);
    let field = |k: &str| data.and_then(|d| d.get(k)).and_then(Value::as_str);
    let id = hints.tool_call_id.as_deref().or(field("id"))?.to_owned();
    let name = hints
        .tool_name
        .as_deref()
        .or(field("name"))
        .unwrap_or("tool")
        .to_owned();
    let arguments = match (data, &part.content) {
        (Some(d), _) => d
            .get("arguments")
            .or_else(|| d.get("args"))
            .cloned()
            .unwrap_or(Value::Object(Map::new())),
        (None, PartContent::Text(t)) => {
            serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.clone()))
        }
        (None, _) => Value::Object(Map::new()),
    };
    Some(ToolCallHint {
        id,
        name,
        arguments,
    })
}

/// Reads a tool result from a part hinted as one; `None` when it names no call id.
pub fn read_tool_result(part: &Part, hints: &PartHints) -> Option<ToolResultHint> {
    let data = payload(part);
    let id = hints
        .tool_call_id
        .as_deref()
        .or_else(|| {
            data.and_then(|d| d.get("tool_call_id").or_else(|| d.get("toolCallId")))
                .and_then(Value::as_str)
        })?
        .to_owned();
    let content = match (data, &part.content) {
        (Some(d), _) => d.get("content").map(text_of).unwrap_or_default(),
        (None, PartContent::Text(t)) => t.clone(),
        (None, _) => String::new(),
    };
    let error_text = data
        .and_then(|d| d.get("error"))
        .map(text_of)
        .filter(|e| !e.is_empty());
    let error = match (hints.is_error, error_text) {
        (_, Some(e)) => Some(e),
        (Some(true), None) => Some(if content.is_empty() {
            "the tool failed".to_owned()
        } else {
            content.clone()
        }),
        _ => None,
    };
    Some(ToolResultHint {
        tool_call_id: id,
        content,
        error,
    })
}

/// Emitting hinted parts from an agent; implemented for [`TaskEvents`].
pub trait TaskEventsExt {
    /// Starts an artifact named `name` whose chunks are hinted parts (the
    /// name as [`TaskEvents::artifact_writer`] takes it: a `&str`, a
    /// `String`, a `format!`).
    fn agui_writer(&self, name: impl Into<String>) -> HintedWriter;

    /// Pauses the task in `input-required` with `question` (for people and
    /// plain clients) and `form` (a [`crate::hitl::form_part`]): AG-UI
    /// frontends show it as an interrupt, and the answer comes back on the
    /// same task, read with [`crate::hitl::form_values`].
    fn ask_form(
        &self,
        question: &str,
        form: Part,
    ) -> impl std::future::Future<Output = Result<(), EmitError>> + Send;
}

impl TaskEventsExt for TaskEvents {
    fn agui_writer(&self, name: impl Into<String>) -> HintedWriter {
        HintedWriter::new(self, name)
    }

    async fn ask_form(&self, question: &str, form: Part) -> Result<(), EmitError> {
        let message = switchboard_protocol::Message::new(
            switchboard_protocol::Role::Agent,
            vec![Part::text(question), form],
        );
        let status =
            switchboard_protocol::TaskStatus::new(switchboard_protocol::TaskState::InputRequired)
                .with_message(message);
        self.status(status, None).await
    }
}

/// Which kind of block is open in a [`HintedWriter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpenBlock {
    Text,
    Thinking,
    Code,
}

/// Writes text, reasoning, code, tool calls, tool results and errors as the
/// chunks of one artifact, each part hinted and its block numbered.
///
/// Consecutive calls of the same kind (`text`, `text`) continue one block,
/// so a UI renders them as one message; a different kind, a tool call or
/// [`end_block`](Self::end_block) starts the next. Every call is one
/// artifact update, durable when it returns. [`finish`](Self::finish) sends
/// the last chunk (an empty continuation of the open block).
#[derive(Debug)]
pub struct HintedWriter {
    writer: ArtifactWriter,
    next_index: u64,
    open: Option<(OpenBlock, String, u64)>,
}

impl HintedWriter {
    /// A writer for a new artifact named `name` on `events`' task.
    pub fn new(events: &TaskEvents, name: impl Into<String>) -> Self {
        HintedWriter {
            writer: events.artifact_writer(name),
            next_index: 0,
            open: None,
        }
    }

    /// The artifact's id.
    pub fn artifact_id(&self) -> &str {
        self.writer.artifact_id()
    }

    async fn send(&mut self, part: Part) -> Result<(), EmitError> {
        self.writer.append(part).await
    }

    /// The id and index of the block `kind` continues or starts.
    fn block_for(&mut self, kind: OpenBlock) -> (String, u64) {
        if let Some((open, id, index)) = &self.open
            && *open == kind
        {
            return (id.clone(), *index);
        }
        let index = self.take_index();
        let id = format!("{}-b{index}", self.artifact_id());
        self.open = Some((kind, id.clone(), index));
        (id, index)
    }

    fn take_index(&mut self) -> u64 {
        self.open = None;
        let i = self.next_index;
        self.next_index += 1;
        i
    }

    /// Answer text (continues an open text block).
    pub async fn text(&mut self, text: impl Into<String>) -> Result<(), EmitError> {
        let (id, index) = self.block_for(OpenBlock::Text);
        self.send(text_part(text, &id, index)).await
    }

    /// Reasoning (continues an open thinking block).
    pub async fn thinking(&mut self, text: impl Into<String>) -> Result<(), EmitError> {
        let (id, index) = self.block_for(OpenBlock::Thinking);
        self.send(thinking_part(text, &id, index)).await
    }

    /// Code (continues an open code block).
    pub async fn code(&mut self, code: impl Into<String>) -> Result<(), EmitError> {
        let (id, index) = self.block_for(OpenBlock::Code);
        self.send(code_part(code, &id, index)).await
    }

    /// Ends the open block: the next text, thinking or code starts a new one.
    pub fn end_block(&mut self) {
        self.open = None;
    }

    /// A tool call with its arguments.
    pub async fn tool_call(
        &mut self,
        id: &str,
        name: &str,
        arguments: Value,
    ) -> Result<(), EmitError> {
        let index = self.take_index();
        let part = with_index(tool_call_part(id, name, arguments), index);
        self.send(part).await
    }

    /// A tool's successful result.
    pub async fn tool_result(
        &mut self,
        tool_call_id: &str,
        content: &str,
    ) -> Result<(), EmitError> {
        let index = self.take_index();
        let part = with_index(tool_result_part(tool_call_id, content, None), index);
        self.send(part).await
    }

    /// A tool's failure.
    pub async fn tool_error(&mut self, tool_call_id: &str, error: &str) -> Result<(), EmitError> {
        let index = self.take_index();
        let part = with_index(tool_result_part(tool_call_id, "", Some(error)), index);
        self.send(part).await
    }

    /// An error report (the task goes on; fail it separately if it should).
    pub async fn error(&mut self, message: impl Into<String>) -> Result<(), EmitError> {
        let index = self.take_index();
        let part = with_index(error_part(message), index);
        self.send(part).await
    }

    /// Sends the last chunk and closes the artifact.
    pub async fn finish(mut self) -> Result<(), EmitError> {
        let part = match self.open.clone() {
            Some((OpenBlock::Text, id, i)) => text_part("", &id, i),
            Some((OpenBlock::Thinking, id, i)) => thinking_part("", &id, i),
            Some((OpenBlock::Code, id, i)) => code_part("", &id, i),
            None => {
                let i = self.take_index();
                let id = format!("{}-b{i}", self.artifact_id());
                text_part("", &id, i)
            }
        };
        self.writer.finish(part).await
    }
}

fn with_index(part: Part, index: u64) -> Part {
    PartHints {
        block_index: Some(index),
        ..PartHints::default()
    }
    .apply(part)
}
