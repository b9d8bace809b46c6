//! # switchboard-runtimes
//!
//! Agents an operator configures instead of writing: each *runtime* is one
//! module that implements the engine's [`AgentExecutor`](switchboard_core::AgentExecutor)
//! over something that is not Rust, and is built from a table of settings
//! (the `[[agents]]` tables of `switchboard serve`'s config file, or a
//! struct an SDK user fills in). Everything else — bindings, tasks, stores,
//! streaming, push, AG-UI — is the engine's and the server's, as for any
//! agent.
//!
//! | runtime | feature | module | hosts |
//! |---|---|---|---|
//! | `exec` | `exec` | [`exec`] | any program: the `a2a-cli --exec` contract (message text on stdin, stdout the answer), or JSON lines (statuses, artifact chunks, progress, questions) |
//! | `demo`, `echo-message`, `echo-task`, `relay` | `demo` | [`builtin`] | nothing: agents built in, to try a server, show every A2A and AG-UI behaviour, and test or load-test what sits around an agent |
//! | `proxy` | `proxy` | [`proxy`] | a remote A2A agent: each message forwarded, the remote task mirrored into a local one (durable, resumable, push, AG-UI), the card rewritten to this server's interfaces, an audit line per call |
//! | `llm` | `llm` | [`llm`] | a model behind any OpenAI-compatible Chat Completions endpoint: streamed tokens and reasoning, other A2A agents as tools, multi-turn memory from the context's earlier tasks |
//!
//! [`spec`] (feature `spec`) builds any of them from a table of settings
//! (an `[[agents]]` table), with the agent's own authentication and limits.
//!
//! A runtime owns what its agent needs beyond the engine — processes,
//! connections, concurrency slots — and bounds each: nothing a caller sends
//! or a hosted program writes grows without a limit.

#[cfg(feature = "demo")]
pub mod builtin;
#[cfg(feature = "exec")]
pub mod exec;

#[cfg(feature = "proxy")]
pub mod proxy;

#[cfg(feature = "llm")]
pub mod llm;

#[cfg(feature = "spec")]
pub mod spec;
