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
//!    (`"stream"`, the default, `"send"` or `"cancel"`), the `taskId` it addresses and
//!    the `contextId` — and the bridge's own configuration
//!    ([`BridgeConfig`]: system/developer forwarding, the Engram lane).
//! 2. [`input`]: the AG-UI messages become the outbound A2A message —
//!    the history the agent has not seen, tool results kept, system and
//!    developer messages gated — with AG-UI's `threadId`/`runId` left out;
//!    a `resume` becomes an `a2a.hitl.formResponse` to the interrupted task.
//! 3. [`owner`]: over a remote agent, whose tasks and contexts the run may
//!    touch (the caller's, told by the context ids the bridge mints).
//! 4. [`backend`]: the A2A operations the bridge needs, behind one trait
//!    ([`Backend`]), implemented for a remote agent (`RemoteBackend`, feature `remote`) and
//!    for the hosted one as its caller ([`HostedBackend`]), failures mapped
//!    to [`BridgeError`]s once.
//! 5. [`run`](mod@run): the run modes — a streamed run follows the task until it ends
//!    or interrupts; a send run injects a message or reconnects, and a
//!    reconnect starts from the task's snapshot, never from a closed run.
//!    Everything the agent answers goes through the one converter
//!    (`switchboard_agui::Converter`), which also projects tasks, artifacts
//!    and pending interrupts into the shared state under `/view`.
//! 6. [`endpoint`]: the HTTP face — `POST /agui` ([`endpoint::router`]),
//!    SSE or protobuf by `Accept`; every failure after the request was read
//!    is a `RUN_ERROR` with a clear message, never a hang.
//!
//! 7. [`copilotkit`]: CopilotKit's runtime routes (`/api/copilotkit/info`,
//!    `…/agent/:id/run`, `…/connect`, `…/stop/:threadId`, and the
//!    single-route envelope) over the same runs, a CopilotKit thread kept
//!    as an A2A context derived from the caller and the `threadId`.
//!
//! Serving it: `endpoint::router(factory, EndpointConfig::default())` is
//! an axum `Router` to merge into a server; the factory is a
//! `RemoteBackend` (an `A2AClient` for the agent's card; feature `remote`,
//! default) or a [`HostedAgent`] (the server's `RequestHandler` and how it
//! admits a caller). Without `remote` the crate does not depend on
//! `switchboard-client`: serving the hosted agent's `/agui` needs no client.
//!
//! In front of a remote agent on a port of its own (`switchboard bridge`),
//! [`remote_bridge`] is the whole process: connect, then serve until a signal
//! (feature `remote`).
//!
//! [`BridgeError`] is every way a run can fail, each with the `code` its
//! `RUN_ERROR` carries.

#![deny(missing_docs)]

pub mod backend;
pub mod copilotkit;
pub mod endpoint;
mod error;
pub mod gated;
pub mod input;
pub mod options;
pub mod owner;
#[cfg(feature = "remote")]
pub mod remote;
#[cfg(feature = "remote")]
pub mod remote_bridge;
pub mod run;

#[doc(inline)]
pub use backend::{Backend, BackendFactory, HostedAgent, HostedBackend};
#[doc(inline)]
pub use copilotkit::CopilotKitConfig;
#[doc(inline)]
pub use endpoint::{EndpointConfig, router};
#[doc(inline)]
pub use error::BridgeError;
#[doc(inline)]
pub use gated::{
    AguiEndpoint, authenticated, authenticated_router, hosted_copilotkit_router, hosted_router,
};
#[doc(inline)]
pub use options::{BridgeConfig, Mode, RunOptions};
#[doc(inline)]
pub use owner::{Caller, Owner};
#[cfg(feature = "remote")]
#[doc(inline)]
pub use remote::RemoteBackend;
#[cfg(feature = "remote")]
#[doc(inline)]
pub use remote_bridge::{RemoteBridge, RemoteBridgeConfig, RemoteConfigError};
#[doc(inline)]
pub use run::{RunConfig, run};
