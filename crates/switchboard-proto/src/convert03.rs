//! Conversions between the prost types of the A2A 0.3 proto (`a2a.v1`) and
//! the canonical 1.0 [`switchboard_protocol`] types.
//!
//! 0.3 lives only at the edges, and the rules of *what* 0.3 can and cannot
//! say are already written once, in `switchboard_protocol::v03` (its module
//! doc has the table of losses). The 0.3 REST dialect there is ProtoJSON of
//! this very proto, so its types (`v03::rest::*`) are the proto's messages in
//! serde form. This module therefore only moves fields between the prost
//! messages and those types, and lets `v03` do the 0.3 ↔ 1.0 step:
//!
//! ```text
//! prost a2a.v1  ⇄  v03::rest (0.3 data model)  ⇄  canonical 1.0
//! ```
//!
//! So the 0.3 gRPC binding loses exactly what the 0.3 JSON bindings lose
//! (file/text part naming, non-object data values wrapped with
//! `data_part_compat`, one push auth scheme, no tenant, `final` re-derived),
//! plus what proto3 itself cannot say:
//!
//! - `history_length` and `page_size` are plain `int32`: `0` means "not
//!   set", so a 0.3 gRPC caller cannot ask for zero history;
//! - `blocking` is a plain `bool`: a configuration without it does not
//!   block, a request without any configuration does (as over 0.3 REST);
//! - the card: 1.0-only fields (`tenant` on interfaces, `pkce_required`,
//!   device-code OAuth flows, per-interface protocol versions) have no 0.3
//!   field; the 0.3 card is built from the card's 0.3 interfaces.
//!
//! Resource names: tasks are `tasks/{id}`, push configs
//! `tasks/{id}/pushNotificationConfigs/{config_id}`. [`task_name`] and
//! [`config_name`] read them; a name of another shape is a
//! [`ConvertError::Invalid`] naming the field.
//!
//! Required-field and JSON-value rules are those of [`crate::convert`].

use std::collections::HashMap;

use serde_json::{Map, Value};
use switchboard_protocol as p;
use switchboard_protocol::PartContent;
use switchboard_protocol::v03::rest as r03;
use switchboard_protocol::v03::rpc::{PushNotificationAuthenticationInfo, PushNotificationConfig};

use crate::ConvertError;
// The 0.3 proto numbers the task states as 1.0 does (`CANCELLED` is 5 in
// both), so a state goes to and from its number the 1.0 way.
use crate::convert::{
    state_from_proto, state_to_proto, struct_from_proto, struct_into_proto, timestamp_from_proto,
    timestamp_to_proto,
};
use crate::v03 as pb;

type R<T> = Result<T, ConvertError>;

fn opt(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

fn meta_to(m: Option<Map<String, Value>>) -> Option<prost_types::Struct> {
    m.map(struct_into_proto)
}

fn meta_from(m: Option<prost_types::Struct>) -> R<Option<Map<String, Value>>> {
    m.map(struct_from_proto).transpose()
}

// ---- resource names ------------------------------------------------------------

/// The task id of `tasks/{id}`.
pub fn task_name(name: &str, field: &'static str) -> R<String> {
    match name.strip_prefix("tasks/") {
        Some(id) if !id.is_empty() && !id.contains('/') => Ok(id.to_string()),
        _ => Err(ConvertError::Invalid {
            field,
            reason: format!("{name:?} is not of the form tasks/{{id}}"),
        }),
    }
}

/// The (task id, config id) of `tasks/{id}/pushNotificationConfigs/{config_id}`.
/// The config id may be empty (`tasks/{id}/pushNotificationConfigs/`): 0.3
/// clients send that for "the task's config".
pub fn config_name(name: &str, field: &'static str) -> R<(String, String)> {
    let bad = || ConvertError::Invalid {
        field,
        reason: format!(
            "{name:?} is not of the form tasks/{{id}}/pushNotificationConfigs/{{config_id}}"
        ),
    };
    let rest = name.strip_prefix("tasks/").ok_or_else(bad)?;
    let (task, cfg) = rest
        .split_once("/pushNotificationConfigs")
        .ok_or_else(bad)?;
    let cfg = match cfg {
        "" => "",
        c => c.strip_prefix('/').ok_or_else(bad)?,
    };
    if task.is_empty() || task.contains('/') || cfg.contains('/') {
        return Err(bad());
    }
    Ok((task.to_string(), cfg.to_string()))
}

/// `tasks/{task_id}/pushNotificationConfigs/{id}`.
pub fn config_name_of(task_id: &str, id: &str) -> String {
    format!("tasks/{task_id}/pushNotificationConfigs/{id}")
}

// ---- enums ---------------------------------------------------------------------

fn role_to(r: r03::Role) -> i32 {
    (match r {
        r03::Role::User => pb::Role::User,
        r03::Role::Agent => pb::Role::Agent,
        r03::Role::Unspecified => pb::Role::Unspecified,
    }) as i32
}

fn role_from(n: i32) -> R<r03::Role> {
    match pb::Role::try_from(n) {
        Ok(pb::Role::User) => Ok(r03::Role::User),
        Ok(pb::Role::Agent) => Ok(r03::Role::Agent),
        Ok(pb::Role::Unspecified) => Ok(r03::Role::Unspecified),
        Err(_) => Err(ConvertError::Invalid {
            field: "role",
            reason: format!("unknown role {n}"),
        }),
    }
}

// ---- data objects: prost ⇄ 0.3 data model --------------------------------------

fn part_to(x: r03::Part) -> pb::Part {
    use pb::file_part::File;
    use pb::part::Part as K;
    let kind = match x.content {
        PartContent::Text(t) => K::Text(t),
        PartContent::Raw(b) => K::File(pb::FilePart {
            file: Some(File::FileWithBytes(b)),
            mime_type: x.mime_type.unwrap_or_default(),
            name: x.name.unwrap_or_default(),
        }),
        PartContent::Url(u) => K::File(pb::FilePart {
            file: Some(File::FileWithUri(u)),
            mime_type: x.mime_type.unwrap_or_default(),
            name: x.name.unwrap_or_default(),
        }),
        // `r03::Part::from` always gives an object here.
        PartContent::Data(Value::Object(m)) => K::Data(pb::DataPart {
            data: Some(struct_into_proto(m)),
        }),
        PartContent::Data(other) => {
            let mut m = Map::new();
            m.insert("value".into(), other);
            K::Data(pb::DataPart {
                data: Some(struct_into_proto(m)),
            })
        }
        // PartContent is non-exhaustive; a future kind has no 0.3 form.
        _ => K::Text(String::new()),
    };
    pb::Part {
        part: Some(kind),
        metadata: meta_to(x.metadata),
    }
}

fn part_from(x: pb::Part) -> R<r03::Part> {
    use pb::file_part::File;
    use pb::part::Part as K;
    let metadata = meta_from(x.metadata)?;
    Ok(match x.part.ok_or(ConvertError::Missing("part.part"))? {
        K::Text(t) => r03::Part {
            content: PartContent::Text(t),
            name: None,
            mime_type: None,
            metadata,
        },
        K::File(f) => r03::Part {
            content: match f.file.ok_or(ConvertError::Missing("part.file.file"))? {
                File::FileWithUri(u) => PartContent::Url(u),
                File::FileWithBytes(b) => PartContent::Raw(b),
            },
            name: opt(f.name),
            mime_type: opt(f.mime_type),
            metadata,
        },
        // A DataPart without its Struct is the empty object (an empty
        // Struct and an absent one look alike to some writers).
        K::Data(d) => r03::Part {
            content: PartContent::Data(Value::Object(
                d.data
                    .map(struct_from_proto)
                    .transpose()?
                    .unwrap_or_default(),
            )),
            name: None,
            mime_type: None,
            metadata,
        },
    })
}

fn message_to(x: r03::Message) -> pb::Message {
    pb::Message {
        message_id: x.message_id,
        context_id: x.context_id.unwrap_or_default(),
        task_id: x.task_id.unwrap_or_default(),
        role: role_to(x.role),
        content: x.content.into_iter().map(part_to).collect(),
        metadata: meta_to(x.metadata),
        extensions: x.extensions,
    }
}

fn message_from(x: pb::Message) -> R<r03::Message> {
    Ok(r03::Message {
        message_id: x.message_id,
        context_id: opt(x.context_id),
        task_id: opt(x.task_id),
        role: role_from(x.role)?,
        content: x.content.into_iter().map(part_from).collect::<R<_>>()?,
        metadata: meta_from(x.metadata)?,
        extensions: x.extensions,
    })
}

fn status_to(x: r03::TaskStatus) -> pb::TaskStatus {
    pb::TaskStatus {
        state: state_to_proto(x.state),
        update: x.message.map(message_to),
        timestamp: x.timestamp.as_ref().map(timestamp_to_proto),
    }
}

fn status_from(x: pb::TaskStatus) -> R<r03::TaskStatus> {
    Ok(r03::TaskStatus {
        state: state_from_proto(x.state, "status.state")?,
        message: x.update.map(message_from).transpose()?,
        timestamp: x
            .timestamp
            .map(|t| timestamp_from_proto(t, "status.timestamp"))
            .transpose()?,
    })
}

fn artifact_to(x: r03::Artifact) -> pb::Artifact {
    pb::Artifact {
        artifact_id: x.artifact_id,
        name: x.name.unwrap_or_default(),
        description: x.description.unwrap_or_default(),
        parts: x.parts.into_iter().map(part_to).collect(),
        metadata: meta_to(x.metadata),
        extensions: x.extensions,
    }
}

fn artifact_from(x: pb::Artifact) -> R<r03::Artifact> {
    Ok(r03::Artifact {
        artifact_id: x.artifact_id,
        name: opt(x.name),
        description: opt(x.description),
        parts: x.parts.into_iter().map(part_from).collect::<R<_>>()?,
        metadata: meta_from(x.metadata)?,
        extensions: x.extensions,
    })
}

fn task_to(x: r03::Task) -> pb::Task {
    pb::Task {
        id: x.id,
        context_id: x.context_id,
        status: Some(status_to(x.status)),
        artifacts: x
            .artifacts
            .unwrap_or_default()
            .into_iter()
            .map(artifact_to)
            .collect(),
        history: x
            .history
            .unwrap_or_default()
            .into_iter()
            .map(message_to)
            .collect(),
        metadata: meta_to(x.metadata),
    }
}

fn task_from(x: pb::Task) -> R<r03::Task> {
    let nonempty = |n: usize| n > 0;
    Ok(r03::Task {
        id: x.id,
        context_id: x.context_id,
        status: status_from(x.status.ok_or(ConvertError::Missing("task.status"))?)?,
        artifacts: nonempty(x.artifacts.len())
            .then(|| x.artifacts.into_iter().map(artifact_from).collect::<R<_>>())
            .transpose()?,
        history: nonempty(x.history.len())
            .then(|| x.history.into_iter().map(message_from).collect::<R<_>>())
            .transpose()?,
        metadata: meta_from(x.metadata)?,
    })
}

fn push_to(x: PushNotificationConfig) -> pb::PushNotificationConfig {
    pb::PushNotificationConfig {
        id: x.id.unwrap_or_default(),
        url: x.url,
        token: x.token.unwrap_or_default(),
        authentication: x.authentication.map(|a| pb::AuthenticationInfo {
            schemes: a.schemes,
            credentials: a.credentials.unwrap_or_default(),
        }),
    }
}

fn push_from(x: pb::PushNotificationConfig) -> PushNotificationConfig {
    PushNotificationConfig {
        id: opt(x.id),
        url: x.url,
        token: opt(x.token),
        authentication: x
            .authentication
            .map(|a| PushNotificationAuthenticationInfo {
                schemes: a.schemes,
                credentials: opt(a.credentials),
            }),
    }
}

// ---- public: canonical ⇄ prost ----------------------------------------------------

/// A canonical task as a 0.3 `Task`.
pub fn task_to_proto(t: &p::Task) -> pb::Task {
    task_to(t.clone().into())
}

/// A 0.3 `Task` as a canonical task.
pub fn task_from_proto(t: pb::Task) -> R<p::Task> {
    Ok(task_from(t)?.into())
}

/// A canonical message as a 0.3 `Message` (parts under `content`).
pub fn message_to_proto(m: &p::Message) -> pb::Message {
    message_to(m.clone().into())
}

/// A 0.3 `Message` as a canonical message.
pub fn message_from_proto(m: pb::Message) -> R<p::Message> {
    Ok(message_from(m)?.into())
}

/// A canonical stream item as a 0.3 `StreamResponse`; a status update gets
/// `final` for the states after which our streams end.
pub fn stream_to_proto(r: &p::StreamResponse) -> pb::StreamResponse {
    use pb::stream_response::Payload;
    let payload = match r03::StreamResponse::from(r.clone()) {
        r03::StreamResponse::Task(t) => Payload::Task(task_to(t)),
        r03::StreamResponse::Message(m) => Payload::Msg(message_to(m)),
        r03::StreamResponse::StatusUpdate(e) => Payload::StatusUpdate(pb::TaskStatusUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            status: Some(status_to(e.status)),
            r#final: e.is_final,
            metadata: meta_to(e.metadata),
        }),
        r03::StreamResponse::ArtifactUpdate(e) => {
            Payload::ArtifactUpdate(pb::TaskArtifactUpdateEvent {
                task_id: e.task_id,
                context_id: e.context_id,
                artifact: Some(artifact_to(e.artifact)),
                append: e.append,
                last_chunk: e.last_chunk,
                metadata: meta_to(e.metadata),
            })
        }
    };
    pb::StreamResponse {
        payload: Some(payload),
    }
}

/// A 0.3 `StreamResponse` as a canonical stream item (`final` is dropped:
/// the end of the stream says it).
pub fn stream_from_proto(r: pb::StreamResponse) -> R<p::StreamResponse> {
    use pb::stream_response::Payload;
    let item = match r.payload.ok_or(ConvertError::Missing("payload"))? {
        Payload::Task(t) => r03::StreamResponse::Task(task_from(t)?),
        Payload::Msg(m) => r03::StreamResponse::Message(message_from(m)?),
        Payload::StatusUpdate(e) => r03::StreamResponse::StatusUpdate(r03::TaskStatusUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            status: status_from(
                e.status
                    .ok_or(ConvertError::Missing("status_update.status"))?,
            )?,
            is_final: e.r#final,
            metadata: meta_from(e.metadata)?,
        }),
        Payload::ArtifactUpdate(e) => {
            r03::StreamResponse::ArtifactUpdate(r03::TaskArtifactUpdateEvent {
                task_id: e.task_id,
                context_id: e.context_id,
                artifact: artifact_from(
                    e.artifact
                        .ok_or(ConvertError::Missing("artifact_update.artifact"))?,
                )?,
                append: e.append,
                last_chunk: e.last_chunk,
                metadata: meta_from(e.metadata)?,
            })
        }
    };
    Ok(item.into())
}

/// A canonical SendMessage answer as a 0.3 `SendMessageResponse`.
pub fn send_response_to_proto(r: &p::SendMessageResponse) -> pb::SendMessageResponse {
    use pb::send_message_response::Payload;
    let payload = match r03::StreamResponse::from(r.clone()) {
        r03::StreamResponse::Task(t) => Some(Payload::Task(task_to(t))),
        r03::StreamResponse::Message(m) => Some(Payload::Msg(message_to(m))),
        // A SendMessage answer is a task or a message, nothing else.
        _ => None,
    };
    pb::SendMessageResponse { payload }
}

/// A 0.3 `SendMessageResponse` as the canonical answer.
pub fn send_response_from_proto(r: pb::SendMessageResponse) -> R<p::SendMessageResponse> {
    use pb::send_message_response::Payload;
    Ok(match r.payload.ok_or(ConvertError::Missing("payload"))? {
        Payload::Task(t) => p::SendMessageResponse::Task(task_from_proto(t)?),
        Payload::Msg(m) => p::SendMessageResponse::Message(message_from_proto(m)?),
    })
}

/// A 0.3 `SendMessageRequest` as the canonical request (no tenant). A
/// `configuration` without `blocking` does not block; no configuration
/// blocks (see `switchboard_protocol::v03`). `history_length` 0 is unset.
pub fn send_request_from_proto(r: pb::SendMessageRequest) -> R<p::SendMessageRequest> {
    let message = message_from(r.request.ok_or(ConvertError::Missing("request"))?)?;
    let configuration = r.configuration.map(|c| r03::SendMessageConfiguration03 {
        accepted_output_modes: c.accepted_output_modes,
        push_notification: c.push_notification.map(push_from),
        history_length: (c.history_length != 0).then_some(c.history_length),
        blocking: Some(c.blocking),
    });
    Ok(r03::SendMessageRequest03 {
        message,
        configuration,
        metadata: meta_from(r.metadata)?,
    }
    .into())
}

/// The canonical request as a 0.3 `SendMessageRequest` (the tenant is dropped).
pub fn send_request_to_proto(r: &p::SendMessageRequest) -> pb::SendMessageRequest {
    let r = r03::SendMessageRequest03::from(r.clone());
    pb::SendMessageRequest {
        request: Some(message_to(r.message)),
        configuration: r.configuration.map(|c| pb::SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes,
            push_notification: c.push_notification.map(push_to),
            history_length: c.history_length.unwrap_or(0),
            blocking: c.blocking.unwrap_or(false),
        }),
        metadata: meta_to(r.metadata),
    }
}

/// A canonical push config as a 0.3 `TaskPushNotificationConfig`.
pub fn push_config_to_proto(c: &p::TaskPushNotificationConfig) -> pb::TaskPushNotificationConfig {
    pb::TaskPushNotificationConfig {
        name: config_name_of(
            c.task_id.as_deref().unwrap_or_default(),
            c.id.as_deref().unwrap_or_default(),
        ),
        push_notification_config: Some(push_to(PushNotificationConfig::from_v10(c))),
    }
}

/// A 0.3 `TaskPushNotificationConfig` as a canonical config (task and config
/// id from its name; a config id inside the config wins over an empty one in
/// the name).
pub fn push_config_from_proto(
    c: pb::TaskPushNotificationConfig,
) -> R<p::TaskPushNotificationConfig> {
    let (task_id, cid) = config_name(&c.name, "name")?;
    let inner = c
        .push_notification_config
        .ok_or(ConvertError::Missing("push_notification_config"))?;
    let mut out = push_from(inner).into_v10(Some(task_id));
    if out.id.is_none() {
        out.id = opt(cid);
    }
    Ok(out)
}

/// A 0.3 `CreateTaskPushNotificationConfigRequest` as the canonical config
/// to create: the task from `parent`, the id from `config_id` (else from the
/// config itself; else the server picks one).
pub fn create_push_config_from_proto(
    r: pb::CreateTaskPushNotificationConfigRequest,
) -> R<p::TaskPushNotificationConfig> {
    let task_id = task_name(&r.parent, "parent")?;
    let inner = r
        .config
        .and_then(|c| c.push_notification_config)
        .ok_or(ConvertError::Missing("config.push_notification_config"))?;
    let mut out = push_from(inner).into_v10(Some(task_id));
    if let Some(cid) = opt(r.config_id) {
        out.id = Some(cid);
    }
    if out.url.is_empty() {
        return Err(ConvertError::Missing("config.push_notification_config.url"));
    }
    Ok(out)
}

/// The canonical config as a 0.3 create request.
pub fn create_push_config_to_proto(
    c: &p::TaskPushNotificationConfig,
) -> pb::CreateTaskPushNotificationConfigRequest {
    let task_id = c.task_id.as_deref().unwrap_or_default();
    pb::CreateTaskPushNotificationConfigRequest {
        parent: format!("tasks/{task_id}"),
        config_id: c.id.clone().unwrap_or_default(),
        config: Some(push_config_to_proto(c)),
    }
}

// ---- the card ----------------------------------------------------------------------

/// The canonical card as a 0.3 `AgentCard`: `url`/`preferred_transport`
/// from the first 0.3 interface (the first interface when there is none),
/// `additional_interfaces` = every 0.3 interface, `protocol_version` 0.3.0.
pub fn card_to_proto(card: &p::AgentCard) -> pb::AgentCard {
    let v1 = crate::v1::AgentCard::from(card);
    let v03: Vec<&p::AgentInterface> = card
        .supported_interfaces
        .iter()
        .filter(|i| i.protocol_version.starts_with("0.3"))
        .collect();
    let main = v03.first().copied().or(card.supported_interfaces.first());
    let caps = v1.capabilities.unwrap_or_default();
    pb::AgentCard {
        protocol_version: p::v03::CARD_PROTOCOL_VERSION.into(),
        name: v1.name,
        description: v1.description,
        url: main.map(|i| i.url.clone()).unwrap_or_default(),
        preferred_transport: main.map(|i| i.protocol_binding.clone()).unwrap_or_default(),
        additional_interfaces: v03
            .iter()
            .map(|i| pb::AgentInterface {
                url: i.url.clone(),
                transport: i.protocol_binding.clone(),
            })
            .collect(),
        provider: v1.provider.map(Into::into),
        version: v1.version,
        documentation_url: v1.documentation_url.unwrap_or_default(),
        capabilities: Some(pb::AgentCapabilities {
            streaming: caps.streaming.unwrap_or(false),
            push_notifications: caps.push_notifications.unwrap_or(false),
            extensions: each(caps.extensions),
        }),
        security_schemes: each_value(v1.security_schemes),
        security: each(v1.security_requirements),
        default_input_modes: v1.default_input_modes,
        default_output_modes: v1.default_output_modes,
        skills: each(v1.skills),
        supports_authenticated_extended_card: caps.extended_agent_card.unwrap_or(false),
        signatures: each(v1.signatures),
        icon_url: v1.icon_url.unwrap_or_default(),
    }
}

/// A 0.3 `AgentCard` as a canonical card: its interfaces (`url` +
/// `preferred_transport`, then the `additional_interfaces` not equal to it)
/// become interfaces with `protocolVersion` 0.3.
pub fn card_from_proto(x: pb::AgentCard) -> R<p::AgentCard> {
    let mut ifaces: Vec<crate::v1::AgentInterface> = Vec::new();
    let mut add = |url: String, binding: String| {
        if url.is_empty() {
            return;
        }
        let binding = if binding.is_empty() {
            p::card::BINDING_JSONRPC.to_string()
        } else {
            binding
        };
        if !ifaces
            .iter()
            .any(|i| i.url == url && i.protocol_binding.eq_ignore_ascii_case(&binding))
        {
            ifaces.push(crate::v1::AgentInterface {
                url,
                protocol_binding: binding,
                tenant: String::new(),
                protocol_version: p::v03::PROTOCOL_VERSION.into(),
            });
        }
    };
    add(x.url, x.preferred_transport);
    for i in x.additional_interfaces {
        add(i.url, i.transport);
    }
    let caps = x.capabilities.unwrap_or_default();
    let v1 = crate::v1::AgentCard {
        name: x.name,
        description: x.description,
        supported_interfaces: ifaces,
        provider: x.provider.map(Into::into),
        version: x.version,
        documentation_url: opt(x.documentation_url),
        capabilities: Some(crate::v1::AgentCapabilities {
            streaming: Some(caps.streaming),
            push_notifications: Some(caps.push_notifications),
            extensions: each(caps.extensions),
            extended_agent_card: Some(x.supports_authenticated_extended_card),
        }),
        security_schemes: each_value(x.security_schemes),
        security_requirements: each(x.security),
        default_input_modes: x.default_input_modes,
        default_output_modes: x.default_output_modes,
        skills: each(x.skills),
        signatures: each(x.signatures),
        icon_url: opt(x.icon_url),
    };
    p::AgentCard::try_from(v1)
}

fn each<A: Into<B>, B>(v: Vec<A>) -> Vec<B> {
    v.into_iter().map(Into::into).collect()
}

fn each_value<A: Into<B>, B>(m: HashMap<String, A>) -> HashMap<String, B> {
    m.into_iter().map(|(k, v)| (k, v.into())).collect()
}

/// The card's parts that the 0.3 proto and the 1.0 proto spell alike:
/// one list of fields per message (names as in both protos) gives the
/// `From` impls both ways. The message's 1.0 name follows `=` where it has
/// another; a field is moved as it is, or converted as written after it
/// (`opt`: an optional message, `each`: a list, `each_value`: a map's
/// values). `renamed` lists fields with another name in 1.0 (0.3 = 1.0);
/// `v1` the fields only 1.0 has, with the value a 0.3 message means.
/// A oneof (`enum`) converts variant by variant; its `v1` variants have no
/// 0.3 form, so that direction gives an `Option`.
macro_rules! same_message {
    ($name:ident $(= $name1:ident)? {
        $($field:ident $(: $how:ident)?),+ $(,)?
    } $(renamed { $($f03:ident = $f1:ident $(: $rhow:ident)?),+ })?
      $(v1 { $($extra:ident: $value:expr),+ })?) => {
        impl From<same_message!(@v1 $name $($name1)?)> for pb::$name {
            fn from(x: same_message!(@v1 $name $($name1)?)) -> Self {
                Self {
                    $($field: same_message!(@move x.$field $(, $how)?),)+
                    $($($f03: same_message!(@move x.$f1 $(, $rhow)?),)+)?
                }
            }
        }

        impl From<pb::$name> for same_message!(@v1 $name $($name1)?) {
            fn from(x: pb::$name) -> Self {
                Self {
                    $($field: same_message!(@move x.$field $(, $how)?),)+
                    $($($f1: same_message!(@move x.$f03 $(, $rhow)?),)+)?
                    $($($extra: $value,)+)?
                }
            }
        }
    };
    (enum $($module:ident)::+ { $($variant:ident),+ $(,)? }) => {
        same_message!(@enum_up $($module)::+ { $($variant),+ });

        impl From<crate::v1::$($module)::+> for pb::$($module)::+ {
            fn from(x: crate::v1::$($module)::+) -> Self {
                type Source = crate::v1::$($module)::+;
                match x {
                    $(Source::$variant(v) => Self::$variant(v.into()),)+
                }
            }
        }
    };
    (enum $($module:ident)::+ { $($variant:ident),+ $(,)? } v1 { $($only1:ident),+ }) => {
        same_message!(@enum_up $($module)::+ { $($variant),+ });

        impl From<crate::v1::$($module)::+> for Option<pb::$($module)::+> {
            fn from(x: crate::v1::$($module)::+) -> Self {
                type Source = crate::v1::$($module)::+;
                type Target = pb::$($module)::+;
                match x {
                    $(Source::$variant(v) => Some(Target::$variant(v.into())),)+
                    $(Source::$only1(_) => None,)+
                }
            }
        }
    };
    (@enum_up $($module:ident)::+ { $($variant:ident),+ }) => {
        impl From<pb::$($module)::+> for crate::v1::$($module)::+ {
            fn from(x: pb::$($module)::+) -> Self {
                type Source = pb::$($module)::+;
                match x {
                    $(Source::$variant(v) => Self::$variant(v.into()),)+
                }
            }
        }
    };
    (@v1 $name:ident) => { crate::v1::$name };
    (@v1 $name:ident $name1:ident) => { crate::v1::$name1 };
    (@move $value:expr) => { $value };
    (@move $value:expr, opt) => { $value.map(Into::into) };
    (@move $value:expr, each) => { each($value) };
    (@move $value:expr, each_value) => { each_value($value) };
}

same_message!(AgentProvider { url, organization });
same_message!(AgentExtension {
    uri,
    description,
    required,
    params
});
same_message!(AgentCardSignature {
    protected,
    signature,
    header
});
same_message!(AgentSkill {
    id,
    name,
    description,
    tags,
    examples,
    input_modes,
    output_modes,
} renamed { security = security_requirements: each });
same_message!(
    Security = SecurityRequirement {
        schemes: each_value
    }
);
same_message!(StringList { list });
same_message!(SecurityScheme { scheme: opt });
same_message!(enum security_scheme::Scheme {
    ApiKeySecurityScheme,
    HttpAuthSecurityScheme,
    Oauth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    MtlsSecurityScheme,
});
same_message!(ApiKeySecurityScheme {
    description,
    location,
    name
});
same_message!(HttpAuthSecurityScheme {
    description,
    scheme,
    bearer_format
});
same_message!(OAuth2SecurityScheme {
    description,
    flows: opt,
    oauth2_metadata_url
});
same_message!(OpenIdConnectSecurityScheme {
    description,
    open_id_connect_url
});
same_message!(MutualTlsSecurityScheme { description });
same_message!(enum o_auth_flows::Flow {
    AuthorizationCode,
    ClientCredentials,
    Implicit,
    Password,
} v1 { DeviceCode });
same_message!(AuthorizationCodeOAuthFlow {
    authorization_url,
    token_url,
    refresh_url,
    scopes,
} v1 { pkce_required: false });
same_message!(ClientCredentialsOAuthFlow {
    token_url,
    refresh_url,
    scopes
});
same_message!(ImplicitOAuthFlow {
    authorization_url,
    refresh_url,
    scopes
});
same_message!(PasswordOAuthFlow {
    token_url,
    refresh_url,
    scopes
});

/// A device-code flow has no 0.3 form: the flows are left empty.
impl From<crate::v1::OAuthFlows> for pb::OAuthFlows {
    fn from(x: crate::v1::OAuthFlows) -> Self {
        pb::OAuthFlows {
            flow: x.flow.and_then(Into::into),
        }
    }
}

impl From<pb::OAuthFlows> for crate::v1::OAuthFlows {
    fn from(x: pb::OAuthFlows) -> Self {
        crate::v1::OAuthFlows {
            flow: x.flow.map(Into::into),
        }
    }
}

#[cfg(test)]
mod tests;
