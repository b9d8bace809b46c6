//! # Any A2A agent as MCP tools
//!
//! An MCP host (an IDE, a desktop assistant, an LLM runtime) calls *tools*;
//! an A2A agent runs *tasks*. [`McpFront`] is an MCP server in front of one
//! or more A2A agents that turns the one into the other, built on the
//! official Rust MCP SDK (`rmcp`) and following the MCP revision it
//! implements (2026-07-28, and the earlier revisions a client may ask for).
//!
//! ## Tools
//! Each skill of an agent's card is a tool ([`tools`]): its name is the
//! skill id (made safe for MCP tool names), its title and description the
//! skill's, and its input schema asks for the `message` to send (plus an
//! optional `task_id`, the task to continue). An agent whose card lists no
//! skills gets one generic tool, `send_message`. With several agents each
//! tool name starts with the agent's prefix and `__` (`weather__forecast`).
//! A single agent's card name and description are the server's.
//!
//! ## A call
//! A tool call sends one A2A message (streaming when the card says the agent
//! streams) and follows the task to its end ([`call`]):
//!
//! | the task | the MCP caller gets |
//! |---|---|
//! | working statuses, task-progress trackers | `notifications/progress` (when the call carried a progress token) |
//! | completed | the tool result: text parts as text, data parts as structured content (and their JSON as text), files as embedded resources (bytes) or resource links (URLs) |
//! | input-required | an elicitation: `elicitation/create` for a host that declared the capability, or an input-required result on 2026-07-28; its form is the agent's own when the question holds an `a2a.hitl.form` (answered with an `a2a.hitl.formResponse`), else one text field. The answer goes to the same task and the call goes on. Without elicitation, the result says what the agent asks and how to answer (call again with `task_id`) |
//! | auth-required | a tool error naming the card's security schemes (the task is canceled) |
//! | failed, rejected, canceled | a tool error with the agent's reason |
//! | the MCP call is canceled (or its caller goes away) | the A2A task is canceled |
//!
//! Every failure is a [`CallError`], mapped once to what MCP shows: a tool
//! error the model can read, or a protocol error for a call that names no
//! tool or has unusable arguments.
//!
//! ## Transports
//! [`McpFront::serve_stdio`] serves one host over stdin/stdout (what a
//! host's `mcpServers` entry starts); [`McpFront::router`] is MCP's
//! streamable HTTP as an axum [`Router`](axum::Router), behind an
//! authenticator and with each MCP session bound to the caller that opened
//! it ([`http`]); [`McpFront::serve_http`] serves it on a port of its own
//! until Ctrl-C or SIGTERM.
//!
//! ## Whose tasks
//! The agent sees every call as the front's (its credentials), so the front
//! scopes tasks to its callers the way the AG-UI bridge does
//! ([`switchboard_bridge::Owner`]): the contexts it starts carry a hash of
//! the caller's principal, and a call naming a task of another caller's
//! context is answered as if the task did not exist.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use switchboard_client::A2AClient;
//! use switchboard_mcp::{McpAgent, McpFront};
//!
//! let client = A2AClient::connect("http://127.0.0.1:8080").await?;
//! let front = McpFront::new(vec![McpAgent::new(client)])?;
//! front.serve_stdio().await?;
//! # Ok(()) }
//! ```

pub mod call;
mod content;
mod error;
pub mod http;
pub mod tools;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use switchboard_client::{A2AClient, ClientBuilder, ClientError};
use switchboard_protocol::progress::{ProgressLimits, TASK_PROGRESS_URI};

pub use error::{CallError, FrontError};
pub use http::HttpOptions;

/// How long the agent may stay silent during a call (an answer, or the
/// next event of a stream) by default.
pub const DEFAULT_AGENT_TIMEOUT: Duration = Duration::from_secs(300);

/// One A2A agent behind the front: its client (card fetched) and the
/// prefix of its tool names.
#[derive(Debug, Clone)]
pub struct McpAgent {
    client: A2AClient,
    prefix: Option<String>,
}

impl McpAgent {
    /// The agent `client` talks to; its client must have been built from the
    /// card (`A2AClient::connect`, `ClientBuilder::from_card`).
    pub fn new(client: A2AClient) -> Self {
        McpAgent {
            client,
            prefix: None,
        }
    }

    /// The agent at `url` (its base URL or its card's URL), reached with
    /// `client`'s settings: its card is fetched here, so an agent that
    /// cannot be used is an error before the front serves anything.
    pub async fn connect(client: ClientBuilder, url: &str) -> Result<Self, ClientError> {
        Ok(McpAgent::new(client.connect(url).await?))
    }

    /// The agent an `[PREFIX=]URL` spec names (see [`split_spec`]),
    /// connected as [`McpAgent::connect`] does, with the spec's prefix.
    pub async fn connect_spec(client: ClientBuilder, spec: &str) -> Result<Self, ClientError> {
        let (prefix, url) = split_spec(spec);
        let agent = McpAgent::connect(client, url).await?;
        Ok(match prefix {
            Some(prefix) => agent.with_prefix(prefix),
            None => agent,
        })
    }

    /// Starts each of its tool names with `prefix` and `__`. With several
    /// agents a prefix is required; [`McpFront::new`] makes one from the
    /// card's name for an agent that has none.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }
}

/// An agent as a person names it, `URL` or `PREFIX=URL`, split into the
/// prefix of its tools and its URL. A `=` may be part of a URL's query, so
/// only a non-empty prefix before any `:` or `/` is one.
///
/// ```
/// use switchboard_mcp::split_spec;
/// assert_eq!(split_spec("w=http://h/"), (Some("w"), "http://h/"));
/// assert_eq!(split_spec("http://h/?a=b"), (None, "http://h/?a=b"));
/// ```
pub fn split_spec(spec: &str) -> (Option<&str>, &str) {
    match spec.split_once('=') {
        Some((prefix, url)) if !prefix.contains([':', '/']) && !prefix.is_empty() => {
            (Some(prefix), url)
        }
        _ => (None, spec),
    }
}

/// Settings of a front.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpOptions {
    /// The longest the agent may stay silent during a call; past it the
    /// call is a tool error and the task is canceled.
    pub agent_timeout: Duration,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            agent_timeout: DEFAULT_AGENT_TIMEOUT,
        }
    }
}

impl McpOptions {
    /// Sets [`McpOptions::agent_timeout`].
    pub fn with_agent_timeout(mut self, timeout: Duration) -> Self {
        self.agent_timeout = timeout;
        self
    }
}

/// An agent as the front uses it.
#[derive(Debug)]
pub(crate) struct Agent {
    /// The client; it requests the task-progress extension when the card
    /// declares it, so that trackers reach progress notifications.
    pub(crate) client: A2AClient,
    /// The card's security schemes, by name (what auth-required names).
    pub(crate) schemes: Vec<String>,
    /// The card says the agent streams.
    pub(crate) streaming: bool,
}

/// The MCP server in front of A2A agents (see the crate docs). Cheap to
/// clone: every MCP session of the HTTP endpoint gets a clone.
#[derive(Debug, Clone)]
pub struct McpFront {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) agents: Vec<Agent>,
    pub(crate) tools: tools::ToolTable,
    pub(crate) info: ServerConfig,
    pub(crate) options: McpOptions,
}

impl McpFront {
    /// A front for `agents` with default options.
    pub fn new(agents: Vec<McpAgent>) -> Result<Self, FrontError> {
        Self::with_options(agents, McpOptions::default())
    }

    /// A front for `agents`. Fails for no agent, or an agent whose client
    /// holds no card.
    pub fn with_options(agents: Vec<McpAgent>, options: McpOptions) -> Result<Self, FrontError> {
        if agents.is_empty() {
            return Err(FrontError::NoAgent);
        }
        let several = agents.len() > 1;
        let mut built = Vec::with_capacity(agents.len());
        let mut table = tools::ToolTable::default();
        let mut names = Vec::new();
        for (index, agent) in agents.into_iter().enumerate() {
            let card = agent
                .client
                .card()
                .cloned()
                .ok_or_else(|| FrontError::NoCard(agent.client.endpoint().to_owned()))?;
            let prefix = match agent.prefix {
                Some(prefix) => Some(tools::tool_name_part(&prefix)),
                None if several => Some(tools::tool_name_part(&card.name)),
                None => None,
            };
            table.add_agent(index, &card, prefix.as_deref());
            let client = if ProgressLimits::from_card(&card).is_some() {
                agent
                    .client
                    .with_extensions([TASK_PROGRESS_URI])
                    .map_err(FrontError::Client)?
            } else {
                agent.client
            };
            names.push((
                card.name.clone(),
                card.description.clone(),
                card.version.clone(),
            ));
            built.push(Agent {
                client,
                schemes: card.security_schemes.keys().cloned().collect(),
                streaming: card.capabilities.streaming == Some(true),
            });
        }
        let info = server_info(&names);
        Ok(McpFront {
            inner: Arc::new(Inner {
                agents: built,
                tools: table,
                info,
                options,
            }),
        })
    }

    /// The tools the front lists.
    pub fn tools(&self) -> Vec<Tool> {
        self.inner.tools.tools()
    }

    /// Serves one MCP host over this process's stdin and stdout until the
    /// host closes stdin.
    pub async fn serve_stdio(self) -> Result<(), FrontError> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| FrontError::Serve(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| FrontError::Serve(e.to_string()))?;
        Ok(())
    }
}

/// The server's name, version and description: a single agent's card's,
/// or a summary of several.
fn server_info(agents: &[(String, String, String)]) -> ServerConfig {
    let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
    let (implementation, instructions) = match agents {
        [(name, description, version)] => {
            let mut implementation = Implementation::new(name.clone(), version.clone());
            implementation.description = Some(description.clone());
            (implementation, description.clone())
        }
        several => {
            let names: Vec<&str> = several.iter().map(|(n, _, _)| n.as_str()).collect();
            let description = format!("A2A agents: {}", names.join(", "));
            let mut implementation = Implementation::new("switchboard", env!("CARGO_PKG_VERSION"));
            implementation.description = Some(description.clone());
            let instructions = several
                .iter()
                .map(|(n, d, _)| format!("{n}: {d}"))
                .collect::<Vec<_>>()
                .join("\n");
            (implementation, instructions)
        }
    };
    info.server_info = implementation;
    if !instructions.is_empty() {
        info.instructions = Some(instructions);
    }
    info
}

impl ServerHandler for McpFront {
    fn get_info(&self) -> ServerConfig {
        self.inner.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.get(name).map(|route| route.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        call::call_tool(&self.inner, request, context).await
    }
}
