//! # switchboard-sdk
//!
//! Write an A2A agent in Rust and serve it: this crate re-exports the parts
//! of switchboard an agent author needs, each behind a cargo feature, so an
//! agent builds only what it uses.
//!
//! | feature | default | what it brings |
//! |---|---|---|
//! | `server` | yes | [`server::A2aServer`]: JSON-RPC 2.0 + SSE and HTTP+JSON, A2A 1.0 and 0.3 |
//! | `sqlite` | no | `store::sqlite::SqliteStore`: tasks that survive a crash, in one file |
//! | `grpc` | no | the gRPC binding on the same port (tonic, prost) |
//! | `postgres` | no | `store::postgres::PgStore`: several replicas on one database |
//! | `push` | no | `server::push`: `A2aServer::push(PushOptions)`, signed webhook delivery with retries and an SSRF guard |
//! | `client` | no | `client::A2AClient`: talk to any A2A agent |
//! | `auth` | no | `auth`: API keys and JWTs for `A2aServer::authenticator`, advertised on the card |
//! | `agui` | no | `agui`: AG-UI events and hints; `A2aServer::agui_endpoint`: `POST /agui` behind the server's gate |
//! | `bridge` | no | `bridge::RemoteBackend`: the AG-UI endpoint in front of a remote A2A agent |
//! | `ops` | yes | `A2aServer::ops`: `/healthz`, `/readyz`, `/metrics`, request ids and the access log |
//! | `logging` | no | `telemetry::logging`: the process's log subscriber, text or JSON lines, never blocking a request |
//! | `otel` | no | `telemetry::otel`: OpenTelemetry traces over OTLP from the `OTEL_*` variables |
//! | `printer` | no | `printer::Output`: what agents say, printed for people (bars, hinted parts) or as JSON Lines |
//! | `mcp` | no | `mcp::McpFront`: A2A agents as MCP tools, over stdio or streamable HTTP (`switchboard mcp`) |
//! | `full` | no | all of the above |
//!
//! Without a store feature, tasks live in memory (bounded with
//! `InMemoryStore::with_max_terminal_tasks`); turn on `sqlite` to keep them across restarts,
//! or pick the store from a URL with [`store::open`].
//!
//! What a production server needs comes with the calls above, not as extra steps:
//! - **Crash recovery.** A run lives in its process. On a durable store, the tasks a killed
//!   process left working are failed, with a status message saying the run was lost, before
//!   `A2aServer::serve` accepts its first call (SQLite: at start-up; PostgreSQL replicas: when
//!   the dead replica's leases run out). Opt out with
//!   `RequestHandlerBuilder::recover_abandoned(false)`.
//! - **Draining.** `serve(listener, shutdown_signal())` stops on Ctrl-C or SIGTERM: no new
//!   connections, running tasks told to stop and given 10 s, open streams ended with their
//!   final event.
//! - **Authentication** (feature `auth`). `A2aServer::authenticator` guards every binding and
//!   the `/agui` endpoint, and writes its schemes on the served card; an extended card with no
//!   authenticator (which no one could fetch) is logged as a warning.
//!
//! Always there: the protocol types ([`protocol`]) and the engine
//! ([`agent`]: the [`agent::AgentExecutor`] trait, [`agent::TaskEvents`],
//! [`agent::RequestHandler`], the in-memory store). The
//! [`prelude`] has what a typical agent's `main.rs` uses.
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

/// The A2A 1.0 vocabulary (and the 0.3 dialects): tasks, messages, parts,
/// the agent card, errors, the operation table.
pub use switchboard_protocol as protocol;

/// The engine: what an agent implements and emits, and the
/// [`RequestHandler`](agent::RequestHandler) that runs the eleven operations.
pub use switchboard_core as agent;

/// Serving: [`A2aServer`](server::A2aServer), its gate (authentication)
/// and extension points.
#[cfg(feature = "server")]
pub use switchboard_server as server;

/// Resolves on Ctrl-C or SIGTERM: give it to `A2aServer::serve` so that a
/// service manager's stop drains the server (no new connections, running
/// tasks settle within a grace period, open streams end with their final
/// event) and the process exits cleanly.
#[cfg(feature = "server")]
pub use switchboard_server::shutdown_signal;

/// The A2A client (feature `client`).
#[cfg(feature = "client")]
pub use switchboard_client as client;

/// Authenticators (feature `auth`): hashed API keys (`auth::ApiKeys`),
/// JWTs checked against a JWKS (`auth::JwtBearer`), tried in order by
/// `auth::Schemes`. Given to `A2aServer::authenticator`, the schemes guard
/// every binding before a body is read and are written on the served card
/// (`securitySchemes`, `securityRequirements`) without further calls.
#[cfg(feature = "auth")]
pub use switchboard_auth as auth;

/// Push notification delivery (feature `push`).
#[cfg(feature = "push")]
pub use switchboard_push as push;

/// AG-UI 1.0 (feature `agui`): events, part hints, the A2A → AG-UI converter.
#[cfg(feature = "agui")]
pub use switchboard_agui as agui;

/// The AG-UI endpoint (feature `agui`): `A2aServer::agui_endpoint`
/// ([`bridge::AguiEndpoint`], in the prelude) serves `POST /agui` over the
/// hosted agent behind the server's own gate; with feature `bridge`, in
/// front of a remote A2A agent too.
#[cfg(feature = "agui")]
pub use switchboard_bridge as bridge;

/// Logs and traces: the process's subscriber (feature `logging`:
/// `telemetry::logging::init`) and OpenTelemetry over OTLP (feature
/// `otel`: `telemetry::otel`), besides the metrics every crate records.
#[cfg(feature = "logging")]
pub use switchboard_telemetry as telemetry;

/// Printing what agents say (feature `printer`): `printer::Output` renders
/// cards, tasks and stream events for people (inline artifacts, hinted
/// parts, progress bars) or as JSON Lines.
#[cfg(feature = "printer")]
pub use switchboard_printer as printer;

/// A2A agents as the tools of an MCP server: `McpFront::new(agents)`, then
/// `serve_stdio()` or `router(..)` for MCP's streamable HTTP.
#[cfg(feature = "mcp")]
pub use switchboard_mcp as mcp;

pub mod store;

/// JSON values for metadata, extension payloads and data parts, as the
/// protocol types hold them (the same `serde_json` this crate uses).
pub use serde_json;

/// What an agent's `main.rs` usually needs: the agent trait and its
/// `#[async_trait]`, the handler, the card and the message types, JSON.
pub mod prelude {
    pub use serde_json::{self, json};
    pub use switchboard_core::{
        AgentExecutor, BoxError, CallContext, RequestContext, RequestHandler, TaskEvents, agent_fn,
        async_trait,
    };
    pub use switchboard_protocol::{
        A2AError, AgentCapabilities, AgentCard, AgentExtension, AgentSkill, Artifact, Message,
        Part, Task, TaskState,
    };

    #[cfg(feature = "server")]
    pub use switchboard_server::{A2aServer, shutdown_signal};

    #[cfg(feature = "sqlite")]
    pub use switchboard_store_sqlite::SqliteStore;

    #[cfg(feature = "client")]
    pub use switchboard_client::A2AClient;

    #[cfg(feature = "agui")]
    pub use switchboard_bridge::{AguiEndpoint, EndpointConfig};
}
