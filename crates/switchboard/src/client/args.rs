//! The command line of `switchboard client …`: one clap subcommand per A2A
//! operation, plus the connection and message options they share.
//!
//! Everything here is data; nothing connects. [`super::run`] turns a parsed
//! [`ClientCommand`] into calls and output.

use switchboard_client::AgentSettings;
use switchboard_protocol::TaskState;

/// How to reach the agent and how to print; shared by every subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct ConnectArgs {
    /// Agent base URL (its card is read from /.well-known/agent-card.json)
    /// or the agent card's own URL.
    #[arg(long, env = "SWITCHBOARD_URL", value_name = "URL")]
    pub url: String,
    /// Print JSON Lines: one {"type": ..., "data": ...} object per line.
    #[arg(long)]
    pub json: bool,
    /// Credentials, binding, version and trust for the agent.
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// How to reach an agent: credentials, time limit, binding, version, card
/// trust. Flattened into every client command and `switchboard mcp`
/// (whose agents are reached the same way); [`AgentArgs::settings`] is
/// the client's [`AgentSettings`].
#[derive(Debug, Clone, clap::Args)]
pub struct AgentArgs {
    /// Extra HTTP header for every request, e.g. "Authorization: Bearer TOKEN"
    /// (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// API key for an agent that asks for one (sent as `X-API-Key`).
    #[arg(
        long,
        env = "SWITCHBOARD_API_KEY",
        value_name = "KEY",
        hide_env_values = true
    )]
    pub api_key: Option<String>,
    /// Bearer token (e.g. a JWT) sent as `Authorization: Bearer TOKEN`.
    #[arg(
        long,
        env = "SWITCHBOARD_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Time limit in seconds for each request (for streams: until the
    /// stream starts).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Use this protocol binding of the card instead of the card's first
    /// usable interface.
    #[arg(long, value_enum, value_name = "BINDING")]
    pub binding: Option<Binding>,
    /// Speak this A2A version (from the card's interfaces for it) instead
    /// of the default choice (1.0 when offered, else 0.3).
    #[arg(long, value_name = "VERSION", value_parser = ["1.0", "0.3"])]
    pub protocol_version: Option<String>,
    /// Refuse the agent unless its card is signed by a key published on the
    /// card's own origin (the signature's `jku`), and unaltered.
    #[arg(long, env = "SWITCHBOARD_VERIFY_CARD")]
    pub verify_card: bool,
    /// Also trust this CA certificate (PEM) for `https` agents, on every
    /// binding (gRPC included), beside the built-in Mozilla roots.
    #[arg(long, env = "SWITCHBOARD_CA_CERT", value_name = "FILE")]
    pub ca_cert: Option<std::path::PathBuf>,
    /// OAuth 2.0 client credentials (boxed: it would make every command
    /// value large).
    #[command(flatten)]
    pub oauth: Box<OAuthArgs>,
}

impl AgentArgs {
    /// The flags as the client's settings, still unchecked
    /// ([`AgentSettings::options`] checks them).
    pub fn settings(&self) -> AgentSettings {
        let mut settings = AgentSettings::default();
        settings.headers = self.headers.clone();
        settings.api_key = self.api_key.clone();
        settings.token = self.token.clone();
        settings.timeout_secs = self.timeout;
        settings.binding = self.binding.map(|b| b.card_name().to_owned());
        settings.protocol_version = self.protocol_version.clone();
        settings.verify_card = self.verify_card;
        settings.ca_cert = self.ca_cert.clone();
        settings.oauth.token_url = self.oauth.oauth_token_url.clone();
        settings.oauth.client_id = self.oauth.oauth_client_id.clone();
        settings.oauth.client_secret_file = self.oauth.oauth_client_secret_file.clone();
        settings.oauth.scopes = self.oauth.oauth_scopes.clone();
        settings
    }
}

/// How a front (`bridge`, `console`) reaches its one agent: the
/// credential it sends and its preferences, as `--agent-*` and
/// `--prefer-*` flags. Each front renames the variables to its own
/// (`SWITCHBOARD_BRIDGE_*`, `SWITCHBOARD_CONSOLE_*`); [`Self::options`]
/// is the client's [`switchboard_client::ConnectOptions`].
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FrontAgentArgs {
    /// A bearer token sent to the agent on every call.
    #[arg(
        long,
        env = "SWITCHBOARD_AGENT_BEARER_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub agent_bearer_token: Option<String>,
    /// A header sent to the agent on every call, `Name: value`.
    /// Repeatable (one per line in the variable); adds to the file's list.
    #[arg(
        long = "agent-header",
        alias = "agent-headers",
        env = "SWITCHBOARD_AGENT_HEADER",
        hide_env_values = true,
        value_delimiter = '\n',
        value_parser = switchboard_client::connect::parse_header,
        value_name = "NAME: VALUE"
    )]
    pub agent_header: Vec<(String, String)>,
    /// The bindings to reach the agent with, in order of preference
    /// (JSONRPC, HTTP+JSON, GRPC); default: the card's order. Repeatable
    /// (comma-separated in the variable).
    #[arg(
        long = "prefer-binding",
        alias = "prefer-bindings",
        env = "SWITCHBOARD_PREFER_BINDING",
        value_delimiter = ',',
        value_parser = switchboard_client::connect::parse_binding,
        value_name = "BINDING"
    )]
    pub prefer_binding: Vec<String>,
    /// The A2A versions to reach the agent with, in order of preference
    /// (`1.0`, `0.3`); default: 1.0 where the card offers it.
    #[arg(
        long = "prefer-version",
        env = "SWITCHBOARD_PREFER_VERSION",
        value_delimiter = ',',
        value_parser = ["1.0", "0.3"],
        value_name = "VERSION"
    )]
    pub prefer_version: Vec<String>,
}

impl FrontAgentArgs {
    /// The client's options these flags make.
    pub fn options(&self) -> switchboard_client::ConnectOptions {
        let mut options = switchboard_client::ConnectOptions::default();
        options.headers = self.agent_header.clone();
        options.bearer_token = self.agent_bearer_token.clone();
        options.bindings = self.prefer_binding.clone();
        options.versions = self.prefer_version.clone();
        options
    }
}

/// `--oauth-*`: OAuth 2.0 client credentials for every request.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OAuthArgs {
    /// OAuth 2.0 client credentials: the token endpoint's URL. With it every
    /// request carries an access token got with `--oauth-client-id` and the
    /// secret (from SWITCHBOARD_OAUTH_CLIENT_SECRET or
    /// `--oauth-client-secret-file`; never a flag, so it stays out of `ps`
    /// and shell history).
    #[arg(long, env = "SWITCHBOARD_OAUTH_TOKEN_URL", value_name = "URL")]
    pub oauth_token_url: Option<String>,
    /// The OAuth 2.0 client id.
    #[arg(long, env = "SWITCHBOARD_OAUTH_CLIENT_ID", value_name = "ID")]
    pub oauth_client_id: Option<String>,
    /// File holding the OAuth 2.0 client secret (surrounding whitespace is
    /// ignored).
    #[arg(long, value_name = "FILE")]
    pub oauth_client_secret_file: Option<std::path::PathBuf>,
    /// A scope to ask the token endpoint for (repeatable).
    #[arg(long = "oauth-scope", value_name = "SCOPE")]
    pub oauth_scopes: Vec<String>,
}

/// A protocol binding `--binding` can force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP (`JSONRPC`).
    Jsonrpc,
    /// HTTP+JSON, the REST binding (`HTTP+JSON`).
    Rest,
    /// gRPC (`GRPC`).
    Grpc,
}

impl Binding {
    /// The `protocolBinding` name in the card.
    pub fn card_name(self) -> &'static str {
        match self {
            Binding::Jsonrpc => switchboard_protocol::card::BINDING_JSONRPC,
            Binding::Rest => switchboard_protocol::card::BINDING_HTTP_JSON,
            Binding::Grpc => switchboard_protocol::card::BINDING_GRPC,
        }
    }
}

/// The message to send (for `send` and `stream`).
#[derive(Debug, Clone, clap::Args)]
pub struct MessageArgs {
    /// The message text; several words are joined with spaces.
    #[arg(required = true, value_name = "TEXT")]
    pub text: Vec<String>,
    /// Continue this conversation (context id).
    #[arg(long, value_name = "ID")]
    pub context_id: Option<String>,
    /// Continue this task (e.g. answer an input-required task).
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,
    /// A task this message refers to (repeatable).
    #[arg(long = "reference-task", value_name = "TASK_ID")]
    pub reference_tasks: Vec<String>,
    /// Return at most this many history messages with the task (0: none).
    #[arg(long, value_name = "N")]
    pub history_length: Option<i32>,
}

/// `switchboard client` subcommands: one A2A operation each.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ClientCommand {
    /// Fetch and show the agent card.
    Card {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
    },
    /// Send a message and wait until the task finishes or needs input.
    Send {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The message.
        #[command(flatten)]
        message: MessageArgs,
        /// Return as soon as the task exists instead of waiting.
        #[arg(long)]
        return_immediately: bool,
    },
    /// Send a message and print the task's events as they happen.
    Stream {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The message.
        #[command(flatten)]
        message: MessageArgs,
        /// Do not request the task-progress extension (no progress bars or
        /// progress lines).
        #[arg(long)]
        no_progress: bool,
        /// Ask for AG-UI events instead of A2A frames and print one line
        /// per event (`--json`: the raw AG-UI JSON).
        #[arg(long)]
        agui: bool,
    },
    /// Show a task (or, with --watch, follow it by polling).
    Get {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task id.
        id: String,
        /// Return at most this many history messages (0: none).
        #[arg(long, value_name = "N")]
        history_length: Option<i32>,
        /// Poll the task until it finishes or needs input, printing what
        /// changes and its progress.
        #[arg(long)]
        watch: bool,
        /// With --watch: seconds between two polls (default 0.5).
        #[arg(long, value_name = "SECS", requires = "watch")]
        interval: Option<f64>,
        /// With --watch: do not request the task-progress extension.
        #[arg(long, requires = "watch")]
        no_progress: bool,
    },
    /// List tasks, most recently updated first.
    List {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// Only tasks of this context.
        #[arg(long, value_name = "ID")]
        context_id: Option<String>,
        /// Only tasks in this state (e.g. working, completed, input-required).
        #[arg(long, value_parser = parse_state, value_name = "STATE")]
        state: Option<TaskState>,
        /// Tasks per page (1-100; the agent's default is 50).
        #[arg(long, value_name = "N")]
        page_size: Option<i32>,
        /// Continue from this page token (printed after a full page).
        #[arg(long, value_name = "TOKEN")]
        page_token: Option<String>,
        /// Include each task's artifacts.
        #[arg(long)]
        include_artifacts: bool,
    },
    /// Cancel a task.
    Cancel {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task id.
        id: String,
    },
    /// A task's push notification configs (webhooks): create, get, list,
    /// delete.
    #[command(subcommand)]
    PushConfig(super::push_config::PushConfigCommand),
    /// Follow a running task's events until it ends.
    Subscribe {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task id.
        id: String,
        /// Do not request the task-progress extension (no progress bars or
        /// progress lines).
        #[arg(long)]
        no_progress: bool,
    },
}

impl ClientCommand {
    /// The connection and output options.
    pub(super) fn conn(&self) -> &ConnectArgs {
        match self {
            ClientCommand::Card { conn }
            | ClientCommand::Send { conn, .. }
            | ClientCommand::Stream { conn, .. }
            | ClientCommand::Get { conn, .. }
            | ClientCommand::List { conn, .. }
            | ClientCommand::Cancel { conn, .. }
            | ClientCommand::Subscribe { conn, .. } => conn,
            ClientCommand::PushConfig(cmd) => cmd.conn(),
        }
    }

    /// Whether the command relies on a capability the card declares
    /// (streaming, push notifications): only then does an
    /// UnsupportedOperation refusal have the card's capabilities to explain
    /// it. Sending to a finished task is refused with the same error, for a
    /// reason the card has nothing to say about.
    pub(super) fn relies_on_capabilities(&self) -> bool {
        matches!(
            self,
            ClientCommand::Stream { .. }
                | ClientCommand::Subscribe { .. }
                | ClientCommand::PushConfig(_)
        )
    }

    /// Whether this command activates the task-progress extension.
    pub(super) fn wants_progress(&self) -> bool {
        match self {
            ClientCommand::Stream { no_progress, .. }
            | ClientCommand::Subscribe { no_progress, .. } => !no_progress,
            ClientCommand::Get {
                watch, no_progress, ..
            } => *watch && !no_progress,
            _ => false,
        }
    }
}

impl ClientCommand {
    /// Whether this command follows a task and so, on a terminal, shows the
    /// live status line: `send` (while it waits), `stream` (not `--agui`),
    /// `subscribe` and `get --watch`.
    pub(super) fn shows_live_status(&self) -> bool {
        match self {
            ClientCommand::Send { .. } | ClientCommand::Subscribe { .. } => true,
            ClientCommand::Stream { agui, .. } => !agui,
            ClientCommand::Get { watch, .. } => *watch,
            _ => false,
        }
    }
}

pub(super) fn parse_state(s: &str) -> Result<TaskState, String> {
    TaskState::parse(s).ok_or_else(|| {
        let names: Vec<&str> = TaskState::ALL.iter().map(|s| s.label()).collect();
        format!("unknown state {s:?}; one of {}", names.join(", "))
    })
}
