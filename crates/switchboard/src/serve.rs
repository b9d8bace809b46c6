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
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use serde::Deserialize;
use switchboard_core::{AgentExecutor, InMemoryStore, RequestHandler, TaskStore};
use switchboard_protocol::AgentCard;
use switchboard_server::A2aServer;

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
    /// The URL clients use to reach this server (default: http://<listen>).
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
                toml::from_str(&text)
                    .with_context(|| format!("parsing config file {}", path.display()))?
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
    let store = open_store(&cfg).await?;
    let listener = tokio::net::TcpListener::bind(&cfg.listen)
        .await
        .with_context(|| format!("binding {}", cfg.listen))?;
    let addr = listener.local_addr()?;
    let public_url = cfg
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    let handler = RequestHandler::builder(executor, card).store(store).build();
    let server = A2aServer::new(handler)
        .public_url(&public_url)
        .max_body_bytes(cfg.max_body_bytes);
    tracing::info!(%addr, store = %cfg.store, agent = %cfg.agent, "serving");
    // One line on stdout that scripts can wait for.
    println!(
        "switchboard listening on http://{addr} (card: {public_url}/.well-known/agent-card.json, store: {})",
        cfg.store
    );
    server.serve(listener, shutdown_signal()).await?;
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
        let mut a = args(Some(path));
        a.listen = Some("127.0.0.1:0".into());
        assert_eq!(
            Config::resolve(&a).unwrap().listen,
            "127.0.0.1:0",
            "flags win over the file"
        );
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
}
