//! Where tasks and their events live.
//!
//! A store keeps, per task, the latest snapshot ([`TaskRecord`]) and the
//! task's **event log**: every [`StreamResponse`] a subscriber was shown, in
//! order, numbered by a per-task sequence starting at 1. The engine is the
//! only writer: it calls [`TaskStore::commit`] with the new snapshot and the
//! event that produced it, and only after that call returns does anyone see
//! the event. A store therefore has one job above all: make `commit` atomic
//! and durable.
//!
//! Every record carries its tenant and owning principal from the start, so
//! authorization never needs a schema change. Visibility is enforced by the
//! engine, which passes the caller's tenant and owner into every query.
//!
//! Implementations: [`crate::InMemoryStore`] here, SQLite in
//! `switchboard-store-sqlite`. Each must pass the `conformance` suite
//! (feature `testing`).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use switchboard_protocol::{StreamResponse, Task, TaskState};

/// A failure inside a store. The engine reports these as internal errors
/// and never changes its in-memory state when a commit fails.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The backend failed (I/O, connection, constraint).
    #[error("store backend error: {0}")]
    Backend(String),
    /// Stored data could not be decoded.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A commit would break the event log's sequence (a concurrent writer).
    #[error("sequence conflict on task {task_id}: expected {expected}, found {found}")]
    SequenceConflict {
        /// The task.
        task_id: String,
        /// The sequence the writer expected to follow.
        expected: u64,
        /// The sequence actually stored.
        found: u64,
    },
    /// The commit would take its owner past its storage quota
    /// ([`quota::StorageQuota`]), or a store bounded in bytes past its
    /// bound; nothing was written. The engine answers ResourceExhausted.
    #[error("storage quota exceeded: {0}")]
    QuotaExceeded(String),
}

impl From<StoreError> for switchboard_protocol::A2AError {
    /// A quota is the caller's to act on (ResourceExhausted); every other
    /// store failure is the server's (Internal), with what the store said.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::QuotaExceeded(_) => Self::ResourceExhausted(e.to_string()),
            other => Self::Internal(other.to_string()),
        }
    }
}

/// A task as stored: its snapshot plus who it belongs to and where its log is.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// Tenant ("" when the server is not multi-tenant).
    pub tenant: String,
    /// The principal that created the task (`anonymous` without auth).
    pub owner: String,
    /// The full snapshot: status, all artifacts, the whole history.
    pub task: Task,
    /// Sequence number of the last event in the task's log (0: none yet).
    pub last_seq: u64,
    /// When the task was created.
    pub created_at: DateTime<Utc>,
}

impl TaskRecord {
    /// The sequence number the stored log must end at for a commit of this
    /// record that appends `events` events to be accepted: `last_seq -
    /// events` (see [`TaskStore`]).
    pub fn expected_stored_seq(&self, events: usize) -> u64 {
        self.last_seq.saturating_sub(events as u64)
    }

    /// The sequence number of the first of `events` events committed with
    /// this record: they take the numbers up to and including `last_seq`.
    pub fn first_event_seq(&self, events: usize) -> u64 {
        self.expected_stored_seq(events) + 1
    }

    /// The status timestamp used for ordering (falls back to creation time).
    pub fn status_time(&self) -> DateTime<Utc> {
        self.task.status.timestamp.unwrap_or(self.created_at)
    }
}

/// One entry of a task's event log.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedEvent {
    /// Position in the task's log, starting at 1.
    pub seq: u64,
    /// The event as subscribers saw it.
    pub event: StreamResponse,
}

/// An event as a store is handed it: plain ([`TaskStore::commit_events`]) or
/// numbered and shared ([`TaskStore::commit_shared`]), so one encoder serves
/// both.
pub trait StoredEvent: Send + Sync {
    /// The event itself.
    fn event(&self) -> &StreamResponse;
}

impl StoredEvent for StreamResponse {
    fn event(&self) -> &StreamResponse {
        self
    }
}

impl StoredEvent for Arc<LoggedEvent> {
    fn event(&self) -> &StreamResponse {
        &self.event
    }
}

/// A position in the ListTasks order: status time descending, then id descending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListCursor {
    /// Status timestamp of the last task on the previous page, in microseconds.
    pub status_micros: i64,
    /// Id of that task.
    pub task_id: String,
}

/// Filters and paging for [`TaskStore::list`].
#[derive(Debug, Clone)]
pub struct TaskQuery {
    /// Tenant to look in.
    pub tenant: String,
    /// Only tasks owned by this principal (unless `all_owners`).
    pub owner: String,
    /// Every owner's tasks in the tenant (an administrator's listing);
    /// `owner` is then ignored.
    pub all_owners: bool,
    /// Only tasks of this context.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// Only tasks whose status time is at or after this instant.
    pub status_after: Option<DateTime<Utc>>,
    /// Page size (already validated, 1..=100).
    pub limit: usize,
    /// Continue after this position.
    pub after: Option<ListCursor>,
}

/// Which log entries [`TaskStore::events`] reads: one task's, those with a
/// sequence number above `after` (0: from the first), at most `limit`.
/// Named fields, because two positions and two counts in a row are easy
/// to pass in the wrong order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventQuery<'a> {
    /// The task's tenant.
    pub tenant: &'a str,
    /// Whose log.
    pub task_id: &'a str,
    /// Entries after this sequence number.
    pub after: u64,
    /// How many entries at most.
    pub limit: usize,
}

impl<'a> EventQuery<'a> {
    /// A task's whole log; [`after`](Self::after) and [`limit`](Self::limit)
    /// narrow it: `EventQuery::new(tenant, id).after(seq).limit(256)`.
    pub fn new(tenant: &'a str, task_id: &'a str) -> Self {
        EventQuery {
            tenant,
            task_id,
            after: 0,
            limit: usize::MAX,
        }
    }

    /// Only the entries after sequence number `after`.
    pub fn after(self, after: u64) -> Self {
        EventQuery { after, ..self }
    }

    /// At most `limit` entries.
    pub fn limit(self, limit: usize) -> Self {
        EventQuery { limit, ..self }
    }
}

/// One page of [`TaskStore::list`].
#[derive(Debug, Clone, Default)]
pub struct TaskPage {
    /// The records, in order.
    pub records: Vec<TaskRecord>,
    /// Where the next page starts, if there is one.
    pub next: Option<ListCursor>,
    /// How many tasks match the filters over all pages.
    pub total: u64,
}

/// Microseconds since the epoch, the unit cursors and indexes use.
pub fn to_micros(ts: DateTime<Utc>) -> i64 {
    ts.timestamp_micros()
}

/// The part of `ts` below one microsecond, in nanoseconds (0..=999). SQL
/// stores keep it beside [`to_micros`] so timestamps round-trip exactly
/// (the wire JSON stops at milliseconds).
pub fn sub_micro_nanos(ts: DateTime<Utc>) -> u16 {
    // `timestamp_subsec_nanos` may exceed 999_999_999 during a leap second;
    // the remainder is below 1000 either way.
    (ts.timestamp_subsec_nanos() % 1_000) as u16
}

/// A sequence number as a SQL `BIGINT`, or a clear error if it does not fit.
pub fn seq_to_i64(seq: u64, task_id: &str) -> Result<i64, StoreError> {
    i64::try_from(seq)
        .map_err(|_| StoreError::Backend(format!("task {task_id}: sequence {seq} is out of range")))
}

/// Wraps a backend's error (e.g. a driver's) into [`StoreError::Backend`],
/// saying what was being done: `.map_err(backend("reading a task"))`.
pub fn backend<E: fmt::Display>(context: impl fmt::Display) -> impl FnOnce(E) -> StoreError {
    move |e| StoreError::Backend(format!("{context}: {e}"))
}

/// Persistence for tasks and their event logs.
///
/// # Contract
/// - [`commit_events`](Self::commit_events) writes the snapshot and appends
///   the `n` given events at sequences `record.last_seq - n + 1 ..=
///   record.last_seq`, atomically and durably; it fails with
///   [`StoreError::SequenceConflict`] (writing nothing) if the stored log
///   does not end at `record.last_seq - n`. `n` may be 0 (a snapshot-only
///   commit). Several events in one commit let the engine create a task and
///   record its first change in one transaction — one durable write where
///   there would be two.
/// - [`load`](Self::load) and [`list`](Self::list) only return what a
///   successful commit wrote.
/// - [`events`](Self::events) returns log entries with `seq > query.after`,
///   ascending.
#[async_trait]
pub trait TaskStore: Send + Sync + fmt::Debug + 'static {
    /// Atomically stores the snapshot and appends `events` (possibly none).
    async fn commit_events(
        &self,
        record: &TaskRecord,
        events: &[StreamResponse],
    ) -> Result<(), StoreError>;

    /// [`commit_events`](Self::commit_events) for events the engine has
    /// already numbered and shares with the task's subscribers (the same
    /// `Arc`s go out on its bus); `events[i].seq` is what `commit_events`
    /// would give the `i`-th. The default commits copies of their payloads;
    /// a store that keeps events in memory keeps the `Arc`s themselves, and
    /// one that encodes events reads them where they are.
    async fn commit_shared(
        &self,
        record: &TaskRecord,
        events: &[Arc<LoggedEvent>],
    ) -> Result<(), StoreError> {
        let events: Vec<StreamResponse> = events.iter().map(|e| e.event.clone()).collect();
        self.commit_events(record, &events).await
    }

    /// Atomically stores the snapshot and, if given, appends the event: the
    /// common one-event form of [`commit_events`](Self::commit_events).
    async fn commit(
        &self,
        record: &TaskRecord,
        event: Option<&StreamResponse>,
    ) -> Result<(), StoreError> {
        self.commit_events(record, event.map(std::slice::from_ref).unwrap_or_default())
            .await
    }

    /// Loads a task by id within a tenant.
    async fn load(&self, tenant: &str, task_id: &str) -> Result<Option<TaskRecord>, StoreError>;

    /// Lists tasks, most recent status first.
    async fn list(&self, query: &TaskQuery) -> Result<TaskPage, StoreError>;

    /// Reads a task's log after a sequence number, at most `limit` entries.
    async fn events(&self, query: EventQuery<'_>) -> Result<Vec<LoggedEvent>, StoreError>;

    /// Deletes the finished tasks `retention` no longer keeps as of `now`,
    /// with their event logs (and push configs), and returns how many it
    /// deleted. Unfinished tasks are never deleted, and no push notification
    /// still waiting to be delivered is lost. The stores of this workspace
    /// all implement it; the default keeps everything.
    async fn purge(&self, retention: &Retention, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let _ = (retention, now);
        Ok(0)
    }

    /// Whether the store can serve requests now, by a cheap query: the
    /// backend answers, its schema migrations are applied and, for a
    /// replica of a shared store, this replica still holds its lease. A
    /// server's readiness probe (`/readyz`) asks this. The default (a store
    /// in the process) is always ready.
    async fn health(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// The `(tenant, task id)` of every run a previous process left
    /// unfinished (submitted or working when it died), as found when this
    /// store was opened, handed out once: the first call takes them, later
    /// calls get none. The handler fails them at start-up (see
    /// [`RequestHandlerBuilder::recover_abandoned`](crate::RequestHandlerBuilder::recover_abandoned)).
    ///
    /// Only a store that one process owns can know this at open: the
    /// SQLite store does. A store shared by replicas must not guess (a run
    /// it sees working may be a live replica's), so the default has none;
    /// replicas fail a dead replica's runs when its leases run out
    /// ([`crate::cluster`]). Nothing is found after opening, so a run of
    /// this process is never taken for an abandoned one.
    fn take_abandoned_runs(&self) -> Vec<(String, String)> {
        self.take_abandoned_runs_where(&|_| true)
    }

    /// [`take_abandoned_runs`](Self::take_abandoned_runs) of the tenants
    /// `tenant` accepts; the others stay for a later call. Agents sharing a
    /// store ([`RequestHandlerBuilder::namespace`](crate::RequestHandlerBuilder::namespace))
    /// each take their own namespace's this way, so each agent decides
    /// about its own tasks (see [`AgentExecutor::resumes`](crate::AgentExecutor::resumes)).
    /// A store that reports abandoned runs implements this one.
    fn take_abandoned_runs_where(&self, tenant: &dyn Fn(&str) -> bool) -> Vec<(String, String)> {
        let _ = tenant;
        Vec::new()
    }

    /// This store as a [`PushStore`](crate::push::PushStore), when it also keeps push configs and
    /// the outbox (its commits then queue notifications). The stores of
    /// this workspace all do; the default is `None`.
    fn push_store(self: Arc<Self>) -> Option<Arc<dyn crate::push::PushStore>> {
        None
    }
}

/// Which finished (completed, failed, canceled, rejected) tasks a store
/// keeps; see [`TaskStore::purge`]. The default keeps everything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retention {
    /// Delete finished tasks whose last status change is older than this.
    pub max_age: Option<std::time::Duration>,
    /// Keep at most this many finished tasks (over all tenants), deleting
    /// those whose last status change is oldest.
    pub max_finished: Option<u64>,
}

impl Retention {
    /// `true` when the policy keeps everything.
    pub fn keeps_everything(&self) -> bool {
        self.max_age.is_none() && self.max_finished.is_none()
    }

    /// The instant before which finished tasks are too old, if there is an age limit.
    pub fn cutoff(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let age = chrono::Duration::from_std(self.max_age?).ok()?;
        now.checked_sub_signed(age)
    }
}

mod json_size;
pub mod quota;
pub mod rows;
pub mod writes;

/// The shared test suite every [`TaskStore`] must pass.
#[cfg(feature = "testing")]
pub mod conformance;
