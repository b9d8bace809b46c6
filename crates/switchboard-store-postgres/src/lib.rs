//! # switchboard-store-postgres: a durable [`TaskStore`] on PostgreSQL
//!
//! [`PgStore`] keeps switchboard's tasks and their event logs in a
//! PostgreSQL database. It passes the same conformance suite as the
//! in-memory and SQLite stores and has the same semantics, and, unlike them,
//! it is meant to be shared: **several server replicas may open the same
//! database at once**, and every commit stays correct because the database,
//! not the process, decides which writer wins.
//!
//! ```no_run
//! # async fn demo() -> Result<(), switchboard_core::StoreError> {
//! use std::time::Duration;
//! use switchboard_store_postgres::{PgOptions, PgStore};
//!
//! let store = PgStore::open("postgres://switchboard:secret@db.internal/switchboard").await?;
//! // Or tune the pool:
//! let tuned = PgStore::open_with(
//!     "postgresql://switchboard@127.0.0.1:5432/switchboard?sslmode=require",
//!     PgOptions { max_connections: 32, connect_timeout: Duration::from_secs(2), ..Default::default() },
//! ).await?;
//! # let _ = (store, tuned); Ok(()) }
//! ```
//!
//! ## What is stored
//!
//! Two tables, created by the embedded migrations in `migrations/` (run at
//! every open under sqlx's advisory lock, so replicas starting together do
//! not race; applied migrations are recorded in `_sqlx_migrations`):
//!
//! - `tasks`: one row per `(tenant, id)` with the **latest snapshot** as JSON
//!   (`task_json`, the A2A `Task` wire form: status, all artifacts, the whole
//!   history) and the columns queries need: `context_id`, `owner`, `state`,
//!   the status time (`status_micros` + `status_subus_nanos`, falling back to
//!   the creation time like [`TaskRecord::status_time`]), the creation time
//!   (`created_micros` + `created_subus_nanos`) and `last_seq`, the sequence
//!   number of the last logged event. Two indexes serve ListTasks:
//!   `(tenant, owner, status_micros, id)` and the same with `context_id`
//!   after `owner`, read backward for the newest-first order. They are
//!   ascending because new tasks have the latest status times: their entries
//!   then go to the rightmost leaf page, which a B-tree fills before it
//!   splits (migration `0009` says why that keeps them half the size).
//! - `task_events`: one row per event of a task's **log**, keyed by
//!   `(tenant, task_id, seq)`, the event as JSON (`event_json`, the A2A
//!   `StreamResponse` wire form), and `is_task`, set when the event is a
//!   whole task (the push trigger reads it).
//!
//! The wire form writes timestamps to the millisecond, but a store must give
//! back exactly what was committed, so the exact status time is kept in
//! integer columns beside the JSON and put back when a row is read. Times
//! are integers (microseconds since the epoch, plus the nanoseconds below a
//! microsecond) rather than `timestamptz`, which stops at the microsecond.
//! Text that is sorted uses the `"C"` collation, so ListTasks orders ids
//! byte by byte like the other stores, whatever the database's locale.
//!
//! ## How a commit works
//!
//! [`TaskStore::commit`] is **one SQL statement**, hence one transaction and
//! one round trip (shared with other commits, see "Group commit" below). A data-modifying CTE writes the snapshot *only if* the
//! stored `last_seq` is the one the writer expected, and appends the event
//! *only if* the snapshot was written:
//!
//! - for a task whose log is expected to be empty, an
//!   `INSERT … ON CONFLICT (tenant, id) DO UPDATE … WHERE tasks.last_seq = 0`;
//! - otherwise an `UPDATE tasks … WHERE tenant = … AND id = … AND last_seq = expected`.
//!
//! PostgreSQL locks the row it updates and, when another transaction changed
//! that row first, re-checks the `WHERE` against the newest version before
//! writing. So of two writers (in one process or in two replicas) that both
//! expect `last_seq = 4`, exactly one moves it to 5 and appends event 5; the
//! other changes nothing and gets [`StoreError::SequenceConflict`]. Two
//! writers creating the same task collide on the primary key the same way.
//! The `(tenant, task_id, seq)` primary key of `task_events` is a second
//! guard: a log can never hold one sequence number twice.
//!
//! This runs at PostgreSQL's default `READ COMMITTED` isolation and never
//! needs retries: a losing writer waits for the winner's row lock, then
//! sees the new `last_seq` and stops.
//!
//! ### Group commit
//!
//! Commits do not each run their own statement: they queue for a few
//! writers, and each writer sends whatever queued while it was busy as
//! **one** statement (the same conditions, row by row, over `unnest`ed
//! arrays), so many tasks share one round trip, one transaction and one WAL
//! flush; each caller still returns only after that statement's `COMMIT`.
//! A batch holds each task once, in key order, and a statement that fails
//! as a whole is retried commit by commit, so one bad commit fails alone.
//! Each statement also costs PostgreSQL a fixed few hundred microseconds of
//! CPU, so the fewer writers run at once, the bigger and cheaper the
//! batches: [`PgOptions::commit_writers`] (2 by default) is what the
//! database runs at once. Replicas share it: each counts the live replicas
//! at its heartbeat (a row per replica in `replicas`, and a NOTIFY when one
//! joins or leaves) and lets its share of the budget write at once, at
//! least one. See `group.rs` and `cluster.rs`.
//!
//! ### Generic plans
//!
//! The store's connections run with `plan_cache_mode = force_generic_plan`
//! (unless the URL's `options` set it). The statements here are prepared
//! lookups and writes by key, keyset pages over an index and the group
//! commit over arrays of one batch's rows: one plan suits every parameter
//! value, so planning per execution buys nothing. PostgreSQL's default
//! (`auto`) plans such a statement afresh for each execution while it thinks
//! a plan made for the values might be cheaper, and after the tables grow and
//! autoanalyze runs it kept doing so for the group commit's statement: the
//! backends' CPU per task went from 158 to ~380 µs within two minutes of
//! load, most of it in the planner (`bench/RESULTS.md`, "Session 15").
//! Pools given to [`PgStore::from_pool`] are used as they are.
//!
//! ### Where `NOTIFY` goes
//!
//! Replicas announce appends with `NOTIFY` (see `DESIGN.md`, "Several
//! replicas"), but not from the commit statement: NOTIFY holds a global lock
//! until the end of its transaction, which would serialize every commit
//! behind the WAL flush. A replica store queues each applied commit for a
//! background announcer that notifies in batches; see [`cluster`].
//! [`PgStore::pool`] gives the connections for other tables (leases,
//! outbox).
//!
//! ## Push notifications
//!
//! [`PgStore`] is also a [`PushStore`](switchboard_core::PushStore) (see
//! [`push`]): migration `0002_push.sql` adds `push_configs`, `push_outbox`
//! (filled by a trigger on `task_events`, so the commit statement above is
//! unchanged and an event is queued in its own transaction) and
//! `push_signing_keys` (the key set the replicas share). Delivery workers of
//! several replicas claim from the one outbox with `FOR UPDATE SKIP LOCKED`.
//!
//! ## Reads
//!
//! - [`TaskStore::load`]: one primary-key lookup.
//! - [`TaskStore::list`]: keyset pagination in ListTasks order (status time
//!   descending, then id descending; the cursor is `(status_micros, id)`),
//!   fetching one row more than the page to know whether a next page exists.
//!   The `COUNT(*)` of all matching tasks is computed **in the same
//!   statement**, so page and total come from one snapshot.
//! - [`TaskStore::events`]: the log after a sequence number, ascending, with
//!   `LIMIT`.
//!
//! ## Storage quota
//!
//! [`PgOptions::storage_quota`] bounds the bytes each owner (tenant,
//! principal) keeps, counted as the JSON text of its tasks' snapshots and
//! event logs, with the rules of `switchboard_core::store::quota` (finishing
//! a task is never refused). Nothing is scanned and no trigger runs (migration
//! `0014_storage_usage.sql`): each task row carries its sizes
//! (`snapshot_bytes`, `log_bytes`), which the commit sets in the statement
//! that writes the snapshot, and `grew`, what the commit added; the same
//! statement adds its rows' `grew`, per owner, to `storage_usage`, and a
//! purge takes off what the rows it deletes carry. An owner's count is
//! spread over one row per group-commit writer (`shard`, picked at random by
//! each writer) so that writers never wait for each other's lock on it.
//!
//! A commit is decided on the owner's count as its statement begins, plus
//! what the earlier commits of the same owner in that statement write. One
//! statement at a time, that is exact. Statements running at the same time
//! (at most [`PgOptions::commit_writers`] per replica) do not see each
//! other's bytes until they commit, so an owner whose commits meet in
//! several of them can pass its quota by what those statements add: a
//! bounded overshoot, never an unbounded one, since each statement admits
//! only what fits the count it read.
//!
//! ## Retention and vacuum
//!
//! [`TaskStore::purge`] deletes finished tasks in batches of 500, each
//! batch one statement that also deletes their event logs, push configs and
//! queued notifications. A busy server's retention deletes as fast as tasks
//! arrive, and every deleted row stays in its table and indexes, dead,
//! until a vacuum reclaims it; until then commits and reads step over it.
//! Autovacuum looks at a database once per `autovacuum_naptime` (a minute
//! by default, for the whole cluster), so at thousands of tasks a second
//! hundreds of thousands of dead rows pile up between its visits. So once
//! retention has deleted [`PgOptions::vacuum_after_purged`] tasks, the
//! store runs `VACUUM (ANALYZE, SKIP_LOCKED)` on the tables it deleted from
//! itself, on the retention task, not a request's path (`SKIP_LOCKED`: a
//! table an autovacuum worker or another replica is vacuuming is skipped,
//! not waited for). `ANALYZE` because the statistics matter as much: until
//! a table's first analysis the planner plans for an empty table, and
//! PostgreSQL spent ~25 % more CPU per task under retention until
//! autovacuum's first visit analyzed the tables (measured:
//! `bench/RESULTS.md`, session 17); and retention keeps moving the range of
//! status times the statistics describe. A role that does not own the
//! tables gets PostgreSQL's warning and nothing else; autovacuum still runs
//! as configured (migration `0010` takes its cost delay off these tables).
//!
//! ## Durability
//!
//! `commit` returns after PostgreSQL's `COMMIT` returned. With the server's
//! default `synchronous_commit = on`, the write-ahead log is flushed first,
//! so a committed task survives a crash of the server or the machine (and,
//! with synchronous replication configured on the server, of the primary).
//! [`PgOptions::synchronous_commit`] set to `false` turns this off for the
//! store's sessions only: faster, never corrupting, but the last fraction of
//! a second of commits may be lost if the *database server* crashes.
//!
//! ## Errors
//!
//! Connection, SQL and constraint failures are [`StoreError::Backend`] with
//! what was being done; rows that cannot be decoded are
//! [`StoreError::Corrupt`]. Opening connects once, directly and within
//! [`PgOptions::connect_timeout`], so a wrong URL, an unreachable host or a
//! refused password fails fast with PostgreSQL's own reason (the password is
//! never part of a message).
//!
//! ## Testing
//!
//! With the crate feature `testing`, module `testing` starts a private
//! PostgreSQL server from Debian's binaries (no Docker) and hands out fresh
//! databases; `install-postgres.sh` beside this crate installs the binaries
//! when they are missing.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::{Connection, PgConnection, Postgres, QueryBuilder, Row};
pub(crate) use switchboard_core::store::backend;
use switchboard_core::store::quota::{self, StorageQuota};
use switchboard_core::store::rows::{self, SqlRow, db_limit, from_split};
use switchboard_core::store::{seq_to_i64, to_micros};
use switchboard_core::{
    EventQuery, LoggedEvent, Retention, StoreError, StoredEvent, TaskPage, TaskQuery, TaskRecord,
    TaskStore,
};
use switchboard_protocol::{StreamResponse, TaskState};

pub mod cluster;
mod group;
mod health;
pub mod push;
#[cfg(feature = "testing")]
pub mod testing;

pub use cluster::PgCluster;
pub use push::SharedKeyDocument;

/// The schema, embedded at build time from `migrations/`.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Tuning for [`PgStore::open_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// Most connections the pool opens (default 10). Each read holds one
    /// connection for one statement; commits are written by the
    /// group-commit writers ([`commit_writers`](Self::commit_writers)), one
    /// connection each. Mind the server's `max_connections` (100 by
    /// default) across all replicas.
    pub max_connections: u32,
    /// Group-commit statements run at once (default 2, at least 1). Every
    /// statement costs PostgreSQL a fixed few hundred microseconds of CPU
    /// besides its rows (executor start-up, the commit and its WAL flush),
    /// and commits queue while writers are busy, so fewer writers mean
    /// bigger, cheaper batches; two let one batch execute while the next
    /// gathers. On [replicas](PgStore::replica) it is the budget of all the
    /// live replicas together, which share it (at least one each): see the
    /// crate docs, "Group commit".
    pub commit_writers: usize,
    /// How long opening a connection may take, and how long an operation
    /// waits for a free pooled connection, before failing (default 5 s).
    pub connect_timeout: Duration,
    /// Whether commits wait for the server to flush its write-ahead log
    /// (default `true`). `false` sets `synchronous_commit = off` for the
    /// store's sessions: see the crate docs, "Durability".
    pub synchronous_commit: bool,
    /// Shown in `pg_stat_activity` (default `switchboard`).
    pub application_name: String,
    /// Finished tasks retention deletes before the store vacuums the tables
    /// it deleted them from (default 10,000; 0: leave it to autovacuum). See
    /// the crate docs, "Retention and vacuum".
    pub vacuum_after_purged: u64,
    /// The bytes each owner may keep (default: no limit); see the crate
    /// docs, "Storage quota".
    pub storage_quota: StorageQuota,
}

impl Default for PgOptions {
    fn default() -> Self {
        Self {
            max_connections: 10,
            commit_writers: group::WRITERS,
            connect_timeout: Duration::from_secs(5),
            synchronous_commit: true,
            application_name: "switchboard".into(),
            vacuum_after_purged: VACUUM_AFTER_PURGED,
            storage_quota: StorageQuota::default(),
        }
    }
}

/// A [`TaskStore`] in a PostgreSQL database. See the crate docs.
///
/// Cloning is cheap and shares the pool.
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    /// What was opened, without the password, for messages.
    location: String,
    /// Set when this store serves one of several replicas (see
    /// [`PgStore::replica`]): commits then take leases and announce
    /// themselves.
    replica: Option<cluster::Replica>,
    /// Push notification wakeups (see [`push`]).
    push: std::sync::Arc<push::PushShared>,
    /// The group-commit writers' queue (see [`group`]).
    writer: tokio::sync::mpsc::Sender<group::Job>,
    /// How many of them may write at once.
    writers: std::sync::Arc<group::WriterLimit>,
    /// Tasks retention deleted since this store last vacuumed (see
    /// [`PgStore::vacuum_after_purge`]).
    purged_since_vacuum: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// [`PgOptions::vacuum_after_purged`].
    vacuum_after_purged: u64,
    /// Whether commits succeed, for `health` (see the `health` module).
    writes: std::sync::Arc<switchboard_core::store::writes::WriteHealth>,
    /// [`PgOptions::storage_quota`].
    quota: StorageQuota,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgStore")
            .field("location", &self.location)
            .field("pool_size", &self.pool.size())
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Opens the database at `url` (`postgres://…` or `postgresql://…`, with
    /// any of libpq's URL parameters sqlx understands, e.g. `sslmode`) with
    /// default [`PgOptions`], and applies the schema migrations.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_with(url, PgOptions::default()).await
    }

    /// Opens the database at `url` with explicit options.
    ///
    /// Connects once (within [`PgOptions::connect_timeout`]) to apply the
    /// migrations, then builds the pool, which connects on demand. A bad
    /// URL, an unreachable server, a refused login or a missing database is
    /// a [`StoreError::Backend`] naming the target (never the password).
    pub async fn open_with(url: &str, options: PgOptions) -> Result<Self, StoreError> {
        let location = redact(url);
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(StoreError::Backend(format!(
                "invalid PostgreSQL URL {location:?}: expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
            )));
        }
        let mut connect = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::Backend(format!("invalid PostgreSQL URL {location:?}: {e}")))?
            .application_name(&options.application_name);
        if !options.synchronous_commit {
            connect = connect.options([("synchronous_commit", "off")]);
        }
        // See "Generic plans" in the module docs; a URL that sets the mode
        // keeps its choice.
        if !connect
            .get_options()
            .is_some_and(|o| o.contains("plan_cache_mode"))
        {
            connect = connect.options([("plan_cache_mode", "force_generic_plan")]);
        }

        let mut conn = connect_once(&connect, options.connect_timeout, &location).await?;
        let migrated = migrate(&mut conn, &location).await;
        // Closing politely is best effort; the migration result is what counts.
        let _ = conn.close().await;
        migrated?;

        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections.max(1))
            .acquire_timeout(options.connect_timeout)
            .connect_lazy_with(connect);
        Ok(Self::on_migrated(pool, location, &options))
    }

    /// A store on an existing pool (for sharing one pool with other tables).
    /// Applies the schema migrations on one of its connections. The pool's
    /// settings are used as they are: give its connections
    /// `plan_cache_mode = force_generic_plan` (see "Generic plans" in the
    /// [crate docs](crate)).
    pub async fn from_pool(pool: PgPool) -> Result<Self, StoreError> {
        let options = pool.connect_options();
        let location = format!(
            "postgres://{}@{}:{}/{}",
            options.get_username(),
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or("")
        );
        let mut conn = pool
            .acquire()
            .await
            .map_err(backend(format!("connecting to PostgreSQL at {location}")))?;
        migrate(&mut conn, &location).await?;
        drop(conn);
        Ok(Self::on_migrated(pool, location, &PgOptions::default()))
    }

    /// The store on `pool`, whose database has the current schema, with
    /// `options`' writers and vacuum threshold (the pool is already built).
    fn on_migrated(pool: PgPool, location: String, options: &PgOptions) -> Self {
        let (writer, writers) = group::start(pool.clone(), options.commit_writers);
        Self {
            writer,
            writers,
            pool,
            location,
            replica: None,
            push: Default::default(),
            purged_since_vacuum: Default::default(),
            vacuum_after_purged: options.vacuum_after_purged,
            writes: Default::default(),
            quota: options.storage_quota,
        }
    }

    /// How many group-commit statements this store may run at once now:
    /// [`PgOptions::commit_writers`], or on a [replica](Self::replica) its
    /// share of them while other replicas are alive.
    pub fn commit_writers(&self) -> usize {
        self.writers.get()
    }

    /// The connection pool, for `LISTEN` (`sqlx::postgres::PgListener::connect_with`)
    /// and for tables that live beside the task store.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Closes every pooled connection, waiting for the ones in use.
    pub async fn close(self) {
        self.pool.close().await;
    }
}

/// Applies the embedded migrations on `conn`, under sqlx's advisory lock
/// (so replicas starting together apply each migration once).
///
/// `Migrator::run` takes an `Acquire` whose higher-ranked lifetime makes the
/// calling future `!Send` (it could not be spawned on a multi-threaded
/// runtime); `run_direct`, the same code on a plain connection, avoids that.
async fn migrate(conn: &mut PgConnection, location: &str) -> Result<(), StoreError> {
    MIGRATOR.run_direct(None, conn, false).await.map_err(|e| {
        StoreError::Backend(format!("applying the schema migrations to {location}: {e}"))
    })
}

/// One direct connection, with a deadline, so failures carry their reason
/// (the pool would retry a refused connection until its timeout and then
/// report only "timed out").
async fn connect_once(
    connect: &PgConnectOptions,
    timeout: Duration,
    location: &str,
) -> Result<PgConnection, StoreError> {
    match tokio::time::timeout(timeout, PgConnection::connect_with(connect)).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(StoreError::Backend(format!(
            "connecting to PostgreSQL at {location}: {e}"
        ))),
        Err(_) => Err(StoreError::Backend(format!(
            "connecting to PostgreSQL at {location}: no answer within {timeout:?}"
        ))),
    }
}

/// `url` with the password, if any, replaced by `***`.
fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest_start = scheme_end + 3;
    let rest = &url[rest_start..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_string();
    };
    let userinfo = &authority[..at];
    match userinfo.find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..rest_start],
            &userinfo[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

// ----------------------------------------------------------------------------
// Writes.

/// The columns of a commit, computed before talking to the database.
pub(crate) struct TaskRow {
    tenant: String,
    id: String,
    context_id: String,
    owner: String,
    state: &'static str,
    status_micros: i64,
    status_subus_nanos: i32,
    created_micros: i64,
    created_subus_nanos: i32,
    last_seq: i64,
    /// The `last_seq` the stored row must have for this commit to apply.
    expected: i64,
    task_json: String,
    /// The events to append, as the parallel arrays the statement unnests:
    /// sequence numbers, JSON, the exact status time where an event has one
    /// (see `StreamResponse::status_timestamp`), and whether the event is a
    /// whole task (`task_events.is_task`, read by the push trigger).
    event_seqs: Vec<i64>,
    event_jsons: Vec<String>,
    event_status_micros: Vec<Option<i64>>,
    event_status_nanos: Vec<Option<i32>>,
    event_is_task: Vec<bool>,
    /// The length of `task_json`, and of the events' JSON added up: what
    /// the commit writes, as `tasks.snapshot_bytes` and what it adds to
    /// `tasks.log_bytes` (migration 0014).
    snapshot_bytes: i64,
    log_bytes: i64,
    /// The owner's storage quota in bytes, if it applies to this commit (not
    /// to one finishing an existing task, see `store::quota`).
    quota: Option<i64>,
}

impl TaskRow {
    fn encode<E: StoredEvent>(
        record: &TaskRecord,
        events: &[E],
        quota: &StorageQuota,
    ) -> Result<Self, StoreError> {
        let id = &record.task.id;
        let expected = record.expected_stored_seq(events.len());
        let mut event_seqs = Vec::with_capacity(events.len());
        let mut event_jsons = Vec::with_capacity(events.len());
        let mut event_status_micros = Vec::with_capacity(events.len());
        let mut event_status_nanos = Vec::with_capacity(events.len());
        let mut event_is_task = Vec::with_capacity(events.len());
        for (event, seq) in events.iter().zip(record.first_event_seq(events.len())..) {
            let event = event.event();
            event_seqs.push(seq_to_i64(seq, id)?);
            event_jsons.push(serde_json::to_string(event).map_err(|e| {
                StoreError::Backend(format!("encoding event {seq} of task {id}: {e}"))
            })?);
            let status = event.status_timestamp();
            event_status_micros.push(status.map(|ts| to_micros(*ts)));
            event_status_nanos.push(status.map(|ts| sub_nanos(*ts)));
            event_is_task.push(matches!(event, StreamResponse::Task(_)));
        }
        let status_time = record.status_time();
        let task_json = serde_json::to_string(&record.task)
            .map_err(|e| StoreError::Backend(format!("encoding task {id}: {e}")))?;
        let bytes = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        let log_bytes = bytes(event_jsons.iter().map(String::len).sum());
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
            created_subus_nanos: sub_nanos(record.created_at),
            last_seq: seq_to_i64(record.last_seq, id)?,
            expected: seq_to_i64(expected, id)?,
            snapshot_bytes: bytes(task_json.len()),
            task_json,
            event_seqs,
            event_jsons,
            event_status_micros,
            event_status_nanos,
            event_is_task,
            log_bytes,
            quota,
        })
    }

    /// The bytes the commit writes: its snapshot and its events.
    fn added(&self) -> i64 {
        self.snapshot_bytes.saturating_add(self.log_bytes)
    }
}

// The commit statements. Parameters: $1 tenant, $2 id, $3 context_id,
// $4 owner, $5 state, $6 status_micros, $7 status_subus_nanos,
// $8 created_micros, $9 created_subus_nanos, $10 last_seq, $11 task JSON,
// $12 the expected stored last_seq, $13..$16 and $19 the events as parallel
// arrays (sequence, JSON, exact status time in micros and the sub-micro rest,
// NULL where an event has none; whether it is a task; empty arrays: no
// event), $17 the lease holder (NULL: none), $18 the lease length in
// microseconds, $20 the owner's quota in bytes if it applies (`TaskRow::quota`,
// NULL: none), $21 and $22 the bytes of the snapshot and of the events
// (`TaskRow::snapshot_bytes`, `log_bytes`), $23 the `storage_usage` shard
// the commit adds to. Each returns one row, `applied`: 1 if the commit was
// written, 0 on a sequence conflict or a refusal by the quota (nothing was
// written).
//
// Replicas are told of a commit by a `NOTIFY` sent *after* it, batched with
// others by the replica's announcer (see `cluster::announce`): a NOTIFY inside the commit
// would hold PostgreSQL's global notify lock across the WAL flush and so
// serialize every commit of every replica.

/// What the owner holds now: its `storage_usage` rows added up. Used only
/// where a quota applies; PostgreSQL evaluates it only when asked.
macro_rules! used {
    () => {
        "(SELECT COALESCE(sum(bytes), 0) FROM storage_usage WHERE tenant = $1 AND owner = $4)"
    };
}

/// Adds what the snapshot CTE `put` grew its owner by to the owner's count
/// (this writer's shard), appends the events only if `put` wrote a row,
/// then reports whether it did.
macro_rules! append_and_report {
    () => {
        "), counted AS ( \
             INSERT INTO storage_usage AS u (tenant, owner, shard, bytes) \
             SELECT $1, owner, $23, grew FROM put WHERE grew <> 0 \
             ON CONFLICT (tenant, owner, shard) DO UPDATE SET bytes = u.bytes + excluded.bytes \
         ), appended AS ( \
             INSERT INTO task_events \
                 (tenant, task_id, seq, event_json, status_micros, status_subus_nanos, \
                  is_task) \
             SELECT $1, $2, e.seq, e.json::json, e.micros, e.nanos, e.is_task \
             FROM put, unnest($13::bigint[], $14::text[], $15::bigint[], $16::int[], \
                              $19::boolean[]) \
                 AS e (seq, json, micros, nanos, is_task) \
         ) \
         SELECT count(*) AS applied FROM put"
    };
}

/// When a lease given now runs out: the database's clock, so replicas with
/// skewed clocks agree.
macro_rules! lease_until {
    () => {
        "CASE WHEN $17::text IS NULL THEN NULL \
             ELSE (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + $18 END"
    };
}

/// The `ON CONFLICT` clause of a task's creation: the new row replaces the
/// stored one (under the caller's `WHERE` on `tasks.last_seq`).
macro_rules! replace_snapshot {
    () => {
        "ON CONFLICT (tenant, id) DO UPDATE SET \
             context_id = excluded.context_id, owner = excluded.owner, state = excluded.state, \
             status_micros = excluded.status_micros, \
             status_subus_nanos = excluded.status_subus_nanos, \
             created_micros = excluded.created_micros, \
             created_subus_nanos = excluded.created_subus_nanos, \
             last_seq = excluded.last_seq, task_json = excluded.task_json, \
             lease_owner = excluded.lease_owner, lease_until = excluded.lease_until, \
             snapshot_bytes = excluded.snapshot_bytes, \
             log_bytes = tasks.log_bytes + excluded.log_bytes, \
             grew = excluded.snapshot_bytes + excluded.log_bytes - tasks.snapshot_bytes"
    };
}
pub(crate) use replace_snapshot;

/// A commit to a task whose log is empty so far (`expected = 0`): creates
/// the task, or replaces its snapshot if the stored `last_seq` is still 0.
/// Two creators of one task collide on the primary key; the second then
/// finds `last_seq` moved on and writes nothing. Under a quota, nothing is
/// written either if what it writes would take its owner past it.
const COMMIT_FIRST: &str = concat!(
    "WITH put AS ( \
         INSERT INTO tasks (tenant, id, context_id, owner, state, status_micros, \
             status_subus_nanos, created_micros, created_subus_nanos, last_seq, task_json, \
             lease_owner, lease_until, snapshot_bytes, log_bytes, grew) \
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::json, $17, ",
    lease_until!(),
    ", $21, $22, $21 + $22 \
         WHERE $20::bigint IS NULL OR ",
    used!(),
    " + $21 + $22 <= $20 ",
    replace_snapshot!(),
    " WHERE tasks.last_seq = $12 \
         RETURNING owner, grew",
    append_and_report!()
);

/// A commit after the log's event `expected`: replaces the snapshot if the
/// stored `last_seq` is exactly `expected` (a missing task is a conflict)
/// and, under a quota, the commit does not grow its owner past it.
const COMMIT_NEXT: &str = concat!(
    "WITH put AS ( \
         UPDATE tasks SET context_id = $3, owner = $4, state = $5, status_micros = $6, \
             status_subus_nanos = $7, created_micros = $8, created_subus_nanos = $9, \
             last_seq = $10, task_json = $11::json, lease_owner = $17, lease_until = ",
    lease_until!(),
    ", snapshot_bytes = $21, log_bytes = log_bytes + $22, grew = $21 + $22 - snapshot_bytes \
         WHERE tenant = $1 AND id = $2 AND last_seq = $12 \
             AND ($20::bigint IS NULL OR $21 + $22 - snapshot_bytes <= 0 \
                  OR ",
    used!(),
    " + $21 + $22 - snapshot_bytes <= $20) \
         RETURNING owner, grew",
    append_and_report!()
);

// ----------------------------------------------------------------------------
// Retention.

/// The finished states, as SQL.
const FINISHED: &str = "state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', \
     'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')";

/// No notification of the task is waiting to be delivered.
const NOTHING_PENDING: &str = "NOT EXISTS (SELECT 1 FROM push_outbox AS o \
     WHERE o.tenant = tasks.tenant AND o.task_id = tasks.id AND o.state = 0)";

/// Tasks deleted per statement, so a large purge holds few locks at a time.
const PURGE_BATCH: usize = 500;

/// [`PgOptions::vacuum_after_purged`]'s default.
const VACUUM_AFTER_PURGED: u64 = 10_000;

impl PgStore {
    /// Deletes the tasks `victims` names (at most [`PURGE_BATCH`], given
    /// `param` as `$1` and `id`, if any, as `$2`; their event logs, push configs and dead letters go
    /// in the same statement: the log has no foreign key to cascade, see
    /// migration 0008), statement after statement until it names fewer
    /// than a batch.
    async fn purge_batches(
        &self,
        victims: &str,
        param: i64,
        id: Option<&str>,
    ) -> Result<u64, StoreError> {
        let sql = format!(
            "WITH victims AS ({victims}), \
             outbox AS (DELETE FROM push_outbox AS o USING victims AS v \
                 WHERE o.tenant = v.tenant AND o.task_id = v.id), \
             configs AS (DELETE FROM push_configs AS c USING victims AS v \
                 WHERE c.tenant = v.tenant AND c.task_id = v.id), \
             events AS (DELETE FROM task_events AS e USING victims AS v \
                 WHERE e.tenant = v.tenant AND e.task_id = v.id), \
             gone AS (DELETE FROM tasks AS t USING victims AS v \
                 WHERE t.tenant = v.tenant AND t.id = v.id \
                 RETURNING t.tenant, t.owner, t.snapshot_bytes + t.log_bytes AS bytes), \
             counted AS (INSERT INTO storage_usage AS u (tenant, owner, shard, bytes) \
                 SELECT tenant, owner, 0, -sum(bytes) FROM gone GROUP BY tenant, owner \
                 ORDER BY tenant, owner \
                 ON CONFLICT (tenant, owner, shard) DO UPDATE SET bytes = u.bytes + excluded.bytes) \
             SELECT count(*) FROM gone"
        );
        let mut purged = 0;
        loop {
            let query = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.as_str())).bind(param);
            let done = match id {
                Some(id) => query.bind(id),
                None => query,
            }
            .fetch_one(&self.pool)
            .await
            .map_err(backend("purging finished tasks"))?;
            let done = u64::try_from(done).unwrap_or(0);
            purged += done;
            if done < PURGE_BATCH as u64 {
                return Ok(purged);
            }
        }
    }

    /// Vacuums the tables retention deletes from once it has deleted
    /// [`PgOptions::vacuum_after_purged`] tasks since the last time (see
    /// the crate docs, "Retention and vacuum"). A failed vacuum is logged:
    /// the purge it follows has been committed, and autovacuum remains.
    async fn vacuum_after_purge(&self, purged: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let after = self.vacuum_after_purged;
        if after == 0 || self.purged_since_vacuum.fetch_add(purged, Relaxed) + purged < after {
            return;
        }
        self.purged_since_vacuum.store(0, Relaxed);
        let started = std::time::Instant::now();
        match sqlx::raw_sql(
            "VACUUM (ANALYZE, SKIP_LOCKED) tasks, task_events, push_configs, push_outbox",
        )
        .execute(&self.pool)
        .await
        {
            Ok(_) => tracing::info!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                "vacuumed after retention"
            ),
            Err(e) => tracing::warn!(error = %e, "vacuum after retention failed"),
        }
    }
}

/// Writes one commit alone, with the one-row statements; whether it was
/// applied (`false`: a sequence conflict, nothing written).
pub(crate) async fn write_one(
    pool: &PgPool,
    row: &TaskRow,
    lease_owner: Option<&str>,
    lease_micros: i64,
    shard: i16,
) -> Result<bool, StoreError> {
    let sql = if row.expected == 0 {
        COMMIT_FIRST
    } else {
        COMMIT_NEXT
    };
    let applied: i64 = sqlx::query_scalar(sql)
        .bind(row.tenant.as_str())
        .bind(row.id.as_str())
        .bind(row.context_id.as_str())
        .bind(row.owner.as_str())
        .bind(row.state)
        .bind(row.status_micros)
        .bind(row.status_subus_nanos)
        .bind(row.created_micros)
        .bind(row.created_subus_nanos)
        .bind(row.last_seq)
        .bind(row.task_json.as_str())
        .bind(row.expected)
        .bind(&row.event_seqs)
        .bind(&row.event_jsons)
        .bind(&row.event_status_micros)
        .bind(&row.event_status_nanos)
        .bind(lease_owner)
        .bind(lease_micros)
        .bind(&row.event_is_task)
        .bind(row.quota)
        .bind(row.snapshot_bytes)
        .bind(row.log_bytes)
        .bind(shard)
        .fetch_one(pool)
        .await
        .map_err(backend(format!(
            "committing event {} of task {}",
            row.last_seq, row.id
        )))?;
    Ok(applied == 1)
}

// ----------------------------------------------------------------------------
// Reads.

/// The columns every record query selects, as [`decode_record`] reads them.
const RECORD_COLUMNS: &str = "tenant, owner, last_seq, created_micros, created_subus_nanos, \
     task_json::text AS task_json, status_micros, status_subus_nanos";

fn decode_record(row: &PgRow) -> Result<TaskRecord, StoreError> {
    rows::task_record(&Columns(row), |row, task_id| {
        let micros = row.int("created_micros")?;
        let rest = row.int("created_subus_nanos")?;
        from_split(micros, rest).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "task {task_id}: creation time {micros} µs + {rest} ns"
            ))
        })
    })
}

fn column<T>(row: &PgRow, name: &str) -> Result<T, StoreError>
where
    T: for<'r> sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>,
{
    row.try_get(name)
        .map_err(|e| StoreError::Corrupt(format!("column {name}: {e}")))
}

/// A PostgreSQL row as the shared decoders of
/// [`switchboard_core::store::rows`] read it; `smallint` and `integer`
/// columns are widened to `bigint`.
pub(crate) struct Columns<'r>(pub(crate) &'r PgRow);

impl SqlRow for Columns<'_> {
    fn opt_text(&self, name: &str) -> Result<Option<String>, StoreError> {
        column(self.0, name)
    }

    fn opt_int(&self, name: &str) -> Result<Option<i64>, StoreError> {
        use sqlx::{Column, Type};
        let ty = self
            .0
            .try_column(name)
            .map_err(|e| StoreError::Corrupt(format!("column {name}: {e}")))?
            .type_info();
        if <i16 as Type<Postgres>>::compatible(ty) {
            Ok(column::<Option<i16>>(self.0, name)?.map(i64::from))
        } else if <i32 as Type<Postgres>>::compatible(ty) {
            Ok(column::<Option<i32>>(self.0, name)?.map(i64::from))
        } else {
            column(self.0, name)
        }
    }
}

/// Appends ` WHERE …` with the filters of `q` (everything but the cursor).
fn push_filters(qb: &mut QueryBuilder<Postgres>, q: &TaskQuery) {
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
        // status time >= after, exactly, on the split (micros, rest) columns.
        qb.push(" AND (status_micros, status_subus_nanos) >= (")
            .push_bind(to_micros(after))
            .push(", ")
            .push_bind(sub_nanos(after))
            .push(")");
    }
}

impl PgStore {
    /// Both commits: the events are encoded where they are.
    async fn commit_encoded<E: StoredEvent>(
        &self,
        record: &TaskRecord,
        events: &[E],
    ) -> Result<(), StoreError> {
        let row = TaskRow::encode(record, events, &self.quota)?;
        // A task being worked on is leased to this replica; see `cluster`.
        let active = matches!(
            record.task.status.state,
            TaskState::Submitted | TaskState::Working
        );
        let lease_owner = self
            .replica
            .as_ref()
            .filter(|_| active)
            .map(|r| r.id.clone());
        let lease_micros = self.replica.as_ref().map_or(0, |r| r.lease_micros);
        // What the answer needs after the row went to the writer.
        let (tenant, id, last_seq, expected, quota, added) = (
            row.tenant.clone(),
            row.id.clone(),
            row.last_seq,
            row.expected,
            row.quota,
            row.added(),
        );
        let (done, outcome) = tokio::sync::oneshot::channel();
        let job = group::Job {
            row,
            lease_owner,
            lease_micros,
            done,
        };
        let written = match self.writer.send(job).await {
            Ok(()) => outcome.await.map_err(|_| {
                StoreError::Backend(format!(
                    "committing event {last_seq} of task {id}: the group-commit writer stopped"
                ))
            }),
            // The writers are gone (the runtime that started them ended):
            // write alone.
            Err(tokio::sync::mpsc::error::SendError(job)) => Ok(write_one(
                &self.pool,
                &job.row,
                job.lease_owner.as_deref().map(String::as_str),
                job.lease_micros,
                0,
            )
            .await),
        }
        .and_then(|written| written);
        self.writes.record(&written);
        let applied = written?;
        if applied {
            // A task created finished in one commit has no follower on any
            // replica (nobody knew its id before this commit; a later
            // reader reads the store), so nobody needs to hear of it.
            let born_finished = expected == 0 && record.task.status.state.is_terminal();
            if let Some(replica) = self.replica.as_ref().filter(|_| !born_finished) {
                cluster::announce(replica, &tenant, &id, last_seq);
            }
            return Ok(());
        }
        // Nothing was written. Report where the log ends now (this may
        // already be later than what made the commit fail): where it is the
        // expected end, the quota refused the commit.
        let (found, snapshot): (Option<i64>, Option<i64>) = sqlx::query_as(
            "SELECT max(last_seq), max(snapshot_bytes) FROM tasks WHERE tenant = $1 AND id = $2",
        )
        .bind(tenant.as_str())
        .bind(id.as_str())
        .fetch_one(&self.pool)
        .await
        .map_err(backend(format!("reading the sequence of task {id}")))?;
        if let Some(max) = quota
            && found.unwrap_or(0) == expected
        {
            let held: i64 = sqlx::query_scalar(
                "SELECT COALESCE(sum(bytes), 0)::bigint FROM storage_usage \
                 WHERE tenant = $1 AND owner = $2",
            )
            .bind(tenant.as_str())
            .bind(record.owner.as_str())
            .fetch_one(&self.pool)
            .await
            .map_err(backend(format!("reading the storage of task {id}'s owner")))?;
            let after = held
                .saturating_add(added)
                .saturating_sub(snapshot.unwrap_or(0));
            let to_u64 = |n: i64| u64::try_from(n).unwrap_or(0);
            return Err(quota::exceeded(&record.owner, to_u64(after), to_u64(max)));
        }
        Err(StoreError::SequenceConflict {
            task_id: id,
            expected: u64::try_from(expected).unwrap_or(0),
            found: u64::try_from(found.unwrap_or(0)).unwrap_or(0),
        })
    }
}

#[async_trait]
impl TaskStore for PgStore {
    /// The `health` module: reachable, migrated, and (a replica) its lease renewed.
    async fn health(&self) -> Result<(), StoreError> {
        health::check(&self.pool, &MIGRATOR, self.replica.as_ref(), &self.writes).await
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
            let victims = format!(
                "SELECT tenant, id FROM tasks WHERE {FINISHED} AND status_micros < $1 \
                 AND {NOTHING_PENDING} \
                 ORDER BY status_micros LIMIT {PURGE_BATCH} FOR UPDATE SKIP LOCKED"
            );
            purged += self
                .purge_batches(&victims, to_micros(cutoff), None)
                .await?;
        }
        if let Some(max) = retention.max_finished {
            // The newest task beyond the `max` kept is found once; the
            // batches then take the oldest finished tasks up to it, a short
            // range scan each. (Skipping `max` rows in every batch's
            // statement instead cost a second per 500 tasks at 50,000 kept,
            // so retention fell behind a busy server.)
            let boundary = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT status_micros, id FROM tasks WHERE {FINISHED} AND {NOTHING_PENDING} \
                 ORDER BY status_micros DESC, id DESC OFFSET $1 LIMIT 1"
            )))
            .bind(i64::try_from(max).unwrap_or(i64::MAX))
            .fetch_optional(&self.pool)
            .await
            .map_err(backend("finding the retention boundary"))?;
            if let Some(row) = boundary {
                let micros: i64 = row
                    .try_get("status_micros")
                    .map_err(backend("finding the retention boundary"))?;
                let id: String = row
                    .try_get("id")
                    .map_err(backend("finding the retention boundary"))?;
                let victims = format!(
                    "SELECT tenant, id FROM tasks WHERE {FINISHED} AND {NOTHING_PENDING} \
                     AND (status_micros, id) <= ($1, $2) \
                     ORDER BY status_micros, id LIMIT {PURGE_BATCH} FOR UPDATE SKIP LOCKED"
                );
                purged += self.purge_batches(&victims, micros, Some(&id)).await?;
            }
        }
        if purged > 0 {
            self.vacuum_after_purge(purged).await;
        }
        Ok(purged)
    }

    async fn load(&self, tenant: &str, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT tenant, owner, last_seq, created_micros, created_subus_nanos, \
             task_json::text AS task_json, status_micros, status_subus_nanos \
             FROM tasks WHERE tenant = $1 AND id = $2",
        )
        .bind(tenant)
        .bind(task_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(backend(format!("loading task {task_id}")))?;
        row.as_ref().map(decode_record).transpose()
    }

    async fn list(&self, q: &TaskQuery) -> Result<TaskPage, StoreError> {
        // One statement, so the page and the total come from one snapshot:
        // the count joined with the page (LEFT JOIN: an empty page still
        // yields one row carrying the total).
        let mut sql = QueryBuilder::<Postgres>::new(
            "SELECT c.total, p.* FROM (SELECT count(*) AS total FROM tasks",
        );
        push_filters(&mut sql, q);
        sql.push(format!(
            ") AS c LEFT JOIN (SELECT id AS page_id, {RECORD_COLUMNS} FROM tasks"
        ));
        push_filters(&mut sql, q);
        if let Some(cursor) = &q.after {
            sql.push(" AND (status_micros, id) < (")
                .push_bind(cursor.status_micros)
                .push(", ")
                .push_bind(cursor.task_id.clone())
                .push(")");
        }
        // One extra row tells whether there is a next page.
        let fetch = i64::try_from(q.limit).unwrap_or(i64::MAX).saturating_add(1);
        sql.push(" ORDER BY status_micros DESC, id DESC LIMIT ")
            .push_bind(fetch)
            .push(") AS p ON true ORDER BY p.status_micros DESC, p.page_id DESC");

        let rows = sql
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(backend("listing tasks"))?;
        let total: i64 = match rows.first() {
            Some(row) => column(row, "total")?,
            None => 0,
        };
        let mut records = Vec::with_capacity(rows.len());
        for row in &rows {
            let page_id: Option<String> = column(row, "page_id")?;
            if page_id.is_some() {
                records.push(decode_record(row)?);
            }
        }
        Ok(rows::task_page(records, q.limit, total))
    }

    async fn events(&self, query: EventQuery<'_>) -> Result<Vec<LoggedEvent>, StoreError> {
        let task_id = query.task_id;
        let Ok(after) = i64::try_from(query.after) else {
            return Ok(Vec::new());
        };
        let rows = sqlx::query(
            "SELECT seq, event_json::text AS event_json, status_micros, status_subus_nanos \
             FROM task_events WHERE tenant = $1 AND task_id = $2 AND seq > $3 \
             ORDER BY seq LIMIT $4",
        )
        .bind(query.tenant)
        .bind(task_id)
        .bind(after)
        .bind(db_limit(query.limit))
        .fetch_all(&self.pool)
        .await
        .map_err(backend(format!("reading events of task {task_id}")))?;
        rows.iter()
            .map(|row| {
                // The JSON has milliseconds; the columns have the exact time.
                rows::logged_event(&Columns(row), task_id, |row| {
                    let micros = row.opt_int("status_micros").map_err(|e| e.to_string())?;
                    let rest = row
                        .opt_int("status_subus_nanos")
                        .map_err(|e| e.to_string())?;
                    let Some(micros) = micros else {
                        return Ok(None);
                    };
                    let rest = rest.unwrap_or(0);
                    from_split(micros, rest)
                        .map(Some)
                        .ok_or_else(|| format!("status time {micros} µs + {rest} ns"))
                })
            })
            .collect()
    }
}

// ----------------------------------------------------------------------------
// Helpers.

/// [`switchboard_core::store::sub_micro_nanos`] in this store's column type.
fn sub_nanos(ts: DateTime<Utc>) -> i32 {
    i32::from(switchboard_core::store::sub_micro_nanos(ts))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn redact_hides_only_the_password() {
        assert_eq!(
            redact("postgres://u:secret@h:5432/db?sslmode=require"),
            "postgres://u:***@h:5432/db?sslmode=require"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("postgresql://h/db"), "postgresql://h/db");
        assert_eq!(redact("postgres://u:p@ss@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("not a url"), "not a url");
    }

    #[test]
    fn times_split_and_join_exactly() {
        let ts = DateTime::from_timestamp(1_800_000_000, 123_456_789).unwrap();
        assert_eq!(sub_nanos(ts), 789);
        assert_eq!(from_split(to_micros(ts), sub_nanos(ts).into()), Some(ts));
        let before_epoch = DateTime::from_timestamp(-5, 999_999_999).unwrap();
        assert_eq!(
            from_split(to_micros(before_epoch), sub_nanos(before_epoch).into()),
            Some(before_epoch)
        );
    }
}
