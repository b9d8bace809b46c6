//! The 0.3 objects both dialects write alike, written once.
//!
//! A task, its status, an artifact, the two update events and the send
//! request have the same JSON in 0.3 JSON-RPC and 0.3 REST; only what they
//! hold differs: the spelling of a task state (`working` vs
//! `TASK_STATE_WORKING`), the shape of a message, of a part and of a send
//! configuration. A [`Dialect`] spells the first and names the others, and
//! each object here is generic over it (a state is the 1.0
//! [`TaskState`](crate::TaskState), written in the dialect's spelling);
//! [`rpc`](super::rpc) and [`rest`](super::rest) give them their usual names
//! (`rpc::Task = Task<Rpc>`, `rest::Task = Task<Rest>`), and the
//! conversions to and from 1.0 are written once, here: one list of fields
//! per object (`both_ways!`) gives both directions.
//!
//! Decoding accepts what either dialect may write: a missing `contextId`
//! (ProtoJSON omits empty strings) or `parts` (an empty list) reads as
//! empty, and a status's message and a send request's message may come
//! under their proto field names `update` and `request`.

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
    /// The options of a send request.
    type SendConfiguration: WireObject
        + From<crate::SendMessageConfiguration>
        + Into<crate::SendMessageConfiguration>;
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

/// The two `From` impls between a 0.3 object and its 1.0 twin, from one
/// list of their fields (the same names on both sides). A field is moved as
/// it is, or through a conversion written after it: `into` for a dialect
/// object, `each` for a list of them, `opt` / `opt_each` for an optional one
/// or an optional list.
macro_rules! both_ways {
    ($name:ident { $($field:ident $(: $how:ident)?),* $(,)? }) => {
        impl<D: Dialect> From<crate::$name> for $name<D> {
            fn from(x: crate::$name) -> Self {
                $name { $($field: both_ways!(@move x.$field $(, $how)?)),* }
            }
        }

        impl<D: Dialect> From<$name<D>> for crate::$name {
            fn from(x: $name<D>) -> Self {
                crate::$name { $($field: both_ways!(@move x.$field $(, $how)?)),* }
            }
        }
    };
    (@move $value:expr) => { $value };
    (@move $value:expr, into) => { $value.into() };
    (@move $value:expr, each) => { $value.into_iter().map(Into::into).collect() };
    (@move $value:expr, opt) => { $value.map(Into::into) };
    (@move $value:expr, opt_each) => { $value.map(|v| v.into_iter().map(Into::into).collect()) };
}

/// A task's status.
#[serde_with::skip_serializing_none]
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
    #[serde(alias = "update")]
    pub message: Option<D::Message>,
    /// When it was set.
    #[serde(default, with = "serde_util::opt_timestamp")]
    pub timestamp: Option<DateTime<Utc>>,
}

both_ways!(TaskStatus {
    state,
    message: opt,
    timestamp
});

/// An artifact.
#[serde_with::apply(
    Vec => #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")],
)]
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound = "")]
pub struct Artifact<D: Dialect> {
    /// Id.
    #[serde(alias = "artifact_id")]
    pub artifact_id: String,
    /// Name.
    pub name: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Content (always written, even when empty).
    #[serde_with(skip_apply)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub parts: Vec<D::Part>,
    /// Metadata.
    pub metadata: Option<Metadata>,
    /// Extension URIs.
    pub extensions: Vec<String>,
}

both_ways!(Artifact {
    artifact_id,
    name,
    description,
    parts: each,
    metadata,
    extensions
});

/// A task.
#[serde_with::skip_serializing_none]
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
    pub artifacts: Option<Vec<Artifact<D>>>,
    /// History.
    pub history: Option<Vec<D::Message>>,
    /// Metadata.
    pub metadata: Option<Metadata>,
}

both_ways!(Task {
    id,
    context_id,
    status: into,
    artifacts: opt_each,
    history: opt_each,
    metadata
});

/// A status change, with the 0.3 `final` flag.
#[serde_with::skip_serializing_none]
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
#[serde_with::skip_serializing_none]
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
    pub metadata: Option<Metadata>,
}

both_ways!(TaskArtifactUpdateEvent {
    task_id,
    context_id,
    artifact: into,
    append,
    last_chunk,
    metadata
});

/// A send request: params of `message/send` and `message/stream`
/// (JSON-RPC), body of `POST /v1/message:send` and `/v1/message:stream`
/// (REST). Only its configuration differs between the dialects.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct MessageSendParams<D: Dialect> {
    /// The message (proto field `request`, JSON name `message`).
    #[serde(alias = "request")]
    pub message: D::Message,
    /// Options, in the dialect's form.
    pub configuration: Option<D::SendConfiguration>,
    /// Request metadata.
    pub metadata: Option<Metadata>,
}

/// 0.3 has no tenant: the request gets none.
impl<D: Dialect> From<MessageSendParams<D>> for crate::SendMessageRequest {
    fn from(p: MessageSendParams<D>) -> Self {
        crate::SendMessageRequest {
            tenant: None,
            message: p.message.into(),
            configuration: p.configuration.map(Into::into),
            metadata: p.metadata,
        }
    }
}

/// The tenant is dropped (see the module docs of [`super`]).
impl<D: Dialect> From<crate::SendMessageRequest> for MessageSendParams<D> {
    fn from(r: crate::SendMessageRequest) -> Self {
        MessageSendParams {
            message: r.message.into(),
            configuration: r.configuration.map(Into::into),
            metadata: r.metadata,
        }
    }
}
