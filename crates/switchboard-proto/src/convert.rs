//! Conversions between the prost types of `lf.a2a.v1` and the canonical
//! [`switchboard_protocol`] types.
//!
//! The rules, once:
//!
//! - **Presence.** proto3 strings have no presence, so `""` on the wire is
//!   `None` in a canonical `Option<String>` and back. Fields marked
//!   `optional` in the proto (`history_length`, `page_size`, the card's
//!   capability booleans, …) keep presence and map to `Option` one to one.
//!   An empty repeated `artifacts`/`history` is `None` (absent), which is how
//!   the JSON bindings show "not included".
//! - **Required fields.** A message field that A2A requires (`Task.status`,
//!   `SendMessageRequest.message`, an `artifact` in an artifact update, a
//!   part's content, a stream item's payload) missing on the wire is a
//!   [`ConvertError::Missing`], which the server answers as InvalidParams.
//! - **JSON values.** `google.protobuf.Struct`/`Value` map to
//!   `serde_json::Map`/`Value`. Protobuf numbers are doubles: an integral
//!   value within ±2^53 comes back as a JSON integer (so `{"n": 1}` does not
//!   turn into `{"n": 1.0}`), anything else as a float; NaN and infinities
//!   have no JSON form and are refused.
//! - **Time.** `google.protobuf.Timestamp` ↔ `chrono::DateTime<Utc>`; a
//!   timestamp outside chrono's range or with nanos outside 0..1e9 is refused.
//! - **Enums.** Unknown enum numbers are refused rather than guessed.
//! - **Security schemes** are JSON in the canonical card (the protocol crate
//!   keeps them opaque); they are mapped key by key to the `SecurityScheme`
//!   oneof, and an unknown scheme kind is refused.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde_json::{Map, Number, Value};
use switchboard_protocol as p;

use crate::operations::grpc_operations;
use crate::v1 as pb;

/// Why a wire message cannot become a canonical value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// A field A2A requires is absent.
    #[error("{0} is required")]
    Missing(&'static str),
    /// A field holds a value the canonical type cannot represent.
    #[error("{field}: {reason}")]
    Invalid {
        /// The field, as named in the proto (snake_case path).
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

impl ConvertError {
    /// The field the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            ConvertError::Missing(f) => f,
            ConvertError::Invalid { field, .. } => field,
        }
    }

    fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        ConvertError::Invalid {
            field,
            reason: reason.into(),
        }
    }
}

type R<T> = Result<T, ConvertError>;

/// A proto3 scalar without presence: its default value (`""`, `0`) is unset.
fn opt<T: Default + PartialEq>(v: T) -> Option<T> {
    (v != T::default()).then_some(v)
}

fn opt_vec<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

// ---- JSON values -------------------------------------------------------------

/// The largest integer a double holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_992.0;

/// A canonical JSON value as a `google.protobuf.Value`.
pub fn value_to_proto(v: &Value) -> prost_types::Value {
    value_into_proto(v.clone())
}

/// [`value_to_proto`] for an owned value: its strings move instead of being copied.
pub fn value_into_proto(v: Value) -> prost_types::Value {
    use prost_types::value::Kind;
    let kind = match v {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => Kind::StringValue(s),
        Value::Array(a) => Kind::ListValue(prost_types::ListValue {
            values: a.into_iter().map(value_into_proto).collect(),
        }),
        Value::Object(m) => Kind::StructValue(struct_into_proto(m)),
    };
    prost_types::Value { kind: Some(kind) }
}

/// A JSON object as a `google.protobuf.Struct`.
pub fn struct_to_proto(m: &Map<String, Value>) -> prost_types::Struct {
    struct_into_proto(m.clone())
}

/// [`struct_to_proto`] for an owned object.
pub fn struct_into_proto(m: Map<String, Value>) -> prost_types::Struct {
    prost_types::Struct {
        fields: m
            .into_iter()
            .map(|(k, v)| (k, value_into_proto(v)))
            .collect(),
    }
}

/// A `google.protobuf.Value` as JSON (a `Value` without a kind is `null`).
pub fn value_from_proto(v: prost_types::Value) -> R<Value> {
    use prost_types::value::Kind;
    Ok(match v.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(b),
        Some(Kind::NumberValue(n)) => number(n)?,
        Some(Kind::StringValue(s)) => Value::String(s),
        Some(Kind::ListValue(l)) => Value::Array(
            l.values
                .into_iter()
                .map(value_from_proto)
                .collect::<R<_>>()?,
        ),
        Some(Kind::StructValue(s)) => Value::Object(struct_from_proto(s)?),
    })
}

fn number(n: f64) -> R<Value> {
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE {
        // Exact: |n| <= 2^53 is an integer a double and an i64 both hold.
        return Ok(Value::Number(Number::from(n as i64)));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| ConvertError::invalid("number_value", format!("{n} has no JSON form")))
}

/// A `google.protobuf.Struct` as a JSON object.
pub fn struct_from_proto(s: prost_types::Struct) -> R<Map<String, Value>> {
    // Sorted, so the result does not depend on the HashMap's order.
    let sorted: BTreeMap<String, prost_types::Value> = s.fields.into_iter().collect();
    sorted
        .into_iter()
        .map(|(k, v)| Ok((k, value_from_proto(v)?)))
        .collect()
}

fn meta_to_proto(m: Option<Map<String, Value>>) -> Option<prost_types::Struct> {
    m.map(struct_into_proto)
}

fn meta_from_proto(m: Option<prost_types::Struct>) -> R<Option<Map<String, Value>>> {
    m.map(struct_from_proto).transpose()
}

// ---- time --------------------------------------------------------------------

/// A chrono time as a `google.protobuf.Timestamp`, to the millisecond.
///
/// Millisecond precision is what every JSON form of A2A carries (and what
/// the stores' event logs keep), so a gRPC stream's live events equal the
/// same events replayed from the log, and equal what the other bindings
/// show.
pub fn timestamp_to_proto(t: &DateTime<Utc>) -> prost_types::Timestamp {
    let millis = t.timestamp_subsec_millis();
    prost_types::Timestamp {
        seconds: t.timestamp(),
        // subsec millis are < 2000 (leap seconds), so this fits an i32.
        nanos: i32::try_from(millis * 1_000_000).unwrap_or(999_000_000),
    }
}

/// A `google.protobuf.Timestamp` as chrono time.
pub fn timestamp_from_proto(t: prost_types::Timestamp, field: &'static str) -> R<DateTime<Utc>> {
    let nanos = u32::try_from(t.nanos)
        .ok()
        .filter(|n| *n < 1_000_000_000)
        .ok_or_else(|| ConvertError::invalid(field, "nanos must be in 0..1e9"))?;
    DateTime::from_timestamp(t.seconds, nanos)
        .ok_or_else(|| ConvertError::invalid(field, "the time is out of range"))
}

// ---- enums -------------------------------------------------------------------

/// The wire number of a task state.
pub fn state_to_proto(s: p::TaskState) -> i32 {
    p::TaskState::ALL.iter().position(|x| *x == s).unwrap_or(0) as i32
}

/// The task state of a wire number.
pub fn state_from_proto(n: i32, field: &'static str) -> R<p::TaskState> {
    usize::try_from(n)
        .ok()
        .and_then(|i| p::TaskState::ALL.get(i).copied())
        .ok_or_else(|| ConvertError::invalid(field, format!("unknown task state {n}")))
}

fn role_to_proto(r: p::Role) -> i32 {
    match r {
        p::Role::User => pb::Role::User as i32,
        p::Role::Agent => pb::Role::Agent as i32,
        _ => pb::Role::Unspecified as i32,
    }
}

fn role_from_proto(n: i32) -> R<p::Role> {
    match pb::Role::try_from(n) {
        Ok(pb::Role::User) => Ok(p::Role::User),
        Ok(pb::Role::Agent) => Ok(p::Role::Agent),
        Ok(pb::Role::Unspecified) => Ok(p::Role::Unspecified),
        Err(_) => Err(ConvertError::invalid("role", format!("unknown role {n}"))),
    }
}

// ---- data objects ------------------------------------------------------------

impl From<p::Part> for pb::Part {
    fn from(x: p::Part) -> Self {
        use pb::part::Content;
        let content = match x.content {
            p::PartContent::Text(t) => Content::Text(t),
            p::PartContent::Raw(b) => Content::Raw(b),
            p::PartContent::Url(u) => Content::Url(u),
            p::PartContent::Data(v) => Content::Data(value_into_proto(v)),
            // PartContent is non-exhaustive; a future kind has no wire form yet.
            _ => Content::Text(String::new()),
        };
        pb::Part {
            content: Some(content),
            metadata: meta_to_proto(x.metadata),
            filename: x.filename.unwrap_or_default(),
            media_type: x.media_type.unwrap_or_default(),
        }
    }
}

impl TryFrom<pb::Part> for p::Part {
    type Error = ConvertError;
    fn try_from(x: pb::Part) -> R<Self> {
        use pb::part::Content;
        let content = match x.content.ok_or(ConvertError::Missing("part.content"))? {
            Content::Text(t) => p::PartContent::Text(t),
            Content::Raw(b) => p::PartContent::Raw(b),
            Content::Url(u) => p::PartContent::Url(u),
            Content::Data(v) => p::PartContent::Data(value_from_proto(v)?),
        };
        Ok(p::Part {
            content,
            metadata: meta_from_proto(x.metadata)?,
            filename: opt(x.filename),
            media_type: opt(x.media_type),
        })
    }
}

fn parts_from(parts: Vec<pb::Part>) -> R<Vec<p::Part>> {
    parts.into_iter().map(p::Part::try_from).collect()
}

impl From<p::Message> for pb::Message {
    fn from(x: p::Message) -> Self {
        pb::Message {
            message_id: x.message_id,
            context_id: x.context_id.unwrap_or_default(),
            task_id: x.task_id.unwrap_or_default(),
            role: role_to_proto(x.role),
            parts: x.parts.into_iter().map(Into::into).collect(),
            metadata: meta_to_proto(x.metadata),
            extensions: x.extensions,
            reference_task_ids: x.reference_task_ids,
        }
    }
}

impl TryFrom<pb::Message> for p::Message {
    type Error = ConvertError;
    fn try_from(x: pb::Message) -> R<Self> {
        Ok(p::Message {
            message_id: x.message_id,
            context_id: opt(x.context_id),
            task_id: opt(x.task_id),
            role: role_from_proto(x.role)?,
            parts: parts_from(x.parts)?,
            metadata: meta_from_proto(x.metadata)?,
            extensions: x.extensions,
            reference_task_ids: x.reference_task_ids,
        })
    }
}

impl From<p::TaskStatus> for pb::TaskStatus {
    fn from(x: p::TaskStatus) -> Self {
        pb::TaskStatus {
            state: state_to_proto(x.state),
            message: x.message.map(Into::into),
            timestamp: x.timestamp.as_ref().map(timestamp_to_proto),
        }
    }
}

impl TryFrom<pb::TaskStatus> for p::TaskStatus {
    type Error = ConvertError;
    fn try_from(x: pb::TaskStatus) -> R<Self> {
        Ok(p::TaskStatus {
            state: state_from_proto(x.state, "status.state")?,
            message: x.message.map(p::Message::try_from).transpose()?,
            timestamp: x
                .timestamp
                .map(|t| timestamp_from_proto(t, "status.timestamp"))
                .transpose()?,
        })
    }
}

impl From<p::Artifact> for pb::Artifact {
    fn from(x: p::Artifact) -> Self {
        pb::Artifact {
            artifact_id: x.artifact_id,
            name: x.name.unwrap_or_default(),
            description: x.description.unwrap_or_default(),
            parts: x.parts.into_iter().map(Into::into).collect(),
            metadata: meta_to_proto(x.metadata),
            extensions: x.extensions,
        }
    }
}

impl TryFrom<pb::Artifact> for p::Artifact {
    type Error = ConvertError;
    fn try_from(x: pb::Artifact) -> R<Self> {
        Ok(p::Artifact {
            artifact_id: x.artifact_id,
            name: opt(x.name),
            description: opt(x.description),
            parts: parts_from(x.parts)?,
            metadata: meta_from_proto(x.metadata)?,
            extensions: x.extensions,
        })
    }
}

impl From<p::Task> for pb::Task {
    fn from(x: p::Task) -> Self {
        pb::Task {
            id: x.id,
            context_id: x.context_id,
            status: Some(x.status.into()),
            artifacts: x
                .artifacts
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            history: x
                .history
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            metadata: meta_to_proto(x.metadata),
        }
    }
}

impl TryFrom<pb::Task> for p::Task {
    type Error = ConvertError;
    fn try_from(x: pb::Task) -> R<Self> {
        let status = x.status.ok_or(ConvertError::Missing("task.status"))?;
        Ok(p::Task {
            id: x.id,
            context_id: x.context_id,
            status: status.try_into()?,
            artifacts: opt_vec(
                x.artifacts
                    .into_iter()
                    .map(p::Artifact::try_from)
                    .collect::<R<_>>()?,
            ),
            history: opt_vec(
                x.history
                    .into_iter()
                    .map(p::Message::try_from)
                    .collect::<R<_>>()?,
            ),
            metadata: meta_from_proto(x.metadata)?,
        })
    }
}

impl From<p::TaskStatusUpdateEvent> for pb::TaskStatusUpdateEvent {
    fn from(x: p::TaskStatusUpdateEvent) -> Self {
        pb::TaskStatusUpdateEvent {
            task_id: x.task_id,
            context_id: x.context_id,
            status: Some(x.status.into()),
            metadata: meta_to_proto(x.metadata),
        }
    }
}

impl TryFrom<pb::TaskStatusUpdateEvent> for p::TaskStatusUpdateEvent {
    type Error = ConvertError;
    fn try_from(x: pb::TaskStatusUpdateEvent) -> R<Self> {
        let status = x
            .status
            .ok_or(ConvertError::Missing("status_update.status"))?;
        Ok(p::TaskStatusUpdateEvent {
            task_id: x.task_id,
            context_id: x.context_id,
            status: status.try_into()?,
            metadata: meta_from_proto(x.metadata)?,
        })
    }
}

impl From<p::TaskArtifactUpdateEvent> for pb::TaskArtifactUpdateEvent {
    fn from(x: p::TaskArtifactUpdateEvent) -> Self {
        pb::TaskArtifactUpdateEvent {
            task_id: x.task_id,
            context_id: x.context_id,
            artifact: Some(x.artifact.into()),
            append: x.append,
            last_chunk: x.last_chunk,
            metadata: meta_to_proto(x.metadata),
        }
    }
}

impl TryFrom<pb::TaskArtifactUpdateEvent> for p::TaskArtifactUpdateEvent {
    type Error = ConvertError;
    fn try_from(x: pb::TaskArtifactUpdateEvent) -> R<Self> {
        let artifact = x
            .artifact
            .ok_or(ConvertError::Missing("artifact_update.artifact"))?;
        Ok(p::TaskArtifactUpdateEvent {
            task_id: x.task_id,
            context_id: x.context_id,
            artifact: artifact.try_into()?,
            append: x.append,
            last_chunk: x.last_chunk,
            metadata: meta_from_proto(x.metadata)?,
        })
    }
}

/// The two conversions of a response that is one of several objects: a
/// canonical enum and the proto message holding it as a `payload` oneof,
/// whose cases are named as the enum's variants. The payload is required
/// ([`ConvertError::Missing`] names `$field`); the canonical enums are
/// non-exhaustive, and a future variant with no wire form yet goes out as
/// no payload.
macro_rules! payload_both_ways {
    ($name:ident, $oneof:ident, $field:literal { $($variant:ident),+ $(,)? }) => {
        impl From<p::$name> for pb::$name {
            fn from(x: p::$name) -> Self {
                use pb::$oneof::Payload;
                let payload = match x {
                    $(p::$name::$variant(v) => Some(Payload::$variant(v.into())),)+
                    #[allow(unreachable_patterns)]
                    _ => None,
                };
                pb::$name { payload }
            }
        }

        impl TryFrom<pb::$name> for p::$name {
            type Error = ConvertError;
            fn try_from(x: pb::$name) -> R<Self> {
                use pb::$oneof::Payload;
                Ok(match x.payload.ok_or(ConvertError::Missing($field))? {
                    $(Payload::$variant(v) => p::$name::$variant(v.try_into()?),)+
                })
            }
        }
    };
}

payload_both_ways!(StreamResponse, stream_response, "stream_response.payload" {
    Task, Message, StatusUpdate, ArtifactUpdate
});
payload_both_ways!(SendMessageResponse, send_message_response, "send_message_response.payload" {
    Task, Message
});

/// The data objects by reference: a clone, then the by-value conversion, which
/// moves the clone's strings (so none is copied twice). Servers answer with
/// owned values and use the by-value impls; clients send borrowed ones.
macro_rules! from_ref {
    ($($t:ident),* $(,)?) => {
        $(impl From<&p::$t> for pb::$t {
            fn from(x: &p::$t) -> Self {
                x.clone().into()
            }
        })*
    };
}

from_ref!(
    Part,
    Message,
    TaskStatus,
    Artifact,
    Task,
    TaskStatusUpdateEvent,
    TaskArtifactUpdateEvent,
    StreamResponse,
    SendMessageResponse,
    ListTasksResponse,
);

// ---- the operations' wire types ---------------------------------------------

// Each row of the operation table, by its prost request and response (one
// item, for a streaming method): the `GrpcOperation` impls servers and
// clients are generic over, built on the conversions in this file.
grpc_operations! {
    SendMessage: pb::SendMessageRequest => pb::SendMessageResponse;
    SendStreamingMessage: pb::SendMessageRequest => pb::StreamResponse;
    GetTask: pb::GetTaskRequest => pb::Task;
    ListTasks: pb::ListTasksRequest => pb::ListTasksResponse;
    CancelTask: pb::CancelTaskRequest => pb::Task;
    SubscribeToTask: pb::SubscribeToTaskRequest => pb::StreamResponse;
    CreateTaskPushNotificationConfig: pb::TaskPushNotificationConfig => pb::TaskPushNotificationConfig;
    GetTaskPushNotificationConfig: pb::GetTaskPushNotificationConfigRequest => pb::TaskPushNotificationConfig;
    ListTaskPushNotificationConfigs: pb::ListTaskPushNotificationConfigsRequest => pb::ListTaskPushNotificationConfigsResponse;
    DeleteTaskPushNotificationConfig: pb::DeleteTaskPushNotificationConfigRequest => ();
    GetExtendedAgentCard: pb::GetExtendedAgentCardRequest => pb::AgentCard;
}

/// Fails to compile here, naming the marker, for a table row without its
/// line above.
macro_rules! every_row_has_a_wire_form {
    ($($(#[$doc:meta])* $name:ident { $($row:tt)* })*) => {
        const _: () = {
            const fn has_a_wire_form<O: crate::GrpcOperation>() {}
            $(has_a_wire_form::<crate::op::$name>();)*
        };
    };
}

switchboard_protocol::for_each_operation!(every_row_has_a_wire_form);

// ---- requests ----------------------------------------------------------------

impl From<&p::AuthenticationInfo> for pb::AuthenticationInfo {
    fn from(x: &p::AuthenticationInfo) -> Self {
        pb::AuthenticationInfo {
            scheme: x.scheme.clone(),
            credentials: x.credentials.clone().unwrap_or_default(),
        }
    }
}

/// A conversion that cannot fail has no error to report.
impl From<std::convert::Infallible> for ConvertError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

impl From<p::TaskPushNotificationConfig> for pb::TaskPushNotificationConfig {
    fn from(c: p::TaskPushNotificationConfig) -> Self {
        (&c).into()
    }
}

impl From<p::ListTaskPushNotificationConfigsResponse>
    for pb::ListTaskPushNotificationConfigsResponse
{
    fn from(r: p::ListTaskPushNotificationConfigsResponse) -> Self {
        (&r).into()
    }
}

impl From<p::AgentCard> for pb::AgentCard {
    fn from(c: p::AgentCard) -> Self {
        (&c).into()
    }
}

impl From<&p::TaskPushNotificationConfig> for pb::TaskPushNotificationConfig {
    fn from(x: &p::TaskPushNotificationConfig) -> Self {
        pb::TaskPushNotificationConfig {
            tenant: x.tenant.clone().unwrap_or_default(),
            id: x.id.clone().unwrap_or_default(),
            task_id: x.task_id.clone().unwrap_or_default(),
            url: x.url.clone(),
            token: x.token.clone().unwrap_or_default(),
            authentication: x.authentication.as_ref().map(Into::into),
        }
    }
}

impl From<pb::TaskPushNotificationConfig> for p::TaskPushNotificationConfig {
    fn from(x: pb::TaskPushNotificationConfig) -> Self {
        p::TaskPushNotificationConfig {
            tenant: opt(x.tenant),
            id: opt(x.id),
            task_id: opt(x.task_id),
            url: x.url,
            token: opt(x.token),
            authentication: x.authentication.map(|a| p::AuthenticationInfo {
                scheme: a.scheme,
                credentials: opt(a.credentials),
            }),
        }
    }
}

impl From<&p::SendMessageRequest> for pb::SendMessageRequest {
    fn from(x: &p::SendMessageRequest) -> Self {
        pb::SendMessageRequest {
            tenant: x.tenant.clone().unwrap_or_default(),
            message: Some((&x.message).into()),
            configuration: x
                .configuration
                .as_ref()
                .map(|c| pb::SendMessageConfiguration {
                    accepted_output_modes: c.accepted_output_modes.clone(),
                    task_push_notification_config: c
                        .task_push_notification_config
                        .as_ref()
                        .map(Into::into),
                    history_length: c.history_length,
                    return_immediately: c.return_immediately,
                }),
            metadata: meta_to_proto(x.metadata.clone()),
        }
    }
}

impl TryFrom<pb::SendMessageRequest> for p::SendMessageRequest {
    type Error = ConvertError;
    fn try_from(x: pb::SendMessageRequest) -> R<Self> {
        let message = x.message.ok_or(ConvertError::Missing("message"))?;
        Ok(p::SendMessageRequest {
            tenant: opt(x.tenant),
            message: message.try_into()?,
            configuration: x.configuration.map(|c| p::SendMessageConfiguration {
                accepted_output_modes: c.accepted_output_modes,
                task_push_notification_config: c.task_push_notification_config.map(Into::into),
                history_length: c.history_length,
                return_immediately: c.return_immediately,
            }),
            metadata: meta_from_proto(x.metadata)?,
        })
    }
}

/// The two conversions of a request whose fields have the same names in
/// both forms, from one list of its fields: a field moves as it is, or
/// (`opt`) by the presence rule of a proto3 scalar, whose default is unset.
/// The borrowed form, which clients send, converts a clone.
macro_rules! request_both_ways {
    ($($canonical:ident <=> $wire:ident { $($field:ident $(: $how:ident)?),* $(,)? })+) => {$(
        impl From<&p::$canonical> for pb::$wire {
            fn from(x: &p::$canonical) -> Self {
                let x = x.clone();
                pb::$wire { $($field: request_both_ways!(@down x.$field $(, $how)?)),* }
            }
        }

        impl From<pb::$wire> for p::$canonical {
            fn from(x: pb::$wire) -> Self {
                p::$canonical { $($field: request_both_ways!(@up x.$field $(, $how)?)),* }
            }
        }
    )+};
    (@down $value:expr) => { $value };
    (@down $value:expr, opt) => { $value.unwrap_or_default() };
    (@up $value:expr) => { $value };
    (@up $value:expr, opt) => { opt($value) };
}

// `page_size` is not `optional` in the proto: 0 means "server default".
request_both_ways! {
    GetTaskRequest <=> GetTaskRequest { tenant: opt, id, history_length }
    SubscribeToTaskRequest <=> SubscribeToTaskRequest { tenant: opt, id }
    TaskPushNotificationConfigRef <=> GetTaskPushNotificationConfigRequest { tenant: opt, task_id, id }
    TaskPushNotificationConfigRef <=> DeleteTaskPushNotificationConfigRequest { tenant: opt, task_id, id }
    ListTaskPushNotificationConfigsRequest <=> ListTaskPushNotificationConfigsRequest {
        tenant: opt,
        task_id,
        page_size: opt,
        page_token: opt,
    }
    GetExtendedAgentCardRequest <=> GetExtendedAgentCardRequest { tenant: opt }
}

impl From<&p::ListTasksRequest> for pb::ListTasksRequest {
    fn from(x: &p::ListTasksRequest) -> Self {
        pb::ListTasksRequest {
            tenant: x.tenant.clone().unwrap_or_default(),
            context_id: x.context_id.clone().unwrap_or_default(),
            status: x.status.map(state_to_proto).unwrap_or(0),
            page_size: x.page_size,
            page_token: x.page_token.clone().unwrap_or_default(),
            history_length: x.history_length,
            status_timestamp_after: x.status_timestamp_after.as_ref().map(timestamp_to_proto),
            include_artifacts: x.include_artifacts,
        }
    }
}

impl TryFrom<pb::ListTasksRequest> for p::ListTasksRequest {
    type Error = ConvertError;
    fn try_from(x: pb::ListTasksRequest) -> R<Self> {
        // UNSPECIFIED (0) is the proto3 default: no filter.
        let status = match x.status {
            0 => None,
            n => Some(state_from_proto(n, "status")?),
        };
        Ok(p::ListTasksRequest {
            tenant: opt(x.tenant),
            context_id: opt(x.context_id),
            status,
            page_size: x.page_size,
            page_token: opt(x.page_token),
            history_length: x.history_length,
            status_timestamp_after: x
                .status_timestamp_after
                .map(|t| timestamp_from_proto(t, "status_timestamp_after"))
                .transpose()?,
            include_artifacts: x.include_artifacts,
        })
    }
}

impl From<p::ListTasksResponse> for pb::ListTasksResponse {
    fn from(x: p::ListTasksResponse) -> Self {
        pb::ListTasksResponse {
            tasks: x.tasks.into_iter().map(Into::into).collect(),
            next_page_token: x.next_page_token,
            page_size: x.page_size,
            total_size: x.total_size,
        }
    }
}

impl TryFrom<pb::ListTasksResponse> for p::ListTasksResponse {
    type Error = ConvertError;
    fn try_from(x: pb::ListTasksResponse) -> R<Self> {
        Ok(p::ListTasksResponse {
            tasks: x
                .tasks
                .into_iter()
                .map(p::Task::try_from)
                .collect::<R<_>>()?,
            next_page_token: x.next_page_token,
            page_size: x.page_size,
            total_size: x.total_size,
        })
    }
}

impl From<&p::CancelTaskRequest> for pb::CancelTaskRequest {
    fn from(x: &p::CancelTaskRequest) -> Self {
        pb::CancelTaskRequest {
            tenant: x.tenant.clone().unwrap_or_default(),
            id: x.id.clone(),
            metadata: meta_to_proto(x.metadata.clone()),
        }
    }
}

impl TryFrom<pb::CancelTaskRequest> for p::CancelTaskRequest {
    type Error = ConvertError;
    fn try_from(x: pb::CancelTaskRequest) -> R<Self> {
        Ok(p::CancelTaskRequest {
            tenant: opt(x.tenant),
            id: x.id,
            metadata: meta_from_proto(x.metadata)?,
        })
    }
}

impl From<&p::ListTaskPushNotificationConfigsResponse>
    for pb::ListTaskPushNotificationConfigsResponse
{
    fn from(x: &p::ListTaskPushNotificationConfigsResponse) -> Self {
        pb::ListTaskPushNotificationConfigsResponse {
            configs: x.configs.iter().map(Into::into).collect(),
            next_page_token: x.next_page_token.clone(),
        }
    }
}

impl From<pb::ListTaskPushNotificationConfigsResponse>
    for p::ListTaskPushNotificationConfigsResponse
{
    fn from(x: pb::ListTaskPushNotificationConfigsResponse) -> Self {
        p::ListTaskPushNotificationConfigsResponse {
            configs: x.configs.into_iter().map(Into::into).collect(),
            next_page_token: x.next_page_token,
        }
    }
}

// ---- agent card --------------------------------------------------------------

fn reqs_to_proto(r: &[p::SecurityRequirement]) -> Vec<pb::SecurityRequirement> {
    r.iter()
        .map(|r| pb::SecurityRequirement {
            schemes: r
                .schemes
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        pb::StringList {
                            list: v.list.clone(),
                        },
                    )
                })
                .collect(),
        })
        .collect()
}

fn reqs_from_proto(r: Vec<pb::SecurityRequirement>) -> Vec<p::SecurityRequirement> {
    r.into_iter()
        .map(|r| p::SecurityRequirement {
            schemes: r
                .schemes
                .into_iter()
                .map(|(k, v)| (k, p::StringList { list: v.list }))
                .collect(),
        })
        .collect()
}

impl From<&p::AgentCard> for pb::AgentCard {
    fn from(x: &p::AgentCard) -> Self {
        pb::AgentCard {
            name: x.name.clone(),
            description: x.description.clone(),
            supported_interfaces: x
                .supported_interfaces
                .iter()
                .map(|i| pb::AgentInterface {
                    url: i.url.clone(),
                    protocol_binding: i.protocol_binding.clone(),
                    tenant: i.tenant.clone().unwrap_or_default(),
                    protocol_version: i.protocol_version.clone(),
                })
                .collect(),
            provider: x.provider.as_ref().map(|pr| pb::AgentProvider {
                url: pr.url.clone(),
                organization: pr.organization.clone(),
            }),
            version: x.version.clone(),
            documentation_url: x.documentation_url.clone(),
            capabilities: Some(pb::AgentCapabilities {
                streaming: x.capabilities.streaming,
                push_notifications: x.capabilities.push_notifications,
                extensions: x
                    .capabilities
                    .extensions
                    .iter()
                    .map(|e| pb::AgentExtension {
                        uri: e.uri.clone(),
                        description: e.description.clone().unwrap_or_default(),
                        required: e.required,
                        params: e.params.as_ref().map(struct_to_proto),
                    })
                    .collect(),
                extended_agent_card: x.capabilities.extended_agent_card,
            }),
            security_schemes: x
                .security_schemes
                .iter()
                .map(|(k, v)| (k.clone(), scheme_to_proto(v)))
                .collect(),
            security_requirements: reqs_to_proto(&x.security_requirements),
            default_input_modes: x.default_input_modes.clone(),
            default_output_modes: x.default_output_modes.clone(),
            skills: x
                .skills
                .iter()
                .map(|s| pb::AgentSkill {
                    id: s.id.clone(),
                    name: s.name.clone(),
                    description: s.description.clone(),
                    tags: s.tags.clone(),
                    examples: s.examples.clone(),
                    input_modes: s.input_modes.clone(),
                    output_modes: s.output_modes.clone(),
                    security_requirements: reqs_to_proto(&s.security_requirements),
                })
                .collect(),
            signatures: x
                .signatures
                .iter()
                .map(|s| pb::AgentCardSignature {
                    protected: s.protected.clone(),
                    signature: s.signature.clone(),
                    header: s.header.as_ref().map(struct_to_proto),
                })
                .collect(),
            icon_url: x.icon_url.clone(),
        }
    }
}

impl TryFrom<pb::AgentCard> for p::AgentCard {
    type Error = ConvertError;
    fn try_from(x: pb::AgentCard) -> R<Self> {
        let caps = x.capabilities.unwrap_or_default();
        let mut card = p::AgentCard::new(x.name, x.description, x.version);
        card.supported_interfaces = x
            .supported_interfaces
            .into_iter()
            .map(|i| p::AgentInterface {
                url: i.url,
                protocol_binding: i.protocol_binding,
                tenant: opt(i.tenant),
                protocol_version: i.protocol_version,
            })
            .collect();
        card.provider = x.provider.map(|pr| p::AgentProvider {
            url: pr.url,
            organization: pr.organization,
        });
        card.documentation_url = x.documentation_url;
        card.capabilities = p::AgentCapabilities {
            streaming: caps.streaming,
            push_notifications: caps.push_notifications,
            extensions: caps
                .extensions
                .into_iter()
                .map(|e| {
                    Ok(p::AgentExtension {
                        uri: e.uri,
                        description: opt(e.description),
                        required: e.required,
                        params: e.params.map(struct_from_proto).transpose()?,
                    })
                })
                .collect::<R<_>>()?,
            extended_agent_card: caps.extended_agent_card,
        };
        card.security_schemes = x
            .security_schemes
            .into_iter()
            .map(|(k, v)| Ok((k, scheme_from_proto(v)?)))
            .collect::<R<_>>()?;
        card.security_requirements = reqs_from_proto(x.security_requirements);
        card.default_input_modes = x.default_input_modes;
        card.default_output_modes = x.default_output_modes;
        card.skills = x
            .skills
            .into_iter()
            .map(|s| p::AgentSkill {
                id: s.id,
                name: s.name,
                description: s.description,
                tags: s.tags,
                examples: s.examples,
                input_modes: s.input_modes,
                output_modes: s.output_modes,
                security_requirements: reqs_from_proto(s.security_requirements),
            })
            .collect();
        card.signatures = x
            .signatures
            .into_iter()
            .map(|s| {
                Ok(p::AgentCardSignature {
                    protected: s.protected,
                    signature: s.signature,
                    header: s.header.map(struct_from_proto).transpose()?,
                })
            })
            .collect::<R<_>>()?;
        card.icon_url = x.icon_url;
        Ok(card)
    }
}

// ---- security schemes (JSON in the canonical card) ---------------------------

/// A piece of a security scheme: a proto value that stands in the card's
/// ProtoJSON as a JSON value. Reading is lenient like the rest of the card
/// (a missing or mistyped field is the proto3 default); writing leaves
/// empty strings out, as proto3 strings have no presence.
trait SchemeJson: Sized {
    /// The value at `v` (`None`: the field is absent).
    fn read(v: Option<&Value>) -> Self;
    /// The JSON form.
    fn write(self) -> Value;
}

impl SchemeJson for String {
    fn read(v: Option<&Value>) -> Self {
        v.and_then(Value::as_str).unwrap_or_default().to_string()
    }
    fn write(self) -> Value {
        Value::String(self)
    }
}

impl SchemeJson for bool {
    fn read(v: Option<&Value>) -> Self {
        v.and_then(Value::as_bool).unwrap_or(false)
    }
    fn write(self) -> Value {
        Value::Bool(self)
    }
}

/// OAuth scopes: name → description, written sorted by name.
impl SchemeJson for HashMap<String, String> {
    fn read(v: Option<&Value>) -> Self {
        v.and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), String::read(Some(v))))
                    .collect()
            })
            .unwrap_or_default()
    }
    fn write(self) -> Value {
        let sorted: BTreeMap<String, String> = self.into_iter().collect();
        sorted
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect()
    }
}

/// A message-typed field (an OAuth scheme's `flows`): always set going to
/// proto, an unset one written as `{}`.
impl<T: SchemeJson> SchemeJson for Option<T> {
    fn read(v: Option<&Value>) -> Self {
        Some(T::read(v))
    }
    fn write(self) -> Value {
        self.map_or_else(|| obj(vec![]), T::write)
    }
}

/// Builds a JSON object from (key, value) pairs, leaving out empty strings
/// (proto3 strings have no presence).
fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .filter(|(_, v)| !matches!(v, Value::String(s) if s.is_empty()))
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// [`SchemeJson`] for proto messages, from one table of their fields and
/// JSON names: a plain message is an object of its fields; a message that
/// is one oneof is an object with one key, the set case's.
macro_rules! scheme_json {
    ($($message:ident { $($field:ident: $name:literal),+ $(,)? })+) => {$(
        impl SchemeJson for pb::$message {
            fn read(v: Option<&Value>) -> Self {
                pb::$message { $($field: SchemeJson::read(v.and_then(|v| v.get($name)))),+ }
            }
            fn write(self) -> Value {
                obj(vec![$(($name, self.$field.write())),+])
            }
        }
    )+};
    ($($message:ident.$field:ident: $oneof:ident { $($case:ident: $name:literal),+ $(,)? })+) => {$(
        impl SchemeJson for pb::$message {
            /// The first case present, in the table's order.
            fn read(v: Option<&Value>) -> Self {
                let v = v.unwrap_or(&Value::Null);
                let $field = None
                    $(.or_else(|| v.get($name).map(|x| $oneof::$case(SchemeJson::read(Some(x))))))+;
                pb::$message { $field }
            }
            fn write(self) -> Value {
                match self.$field {
                    $(Some($oneof::$case(x)) => obj(vec![($name, x.write())]),)+
                    None => obj(vec![]),
                }
            }
        }
    )+};
}

use pb::o_auth_flows::Flow;
use pb::security_scheme::Scheme;

scheme_json! {
    SecurityScheme.scheme: Scheme {
        ApiKeySecurityScheme: "apiKeySecurityScheme",
        HttpAuthSecurityScheme: "httpAuthSecurityScheme",
        Oauth2SecurityScheme: "oauth2SecurityScheme",
        OpenIdConnectSecurityScheme: "openIdConnectSecurityScheme",
        MtlsSecurityScheme: "mtlsSecurityScheme",
    }
    OAuthFlows.flow: Flow {
        AuthorizationCode: "authorizationCode",
        ClientCredentials: "clientCredentials",
        Implicit: "implicit",
        Password: "password",
        DeviceCode: "deviceCode",
    }
}

scheme_json! {
    ApiKeySecurityScheme { description: "description", location: "location", name: "name" }
    HttpAuthSecurityScheme { description: "description", scheme: "scheme", bearer_format: "bearerFormat" }
    OAuth2SecurityScheme {
        description: "description",
        flows: "flows",
        oauth2_metadata_url: "oauth2MetadataUrl",
    }
    OpenIdConnectSecurityScheme { description: "description", open_id_connect_url: "openIdConnectUrl" }
    MutualTlsSecurityScheme { description: "description" }
    AuthorizationCodeOAuthFlow {
        authorization_url: "authorizationUrl",
        token_url: "tokenUrl",
        refresh_url: "refreshUrl",
        scopes: "scopes",
        pkce_required: "pkceRequired",
    }
    ClientCredentialsOAuthFlow { token_url: "tokenUrl", refresh_url: "refreshUrl", scopes: "scopes" }
    ImplicitOAuthFlow { authorization_url: "authorizationUrl", refresh_url: "refreshUrl", scopes: "scopes" }
    PasswordOAuthFlow { token_url: "tokenUrl", refresh_url: "refreshUrl", scopes: "scopes" }
    DeviceCodeOAuthFlow {
        device_authorization_url: "deviceAuthorizationUrl",
        token_url: "tokenUrl",
        refresh_url: "refreshUrl",
        scopes: "scopes",
    }
}

/// The `SecurityScheme` oneof of a ProtoJSON security scheme object. A
/// kind we do not know maps to an empty scheme (the card is ours, so this
/// only happens when the card was configured with a typo).
fn scheme_to_proto(v: &Value) -> pb::SecurityScheme {
    pb::SecurityScheme::read(Some(v))
}

/// The ProtoJSON object of a proto security scheme; one without a kind is
/// refused.
fn scheme_from_proto(x: pb::SecurityScheme) -> R<Value> {
    if x.scheme.is_none() {
        return Err(ConvertError::invalid(
            "security_schemes",
            "a security scheme has no kind",
        ));
    }
    Ok(x.write())
}

#[cfg(test)]
mod tests;
