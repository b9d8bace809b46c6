//! # switchboard-sdk
//!
//! Write an A2A agent in Rust and serve it: this crate re-exports the parts
//! of switchboard an agent author needs, each behind a cargo feature, so an
//! agent builds only what it uses. What `switchboard serve` does, an agent
//! gets from here by a call. This page is the guide: [features](#features),
//! [a first agent](#a-first-agent), then recipes for [state](#state),
//! [progress](#progress), [blocking work](#blocking-work), [AG-UI hints and
//! forms](#ag-ui-hints-and-forms), [auth](#auth), [push](#push),
//! [stores](#stores) and [deploying](#deploying).
//!
//! ## Features
//!
//! | feature | default | what it brings |
//! |---|---|---|
//! | `server` | yes | [`server::A2aServer`]: JSON-RPC 2.0 + SSE and HTTP+JSON, A2A 1.0 and 0.3 |
//! | `ops` | yes | `A2aServer::ops`: `/healthz`, `/readyz`, `/metrics`, request ids and the access log |
//! | `grpc` | no | the gRPC binding on the same port (tonic, prost), and the client's gRPC bindings with `client` |
//! | `sqlite` | no | `store::sqlite::SqliteStore`: tasks that survive a crash, in one file |
//! | `postgres` | no | `store::postgres::PgStore`: several replicas on one database |
//! | `push` | no | `server::push`: `A2aServer::push(PushOptions)`, signed webhook delivery with retries and an SSRF guard |
//! | `auth` | no | `auth`: API keys and JWTs for `A2aServer::authenticator`, advertised on the card |
//! | `agui` | no | `agui`: AG-UI events, part hints and forms; `A2aServer::agui_endpoint`: `POST /agui` behind the server's gate |
//! | `bridge` | no | `bridge::RemoteBackend`: the AG-UI endpoint in front of a remote A2A agent |
//! | `client` | no | `client::A2AClient`: talk to any A2A agent over JSON-RPC and REST (gRPC too with `grpc`) |
//! | `logging` | no | `telemetry::logging`: the process's log subscriber, text or JSON lines, never blocking a request |
//! | `otel` | no | `telemetry::otel`: OpenTelemetry traces over OTLP from the `OTEL_*` variables |
//! | `printer` | no | `printer::Output`: what agents say, printed for people (bars, hinted parts) or as JSON Lines |
//! | `exec` | no | `runtimes::exec::ExecAgent`: any program as an agent (the `a2a-cli --exec` contract, or JSON lines) |
//! | `demo` | no | `runtimes::builtin`: the built-in agents — demo (every task behaviour on demand), echo, relay |
//! | `proxy` | no | `runtimes::proxy::ProxyAgent`: a remote A2A agent behind this server, its task mirrored into a local one |
//! | `llm` | no | `runtimes::llm::LlmAgent`: a model behind any OpenAI-compatible Chat Completions endpoint (streamed tokens, reasoning, A2A agents as tools, multi-turn memory) |
//! | `spec` | no | `runtimes::spec::AgentSpec`: an agent from a table of settings (an `[[agents]]` table): any runtime, its own auth and limits |
//! | `host` | no | [`host::Host`]: what `switchboard serve` runs, from plain settings — store from a URL, TLS, auth, push, ops, `/agui`, more agents reloaded on SIGHUP, draining |
//! | `mcp` | no | `mcp::McpFront`: A2A agents as MCP tools, over stdio or streamable HTTP (`switchboard mcp`) |
//! | `full` | no | all of the above |
//!
//! Always there: the protocol types ([`protocol`]) and the engine
//! ([`agent`]: the [`agent::AgentExecutor`] trait, [`agent::TaskEvents`],
//! [`agent::RequestHandler`], the in-memory store). The [`prelude`] has what
//! a typical agent's `main.rs` uses.
//!
//! Without a store feature, tasks live in memory (bounded with
//! `InMemoryStore::with_max_terminal_tasks`); turn on `sqlite` to keep them
//! across restarts, or pick the store from a URL with [`store::open`].
//!
//! What a production server needs comes with the calls below, not as extra steps:
//! - **Crash recovery.** A run lives in its process. On a durable store, the tasks a killed
//!   process left working are failed, with a status message saying the run was lost, before
//!   `A2aServer::serve` accepts its first call (SQLite: at start-up; PostgreSQL replicas: when
//!   the dead replica's leases run out). Opt out with
//!   [`RequestHandlerBuilder::recover_abandoned(false)`](agent::RequestHandlerBuilder::recover_abandoned).
//! - **Draining.** `serve(listener, shutdown_signal())` stops on Ctrl-C or SIGTERM: no new
//!   connections, running tasks told to stop and given 10 s, open streams ended with their
//!   final event.
//! - **Authentication** (feature `auth`). `A2aServer::authenticator` guards every binding and
//!   the `/agui` endpoint, and writes its schemes on the served card; an extended card with no
//!   authenticator (which no one could fetch) is logged as a warning.
//!
//! ## A first agent
//!
//! The first thing an agent emits decides the answer: a reply makes a
//! message, anything else a task; `Ok` completes the task, `Err` fails it,
//! and every emission is stored before anyone sees it.
//!
//! ```no_run
//! use switchboard_sdk::prelude::*;
//!
//! # async fn run() -> std::io::Result<()> {
//! let agent = agent_fn(|ctx, events| async move {
//!     events.working("counting").await?;
//!     let words = ctx.text().split_whitespace().count();
//!     events.artifact_text("count", words.to_string()).await?;
//!     Ok(()) // completes the task
//! });
//! let card = AgentCard::new("counter", "Counts words", "1.0").with_streaming(true);
//! let handler = RequestHandler::builder(agent, card).build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9090").await?;
//! A2aServer::new(handler)
//!     .public_url("http://127.0.0.1:9090")
//!     // Ctrl-C or SIGTERM: stop accepting, let running tasks settle, exit.
//!     .serve(listener, shutdown_signal())
//!     .await
//! # }
//! ```
//!
//! ## State
//!
//! [`agent_fn`](agent::agent_fn)'s closure runs once per message, so it must
//! not give away what it captures (E0507 when the `async move` block takes
//! it): clone a shared handle into each call, or implement
//! [`AgentExecutor`](agent::AgentExecutor) on a struct holding the state.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use switchboard_sdk::prelude::*;
//!
//! let served = Arc::new(AtomicU64::new(0));
//! let agent = agent_fn(move |_ctx, events| {
//!     let served = served.clone(); // this call's handle
//!     async move {
//!         let n = served.fetch_add(1, Ordering::Relaxed) + 1;
//!         events.reply_text(format!("message {n}")).await?;
//!         Ok(())
//!     }
//! });
//! # let _ = agent;
//! ```
//!
//! ## Progress
//!
//! [`TaskEvents::progress`](agent::TaskEvents::progress) is the run's
//! task-progress emitter (the `task-progress/v1` extension; see
//! [`agent::progress`]): trackers with a total, a message and a status,
//! rate-limited for the wire. Declare the extension on the card: clients that
//! activate it (`A2A-Extensions`) see the trackers, the others never do.
//!
//! ```
//! use switchboard_sdk::prelude::*;
//! use switchboard_sdk::protocol::progress::ProgressLimits;
//!
//! let agent = agent_fn(|_ctx, events| async move {
//!     let pages = events.progress().tracker("pages").total(3).message("pages read");
//!     let pages = pages.start().await?;
//!     for _ in 0..3 {
//!         // ... read one page ...
//!         pages.advance(1).await?;
//!     }
//!     pages.complete().await?;
//!     events.artifact_text("summary", "three pages").await?;
//!     Ok(())
//! });
//! let card = AgentCard::new("reader", "Reads pages", "1.0")
//!     .with_extension(ProgressLimits::default().to_extension());
//! let handler = RequestHandler::builder(agent, card).build();
//! # let _ = handler;
//! ```
//!
//! ## Blocking work
//!
//! An agent runs on the runtime's worker threads, shared with every
//! connection: `std::fs`, a CPU-bound loop or a synchronous client there holds
//! a worker until it is done, and a few such runs stop the server answering.
//! [`TaskEvents::spawn_blocking`](agent::TaskEvents::spawn_blocking) runs such
//! work on tokio's blocking pool and hands it a [`BlockingRun`](agent::BlockingRun):
//! `check()` stops it once the task is canceled, `block_on` reaches the run's
//! async calls. Cancelled, `spawn_blocking` returns at once (see [`agent::blocking`]).
//!
//! ```
//! use switchboard_sdk::prelude::*;
//!
//! let agent = agent_fn(|ctx, events| async move {
//!     let dir = ctx.text();
//!     let bytes = events
//!         .spawn_blocking(move |run| -> Result<u64, BoxError> {
//!             let mut bytes = 0;
//!             for entry in std::fs::read_dir(dir.trim())? {
//!                 run.check()?; // canceled: stop here
//!                 bytes += entry?.metadata()?.len();
//!             }
//!             Ok(bytes)
//!         })
//!         .await??;
//!     events.artifact_text("size", bytes.to_string()).await?;
//!     Ok(())
//! });
//! # let _ = agent;
//! ```
//!
//! ## AG-UI hints and forms
//!
//! With feature `agui`, an artifact written through
//! `TaskEventsExt::agui_writer` carries hints that AG-UI frontends render as
//! reasoning, tool calls and text, and `TaskEventsExt::ask_form` pauses the
//! task on a form they show as an interrupt. The answer comes back on the same
//! task as a data part, read with `agui::hitl::form_values` (`ctx.text()`
//! does not show it). `A2aServer::agui_endpoint` serves `POST /agui` over the
//! agent, behind the server's gate.
//!
//! ```
//! # #[cfg(feature = "agui")]
//! # fn recipe() {
//! use switchboard_sdk::agui::TaskEventsExt;
//! use switchboard_sdk::agui::hitl::{form_part, form_values};
//! use switchboard_sdk::prelude::*;
//!
//! let agent = agent_fn(|ctx, events| async move {
//!     if ctx.is_follow_up() {
//!         let sent = form_values(&ctx.message, "send").is_some_and(|v| v["ok"] == true);
//!         events.complete_with(if sent { "sent" } else { "kept as a draft" }).await?;
//!         return Ok(());
//!     }
//!     let mut out = events.agui_writer("answer");
//!     out.thinking("the user wants the weather").await?;
//!     out.tool_call("call-1", "weather", json!({"city": "Oslo"})).await?;
//!     out.tool_result("call-1", "12 °C").await?;
//!     out.text("It is 12 °C in Oslo.").await?;
//!     out.finish().await?;
//!     let fields = json!([{"name": "ok", "type": "boolean", "label": "Send it?"}]);
//!     events.ask_form("Send this answer?", form_part("send", "Send", fields)).await?;
//!     Ok(())
//! });
//! let card = AgentCard::new("weather", "Tells the weather", "1.0").with_streaming(true);
//! let server = A2aServer::new(RequestHandler::builder(agent, card).build())
//!     .agui_endpoint(EndpointConfig::default());
//! # let _ = server;
//! # }
//! ```
//!
//! ## Auth
//!
//! With feature `auth`, `A2aServer::authenticator` takes the schemes to
//! accept, in order: hashed API keys (`auth::ApiKeys`; the hash from
//! `switchboard auth hash-key` or `auth::hash_api_key`, never the key) and
//! JWTs checked against a JWKS (`auth::JwtBearer`). Every binding, gRPC and
//! `/agui` included, refuses a call without credentials before reading its
//! body, and the card advertises the schemes.
//!
//! ```no_run
//! # #[cfg(feature = "auth")]
//! # fn recipe(handler: switchboard_sdk::agent::RequestHandler) -> Result<(), Box<dyn std::error::Error>> {
//! use switchboard_sdk::auth::{ApiKeys, JwtBearer, JwtConfig, Schemes};
//! use switchboard_sdk::prelude::*;
//!
//! let hash = std::env::var("SWITCHBOARD_API_KEY_HASH")?;
//! let keys = ApiKeys::new().key(&hash, "ops", None, false)?;
//! let idp = "https://idp.example.com";
//! let jwt = JwtBearer::new(JwtConfig::new(format!("{idp}/jwks.json"), idp, "my-agent"))?;
//! let server = A2aServer::new(handler).authenticator(Schemes::new().with(keys).with(jwt));
//! # let _ = server; Ok(()) }
//! ```
//!
//! ## Push
//!
//! With feature `push`, one call accepts webhook configs, guards their
//! addresses (SSRF), signs notifications with keys published at
//! `/.well-known/jwks.json`, and runs the delivery worker for the life of
//! `serve`; notifications are queued in the task store with the events, so
//! none is lost by a restart. See `server::push`.
//!
//! ```no_run
//! # #[cfg(feature = "push")]
//! # fn recipe(handler: switchboard_sdk::agent::RequestHandler) -> Result<(), Box<dyn std::error::Error>> {
//! use switchboard_sdk::prelude::*;
//! use switchboard_sdk::server::push::PushOptions;
//!
//! let server = A2aServer::new(handler)
//!     .public_url("https://agent.example.com")
//!     // The signing keys survive restarts, so receivers keep trusting them.
//!     .push(PushOptions::new().key_file("push-keys.json"))?;
//! # let _ = server; Ok(()) }
//! ```
//!
//! ## Stores
//!
//! [`store::open`] opens the store a URL names: `memory`, `sqlite://tasks.db`
//! (feature `sqlite`), `postgres://…` (feature `postgres`, joined as one
//! replica of a set), and puts it on the handler.
//!
//! ```no_run
//! # async fn recipe() -> Result<(), Box<dyn std::error::Error>> {
//! use switchboard_sdk::prelude::*;
//!
//! # let agent = agent_fn(|_ctx, _events| async { Ok(()) });
//! # let card = AgentCard::new("agent", "An agent", "1.0");
//! let url = std::env::var("STORE").unwrap_or_else(|_| "memory".into());
//! let store = switchboard_sdk::store::open(&url).await?;
//! let handler = store.builder(RequestHandler::builder(agent, card)).build();
//! # let _ = handler; Ok(()) }
//! ```
//!
//! ## Deploying
//!
//! A process behind a service manager or in a container: logs on stderr
//! (feature `logging`; the access log is one line per request), probes and
//! metrics (`ops`), TLS from PEM files (reloaded when they change; or a proxy
//! in front), and the drain on SIGTERM. `examples/repo-reviewer` is a whole
//! agent served this way in under 150 lines.
//!
//! ```no_run
//! # #[cfg(all(feature = "logging", feature = "ops"))]
//! # async fn recipe(handler: switchboard_sdk::agent::RequestHandler) -> Result<(), Box<dyn std::error::Error>> {
//! use switchboard_sdk::prelude::*;
//! use switchboard_sdk::server::ServerTls;
//! use switchboard_sdk::telemetry::logging::{self, LogFormat};
//!
//! logging::init(LogFormat::Auto, "info");
//! let listener = tokio::net::TcpListener::bind("0.0.0.0:8443").await?;
//! A2aServer::new(handler)
//!     .public_url("https://agent.example.com")
//!     .tls(ServerTls::from_pem_files("cert.pem", "key.pem")?)
//!     .ops()
//!     .serve(listener, shutdown_signal())
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! Or all of `switchboard serve` at once from plain settings (feature
//! `host`): [`host::Host`] opens the store from a URL and sets up TLS,
//! authentication, push, ops, `/agui` and more agents under path prefixes,
//! reloaded on SIGHUP — the binary's `serve` is this call.

#![cfg_attr(docsrs, feature(doc_cfg))]

/// The A2A 1.0 vocabulary (and the 0.3 dialects): tasks, messages, parts,
/// the agent card, errors, the operation table.
pub use switchboard_protocol as protocol;

/// The engine: what an agent implements and emits, and the
/// [`RequestHandler`](agent::RequestHandler) that runs the eleven operations.
pub use switchboard_core as agent;

/// Serving: [`A2aServer`](server::A2aServer), its gate (authentication)
/// and extension points.
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub use switchboard_server as server;

/// Resolves on Ctrl-C or SIGTERM: give it to `A2aServer::serve` so that a
/// service manager's stop drains the server (no new connections, running
/// tasks settle within a grace period, open streams end with their final
/// event) and the process exits cleanly.
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub use switchboard_server::shutdown_signal;

/// The A2A client (feature `client`).
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub use switchboard_client as client;

/// Authenticators (feature `auth`): hashed API keys (`auth::ApiKeys`),
/// JWTs checked against a JWKS (`auth::JwtBearer`), tried in order by
/// `auth::Schemes`. Given to `A2aServer::authenticator`, the schemes guard
/// every binding before a body is read and are written on the served card
/// (`securitySchemes`, `securityRequirements`) without further calls.
#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub use switchboard_auth as auth;

/// Push notification delivery (feature `push`).
#[cfg(feature = "push")]
#[cfg_attr(docsrs, doc(cfg(feature = "push")))]
pub use switchboard_push as push;

/// AG-UI 1.0 (feature `agui`): events, part hints, the A2A → AG-UI converter.
#[cfg(feature = "agui")]
#[cfg_attr(docsrs, doc(cfg(feature = "agui")))]
pub use switchboard_agui as agui;

/// The AG-UI endpoint (feature `agui`): `A2aServer::agui_endpoint`
/// ([`bridge::AguiEndpoint`], in the prelude) serves `POST /agui` over the
/// hosted agent behind the server's own gate; with feature `bridge`, in
/// front of a remote A2A agent too.
#[cfg(feature = "agui")]
#[cfg_attr(docsrs, doc(cfg(feature = "agui")))]
pub use switchboard_bridge as bridge;

/// Logs and traces: the process's subscriber (feature `logging`:
/// `telemetry::logging::init`) and OpenTelemetry over OTLP (feature
/// `otel`: `telemetry::otel`), besides the metrics every crate records.
#[cfg(feature = "logging")]
#[cfg_attr(docsrs, doc(cfg(feature = "logging")))]
pub use switchboard_telemetry as telemetry;

/// Printing what agents say (feature `printer`): `printer::Output` renders
/// cards, tasks and stream events for people (inline artifacts, hinted
/// parts, progress bars) or as JSON Lines.
#[cfg(feature = "printer")]
#[cfg_attr(docsrs, doc(cfg(feature = "printer")))]
pub use switchboard_printer as printer;

/// The web console (feature `console`): `A2aServer::console`
/// ([`console::A2aServerConsole`], in the prelude) serves the agent's card,
/// a chat, its tasks and the wire frames of each call at `/console/`,
/// behind the server's own gate; [`console::router`] serves it for any
/// agent.
#[cfg(feature = "console")]
pub use switchboard_console as console;

/// Agents that need no Rust (feature per runtime: `exec`,
/// `runtimes::exec::ExecAgent`, any program as an agent; `proxy`,
/// `runtimes::proxy::ProxyAgent`, a remote agent behind this server; `llm`,
/// `runtimes::llm::LlmAgent`, a model; `demo`: `runtimes::builtin`, the
/// demo, echo and relay agents).
#[cfg(any(
    feature = "exec",
    feature = "proxy",
    feature = "llm",
    feature = "demo",
    feature = "spec"
))]
pub use switchboard_runtimes as runtimes;

/// A2A agents as the tools of an MCP server: `McpFront::new(agents)`, then
/// `serve_stdio()` or `router(..)` for MCP's streamable HTTP.
#[cfg(feature = "mcp")]
pub use switchboard_mcp as mcp;

pub mod store;

#[cfg(feature = "host")]
#[cfg_attr(docsrs, doc(cfg(feature = "host")))]
pub mod host;

/// JSON values for metadata, extension payloads and data parts, as the
/// protocol types hold them (the same `serde_json` this crate uses).
pub use serde_json;

/// What an agent's `main.rs` usually needs: the agent trait and its
/// `#[async_trait]`, the handler, the card and the message types, JSON.
pub mod prelude {
    pub use serde_json::{self, json};
    pub use switchboard_core::{
        AgentExecutor, BlockingRun, BoxError, CallContext, EmitError, RequestContext,
        RequestHandler, TaskEvents, agent_fn, async_trait,
    };
    pub use switchboard_protocol::{
        A2AError, AgentCapabilities, AgentCard, AgentExtension, AgentSkill, Artifact, Message,
        Part, Task, TaskState,
    };

    #[cfg(feature = "server")]
    #[cfg_attr(docsrs, doc(cfg(feature = "server")))]
    pub use switchboard_server::{A2aServer, shutdown_signal};

    #[cfg(feature = "sqlite")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
    pub use switchboard_store_sqlite::SqliteStore;

    #[cfg(feature = "client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client")))]
    pub use switchboard_client::A2AClient;

    #[cfg(feature = "agui")]
    #[cfg_attr(docsrs, doc(cfg(feature = "agui")))]
    pub use switchboard_bridge::{AguiEndpoint, EndpointConfig};

    #[cfg(feature = "console")]
    pub use switchboard_console::A2aServerConsole;
}
