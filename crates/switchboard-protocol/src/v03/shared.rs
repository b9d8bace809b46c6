//! The 0.3 objects both dialects write alike, written once.
//!
//! A task, its status, an artifact and the two update events have the same
//! JSON in 0.3 JSON-RPC and 0.3 REST; only what they hold differs: the
//! spelling of a task state (`working` vs `TASK_STATE_WORKING`), the shape
//! of a message and of a part. A [`Dialect`] spells the first and names
//! the other two, and each object here is generic over it (a state is the
//! 1.0 [`TaskState`](crate::TaskState), written in the dialect's spelling); [`rpc`](super::rpc) and
//! [`rest`](super::rest) give them their usual names
//! (`rpc::Task = Task<Rpc>`, `rest::Task = Task<Rest>`), and the
//! conversions to and from 1.0 are written once, here.
//!
//! Decoding accepts what either dialect may write: a missing `contextId`
//! (ProtoJSON omits empty strings) or `parts` (an empty list) reads as
//! empty, and a status's message may come under its proto field name
//! `update`.

use std::fmt::Debug;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::serde_util::{self, null_as_default};
use crate::types::Metadata;

use super::is_final_state;

/// What a 0.3 dialect puts inside the objects it shares with the other.
pub trait Dialect: Debug + Clone + Copy + PartialEq + Send + Sync + 'static {
    /// A message.
    type Message: WireObject + From<crate::Message> + Into<crate::Message>;
    /// A part.
    type Part: WireObject + From<crate::Part> + Into<crate::Part>;
    /// How the dialect writes a task state.
    fn state_name(state: crate::TaskState) -> &'static str;
    /// Another spelling of a state the dialect accepts when reading.
    const STATE_ALIAS: Option<(&'static str, crate::TaskState)> = None;
}

/// Writes a task state the way dialect `D` spells it.
fn write_state<D: Dialect, S: Serializer>(
    state: &crate::TaskState,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(D::state_name(*state))
}

/// Reads a task state in dialect `D`'s spelling (or its alias); any other
/// name, including the other dialect's, is refused.
fn read_state<'de, D: Dialect, De: Deserializer<'de>>(
    d: De,
) -> Result<crate::TaskState, De::Error> {
    let name = String::deserialize(d)?;
    crate::TaskState::ALL
        .into_iter()
        .find(|state| D::state_name(*state) == name)
        .or_else(|| D::STATE_ALIAS.and_then(|(alias, state)| (alias == name).then_some(state)))
        .ok_or_else(|| serde::de::Error::custom(format!("unknown task state {name:?}")))
}

/// A value of a 0.3 dialect: it goes to and from JSON, and compares.
pub trait WireObject: Serialize + DeserializeOwned + Debug + Clone + PartialEq {}

impl<T: Serialize + DeserializeOwned + Debug + Clone + PartialEq> WireObject for T {}

/// A task's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound = "")]
pub struct TaskStatus<D: Dialect> {
    /// State, spelled as the dialect spells it.
    #[serde(
        serialize_with = "write_state::<D, _>",
        deserialize_with = "read_state::<D, _>"
    )]
    pub state: crate::TaskState,
    /// The agent's message about it (proto field `update`, JSON name `message`).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "update")]
    pub message: Option<D::Message>,
    /// When it was set.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_util::opt_timestamp"
    )]
    pub timestamp: Option<DateTime<Utc>>,
}

impl<D: Dialect> From<crate::TaskStatus> for TaskStatus<D> {
    fn from(s: crate::TaskStatus) -> Self {
        TaskStatus {
            state: s.state,
            message: s.message.map(Into::into),
            timestamp: s.timestamp,
        }
    }
}

impl<D: Dialect> From<TaskStatus<D>> for crate::TaskStatus {
    fn from(s: TaskStatus<D>) -> Self {
        crate::TaskStatus {
            state: s.state,
            message: s.message.map(Into::into),
            timestamp: s.timestamp,
        }
    }
}

/// An artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound = "")]
pub struct Artifact<D: Dialect> {
    /// Id.
    #[serde(alias = "artifact_id")]
    pub artifact_id: String,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Content.
    #[serde(default, deserialize_with = "null_as_default")]
    pub parts: Vec<D::Part>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extension URIs.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub extensions: Vec<String>,
}

impl<D: Dialect> From<crate::Artifact> for Artifact<D> {
    fn from(a: crate::Artifact) -> Self {
        Artifact {
            artifact_id: a.artifact_id,
            name: a.name,
            description: a.description,
            parts: a.parts.into_iter().map(Into::into).collect(),
            metadata: a.metadata,
            extensions: a.extensions,
        }
    }
}

impl<D: Dialect> From<Artifact<D>> for crate::Artifact {
    fn from(a: Artifact<D>) -> Self {
        crate::Artifact {
            artifact_id: a.artifact_id,
            name: a.name,
            description: a.description,
            parts: a.parts.into_iter().map(Into::into).collect(),
            metadata: a.metadata,
            extensions: a.extensions,
        }
    }
}

/// A task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound = "")]
pub struct Task<D: Dialect> {
    /// Id.
    pub id: String,
    /// Context.
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// Status.
    pub status: TaskStatus<D>,
    /// Artifacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact<D>>>,
    /// History.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<D::Message>>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl<D: Dialect> From<crate::Task> for Task<D> {
    fn from(t: crate::Task) -> Self {
        Task {
            id: t.id,
            context_id: t.context_id,
            status: t.status.into(),
            artifacts: t.artifacts.map(|v| v.into_iter().map(Into::into).collect()),
            history: t.history.map(|v| v.into_iter().map(Into::into).collect()),
            metadata: t.metadata,
        }
    }
}

impl<D: Dialect> From<Task<D>> for crate::Task {
    fn from(t: Task<D>) -> Self {
        crate::Task {
            id: t.id,
            context_id: t.context_id,
            status: t.status.into(),
            artifacts: t.artifacts.map(|v| v.into_iter().map(Into::into).collect()),
            history: t.history.map(|v| v.into_iter().map(Into::into).collect()),
            metadata: t.metadata,
        }
    }
}

/// A status change, with the 0.3 `final` flag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound = "")]
pub struct TaskStatusUpdateEvent<D: Dialect> {
    /// Task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Context.
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// New status.
    pub status: TaskStatus<D>,
    /// `true` on the last event of a stream.
    #[serde(default, rename = "final")]
    pub is_final: bool,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `final` is derived from the state: 1.0 ends a stream by closing it.
impl<D: Dialect> From<crate::TaskStatusUpdateEvent> for TaskStatusUpdateEvent<D> {
    fn from(e: crate::TaskStatusUpdateEvent) -> Self {
        TaskStatusUpdateEvent {
            is_final: is_final_state(e.status.state),
            task_id: e.task_id,
            context_id: e.context_id,
            status: e.status.into(),
            metadata: e.metadata,
        }
    }
}

/// `final` is dropped: the stream's end says it.
impl<D: Dialect> From<TaskStatusUpdateEvent<D>> for crate::TaskStatusUpdateEvent {
    fn from(e: TaskStatusUpdateEvent<D>) -> Self {
        crate::TaskStatusUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            status: e.status.into(),
            metadata: e.metadata,
        }
    }
}

/// An artifact change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound = "")]
pub struct TaskArtifactUpdateEvent<D: Dialect> {
    /// Task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Context.
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// The artifact (or chunk).
    pub artifact: Artifact<D>,
    /// Append to the earlier artifact with this id.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    pub append: bool,
    /// Last chunk.
    #[serde(
        default,
        skip_serializing_if = "crate::serde_util::is_false",
        alias = "last_chunk"
    )]
    pub last_chunk: bool,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl<D: Dialect> From<crate::TaskArtifactUpdateEvent> for TaskArtifactUpdateEvent<D> {
    fn from(e: crate::TaskArtifactUpdateEvent) -> Self {
        TaskArtifactUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            artifact: e.artifact.into(),
            append: e.append,
            last_chunk: e.last_chunk,
            metadata: e.metadata,
        }
    }
}

impl<D: Dialect> From<TaskArtifactUpdateEvent<D>> for crate::TaskArtifactUpdateEvent {
    fn from(e: TaskArtifactUpdateEvent<D>) -> Self {
        crate::TaskArtifactUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            artifact: e.artifact.into(),
            append: e.append,
            last_chunk: e.last_chunk,
            metadata: e.metadata,
        }
    }
}
