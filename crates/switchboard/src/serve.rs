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
//! [`run`] converts the settings into a
//! [`switchboard_sdk::host::HostSettings`] and serves with
//! [`switchboard_sdk::host::Host`], which does the rest (stores, TLS, auth,
//! push, ops, `/agui`, the console, `[[agents]]` reloaded on SIGHUP,
//! draining on SIGTERM); this module adds the start-up line on stdout.
//! Dead push letters are listed and requeued with `switchboard push
//! dead-letters` / `switchboard push retry`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use switchboard_core::PushStore;
use switchboard_runtimes::builtin;
use switchboard_sdk::host::{self, AgentsSource, Host, HostSettings, PushSettings};

use crate::config;

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
    /// relay (forwards `URL TEXT` to another agent; trusted callers only);
    /// or none, with `[[agents]]`: the root then serves a directory card
    /// listing them and refuses messages.
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
        switchboard_sdk::store::kind(&self.store)?;
        root_agent(self)?;
        Ok(())
    }

    /// Whether push notifications are on.
    pub fn push_enabled(&self) -> bool {
        self.push && !self.no_push
    }

    /// Whether the web console is served.
    pub fn console(&self) -> bool {
        #[cfg(feature = "console")]
        return !self.no_console;
        #[cfg(not(feature = "console"))]
        false
    }

    /// Whether the card is the hybrid 1.0 + 0.3 card.
    pub fn hybrid(&self) -> bool {
        self.hybrid_card && !self.strict_card
    }
}

impl ServeArgs {
    /// The settings as the SDK's host takes them (values below a
    /// setting's least are raised to it).
    pub fn host_settings(&self) -> HostSettings {
        let secs = |s: u64| Duration::from_secs(s.max(1));
        let ms = |ms: u64| Duration::from_millis(ms.max(1));
        let push = self.push_enabled().then(|| PushSettings {
            allow_hosts: self.push_allow_host.clone(),
            key_file: self.push_key_file.clone(),
            retry: switchboard_server::push::RetryPolicy {
                base: ms(self.push_retry_base_ms),
                max: ms(self.push_retry_max_ms),
                max_attempts: self.push_max_attempts.max(1),
            },
            lease: secs(self.push_lease_secs),
        });
        let reload_agents = self.config.clone().map(|file| {
            let label = file.display().to_string();
            AgentsSource::new(label, move || {
                crate::agents::read(&file).map_err(anyhow::Error::into_boxed_dyn_error)
            })
        });
        HostSettings {
            listen: self.listen.clone(),
            store: self.store.clone(),
            public_url: self.public_url.clone(),
            max_body_bytes: self.max_body_bytes,
            memory_max_terminal_tasks: self.memory_max_terminal_tasks,
            memory_max_bytes: self.memory_max_bytes,
            replica_lease: ms(self.replica_lease_ms),
            retention: switchboard_core::Retention {
                max_age: self.retention_max_age_secs.map(Duration::from_secs),
                max_finished: self.retention_max_finished,
            },
            retention_interval: secs(self.retention_interval_secs),
            push,
            hybrid_card: self.hybrid(),
            directory_card: self.agent == NO_ROOT_AGENT,
            sign_card: self.sign_card,
            extended_card: self.extended_card.clone(),
            interface_urls: self.interface_url.clone(),
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
            tls_reload: secs(self.tls_reload_secs),
            agui_endpoint: self.agui_endpoint,
            agui_forward_system_messages: self.agui_forward_system_messages,
            console: self.console(),
            auth: self.auth.settings(),
            metrics_listen: self.metrics_listen.clone(),
            limits: self.limits.settings(),
            agents: self.agents.clone(),
            reload_agents,
        }
    }
}

/// `--agent` naming no agent: the root lists the `[[agents]]` instead.
const NO_ROOT_AGENT: &str = "none";

/// The root agent: `--agent`, or with `none` the directory of the `[[agents]]`.
fn root_agent(
    cfg: &Config,
) -> anyhow::Result<(
    Arc<dyn switchboard_core::AgentExecutor>,
    switchboard_protocol::AgentCard,
)> {
    if cfg.agent != NO_ROOT_AGENT {
        return Ok(builtin::by_name(&cfg.agent)?);
    }
    if cfg.agents.is_empty() {
        anyhow::bail!(
            "agent = \"none\" serves only the [[agents]] of the config file, and it has none"
        );
    }
    Ok((Arc::new(builtin::Directory), builtin::directory_card()))
}

/// Runs the server until Ctrl-C or SIGTERM.
pub async fn run(cfg: Config) -> anyhow::Result<()> {
    let (executor, card) = root_agent(&cfg)?;
    let host = Host::bind(executor, card, cfg.host_settings()).await?;
    // Never the store URL's password, in the log or on stdout.
    let store = config::mask_url_credentials(&cfg.store);
    let addr = host.local_addr();
    tracing::info!(%addr, %store, agent = %cfg.agent, "serving");
    // One line on stdout that scripts can wait for.
    println!(
        "switchboard listening on {} (card: {}/.well-known/agent-card.json, store: {store})",
        host.url(),
        host.public_url()
    );
    if let Some(metrics) = host.metrics_addr() {
        println!("switchboard metrics on http://{metrics}/metrics");
    }
    host.serve(switchboard_server::shutdown_signal()).await?;
    Ok(())
}

/// The stores `serve` runs on, as the `push` commands use them.
#[derive(Debug)]
pub struct Stores {
    /// The task store as a [`PushStore`] (configs and the outbox).
    pub push: Option<Arc<dyn PushStore>>,
}

/// Opens the stores the configuration names ([`host::open_store`]).
pub async fn open_stores(cfg: &Config) -> anyhow::Result<Stores> {
    let opened = host::open_store(&cfg.host_settings()).await?;
    Ok(Stores {
        push: opened.push().cloned(),
    })
}

/// Where the push signing keys live ([`host::push_key_path`]).
pub fn push_key_path(cfg: &Config) -> Option<PathBuf> {
    host::push_key_path(&cfg.store, cfg.push_key_file.as_deref())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::ffi::OsString;

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
