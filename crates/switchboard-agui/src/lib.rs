//! # switchboard-agui
//!
//! [AG-UI](https://docs.ag-ui.com) 1.0 for switchboard: UIs built on AG-UI
//! (CopilotKit and others) want typed events — text, reasoning, tool calls,
//! state, activity — where A2A streams carry tasks, statuses and parts. This
//! crate is the bridge, in four pieces:
//!
//! - [`events`]: every event type of `@ag-ui/core` 1.0.0 with its exact
//!   field names and optionality, plus `RunAgentInput`, messages and the
//!   `RUN_FINISHED` outcomes (interrupts).
//! - Two encodings: [`sse`] (`data: <json>\n\n` frames, and the `Accept`
//!   negotiation) and [`proto`] (length-prefixed `ag_ui.Event` protobuf
//!   frames, `application/vnd.ag-ui.event+proto`).
//! - [`hints`]: the `agui_*` part metadata that says what an A2A part is
//!   (text, thinking, code, tool call, tool result, error), the writer agents
//!   use to emit hinted parts, and the readers (which also take Hector's
//!   unprefixed keys).
//! - [`convert`]: the one converter from a task's A2A event stream to AG-UI
//!   events, with stable ids so a dropped stream resumes exactly.
//!
//! [`hector`] renames the events into Hector's vocabulary (seed 004) for
//! UIs built on it.
//!
//! [`hitl`] is the human-in-the-loop form vocabulary (`a2a.hitl.form` and
//! its answer) that the converter and the bridge share; [`view`] is the
//! state document the converter keeps for the AG-UI → A2A bridge
//! ([`Projection::View`]): the client's state plus the bridge's `view`.
//!
//! [`verify`] mirrors the official client's ordering rules, [`run`] reads a
//! received run back (its outcome, error and text, and the checks every run
//! must pass), and [`patch`] makes and applies the RFC 6902 deltas of state
//! and activities.
//!
//! ```
//! use switchboard_agui::{Converter, ConverterOptions, EventKind};
//! use switchboard_protocol::{Message, StreamResponse};
//!
//! let mut converter = Converter::new(ConverterOptions::default());
//! let reply = Message::agent_text("hello").with_context_id("ctx-1");
//! let frames = converter.convert(None, &StreamResponse::Message(reply));
//! let types: Vec<&str> = frames.iter().map(|f| f.event.type_name()).collect();
//! assert_eq!(types, ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
//!                    "TEXT_MESSAGE_END", "RUN_FINISHED"]);
//! assert!(matches!(frames[0].event.kind, EventKind::RunStarted(_)));
//! ```
//!
//! Dependencies point one way: this crate knows the protocol types and the
//! engine's `TaskEvents` (to emit hinted parts), never the server or client.

#![deny(missing_docs)]

pub mod convert;
pub mod events;
pub mod hector;
pub mod hints;
pub mod hitl;
pub mod patch;
pub mod proto;
pub mod run;
pub mod sse;
mod state;
pub mod verify;
pub mod view;

#[doc(inline)]
pub use convert::{
    Converter, ConverterOptions, Frame, InvalidResumeId, PendingInterrupt, Projection, ResumePoint,
};
#[doc(inline)]
pub use events::{Event, EventKind, PROTOCOL_VERSION};
#[doc(inline)]
pub use hector::{HectorEvent, HectorTranslator};
#[doc(inline)]
pub use hints::{PartHints, TaskEventsExt};
#[doc(inline)]
pub use sse::Encoding;
#[doc(inline)]
pub use verify::Verifier;

#[cfg(test)]
mod tests;
