//! The built-in agents: agents that need no configuration at all, for
//! trying a server, demonstrating A2A and AG-UI behaviour, and testing and
//! load-testing what sits around an agent.
//!
//! | agent | card | answers |
//! |---|---|---|
//! | [`DemoAgent`] | [`demo_card`] | every task behaviour on demand: streamed artifacts, statuses, input-required (text and forms), cancellation, failure, progress, AG-UI hinted parts and state (`/help` lists the commands) |
//! | [`EchoMessage`] | [`echo_card`] | a direct message echoing the text |
//! | [`EchoTask`] | [`echo_card`] | a task with the text as its artifact, completed in one commit |
//! | [`Relay`] | [`relay_card`] | `URL TEXT`: the answer of the agent at URL, as a subagent's output |
//! | [`Directory`] | [`directory_card`] | nothing: refuses every message (a server's root that only lists its mounted agents) |
//!
//! Each is an ordinary [`AgentExecutor`](switchboard_core::AgentExecutor)
//! beside its card; serve one as any other agent:
//!
//! ```no_run
//! # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
//! use switchboard_core::RequestHandler;
//! use switchboard_runtimes::builtin::{EchoTask, echo_card};
//!
//! let handler = RequestHandler::builder(EchoTask, echo_card()).build();
//! # let _ = handler;
//! # Ok(())
//! # }
//! ```
//!
//! The relay calls whatever URL a caller sends it, so it belongs only where
//! callers are trusted.

mod demo;
mod directory;
mod echo;
mod relay;

pub use demo::{APPROVAL_FORM, DemoAgent, HELP, demo_card};
pub use directory::{Directory, directory_card};
pub use echo::{EchoMessage, EchoTask, echo_card};
pub use relay::{Relay, relay_card};

/// The names [`by_name`] knows (`echo` is also taken, as `echo-message`,
/// by an `[[agents]]` table).
pub const NAMES: &[&str] = &["demo", "echo-message", "echo-task", "relay"];

/// A built-in agent name [`by_name`] does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown agent {0:?}: use demo, echo-message, echo-task or relay")]
pub struct UnknownAgent(pub String);

/// A built-in agent and its card by name (one of [`NAMES`]); the demo
/// agent streams its chunks 40 ms apart.
pub fn by_name(
    name: &str,
) -> Result<
    (
        std::sync::Arc<dyn switchboard_core::AgentExecutor>,
        switchboard_protocol::AgentCard,
    ),
    UnknownAgent,
> {
    use std::sync::Arc;
    Ok(match name {
        "demo" => (
            Arc::new(DemoAgent {
                chunk_delay: std::time::Duration::from_millis(40),
            }),
            demo_card(),
        ),
        "echo-message" => (Arc::new(EchoMessage), echo_card()),
        "echo-task" => (Arc::new(EchoTask), echo_card()),
        "relay" => (Arc::new(Relay), relay_card()),
        other => return Err(UnknownAgent(other.to_owned())),
    })
}
