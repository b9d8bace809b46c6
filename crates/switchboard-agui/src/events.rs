//! The AG-UI 1.0 event model, field for field as `@ag-ui/core` 1.0.0 has it.
//!
//! An [`Event`] is the base fields every event may carry (`timestamp`,
//! `rawEvent`, `metadata`) around an [`EventKind`], the 31 event types of
//! the protocol. On the wire (JSON) it is one flat object whose `type` names
//! the kind in SCREAMING_SNAKE case:
//!
//! ```json
//! {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hi","timestamp":1767225600000}
//! ```
//!
//! Rules the official client enforces, and that these types keep:
//! - keys are camelCase;
//! - optional fields are *omitted* when absent, never written as `null`
//!   (the client's schemas reject a `null` optional field, which kills the run):
//!   every type here with `Option` fields carries
//!   `#[serde_with::skip_serializing_none]`, so none can be forgotten;
//! - `timestamp` is an integer (milliseconds since the Unix epoch), never a float;
//! - 1.0 has no `THINKING_*` events: model reasoning is `REASONING_*`.
//!
//! `subagentRunId` exists on every event except the run-scoped ones
//! (`RUN_STARTED`, `RUN_FINISHED`, `RUN_ERROR`, `MESSAGES_SNAPSHOT`); absent
//! means "produced by the parent agent".

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// A JSON object (AG-UI `metadata`, activity `content`).
pub type JsonObject = Map<String, Value>;

/// The AG-UI protocol version these types implement (`RUN_STARTED.protocolVersion`).
pub const PROTOCOL_VERSION: &str = "1.0";

/// One AG-UI event: the base fields plus what kind of event it is.
///
/// On the wire the kind's `type` and fields and the base fields are one
/// object (serialized by hand, see `impl Serialize for Event`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// The event's type and its own fields.
    #[serde(flatten)]
    pub kind: EventKind,
    /// When the event was made, in milliseconds since the Unix epoch.
    pub timestamp: Option<i64>,
    /// The provider-native event this one was translated from (any JSON but `null`).
    pub raw_event: Option<Value>,
    /// Extra information; the key `"ag-ui"` is reserved for the protocol.
    pub metadata: Option<JsonObject>,
}

impl Event {
    /// An event with no base fields set.
    pub fn new(kind: impl Into<EventKind>) -> Self {
        Event {
            kind: kind.into(),
            timestamp: None,
            raw_event: None,
            metadata: None,
        }
    }

    /// Sets `timestamp` (milliseconds since the Unix epoch).
    pub fn with_timestamp(mut self, millis: i64) -> Self {
        self.timestamp = Some(millis);
        self
    }

    /// Sets `metadata`.
    pub fn with_metadata(mut self, metadata: JsonObject) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The wire name of the event's type, e.g. `TEXT_MESSAGE_START`.
    pub fn type_name(&self) -> &'static str {
        self.kind.type_name()
    }

    /// The event's `subagentRunId`, for the kinds a run's content is made
    /// of (text, reasoning, tool calls and results, custom events); `None`
    /// for the others.
    pub fn subagent_run_id_mut(&mut self) -> Option<&mut Option<String>> {
        use EventKind as K;
        Some(match &mut self.kind {
            K::TextMessageStart(e) => &mut e.subagent_run_id,
            K::TextMessageContent(e) => &mut e.subagent_run_id,
            K::TextMessageEnd(e) => &mut e.subagent_run_id,
            K::ToolCallStart(e) => &mut e.subagent_run_id,
            K::ToolCallArgs(e) => &mut e.subagent_run_id,
            K::ToolCallEnd(e) => &mut e.subagent_run_id,
            K::ToolCallResult(e) => &mut e.subagent_run_id,
            K::ReasoningStart(e) => &mut e.subagent_run_id,
            K::ReasoningMessageStart(e) => &mut e.subagent_run_id,
            K::ReasoningMessageContent(e) => &mut e.subagent_run_id,
            K::ReasoningMessageEnd(e) => &mut e.subagent_run_id,
            K::ReasoningEnd(e) => &mut e.subagent_run_id,
            K::Custom(e) => &mut e.subagent_run_id,
            _ => return None,
        })
    }

    /// Whether the event ends its run: RUN_FINISHED or RUN_ERROR.
    pub fn ends_run(&self) -> bool {
        matches!(
            self.kind,
            EventKind::RunFinished(_) | EventKind::RunError(_)
        )
    }
}

impl Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Nearly every event has no base field set, and then the kind alone
        // writes the very object `#[serde(flatten)]` would (`type`, then the
        // kind's fields), without flatten's generic map path, which cost
        // ~1.5k instructions per event (bench/RESULTS.md, "Session 13, p18").
        if self.timestamp.is_none() && self.raw_event.is_none() && self.metadata.is_none() {
            return self.kind.serialize(serializer);
        }
        WithBaseFields {
            kind: &self.kind,
            timestamp: self.timestamp,
            raw_event: self.raw_event.as_ref(),
            metadata: self.metadata.as_ref(),
        }
        .serialize(serializer)
    }
}

/// An [`Event`] with base fields, as written: the kind's fields, then the
/// base fields that are set.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WithBaseFields<'a> {
    #[serde(flatten)]
    kind: &'a EventKind,
    timestamp: Option<i64>,
    raw_event: Option<&'a Value>,
    metadata: Option<&'a JsonObject>,
}

impl<K: Into<EventKind>> From<K> for Event {
    fn from(kind: K) -> Self {
        Event::new(kind)
    }
}

/// Declares the event kinds: the enum, its wire names and `From` for each
/// payload struct, so the three never disagree.
macro_rules! event_kinds {
    ($( $(#[$doc:meta])* $variant:ident($payload:ident) = $wire:literal, )*) => {
        /// The 31 event types of AG-UI 1.0, each with its own fields.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type")]
        #[non_exhaustive]
        pub enum EventKind {
            $( $(#[$doc])* #[serde(rename = $wire)] $variant($payload), )*
        }

        impl EventKind {
            /// Every wire name, in the order of the protobuf envelope's fields.
            pub const TYPE_NAMES: &'static [&'static str] = &[$($wire),*];

            /// The wire name, e.g. `TEXT_MESSAGE_START`.
            pub fn type_name(&self) -> &'static str {
                match self { $( Self::$variant(_) => $wire, )* }
            }
        }

        $(
            impl From<$payload> for EventKind {
                fn from(p: $payload) -> Self { Self::$variant(p) }
            }
        )*
    };
}

event_kinds! {
    /// A text message begins.
    TextMessageStart(TextMessageStart) = "TEXT_MESSAGE_START",
    /// A piece of a text message.
    TextMessageContent(TextMessageContent) = "TEXT_MESSAGE_CONTENT",
    /// A text message ends.
    TextMessageEnd(TextMessageEnd) = "TEXT_MESSAGE_END",
    /// A tool call begins.
    ToolCallStart(ToolCallStart) = "TOOL_CALL_START",
    /// A piece of a tool call's JSON arguments.
    ToolCallArgs(ToolCallArgs) = "TOOL_CALL_ARGS",
    /// A tool call's arguments are complete.
    ToolCallEnd(ToolCallEnd) = "TOOL_CALL_END",
    /// The whole shared state.
    StateSnapshot(StateSnapshot) = "STATE_SNAPSHOT",
    /// A change to the shared state (RFC 6902).
    StateDelta(StateDelta) = "STATE_DELTA",
    /// The whole conversation.
    MessagesSnapshot(MessagesSnapshot) = "MESSAGES_SNAPSHOT",
    /// An event from another system, passed through.
    Raw(Raw) = "RAW",
    /// An application-defined event.
    Custom(Custom) = "CUSTOM",
    /// A run begins (always the first event of a run).
    RunStarted(RunStarted) = "RUN_STARTED",
    /// A run ends (success, interrupt or cancelled).
    RunFinished(RunFinished) = "RUN_FINISHED",
    /// A run fails (terminal).
    RunError(RunError) = "RUN_ERROR",
    /// A step begins.
    StepStarted(StepStarted) = "STEP_STARTED",
    /// A step ends.
    StepFinished(StepFinished) = "STEP_FINISHED",
    /// Text message shorthand; the client expands it into START/CONTENT/END.
    TextMessageChunk(TextMessageChunk) = "TEXT_MESSAGE_CHUNK",
    /// Tool call shorthand; the client expands it into START/ARGS/END.
    ToolCallChunk(ToolCallChunk) = "TOOL_CALL_CHUNK",
    /// A sub-agent run begins.
    SubagentStarted(SubagentStarted) = "SUBAGENT_STARTED",
    /// A sub-agent run ends.
    SubagentFinished(SubagentFinished) = "SUBAGENT_FINISHED",
    /// A sub-agent run fails.
    SubagentError(SubagentError) = "SUBAGENT_ERROR",
    /// The result of a tool call (mints a `tool` message).
    ToolCallResult(ToolCallResult) = "TOOL_CALL_RESULT",
    /// The whole content of an activity (a progress widget, a form).
    ActivitySnapshot(ActivitySnapshot) = "ACTIVITY_SNAPSHOT",
    /// A change to an activity's content (RFC 6902).
    ActivityDelta(ActivityDelta) = "ACTIVITY_DELTA",
    /// A reasoning span begins.
    ReasoningStart(ReasoningStart) = "REASONING_START",
    /// A reasoning message begins.
    ReasoningMessageStart(ReasoningMessageStart) = "REASONING_MESSAGE_START",
    /// A piece of a reasoning message.
    ReasoningMessageContent(ReasoningMessageContent) = "REASONING_MESSAGE_CONTENT",
    /// A reasoning message ends.
    ReasoningMessageEnd(ReasoningMessageEnd) = "REASONING_MESSAGE_END",
    /// Reasoning message shorthand.
    ReasoningMessageChunk(ReasoningMessageChunk) = "REASONING_MESSAGE_CHUNK",
    /// A reasoning span ends.
    ReasoningEnd(ReasoningEnd) = "REASONING_END",
    /// Encrypted reasoning attached to a message or tool call.
    ReasoningEncryptedValue(ReasoningEncryptedValue) = "REASONING_ENCRYPTED_VALUE",
}

/// `Option<Value>` that keeps an explicit `null` as `Some(Value::Null)`
/// (a JSON Patch `add` of `null` is legitimate; an absent value is not the same).
fn some_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Declares a payload struct: camelCase, optional fields skipped when absent.
macro_rules! payload {
    ($(#[$doc:meta])* $name:ident { $( $(#[$fdoc:meta])* $field:ident : $ty:ty ),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            $(
                $(#[$fdoc])*
                pub $field: $ty,
            )*
        }
    };
}

/// Declares a payload struct whose optional fields are `Option`s skipped
/// when `None`; required fields first, then `?`-marked optional ones.
macro_rules! event_payload {
    ($(#[$doc:meta])* $name:ident {
        $( $(#[$rdoc:meta])* $req:ident : $rty:ty ),* ;
        $( $(#[$odoc:meta])* $opt:ident : $oty:ty ),* $(,)?
    }) => {
        $(#[$doc])*
        #[serde_with::skip_serializing_none]
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            $( $(#[$rdoc])* pub $req: $rty, )*
            $( $(#[$odoc])* pub $opt: Option<$oty>, )*
        }
    };
}

event_payload!(
    /// `TEXT_MESSAGE_START`.
    TextMessageStart {
        /// The message's id.
        message_id: String;
        /// Who speaks; absent means assistant.
        role: TextRole,
        /// A display name.
        name: String,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `TEXT_MESSAGE_CONTENT`.
    TextMessageContent {
        /// The open message this belongs to.
        message_id: String,
        /// The new text (may be empty).
        delta: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `TEXT_MESSAGE_END`.
    TextMessageEnd {
        /// The message that ends.
        message_id: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `TEXT_MESSAGE_CHUNK`: every field optional.
    TextMessageChunk {
        ;
        /// The message (required on its first chunk).
        message_id: String,
        /// Who speaks.
        role: TextRole,
        /// The new text.
        delta: String,
        /// A display name.
        name: String,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `TOOL_CALL_START`.
    ToolCallStart {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_call_name: String;
        /// The assistant message the call belongs to.
        parent_message_id: String,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `TOOL_CALL_ARGS`.
    ToolCallArgs {
        /// The open call.
        tool_call_id: String,
        /// A fragment of the JSON arguments text (may be empty).
        delta: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `TOOL_CALL_END`.
    ToolCallEnd {
        /// The call whose arguments are complete.
        tool_call_id: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `TOOL_CALL_CHUNK`: every field optional.
    ToolCallChunk {
        ;
        /// The call (required on its first chunk).
        tool_call_id: String,
        /// The tool (required on its first chunk).
        tool_call_name: String,
        /// The assistant message the call belongs to.
        parent_message_id: String,
        /// A fragment of the arguments.
        delta: String,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `TOOL_CALL_RESULT`.
    ToolCallResult {
        /// The id of the `tool` message this result becomes.
        message_id: String,
        /// The call this answers.
        tool_call_id: String,
        /// The result: text or content parts.
        content: Content;
        /// Always `tool` when present.
        role: ToolRole,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `STATE_SNAPSHOT`: the whole state (any JSON value).
    StateSnapshot {
        /// The state.
        snapshot: Value;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `STATE_DELTA`: RFC 6902 operations on the state.
    StateDelta {
        /// The operations, applied in order.
        delta: Vec<PatchOp>;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

payload!(
    /// `MESSAGES_SNAPSHOT`: the whole conversation.
    MessagesSnapshot {
        /// The messages.
        messages: Vec<Message>,
    }
);

event_payload!(
    /// `ACTIVITY_SNAPSHOT`: an activity message's whole content.
    ActivitySnapshot {
        /// The activity message's id.
        message_id: String,
        /// What kind of activity (a UI picks a renderer by it).
        activity_type: String,
        /// The content.
        content: JsonObject;
        /// `false` keeps existing content (default `true`: overwrite).
        replace: bool,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `ACTIVITY_DELTA`: RFC 6902 operations on an activity's content.
    ActivityDelta {
        /// The activity message's id.
        message_id: String,
        /// What kind of activity.
        activity_type: String,
        /// The operations.
        patch: Vec<PatchOp>;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `RAW`: an event of another system.
    Raw {
        /// The event, verbatim.
        event: Value;
        /// Which system it came from.
        source: String,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `CUSTOM`: an application-defined event (name it `<app>:<x>`).
    Custom {
        /// Its name.
        name: String,
        /// Its value (required).
        value: Value;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `RUN_STARTED`: the first event of every run.
    RunStarted {
        /// The conversation.
        thread_id: String,
        /// This run.
        run_id: String;
        /// The run this one continues from.
        parent_run_id: String,
        /// The request, echoed.
        input: Box<RunAgentInput>,
        /// The producer's protocol version (`"1.0"`).
        protocol_version: String,
    }
);

event_payload!(
    /// `RUN_FINISHED`: the run ended without error.
    RunFinished {
        /// The conversation.
        thread_id: String,
        /// This run.
        run_id: String;
        /// The run's result (any JSON but `null`).
        result: Value,
        /// How it ended; absent means success.
        outcome: RunFinishedOutcome,
        /// Tokens used.
        usage: Vec<TokenUsage>,
    }
);

event_payload!(
    /// `RUN_ERROR`: the run failed; nothing may follow but a new `RUN_STARTED`.
    RunError {
        /// What went wrong.
        message: String;
        /// A machine-readable code.
        code: String,
        /// Tokens used.
        usage: Vec<TokenUsage>,
    }
);

event_payload!(
    /// `STEP_STARTED`.
    StepStarted {
        /// The step.
        step_name: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `STEP_FINISHED`.
    StepFinished {
        /// The step.
        step_name: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `SUBAGENT_STARTED`.
    SubagentStarted {
        /// The sub-agent run (required here).
        subagent_run_id: String,
        /// The sub-agent's name.
        name: String;
        /// What it does.
        description: String,
        /// The sub-agent run that started this one.
        parent_subagent_run_id: String,
        /// The tool call that started it.
        parent_tool_call_id: String,
        /// The message that started it.
        parent_message_id: String,
    }
);

event_payload!(
    /// `SUBAGENT_FINISHED`.
    SubagentFinished {
        /// The sub-agent run.
        subagent_run_id: String;
        /// Its result.
        result: Value,
        /// How it ended.
        outcome: SubagentOutcome,
    }
);

event_payload!(
    /// `SUBAGENT_ERROR`.
    SubagentError {
        /// The sub-agent run.
        subagent_run_id: String,
        /// What went wrong.
        message: String;
        /// A machine-readable code.
        code: String,
    }
);

event_payload!(
    /// `REASONING_START`: a reasoning span begins.
    ReasoningStart {
        /// The span's id.
        message_id: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `REASONING_MESSAGE_START` (its role is always `reasoning`).
    ReasoningMessageStart {
        /// The reasoning message's id.
        message_id: String,
        /// Always [`ReasoningRole::Reasoning`].
        role: ReasoningRole;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `REASONING_MESSAGE_CONTENT`.
    ReasoningMessageContent {
        /// The open reasoning message.
        message_id: String,
        /// The new text.
        delta: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `REASONING_MESSAGE_END`.
    ReasoningMessageEnd {
        /// The reasoning message that ends.
        message_id: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `REASONING_MESSAGE_CHUNK`: every field optional.
    ReasoningMessageChunk {
        ;
        /// The reasoning message (required on its first chunk).
        message_id: String,
        /// The new text.
        delta: String,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `REASONING_END`: a reasoning span ends.
    ReasoningEnd {
        /// The span.
        message_id: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// `REASONING_ENCRYPTED_VALUE`.
    ReasoningEncryptedValue {
        /// What the value is attached to.
        subtype: EncryptedSubtype,
        /// The message or tool call's id.
        entity_id: String,
        /// The opaque value.
        encrypted_value: String;
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

/// The roles a text message may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextRole {
    /// A developer instruction.
    Developer,
    /// A system prompt.
    System,
    /// The agent (the default).
    #[default]
    Assistant,
    /// The user.
    User,
}

/// The one role a tool result may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolRole {
    /// `tool`.
    #[default]
    Tool,
}

/// The one role a reasoning message has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningRole {
    /// `reasoning`.
    #[default]
    Reasoning,
}

/// What an encrypted reasoning value is attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EncryptedSubtype {
    /// A tool call.
    ToolCall,
    /// A message.
    #[default]
    Message,
}

/// How a run ended (`RUN_FINISHED.outcome`), discriminated by `type`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum RunFinishedOutcome {
    /// Done. Frontend tool calls left unanswered are listed.
    Success {
        /// Tool calls the client should answer in its next input.
        #[serde(rename = "pendingToolCallIds")]
        pending_tool_call_ids: Option<Vec<String>>,
    },
    /// Paused: the next run resumes with `resume[]` covering every interrupt.
    Interrupt {
        /// What the run waits for (at least one).
        interrupts: Vec<Interrupt>,
    },
    /// Stopped by the runner; not a failure.
    Cancelled,
}

/// Why a run paused (`RUN_FINISHED.outcome.interrupts[]`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    /// Stable id; `resume[].interruptId` names it.
    pub id: String,
    /// `tool_call`, `input_required`, `confirmation` or `<framework>:<name>`.
    pub reason: String,
    /// A prompt for the human.
    pub message: Option<String>,
    /// The tool call awaiting approval.
    pub tool_call_id: Option<String>,
    /// JSON Schema (an object) of the expected answer.
    pub response_schema: Option<JsonObject>,
    /// When the interrupt expires (ISO 8601).
    pub expires_at: Option<String>,
    /// Extra information.
    pub metadata: Option<JsonObject>,
    /// The sub-agent run that raised it.
    pub subagent_run_id: Option<String>,
}

/// How a sub-agent run ended.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum SubagentOutcome {
    /// Done.
    Success,
    /// Waiting on interrupts of the parent run.
    Suspended {
        /// The interrupts it waits on.
        #[serde(rename = "interruptIds")]
        interrupt_ids: Option<Vec<String>>,
    },
}

/// Token counts; `reasoning`/`cached` are parts of the output/input totals.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// The model provider.
    pub provider: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// Input tokens.
    pub input_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
    /// All tokens.
    pub total_tokens: Option<u64>,
    /// Reasoning tokens (part of output).
    pub reasoning_tokens: Option<u64>,
    /// Cached input tokens (part of input).
    pub cached_input_tokens: Option<u64>,
    /// Input tokens written to a cache (part of input).
    pub cache_write_input_tokens: Option<u64>,
}

/// One RFC 6902 operation (`STATE_DELTA.delta[]`, `ACTIVITY_DELTA.patch[]`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatchOp {
    /// The operation.
    pub op: PatchOpKind,
    /// JSON Pointer of the target.
    pub path: String,
    /// JSON Pointer of the source (`move`, `copy`).
    pub from: Option<String>,
    /// The value (`add`, `replace`, `test`); `null` is a legitimate value.
    #[serde(default, deserialize_with = "some_value")]
    pub value: Option<Value>,
}

impl PatchOp {
    /// `add` at `path`.
    pub fn add(path: impl Into<String>, value: Value) -> Self {
        Self::with_value(PatchOpKind::Add, path, value)
    }

    /// `replace` at `path`.
    pub fn replace(path: impl Into<String>, value: Value) -> Self {
        Self::with_value(PatchOpKind::Replace, path, value)
    }

    /// `remove` at `path`.
    pub fn remove(path: impl Into<String>) -> Self {
        PatchOp {
            op: PatchOpKind::Remove,
            path: path.into(),
            from: None,
            value: None,
        }
    }

    fn with_value(op: PatchOpKind, path: impl Into<String>, value: Value) -> Self {
        PatchOp {
            op,
            path: path.into(),
            from: None,
            value: Some(value),
        }
    }
}

/// The six RFC 6902 operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PatchOpKind {
    /// Insert or set.
    Add,
    /// Delete.
    Remove,
    /// Overwrite an existing value.
    Replace,
    /// Move from `from`.
    Move,
    /// Copy from `from`.
    Copy,
    /// Assert a value.
    Test,
}

/// Text, or a list of content parts (user and tool messages, tool results).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Multimodal parts.
    Parts(Vec<ContentPart>),
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

/// One part of multimodal content, discriminated by `type`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// The part's id.
        id: Option<String>,
        /// Extra information.
        metadata: Option<Value>,
    },
    /// An image.
    Image(MediaPart),
    /// Audio.
    Audio(MediaPart),
    /// Video.
    Video(MediaPart),
    /// A document.
    Document(MediaPart),
}

/// The fields of a media content part.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediaPart {
    /// Where the bytes are.
    pub source: PartSource,
    /// The part's id.
    pub id: Option<String>,
    /// Extra information.
    pub metadata: Option<Value>,
}

/// Where a media part's bytes are, discriminated by `type`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum PartSource {
    /// Inline base64.
    Data {
        /// The base64 bytes.
        value: String,
        /// Their media type (required).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A URL.
    Url {
        /// The URL.
        value: String,
        /// The media type.
        #[serde(rename = "mimeType")]
        mime_type: Option<String>,
    },
    /// A provider's file handle.
    File {
        /// The handle.
        value: String,
        /// The provider.
        provider: Option<String>,
        /// The media type.
        #[serde(rename = "mimeType")]
        mime_type: Option<String>,
    },
}

/// A conversation message, discriminated by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    /// A developer instruction.
    Developer(PlainMessage),
    /// A system prompt.
    System(PlainMessage),
    /// The agent's message.
    Assistant(AssistantMessage),
    /// The user's message.
    User(UserMessage),
    /// A tool result.
    Tool(ToolMessage),
    /// An activity (progress widget, form); not sent back by clients.
    Activity(ActivityMessage),
    /// Reasoning.
    Reasoning(ReasoningMessage),
}

impl Message {
    /// The message's id.
    pub fn id(&self) -> &str {
        match self {
            Message::Developer(m) | Message::System(m) => &m.id,
            Message::Assistant(m) => &m.id,
            Message::User(m) => &m.id,
            Message::Tool(m) => &m.id,
            Message::Activity(m) => &m.id,
            Message::Reasoning(m) => &m.id,
        }
    }
}

event_payload!(
    /// A developer or system message.
    PlainMessage {
        /// Its id.
        id: String,
        /// Its text.
        content: String;
        /// A display name.
        name: String,
        /// Opaque encrypted content.
        encrypted_value: String,
        /// Extra information.
        metadata: JsonObject,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// An assistant message.
    AssistantMessage {
        /// Its id.
        id: String;
        /// Its text.
        content: String,
        /// The tool calls it made.
        tool_calls: Vec<ToolCall>,
        /// A display name.
        name: String,
        /// Opaque encrypted content.
        encrypted_value: String,
        /// Extra information.
        metadata: JsonObject,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// A user message.
    UserMessage {
        /// Its id.
        id: String,
        /// Text or parts.
        content: Content;
        /// A display name.
        name: String,
        /// Opaque encrypted content.
        encrypted_value: String,
        /// Extra information.
        metadata: JsonObject,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// A tool result message.
    ToolMessage {
        /// Its id.
        id: String,
        /// Text or parts.
        content: Content,
        /// The call it answers.
        tool_call_id: String;
        /// An error, when the tool failed.
        error: String,
        /// Opaque encrypted content.
        encrypted_value: String,
        /// Extra information.
        metadata: JsonObject,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// An activity message.
    ActivityMessage {
        /// Its id.
        id: String,
        /// What kind of activity.
        activity_type: String,
        /// Its content.
        content: JsonObject;
        /// Extra information.
        metadata: JsonObject,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

event_payload!(
    /// A reasoning message.
    ReasoningMessage {
        /// Its id.
        id: String,
        /// Its text.
        content: String;
        /// Opaque encrypted content.
        encrypted_value: String,
        /// Extra information.
        metadata: JsonObject,
        /// The sub-agent run that produced it.
        subagent_run_id: String,
    }
);

/// A tool call made by an assistant message.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The call's id.
    pub id: String,
    /// Always `"function"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The function and its arguments.
    pub function: FunctionCall,
    /// Opaque encrypted content.
    pub encrypted_value: Option<String>,
    /// Extra information.
    pub metadata: Option<JsonObject>,
}

payload!(
    /// The function a tool call invokes.
    FunctionCall {
        /// The tool's name.
        name: String,
        /// The arguments as JSON text.
        arguments: String,
    }
);

/// The body of a run request (and `RUN_STARTED.input`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    /// The conversation.
    pub thread_id: String,
    /// The run to start.
    pub run_id: String,
    /// The whole conversation so far.
    pub messages: Vec<Message>,
    /// Tools the client offers (frontend tools).
    pub tools: Option<Vec<Tool>>,
    /// Context for the agent.
    pub context: Option<Vec<Context>>,
    /// The client's protocol version.
    pub protocol_version: Option<String>,
    /// The run this one continues.
    pub parent_run_id: Option<String>,
    /// The client's state.
    pub state: Option<Value>,
    /// App-specific passthrough.
    pub forwarded_props: Option<Value>,
    /// Answers to the previous run's interrupts.
    pub resume: Option<Vec<ResumeEntry>>,
}

/// A tool the client offers.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Option<Value>,
    /// Extra information.
    pub metadata: Option<JsonObject>,
}

payload!(
    /// A piece of context for the agent.
    Context {
        /// What it is.
        description: String,
        /// The value.
        value: String,
    }
);

/// The answer to one interrupt.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeEntry {
    /// The interrupt answered.
    pub interrupt_id: String,
    /// `resolved` or `cancelled`.
    pub status: ResumeStatus,
    /// The answer.
    pub payload: Option<Value>,
    /// Extra information.
    pub metadata: Option<JsonObject>,
}

/// How an interrupt was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResumeStatus {
    /// Answered.
    Resolved,
    /// Declined.
    Cancelled,
}
