//! # switchboard-protocol
//!
//! The A2A (Agent2Agent) 1.0 protocol as Rust types: the data objects
//! ([`Task`], [`Message`], [`Part`], [`Artifact`], the update events and
//! [`StreamResponse`]), the request objects of the eleven operations, the
//! [`AgentCard`], the error model ([`A2AError`]) and JSON-RPC 2.0 envelopes.
//!
//! This crate knows nothing about HTTP, storage or execution: it is the
//! vocabulary every other switchboard crate speaks, and the one an outside
//! crate can depend on cheaply.
//!
//! ## Wire form
//! The types serialize to A2A 1.0 JSON (ProtoJSON of the `lf.a2a.v1` proto):
//! camelCase names, enum values as proto names (`TASK_STATE_WORKING`),
//! RFC 3339 UTC timestamps ending in `Z`, `bytes` as base64, and a [`Part`] as
//! a flat object with exactly one of `text`, `raw`, `url` or `data`.
//! Decoding is lenient where the spec allows it: snake_case field names,
//! unknown fields, and `null` lists are accepted.
//!
//! ```
//! use switchboard_protocol::{Message, Part, TaskState};
//! let msg = Message::user_text("hello");
//! let json = serde_json::to_value(&msg).unwrap();
//! assert_eq!(json["role"], "ROLE_USER");
//! assert_eq!(json["parts"][0]["text"], "hello");
//! assert!(TaskState::Completed.is_terminal());
//! # let _ = Part::text("x");
//! ```
#![deny(missing_docs)]

pub mod card;
pub mod error;
pub mod jcs;
pub mod jsonrpc;
pub mod operations;
pub mod progress;
pub mod push;
pub mod requests;
pub mod serde_util;
pub mod types;
pub mod v03;

#[doc(inline)]
pub use card::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, SecurityRequirement, StringList,
};
#[doc(inline)]
pub use error::{A2AError, FieldViolation};
#[doc(inline)]
pub use operations::{A2aRequest, A2aResponse, Operation};
#[doc(inline)]
pub use requests::{
    AuthenticationInfo, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageConfiguration, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};
#[doc(inline)]
pub use types::{
    Artifact, Message, Metadata, Part, PartContent, Role, SendMessageResponse, StreamResponse,
    Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

/// The service parameter (HTTP header / gRPC metadata) naming the protocol version.
pub const VERSION_HEADER: &str = "A2A-Version";
/// The service parameter listing activated extensions.
pub const EXTENSIONS_HEADER: &str = "A2A-Extensions";
/// Where the public agent card is served.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

#[cfg(test)]
mod tests;
