//! Task stores, and opening one from a URL.
//!
//! A handler keeps its tasks in a [`TaskStore`]. Three come with
//! switchboard:
//!
//! | URL | store | feature |
//! |---|---|---|
//! | `memory` | [`InMemoryStore`]: gone with the process, bounded in finished tasks and bytes | always |
//! | `sqlite://PATH`, `sqlite:PATH` | `sqlite::SqliteStore`: one file, one server | `sqlite` |
//! | `postgres://…`, `postgresql://…` | `postgres::PgStore`, joined as one replica of a set: any number of servers on one database | `postgres` |
//!
//! [`open`] picks the store from the URL, as `switchboard serve --store`
//! does, and gives back everything the handler needs from it
//! ([`OpenedStore::builder`]): the task store, the same object as the
//! push store, and on PostgreSQL the replica set's [`Cluster`].
//!
//! Crash recovery comes with the store: a handler on SQLite fails the runs
//! a killed predecessor left working before the server accepts its first
//! call, and PostgreSQL replicas fail a dead replica's runs once its leases
//! run out (`RequestHandlerBuilder::recover_abandoned` turns the first off).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use switchboard_sdk::prelude::*;
//! let agent = agent_fn(|_ctx, events| async move {
//!     events.reply_text("hello").await?;
//!     Ok(())
//! });
//! let url = std::env::var("STORE").unwrap_or_else(|_| "memory".into());
//! let store = switchboard_sdk::store::open(&url).await?;
//! let card = AgentCard::new("agent", "An agent", "1.0");
//! let handler = store.builder(RequestHandler::builder(agent, card)).build();
//! # let _ = handler; Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use switchboard_core::push::PushStore;
use switchboard_core::store::StoreError;
pub use switchboard_core::store::quota::StorageQuota;
pub use switchboard_core::{Cluster, InMemoryStore, RequestHandlerBuilder, TaskStore};

/// The embedded SQLite store (feature `sqlite`).
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use switchboard_store_sqlite as sqlite;

/// The PostgreSQL store for several replicas (feature `postgres`).
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use switchboard_store_postgres as postgres;

/// How [`open_with`] opens a store. Each setting applies to the stores it
/// names; the others ignore it.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// `memory`: how many finished tasks to keep, oldest dropped first
    /// (default 100,000).
    pub memory_max_terminal_tasks: usize,
    /// `memory`: the most bytes of tasks and logs (as JSON) to hold;
    /// finished tasks are dropped first, then new tasks refused (default
    /// 512 MiB).
    pub memory_max_bytes: u64,
    /// Bytes each owner may keep, in every store (default: no limit).
    pub storage_quota: StorageQuota,
    /// `postgres`: the lease a replica holds on the tasks it runs; a dead
    /// replica's tasks are failed by a survivor within about this long
    /// (default 10 s).
    pub replica_lease: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            memory_max_terminal_tasks: 100_000,
            memory_max_bytes: 512 * 1024 * 1024,
            storage_quota: StorageQuota::default(),
            replica_lease: Duration::from_secs(10),
        }
    }
}

/// Why [`open`] could not open a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The URL names no store this crate knows (its scheme is given).
    #[error("unknown store {0:?}: use `memory`, `sqlite://PATH` or `postgres://USER@HOST:PORT/DB`")]
    Unknown(String),
    /// The URL names a store whose cargo feature is off.
    #[error("the {store} store needs switchboard-sdk's `{feature}` feature")]
    NotEnabled {
        /// The store the URL names.
        store: &'static str,
        /// The feature that brings it.
        feature: &'static str,
    },
    /// The store refused to open (unreachable, not a database, migrations).
    #[error("opening the {store} store: {source}")]
    Store {
        /// Which store.
        store: &'static str,
        /// What it said.
        #[source]
        source: StoreError,
    },
}

/// A store opened by [`open`]: what a handler needs from it.
#[derive(Debug, Clone)]
pub struct OpenedStore {
    tasks: Arc<dyn TaskStore>,
    push: Option<Arc<dyn PushStore>>,
    cluster: Option<Arc<dyn Cluster>>,
    #[cfg(feature = "postgres")]
    postgres: Option<switchboard_store_postgres::PgStore>,
}

impl OpenedStore {
    /// A store one server has to itself: tasks and push side, no replica set.
    fn single<S: TaskStore + PushStore + 'static>(store: Arc<S>) -> OpenedStore {
        OpenedStore {
            tasks: store.clone(),
            push: Some(store),
            cluster: None,
            #[cfg(feature = "postgres")]
            postgres: None,
        }
    }

    /// The task store.
    pub fn tasks(&self) -> &Arc<dyn TaskStore> {
        &self.tasks
    }

    /// The same store as a push store (every store of this crate keeps
    /// push configs and the outbox beside the tasks).
    pub fn push(&self) -> Option<&Arc<dyn PushStore>> {
        self.push.as_ref()
    }

    /// The replica set this server joined (PostgreSQL), if any. Call
    /// [`Cluster::leave`] when the server stops, so the others take back
    /// its share at once.
    pub fn cluster(&self) -> Option<&Arc<dyn Cluster>> {
        self.cluster.as_ref()
    }

    /// The PostgreSQL store itself (it also holds the push signing keys
    /// the replicas share), when that is the store.
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub fn postgres(&self) -> Option<&switchboard_store_postgres::PgStore> {
        self.postgres.as_ref()
    }

    /// `builder` on this store: its task store and, on PostgreSQL, its
    /// replica set.
    pub fn builder(&self, builder: RequestHandlerBuilder) -> RequestHandlerBuilder {
        let builder = builder.store(self.tasks.clone());
        match &self.cluster {
            Some(cluster) => builder.cluster(cluster.clone()),
            None => builder,
        }
    }
}

/// Opens the store `url` names with default [`StoreOptions`]: `memory`,
/// `sqlite://PATH` or `postgres://USER@HOST:PORT/DB` (see the module docs).
pub async fn open(url: &str) -> Result<OpenedStore, OpenError> {
    open_with(url, &StoreOptions::default()).await
}

/// [`open`] with explicit options. A PostgreSQL store is always joined as
/// one replica of a set, so any number of servers may share its database.
pub async fn open_with(url: &str, options: &StoreOptions) -> Result<OpenedStore, OpenError> {
    match kind(url)? {
        StoreKind::Memory => {}
        StoreKind::Sqlite => return open_sqlite(url, options).await,
        StoreKind::Postgres => return open_postgres(url, options).await,
    }
    let store = Arc::new(
        InMemoryStore::with_max_terminal_tasks(options.memory_max_terminal_tasks)
            .with_max_bytes(options.memory_max_bytes)
            .with_storage_quota(options.storage_quota),
    );
    Ok(OpenedStore::single(store))
}

/// The kinds of store a URL can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreKind {
    /// `memory` (or `memory://`).
    Memory,
    /// `sqlite:…`.
    Sqlite,
    /// `postgres://…` or `postgresql://…`.
    Postgres,
}

/// The kind of store `url` names, without opening it (a setting checked
/// before anything starts); the error names only the URL's scheme, as the
/// rest of a mistyped URL may hold a password.
pub fn kind(url: &str) -> Result<StoreKind, OpenError> {
    if url == "memory" || url == "memory://" {
        Ok(StoreKind::Memory)
    } else if url.starts_with("sqlite:") {
        Ok(StoreKind::Sqlite)
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(StoreKind::Postgres)
    } else {
        let scheme = url.split_once(':').map_or(url, |(scheme, _)| scheme);
        Err(OpenError::Unknown(scheme.to_string()))
    }
}

#[cfg(feature = "sqlite")]
async fn open_sqlite(url: &str, options: &StoreOptions) -> Result<OpenedStore, OpenError> {
    let sqlite = switchboard_store_sqlite::SqliteOptions {
        storage_quota: options.storage_quota,
        ..Default::default()
    };
    let store = switchboard_store_sqlite::SqliteStore::open_with(url, sqlite)
        .await
        .map_err(|source| OpenError::Store {
            store: "SQLite",
            source,
        })?;
    let store = Arc::new(store);
    Ok(OpenedStore::single(store))
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(_: &str, _: &StoreOptions) -> Result<OpenedStore, OpenError> {
    Err(OpenError::NotEnabled {
        store: "SQLite",
        feature: "sqlite",
    })
}

#[cfg(feature = "postgres")]
async fn open_postgres(url: &str, options: &StoreOptions) -> Result<OpenedStore, OpenError> {
    let failed = |source| OpenError::Store {
        store: "PostgreSQL",
        source,
    };
    let pg = switchboard_store_postgres::PgOptions {
        storage_quota: options.storage_quota,
        ..Default::default()
    };
    let (store, cluster) = switchboard_store_postgres::PgStore::open_with(url, pg)
        .await
        .map_err(failed)?
        .replica(options.replica_lease)
        .await
        .map_err(failed)?;
    let shared = Arc::new(store.clone());
    Ok(OpenedStore {
        tasks: shared.clone(),
        push: Some(shared),
        cluster: Some(cluster),
        postgres: Some(store),
    })
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_: &str, _: &StoreOptions) -> Result<OpenedStore, OpenError> {
    Err(OpenError::NotEnabled {
        store: "PostgreSQL",
        feature: "postgres",
    })
}

/// `value` with the password of any `scheme://user:password@host` URL in
/// it replaced by `***` (a store URL in a log line or an error).
pub fn mask_url_credentials(value: &str) -> String {
    let Some((scheme, rest)) = value.split_once("://") else {
        return value.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return value.to_string();
    };
    let user = userinfo.split(':').next().unwrap_or_default();
    if userinfo.contains(':') {
        format!("{scheme}://{user}:***@{host}{tail}")
    } else {
        value.to_string()
    }
}
