//! The `switchboard` binary's library half: `serve`'s
//! configuration and start-up, `bridge` (AG-UI in front of an A2A agent),
//! `console` (the web console in front of an A2A agent),
//! `mcp` (A2A agents as MCP tools),
//! and the terminal client commands. `main.rs`
//! only parses flags and calls into here, so tests can use the same code
//! in-process.

pub mod agents;
pub mod auth_args;
pub mod bridge_cmd;
pub mod client;
pub mod config;
#[cfg(feature = "console")]
pub mod console_cmd;
pub mod front;
pub mod limits_args;
pub mod log_args;
pub mod mcp_cmd;
pub mod push_cmd;
pub mod serve;
