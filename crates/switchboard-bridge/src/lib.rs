//! # switchboard-bridge
//!
//! Any AG-UI frontend drives any A2A agent. An AG-UI client (`@ag-ui/client`'s
//! `HttpAgent`, CopilotKit, …) POSTs a `RunAgentInput` and reads AG-UI events;
//! the bridge turns the input into A2A requests, sends them to an agent —
//! a remote one through `switchboard-client`, or the agent `serve` hosts —
//! and reads the A2A answer back as AG-UI events. The requirements are the
//! PRD in seed `003`; the decisions it asks for are `docs/adr/0001`–`0003`.
//!
//! A run, from input to last event:
//!
//! 1. [`options`]: what the run is for — `forwardedProps.a2a.mode`
//!    (`"stream"`, the default, or `"send"`), the `taskId` it addresses and
//!    the `contextId` — and the bridge's own configuration
//!    ([`BridgeConfig`]: system/developer forwarding, the Engram lane).
//! 2. [`input`]: the AG-UI messages become the outbound A2A message —
//!    the history the agent has not seen, tool results kept, system and
//!    developer messages gated — with AG-UI's `threadId`/`runId` left out;
//!    a `resume` becomes an `a2a.hitl.formResponse` to the interrupted task.
//! 3. `backend`: the A2A operations the bridge needs, behind one trait,
//!    implemented for a remote agent and for a hosted one.
//! 4. `run`: the run modes — a streamed run follows the task until it ends
//!    or interrupts; a send run injects a message or reconnects, and a
//!    reconnect starts from the task's snapshot, never from a closed run.
//!    Everything the agent answers goes through the one converter
//!    (`switchboard_agui::Converter`), which also projects tasks, artifacts
//!    and pending interrupts into the shared state under `/view`.
//! 5. `endpoint`: the HTTP face — `POST /agui`, SSE or protobuf by
//!    `Accept`; every failure after the request was read is a `RUN_ERROR`
//!    with a clear message, never a hang.
//!
//! [`BridgeError`] is every way a run can fail, each with the `code` its
//! `RUN_ERROR` carries.

#![deny(missing_docs)]

mod error;
pub mod input;
pub mod options;

#[doc(inline)]
pub use error::BridgeError;
#[doc(inline)]
pub use options::{BridgeConfig, Mode, RunOptions};
