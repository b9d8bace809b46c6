//! The stores `serve` runs on and the push set-up that rides on them: the
//! task store (and its push side, and on PostgreSQL its replica set)
//! opened from the configured URL, and where the push signing keys live.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use switchboard_core::{Cluster, PushStore, TaskStore};
use switchboard_server::push::PushOptions;

use super::Config;
use crate::config;

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
}

/// Opens the stores the configuration names, with their push side. A
/// PostgreSQL store is always opened as one replica of a set (see
/// `switchboard_core::cluster`): any number of `serve` processes may share
/// its database.
pub async fn open_stores(cfg: &Config) -> anyhow::Result<Stores> {
    let options = switchboard_sdk::store::StoreOptions {
        memory_max_terminal_tasks: cfg.memory_max_terminal_tasks,
        memory_max_bytes: cfg.memory_max_bytes,
        storage_quota: cfg.limits.settings().storage_quota(),
        replica_lease: std::time::Duration::from_millis(cfg.replica_lease_ms.max(1)),
    };
    let opened = switchboard_sdk::store::open_with(&cfg.store, &options)
        .await
        .with_context(|| {
            format!(
                "opening the store {}",
                config::mask_url_credentials(&cfg.store)
            )
        })?;
    Ok(Stores {
        tasks: opened.tasks().clone(),
        push: opened.push().cloned(),
        postgres: opened.postgres().cloned(),
        cluster: opened.cluster().cloned(),
    })
}

/// The push signing keys: the configured key file; else, on PostgreSQL, the
/// set the replicas share in the database (kept current by a refresh task
/// until `shutdown`); else a file beside the SQLite database (re-read when
/// it changes, see `switchboard_push::keys::spawn_file_reload`); else (memory) keys in memory.
pub async fn load_push_keys(
    cfg: &Config,
    postgres: Option<&switchboard_store_postgres::PgStore>,
    shutdown: &tokio_util::sync::CancellationToken,
) -> anyhow::Result<Arc<switchboard_push::KeySet>> {
    if cfg.push_key_file.is_none()
        && let Some(pg) = postgres
    {
        let (keys, version) = switchboard_push::shared_keys::load(pg).await?;
        switchboard_push::shared_keys::spawn_refresh(
            pg.clone(),
            keys.clone(),
            version,
            switchboard_push::shared_keys::REFRESH_INTERVAL,
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
    switchboard_push::keys::spawn_file_reload(
        keys.clone(),
        switchboard_push::keys::KEY_FILE_POLL,
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
pub(super) async fn push_options(
    cfg: &Config,
    stores: &Stores,
    shutdown: &tokio_util::sync::CancellationToken,
) -> anyhow::Result<Option<PushOptions>> {
    if !cfg.push_enabled() || stores.push.is_none() {
        return Ok(None);
    }
    let keys = load_push_keys(cfg, stores.postgres.as_ref(), shutdown).await?;
    let options = cfg.push_allow_host.iter().fold(
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
