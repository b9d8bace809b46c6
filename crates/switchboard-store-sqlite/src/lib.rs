//! # switchboard-store-sqlite: a durable [`TaskStore`] on SQLite
//!
//! [`SqliteStore`] keeps switchboard's tasks and their event logs in one
//! SQLite database file, so tasks survive restarts and crashes. It passes the
//! same conformance suite as the in-memory store and has the same semantics.
//!
//! ```no_run
//! # async fn demo() -> Result<(), switchboard_core::StoreError> {
//! use switchboard_store_sqlite::{SqliteOptions, SqliteStore};
//!
//! // `sqlite://PATH`, `sqlite:PATH` or a bare path; the file is created if missing.
//! let store = SqliteStore::open("sqlite://switchboard.db").await?;
//! // Or trade some durability for speed (see "Durability" below):
//! let fast = SqliteStore::open_with("fast.db", SqliteOptions { synchronous_full: false, ..Default::default() }).await?;
//! # let _ = (store, fast); Ok(()) }
//! ```
//!
//! ## What is stored
//!
//! Two tables, created by the embedded migrations in `migrations/` (run at
//! every open; already-applied migrations are skipped, and sqlx records them
//! in `_sqlx_migrations`):
//!
//! - `tasks`: one row per `(tenant, id)` holding the **latest snapshot** of
//!   the task as JSON (`task_json`: status, all artifacts, the whole history,
//!   exactly the A2A `Task` wire form), plus the columns that queries need:
//!   `context_id`, `owner`, `state`, the status time in microseconds
//!   (`status_micros`, falling back to the creation time like
//!   [`TaskRecord::status_time`]), its sub-microsecond rest
//!   (`status_subus_nanos`, so `statusTimestampAfter` filters are exact),
//!   the creation time (`created_micros`, and `created_at` as RFC 3339 with
//!   full precision) and `last_seq`, the sequence of the last logged event.
//!   Two indexes serve ListTasks: `(tenant, owner, status_micros DESC, id DESC)`
//!   and the same with `context_id` after `owner`.
//! - `task_events`: one row per event of a task's **log**, keyed by
//!   `(tenant, task_id, seq)`, the event as JSON (`event_json`, the A2A
//!   `StreamResponse` wire form), and `is_task`, set when the event is a
//!   whole task (the push trigger reads it).
//! - `push_configs` and `push_outbox` (migrations `0002_push.sql`,
//!   `0006_push_payload_kind.sql`): webhook configs and the notifications
//!   still to deliver. A trigger on `task_events` queues one outbox row per
//!   config of the task inside the commit's transaction; see `src/push.rs`
//!   and [`switchboard_core::push::PushStore`].
//!
//! The A2A wire form writes timestamps with millisecond precision, but a
//! store must give back exactly what was committed. So the exact status
//! timestamp is kept beside the JSON (`status_micros` + `status_subus_nanos`
//! for snapshots, `status_at` for `Task` and `StatusUpdate` events) and put
//! back when a row is read.
//!
//! - `write_probe` (migration `0008_write_probe.sql`): one row, rewritten
//!   when the store checks that writes work (see "When writes fail").
//! - `storage_usage` (migration `0009_storage_usage.sql`): the bytes each
//!   owner holds, and `tasks.log_bytes` (migration `0010_task_log_bytes.sql`)
//!   the bytes of each task's log (see "Storage quota").
//!
//! A [`TaskStore::commit`] updates the snapshot row and appends the event row
//! in **one transaction**, after checking that the stored `last_seq` is the
//! one the writer expected (otherwise [`StoreError::SequenceConflict`]), so
//! the snapshot and the log can never disagree.
//!
//! ## Durability
//!
//! `commit` returns only after SQLite's `COMMIT` returned. What that promises
//! depends on [`SqliteOptions::synchronous_full`]:
//!
//! - `true` (the default, `PRAGMA synchronous = FULL`): the write-ahead log is
//!   `fsync`ed at every commit. A committed task survives a process crash
//!   **and** an OS crash or power loss. This is what "every task is durable
//!   before the reply" means, and it costs one `fsync` per commit batch.
//! - `false` (`PRAGMA synchronous = NORMAL`, the common WAL setting): the log
//!   is `fsync`ed only at checkpoints. A committed task survives a crash of
//!   the process, and the database is never corrupted, but an OS crash or
//!   power loss can roll back the most recent commits. Faster on disks with
//!   slow `fsync`.
//!
//! ## WAL and how writes are done
//!
//! The database runs in [WAL mode](https://www.sqlite.org/wal.html): commits
//! append to `PATH-wal`, readers see a consistent snapshot and never block
//! the writer or each other, and SQLite copies the log back into the main
//! file at automatic checkpoints (every ~1000 pages). Expect `PATH-wal` and
//! `PATH-shm` next to the database while it is open; they are part of it.
//!
//! SQLite allows one writer at a time, so the store has exactly one writer
//! connection, driven by a background task that does **group commit**:
//!
//! - A commit that arrives while the writer is idle is written at once, as
//!   **one round trip** to SQLite: `BEGIN IMMEDIATE`, the snapshot write
//!   (conditional on the stored `last_seq`), the event append (conditional
//!   on the snapshot write having happened) and `COMMIT` are one cached
//!   multi-statement query.
//! - Commits that arrive while a transaction is being written queue up and
//!   are then written together in one `BEGIN IMMEDIATE … COMMIT`, so one
//!   `fsync` covers the whole group. The writer reads where each task's log
//!   ends, decides every commit in arrival order (a sequence conflict fails
//!   only that commit), then writes the last snapshot of each task and all
//!   the events with multi-row statements (chunks of 1, 2, 4 … 32 rows, so
//!   only a few statement shapes exist and all stay prepared). If the group
//!   fails as a whole, it is rolled back and its commits are retried one
//!   transaction each, so one bad write cannot fail the others.
//!
//! Round trips to SQLite's connection thread, not SQLite itself, dominate
//! the cost of small writes; batching is what makes "durable before the
//! reply" affordable under load. `examples/commit_bench.rs` measures it
//! (three commits per task, like a blocking SendMessage; on a 2-vCPU VM:
//! about 3,800 commits/s one at a time with `FULL`, 45,000+ with 64
//! concurrent writers).
//!
//! `BEGIN IMMEDIATE` takes the write lock up front, so another process
//! writing to the same file makes this one wait (up to
//! [`SqliteOptions::busy_timeout`]) instead of failing halfway through.
//! Reads (`load`, `list`, `events`) use a separate pool of
//! [`SqliteOptions::max_connections`] connections and never wait for the
//! writer. Statements are prepared once per connection and cached; nothing
//! touches the schema after open.
//!
//! A commit that was handed to the writer completes even if the caller's
//! future is dropped while waiting. The writer task runs on the Tokio runtime
//! that called [`SqliteStore::open`]; use the store within that runtime.
//!
//! ## Storage quota
//!
//! [`SqliteOptions::storage_quota`] bounds the bytes each owner (tenant,
//! principal) keeps: `storage_usage` (migration `0009_storage_usage.sql`)
//! holds the bytes of each owner's snapshots and event logs as stored,
//! kept in the transaction of every write and deletion, so retention gives
//! the space back by itself: a commit adds its events' size to its task's
//! `log_bytes` in the statement that replaces the snapshot, and adds what it
//! grew its owner by to the owner's count itself (a group commit in one
//! statement for all its owners); a trigger takes a deleted task's sizes
//! off. A commit is decided against it
//! in its own statements: the one-round-trip commit's conditional writes
//! carry the check, and a group commit decides it per commit beside the
//! sequence check, so a refused commit
//! ([`StoreError::QuotaExceeded`]) writes nothing and fails alone. The rules
//! (finishing a task is never refused) are `switchboard_core::store::quota`'s.
//!
//! ## When writes fail
//!
//! A full disk, an I/O error or a file that cannot be written fails the
//! commits that meet it, each with the error SQLite gave ("database or disk
//! is full", "attempt to write a readonly database"); reads go on. Every
//! failed write is rolled back and, on a file, its connection replaced, so
//! once the cause is gone the next write succeeds: no restart is needed.
//! [`TaskStore::health`] reports the failure while it lasts, probing with a
//! small real write, so a readiness probe takes the server out of rotation
//! meanwhile. The store probes once when it opens, so a read-only file is
//! reported before anyone writes. `src/writer.rs` has the details (and why
//! the writer does not use sqlx's `Transaction`).
//!
//! ## Memory
//!
//! What the store itself keeps in memory is SQLite's page cache, and it is
//! bounded: [`SqliteOptions::writer_cache_kib`] (2000 KiB) for the writer
//! plus [`SqliteOptions::reader_cache_kib`] (64 KiB) for each of the
//! [`SqliteOptions::max_connections`] readers, about 2.2 MiB by default.
//!
//! The bound is the **sum**, not each connection's own `cache_size`: the
//! bundled SQLite is built with `SQLITE_ENABLE_MEMORY_MANAGEMENT`, which
//! puts every connection's pages in one shared pool whose limit is the sum
//! of all the caches' sizes. A connection may hold more than its own share
//! while others hold less, and the writer does: a retention purge dirties
//! more pages than the writer's cache holds, and once written they stay in
//! the pool up to the readers' unused share. That share fills slowly, purge
//! after purge, so a server under steady load would keep growing long after
//! its caches looked full. Reader caches hardly help anyway under writes: in
//! WAL mode a reader drops its cache whenever the database changed since its
//! last read, and the operating system's file cache still serves the pages.
//! So readers get a small cache, and all of them are opened at start, so the
//! pool's limit is fixed from the start. With SQLite's default 2000 KiB on
//! every connection, the SQLite server's page cache grew from 2.5 to 4.2 MiB
//! between 100k and 1M tasks with retention on (`bench/RESULTS.md`,
//! session 5).
//!
//! ## Backups
//!
//! Do not copy the database file alone while the server runs: recent commits
//! may still be only in `PATH-wal`. Instead:
//!
//! - call [`SqliteStore::backup_to`] (SQL `VACUUM INTO`), which writes a
//!   consistent, compacted copy of the database to a new file while the
//!   store keeps serving; or
//! - use the `sqlite3` shell against the live file:
//!   `sqlite3 switchboard.db ".backup backup.db"`; or
//! - stop the server (or make sure nothing writes) and copy `PATH` together
//!   with `PATH-wal` if it exists.
//!
//! To restore, put the backup file in place of `PATH` (with any old
//! `PATH-wal` and `PATH-shm` removed) before opening the store.
//!
//! ## In memory
//!
//! [`SqliteStore::open_in_memory`] gives a private in-memory database on a
//! single connection (an in-memory SQLite database belongs to the connection
//! that created it). It is meant for tests; [`switchboard_core::InMemoryStore`]
//! is faster when nothing needs to persist.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, SecondsFormat, Utc};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{QueryBuilder, Row, Sqlite, Transaction};
use switchboard_core::store::quota::{self, StorageQuota};
use switchboard_core::store::rows::{self, SqlRow};
use switchboard_core::store::{backend, seq_to_i64, to_micros};
use switchboard_core::{
    EventQuery, LoggedEvent, Retention, StoreError, StoredEvent, TaskPage, TaskQuery, TaskRecord,
    TaskStore,
};
use switchboard_protocol::StreamResponse;
use tokio::sync::{mpsc, oneshot};

mod push;
mod writer;

use writer::Writer;

/// The schema, embedded at build time from `migrations/`.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Most commits written in one transaction by the group-commit writer.
const MAX_BATCH: usize = 256;

/// Largest multi-row statement in a group commit (rows; see [`chunks`]).
const MAX_CHUNK: usize = 32;

/// Commits that may wait for the writer before `commit` itself waits.
const QUEUE_DEPTH: usize = 4096;

/// Tuning for [`SqliteStore::open_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// `PRAGMA synchronous = FULL` (default `true`) or `NORMAL` (`false`).
    ///
    /// `FULL` `fsync`s the write-ahead log at every commit, so a commit that
    /// returned survives power loss. `NORMAL` only `fsync`s at checkpoints:
    /// still safe against process crashes and never corrupting, but the last
    /// commits before an OS crash or power cut may be lost. See the crate
    /// docs, "Durability".
    pub synchronous_full: bool,
    /// Size of the read pool (`load`, `list`, `events`); at least 1. Writes
    /// always use one dedicated connection, as SQLite serializes them anyway.
    pub max_connections: u32,
    /// How long a statement waits for a lock held by another connection or
    /// process before failing with "database is locked".
    pub busy_timeout: Duration,
    /// Page cache of the writer connection, in KiB (`PRAGMA cache_size =
    /// -N`; default 2000, SQLite's own default). Writes walk the same index
    /// pages over and over, so this is the cache that pays off.
    pub writer_cache_kib: u32,
    /// Page cache of each read connection, in KiB (default 64; 0 keeps
    /// only the handful of pages SQLite needs). Small on purpose: see the
    /// crate docs, "Memory".
    pub reader_cache_kib: u32,
    /// Bytes each owner may keep (default: no limit); see the crate docs,
    /// "Storage quota".
    pub storage_quota: StorageQuota,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            synchronous_full: true,
            max_connections: 4,
            busy_timeout: Duration::from_secs(5),
            writer_cache_kib: 2000,
            reader_cache_kib: 64,
            storage_quota: StorageQuota::default(),
        }
    }
}

/// A [`TaskStore`] in a SQLite database. See the crate docs.
pub struct SqliteStore {
    /// Connections for `load`, `list` and `events`.
    readers: SqlitePool,
    /// The writer's single connection (the same pool as `readers` in memory).
    writer: Writer,
    /// Queue to the group-commit writer task.
    writes: mpsc::Sender<Job>,
    /// The writer task, which ends once `writes` is dropped and drained.
    writer_task: tokio::task::JoinHandle<()>,
    /// What was opened, for messages.
    location: String,
    /// What each owner may keep.
    quota: StorageQuota,
    /// Wakes the push delivery worker after commits that queued notifications.
    push: push::PushHints,
    /// The runs a previous process left unfinished, found at open and
    /// handed out once ([`TaskStore::take_abandoned_runs`]).
    abandoned: std::sync::Mutex<Vec<(String, String)>>,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("location", &self.location)
            .field("readers", &self.readers)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if missing) the database at `url_or_path` with default
    /// [`SqliteOptions`]: `sqlite://PATH`, `sqlite:PATH` (both may carry
    /// SQLite URI parameters such as `?mode=rwc`) or a bare file path.
    /// `sqlite::memory:` gives [`open_in_memory`](Self::open_in_memory).
    pub async fn open(url_or_path: &str) -> Result<Self, StoreError> {
        Self::open_with(url_or_path, SqliteOptions::default()).await
    }

    /// Opens the database at `url_or_path` with explicit options.
    ///
    /// Applies the schema migrations, switches the file to WAL mode and
    /// starts the writer task. A file that is not a SQLite database, or one
    /// that cannot be created, gives [`StoreError::Backend`].
    pub async fn open_with(url_or_path: &str, options: SqliteOptions) -> Result<Self, StoreError> {
        let is_url = url_or_path.starts_with("sqlite:");
        if is_url && (url_or_path.contains(":memory:") || url_or_path.contains("mode=memory")) {
            return Self::open_in_memory().await;
        }
        let location = url_or_path.to_string();
        let connect = if is_url {
            SqliteConnectOptions::from_str(url_or_path)
                .map_err(|e| StoreError::Backend(format!("invalid SQLite URL {location:?}: {e}")))?
        } else {
            SqliteConnectOptions::new().filename(Path::new(url_or_path))
        };
        let connect = connect
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(if options.synchronous_full {
                SqliteSynchronous::Full
            } else {
                SqliteSynchronous::Normal
            })
            .busy_timeout(options.busy_timeout)
            .foreign_keys(true);

        let context = |what: &str| format!("opening SQLite database {location:?} ({what})");
        // The writer's connection is opened (and kept) first: it creates the
        // file, switches it to WAL and applies the migrations.
        let writer_pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .test_before_acquire(false)
            .connect_with(
                connect
                    .clone()
                    .pragma("cache_size", cache_size(options.writer_cache_kib)),
            )
            .await
            .map_err(backend(context("writer connection")))?;
        if let Err(e) = MIGRATOR.run(&writer_pool).await {
            writer_pool.close().await;
            return Err(StoreError::Backend(format!(
                "{}: {e}",
                context("migrations")
            )));
        }
        // The whole read pool is opened now, not on demand: every connection
        // adds its cache to the budget the writer may borrow (crate docs,
        // "Memory"), so the budget is fixed from the start instead of
        // growing, with RSS, the first time reads come in bursts.
        let read_conns = options.max_connections.max(1);
        let readers = SqlitePoolOptions::new()
            .max_connections(read_conns)
            .min_connections(read_conns)
            .test_before_acquire(false)
            .connect_with(connect.pragma("cache_size", cache_size(options.reader_cache_kib)))
            .await
            .map_err(backend(context("read pool")));
        let readers = match readers {
            Ok(r) => r,
            Err(e) => {
                writer_pool.close().await;
                return Err(e);
            }
        };
        let store = Self::start(
            readers,
            Writer::new(writer_pool, true),
            location,
            options.storage_quota,
        );
        // A file that cannot be written (read-only) is reported by
        // `health` from the start, not only after a caller's write failed.
        if let Err(e) = store.writer.probe_write().await {
            tracing::warn!(error = %e, location = %store.location, "the SQLite database cannot be written");
        }
        // Before anything of this process runs: whatever is submitted or
        // working now was left so by a process that died (a SQLite file has
        // one server), and stays that way unless someone fails it.
        let abandoned = store.unfinished_runs().await?;
        if let Ok(mut slot) = store.abandoned.lock() {
            *slot = abandoned;
        }
        Ok(store)
    }

    /// A fresh, private in-memory database on a single connection, for tests.
    /// Its contents vanish with the store.
    pub async fn open_in_memory() -> Result<Self, StoreError> {
        let connect = SqliteConnectOptions::new()
            .filename(":memory:")
            .in_memory(true)
            .foreign_keys(true);
        // One connection that never closes: the database lives in it.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .test_before_acquire(false)
            .connect_with(connect)
            .await
            .map_err(backend("opening in-memory SQLite database"))?;
        MIGRATOR.run(&pool).await.map_err(|e| {
            StoreError::Backend(format!("migrating in-memory SQLite database: {e}"))
        })?;
        Ok(Self::start(
            pool.clone(),
            Writer::new(pool, false),
            ":memory:".to_string(),
            StorageQuota::default(),
        ))
    }

    /// [`open_in_memory`](Self::open_in_memory) granting each owner `quota`.
    pub async fn open_in_memory_with(quota: StorageQuota) -> Result<Self, StoreError> {
        let mut store = Self::open_in_memory().await?;
        store.quota = quota;
        Ok(store)
    }

    fn start(readers: SqlitePool, writer: Writer, location: String, quota: StorageQuota) -> Self {
        let (writes, queue) = mpsc::channel(QUEUE_DEPTH);
        let writer_task = tokio::spawn(run_writer(writer.clone(), queue));
        Self {
            readers,
            writer,
            writes,
            writer_task,
            quota,
            location,
            push: push::PushHints::default(),
            abandoned: std::sync::Mutex::default(),
        }
    }

    /// Writes a consistent copy of the whole database to a new file at
    /// `dest` (SQL `VACUUM INTO`) while the store keeps serving. The file
    /// must not exist yet. Open the copy like any database to restore it.
    pub async fn backup_to(&self, dest: impl AsRef<Path>) -> Result<(), StoreError> {
        let dest = dest.as_ref();
        let dest_str = dest
            .to_str()
            .ok_or_else(|| StoreError::Backend(format!("backup path {dest:?} is not UTF-8")))?
            .to_string();
        sqlx::query("VACUUM INTO ?1")
            .bind(dest_str)
            .persistent(false)
            .execute(&self.readers)
            .await
            .map_err(backend(format!(
                "backing up {:?} to {dest:?}",
                self.location
            )))?;
        Ok(())
    }

    /// Finishes queued commits and closes every connection. Dropping the
    /// store also stops it, without waiting: the writer finishes what is
    /// queued in the background, then closes its connection.
    pub async fn close(self) {
        drop(self.writes);
        if let Err(e) = self.writer_task.await {
            tracing::error!(error = %e, "the SQLite writer task failed");
        }
        self.writer.pool().close().await;
        self.readers.close().await;
    }
}

/// `PRAGMA cache_size` for a budget of `kib` KiB (SQLite reads a negative
/// size as KiB, a positive one as pages).
fn cache_size(kib: u32) -> String {
    format!("-{kib}")
}

// ----------------------------------------------------------------------------
// Writes: the group-commit writer.

/// One commit, encoded and waiting for the writer.
struct Job {
    row: TaskRow,
    reply: oneshot::Sender<Result<(), StoreError>>,
}

/// The columns of a commit, computed by the caller so the writer only writes.
struct TaskRow {
    tenant: String,
    id: String,
    context_id: String,
    owner: String,
    state: &'static str,
    status_micros: i64,
    status_subus_nanos: i64,
    created_micros: i64,
    created_at: String,
    last_seq: i64,
    /// The `last_seq` the stored row must have for this commit to apply.
    expected: i64,
    task_json: String,
    /// The events to append, at `expected + 1 ..= last_seq`.
    events: Vec<EventRow>,
    /// The owner's quota in bytes, if it applies to this commit (not to one
    /// finishing an existing task).
    quota: Option<i64>,
    /// The bytes the commit writes: its snapshot and events, as counted by
    /// `storage_usage` (migrations 0009 and 0010).
    added: i64,
}

/// One event of a commit, encoded.
struct EventRow {
    seq: i64,
    json: String,
    /// The event's exact status timestamp, see `StreamResponse::status_timestamp`.
    status_at: Option<String>,
    /// The event is a whole task (`task_events.is_task`, which tells the push
    /// trigger that the event is its own snapshot).
    is_task: bool,
}

impl TaskRow {
    fn encode<E: StoredEvent>(
        record: &TaskRecord,
        events: &[E],
        quota: &StorageQuota,
    ) -> Result<Self, StoreError> {
        let id = &record.task.id;
        let expected = record.expected_stored_seq(events.len());
        let events = events
            .iter()
            .zip(record.first_event_seq(events.len())..)
            .map(|(event, seq)| {
                let event = event.event();
                Ok(EventRow {
                    seq: seq_to_i64(seq, id)?,
                    json: serde_json::to_string(event).map_err(|e| {
                        StoreError::Backend(format!("encoding event {seq} of task {id}: {e}"))
                    })?,
                    status_at: event.status_timestamp().map(|ts| format_exact(*ts)),
                    is_task: matches!(event, StreamResponse::Task(_)),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let status_time = record.status_time();
        let task_json = serde_json::to_string(&record.task)
            .map_err(|e| StoreError::Backend(format!("encoding task {id}: {e}")))?;
        let added = events.iter().map(|e| e.json.len()).sum::<usize>() + task_json.len();
        let quota = quota
            .max_bytes_per_owner
            .filter(|_| !quota::finishes(record, events.len()))
            .map(|max| i64::try_from(max).unwrap_or(i64::MAX));
        Ok(Self {
            tenant: record.tenant.clone(),
            id: id.clone(),
            context_id: record.task.context_id.clone(),
            owner: record.owner.clone(),
            state: record.task.status.state.as_str(),
            status_micros: to_micros(status_time),
            status_subus_nanos: sub_nanos(status_time),
            created_micros: to_micros(record.created_at),
            created_at: format_exact(record.created_at),
            last_seq: seq_to_i64(record.last_seq, id)?,
            expected: seq_to_i64(expected, id)?,
            task_json,
            events,
            quota,
            added: i64::try_from(added).unwrap_or(i64::MAX),
        })
    }
}

/// Takes commits off the queue and writes them in groups until the store is
/// dropped or closed.
async fn run_writer(pool: Writer, mut queue: mpsc::Receiver<Job>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let jobs = std::mem::replace(&mut batch, Vec::with_capacity(MAX_BATCH));
        if let [job] = jobs.as_slice()
            && job.row.events.len() <= 1
        {
            let outcome = write_alone(&pool, &job.row).await;
            reply_all(jobs, [outcome]);
            continue;
        }
        let rows: Vec<&TaskRow> = jobs.iter().map(|j| &j.row).collect();
        match write_group(&pool, &rows).await {
            Ok(outcomes) => reply_all(jobs, outcomes),
            Err(e) => {
                // The group's transaction failed as a whole (and was rolled
                // back): retry each commit alone so that one bad write does
                // not fail the others.
                tracing::warn!(error = %e, commits = jobs.len(), "SQLite group commit failed; retrying one by one");
                for job in jobs {
                    let outcome = write_one(&pool, &job.row).await;
                    let _ = job.reply.send(outcome);
                }
            }
        }
    }
}

fn reply_all(jobs: Vec<Job>, outcomes: impl IntoIterator<Item = Result<(), StoreError>>) {
    for (job, outcome) in jobs.into_iter().zip(outcomes) {
        // The caller may have given up waiting; the commit stands anyway.
        let _ = job.reply.send(outcome);
    }
}

/// The columns of `tasks` a commit writes, in bind order.
macro_rules! task_columns {
    () => {
        "tenant, id, context_id, owner, state, status_micros, status_subus_nanos, \
         created_micros, created_at, last_seq, task_json"
    };
}

/// Binds `$row`'s values of the [`task_columns!`], in their order, with
/// `$bind`: `bind` on a query, `push_bind` on a row of a multi-row `VALUES`.
macro_rules! bind_task_columns {
    ($query:expr, $bind:ident, $row:expr) => {
        $query
            .$bind($row.tenant.as_str())
            .$bind($row.id.as_str())
            .$bind($row.context_id.as_str())
            .$bind($row.owner.as_str())
            .$bind($row.state)
            .$bind($row.status_micros)
            .$bind($row.status_subus_nanos)
            .$bind($row.created_micros)
            .$bind($row.created_at.as_str())
            .$bind($row.last_seq)
            .$bind($row.task_json.as_str())
    };
}

/// Turns an `INSERT INTO tasks` into an upsert that replaces the snapshot.
macro_rules! upsert_task {
    () => {
        " ON CONFLICT (tenant, id) DO UPDATE SET \
             context_id = excluded.context_id, owner = excluded.owner, state = excluded.state, \
             status_micros = excluded.status_micros, \
             status_subus_nanos = excluded.status_subus_nanos, \
             created_micros = excluded.created_micros, created_at = excluded.created_at, \
             last_seq = excluded.last_seq, task_json = excluded.task_json, \
             log_bytes = tasks.log_bytes + excluded.log_bytes"
    };
}

// The statements of a lone commit. Parameters: ?1 tenant, ?2 id, ?3..?11 the
// other `tasks` columns in `task_columns!` order (?10 is last_seq), ?12 the
// expected stored last_seq, ?13 the event JSON, ?14 the event's status_at,
// ?15 the event's seq (the same number the group path writes; for a
// well-formed commit it equals last_seq), ?16 whether the event is a task,
// ?17 the owner's quota in bytes if it applies (`TaskRow::quota`), ?18 the
// bytes the commit writes (`TaskRow::added`: its snapshot ?11 and its events,
// which `tasks.log_bytes` adds up, migration 0010).

/// How many bytes the commit adds to its owner: what it writes, less the
/// snapshot it replaces.
macro_rules! growth {
    () => {
        "(?18 - COALESCE((SELECT octet_length(task_json) FROM tasks \
             WHERE tenant = ?1 AND id = ?2), 0))"
    };
}

/// What the owner holds now.
macro_rules! used {
    () => {
        "COALESCE((SELECT bytes FROM storage_usage WHERE tenant = ?1 AND owner = ?4), 0)"
    };
}

/// The commit keeps its owner within its quota, or does not grow it, or
/// no quota applies (`store::quota::StorageQuota::admit`). Most commits are
/// within the quota, so that is asked first: two lookups, and no third.
macro_rules! within_quota {
    () => {
        concat!(
            "(?17 IS NULL OR ",
            used!(),
            " + ",
            growth!(),
            " <= ?17 OR ",
            growth!(),
            " <= 0)"
        )
    };
}

/// The bytes of the commit's events, added to `tasks.log_bytes`.
macro_rules! log_growth {
    () => {
        "(?18 - octet_length(?11))"
    };
}

/// Writes the snapshot of a task whose log is empty so far (new or not):
/// changes one row exactly when the stored `last_seq` is the expected 0
/// and the owner's quota allows it.
macro_rules! put_first {
    () => {
        concat!(
            "INSERT INTO tasks (",
            task_columns!(),
            ", log_bytes, grew) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ",
            log_growth!(),
            ", ?18 WHERE ",
            within_quota!(),
            upsert_task!(),
            ", grew = excluded.grew - octet_length(tasks.task_json) WHERE tasks.last_seq = ?12;"
        )
    };
}

/// Replaces the snapshot: changes one row exactly when the stored `last_seq`
/// is the expected one and the owner's quota allows it.
macro_rules! put_next {
    () => {
        concat!(
            "UPDATE tasks SET context_id = ?3, owner = ?4, state = ?5, status_micros = ?6, \
                 status_subus_nanos = ?7, created_micros = ?8, created_at = ?9, last_seq = ?10, \
                 task_json = ?11, log_bytes = log_bytes + ",
            log_growth!(),
            ", grew = ?18 - octet_length(task_json) WHERE tenant = ?1 AND id = ?2 AND last_seq = ?12 AND ",
            within_quota!(),
            ";"
        )
    };
}

/// Appends the event, only if the snapshot statement just before changed a row.
macro_rules! append_event {
    () => {
        "INSERT INTO task_events (tenant, task_id, seq, event_json, status_at, is_task) \
         SELECT ?1, ?2, ?15, ?13, ?14, ?16 WHERE changes() = 1;"
    };
}

/// Adds what the commit grew its owner by (`tasks.grew`, set by the
/// snapshot write) to the owner's count, if the commit applied: `changes()`
/// still answers for the last write (the snapshot's, or the event's, which
/// is appended only with the snapshot), since the verdict only reads.
macro_rules! count_growth {
    () => {
        "INSERT INTO storage_usage (tenant, owner, bytes) \
         SELECT tenant, owner, grew FROM tasks \
         WHERE tenant = ?1 AND id = ?2 AND changes() = 1 AND grew <> 0 \
         ON CONFLICT (tenant, owner) DO UPDATE SET bytes = bytes + excluded.bytes;"
    };
}

/// Reports whether the commit applied (the last statement changed a row)
/// and, only when it did not, where the task's log ends now and what the
/// owner would have held (the refusal's reason: a conflict or the quota).
macro_rules! verdict {
    () => {
        concat!(
            "SELECT changes() AS applied, \
                 CASE WHEN changes() = 1 THEN NULL \
                      ELSE (SELECT last_seq FROM tasks WHERE tenant = ?1 AND id = ?2) END AS found, \
                 CASE WHEN changes() = 1 THEN NULL ELSE ",
            used!(),
            " + ",
            growth!(),
            " END AS would_hold;"
        )
    };
}

/// One commit in a transaction of its own, by the cheapest route.
async fn write_one(pool: &Writer, row: &TaskRow) -> Result<(), StoreError> {
    if row.events.len() <= 1 {
        write_alone(pool, row).await
    } else {
        let mut outcomes = write_group(pool, &[row]).await?;
        outcomes.pop().unwrap_or_else(|| {
            Err(StoreError::Backend(format!(
                "writing task {}: no outcome",
                row.id
            )))
        })
    }
}

/// A lone commit of at most one event, as one round trip to SQLite: `BEGIN IMMEDIATE`, the
/// conditional snapshot write, the conditional event append, the verdict and
/// `COMMIT` go down as one multi-statement query. A sequence conflict writes
/// nothing (and commits an empty transaction).
async fn write_alone(pool: &Writer, row: &TaskRow) -> Result<(), StoreError> {
    let event = row.events.first();
    let sql = match (row.expected == 0, event.is_some()) {
        (true, true) => concat!(
            "BEGIN IMMEDIATE;",
            put_first!(),
            append_event!(),
            verdict!(),
            count_growth!(),
            "COMMIT"
        ),
        (true, false) => concat!(
            "BEGIN IMMEDIATE;",
            put_first!(),
            verdict!(),
            count_growth!(),
            "COMMIT"
        ),
        (false, true) => concat!(
            "BEGIN IMMEDIATE;",
            put_next!(),
            append_event!(),
            verdict!(),
            count_growth!(),
            "COMMIT"
        ),
        (false, false) => concat!(
            "BEGIN IMMEDIATE;",
            put_next!(),
            verdict!(),
            count_growth!(),
            "COMMIT"
        ),
    };
    let mut conn = pool.connection().await?;
    let result = bind_task_columns!(sqlx::query(sql), bind, row)
        .bind(row.expected)
        .bind(event.map(|e| e.json.as_str()))
        .bind(event.and_then(|e| e.status_at.as_deref()))
        .bind(event.map(|e| e.seq))
        .bind(event.map(|e| e.is_task))
        .bind(row.quota)
        .bind(row.added)
        // `fetch_all` runs every statement, `COMMIT` included.
        .fetch_all(conn.begin())
        .await
        .map_err(backend(format!("writing task {}", row.id)));
    // On failure this rolls back whatever is still open (see `writer`).
    let rows = conn.finish(result).await?;
    let verdict = rows
        .first()
        .ok_or_else(|| StoreError::Backend(format!("writing task {}: no verdict", row.id)))?;
    let applied: i64 = column(verdict, "applied")?;
    let found: Option<i64> = column(verdict, "found")?;
    let found = found.unwrap_or(0);
    match (applied, row.quota) {
        (1, _) => Ok(()),
        // The log ends where expected, so the quota refused the commit.
        (_, Some(max)) if found == row.expected => {
            let would_hold: i64 = column(verdict, "would_hold")?;
            Err(quota::exceeded(&row.owner, to_u64(would_hold), to_u64(max)))
        }
        _ => Err(conflict(row, found)),
    }
}

impl SqliteStore {
    /// The `(tenant, task id)` of every task submitted or working now. Read
    /// when the store opens, before this process runs anything, these are
    /// the runs of a previous process that died (a SQLite file has one
    /// server): [`TaskStore::take_abandoned_runs`] hands that list out, and
    /// the handler fails them at start-up. Called later, it also names this
    /// process's own runs.
    pub async fn unfinished_runs(&self) -> Result<Vec<(String, String)>, StoreError> {
        sqlx::query_as(
            "SELECT tenant, id FROM tasks \
             WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')",
        )
        .fetch_all(&self.readers)
        .await
        .map_err(backend("listing unfinished tasks"))
    }
}

// ----------------------------------------------------------------------------
// Retention.

/// The finished states, as SQL.
const FINISHED: &str = "state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', \
     'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')";

/// No notification of the task is waiting to be delivered.
const NOTHING_PENDING: &str = "NOT EXISTS (SELECT 1 FROM push_outbox AS o \
     WHERE o.tenant = tasks.tenant AND o.task_id = tasks.id AND o.state = 0)";

/// Tasks deleted per transaction, so a large purge never holds the write
/// lock for long.
const PURGE_BATCH: usize = 500;

impl SqliteStore {
    /// Runs `select` (which yields at most [`PURGE_BATCH`] `(tenant, id)`
    /// rows, given `param` as `?1`) and deletes what it names, batch after
    /// batch until it names nothing. Each batch is one transaction.
    async fn purge_batches(&self, select: &str, param: i64) -> Result<u64, StoreError> {
        let mut purged = 0;
        loop {
            let (named, deleted) = self
                .writer
                .transaction("committing a purge", async |tx| {
                    let victims: Vec<(String, String)> =
                        sqlx::query_as(sqlx::AssertSqlSafe(select.to_string()))
                            .bind(param)
                            .fetch_all(&mut *tx)
                            .await
                            .map_err(backend("selecting finished tasks to purge"))?;
                    if victims.is_empty() {
                        return Ok((0, 0));
                    }
                    let keys = serde_json::to_string(&victims)
                        .map_err(|e| StoreError::Backend(format!("encoding purge keys: {e}")))?;
                    // The keys as rows of (tenant, id).
                    const KEYS: &str = "SELECT value ->> 0, value ->> 1 FROM json_each(?1)";
                    for table in ["push_outbox", "push_configs"] {
                        sqlx::query(sqlx::AssertSqlSafe(format!(
                            "DELETE FROM {table} WHERE (tenant, task_id) IN ({KEYS})"
                        )))
                        .bind(keys.as_str())
                        .execute(&mut *tx)
                        .await
                        .map_err(backend(format!("purging {table}")))?;
                    }
                    // The event log goes with its task (ON DELETE CASCADE).
                    let done = sqlx::query(sqlx::AssertSqlSafe(format!(
                        "DELETE FROM tasks WHERE (tenant, id) IN ({KEYS})"
                    )))
                    .bind(keys.as_str())
                    .execute(&mut *tx)
                    .await
                    .map_err(backend("purging finished tasks"))?;
                    Ok((victims.len(), done.rows_affected()))
                })
                .await?;
            purged += deleted;
            if named < PURGE_BATCH {
                return Ok(purged);
            }
        }
    }
}

/// Writes `rows` in one `BEGIN IMMEDIATE` transaction. The outer
/// error means nothing was written; inner errors are per-commit sequence
/// conflicts (those commits changed nothing, the others were written).
async fn write_group(
    pool: &Writer,
    rows: &[&TaskRow],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let mut conn = pool.connection().await?;
    let outcome = write_many(conn.begin(), rows).await;
    // On failure this rolls back whatever is still open (see `writer`).
    conn.finish(outcome).await
}

/// Several commits at once, in two round trips to SQLite whatever their
/// number: `BEGIN IMMEDIATE` with the read of where every task's log ends and
/// what its owner holds, then (decided here, in order: later commits of the
/// same task see the earlier ones) the last accepted snapshot of each task,
/// all accepted events and the owners' new counts as multi-row statements,
/// with `COMMIT`, in one multi-statement query. Each round trip to the
/// connection's worker thread costs about as much as a small statement, so
/// the statements travel together. The write lock is held from `BEGIN
/// IMMEDIATE`, so nothing changes between the read and the writes.
async fn write_many(
    conn: &mut sqlx::SqliteConnection,
    rows: &[&TaskRow],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    // The distinct tasks of the group, and each row's task.
    let mut index: HashMap<(&str, &str), usize> = HashMap::with_capacity(rows.len());
    let mut tasks: Vec<&TaskRow> = Vec::with_capacity(rows.len());
    let row_task: Vec<usize> = rows
        .iter()
        .map(|row| {
            *index
                .entry((row.tenant.as_str(), row.id.as_str()))
                .or_insert_with(|| {
                    tasks.push(row);
                    tasks.len() - 1
                })
        })
        .collect();

    let mut seqs = vec![0_i64; tasks.len()];
    // The size of each task's stored snapshot, for the quota.
    let mut snapshots = vec![0_i64; tasks.len()];
    // What each owner holds now (`storage_usage`).
    let mut usage: HashMap<(&str, &str), i64> = HashMap::new();
    let mut begun = false;
    for chunk in chunks(&tasks) {
        // A join from the keys, not `(tenant, id) IN (VALUES …)`, which
        // SQLite answers with a full scan of `tasks`. A `LEFT JOIN` keeps the
        // keys as the outer loop: one primary-key lookup per task and owner.
        let mut qb = QueryBuilder::<Sqlite>::new(if begun {
            "SELECT "
        } else {
            "BEGIN IMMEDIATE; SELECT "
        });
        begun = true;
        qb.push(
            "k.column1 AS tenant, k.column2 AS id, k.column3 AS owner, t.last_seq, \
             octet_length(t.task_json) AS snapshot_bytes, u.bytes AS used FROM (",
        );
        qb.push_values(chunk, |mut b, row| {
            b.push_bind(row.tenant.as_str())
                .push_bind(row.id.as_str())
                .push_bind(row.owner.as_str());
        });
        qb.push(
            ") AS k LEFT JOIN tasks AS t ON t.tenant = k.column1 AND t.id = k.column2 \
             LEFT JOIN storage_usage AS u ON u.tenant = k.column1 AND u.owner = k.column3",
        );
        let found = qb
            .build()
            .fetch_all(&mut *conn)
            .await
            .map_err(backend("reading task sequences"))?;
        for r in &found {
            let tenant: String = column(r, "tenant")?;
            let id: String = column(r, "id")?;
            let Some(&t) = index.get(&(tenant.as_str(), id.as_str())) else {
                continue;
            };
            let last_seq: Option<i64> = column(r, "last_seq")?;
            let snapshot: Option<i64> = column(r, "snapshot_bytes")?;
            seqs[t] = last_seq.unwrap_or(0);
            snapshots[t] = snapshot.unwrap_or(0);
            let used: Option<i64> = column(r, "used")?;
            if let Some(used) = used {
                let task = tasks[t];
                usage.insert((task.tenant.as_str(), task.owner.as_str()), used);
            }
        }
    }

    let mut outcomes = Vec::with_capacity(rows.len());
    let mut latest: Vec<Option<&TaskRow>> = vec![None; tasks.len()];
    // What the accepted commits append to each task's log, in bytes.
    let mut log_bytes = vec![0_i64; tasks.len()];
    // What they grow each owner by.
    let mut grew: HashMap<(&str, &str), i64> = HashMap::new();
    let mut events = Vec::with_capacity(rows.len());
    for (row, &t) in rows.iter().zip(&row_task) {
        if seqs[t] != row.expected {
            outcomes.push(Err(conflict(row, seqs[t])));
            continue;
        }
        let held = usage
            .entry((row.tenant.as_str(), row.owner.as_str()))
            .or_default();
        let after = held.saturating_sub(snapshots[t]).saturating_add(row.added);
        if let Some(max) = row.quota
            && after > max
            && after > *held
        {
            outcomes.push(Err(quota::exceeded(&row.owner, to_u64(after), to_u64(max))));
            continue;
        }
        *held = after;
        let growth = row.added.saturating_sub(snapshots[t]);
        let owner_grew = grew
            .entry((row.tenant.as_str(), row.owner.as_str()))
            .or_default();
        *owner_grew = owner_grew.saturating_add(growth);
        let snapshot = i64::try_from(row.task_json.len()).unwrap_or(i64::MAX);
        snapshots[t] = snapshot;
        log_bytes[t] = log_bytes[t].saturating_add(row.added.saturating_sub(snapshot));
        seqs[t] = row.last_seq;
        latest[t] = Some(*row);
        events.extend(row.events.iter().map(|e| (*row, e)));
        outcomes.push(Ok(()));
    }

    let snapshots: Vec<(&TaskRow, i64)> = latest
        .into_iter()
        .zip(log_bytes)
        .filter_map(|(row, log)| Some((row?, log)))
        .collect();
    let grew: Vec<((&str, &str), i64)> = grew.into_iter().filter(|(_, g)| *g != 0).collect();
    // Every write and the `COMMIT`, as one query: the anonymous parameters
    // of its statements are bound in order across them.
    let mut qb = QueryBuilder::<Sqlite>::new(if begun { "" } else { "BEGIN IMMEDIATE;" });
    for chunk in chunks(&snapshots) {
        qb.push(concat!(
            "INSERT INTO tasks (",
            task_columns!(),
            ", log_bytes) "
        ));
        qb.push_values(chunk, |mut b, (row, log)| {
            bind_task_columns!(b, push_bind, row).push_bind(*log);
        });
        qb.push(upsert_task!()).push(";");
    }
    for chunk in chunks(&events) {
        qb.push("INSERT INTO task_events (tenant, task_id, seq, event_json, status_at, is_task) ");
        qb.push_values(chunk, |mut b, (row, event)| {
            b.push_bind(row.tenant.as_str())
                .push_bind(row.id.as_str())
                .push_bind(event.seq)
                .push_bind(event.json.as_str())
                .push_bind(event.status_at.as_deref())
                .push_bind(event.is_task);
        });
        qb.push(";");
    }
    for chunk in chunks(&grew) {
        qb.push("INSERT INTO storage_usage (tenant, owner, bytes) ");
        qb.push_values(chunk, |mut b, ((tenant, owner), bytes)| {
            b.push_bind(*tenant).push_bind(*owner).push_bind(*bytes);
        });
        qb.push(" ON CONFLICT (tenant, owner) DO UPDATE SET bytes = bytes + excluded.bytes;");
    }
    qb.push("COMMIT");
    qb.build().execute(&mut *conn).await.map_err(|e| {
        let what = match events.as_slice() {
            [(row, event)] => format!("appending event {} of task {}", event.seq, row.id),
            _ => format!(
                "writing {} tasks and appending {} events",
                snapshots.len(),
                events.len()
            ),
        };
        backend(what)(e)
    })?;
    Ok(outcomes)
}

/// Splits `items` into chunks whose sizes are powers of two up to
/// [`MAX_CHUNK`], so multi-row statements come in a few shapes that all stay
/// in the prepared-statement cache.
fn chunks<'a, T>(mut items: &'a [T]) -> impl Iterator<Item = &'a [T]> + 'a {
    std::iter::from_fn(move || {
        let n = items.len().min(MAX_CHUNK);
        if n == 0 {
            return None;
        }
        let (head, tail) = items.split_at(1 << n.ilog2());
        items = tail;
        Some(head)
    })
}

/// A count read from SQLite, where it is never negative.
fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn conflict(row: &TaskRow, found: i64) -> StoreError {
    StoreError::SequenceConflict {
        task_id: row.id.clone(),
        expected: u64::try_from(row.expected).unwrap_or(0),
        found: u64::try_from(found).unwrap_or(0),
    }
}

// ----------------------------------------------------------------------------
// Reads.

/// The columns every record query selects, in the order [`decode_record`] reads.
const RECORD_COLUMNS: &str =
    "tenant, owner, last_seq, created_at, task_json, status_micros, status_subus_nanos";

fn decode_record(row: &SqliteRow) -> Result<TaskRecord, StoreError> {
    rows::task_record(&Columns(row), |row, task_id| {
        let created_at = row.text("created_at")?;
        parse_exact(&created_at).map_err(|e| {
            StoreError::Corrupt(format!("task {task_id}: created_at {created_at:?}: {e}"))
        })
    })
}

fn column<T>(row: &SqliteRow, name: &str) -> Result<T, StoreError>
where
    T: for<'r> sqlx::Decode<'r, Sqlite> + sqlx::Type<Sqlite>,
{
    row.try_get(name)
        .map_err(|e| StoreError::Corrupt(format!("column {name}: {e}")))
}

/// A SQLite row as the shared decoders of [`switchboard_core::store::rows`]
/// read it.
pub(crate) struct Columns<'r>(pub(crate) &'r SqliteRow);

impl SqlRow for Columns<'_> {
    fn opt_text(&self, name: &str) -> Result<Option<String>, StoreError> {
        column(self.0, name)
    }

    fn opt_int(&self, name: &str) -> Result<Option<i64>, StoreError> {
        column(self.0, name)
    }
}

/// Appends ` WHERE …` with the filters of `q` (everything but the cursor).
fn push_filters(qb: &mut QueryBuilder<Sqlite>, q: &TaskQuery) {
    qb.push(" WHERE tenant = ").push_bind(q.tenant.clone());
    if !q.all_owners {
        qb.push(" AND owner = ").push_bind(q.owner.clone());
    }
    if let Some(context_id) = &q.context_id {
        qb.push(" AND context_id = ").push_bind(context_id.clone());
    }
    if let Some(state) = q.state {
        qb.push(" AND state = ").push_bind(state.as_str());
    }
    if let Some(after) = q.status_after {
        // status_time >= after, exactly, on the split (micros, rest) columns.
        let (micros, rest) = (to_micros(after), sub_nanos(after));
        qb.push(" AND status_micros >= ").push_bind(micros);
        if rest > 0 {
            qb.push(" AND (status_micros > ").push_bind(micros);
            qb.push(" OR status_subus_nanos >= ")
                .push_bind(rest)
                .push(")");
        }
    }
}

impl SqliteStore {
    /// Both commits: the events are encoded where they are.
    async fn commit_encoded<E: StoredEvent>(
        &self,
        record: &TaskRecord,
        events: &[E],
    ) -> Result<(), StoreError> {
        let row = TaskRow::encode(record, events, &self.quota)?;
        let (reply, result) = oneshot::channel();
        let stopped = || {
            StoreError::Backend(format!(
                "the SQLite writer for {:?} has stopped",
                self.location
            ))
        };
        self.writes
            .send(Job { row, reply })
            .await
            .map_err(|_| stopped())?;
        result.await.map_err(|_| stopped())??;
        if !events.is_empty() {
            self.push.committed(&record.tenant, &record.task.id);
        }
        Ok(())
    }
}

#[async_trait]
impl TaskStore for SqliteStore {
    fn take_abandoned_runs_where(&self, tenant: &dyn Fn(&str) -> bool) -> Vec<(String, String)> {
        let Ok(mut runs) = self.abandoned.lock() else {
            return Vec::new();
        };
        let (taken, left) = std::mem::take(&mut *runs)
            .into_iter()
            .partition(|(t, _)| tenant(t));
        *runs = left;
        taken
    }

    /// A read on a reader connection: the file is readable and every
    /// migration this build embeds is recorded as applied; and writes work:
    /// the last one succeeded, or a probe write does now (`writer`).
    async fn health(&self) -> Result<(), StoreError> {
        let applied: i64 = sqlx::query_scalar(
            "SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations WHERE success",
        )
        .fetch_one(&self.readers)
        .await
        .map_err(|e| StoreError::Backend(format!("health check: {e}")))?;
        let latest = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
        if applied < latest {
            return Err(StoreError::Backend(format!(
                "schema at migration {applied}, this build needs {latest}"
            )));
        }
        self.writer.probe().await
    }

    /// Push configs and the outbox live beside the tasks.
    fn push_store(
        self: std::sync::Arc<Self>,
    ) -> Option<std::sync::Arc<dyn switchboard_core::PushStore>> {
        Some(self)
    }

    async fn commit_events(
        &self,
        record: &TaskRecord,
        events: &[StreamResponse],
    ) -> Result<(), StoreError> {
        self.commit_encoded(record, events).await
    }

    async fn commit_shared(
        &self,
        record: &TaskRecord,
        events: &[Arc<LoggedEvent>],
    ) -> Result<(), StoreError> {
        self.commit_encoded(record, events).await
    }

    async fn purge(&self, retention: &Retention, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut purged = 0;
        if let Some(cutoff) = retention.cutoff(now) {
            let select = format!(
                "SELECT tenant, id FROM tasks INDEXED BY tasks_finished \
                 WHERE {FINISHED} AND status_micros < ?1 AND {NOTHING_PENDING} LIMIT {PURGE_BATCH}"
            );
            purged += self.purge_batches(&select, to_micros(cutoff)).await?;
        }
        if let Some(max) = retention.max_finished {
            let select = format!(
                "SELECT tenant, id FROM tasks INDEXED BY tasks_finished \
                 WHERE {FINISHED} AND {NOTHING_PENDING} \
                 ORDER BY status_micros DESC, id DESC LIMIT {PURGE_BATCH} OFFSET ?1"
            );
            purged += self
                .purge_batches(&select, i64::try_from(max).unwrap_or(i64::MAX))
                .await?;
        }
        Ok(purged)
    }

    async fn load(&self, tenant: &str, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT tenant, owner, last_seq, created_at, task_json, status_micros, \
             status_subus_nanos FROM tasks WHERE tenant = ?1 AND id = ?2",
        )
        .bind(tenant)
        .bind(task_id)
        .fetch_optional(&self.readers)
        .await
        .map_err(backend(format!("loading task {task_id}")))?;
        row.as_ref().map(decode_record).transpose()
    }

    async fn list(&self, q: &TaskQuery) -> Result<TaskPage, StoreError> {
        let mut page_sql =
            QueryBuilder::<Sqlite>::new(format!("SELECT {RECORD_COLUMNS} FROM tasks"));
        push_filters(&mut page_sql, q);
        if let Some(cursor) = &q.after {
            // (status_micros, id) < (cursor), in a form every SQL dialect and
            // the list index handle well.
            page_sql
                .push(" AND status_micros <= ")
                .push_bind(cursor.status_micros);
            page_sql
                .push(" AND (status_micros < ")
                .push_bind(cursor.status_micros);
            page_sql
                .push(" OR id < ")
                .push_bind(cursor.task_id.clone())
                .push(")");
        }
        // One extra row tells whether there is a next page.
        let fetch = i64::try_from(q.limit).unwrap_or(i64::MAX).saturating_add(1);
        page_sql
            .push(" ORDER BY status_micros DESC, id DESC LIMIT ")
            .push_bind(fetch);

        let mut count_sql = QueryBuilder::<Sqlite>::new("SELECT COUNT(*) FROM tasks");
        push_filters(&mut count_sql, q);

        // Both reads in one transaction see the same snapshot.
        let mut tx = self
            .readers
            .begin()
            .await
            .map_err(backend("starting a read transaction"))?;
        let rows = page_sql
            .build()
            .fetch_all(&mut *tx)
            .await
            .map_err(backend("listing tasks"))?;
        let total: i64 = count_sql
            .build_query_scalar()
            .fetch_one(&mut *tx)
            .await
            .map_err(backend("counting tasks"))?;
        commit_tx(tx, "ending a read transaction").await?;

        let records = rows
            .iter()
            .map(decode_record)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows::task_page(records, q.limit, total))
    }

    async fn events(&self, query: EventQuery<'_>) -> Result<Vec<LoggedEvent>, StoreError> {
        let task_id = query.task_id;
        let Ok(after) = i64::try_from(query.after) else {
            return Ok(Vec::new());
        };
        let rows = sqlx::query(
            "SELECT seq, event_json, status_at FROM task_events \
             WHERE tenant = ?1 AND task_id = ?2 AND seq > ?3 ORDER BY seq LIMIT ?4",
        )
        .bind(query.tenant)
        .bind(task_id)
        .bind(after)
        .bind(rows::db_limit(query.limit))
        .fetch_all(&self.readers)
        .await
        .map_err(backend(format!("reading events of task {task_id}")))?;
        rows.iter()
            .map(|row| {
                // The JSON has milliseconds; `status_at` has the exact time.
                rows::logged_event(&Columns(row), task_id, |row| {
                    let status_at = row.opt_text("status_at").map_err(|e| e.to_string())?;
                    status_at
                        .map(|exact| parse_exact(&exact).map_err(|e| e.to_string()))
                        .transpose()
                })
            })
            .collect()
    }
}

// ----------------------------------------------------------------------------
// Helpers.

/// Commits the read transaction `tx`; `what` names it in the error.
async fn commit_tx(tx: Transaction<'_, Sqlite>, what: &str) -> Result<(), StoreError> {
    tx.commit().await.map_err(backend(what))
}

/// RFC 3339 with all the precision there is (the wire form stops at ms).
fn format_exact(ts: DateTime<Utc>) -> String {
    ts.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

fn parse_exact(s: &str) -> Result<DateTime<Utc>, chrono::ParseError> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc))
}

/// [`switchboard_core::store::sub_micro_nanos`] in this store's column type.
fn sub_nanos(ts: DateTime<Utc>) -> i64 {
    i64::from(switchboard_core::store::sub_micro_nanos(ts))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use sqlx::pool::PoolConnection;

    /// `PRAGMA cache_size` as `conn` sees it.
    async fn cache_size_of(conn: &mut PoolConnection<Sqlite>) -> i64 {
        sqlx::query_scalar("PRAGMA cache_size")
            .fetch_one(&mut **conn)
            .await
            .unwrap()
    }

    /// The page-cache budget of the crate docs, "Memory": every connection
    /// gets its configured cache, and the whole read pool is open from the
    /// start so the shared budget never grows later.
    #[tokio::test]
    async fn every_connection_gets_its_page_cache_budget_from_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.db");
        for (options, writer, reader) in [
            (SqliteOptions::default(), -2000, -64),
            (
                SqliteOptions {
                    max_connections: 2,
                    writer_cache_kib: 512,
                    reader_cache_kib: 0,
                    ..Default::default()
                },
                -512,
                0,
            ),
        ] {
            let readers = options.max_connections;
            let store = SqliteStore::open_with(path.to_str().unwrap(), options)
                .await
                .unwrap();
            assert_eq!(store.readers.size(), readers, "all readers open at start");
            let mut w = store.writer.pool().acquire().await.unwrap();
            assert_eq!(cache_size_of(&mut w).await, writer);
            drop(w);
            // Hold every reader at once, so each connection is checked.
            let mut held = Vec::new();
            for _ in 0..readers {
                let mut r = store.readers.acquire().await.unwrap();
                assert_eq!(cache_size_of(&mut r).await, reader);
                held.push(r);
            }
            drop(held);
            store.close().await;
        }
    }
}
