//! The protobuf encoding of AG-UI events (`application/vnd.ag-ui.event+proto`).
//!
//! A response is a sequence of frames, each a 4-byte big-endian length and
//! then one `ag_ui.Event` message ([`write_frame`], [`ProtoDecoder`]). The
//! schema is `proto/ag_ui/events.proto`, wire-identical to the one
//! `@ag-ui/proto` 1.0.0 uses, compiled by `build.rs` with protox.
//!
//! The protobuf message is not the JSON event with other framing: every
//! event nests its base fields in `baseEvent` (with the type as an enum),
//! `RUN_FINISHED` flattens its outcome into `outcome` (a string) plus
//! `interrupts` and `pendingToolCallIds`, `SUBAGENT_FINISHED` likewise with
//! `interruptIds`, patch ops are an upper-case enum, and messages and tool
//! results carry content parts in `contentParts` (each part a oneof by
//! kind) and activity content in `activityContent`. So the conversion is a
//! reshaping of the event's JSON into the protobuf JSON mapping of the
//! schema (and back), done here once, and the bytes come from
//! `prost-reflect`'s dynamic messages over the compiled descriptor. One
//! table of differences instead of 31 hand-written struct conversions; the
//! protobuf path is opt-in, so its extra JSON step costs only those who ask.

use std::sync::LazyLock;

use heck::{ToLowerCamelCase as _, ToShoutySnakeCase as _};
use prost::Message as _;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, SerializeOptions};
use serde_json::{Map, Value};

use crate::events::Event;

static POOL: LazyLock<Result<DescriptorPool, String>> = LazyLock::new(|| {
    DescriptorPool::decode(
        include_bytes!(concat!(env!("OUT_DIR"), "/agui_descriptor.bin")).as_ref(),
    )
    .map_err(|e| e.to_string())
});

/// Why an event could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtoError {
    /// The compiled schema did not load (a build problem).
    #[error("the AG-UI protobuf schema did not load: {0}")]
    Schema(String),
    /// The event does not fit the schema.
    #[error("the event does not fit the AG-UI protobuf schema: {0}")]
    Encode(String),
    /// The bytes are not an `ag_ui.Event`.
    #[error("invalid AG-UI protobuf event: {0}")]
    Decode(String),
    /// A frame announces more than [`MAX_FRAME`] bytes.
    #[error("an AG-UI protobuf frame of {0} bytes exceeds the limit")]
    FrameTooLarge(usize),
}

/// The largest frame accepted (the official client's limit).
pub const MAX_FRAME: usize = 10 * 1024 * 1024;

fn event_descriptor() -> Result<prost_reflect::MessageDescriptor, ProtoError> {
    let pool = POOL.as_ref().map_err(|e| ProtoError::Schema(e.clone()))?;
    pool.get_message_by_name("ag_ui.Event")
        .ok_or_else(|| ProtoError::Schema("ag_ui.Event is missing".into()))
}

/// Encodes one event as an `ag_ui.Event` message (no length prefix).
pub fn encode_event(event: &Event) -> Result<Vec<u8>, ProtoError> {
    let json = serde_json::to_value(event).map_err(|e| ProtoError::Encode(e.to_string()))?;
    let wire = to_wire(json).map_err(ProtoError::Encode)?;
    let message = DynamicMessage::deserialize_with_options(
        event_descriptor()?,
        wire,
        &DeserializeOptions::new().deny_unknown_fields(true),
    )
    .map_err(|e| ProtoError::Encode(e.to_string()))?;
    Ok(message.encode_to_vec())
}

/// Appends one frame (length prefix + message) for `event` to `out`.
pub fn write_frame(out: &mut Vec<u8>, event: &Event) -> Result<(), ProtoError> {
    let body = encode_event(event)?;
    let len = u32::try_from(body.len()).map_err(|_| ProtoError::FrameTooLarge(body.len()))?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&body);
    Ok(())
}

/// Decodes one `ag_ui.Event` message (no length prefix).
pub fn decode_event(bytes: &[u8]) -> Result<Event, ProtoError> {
    let message = DynamicMessage::decode(event_descriptor()?, bytes)
        .map_err(|e| ProtoError::Decode(e.to_string()))?;
    let options = SerializeOptions::new()
        .stringify_64_bit_integers(false)
        .skip_default_fields(false);
    let json = message
        .serialize_with_options(serde_json::value::Serializer, &options)
        .map_err(|e| ProtoError::Decode(e.to_string()))?;
    let mut event = from_wire(json).map_err(ProtoError::Decode)?;
    integral_numbers(&mut event);
    serde_json::from_value(event).map_err(|e| ProtoError::Decode(e.to_string()))
}

/// `google.protobuf.Value` numbers are doubles: `1` comes back as `1.0`.
/// JSON (and JavaScript, which reads these frames) has one number type, so
/// a whole double within the exact range is written back as the integer.
fn integral_numbers(v: &mut Value) {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    match v {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < EXACT
            {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(integral_numbers),
        Value::Object(m) => m.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// Reads events out of a stream of length-prefixed frames.
#[derive(Debug, Default)]
pub struct ProtoDecoder {
    buf: Vec<u8>,
}

impl ProtoDecoder {
    /// An empty decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events of every frame they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Event>, ProtoError> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(prefix) = self.buf.first_chunk::<4>() {
            let len = u32::from_be_bytes(*prefix) as usize;
            if len > MAX_FRAME {
                return Err(ProtoError::FrameTooLarge(len));
            }
            if self.buf.len() < 4 + len {
                break;
            }
            out.push(decode_event(&self.buf[4..4 + len])?);
            self.buf.drain(..4 + len);
        }
        Ok(out)
    }

    /// `true` when no partial frame is buffered (a clean end of stream).
    pub fn is_idle(&self) -> bool {
        self.buf.is_empty()
    }
}

fn obj(v: Value) -> Result<Map<String, Value>, String> {
    match v {
        Value::Object(m) => Ok(m),
        other => Err(format!("expected an object, got {other}")),
    }
}

/// The event's JSON → the schema's protobuf JSON.
fn to_wire(event: Value) -> Result<Value, String> {
    let mut rest = obj(event)?;
    let Some(Value::String(event_type)) = rest.remove("type") else {
        return Err("the event has no type".into());
    };
    let mut base = Map::new();
    base.insert("type".into(), Value::String(event_type.clone()));
    move_keys(&mut rest, &mut base, &BASE_FIELDS);
    match event_type.as_str() {
        "MESSAGES_SNAPSHOT" => map_array(&mut rest, "messages", message_to_wire)?,
        "RUN_STARTED" => in_object(&mut rest, "input", |input| {
            map_array(input, "messages", message_to_wire)
        })?,
        "RUN_FINISHED" | "SUBAGENT_FINISHED" => {
            if let Some(outcome) = rest.remove("outcome") {
                let mut o = obj(outcome)?;
                let kind = o.remove("type").unwrap_or(Value::String(String::new()));
                rest.insert("outcome".into(), kind);
                // The outcome's lists ride beside it on the wire.
                rest.extend(o);
            }
        }
        "STATE_DELTA" => map_array(&mut rest, "delta", patch_to_wire)?,
        "ACTIVITY_DELTA" => map_array(&mut rest, "patch", patch_to_wire)?,
        "TOOL_CALL_RESULT" => {
            if let Some(Value::Array(parts)) = rest.get("content").cloned() {
                rest.remove("content");
                let parts = parts
                    .into_iter()
                    .map(part_to_wire)
                    .collect::<Result<Vec<_>, _>>()?;
                rest.insert("contentParts".into(), Value::Array(parts));
            }
        }
        _ => {}
    }
    rest.insert("baseEvent".into(), Value::Object(base));
    let mut envelope = Map::new();
    // The envelope's arm is the type in lowerCamelCase: `TEXT_MESSAGE_START` → `textMessageStart`.
    envelope.insert(event_type.to_lower_camel_case(), Value::Object(rest));
    Ok(Value::Object(envelope))
}

/// The base fields every event may carry; on the wire they sit in `baseEvent`.
const BASE_FIELDS: [&str; 3] = ["timestamp", "rawEvent", "metadata"];

/// Moves the `keys` that `from` has into `to`.
fn move_keys(from: &mut Map<String, Value>, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(v) = from.remove(*key) {
            to.insert((*key).into(), v);
        }
    }
}

/// Reshapes the object at `key`, if there is one (anything else there is an error).
fn in_object(
    m: &mut Map<String, Value>,
    key: &str,
    reshape: impl FnOnce(&mut Map<String, Value>) -> Result<(), String>,
) -> Result<(), String> {
    if let Some(v) = m.get_mut(key) {
        let mut inner = obj(v.take())?;
        reshape(&mut inner)?;
        *v = Value::Object(inner);
    }
    Ok(())
}

fn map_array(
    m: &mut Map<String, Value>,
    key: &str,
    f: fn(Value) -> Result<Value, String>,
) -> Result<(), String> {
    if let Some(Value::Array(items)) = m.get_mut(key) {
        for item in items.iter_mut() {
            *item = f(item.take())?;
        }
    }
    Ok(())
}

fn patch_to_wire(op: Value) -> Result<Value, String> {
    let mut m = obj(op)?;
    if let Some(Value::String(name)) = m.get_mut("op") {
        *name = name.to_ascii_uppercase();
    }
    Ok(Value::Object(m))
}

fn patch_from_wire(op: Value) -> Result<Value, String> {
    let mut m = obj(op)?;
    if let Some(Value::String(name)) = m.get_mut("op") {
        *name = name.to_ascii_lowercase();
    }
    Ok(Value::Object(m))
}

fn message_to_wire(message: Value) -> Result<Value, String> {
    let mut m = obj(message)?;
    let is_activity = m.get("role").and_then(Value::as_str) == Some("activity");
    match m.remove("content") {
        Some(Value::Array(parts)) => {
            let parts = parts
                .into_iter()
                .map(part_to_wire)
                .collect::<Result<Vec<_>, _>>()?;
            m.insert("contentParts".into(), Value::Array(parts));
        }
        Some(content) if is_activity => {
            m.insert("activityContent".into(), content);
        }
        Some(content) => {
            m.insert("content".into(), content);
        }
        None => {}
    }
    Ok(Value::Object(m))
}

fn message_from_wire(message: Value) -> Result<Value, String> {
    let mut m = obj(message)?;
    let role = m
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let parts = m.remove("contentParts");
    let activity = m.remove("activityContent");
    if matches!(&m.get("toolCalls"), Some(Value::Array(a)) if a.is_empty()) {
        m.remove("toolCalls");
    }
    if role == "activity" {
        if let Some(c) = activity {
            m.insert("content".into(), c);
        }
    } else if role == "user" || role == "tool" {
        content_from_parts(&mut m, parts)?;
    }
    Ok(Value::Object(m))
}

/// Without string `content`, the content is the parts (possibly none).
fn content_from_parts(m: &mut Map<String, Value>, parts: Option<Value>) -> Result<(), String> {
    if m.contains_key("content") {
        return Ok(());
    }
    let parts = match parts {
        Some(Value::Array(p)) => p
            .into_iter()
            .map(part_from_wire)
            .collect::<Result<Vec<_>, _>>()?,
        _ => Vec::new(),
    };
    m.insert("content".into(), Value::Array(parts));
    Ok(())
}

/// `{"type":"image","source":{"type":"data",…},…}` → `{"image":{"source":{"data":{…}},…}}`.
fn part_to_wire(part: Value) -> Result<Value, String> {
    let mut p = obj(part)?;
    let Some(Value::String(kind)) = p.remove("type") else {
        return Err("a content part has no type".into());
    };
    if let Some(source) = p.remove("source") {
        let mut s = obj(source)?;
        let Some(Value::String(skind)) = s.remove("type") else {
            return Err("a content part source has no type".into());
        };
        let mut wrapped = Map::new();
        wrapped.insert(skind, Value::Object(s));
        p.insert("source".into(), Value::Object(wrapped));
    }
    let mut out = Map::new();
    out.insert(kind, Value::Object(p));
    Ok(Value::Object(out))
}

fn part_from_wire(part: Value) -> Result<Value, String> {
    let m = obj(part)?;
    let Some((kind, inner)) = m.into_iter().next() else {
        return Err("an empty content part".into());
    };
    let mut p = obj(inner)?;
    if let Some(source) = p.remove("source") {
        let s = obj(source)?;
        let Some((skind, sinner)) = s.into_iter().next() else {
            return Err("an empty content part source".into());
        };
        let mut flat = obj(sinner)?;
        flat.insert("type".into(), Value::String(skind));
        p.insert("source".into(), Value::Object(flat));
    }
    p.insert("type".into(), Value::String(kind));
    Ok(Value::Object(p))
}

fn drop_if_empty(m: &mut Map<String, Value>, key: &str) {
    let empty = match m.get(key) {
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    };
    if empty {
        m.remove(key);
    }
}

/// The schema's protobuf JSON (every field written) → the event's JSON.
fn from_wire(envelope: Value) -> Result<Value, String> {
    let envelope = obj(envelope)?;
    let mut arms = envelope.into_iter();
    let (key, inner) = match (arms.next(), arms.next()) {
        (Some(arm), None) => arm,
        _ => return Err("a frame must hold exactly one event".into()),
    };
    let mut m = obj(inner)?;
    let event_type = key.to_shouty_snake_case();
    let mut base = match m.remove("baseEvent") {
        Some(b) => obj(b)?,
        None => return Err(format!("{event_type} has no baseEvent")),
    };
    if base.get("type").and_then(Value::as_str) != Some(event_type.as_str()) {
        return Err(format!(
            "the envelope carries {event_type} but the base event declares {}",
            base.get("type").unwrap_or(&Value::Null)
        ));
    }
    move_keys(&mut base, &mut m, &BASE_FIELDS);
    match event_type.as_str() {
        "MESSAGES_SNAPSHOT" => map_array(&mut m, "messages", message_from_wire)?,
        "RUN_STARTED" => in_object(&mut m, "input", |input| {
            map_array(input, "messages", message_from_wire)?;
            for k in ["tools", "context", "resume"] {
                drop_if_empty(input, k);
            }
            Ok(())
        })?,
        "RUN_FINISHED" => {
            drop_if_empty(&mut m, "usage");
            let outcome = m.remove("outcome");
            let interrupts = m.remove("interrupts");
            let pending = m.remove("pendingToolCallIds");
            if let Some(Value::String(kind)) = outcome
                && !kind.is_empty()
            {
                let mut o = Map::new();
                match kind.as_str() {
                    "interrupt" => {
                        o.insert(
                            "interrupts".into(),
                            interrupts.unwrap_or(Value::Array(vec![])),
                        );
                    }
                    "success" => {
                        if let Some(p) =
                            pending.filter(|p| p.as_array().is_some_and(|a| !a.is_empty()))
                        {
                            o.insert("pendingToolCallIds".into(), p);
                        }
                    }
                    _ => {}
                }
                o.insert("type".into(), Value::String(kind));
                m.insert("outcome".into(), Value::Object(o));
            }
        }
        "SUBAGENT_FINISHED" => {
            let outcome = m.remove("outcome");
            let ids = m.remove("interruptIds");
            if let Some(Value::String(kind)) = outcome
                && !kind.is_empty()
            {
                let mut o = Map::new();
                if let Some(ids) = ids.filter(|p| p.as_array().is_some_and(|a| !a.is_empty())) {
                    o.insert("interruptIds".into(), ids);
                }
                o.insert("type".into(), Value::String(kind));
                m.insert("outcome".into(), Value::Object(o));
            }
        }
        "RUN_ERROR" => drop_if_empty(&mut m, "usage"),
        "STATE_DELTA" => map_array(&mut m, "delta", patch_from_wire)?,
        "ACTIVITY_DELTA" => map_array(&mut m, "patch", patch_from_wire)?,
        "TOOL_CALL_RESULT" => {
            let parts = m.remove("contentParts");
            content_from_parts(&mut m, parts)?;
        }
        _ => {}
    }
    m.insert("type".into(), Value::String(event_type));
    Ok(Value::Object(m))
}
