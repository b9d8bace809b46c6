//! A2A 0.3 on the wire, and the conversions to and from the canonical 1.0
//! types.
//!
//! switchboard works in 1.0 everywhere inside; 0.3 exists only at the edges.
//! A binding that receives a 0.3 request decodes it with the types here,
//! converts it to the 1.0 request, calls the handler, and converts the 1.0
//! answer back. Two 0.3 dialects exist and both are here:
//!
//! - [`rpc`]: the 0.3 **JSON-RPC** shapes — objects tagged with `kind`
//!   (`task`, `message`, `status-update`, `artifact-update`; parts `text`,
//!   `file`, `data`), kebab-case states (`input-required`), lower-case roles,
//!   `final` on status updates, bare results (no `{"task": ..}` wrapper), and
//!   the slash method names (`message/send`, …), which the operation table
//!   gives ([`Operation::v03_name`](crate::Operation::v03_name)).
//! - [`rest`]: the 0.3 **HTTP+JSON** shapes, which are ProtoJSON of the 0.3
//!   proto (`a2a.v1`): no `kind`, `TASK_STATE_*`/`ROLE_*` enum names with the
//!   two-L `TASK_STATE_CANCELLED`, message parts under `content`, file parts
//!   as `fileWithUri`/`fileWithBytes`, data parts as `{"data": {"data": ..}}`,
//!   and the `{task|message|statusUpdate|artifactUpdate}` wrappers.
//!
//! Where their JSON agrees (task, status, artifact, the update events) both
//! use the one generic set in [`shared`]. [`card`] adds the 0.3 top-level
//! card fields for the hybrid card.
//!
//! ## What does not survive a conversion
//!
//! Every conversion 0.3 → 1.0 is lossless. 1.0 → 0.3 loses what 0.3 cannot
//! say:
//!
//! | 1.0 | 0.3 | why |
//! |---|---|---|
//! | `mediaType`/`filename` on a **text** or **data** part | dropped | 0.3 text/data parts have no such fields (file parts keep them as `mimeType`/`name`) |
//! | a data part whose value is not an object | `{"value": X}` with part metadata `data_part_compat: true` | 0.3 data is object-only; the marker (the one a2a-python uses) makes the way back exact |
//! | push `authentication.scheme` | `schemes: [scheme]` | 0.3 lists schemes; going back, only the **first** of several 0.3 schemes is kept |
//! | `tenant` on requests and push configs | dropped | 0.3 has no tenant; over 0.3 REST the tenant is the first path segment (`/{tenant}/v1/...`) |
//! | `referenceTaskIds` on a message (REST only) | dropped | not in the 0.3 proto, and strict ProtoJSON parsers refuse unknown fields |
//! | `TASK_STATE_UNSPECIFIED` | `unknown` (JSON-RPC) | same meaning, other spelling |
//! | the end of a stream | `final: true` | 1.0 signals it by closing; `final` is re-derived: terminal states and `input-required` (where our streams close) |
//! | ListTasks | — | no 0.3 method; 0.3 callers cannot list |
//!
//! Going 0.3 → 1.0, `blocking` becomes `returnImmediately = !blocking`,
//! and `final` is ignored (the stream's end says it). An unset `blocking`
//! blocks over JSON-RPC; over REST (ProtoJSON, where writers omit a `false`
//! bool) an unset `blocking` inside a `configuration` does not block, while
//! a request with no `configuration` at all does.
//!
//! A task is stored once, in 1.0 form, whichever version created it, so a
//! task created over 0.3 reads over 1.0 and the other way round.

/// `From<$from> for $to` for two enums with the same variants, each
/// holding a value that converts with `Into`: the stream items and send
/// answers of 1.0 and of each dialect map to each other variant by variant.
macro_rules! variants_into {
    ($from:ty => $to:ty { $($variant:ident),+ $(,)? }) => {
        impl From<$from> for $to {
            fn from(x: $from) -> Self {
                type Source = $from;
                match x {
                    $(Source::$variant(v) => Self::$variant(v.into()),)+
                }
            }
        }
    };
}

pub mod card;
pub mod rest;
pub mod rpc;
pub mod shared;

/// The 0.3 protocol version as it appears in an interface's `protocolVersion`.
pub const PROTOCOL_VERSION: &str = "0.3";
/// The full 0.3 version string 0.3 cards carry in their top-level `protocolVersion`.
pub const CARD_PROTOCOL_VERSION: &str = "0.3.0";
/// Part metadata key marking a non-object 1.0 data value wrapped as `{"value": X}`.
pub const DATA_PART_COMPAT: &str = "data_part_compat";

use serde_json::{Map, Value};

use crate::types::Metadata;

/// 1.0 data value → (0.3 object, extra part metadata). Objects pass as they are.
pub(crate) fn data_down(
    value: Value,
    metadata: Option<Metadata>,
) -> (Map<String, Value>, Option<Metadata>) {
    match value {
        Value::Object(m) => (m, metadata),
        other => {
            let mut obj = Map::new();
            obj.insert("value".into(), other);
            let mut md = metadata.unwrap_or_default();
            md.insert(DATA_PART_COMPAT.into(), Value::Bool(true));
            (obj, Some(md))
        }
    }
}

/// 0.3 data object (+ metadata) → 1.0 data value, undoing [`data_down`]'s wrapping.
pub(crate) fn data_up(
    mut data: Map<String, Value>,
    metadata: Option<Metadata>,
) -> (Value, Option<Metadata>) {
    let wrapped = metadata
        .as_ref()
        .and_then(|m| m.get(DATA_PART_COMPAT))
        .is_some_and(|v| v == &Value::Bool(true));
    if wrapped
        && data.len() == 1
        && let Some(v) = data.remove("value")
    {
        let mut md = metadata.unwrap_or_default();
        md.remove(DATA_PART_COMPAT);
        return (v, (!md.is_empty()).then_some(md));
    }
    (Value::Object(data), metadata)
}

/// `final` for a 0.3 status update: the states after which our streams end.
pub(crate) fn is_final_state(state: crate::TaskState) -> bool {
    state.is_terminal() || state == crate::TaskState::InputRequired
}

#[cfg(test)]
mod tests;
