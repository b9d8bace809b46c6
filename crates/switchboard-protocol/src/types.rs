//! The A2A 1.0 data objects: tasks, messages, parts, artifacts and the two
//! update events, in their canonical JSON form (ProtoJSON of `lf.a2a.v1`).
//!
//! Output rules: camelCase names, enums as their proto names, timestamps as
//! RFC 3339 UTC with `Z`, REQUIRED fields always emitted, unset optional
//! fields left out rather than written as `null` (the derived structs with `Option`
//! fields carry `#[serde_with::skip_serializing_none]`), and so are empty
//! optional lists. Input rules: the proto's snake_case names are accepted
//! as aliases, unknown fields are ignored, and `null` is accepted where a
//! list or map may appear.
//!
//! A struct whose lists are optional says so once, for all its `Vec`
//! fields, with `#[serde_with::apply(Vec => #[serde(default,
//! skip_serializing_if = "Vec::is_empty", deserialize_with =
//! "null_as_default")])]`: absent or `null` reads as empty, empty is left
//! out. A REQUIRED list among them (a message's `parts`) opts out with
//! `#[serde_with(skip_apply)]` and keeps its own attributes. The other wire
//! modules ([`crate::card`], [`crate::requests`], [`crate::v03`]) follow the
//! same rule; [`AgentCard`](crate::AgentCard), whose lists are mostly
//! REQUIRED, states only its reading half.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::serde_util::{self, null_as_default};

/// Free-form key/value metadata (`google.protobuf.Struct`).
pub type Metadata = Map<String, Value>;

/// Declares [`TaskState`] from one row per state, in proto number order:
/// the variant, its proto name (how it is written), its short label, and
/// any other spellings it is read from. Reading accepts the proto name, the
/// label and those spellings, exactly (see [`TaskState::parse`] for the
/// lenient form).
macro_rules! task_states {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $label:literal $(, $alias:literal)*;)+) => {
        /// The life-cycle state of a task.
        ///
        /// `Completed`, `Failed`, `Canceled` and `Rejected` are *terminal*: a task in
        /// one of them never changes again. `InputRequired` and `AuthRequired` are
        /// *interrupted*: the agent waits for the client.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum TaskState {
            $($(#[$doc])* $variant,)+
        }

        impl TaskState {
            /// All states, in proto number order.
            pub const ALL: [TaskState; [$($name),+].len()] = [$(TaskState::$variant),+];

            /// The proto enum name, e.g. `TASK_STATE_WORKING`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)+
                }
            }

            /// A short lowercase label for humans (`working`, `input-required`, ...).
            pub fn label(self) -> &'static str {
                match self {
                    $(Self::$variant => $label,)+
                }
            }

            /// The state `name` spells exactly: its proto name, its label, or
            /// another spelling it is read from.
            fn from_wire_name(name: &str) -> Option<TaskState> {
                match name {
                    $($name | $label $(| $alias)* => Some(Self::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

task_states! {
    /// Unknown or not set.
    Unspecified = "TASK_STATE_UNSPECIFIED", "unspecified", "unknown", "UNRECOGNIZED";
    /// Received, not yet started.
    Submitted = "TASK_STATE_SUBMITTED", "submitted";
    /// The agent is working on it.
    Working = "TASK_STATE_WORKING", "working";
    /// Finished successfully (terminal).
    Completed = "TASK_STATE_COMPLETED", "completed";
    /// Finished with an error (terminal).
    Failed = "TASK_STATE_FAILED", "failed";
    /// Canceled by the client (terminal).
    Canceled = "TASK_STATE_CANCELED", "canceled", "TASK_STATE_CANCELLED";
    /// Waiting for more input from the client (interrupted).
    InputRequired = "TASK_STATE_INPUT_REQUIRED", "input-required";
    /// The agent declined the task (terminal).
    Rejected = "TASK_STATE_REJECTED", "rejected";
    /// Waiting for out-of-band authentication (interrupted).
    AuthRequired = "TASK_STATE_AUTH_REQUIRED", "auth-required";
}

/// Written as its proto name.
impl Serialize for TaskState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TaskState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(d)?;
        TaskState::from_wire_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown task state {name:?}")))
    }
}

impl TaskState {
    /// `true` for completed, failed, canceled and rejected.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// `true` for input-required and auth-required.
    pub fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }

    /// Parses the proto name or the short label (case-insensitive).
    pub fn parse(s: &str) -> Option<TaskState> {
        let lower = s.to_ascii_lowercase().replace('_', "-");
        let short = lower.strip_prefix("task-state-").unwrap_or(&lower);
        Self::ALL.into_iter().find(|st| {
            st.label() == short
                || (short == "cancelled" && *st == Self::Canceled)
                || (short == "unknown" && *st == Self::Unspecified)
        })
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Role {
    /// Not set.
    #[serde(rename = "ROLE_UNSPECIFIED")]
    Unspecified,
    /// The client (a user or a calling agent).
    #[serde(rename = "ROLE_USER", alias = "user")]
    User,
    /// The serving agent.
    #[serde(rename = "ROLE_AGENT", alias = "agent")]
    Agent,
}

/// The content of a [`Part`]: exactly one of text, raw bytes, a URL or JSON data.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PartContent {
    /// Plain text.
    Text(String),
    /// Inline bytes (base64 on the wire).
    Raw(Vec<u8>),
    /// A reference to content by URL.
    Url(String),
    /// Any JSON value.
    Data(Value),
}

/// One piece of a message or artifact.
///
/// On the wire a part is a flat object with exactly one of `text`, `raw`,
/// `url` or `data`, plus optional `metadata`, `filename` and `mediaType`.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// What the part holds.
    pub content: PartContent,
    /// Optional metadata for this part.
    pub metadata: Option<Metadata>,
    /// Optional file name (for raw and url parts).
    pub filename: Option<String>,
    /// Optional media type, e.g. `text/plain` or `image/png`.
    pub media_type: Option<String>,
}

impl Part {
    fn with(content: PartContent) -> Self {
        Part {
            content,
            metadata: None,
            filename: None,
            media_type: None,
        }
    }

    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::with(PartContent::Text(text.into()))
    }

    /// A JSON data part.
    pub fn data(value: Value) -> Self {
        Self::with(PartContent::Data(value))
    }

    /// An inline bytes part with a media type.
    pub fn raw(bytes: impl Into<Vec<u8>>, media_type: impl Into<String>) -> Self {
        Part {
            media_type: Some(media_type.into()),
            ..Self::with(PartContent::Raw(bytes.into()))
        }
    }

    /// A part that refers to content by URL.
    pub fn url(url: impl Into<String>) -> Self {
        Self::with(PartContent::Url(url.into()))
    }

    /// Sets the media type.
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = Some(media_type.into());
        self
    }

    /// Sets the file name.
    pub fn with_filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self
    }

    /// Sets the metadata.
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The text, if this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::Raw(b) => {
                use base64::Engine as _;
                m.serialize_entry("raw", &base64::engine::general_purpose::STANDARD.encode(b))?
            }
            PartContent::Url(u) => m.serialize_entry("url", u)?,
            PartContent::Data(v) => m.serialize_entry("data", v)?,
        }
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        if let Some(f) = &self.filename {
            m.serialize_entry("filename", f)?;
        }
        if let Some(mt) = &self.media_type {
            m.serialize_entry("mediaType", mt)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            #[serde(default)]
            text: Option<String>,
            #[serde(default)]
            raw: Option<String>,
            #[serde(default)]
            url: Option<String>,
            // `data: null` is a present JSON null, so keep it distinct from "absent".
            #[serde(default, deserialize_with = "present")]
            data: Option<Value>,
            #[serde(default)]
            metadata: Option<Metadata>,
            #[serde(default)]
            filename: Option<String>,
            #[serde(default, rename = "mediaType", alias = "media_type")]
            media_type: Option<String>,
        }
        fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
            Value::deserialize(d).map(Some)
        }
        let w = Wire::deserialize(d)?;
        let mut contents = Vec::with_capacity(1);
        if let Some(t) = w.text {
            contents.push(PartContent::Text(t));
        }
        if let Some(r) = w.raw {
            let bytes = serde_util::base64_bytes::decode(&r)
                .map_err(|e| serde::de::Error::custom(format!("part.raw: {e}")))?;
            contents.push(PartContent::Raw(bytes));
        }
        if let Some(u) = w.url {
            contents.push(PartContent::Url(u));
        }
        if let Some(v) = w.data {
            contents.push(PartContent::Data(v));
        }
        if contents.len() != 1 {
            return Err(serde::de::Error::custom(
                "a part must have exactly one of `text`, `raw`, `url` or `data`",
            ));
        }
        let content = contents
            .pop()
            .ok_or_else(|| serde::de::Error::custom("empty part"))?;
        Ok(Part {
            content,
            metadata: w.metadata,
            filename: w.filename,
            media_type: w.media_type,
        })
    }
}

/// One turn of communication between a client and an agent.
#[serde_with::apply(
    Vec => #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")],
)]
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Unique id, set by the sender.
    #[serde(alias = "message_id")]
    pub message_id: String,
    /// The conversation this message belongs to.
    #[serde(alias = "context_id")]
    pub context_id: Option<String>,
    /// The task this message belongs to, if any.
    #[serde(alias = "task_id")]
    pub task_id: Option<String>,
    /// Sender role.
    pub role: Role,
    /// The content; at least one part. REQUIRED: a message without
    /// `parts` is refused, `null` reads as none.
    #[serde_with(skip_apply)]
    #[serde(deserialize_with = "null_as_default")]
    pub parts: Vec<Part>,
    /// Optional metadata.
    pub metadata: Option<Metadata>,
    /// Extension URIs this message uses.
    pub extensions: Vec<String>,
    /// Tasks this message refers to (follow-ups).
    #[serde(alias = "reference_task_ids")]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A new message with a fresh id.
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Message {
            message_id: uuid::Uuid::now_v7().to_string(),
            context_id: None,
            task_id: None,
            role,
            parts,
            metadata: None,
            extensions: Vec::new(),
            reference_task_ids: Vec::new(),
        }
    }

    /// A user message holding one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, vec![Part::text(text)])
    }

    /// An agent message holding one text part.
    pub fn agent_text(text: impl Into<String>) -> Self {
        Self::new(Role::Agent, vec![Part::text(text)])
    }

    /// Sets the context id.
    pub fn with_context_id(mut self, id: impl Into<String>) -> Self {
        self.context_id = Some(id.into());
        self
    }

    /// Sets the task id.
    pub fn with_task_id(mut self, id: impl Into<String>) -> Self {
        self.task_id = Some(id.into());
        self
    }

    /// All text parts joined with newlines.
    pub fn text(&self) -> String {
        join_text(&self.parts)
    }
}

/// Joins the text parts of a list of parts with newlines.
pub fn join_text(parts: &[Part]) -> String {
    let texts: Vec<&str> = parts.iter().filter_map(Part::as_text).collect();
    texts.join("\n")
}

/// The status of a task: state, optional message, timestamp.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The current state.
    pub state: TaskState,
    /// An optional message explaining the status.
    pub message: Option<Message>,
    /// When the status was set.
    #[serde(default, with = "serde_util::opt_timestamp")]
    pub timestamp: Option<DateTime<Utc>>,
}

impl TaskStatus {
    /// A status in `state`, stamped now.
    pub fn new(state: TaskState) -> Self {
        TaskStatus {
            state,
            message: None,
            timestamp: Some(Utc::now()),
        }
    }

    /// Attaches a message.
    pub fn with_message(mut self, message: Message) -> Self {
        self.message = Some(message);
        self
    }
}

/// An output of a task.
#[serde_with::apply(
    Vec => #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")],
)]
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Unique within the task.
    #[serde(alias = "artifact_id")]
    pub artifact_id: String,
    /// Human-readable name.
    pub name: Option<String>,
    /// Human-readable description.
    pub description: Option<String>,
    /// The content. REQUIRED, as a message's.
    #[serde_with(skip_apply)]
    #[serde(deserialize_with = "null_as_default")]
    pub parts: Vec<Part>,
    /// Optional metadata.
    pub metadata: Option<Metadata>,
    /// Extension URIs this artifact uses.
    pub extensions: Vec<String>,
}

impl Artifact {
    /// A new artifact holding `parts`, with a fresh unique id (a UUIDv7).
    ///
    /// Set the id yourself with [`Artifact::with_id`] when later chunks must
    /// append to this artifact (the id is what names it within the task).
    ///
    /// ```
    /// use switchboard_protocol::{Artifact, Part};
    /// let a = Artifact::new(vec![Part::text("hi")]);
    /// let b = Artifact::new(vec![Part::text("hi")]);
    /// assert_ne!(a.artifact_id, b.artifact_id);
    /// let c = Artifact::new(vec![Part::text("more")]).with_id("report");
    /// assert_eq!(c.artifact_id, "report");
    /// ```
    pub fn new(parts: Vec<Part>) -> Self {
        Artifact {
            artifact_id: uuid::Uuid::now_v7().to_string(),
            name: None,
            description: None,
            parts,
            metadata: None,
            extensions: Vec::new(),
        }
    }

    /// Sets the id, e.g. to append chunks to an artifact sent earlier.
    pub fn with_id(mut self, artifact_id: impl Into<String>) -> Self {
        self.artifact_id = artifact_id.into();
        self
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The artifact's text: its text parts concatenated, nothing between
    /// them. An artifact streamed in chunks (`append: true`) keeps each
    /// chunk's parts after the earlier ones, so this is the text as the agent
    /// wrote it, chunk after chunk; a separator would split words and lines
    /// wherever a chunk happened to end.
    ///
    /// ```
    /// use switchboard_protocol::{Artifact, Part};
    /// let a = Artifact::new(vec![Part::text("Hel"), Part::text("lo\n"), Part::text("world")]);
    /// assert_eq!(a.text(), "Hello\nworld");
    /// ```
    pub fn text(&self) -> String {
        self.parts.iter().filter_map(Part::as_text).collect()
    }
}

/// A stateful unit of work.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Server-generated id.
    pub id: String,
    /// The conversation this task belongs to.
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// Current status.
    pub status: TaskStatus,
    /// Outputs so far. `None` means "omitted" (ListTasks without artifacts).
    pub artifacts: Option<Vec<Artifact>>,
    /// Messages exchanged so far. `None` means "omitted".
    pub history: Option<Vec<Message>>,
    /// Optional metadata.
    pub metadata: Option<Metadata>,
}

impl Task {
    /// The artifacts, or an empty slice when omitted.
    pub fn artifacts(&self) -> &[Artifact] {
        self.artifacts.as_deref().unwrap_or(&[])
    }

    /// The history, or an empty slice when omitted.
    pub fn history(&self) -> &[Message] {
        self.history.as_deref().unwrap_or(&[])
    }

    /// Applies the `historyLength` rule: unset keeps everything, 0 omits the
    /// field, N keeps the N most recent messages.
    pub fn limit_history(&mut self, history_length: Option<i32>) {
        match history_length {
            None => {}
            Some(n) if n <= 0 => self.history = None,
            Some(n) => {
                if let Some(h) = &mut self.history {
                    let n = n as usize;
                    if h.len() > n {
                        h.drain(..h.len() - n);
                    }
                }
            }
        }
    }
}

/// A change of a task's status, sent on streams and pushes.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The task's context.
    #[serde(alias = "context_id")]
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
    /// Optional metadata (extensions such as task-progress put data here).
    pub metadata: Option<Metadata>,
}

/// A new or extended artifact, sent on streams and pushes.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The task's context.
    #[serde(alias = "context_id")]
    pub context_id: String,
    /// The artifact (or the chunk of it).
    pub artifact: Artifact,
    /// `true`: add these parts to the earlier artifact with the same id.
    #[serde(
        default,
        skip_serializing_if = "serde_util::is_false",
        deserialize_with = "null_as_default"
    )]
    pub append: bool,
    /// `true`: this is the last chunk of the artifact.
    #[serde(
        default,
        skip_serializing_if = "serde_util::is_false",
        alias = "last_chunk",
        deserialize_with = "null_as_default"
    )]
    pub last_chunk: bool,
    /// Optional metadata.
    pub metadata: Option<Metadata>,
}

/// One item of a stream (and the payload of a push notification):
/// exactly one of a task, a message, a status update or an artifact update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum StreamResponse {
    /// A full task snapshot (first item of a task stream).
    Task(Task),
    /// A direct message reply (the only item of a message stream).
    #[serde(alias = "msg")]
    Message(Message),
    /// A status change.
    #[serde(alias = "status_update")]
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact change.
    #[serde(alias = "artifact_update")]
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl StreamResponse {
    /// The task id this item refers to, if any.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            Self::Task(t) => Some(&t.id),
            Self::Message(m) => m.task_id.as_deref(),
            Self::StatusUpdate(e) => Some(&e.task_id),
            Self::ArtifactUpdate(e) => Some(&e.task_id),
        }
    }

    /// The task state this item reports, if it reports one.
    pub fn state(&self) -> Option<TaskState> {
        match self {
            Self::Task(t) => Some(t.status.state),
            Self::StatusUpdate(e) => Some(e.status.state),
            _ => None,
        }
    }

    /// The status timestamp this item carries (a task or a status update).
    pub fn status_timestamp(&self) -> Option<&DateTime<Utc>> {
        match self {
            Self::Task(t) => t.status.timestamp.as_ref(),
            Self::StatusUpdate(e) => e.status.timestamp.as_ref(),
            _ => None,
        }
    }

    /// Where this item keeps its status timestamp, if it has a status.
    pub fn status_timestamp_mut(&mut self) -> Option<&mut Option<DateTime<Utc>>> {
        match self {
            Self::Task(t) => Some(&mut t.status.timestamp),
            Self::StatusUpdate(e) => Some(&mut e.status.timestamp),
            _ => None,
        }
    }

    /// `true` when a stream ends after this item: a message, or a terminal state.
    pub fn is_final(&self) -> bool {
        match self {
            Self::Message(_) => true,
            other => other.state().is_some_and(TaskState::is_terminal),
        }
    }
}

/// The result of SendMessage: a task or a direct message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SendMessageResponse {
    /// The task that tracks the work.
    Task(Task),
    /// A direct reply.
    #[serde(alias = "msg")]
    Message(Message),
}
