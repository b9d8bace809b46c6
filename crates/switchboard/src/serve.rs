//! `switchboard serve`: configuration and start-up.
//!
//! Settings come from, in increasing priority: built-in defaults, a TOML
//! file (`--config`), `SWITCHBOARD_*` environment variables, and flags.
//! Each is declared once, as a field of [`ServeArgs`]; [`crate::config`]
//! layers the file under clap, so the file's keys are the flags' names
//! with `_` for `-`. `deploy/switchboard.toml` is an annotated example
//! with every key (loaded by `tests/config.rs`), and `switchboard config
//! check` prints the effective settings.
//!
//! With `store = "postgres://…"` several replicas may share one database:
//! each runs a delivery worker, they claim notifications with
//! `FOR UPDATE SKIP LOCKED` (each goes out once per attempt, per-webhook
//! order kept), a commit on any replica wakes them all (`LISTEN`/`NOTIFY`),
//! and they sign with one key set stored in the database (a rotation on one
//! replica reaches the others within [`switchboard_push::shared_keys::REFRESH_INTERVAL`]),
//! unless `push_key_file` gives each its own file. Dead letters are listed
//! and requeued with `switchboard push dead-letters` / `switchboard push retry`.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use switchboard_core::{AgentExecutor, Cluster, RequestHandler, TaskStore};
use switchboard_protocol::AgentCard;
use switchboard_server::A2aServer;

use crate::config;
use switchboard_runtimes::builtin as demo;

mod stores;
use stores::push_options;
pub use stores::{Stores, load_push_keys, open_stores, push_key_path};

/// The settings of `switchboard serve`: each one a flag, a `SWITCHBOARD_*`
/// variable and a TOML key at once (see [`crate::config`]). Structs of
/// further settings are flattened in with `#[command(flatten)]`; every
/// argument needs `long` and `env = "SWITCHBOARD_<ID>"` (checked by
/// `tests/config.rs`).
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// TOML config file: keys are the flags with `_` for `-`
    /// (see deploy/switchboard.toml); flags and variables win over it.
    #[arg(long, env = "SWITCHBOARD_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address and port to listen on (port 0 picks a free one).
    #[arg(long, env = "SWITCHBOARD_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Where tasks live: `memory`, `sqlite://PATH` (created if missing) or `postgres://…`.
    #[arg(
        long,
        env = "SWITCHBOARD_STORE",
        // A PostgreSQL URL may carry a password: `--help` must not show it.
        hide_env_values = true,
        default_value = "sqlite://switchboard.db"
    )]
    pub store: String,
    /// The URL clients use to reach this server (default: `http://<listen>`).
    #[arg(long, env = "SWITCHBOARD_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Which built-in agent to serve: demo, echo-message, echo-task or
    /// relay (forwards `URL TEXT` to another agent; trusted callers only).
    #[arg(long, env = "SWITCHBOARD_AGENT", default_value = "demo")]
    pub agent: String,
    /// Largest request body accepted, in bytes.
    #[arg(long, env = "SWITCHBOARD_MAX_BODY_BYTES", default_value_t = switchboard_server::DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// With `--store memory`: how many finished tasks to keep (oldest dropped first).
    #[arg(
        long,
        env = "SWITCHBOARD_MEMORY_MAX_TERMINAL_TASKS",
        default_value_t = 100_000
    )]
    pub memory_max_terminal_tasks: usize,
    /// With `--store memory`: most bytes of tasks and event logs (as JSON)
    /// to hold; finished tasks are dropped first, then new tasks refused.
    #[arg(
        long,
        env = "SWITCHBOARD_MEMORY_MAX_BYTES",
        default_value_t = 512 * 1024 * 1024
    )]
    pub memory_max_bytes: u64,
    /// With `--store postgres://…` (several replicas): the lease a replica
    /// holds on the tasks it runs. When a replica dies, a survivor fails its
    /// unfinished tasks within about this long.
    #[arg(long, env = "SWITCHBOARD_REPLICA_LEASE_MS", default_value_t = 10_000)]
    pub replica_lease_ms: u64,
    /// Delete finished tasks (and their event logs) this many seconds after
    /// they finished (default: keep them).
    #[arg(long, env = "SWITCHBOARD_RETENTION_MAX_AGE_SECS")]
    pub retention_max_age_secs: Option<u64>,
    /// Keep at most this many finished tasks, deleting the oldest (default: all).
    #[arg(long, env = "SWITCHBOARD_RETENTION_MAX_FINISHED")]
    pub retention_max_finished: Option<u64>,
    /// How often retention runs, in seconds.
    #[arg(
        long,
        env = "SWITCHBOARD_RETENTION_INTERVAL_SECS",
        default_value_t = 60
    )]
    pub retention_interval_secs: u64,
    /// Push notifications (with every store); `--push=false` or `--no-push`
    /// turns them off (the push operations then answer
    /// PushNotificationNotSupported).
    #[arg(long, env = "SWITCHBOARD_PUSH", default_value_t = true, num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set)]
    pub push: bool,
    /// Disable push notifications (same as `--push=false`).
    #[arg(long, env = "SWITCHBOARD_NO_PUSH", conflicts_with = "push")]
    pub no_push: bool,
    /// Exempt this webhook host (exact name or IP) from the SSRF guard, e.g.
    /// 127.0.0.1 for local testing. Repeatable, adds to the file's list; the
    /// variable takes a comma-separated list.
    #[arg(
        long = "push-allow-host",
        alias = "push-allow-hosts",
        value_name = "HOST",
        env = "SWITCHBOARD_PUSH_ALLOW_HOST",
        value_delimiter = ','
    )]
    pub push_allow_host: Vec<String>,
    /// File holding the push signing keys (created if missing). Default:
    /// PostgreSQL: one set shared by all replicas, in the database; SQLite:
    /// beside the database file; memory: in memory.
    #[arg(long, env = "SWITCHBOARD_PUSH_KEY_FILE", value_name = "FILE")]
    pub push_key_file: Option<PathBuf>,
    /// First delay before retrying a failed push delivery (doubling each time), in ms.
    #[arg(long, env = "SWITCHBOARD_PUSH_RETRY_BASE_MS", default_value_t = 1_000)]
    pub push_retry_base_ms: u64,
    /// Longest delay between push delivery attempts, in ms.
    #[arg(long, env = "SWITCHBOARD_PUSH_RETRY_MAX_MS", default_value_t = 600_000)]
    pub push_retry_max_ms: u64,
    /// Attempts before a push notification is dead-lettered.
    #[arg(long, env = "SWITCHBOARD_PUSH_MAX_ATTEMPTS", default_value_t = 15)]
    pub push_max_attempts: u32,
    /// After a crash, how soon an unsettled push delivery is retried, in seconds.
    #[arg(long, env = "SWITCHBOARD_PUSH_LEASE_SECS", default_value_t = 60)]
    pub push_lease_secs: u64,
    /// Serve the hybrid card: the 1.0 card plus the A2A 0.3 fields 0.3
    /// clients need (`--hybrid-card=false` is `--strict-card`).
    #[arg(long, env = "SWITCHBOARD_HYBRID_CARD", default_value_t = true, num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set,
          conflicts_with = "strict_card")]
    pub hybrid_card: bool,
    /// Serve a strict A2A 1.0 card, without the 0.3 top-level fields (`url`,
    /// `preferredTransport`, `protocolVersion`, `additionalInterfaces`) that
    /// 0.3 clients need to discover the 0.3 interfaces. Only for when a
    /// strict 1.0 validator must accept the card.
    #[arg(long, env = "SWITCHBOARD_STRICT_CARD")]
    pub strict_card: bool,
    /// Sign the agent card (JWS over its canonical JSON) with the push
    /// signing keys, published at `/.well-known/jwks.json`; needs push on.
    #[arg(long, env = "SWITCHBOARD_SIGN_CARD")]
    pub sign_card: bool,
    /// Offer an extended agent card to authenticated callers: a JSON file
    /// whose members go over the public card's (`skills` are added to the
    /// public skills; any other member, e.g. `description`, replaces the
    /// public one). The public card then declares
    /// `capabilities.extendedAgentCard`; anonymous callers of
    /// GetExtendedAgentCard get an authentication error.
    #[arg(long, env = "SWITCHBOARD_EXTENDED_CARD", value_name = "PATH")]
    pub extended_card: Option<PathBuf>,
    /// Advertise URL for a binding in the card instead of the one derived
    /// from the public URL, e.g. `GRPC=grpc.example.com:443` (bindings:
    /// JSONRPC, HTTP+JSON, GRPC). Repeatable, adds to the file's table
    /// `[interface_urls]`; the variable takes a comma-separated list.
    #[arg(long = "interface-url", alias = "interface-urls", value_name = "BINDING=URL",
          value_parser = parse_interface_url, env = "SWITCHBOARD_INTERFACE_URL", value_delimiter = ',')]
    pub interface_url: Vec<(String, String)>,
    /// Serve HTTPS (every binding, gRPC included, on the one port): the
    /// certificate chain, PEM, leaf first. Needs `--tls-key`. Replaced files
    /// are picked up without a restart.
    #[arg(long, env = "SWITCHBOARD_TLS_CERT", value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert` (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, env = "SWITCHBOARD_TLS_KEY", value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// How often, in seconds, the certificate and key files are checked for
    /// a change (a new pair is used for new connections; a bad one is
    /// logged and the old one kept).
    #[arg(long, env = "SWITCHBOARD_TLS_RELOAD_SECS", default_value_t = 5)]
    pub tls_reload_secs: u64,
    /// Serve the agent to AG-UI frontends at `/agui` (the bridge's
    /// endpoint over the hosted agent: a RunAgentInput in, AG-UI events
    /// out, callers admitted as on the A2A bindings), and to CopilotKit
    /// apps at `/api/copilotkit` (CopilotKit's runtime routes, the agent
    /// under its card's name); `--agui-endpoint=false` turns both off.
    #[arg(long, env = "SWITCHBOARD_AGUI_ENDPOINT", default_value_t = true, num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set)]
    pub agui_endpoint: bool,
    /// At `/agui`: forward AG-UI `system` and `developer` messages to the
    /// agent (as user content tagged with their role); dropped by default.
    #[arg(long, env = "SWITCHBOARD_AGUI_FORWARD_SYSTEM_MESSAGES")]
    pub agui_forward_system_messages: bool,
    /// Do not serve the web console at `/console/` (the agent's card,
    /// chat, tasks and wire frames in a browser; its API lets in whom the
    /// A2A bindings let in, and calls the agent with each caller's own
    /// credentials).
    #[cfg(feature = "console")]
    #[arg(long, env = "SWITCHBOARD_NO_CONSOLE")]
    pub no_console: bool,
    /// Authentication (see [`crate::auth_args`]).
    #[command(flatten)]
    pub auth: crate::auth_args::AuthArgs,
    /// How and what to log (see [`crate::log_args`]).
    #[command(flatten)]
    pub logging: crate::log_args::LogArgs,
    /// Serve `/metrics` (Prometheus text) only on this address, e.g.
    /// `127.0.0.1:9464`, instead of beside the A2A bindings on `listen`
    /// (where it is served unauthenticated, like `/healthz`; it holds
    /// aggregate counts only).
    #[arg(long, env = "SWITCHBOARD_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<String>,
    /// Limits on what one client may hold (`limits_args.rs`; boxed: a
    /// dozen optional numbers would make every `Command` value large).
    #[command(flatten)]
    pub limits: Box<crate::limits_args::LimitsArgs>,
    /// More agents under path prefixes: the file's `[[agents]]` tables
    /// (see [`crate::agents`]; not a flag).
    #[arg(skip)]
    pub agents: Vec<crate::agents::AgentSpec>,
}

fn parse_interface_url(s: &str) -> Result<(String, String), String> {
    use switchboard_protocol::card::{BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC};
    let (binding, url) = s
        .split_once('=')
        .ok_or_else(|| format!("expected BINDING=URL, got {s:?}"))?;
    let binding = binding.trim().to_ascii_uppercase();
    if ![BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC].contains(&binding.as_str()) {
        return Err(format!(
            "unknown binding {binding:?}: use JSONRPC, HTTP+JSON or GRPC"
        ));
    }
    if url.trim().is_empty() {
        return Err(format!("no URL given for {binding}"));
    }
    Ok((binding, url.trim().to_string()))
}

/// The resolved configuration: the settings after flags, variables and
/// file are layered.
pub type Config = ServeArgs;

/// The argument id of the config file setting.
const CONFIG_ID: &str = "config";

impl Default for ServeArgs {
    /// The declared defaults, with no flag, variable or file.
    fn default() -> Self {
        let cmd = Self::command().mut_args(|a| a.env(None));
        let defaults = cmd
            .try_get_matches_from(["serve"])
            .and_then(|m| <Self as clap::FromArgMatches>::from_arg_matches(&m));
        #[allow(clippy::expect_used)]
        // Every setting has a default or is optional (tested by `defaults_parse`).
        defaults.expect("every serve setting has a default")
    }
}

impl ServeArgs {
    /// The `serve` command with every setting (flattened structs included).
    pub fn command() -> clap::Command {
        <Self as clap::Args>::augment_args(clap::Command::new("serve"))
    }

    /// Parses `argv` (the tokens after `serve`) with the environment and
    /// the config file layered under it (see [`crate::config`]).
    pub fn layered(argv: &[std::ffi::OsString]) -> anyhow::Result<(Config, config::Layered)> {
        let layered = config::parse_layered(&Self::command(), argv, CONFIG_ID)?;
        let mut cfg = <Self as clap::FromArgMatches>::from_arg_matches(&layered.matches)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        cfg.agents = crate::agents::parse(&layered.lists)?;
        cfg.validate()?;
        Ok((cfg, layered))
    }

    /// Resolves the configuration from `argv`; see [`ServeArgs::layered`].
    pub fn resolve(argv: &[std::ffi::OsString]) -> anyhow::Result<Config> {
        Ok(Self::layered(argv)?.0)
    }

    /// The effective configuration as TOML, secrets masked, with where each
    /// value came from (`switchboard config check`).
    pub fn check(argv: &[std::ffi::OsString]) -> anyhow::Result<String> {
        let (cfg, layered) = Self::layered(argv)?;
        Ok(config::render(&Self::command(), &layered, CONFIG_ID)
            + &crate::agents::render(&cfg.agents))
    }

    /// [`ServeArgs::check`] as one JSON object ([`config::render_json`]).
    pub fn check_json(argv: &[std::ffi::OsString]) -> anyhow::Result<serde_json::Value> {
        let (cfg, layered) = Self::layered(argv)?;
        let mut json = config::render_json(&Self::command(), &layered, CONFIG_ID);
        if !cfg.agents.is_empty()
            && let Some(object) = json.as_object_mut()
        {
            object.insert(
                crate::agents::LIST.into(),
                crate::agents::render_json(&cfg.agents),
            );
        }
        Ok(json)
    }

    /// Checks what clap's value parsers cannot: the store and agent names.
    pub fn validate(&self) -> anyhow::Result<()> {
        store_kind(&self.store)?;
        agent(&self.agent)?;
        Ok(())
    }

    /// Whether push notifications are on.
    pub fn push_enabled(&self) -> bool {
        self.push && !self.no_push
    }

    /// Whether the card is the hybrid 1.0 + 0.3 card.
    pub fn hybrid(&self) -> bool {
        self.hybrid_card && !self.strict_card
    }
}

/// The kinds of store a URL can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreKind {
    Memory,
    Sqlite,
    Postgres,
}

fn store_kind(url: &str) -> anyhow::Result<StoreKind> {
    if url == "memory" || url == "memory://" {
        Ok(StoreKind::Memory)
    } else if url.starts_with("sqlite:") {
        Ok(StoreKind::Sqlite)
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(StoreKind::Postgres)
    } else {
        bail!(
            "unknown store {:?}: use `memory`, `sqlite://PATH` or `postgres://USER@HOST:PORT/DB`",
            config::mask_url_credentials(url)
        )
    }
}

/// A built-in agent by name (`--agent`, and `[[agents]]`' built-in runtimes).
pub(crate) fn agent(name: &str) -> anyhow::Result<(Arc<dyn AgentExecutor>, AgentCard)> {
    Ok(match name {
        "demo" => (
            Arc::new(demo::DemoAgent {
                chunk_delay: std::time::Duration::from_millis(40),
            }),
            demo::demo_card(),
        ),
        "echo-message" => (Arc::new(demo::EchoMessage), demo::echo_card()),
        "echo-task" => (Arc::new(demo::EchoTask), demo::echo_card()),
        "relay" => (Arc::new(demo::Relay), demo::relay_card()),
        other => bail!("unknown agent {other:?}: use demo, echo-message, echo-task or relay"),
    })
}

/// The extended card: the file's JSON object over the public `card`, its
/// `skills` added to the public ones, every other member replacing the
/// public one.
pub fn extended_card(card: &AgentCard, path: &std::path::Path) -> anyhow::Result<AgentCard> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the extended card {}", path.display()))?;
    let overlay: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let serde_json::Value::Object(overlay) = overlay else {
        bail!(
            "{}: the extended card must be a JSON object",
            path.display()
        );
    };
    let mut merged = serde_json::to_value(card)?;
    for (key, value) in overlay {
        match (key.as_str(), &value, merged.get_mut(&key)) {
            ("skills", serde_json::Value::Array(extra), Some(serde_json::Value::Array(skills))) => {
                skills.extend(extra.iter().cloned());
            }
            _ => {
                merged[&key] = value;
            }
        }
    }
    serde_json::from_value(merged)
        .with_context(|| format!("{}: not a valid agent card", path.display()))
}

/// Runs the server until Ctrl-C or SIGTERM.
pub async fn run(cfg: Config) -> anyhow::Result<()> {
    let (executor, card) = agent(&cfg.agent)?;
    let stores = open_stores(&cfg).await?;
    let listener = tokio::net::TcpListener::bind(&cfg.listen)
        .await
        .with_context(|| format!("binding {}", cfg.listen))?;
    let addr = listener.local_addr()?;
    // The server writes the schemes on the card it serves.
    let authenticator = crate::auth_args::caller_schemes(&cfg.auth, addr.ip())?;
    let extended_card = match &cfg.extended_card {
        Some(path) => Some(extended_card(&card, path)?),
        None => None,
    };
    let tls = server_tls(&cfg)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    if tls.is_none() && !addr.ip().is_loopback() {
        tracing::warn!(
            %addr,
            "serving plaintext HTTP on a non-loopback address: credentials and task data \
             cross the network unencrypted (set tls_cert and tls_key, or terminate TLS in front)"
        );
    }
    let public_url = cfg
        .public_url
        .clone()
        .unwrap_or_else(|| format!("{scheme}://{addr}"));
    let push_shutdown = tokio_util::sync::CancellationToken::new();
    let lease = std::time::Duration::from_millis(cfg.replica_lease_ms.max(1));
    let handler_config = switchboard_core::HandlerConfig {
        // Look for orphans a few times per lease, at most every 2 s.
        orphan_sweep_interval: (lease / 4).min(std::time::Duration::from_secs(2)),
        retention: switchboard_core::Retention {
            max_age: cfg
                .retention_max_age_secs
                .map(std::time::Duration::from_secs),
            max_finished: cfg.retention_max_finished,
        },
        retention_interval: std::time::Duration::from_secs(cfg.retention_interval_secs.max(1)),
        limits: cfg.limits.settings().engine_limits(),
        quotas: cfg.limits.settings().quotas(),
        ..Default::default()
    };
    let mut builder = RequestHandler::builder(executor, card)
        .store(stores.tasks.clone())
        .config(handler_config.clone());
    if let Some(cluster) = stores.cluster.clone() {
        builder = builder.cluster(cluster);
    }
    if let Some(extended) = extended_card {
        builder = builder.extended_card(extended);
    }
    let push = push_options(&cfg, &stores, &push_shutdown).await?;
    let handler = builder.build();
    let mut server = A2aServer::new(handler.clone())
        .public_url(&public_url)
        .max_body_bytes(cfg.max_body_bytes)
        .hybrid_card(cfg.hybrid())
        .connection_limits(cfg.limits.settings().connection_limits())
        .request_rate(cfg.limits.settings().request_rate());
    let metrics_shutdown = tokio_util::sync::CancellationToken::new();
    let metrics_push = stores.push.clone().filter(|_| cfg.push_enabled());
    let metrics_addr = match &cfg.metrics_listen {
        None => {
            server = server.ops();
            None
        }
        Some(listen) => {
            let listener = tokio::net::TcpListener::bind(listen)
                .await
                .with_context(|| format!("binding metrics_listen {listen}"))?;
            let addr = listener.local_addr()?;
            server = server.ops_without_metrics();
            let shutdown = metrics_shutdown.clone();
            tokio::spawn(async move {
                if let Err(e) =
                    switchboard_server::ops::serve_metrics(listener, metrics_push, shutdown).await
                {
                    tracing::error!(error = %e, "the metrics listener failed");
                }
            });
            Some(addr)
        }
    };
    for (binding, url) in &cfg.interface_url {
        server = server.interface_url(binding, url);
    }
    let mount_env = MountEnv {
        cfg: cfg.clone(),
        tasks: stores.tasks.clone(),
        cluster: stores.cluster.clone(),
        handler_config: handler_config.clone(),
        listen: addr.ip(),
    };
    let mut serving = Vec::new();
    for spec in &cfg.agents {
        let agent = mounted_agent(&mount_env, spec).await?;
        server = server
            .mount(&spec.path, agent.clone())
            .with_context(|| format!("mounting agent {:?} at {}", spec.name, spec.path))?;
        serving.push((spec.clone(), agent));
    }
    if let Some(auth) = authenticator {
        server = server.authenticator(auth);
    }
    if let Some(tls) = tls {
        server = server.tls(tls);
    }
    if cfg.agui_endpoint {
        // Behind the server's gate, as the A2A bindings are; CopilotKit's
        // runtime routes beside it, the agent under its card's name.
        use switchboard_bridge::AguiEndpoint as _;
        let card = handler.card();
        let copilotkit = switchboard_bridge::CopilotKitConfig {
            base_path: switchboard_bridge::copilotkit::DEFAULT_BASE_PATH.into(),
            agent_id: card.name.clone(),
            description: card.description.clone(),
            endpoint: agui_config(&cfg),
        };
        server = server
            .agui_endpoint(agui_config(&cfg))
            .copilotkit_endpoint(copilotkit);
    }
    #[cfg(feature = "console")]
    if !cfg.no_console {
        // The console's calls go back into this server with the caller's
        // own credentials, through its gate: over loopback when it listens
        // there or on every address, else to the address it listens on.
        use switchboard_console::A2aServerConsole as _;
        server = server.console(self_url(scheme, addr, &public_url));
    }
    if let Some(options) = push {
        server = server
            .push(options)
            .context("enabling push notifications")?
            .sign_card(cfg.sign_card);
    } else if cfg.sign_card {
        bail!(
            "sign_card signs the card with the push signing keys: turn push on, or sign_card off"
        );
    }
    if let Some(file) = cfg.config.clone() {
        // Last: agents mounted at a reload get the server's settings as
        // they are now.
        let reloader = server.mount_reloader();
        reload_on_sighup(file, mount_env, reloader, serving);
    }
    // Never the store URL's password, in the log or on stdout.
    let store = config::mask_url_credentials(&cfg.store);
    tracing::info!(%addr, %store, agent = %cfg.agent, "serving");
    // One line on stdout that scripts can wait for.
    println!(
        "switchboard listening on {scheme}://{addr} (card: {public_url}/.well-known/agent-card.json, store: {store})"
    );
    if let Some(metrics) = metrics_addr {
        println!("switchboard metrics on http://{metrics}/metrics");
    }
    // Stops the push delivery worker too: notifications being sent finish,
    // the rest stay queued for next time.
    server
        .serve(listener, switchboard_server::shutdown_signal())
        .await?;
    // The other replicas take back this one's share of the commit writers.
    if let Some(cluster) = &stores.cluster {
        cluster.leave().await;
    }
    // The key refresh and key file watch, and the metrics listener.
    push_shutdown.cancel();
    metrics_shutdown.cancel();
    tracing::info!("stopped");
    Ok(())
}

/// Where the server reaches itself: TLS certificates name the public host,
/// so over TLS that is the public URL; plaintext goes to the listening
/// address (loopback for a wildcard one).
#[cfg(feature = "console")]
fn self_url(scheme: &str, addr: std::net::SocketAddr, public_url: &str) -> String {
    if scheme == "https" {
        return public_url.to_owned();
    }
    let ip = match addr.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => std::net::Ipv6Addr::LOCALHOST.into(),
        ip => ip,
    };
    format!("http://{}", std::net::SocketAddr::new(ip, addr.port()))
}

/// An `[[agents]]` agent as a server of its own, on the same store and
/// engine settings as the root agent, its tasks in a namespace of its own
/// (its path: one agent never finds another's tasks). Retention and crash
/// recovery are the root handler's (one store, purged and recovered once);
/// push is the root server's, shared by [`A2aServer::mount`]. Each agent
/// serves AG-UI at `<path>/agui` when `agui_endpoint` is on.
async fn mounted_agent(
    env: &MountEnv,
    spec: &crate::agents::AgentSpec,
) -> anyhow::Result<A2aServer> {
    let MountEnv {
        cfg,
        tasks,
        cluster,
        handler_config,
        listen,
    } = env;
    let (executor, card) = spec.build().await?;
    let limits = spec.limits.as_ref().map(|l| l.over(&cfg.limits));
    let mut builder = RequestHandler::builder(executor, card)
        .store(tasks.clone())
        .namespace(&spec.path)
        .recover_abandoned(false)
        .config(switchboard_core::HandlerConfig {
            retention: switchboard_core::Retention::default(),
            quotas: limits
                .as_ref()
                .map_or_else(|| handler_config.quotas.clone(), |l| l.settings().quotas()),
            ..handler_config.clone()
        });
    if let Some(cluster) = cluster.clone() {
        builder = builder.cluster(cluster);
    }
    let mut server = A2aServer::new(builder.build())
        .max_body_bytes(cfg.max_body_bytes)
        .hybrid_card(cfg.hybrid());
    // Without its own, an agent keeps the server's gate and rate
    // (`A2aServer::mount`).
    if let Some(limits) = &limits {
        server = server.request_rate(limits.settings().request_rate());
    }
    if let Some(auth) = &spec.auth {
        let schemes = switchboard_auth::settings::caller_schemes(auth, *listen)
            .with_context(|| format!("the auth of agent {:?}", spec.name))?
            .unwrap_or_else(|| switchboard_auth::Schemes::new().allow_anonymous(true));
        server = server.authenticator(schemes);
    }
    if cfg.agui_endpoint {
        // `<path>/agui`, behind the agent's gate as its bindings are.
        use switchboard_bridge::AguiEndpoint as _;
        server = server.agui_endpoint(agui_config(cfg));
    }
    Ok(server)
}

/// What every `[[agents]]` agent is built with, at start and at a reload.
#[derive(Clone)]
struct MountEnv {
    cfg: Config,
    tasks: Arc<dyn TaskStore>,
    cluster: Option<Arc<dyn Cluster>>,
    handler_config: switchboard_core::HandlerConfig,
    listen: std::net::IpAddr,
}

/// On each SIGHUP, the config file's `[[agents]]` again
/// ([`crate::agents::reload`]); a file that does not parse, or an agent that
/// cannot be built, is refused with a log line and the agents serving keep
/// serving.
fn reload_on_sighup(
    file: PathBuf,
    env: MountEnv,
    reloader: switchboard_server::mount::MountReloader,
    mut serving: Vec<(crate::agents::AgentSpec, A2aServer)>,
) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = match signal(SignalKind::hangup()) {
        Ok(hangups) => hangups,
        Err(e) => {
            tracing::warn!(error = %e, "SIGHUP cannot be handled: the agents are not reloaded");
            return;
        }
    };
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            let build = |spec: crate::agents::AgentSpec| {
                let env = env.clone();
                async move {
                    let server = mounted_agent(&env, &spec).await?;
                    Ok::<_, anyhow::Error>((spec, server))
                }
            };
            match crate::agents::reload(&file, &serving, build).await {
                Ok(next) => {
                    let mounts = next
                        .iter()
                        .map(|(spec, server)| (spec.path.clone(), server.clone()))
                        .collect();
                    match reloader.replace(mounts) {
                        Ok(()) => {
                            tracing::info!(file = %file.display(), agents = ?reloader.paths(), "agents reloaded");
                            serving = next;
                        }
                        Err(e) => {
                            tracing::error!(file = %file.display(), error = %e, "agents not reloaded; the old ones keep serving");
                        }
                    }
                }
                Err(e) => {
                    tracing::error!(file = %file.display(), error = format!("{e:#}"), "agents not reloaded; the old ones keep serving");
                }
            }
        }
    });
}

/// `serve`'s `/agui` settings (and its CopilotKit routes'): the bridge's
/// AG-UI endpoint over the hosted agent, mounted behind the server's gate
/// ([`switchboard_bridge::AguiEndpoint::agui_endpoint`]).
fn agui_config(cfg: &Config) -> switchboard_bridge::EndpointConfig {
    use switchboard_bridge::{BridgeConfig, EndpointConfig, RunConfig};
    EndpointConfig {
        body_limit: cfg.max_body_bytes,
        run: RunConfig {
            bridge: BridgeConfig {
                forward_system_messages: cfg.agui_forward_system_messages,
                ..BridgeConfig::default()
            },
            ..RunConfig::default()
        },
        ..EndpointConfig::default()
    }
}

/// The listener's TLS, when `tls_cert` and `tls_key` are set (both or neither).
fn server_tls(cfg: &Config) -> anyhow::Result<Option<switchboard_server::ServerTls>> {
    match (&cfg.tls_cert, &cfg.tls_key) {
        (None, None) => Ok(None),
        (Some(cert), Some(key)) => {
            let tls = switchboard_server::ServerTls::from_pem_files(cert, key)
                .context("loading the TLS certificate")?
                .reload_interval(std::time::Duration::from_secs(cfg.tls_reload_secs.max(1)));
            Ok(Some(tls))
        }
        (Some(_), None) => bail!("tls_cert is set but tls_key is not: TLS needs both"),
        (None, Some(_)) => bail!("tls_key is set but tls_cert is not: TLS needs both"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn the_extended_card_file_adds_skills_and_replaces_members() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("extended.json");
        std::fs::write(
            &path,
            r#"{"description": "for customers", "skills": [{"id": "secret", "name": "Secret", "description": "s", "tags": []}]}"#,
        )
        .unwrap();
        let public = demo::echo_card();
        let card = extended_card(&public, &path).unwrap();
        assert_eq!(card.description, "for customers");
        assert_eq!(card.name, public.name);
        assert_eq!(card.skills.len(), public.skills.len() + 1);
        assert_eq!(card.skills.last().map(|k| k.id.as_str()), Some("secret"));
        std::fs::write(&path, "[1]").unwrap();
        let err = extended_card(&public, &path).unwrap_err().to_string();
        assert!(err.contains("must be a JSON object"), "{err}");
    }

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    fn with_file(path: &std::path::Path, args: &[&str]) -> Vec<OsString> {
        let mut v = argv(&["--config", path.to_str().unwrap()]);
        v.extend(argv(args));
        v
    }

    /// Writes `contents` as the config file `name` in `dir`; its path.
    fn config_file(dir: &tempfile::TempDir, name: &str, contents: &str) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// The error, with its causes, of resolving the config file `path`.
    fn file_error(path: &std::path::Path) -> String {
        format!("{:#}", Config::resolve(&with_file(path, &[])).unwrap_err())
    }

    #[test]
    fn defaults_parse() {
        let cfg = Config::default();
        assert_eq!(
            cfg.store, "sqlite://switchboard.db",
            "SQLite is the default store"
        );
        assert_eq!(
            cfg.max_body_bytes,
            switchboard_server::DEFAULT_MAX_BODY_BYTES
        );
        assert!(cfg.push_enabled() && cfg.hybrid());
    }

    #[test]
    fn file_then_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = config_file(
            &dir,
            "sb.toml",
            "listen = \"127.0.0.1:9999\"\nstore = \"memory\"\nagent = \"echo-task\"\n",
        );
        let cfg = Config::resolve(&with_file(&path, &[])).unwrap();
        assert_eq!(cfg.listen, "127.0.0.1:9999");
        assert_eq!(cfg.store, "memory");
        assert_eq!(cfg.agent, "echo-task");
        assert_eq!(
            cfg.max_body_bytes,
            switchboard_server::DEFAULT_MAX_BODY_BYTES,
            "unset keys keep defaults"
        );
        assert_eq!(cfg.retention_interval_secs, 60, "the default");
        let cfg = Config::resolve(&with_file(
            &path,
            &["--listen", "127.0.0.1:0", "--retention-interval-secs", "5"],
        ))
        .unwrap();
        assert_eq!(cfg.listen, "127.0.0.1:0", "flags win over the file");
        assert_eq!(cfg.retention_interval_secs, 5);
    }

    #[test]
    fn unknown_keys_bad_values_and_stores_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = config_file(&dir, "bad.toml", "lisen = \"x\"\n");
        let err = file_error(&path);
        assert!(
            err.contains("unknown key `lisen`") && err.contains("listen"),
            "{err}"
        );
        std::fs::write(&path, "max_body_bytes = \"lots\"\n").unwrap();
        let err = file_error(&path);
        assert!(
            err.contains("bad.toml") && err.contains("--max-body-bytes"),
            "{err}"
        );
        let err = format!(
            "{:#}",
            Config::resolve(&argv(&["--store", "redis://u:hunter2@x"])).unwrap_err()
        );
        assert!(
            err.contains("unknown store") && !err.contains("hunter2"),
            "{err}"
        );
        let cfg = Config {
            store: "redis://x".into(),
            ..Config::default()
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let err = format!("{:#}", rt.block_on(open_stores(&cfg)).err().unwrap());
        assert!(err.contains("unknown store"), "{err}");
    }

    #[test]
    fn card_settings_from_file_and_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = config_file(
            &dir,
            "card.toml",
            "hybrid_card = false\n[interface_urls]\ngrpc = \"grpc.example.com:443\"\n",
        );
        let cfg = Config::resolve(&with_file(&path, &[])).unwrap();
        assert!(!cfg.hybrid());
        assert_eq!(
            cfg.interface_url,
            [("GRPC".to_string(), "grpc.example.com:443".to_string())]
        );
        let cfg = Config::resolve(&with_file(
            &path,
            &[
                "--hybrid-card",
                "--interface-url",
                "jsonrpc=https://proxy.example.com/a2a",
            ],
        ))
        .unwrap();
        assert!(cfg.hybrid(), "the flag wins over the file");
        assert_eq!(cfg.interface_url.len(), 2, "flags add to the file");
        assert_eq!(cfg.interface_url[1].1, "https://proxy.example.com/a2a");
        assert!(!Config::resolve(&argv(&["--strict-card"])).unwrap().hybrid());
        let path2 = config_file(&dir, "strict.toml", "strict_card = true\n");
        let cfg = Config::resolve(&with_file(&path2, &["--hybrid-card"])).unwrap();
        assert!(cfg.hybrid(), "a flag beats the file's conflicting setting");
        for bad in ["GRPC", "SOAP=x", "GRPC= "] {
            assert!(parse_interface_url(bad).is_err(), "{bad}");
        }
        let path = config_file(&dir, "bad.toml", "[interface_urls]\nSOAP = \"x\"\n");
        let err = file_error(&path);
        assert!(err.contains("unknown binding \"SOAP\""), "{err}");
    }

    #[test]
    fn push_settings_from_file_and_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = config_file(
            &dir,
            "push.toml",
            "store = \"sqlite:///var/lib/sb/tasks.db?mode=rwc\"\npush_allow_hosts = [\"127.0.0.1\"]\npush_max_attempts = 3\n",
        );
        let cfg = Config::resolve(&with_file(&path, &["--push-allow-host", "localhost"])).unwrap();
        assert!(cfg.push_enabled(), "push is on by default");
        assert_eq!(
            cfg.push_allow_host,
            ["127.0.0.1", "localhost"],
            "flags add to the file"
        );
        assert_eq!(cfg.push_max_attempts, 3);
        assert_eq!(
            push_key_path(&cfg).unwrap(),
            PathBuf::from("/var/lib/sb/tasks.push-keys.json"),
            "keys live beside the SQLite file by default"
        );
        let memory = Config {
            store: "memory".into(),
            ..Config::default()
        };
        assert_eq!(push_key_path(&memory), None, "memory store: keys in memory");
        assert!(
            !Config::resolve(&with_file(&path, &["--no-push"]))
                .unwrap()
                .push_enabled()
        );
        assert!(
            !Config::resolve(&argv(&["--push=false"]))
                .unwrap()
                .push_enabled()
        );
        std::fs::write(&path, "push = false\n").unwrap();
        assert!(
            !Config::resolve(&with_file(&path, &[]))
                .unwrap()
                .push_enabled()
        );
    }
}
