//! The A2A 0.3 HTTP+JSON dialect: ProtoJSON of the 0.3 proto (`a2a.v1`).
//!
//! Differences from the 1.0 ProtoJSON a binding must get right: message
//! parts are under `content`; a part is `{"text"}`, `{"file": {"fileWithUri"
//! | "fileWithBytes", "mimeType", "name"}}` or `{"data": {"data": {..}}}`;
//! the canceled state is `TASK_STATE_CANCELLED` (two L); a status's message
//! is `message` (proto field `update`); status updates carry `final`; push
//! configs are `{name: "tasks/{id}/pushNotificationConfigs/{cid}",
//! pushNotificationConfig: {..}}`. Nothing outside the 0.3 proto is emitted,
//! because the official 0.3 clients parse strictly.
//!
//! ```
//! use switchboard_protocol::v03::rest;
//! let t = switchboard_protocol::Task {
//!     id: "t1".into(), context_id: "c1".into(),
//!     status: switchboard_protocol::TaskStatus::new(switchboard_protocol::TaskState::Canceled),
//!     artifacts: None, history: None, metadata: None,
//! };
//! let json = serde_json::to_value(rest::Task::from(t)).unwrap();
//! assert_eq!(json["status"]["state"], "TASK_STATE_CANCELLED");
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::serde_util::{self, null_as_default};
use crate::types::Metadata;
use crate::{
    PartContent, SendMessageConfiguration, SendMessageResponse,
    TaskPushNotificationConfig as PushConfig10,
};

use super::rpc::PushNotificationConfig;
use super::shared::{self, Dialect};
use super::{data_down, data_up};

/// A 0.3 REST part: exactly one of text, file or data, plus metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The content (a 1.0 part's content; data is always an object here).
    pub content: PartContent,
    /// `file.name`.
    pub name: Option<String>,
    /// `file.mimeType`.
    pub mime_type: Option<String>,
    /// Part metadata.
    pub metadata: Option<Metadata>,
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::Raw(_) | PartContent::Url(_) => {
                let mut f = Map::new();
                match &self.content {
                    PartContent::Raw(b) => {
                        use base64::Engine as _;
                        f.insert(
                            "fileWithBytes".into(),
                            Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
                        );
                    }
                    PartContent::Url(u) => {
                        f.insert("fileWithUri".into(), Value::String(u.clone()));
                    }
                    _ => {}
                }
                if let Some(t) = &self.mime_type {
                    f.insert("mimeType".into(), Value::String(t.clone()));
                }
                if let Some(n) = &self.name {
                    f.insert("name".into(), Value::String(n.clone()));
                }
                m.serialize_entry("file", &f)?
            }
            PartContent::Data(v) => m.serialize_entry("data", &serde_json::json!({ "data": v }))?,
        }
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        #[derive(Deserialize)]
        struct FileWire {
            #[serde(default, rename = "fileWithUri", alias = "file_with_uri")]
            uri: Option<String>,
            #[serde(default, rename = "fileWithBytes", alias = "file_with_bytes")]
            bytes: Option<String>,
            #[serde(default, rename = "mimeType", alias = "mime_type")]
            mime_type: Option<String>,
            #[serde(default)]
            name: Option<String>,
        }
        #[derive(Deserialize)]
        struct DataWire {
            data: Map<String, Value>,
        }
        #[derive(Deserialize)]
        struct Wire {
            #[serde(default)]
            text: Option<String>,
            #[serde(default)]
            file: Option<FileWire>,
            #[serde(default)]
            data: Option<DataWire>,
            #[serde(default)]
            metadata: Option<Metadata>,
        }
        let w = Wire::deserialize(d)?;
        let (content, name, mime_type) = match (w.text, w.file, w.data) {
            (Some(t), None, None) => (PartContent::Text(t), None, None),
            (None, Some(f), None) => {
                let content = match (f.uri, f.bytes) {
                    (Some(u), None) => PartContent::Url(u),
                    (None, Some(b)) => PartContent::Raw(
                        serde_util::base64_bytes::decode(&b)
                            .map_err(|e| D::Error::custom(format!("file.fileWithBytes: {e}")))?,
                    ),
                    _ => {
                        return Err(D::Error::custom(
                            "a file must have exactly one of `fileWithUri` or `fileWithBytes`",
                        ));
                    }
                };
                (content, f.name, f.mime_type)
            }
            (None, None, Some(data)) => {
                return Ok(Part {
                    content: PartContent::Data(Value::Object(data.data)),
                    name: None,
                    mime_type: None,
                    metadata: w.metadata,
                });
            }
            _ => {
                return Err(D::Error::custom(
                    "a part must have exactly one of `text`, `file` or `data`",
                ));
            }
        };
        Ok(Part {
            content,
            name,
            mime_type,
            metadata: w.metadata,
        })
    }
}

impl From<crate::Part> for Part {
    fn from(p: crate::Part) -> Self {
        match p.content {
            PartContent::Data(v) => {
                let (obj, metadata) = data_down(v, p.metadata);
                Part {
                    content: PartContent::Data(Value::Object(obj)),
                    name: None,
                    mime_type: None,
                    metadata,
                }
            }
            PartContent::Text(t) => Part {
                content: PartContent::Text(t),
                name: None,
                mime_type: None,
                metadata: p.metadata,
            },
            content => Part {
                content,
                name: p.filename,
                mime_type: p.media_type,
                metadata: p.metadata,
            },
        }
    }
}

impl From<Part> for crate::Part {
    fn from(p: Part) -> Self {
        match p.content {
            PartContent::Data(Value::Object(obj)) => {
                let (v, metadata) = data_up(obj, p.metadata);
                crate::Part {
                    metadata,
                    ..crate::Part::data(v)
                }
            }
            content => crate::Part {
                content,
                metadata: p.metadata,
                filename: p.name,
                media_type: p.mime_type,
            },
        }
    }
}

/// Role by its proto name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// Unspecified.
    #[serde(rename = "ROLE_UNSPECIFIED")]
    Unspecified,
    /// Client.
    #[serde(rename = "ROLE_USER")]
    User,
    /// Agent.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

/// A 0.3 REST message (parts under `content`).
#[serde_with::apply(
    Vec => #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")],
)]
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Id.
    #[serde(alias = "message_id")]
    pub message_id: String,
    /// Context.
    #[serde(alias = "context_id")]
    pub context_id: Option<String>,
    /// Task.
    #[serde(alias = "task_id")]
    pub task_id: Option<String>,
    /// Sender.
    #[serde(default = "role_unspecified")]
    pub role: Role,
    /// Parts (always written, even when empty).
    #[serde_with(skip_apply)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub content: Vec<Part>,
    /// Metadata.
    pub metadata: Option<Metadata>,
    /// Extensions.
    pub extensions: Vec<String>,
}

fn role_unspecified() -> Role {
    Role::Unspecified
}

impl From<crate::Message> for Message {
    fn from(m: crate::Message) -> Self {
        Message {
            message_id: m.message_id,
            context_id: m.context_id,
            task_id: m.task_id,
            role: match m.role {
                crate::Role::User => Role::User,
                crate::Role::Agent => Role::Agent,
                _ => Role::Unspecified,
            },
            content: m.parts.into_iter().map(Into::into).collect(),
            metadata: m.metadata,
            extensions: m.extensions,
        }
    }
}

impl From<Message> for crate::Message {
    fn from(m: Message) -> Self {
        crate::Message {
            message_id: m.message_id,
            context_id: m.context_id,
            task_id: m.task_id,
            role: match m.role {
                Role::User => crate::Role::User,
                Role::Agent => crate::Role::Agent,
                Role::Unspecified => crate::Role::Unspecified,
            },
            parts: m.content.into_iter().map(Into::into).collect(),
            metadata: m.metadata,
            extensions: m.extensions,
            reference_task_ids: Vec::new(),
        }
    }
}

/// The REST dialect's contents of the objects shared with JSON-RPC
/// ([`super::shared`]): `TASK_STATE_*` states, messages with `content`,
/// parts without `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rest;

/// States are the proto enum names, with the 0.3 proto's two-L
/// `TASK_STATE_CANCELLED` (the 1.0 spelling, one L, is accepted too).
impl Dialect for Rest {
    type Message = Message;
    type Part = Part;
    type SendConfiguration = SendMessageConfiguration03;

    fn state_name(state: crate::TaskState) -> &'static str {
        match state {
            crate::TaskState::Canceled => "TASK_STATE_CANCELLED",
            other => other.as_str(),
        }
    }

    const STATE_ALIAS: Option<(&'static str, crate::TaskState)> =
        Some(("TASK_STATE_CANCELED", crate::TaskState::Canceled));
}

/// A task's status (the message is under `message`, proto field `update`).
pub type TaskStatus = shared::TaskStatus<Rest>;
/// An artifact.
pub type Artifact = shared::Artifact<Rest>;
/// A task.
pub type Task = shared::Task<Rest>;
/// A status change with `final`.
pub type TaskStatusUpdateEvent = shared::TaskStatusUpdateEvent<Rest>;
/// An artifact change.
pub type TaskArtifactUpdateEvent = shared::TaskArtifactUpdateEvent<Rest>;

/// A stream item (and the result of `message:send`, which only uses `task`/`message`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// A task.
    Task(Task),
    /// A message (proto field `msg`, JSON name `message`).
    #[serde(alias = "msg")]
    Message(Message),
    /// A status update.
    #[serde(alias = "status_update")]
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact update.
    #[serde(alias = "artifact_update")]
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

variants_into!(crate::StreamResponse => StreamResponse { Task, Message, StatusUpdate, ArtifactUpdate });
variants_into!(StreamResponse => crate::StreamResponse { Task, Message, StatusUpdate, ArtifactUpdate });
variants_into!(SendMessageResponse => StreamResponse { Task, Message });

/// `SendMessageConfiguration` of the 0.3 proto.
#[serde_with::apply(
    Vec => #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")],
)]
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration03 {
    /// Accepted output modes.
    #[serde(alias = "accepted_output_modes")]
    pub accepted_output_modes: Vec<String>,
    /// A webhook for the new task.
    #[serde(alias = "push_notification")]
    pub push_notification: Option<PushNotificationConfig>,
    /// History to return.
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
    /// Wait for the task. Unset inside a configuration means `false` (the
    /// proto3 default); a request without a configuration blocks.
    pub blocking: Option<bool>,
}

/// Body of `POST /v1/message:send` and `/v1/message:stream`.
pub type SendMessageRequest03 = shared::MessageSendParams<Rest>;

impl From<SendMessageConfiguration03> for SendMessageConfiguration {
    fn from(c: SendMessageConfiguration03) -> Self {
        SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes,
            task_push_notification_config: c.push_notification.map(|p| p.into_v10(None)),
            history_length: c.history_length,
            // Proto3: an unset bool is false, and ProtoJSON writers omit
            // `blocking: false`, so inside a configuration only an
            // explicit `true` blocks (as the 0.3 reference server reads it).
            return_immediately: c.blocking != Some(true),
        }
    }
}

impl From<SendMessageConfiguration> for SendMessageConfiguration03 {
    fn from(c: SendMessageConfiguration) -> Self {
        SendMessageConfiguration03 {
            accepted_output_modes: c.accepted_output_modes,
            push_notification: c
                .task_push_notification_config
                .as_ref()
                .map(PushNotificationConfig::from_v10),
            history_length: c.history_length,
            blocking: Some(!c.return_immediately),
        }
    }
}

/// A push config as the 0.3 proto names it: `tasks/{id}/pushNotificationConfigs/{cid}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Resource name.
    #[serde(default)]
    pub name: String,
    /// The config.
    #[serde(alias = "push_notification_config")]
    pub push_notification_config: PushNotificationConfig,
}

impl From<PushConfig10> for TaskPushNotificationConfig {
    fn from(c: PushConfig10) -> Self {
        TaskPushNotificationConfig {
            name: format!(
                "tasks/{}/pushNotificationConfigs/{}",
                c.task_id.as_deref().unwrap_or_default(),
                c.id.as_deref().unwrap_or_default()
            ),
            push_notification_config: PushNotificationConfig::from_v10(&c),
        }
    }
}

/// Result of `GET /v1/tasks/{id}/pushNotificationConfigs`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigResponse {
    /// The configs.
    #[serde(default, deserialize_with = "null_as_default")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Cursor; empty on the last page.
    #[serde(default, alias = "next_page_token")]
    pub next_page_token: String,
}

impl From<TaskPushNotificationConfig> for PushConfig10 {
    /// The task id comes from the resource name (`tasks/{id}/...`).
    fn from(c: TaskPushNotificationConfig) -> Self {
        let task_id = c
            .name
            .strip_prefix("tasks/")
            .and_then(|rest| rest.split('/').next())
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        c.push_notification_config.into_v10(task_id)
    }
}
