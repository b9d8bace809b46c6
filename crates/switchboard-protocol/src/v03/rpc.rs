//! The A2A 0.3 JSON-RPC dialect: `kind`-tagged objects, kebab-case states,
//! bare results, slash method names.
//!
//! ```
//! use switchboard_protocol::v03::rpc;
//! let json = serde_json::json!({"kind": "message", "messageId": "m1", "role": "user",
//!     "parts": [{"kind": "text", "text": "hi"}]});
//! let m: rpc::Message = serde_json::from_value(json).unwrap();
//! let canonical: switchboard_protocol::Message = m.into();
//! assert_eq!(canonical.text(), "hi");
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::serde_util::{self, null_as_default};
use crate::types::Metadata;
use crate::{
    AuthenticationInfo, PartContent, SendMessageConfiguration, SendMessageResponse, StreamResponse,
    TaskPushNotificationConfig as PushConfig10,
};

use super::shared::{self, Dialect};
use super::{data_down, data_up};

/// `user` or `agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The client.
    User,
    /// The agent.
    Agent,
}

impl From<crate::Role> for Role {
    fn from(r: crate::Role) -> Self {
        match r {
            // 0.3 has no "unspecified"; a message without a role is the client's.
            crate::Role::Agent => Role::Agent,
            _ => Role::User,
        }
    }
}

impl From<Role> for crate::Role {
    fn from(r: Role) -> Self {
        match r {
            Role::User => crate::Role::User,
            Role::Agent => crate::Role::Agent,
        }
    }
}

/// A file's content: inline bytes or a URI, never both.
#[derive(Debug, Clone, PartialEq)]
pub enum FileData {
    /// `bytes` (base64 on the wire).
    Bytes(Vec<u8>),
    /// `uri`.
    Uri(String),
}

/// The `file` of a file part.
#[derive(Debug, Clone, PartialEq)]
pub struct FileContent {
    /// `name`.
    pub name: Option<String>,
    /// `mimeType`.
    pub mime_type: Option<String>,
    /// `bytes` or `uri`.
    pub data: FileData,
}

impl Serialize for FileContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        if let Some(n) = &self.name {
            m.serialize_entry("name", n)?;
        }
        if let Some(t) = &self.mime_type {
            m.serialize_entry("mimeType", t)?;
        }
        match &self.data {
            FileData::Bytes(b) => {
                use base64::Engine as _;
                m.serialize_entry(
                    "bytes",
                    &base64::engine::general_purpose::STANDARD.encode(b),
                )?
            }
            FileData::Uri(u) => m.serialize_entry("uri", u)?,
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for FileContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            #[serde(default)]
            name: Option<String>,
            #[serde(default, rename = "mimeType", alias = "mime_type")]
            mime_type: Option<String>,
            #[serde(default)]
            bytes: Option<String>,
            #[serde(default)]
            uri: Option<String>,
        }
        let w = Wire::deserialize(d)?;
        let data = match (w.bytes, w.uri) {
            (Some(b), None) => FileData::Bytes(
                serde_util::base64_bytes::decode(&b)
                    .map_err(|e| serde::de::Error::custom(format!("file.bytes: {e}")))?,
            ),
            (None, Some(u)) => FileData::Uri(u),
            _ => {
                return Err(serde::de::Error::custom(
                    "a file must have exactly one of `bytes` or `uri`",
                ));
            }
        };
        Ok(FileContent {
            name: w.name,
            mime_type: w.mime_type,
            data,
        })
    }
}

/// A 0.3 part, tagged by `kind`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Part {
    /// `{"kind":"text","text":..}`.
    Text {
        /// The text.
        text: String,
        /// Part metadata.
        metadata: Option<Metadata>,
    },
    /// `{"kind":"file","file":{..}}`.
    File {
        /// The file.
        file: FileContent,
        /// Part metadata.
        metadata: Option<Metadata>,
    },
    /// `{"kind":"data","data":{..}}` — an object only.
    Data {
        /// The data object.
        data: Map<String, Value>,
        /// Part metadata.
        metadata: Option<Metadata>,
    },
}

impl From<crate::Part> for Part {
    fn from(p: crate::Part) -> Self {
        match p.content {
            PartContent::Text(text) => Part::Text {
                text,
                metadata: p.metadata,
            },
            PartContent::Raw(b) => Part::File {
                file: FileContent {
                    name: p.filename,
                    mime_type: p.media_type,
                    data: FileData::Bytes(b),
                },
                metadata: p.metadata,
            },
            PartContent::Url(u) => Part::File {
                file: FileContent {
                    name: p.filename,
                    mime_type: p.media_type,
                    data: FileData::Uri(u),
                },
                metadata: p.metadata,
            },
            PartContent::Data(v) => {
                let (data, metadata) = data_down(v, p.metadata);
                Part::Data { data, metadata }
            }
        }
    }
}

impl From<Part> for crate::Part {
    fn from(p: Part) -> Self {
        match p {
            Part::Text { text, metadata } => crate::Part {
                metadata,
                ..crate::Part::text(text)
            },
            Part::File { file, metadata } => {
                let base = match file.data {
                    FileData::Bytes(b) => crate::Part::raw(b, String::new()),
                    FileData::Uri(u) => crate::Part::url(u),
                };
                crate::Part {
                    metadata,
                    filename: file.name,
                    media_type: file.mime_type,
                    ..base
                }
            }
            Part::Data { data, metadata } => {
                let (v, metadata) = data_up(data, metadata);
                crate::Part {
                    metadata,
                    ..crate::Part::data(v)
                }
            }
        }
    }
}

fn parts_up(parts: Vec<Part>) -> Vec<crate::Part> {
    parts.into_iter().map(Into::into).collect()
}

fn parts_down(parts: Vec<crate::Part>) -> Vec<Part> {
    parts.into_iter().map(Into::into).collect()
}

/// A 0.3 message (`kind: "message"` when it stands alone, see [`Event`]).
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
    pub role: Role,
    /// Content (REQUIRED).
    #[serde_with(skip_apply)]
    #[serde(deserialize_with = "null_as_default")]
    pub parts: Vec<Part>,
    /// Metadata.
    pub metadata: Option<Metadata>,
    /// Extension URIs.
    pub extensions: Vec<String>,
    /// Referenced tasks.
    #[serde(alias = "reference_task_ids")]
    pub reference_task_ids: Vec<String>,
    /// Always `"message"`.
    #[serde(default = "kind_message")]
    pub kind: String,
}

fn kind_message() -> String {
    "message".into()
}

impl From<crate::Message> for Message {
    fn from(m: crate::Message) -> Self {
        Message {
            message_id: m.message_id,
            context_id: m.context_id,
            task_id: m.task_id,
            role: m.role.into(),
            parts: parts_down(m.parts),
            metadata: m.metadata,
            extensions: m.extensions,
            reference_task_ids: m.reference_task_ids,
            kind: kind_message(),
        }
    }
}

impl From<Message> for crate::Message {
    fn from(m: Message) -> Self {
        crate::Message {
            message_id: m.message_id,
            context_id: m.context_id,
            task_id: m.task_id,
            role: m.role.into(),
            parts: parts_up(m.parts),
            metadata: m.metadata,
            extensions: m.extensions,
            reference_task_ids: m.reference_task_ids,
        }
    }
}

/// The JSON-RPC dialect's contents of the objects shared with REST
/// ([`super::shared`]): kebab-case states, `kind`-tagged messages and parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rpc;

/// States are kebab-case (`input-required`), and the unspecified state is
/// `unknown`.
impl Dialect for Rpc {
    type Message = Message;
    type Part = Part;
    type SendConfiguration = MessageSendConfiguration;

    fn state_name(state: crate::TaskState) -> &'static str {
        match state {
            crate::TaskState::Unspecified => "unknown",
            other => other.label(),
        }
    }
}

/// A task's status.
pub type TaskStatus = shared::TaskStatus<Rpc>;
/// An artifact.
pub type Artifact = shared::Artifact<Rpc>;
/// A task (`kind: "task"` via [`Event`]).
pub type Task = shared::Task<Rpc>;
/// A status change, with the 0.3 `final` flag.
pub type TaskStatusUpdateEvent = shared::TaskStatusUpdateEvent<Rpc>;
/// An artifact change.
pub type TaskArtifactUpdateEvent = shared::TaskArtifactUpdateEvent<Rpc>;

/// Any 0.3 result object, tagged by `kind`: the result of `message/send`
/// (task or message), `tasks/get`/`tasks/cancel` (task) and every stream item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Event {
    /// `kind: "task"`.
    Task(Task),
    /// `kind: "message"`.
    Message(Message),
    /// `kind: "status-update"`.
    StatusUpdate(TaskStatusUpdateEvent),
    /// `kind: "artifact-update"`.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// Written by hand for one reason: a [`Message`] carries its own `kind`
/// (it needs it wherever it stands alone), so the derived tagging would
/// write `kind` twice. Decoding needs no such care: the tag is taken off
/// before the message reads its fields, and its `kind` defaults.
impl Serialize for Event {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "kind", rename_all = "kebab-case")]
        enum Tagged<'a> {
            Task(&'a Task),
            StatusUpdate(&'a TaskStatusUpdateEvent),
            ArtifactUpdate(&'a TaskArtifactUpdateEvent),
        }
        match self {
            Event::Message(m) => m.serialize(s),
            Event::Task(t) => Tagged::Task(t).serialize(s),
            Event::StatusUpdate(e) => Tagged::StatusUpdate(e).serialize(s),
            Event::ArtifactUpdate(e) => Tagged::ArtifactUpdate(e).serialize(s),
        }
    }
}

impl Event {
    /// A bare task result.
    pub fn task(t: crate::Task) -> Self {
        Event::Task(t.into())
    }
}

variants_into!(StreamResponse => Event { Task, Message, StatusUpdate, ArtifactUpdate });
variants_into!(Event => StreamResponse { Task, Message, StatusUpdate, ArtifactUpdate });
variants_into!(SendMessageResponse => Event { Task, Message });

/// How a 0.3 push config authenticates.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationAuthenticationInfo {
    /// Accepted schemes (0.3 lists several; 1.0 keeps the first).
    #[serde(default, deserialize_with = "null_as_default")]
    pub schemes: Vec<String>,
    /// Credentials.
    pub credentials: Option<String>,
}

/// A 0.3 webhook config.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationConfig {
    /// Config id.
    pub id: Option<String>,
    /// Webhook URL.
    pub url: String,
    /// Token echoed to the receiver.
    pub token: Option<String>,
    /// Authentication.
    pub authentication: Option<PushNotificationAuthenticationInfo>,
}

/// A 0.3 config bound to a task (params of `set`, result of `set`/`get`/`list`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The config.
    #[serde(alias = "push_notification_config")]
    pub push_notification_config: PushNotificationConfig,
}

impl PushNotificationConfig {
    /// The 1.0 config for `task_id` (first scheme only, see the module docs).
    pub fn into_v10(self, task_id: Option<String>) -> PushConfig10 {
        PushConfig10 {
            tenant: None,
            id: self.id.filter(|s| !s.is_empty()),
            task_id,
            url: self.url,
            token: self.token,
            authentication: self.authentication.and_then(|a| {
                let scheme = a.schemes.into_iter().next()?;
                Some(AuthenticationInfo {
                    scheme,
                    credentials: a.credentials,
                })
            }),
        }
    }

    /// The 0.3 form of a 1.0 config.
    pub fn from_v10(c: &PushConfig10) -> Self {
        PushNotificationConfig {
            id: c.id.clone(),
            url: c.url.clone(),
            token: c.token.clone(),
            authentication: c
                .authentication
                .as_ref()
                .map(|a| PushNotificationAuthenticationInfo {
                    schemes: vec![a.scheme.clone()],
                    credentials: a.credentials.clone(),
                }),
        }
    }
}

impl From<TaskPushNotificationConfig> for PushConfig10 {
    fn from(c: TaskPushNotificationConfig) -> Self {
        c.push_notification_config.into_v10(Some(c.task_id))
    }
}

impl From<PushConfig10> for TaskPushNotificationConfig {
    fn from(c: PushConfig10) -> Self {
        TaskPushNotificationConfig {
            push_notification_config: PushNotificationConfig::from_v10(&c),
            task_id: c.task_id.unwrap_or_default(),
        }
    }
}

/// `message/send` configuration.
#[serde_with::apply(
    Vec => #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")],
)]
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSendConfiguration {
    /// Accepted output media types.
    #[serde(alias = "accepted_output_modes")]
    pub accepted_output_modes: Vec<String>,
    /// History to return.
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
    /// A webhook for the new task.
    #[serde(alias = "push_notification_config")]
    pub push_notification_config: Option<PushNotificationConfig>,
    /// Wait for the task to finish (unset: wait).
    pub blocking: Option<bool>,
}

/// Params of `message/send` and `message/stream`.
pub type MessageSendParams = shared::MessageSendParams<Rpc>;

/// An unset `blocking` blocks.
impl From<MessageSendConfiguration> for SendMessageConfiguration {
    fn from(c: MessageSendConfiguration) -> Self {
        SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes,
            task_push_notification_config: c.push_notification_config.map(|pc| pc.into_v10(None)),
            history_length: c.history_length,
            return_immediately: c.blocking == Some(false),
        }
    }
}

impl From<SendMessageConfiguration> for MessageSendConfiguration {
    fn from(c: SendMessageConfiguration) -> Self {
        MessageSendConfiguration {
            accepted_output_modes: c.accepted_output_modes,
            history_length: c.history_length,
            push_notification_config: c
                .task_push_notification_config
                .as_ref()
                .map(PushNotificationConfig::from_v10),
            blocking: Some(!c.return_immediately),
        }
    }
}

/// Params of `tasks/get`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskQueryParams {
    /// Task id.
    pub id: String,
    /// History to return.
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
    /// Metadata.
    pub metadata: Option<Metadata>,
}

/// Params of `tasks/cancel`, `tasks/resubscribe` and `tasks/pushNotificationConfig/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskIdParams {
    /// Task id.
    pub id: String,
    /// Metadata.
    pub metadata: Option<Metadata>,
}

/// Params of `tasks/pushNotificationConfig/get` (config id optional) and
/// `.../delete` (config id required; checked by the binding).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushConfigParams {
    /// Task id.
    pub id: String,
    /// Config id.
    #[serde(alias = "push_notification_config_id")]
    pub push_notification_config_id: Option<String>,
    /// Metadata.
    pub metadata: Option<Metadata>,
}

/// The two `From` impls between 0.3 params and the 1.0 request they stand
/// for: the fields both have move by name (listed before the `;`); the
/// fields only the params have get the value written after it, and the 1.0
/// request's tenant is `None` (0.3 has no tenant: a 0.3 call acts in the
/// default tenant, and a 1.0 tenant is lost going down).
macro_rules! params_both_ways {
    ($params:ident { $($field:ident),* ; $($own:ident: $value:expr),* } <=> $request:ident) => {
        impl From<$params> for crate::$request {
            fn from(p: $params) -> Self {
                crate::$request { tenant: None, $($field: p.$field),* }
            }
        }

        impl From<crate::$request> for $params {
            fn from(r: crate::$request) -> Self {
                $params { $($field: r.$field,)* $($own: $value),* }
            }
        }
    };
}

// The server's 0.3 JSON-RPC binding reads 1.0 requests out of these params,
// the client's 0.3 transport writes them from 1.0 requests. 0.3 metadata has
// no place in a 1.0 subscribe request.
params_both_ways!(TaskQueryParams { id, history_length; metadata: None } <=> GetTaskRequest);
params_both_ways!(TaskIdParams { id, metadata; } <=> CancelTaskRequest);
params_both_ways!(TaskIdParams { id; metadata: None } <=> SubscribeToTaskRequest);

/// `tasks/pushNotificationConfig/list` names the task; 0.3 lists without
/// paging, so the 1.0 page fields have no 0.3 place.
impl From<crate::ListTaskPushNotificationConfigsRequest> for TaskIdParams {
    fn from(r: crate::ListTaskPushNotificationConfigsRequest) -> Self {
        TaskIdParams {
            id: r.task_id,
            metadata: None,
        }
    }
}

impl From<crate::TaskPushNotificationConfigRef> for PushConfigParams {
    fn from(r: crate::TaskPushNotificationConfigRef) -> Self {
        PushConfigParams {
            id: r.task_id,
            push_notification_config_id: Some(r.id),
            metadata: None,
        }
    }
}
