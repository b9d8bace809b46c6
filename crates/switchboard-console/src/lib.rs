//! # switchboard-console
//!
//! A web console for an A2A agent, or for each agent a server hosts, as an
//! axum [`Router`]: a page (plain
//! HTML, CSS and JavaScript modules embedded in the binary; no build step,
//! no CDN, works offline) and a small JSON/SSE API the page calls. The API
//! reaches the agent through [`switchboard_client`], server-side, so the
//! page works with every binding and version the client speaks — a
//! gRPC-only or A2A 0.3-only agent included — and the agent's credentials
//! stay on the server: they are never sent to the page.
//!
//! ## What the page shows
//! - **Card**: skills, interfaces, extensions, security schemes, the
//!   signature's status, and every rule of the A2A 1.0 spec the card breaks,
//!   with the field ([`validate_card`]).
//! - **Chat**: streamed text; reasoning, code and tool-call blocks from the
//!   AG-UI part hints; artifacts (text, markdown rendered by the page's own
//!   escaping renderer, JSON as a tree, files to download); progress bars
//!   from the task-progress extension; input-required questions and
//!   `a2a.hitl.form` forms answered in place; cancel and resubscribe;
//!   several conversations (contexts) side by side.
//! - **Tasks**: a filtered, paged list; a task's timeline (each event with
//!   its sequence number, raw JSON on demand) and its push configs.
//! - **Debug**: every frame of every call through the client's
//!   [`switchboard_client::tap`]: the bytes on the wire of the HTTP bindings
//!   (request, answer, a stream as it arrived; header secrets masked,
//!   bounded per frame and per call) and the A2A 1.0 JSON of each request,
//!   answer and stream event (all a gRPC call has: protobuf is not text),
//!   copied as `curl` or as a `switchboard client` command.
//!
//! Agent text reaches the page's DOM as text only (`textContent`), never as
//! HTML.
//!
//! ## Several agents
//! A server that hosts several agents (`[[agents]]` on `switchboard serve`,
//! [`A2aServer::mount`](switchboard_server::A2aServer::mount)) lists them at
//! `GET /agents`; the page's agent picker shows that list (or the one agent
//! of a server without it), and every later call names the picked agent by
//! its path in the header `X-Switchboard-Agent`. The console reaches the
//! agent at that path under its own agent URL, with the same caller
//! credentials; a path the listing does not hold is refused (404), so the
//! console relays to the server's agents and nowhere else. The listing is
//! read through the console's client and kept for 30 s.
//!
//! ## The API
//! Under the router's root (`/console` when mounted there):
//! `GET api/agents`, `GET api/card`, `POST api/send` (SSE), `GET api/tasks`,
//! `GET api/tasks/{id}`, `POST api/tasks/{id}/cancel`,
//! `GET api/tasks/{id}/subscribe` (SSE), `GET api/tasks/{id}/push-configs`.
//! Unary answers are `{"result": …, "frames": […], "interface": …}`, errors
//! `{"error": {"message", "code"}, "frames": […]}`; streams are SSE with
//! `frame`, `event`, `error` and `end` events. Every API request must carry
//! the header `X-Switchboard-Console: 1`: a page of another origin cannot
//! send it without a CORS preflight, which the console never grants, so
//! another site open in the same browser cannot drive the agent through a
//! console on loopback.
//!
//! ## Who may use it
//! [`ConsoleConfig::forward_credentials`] decides whose calls the agent
//! sees. A console mounted on the server that hosts the agent
//! (`switchboard serve`, [`A2aServerConsole::console`]) sits behind the
//! server's gate and forwards each caller's own `Authorization` and
//! `X-API-Key` to the agent, so a caller sees exactly the tasks it would see
//! over A2A. A console in front of a remote agent (`switchboard console
//! --agent URL`, [`RemoteConsole`]) calls it with the credentials it was given. The page
//! itself (the static shell, no agent data) is served to anyone, since a
//! browser cannot send a bearer token with a navigation; the page asks for a
//! token or key when the API answers 401 and keeps it in the tab's memory.
#![deny(missing_docs)]

mod api;
mod assets;
mod remote;
mod validate;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use axum::Router;
use switchboard_client::ClientBuilder;

pub use remote::RemoteConsole;
pub use validate::{CardIssue, validate_card};

/// What a console talks to and how.
#[derive(Debug, Clone)]
pub struct ConsoleConfig {
    /// The agent: its base URL or its card's URL.
    pub agent_url: String,
    /// The client every API call is made with (credentials, bindings,
    /// timeouts). The console adds a tap and, with
    /// [`forward_credentials`](Self::forward_credentials), the caller's
    /// credentials.
    pub client: ClientBuilder,
    /// Send each console caller's `Authorization` and `X-API-Key` headers
    /// on to the agent: for a console on the server that hosts the agent,
    /// whose gate has let that caller in.
    pub forward_credentials: bool,
    /// The extensions the console asks the agent for on every call (the
    /// task-progress extension by default, for progress bars).
    pub extensions: Vec<String>,
}

impl ConsoleConfig {
    /// A console for the agent at `agent_url`, called with `client`'s
    /// settings.
    pub fn new(agent_url: impl Into<String>, client: ClientBuilder) -> Self {
        ConsoleConfig {
            agent_url: agent_url.into(),
            client,
            forward_credentials: false,
            extensions: vec![switchboard_protocol::progress::TASK_PROGRESS_URI.to_owned()],
        }
    }

    /// Forwards the console caller's credentials (see the field).
    pub fn forward_credentials(mut self, on: bool) -> Self {
        self.forward_credentials = on;
        self
    }
}

/// Where the console is served: the page at `/console/`, the API under
/// `/console/api/`.
pub const BASE_PATH: &str = "/console";

/// The console with no authentication of its own: the page and its API at
/// [`BASE_PATH`] (and `/console` redirected to `/console/`). For a console
/// whose callers are let in by a layer around it (`switchboard console`);
/// [`gated`] puts a server's gate in front of the API.
pub fn router(config: ConsoleConfig) -> Router {
    let state = api::Console::new(config, None);
    assets::routes().merge(api::routes(state))
}

/// The console's API behind `authenticator`: only the callers it accepts
/// reach the agent; others get the REST binding's 401 (with the scheme's
/// challenge) or 403, before their body is read. The page's static files
/// stay public (see the crate docs).
pub fn authenticated(
    config: ConsoleConfig,
    authenticator: Arc<dyn switchboard_server::Authenticator>,
) -> Router {
    let state = api::Console::new(config, Some(authenticator));
    assets::routes().merge(api::routes(state))
}

/// The console's API behind a server's `gate` ([`authenticated`] with the
/// gate's authenticator and request rate): it lets in whom the server's
/// A2A bindings let in.
pub fn gated(config: ConsoleConfig, gate: switchboard_server::Gate) -> Router {
    authenticated(config, Arc::new(api::GateAuthenticator(gate)))
}

/// The console mounted on an [`A2aServer`](switchboard_server::A2aServer)
/// over the agent it hosts.
pub trait A2aServerConsole {
    /// Serves the console at `/console/` behind the server's gate, calling
    /// the agent at `agent_url` (the server's own address) with each
    /// caller's own credentials.
    fn console(self, agent_url: impl Into<String>) -> Self;
}

impl A2aServerConsole for switchboard_server::A2aServer {
    fn console(self, agent_url: impl Into<String>) -> Self {
        let config = ConsoleConfig::new(agent_url, ClientBuilder::new()).forward_credentials(true);
        self.gated_routes(move |gate| gated(config.clone(), gate))
    }
}
