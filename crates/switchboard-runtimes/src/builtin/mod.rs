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
