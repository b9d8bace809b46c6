//! `switchboard serve`: configuration and start-up.
//!
//! Settings come from, in increasing priority: built-in defaults, a TOML
//! file (`--config`), environment variables, and flags. The file uses the
//! same names as the flags:
//!
//! ```toml
//! listen = "127.0.0.1:8080"          # address:port to bind
//! store = "sqlite://switchboard.db"  # or "memory", or "postgres://user@host:5432/db"
//! public_url = "http://127.0.0.1:8080"  # what clients see in the card
//! agent = "demo"                     # demo | echo-message | echo-task
//! max_body_bytes = 10485760
//! memory_max_terminal_tasks = 100000  # memory store: finished tasks kept
//! replica_lease_ms = 10000           # PostgreSQL: how soon a dead replica's tasks are failed
//!
//! # Retention of finished tasks (default: keep all), checked every minute
//! retention_max_age_secs = 604800    # delete finished tasks a week after they finished
//! retention_max_finished = 1000000   # and keep at most this many
//!
//! # Push notifications (on by default, with every store)
//! push = true
//! push_allow_hosts = ["127.0.0.1"]   # hosts exempt from the SSRF guard (testing)
//! push_key_file = "push-keys.json"   # default: PostgreSQL: one set shared by all replicas,
//!                                    # in the database; SQLite: beside the file; memory: in memory
//! push_retry_base_ms = 1000          # first retry delay, doubling each time
//! push_retry_max_ms = 600000         # longest delay between attempts
//! push_max_attempts = 15             # attempts before a notification is dead-lettered
//! push_lease_secs = 60               # after a crash, how soon an unsettled attempt is retried
//!
//! # The agent card
//! hybrid_card = true                 # add the A2A 0.3 fields so 0.3 clients can read it;
//!                                    # false (--strict-card): a strict 1.0 card
//! [interface_urls]                   # a binding reached elsewhere (proxy, other port)
//! GRPC = "grpc.example.com:443"      # keys: JSONRPC, HTTP+JSON, GRPC
//! ```
//!
//! With `store = "postgres://…"` several replicas may share one database:
//! each runs a delivery worker, they claim notifications with
//! `FOR UPDATE SKIP LOCKED` (each goes out once per attempt, per-webhook
//! order kept), a commit on any replica wakes them all (`LISTEN`/`NOTIFY`),
//! and they sign with one key set stored in the database (a rotation on one
//! replica reaches the others within [`crate::shared_keys::REFRESH_INTERVAL`]),
//! unless `push_key_file` gives each its own file. Dead letters are listed
//! and requeued with `switchboard push dead-letters` / `switchboard push retry`.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use serde::Deserialize;
use switchboard_core::{
    AgentExecutor, Cluster, InMemoryStore, PushStore, RequestHandler, TaskStore,
};
use switchboard_protocol::AgentCard;
use switchboard_server::A2aServer;
use switchboard_server::push::PushOptions;

use crate::demo;

/// Flags of `switchboard serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// TOML config file (keys as in the flags, with underscores).
    #[arg(long, env = "SWITCHBOARD_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address and port to listen on, e.g. 127.0.0.1:8080 (port 0 picks a free one).
    #[arg(long, env = "SWITCHBOARD_LISTEN")]
    pub listen: Option<String>,
    /// Where tasks live: `memory`, `sqlite://PATH` (created if missing) or `postgres://…`.
    #[arg(long, env = "SWITCHBOARD_STORE")]
    pub store: Option<String>,
    /// The URL clients use to reach this server (default: `http://<listen>`).
    #[arg(long, env = "SWITCHBOARD_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Which built-in agent to serve: demo, echo-message or echo-task.
    #[arg(long, env = "SWITCHBOARD_AGENT")]
    pub agent: Option<String>,
    /// Largest request body accepted, in bytes.
    #[arg(long)]
    pub max_body_bytes: Option<usize>,
    /// With `--store memory`: how many finished tasks to keep (oldest dropped first).
    #[arg(long)]
    pub memory_max_terminal_tasks: Option<usize>,
    /// With `--store postgres://…` (several replicas): the lease a replica
    /// holds on the tasks it runs. When a replica dies, a survivor fails its
    /// unfinished tasks within about this long.
    #[arg(long)]
    pub replica_lease_ms: Option<u64>,
    /// Delete finished tasks (and their event logs) this many seconds after
    /// they finished.
    #[arg(long)]
    pub retention_max_age_secs: Option<u64>,
    /// Keep at most this many finished tasks, deleting the oldest.
    #[arg(long)]
    pub retention_max_finished: Option<u64>,
    /// How often retention runs, in seconds (default 60).
    #[arg(long)]
    pub retention_interval_secs: Option<u64>,
    /// Exempt this webhook host (exact name or IP) from the SSRF guard, e.g.
    /// 127.0.0.1 for local testing. Repeatable; adds to `push_allow_hosts`.
    #[arg(long = "push-allow-host", value_name = "HOST")]
    pub push_allow_host: Vec<String>,
    /// File holding the push signing keys (created if missing).
    #[arg(long)]
    pub push_key_file: Option<PathBuf>,
    /// Disable push notifications (the push operations then answer
    /// PushNotificationNotSupported).
    #[arg(long)]
    pub no_push: bool,
    /// Serve the hybrid card (the default; kept for scripts that pass it).
    #[arg(long, conflicts_with = "strict_card")]
    pub hybrid_card: bool,
    /// Serve a strict A2A 1.0 card, without the 0.3 top-level fields (`url`,
    /// `preferredTransport`, `protocolVersion`, `additionalInterfaces`) that
    /// 0.3 clients need to discover the 0.3 interfaces. Only for when a
    /// strict 1.0 validator must accept the card.
    #[arg(long)]
    pub strict_card: bool,
    /// Advertise URL for a binding in the card instead of the one derived
    /// from the public URL, e.g. `GRPC=grpc.example.com:443` (bindings:
    /// JSONRPC, HTTP+JSON, GRPC). Repeatable; adds to `interface_urls`.
    #[arg(long = "interface-url", value_name = "BINDING=URL", value_parser = parse_interface_url)]
    pub interface_url: Vec<(String, String)>,
    /// Limits on what one client may hold (`limits_args.rs`; boxed: a
    /// dozen optional numbers would make every `Command` value large).
    #[command(flatten)]
    pub limits: Box<crate::limits_args::LimitsArgs>,
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

/// The resolved configuration.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Bind address.
    pub listen: String,
    /// Store URL.
    pub store: String,
    /// Public URL for the card.
    pub public_url: Option<String>,
    /// Built-in agent name.
    pub agent: String,
    /// Request body limit.
    pub max_body_bytes: usize,
    /// Memory store bound on finished tasks.
    pub memory_max_terminal_tasks: usize,
    /// PostgreSQL replicas: task lease length.
    pub replica_lease_ms: u64,
    /// Retention: age limit of finished tasks.
    pub retention_max_age_secs: Option<u64>,
    /// Retention: count limit of finished tasks.
    pub retention_max_finished: Option<u64>,
    /// How often retention runs.
    pub retention_interval_secs: u64,
    /// Push notifications on (with a store that supports them).
    pub push: bool,
    /// Webhook hosts exempt from the SSRF guard.
    pub push_allow_hosts: Vec<String>,
    /// Push signing key file (default: beside the SQLite file).
    pub push_key_file: Option<PathBuf>,
    /// First retry delay (ms).
    pub push_retry_base_ms: u64,
    /// Longest retry delay (ms).
    pub push_retry_max_ms: u64,
    /// Attempts before dead-lettering.
    pub push_max_attempts: u32,
    /// Lease of a claimed notification (s).
    pub push_lease_secs: u64,
    /// Serve the hybrid 1.0 + 0.3 card (default); `false`: strict 1.0.
    pub hybrid_card: bool,
    /// Per-binding URLs for the card, by binding name.
    pub interface_urls: std::collections::BTreeMap<String, String>,
    /// Limits (top-level keys, read by `LimitsArgs::split_config`).
    #[serde(skip)]
    pub limits: crate::limits_args::LimitsArgs,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:8080".into(),
            store: "sqlite://switchboard.db".into(),
            public_url: None,
            agent: "demo".into(),
            max_body_bytes: switchboard_server::DEFAULT_MAX_BODY_BYTES,
            memory_max_terminal_tasks: 100_000,
            replica_lease_ms: 10_000,
            retention_max_age_secs: None,
            retention_max_finished: None,
            retention_interval_secs: 60,
            push: true,
            push_allow_hosts: Vec::new(),
            push_key_file: None,
            push_retry_base_ms: 1_000,
            push_retry_max_ms: 600_000,
            push_max_attempts: 15,
            push_lease_secs: 60,
            hybrid_card: true,
            interface_urls: std::collections::BTreeMap::new(),
            limits: Default::default(),
        }
    }
}

impl Config {
    /// Defaults ← file ← flags/env.
    pub fn resolve(args: &ServeArgs) -> anyhow::Result<Config> {
        let mut cfg = match &args.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading config file {}", path.display()))?;
                let (cfg, limits) = crate::limits_args::LimitsArgs::split_config(&text)
                    .with_context(|| format!("parsing config file {}", path.display()))?;
                Config { limits, ..cfg }
            }
            None => Config::default(),
        };
        if let Some(v) = &args.listen {
            cfg.listen = v.clone();
        }
        if let Some(v) = &args.store {
            cfg.store = v.clone();
        }
        if let Some(v) = &args.public_url {
            cfg.public_url = Some(v.clone());
        }
        if let Some(v) = &args.agent {
            cfg.agent = v.clone();
        }
        if let Some(v) = args.max_body_bytes {
            cfg.max_body_bytes = v;
        }
        if let Some(v) = args.memory_max_terminal_tasks {
            cfg.memory_max_terminal_tasks = v;
        }
        if let Some(v) = args.replica_lease_ms {
            cfg.replica_lease_ms = v;
        }
        if let Some(v) = args.retention_max_age_secs {
            cfg.retention_max_age_secs = Some(v);
        }
        if let Some(v) = args.retention_max_finished {
            cfg.retention_max_finished = Some(v);
        }
        if let Some(v) = args.retention_interval_secs {
            cfg.retention_interval_secs = v;
        }
        cfg.push_allow_hosts
            .extend(args.push_allow_host.iter().cloned());
        if let Some(v) = &args.push_key_file {
            cfg.push_key_file = Some(v.clone());
        }
        if args.no_push {
            cfg.push = false;
        }
        if args.hybrid_card {
            cfg.hybrid_card = true;
        }
        if args.strict_card {
            cfg.hybrid_card = false;
        }
        // The file's bindings are checked (and their names normalized) like the flag's.
        let from_file = std::mem::take(&mut cfg.interface_urls);
        for (binding, url) in from_file {
            let (binding, url) = parse_interface_url(&format!("{binding}={url}"))
                .map_err(|e| anyhow::anyhow!("interface_urls: {e}"))?;
            cfg.interface_urls.insert(binding, url);
        }
        for (binding, url) in &args.interface_url {
            cfg.interface_urls.insert(binding.clone(), url.clone());
        }
        cfg.limits = (*args.limits).clone().or(std::mem::take(&mut cfg.limits));
        Ok(cfg)
    }
}

/// Opens the store the configuration names.
pub async fn open_store(cfg: &Config) -> anyhow::Result<Arc<dyn TaskStore>> {
    let url = cfg.store.as_str();
    if url == "memory" || url == "memory://" {
        return Ok(Arc::new(InMemoryStore::with_max_terminal_tasks(
            cfg.memory_max_terminal_tasks,
        )));
    }
    if url.starts_with("sqlite:") {
        return open_sqlite(url).await;
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let store = switchboard_store_postgres::PgStore::open(url)
            .await
            .with_context(|| "opening the PostgreSQL store".to_string())?;
        return Ok(Arc::new(store));
    }
    bail!("unknown store {url:?}: use `memory`, `sqlite://PATH` or `postgres://USER@HOST:PORT/DB`")
}

/// The stores `serve` runs on.
#[derive(Debug)]
pub struct Stores {
    /// Tasks and their event logs.
    pub tasks: Arc<dyn TaskStore>,
    /// The same object as a [`PushStore`] (every store URL `serve` accepts
    /// keeps push configs and the outbox beside the tasks).
    pub push: Option<Arc<dyn PushStore>>,
    /// The PostgreSQL store, when that is the store: it also holds the push
    /// signing keys the replicas share.
    pub postgres: Option<switchboard_store_postgres::PgStore>,
    /// Membership in a replica set, when the store is shared (PostgreSQL).
    pub cluster: Option<Arc<dyn Cluster>>,
    /// Tasks a previous process left submitted or working (SQLite): their
    /// runs died with it, so they are failed at start-up.
    pub abandoned: Vec<(String, String)>,
}

/// Opens the stores the configuration names, with their push side. A
/// PostgreSQL store is always opened as one replica of a set (see
/// `switchboard_core::cluster`): any number of `serve` processes may share
/// its database.
pub async fn open_stores(cfg: &Config) -> anyhow::Result<Stores> {
    let url = cfg.store.as_str();
    if url == "memory" || url == "memory://" {
        let store = Arc::new(InMemoryStore::with_max_terminal_tasks(
            cfg.memory_max_terminal_tasks,
        ));
        return Ok(Stores {
            tasks: store.clone(),
            push: Some(store),
            postgres: None,
            cluster: None,
            abandoned: Vec::new(),
        });
    }
    if url.starts_with("sqlite:") {
        let store = Arc::new(
            switchboard_store_sqlite::SqliteStore::open(url)
                .await
                .with_context(|| format!("opening the SQLite store {url}"))?,
        );
        let abandoned = store
            .unfinished_runs()
            .await
            .context("looking for tasks a previous run left unfinished")?;
        return Ok(Stores {
            tasks: store.clone(),
            push: Some(store),
            postgres: None,
            cluster: None,
            abandoned,
        });
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let lease = std::time::Duration::from_millis(cfg.replica_lease_ms.max(1));
        let (store, cluster) = switchboard_store_postgres::PgStore::open(url)
            .await
            .context("opening the PostgreSQL store")?
            .replica(lease)
            .await
            .context("joining the PostgreSQL replica set")?;
        let shared = Arc::new(store.clone());
        return Ok(Stores {
            tasks: shared.clone(),
            push: Some(shared),
            postgres: Some(store),
            cluster: Some(cluster),
            abandoned: Vec::new(),
        });
    }
    Ok(Stores {
        tasks: open_store(cfg).await?,
        push: None,
        postgres: None,
        cluster: None,
        abandoned: Vec::new(),
    })
}

/// The push signing keys: the configured key file; else, on PostgreSQL, the
/// set the replicas share in the database (kept current by a refresh task
/// until `shutdown`); else a file beside the SQLite database (re-read when
/// it changes, see [`crate::key_watch`]); else (memory) keys in memory.
pub async fn load_push_keys(
    cfg: &Config,
    postgres: Option<&switchboard_store_postgres::PgStore>,
    shutdown: &tokio_util::sync::CancellationToken,
) -> anyhow::Result<Arc<switchboard_push::KeySet>> {
    if cfg.push_key_file.is_none()
        && let Some(pg) = postgres
    {
        let (keys, version) = crate::shared_keys::load(pg).await?;
        crate::shared_keys::spawn_refresh(
            pg.clone(),
            keys.clone(),
            version,
            crate::shared_keys::REFRESH_INTERVAL,
            shutdown.clone(),
        );
        return Ok(keys);
    }
    let keys = Arc::new(match push_key_path(cfg) {
        Some(path) => switchboard_push::KeySet::load_or_create(&path)
            .with_context(|| format!("loading the push signing keys {}", path.display()))?,
        None => switchboard_push::KeySet::generate().context("generating push signing keys")?,
    });
    // `push rotate-key`/`retire-key` change the file; pick that up live.
    crate::key_watch::spawn_file_reload(
        keys.clone(),
        crate::key_watch::KEY_FILE_POLL,
        shutdown.clone(),
    );
    Ok(keys)
}

/// Where the push signing keys live: the configured file, or beside the
/// SQLite database (`NAME.push-keys.json`); `None` (keys in memory) for
/// the memory store.
pub fn push_key_path(cfg: &Config) -> Option<PathBuf> {
    if let Some(p) = &cfg.push_key_file {
        return Some(p.clone());
    }
    let rest = cfg.store.strip_prefix("sqlite:")?;
    let path = rest.trim_start_matches("//");
    let path = path.split('?').next().unwrap_or(path);
    if path.is_empty() || path.contains(":memory:") {
        return None;
    }
    let db = PathBuf::from(path);
    let stem = db.file_stem()?.to_string_lossy().to_string();
    Some(db.with_file_name(format!("{stem}.push-keys.json")))
}

/// How `serve` runs push notifications, when the configuration and the
/// store allow it: the configured allowed hosts, retry policy and lease, and
/// the signing keys of [`load_push_keys`]. `A2aServer::push` wires the rest.
async fn push_options(
    cfg: &Config,
    stores: &Stores,
    shutdown: &tokio_util::sync::CancellationToken,
) -> anyhow::Result<Option<PushOptions>> {
    if !cfg.push || stores.push.is_none() {
        return Ok(None);
    }
    let keys = load_push_keys(cfg, stores.postgres.as_ref(), shutdown).await?;
    let options = cfg.push_allow_hosts.iter().fold(
        PushOptions::new()
            .keys(keys)
            .retry(switchboard_server::push::RetryPolicy {
                base: std::time::Duration::from_millis(cfg.push_retry_base_ms.max(1)),
                max: std::time::Duration::from_millis(cfg.push_retry_max_ms.max(1)),
                max_attempts: cfg.push_max_attempts.max(1),
            })
            .lease(std::time::Duration::from_secs(cfg.push_lease_secs.max(1))),
        |options, host| options.allow_host(host),
    );
    Ok(Some(options))
}

async fn open_sqlite(url: &str) -> anyhow::Result<Arc<dyn TaskStore>> {
    let store = switchboard_store_sqlite::SqliteStore::open(url)
        .await
        .with_context(|| format!("opening the SQLite store {url}"))?;
    Ok(Arc::new(store))
}

fn agent(name: &str) -> anyhow::Result<(Arc<dyn AgentExecutor>, AgentCard)> {
    Ok(match name {
        "demo" => (
            Arc::new(demo::DemoAgent {
                chunk_delay: std::time::Duration::from_millis(40),
            }),
            demo::demo_card(),
        ),
        "echo-message" => (Arc::new(demo::EchoMessage), demo::echo_card()),
        "echo-task" => (Arc::new(demo::EchoTask), demo::echo_card()),
        other => bail!("unknown agent {other:?}: use demo, echo-message or echo-task"),
    })
}

/// Runs the server until Ctrl-C or SIGTERM.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let cfg = Config::resolve(&args)?;
    let (executor, card) = agent(&cfg.agent)?;
    let stores = open_stores(&cfg).await?;
    let listener = tokio::net::TcpListener::bind(&cfg.listen)
        .await
        .with_context(|| format!("binding {}", cfg.listen))?;
    let addr = listener.local_addr()?;
    let public_url = cfg
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    let push_shutdown = tokio_util::sync::CancellationToken::new();
    let lease = std::time::Duration::from_millis(cfg.replica_lease_ms.max(1));
    let mut builder = RequestHandler::builder(executor, card)
        .store(stores.tasks.clone())
        .config(switchboard_core::HandlerConfig {
            // Look for orphans a few times per lease, at most every 2 s.
            orphan_sweep_interval: (lease / 4).min(std::time::Duration::from_secs(2)),
            retention: switchboard_core::Retention {
                max_age: cfg
                    .retention_max_age_secs
                    .map(std::time::Duration::from_secs),
                max_finished: cfg.retention_max_finished,
            },
            retention_interval: std::time::Duration::from_secs(cfg.retention_interval_secs.max(1)),
            limits: cfg.limits.engine_limits(),
            ..Default::default()
        });
    if let Some(cluster) = stores.cluster.clone() {
        builder = builder.cluster(cluster);
    }
    let push = push_options(&cfg, &stores, &push_shutdown).await?;
    let handler = builder.build();
    let mut server = A2aServer::new(handler.clone())
        .public_url(&public_url)
        .max_body_bytes(cfg.max_body_bytes)
        .hybrid_card(cfg.hybrid_card)
        .connection_limits(cfg.limits.connection_limits());
    for (binding, url) in &cfg.interface_urls {
        server = server.interface_url(binding, url);
    }
    if let Some(options) = push {
        server = server
            .push(options)
            .context("enabling push notifications")?;
    }
    if !stores.abandoned.is_empty() {
        let failed = handler
            .fail_abandoned(
                &stores.abandoned,
                "the server stopped while this task was running; its run was lost and it cannot continue",
            )
            .await;
        tracing::warn!(
            failed,
            "failed tasks the previous server process left running"
        );
    }
    tracing::info!(%addr, store = %cfg.store, agent = %cfg.agent, "serving");
    // One line on stdout that scripts can wait for.
    println!(
        "switchboard listening on http://{addr} (card: {public_url}/.well-known/agent-card.json, store: {})",
        cfg.store
    );
    // Stops the push delivery worker too: notifications being sent finish,
    // the rest stay queued for next time.
    server.serve(listener, shutdown_signal()).await?;
    // The key refresh and key file watch.
    push_shutdown.cancel();
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn args(config: Option<PathBuf>) -> ServeArgs {
        ServeArgs {
            config,
            listen: None,
            store: None,
            public_url: None,
            agent: None,
            max_body_bytes: None,
            memory_max_terminal_tasks: None,
            replica_lease_ms: None,
            retention_max_age_secs: None,
            retention_max_finished: None,
            retention_interval_secs: None,
            push_allow_host: Vec::new(),
            push_key_file: None,
            no_push: false,
            hybrid_card: false,
            strict_card: false,
            interface_url: Vec::new(),
            limits: Default::default(),
        }
    }

    #[test]
    fn file_then_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sb.toml");
        std::fs::write(
            &path,
            "listen = \"127.0.0.1:9999\"\nstore = \"memory\"\nagent = \"echo-task\"\n",
        )
        .unwrap();
        let cfg = Config::resolve(&args(Some(path.clone()))).unwrap();
        assert_eq!(cfg.listen, "127.0.0.1:9999");
        assert_eq!(cfg.store, "memory");
        assert_eq!(cfg.agent, "echo-task");
        assert_eq!(
            cfg.max_body_bytes,
            switchboard_server::DEFAULT_MAX_BODY_BYTES,
            "unset keys keep defaults"
        );
        assert_eq!(cfg.retention_interval_secs, 60, "the default");
        let mut a = args(Some(path));
        a.listen = Some("127.0.0.1:0".into());
        a.retention_interval_secs = Some(5);
        let cfg = Config::resolve(&a).unwrap();
        assert_eq!(cfg.listen, "127.0.0.1:0", "flags win over the file");
        assert_eq!(cfg.retention_interval_secs, 5);
    }

    #[test]
    fn unknown_keys_and_stores_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "lisen = \"x\"\n").unwrap();
        let err = format!("{:#}", Config::resolve(&args(Some(path))).unwrap_err());
        assert!(err.contains("unknown field `lisen`"), "{err}");
        let cfg = Config {
            store: "redis://x".into(),
            ..Config::default()
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let err = format!("{:#}", rt.block_on(open_store(&cfg)).err().unwrap());
        assert!(err.contains("unknown store"), "{err}");
        assert_eq!(
            Config::default().store,
            "sqlite://switchboard.db",
            "SQLite is the default store"
        );
    }

    #[test]
    fn card_settings_from_file_and_flags() {
        assert!(
            Config::default().hybrid_card,
            "the hybrid card is the default"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("card.toml");
        std::fs::write(
            &path,
            "hybrid_card = false\n[interface_urls]\ngrpc = \"grpc.example.com:443\"\n",
        )
        .unwrap();
        let cfg = Config::resolve(&args(Some(path.clone()))).unwrap();
        assert!(!cfg.hybrid_card);
        assert_eq!(cfg.interface_urls["GRPC"], "grpc.example.com:443");
        let mut a = args(Some(path));
        a.hybrid_card = true;
        a.interface_url =
            vec![parse_interface_url("jsonrpc=https://proxy.example.com/a2a").unwrap()];
        let cfg = Config::resolve(&a).unwrap();
        assert!(cfg.hybrid_card, "the flag wins over the file");
        assert_eq!(
            cfg.interface_urls["JSONRPC"],
            "https://proxy.example.com/a2a"
        );
        assert_eq!(cfg.interface_urls.len(), 2, "flags add to the file");
        let mut a = args(None);
        a.strict_card = true;
        assert!(!Config::resolve(&a).unwrap().hybrid_card);
        for bad in ["GRPC", "SOAP=x", "GRPC= "] {
            assert!(parse_interface_url(bad).is_err(), "{bad}");
        }
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "[interface_urls]\nSOAP = \"x\"\n").unwrap();
        let err = format!("{:#}", Config::resolve(&args(Some(path))).unwrap_err());
        assert!(err.contains("unknown binding \"SOAP\""), "{err}");
    }

    #[test]
    fn push_settings_from_file_and_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("push.toml");
        std::fs::write(
            &path,
            "store = \"sqlite:///var/lib/sb/tasks.db?mode=rwc\"\npush_allow_hosts = [\"127.0.0.1\"]\npush_max_attempts = 3\n",
        )
        .unwrap();
        let mut a = args(Some(path));
        a.push_allow_host = vec!["localhost".into()];
        let cfg = Config::resolve(&a).unwrap();
        assert!(cfg.push, "push is on by default");
        assert_eq!(
            cfg.push_allow_hosts,
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
        a.no_push = true;
        assert!(!Config::resolve(&a).unwrap().push);
    }
}
