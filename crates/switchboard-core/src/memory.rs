//! The in-memory store: fast, and gone when the process ends.
//!
//! Useful for tests, benchmarks and agents whose tasks need not survive a
//! restart. Lists scan every task of the tenant, which is fine for the
//! numbers a single process holds in memory.
//!
//! Memory stays bounded with [`InMemoryStore::with_max_terminal_tasks`]: once
//! more finished tasks are kept than that, the ones that finished first are
//! dropped with their event logs. Unfinished tasks are never dropped. A
//! [`Retention`] policy (`TaskStore::purge`) drops finished tasks by age or
//! count the same way.
//!
//! A count does not bound bytes (one task may hold megabytes), so
//! [`InMemoryStore::with_max_bytes`] bounds them too: the snapshots and logs
//! held, counted as JSON (`store::quota`), each snapshot by an upper bound
//! derived from the events that built it (measuring the snapshot itself on
//! every commit would cost its whole size each time). A commit that would go past the
//! bound first drops finished tasks, first finished first; if unfinished
//! tasks alone fill it, the commit is refused with
//! [`StoreError::QuotaExceeded`] unless it finishes a task.
//! [`InMemoryStore::with_storage_quota`] bounds each owner the same way.
//! Without either, nothing is counted.
//!
//! It also implements [`crate::push::PushStore`] (see `memory/push.rs`): the
//! outbox items of a commit are queued under the same lock as the commit.
//!
//! Tests that need to see each commit as it happens (how many events it
//! carried, when it returned, what a replica would be told) wrap it in an
//! `ObservedStore` (feature `testing`) instead of writing a delegating
//! store of their own.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use switchboard_protocol::StreamResponse;

use chrono::{DateTime, Utc};

use crate::TaskMap;
use crate::store::quota::{self, StorageQuota};
use crate::store::{
    EventQuery, ListCursor, LoggedEvent, Retention, StoreError, TaskPage, TaskQuery, TaskRecord,
    TaskStore, to_micros,
};

mod push;

/// Tasks and event logs in a hash map.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    tasks: Mutex<Tasks>,
    max_terminal: Option<usize>,
    /// Most bytes held in all (see the module docs).
    max_bytes: Option<u64>,
    /// Most bytes held per owner.
    quota: StorageQuota,
    /// Raised when a commit queued push notifications.
    push_wakeup: std::sync::Arc<tokio::sync::Notify>,
}

#[derive(Debug, Default)]
struct Tasks {
    by_key: TaskMap<Entry>,
    /// Finished tasks, oldest first: the eviction order.
    finished: VecDeque<(String, String)>,
    /// Push configs and the outbox, under the same lock as the tasks so a
    /// commit and its notifications are one atomic step.
    push: push::PushState,
    /// Bytes held per owner (tenant, principal), when bytes are counted.
    usage: TaskMap<u64>,
    /// Bytes held in all, when bytes are counted.
    total: u64,
}

impl Tasks {
    /// Drops finished tasks, first finished first, while `too_many(how many
    /// are finished, the next one)` says so. Returns how many were dropped.
    fn drop_oldest_finished(&mut self, too_many: impl Fn(usize, &TaskRecord) -> bool) -> u64 {
        let mut dropped = 0;
        while let Some(oldest) = self.finished.front() {
            let Some(entry) = self.by_key.get(oldest) else {
                // Already gone; forget the key.
                self.finished.pop_front();
                continue;
            };
            if !too_many(self.finished.len(), &entry.record) {
                break;
            }
            if let Some(old) = self.finished.pop_front() {
                self.remove(&old);
                dropped += 1;
            }
        }
        dropped
    }

    /// Deletes a task with its log and takes its bytes off the counters.
    /// Returns whether it was there.
    fn remove(&mut self, key: &(String, String)) -> bool {
        let Some(entry) = self.by_key.remove(key) else {
            return false;
        };
        // Queued notifications keep their own copy of the config.
        self.push.forget_task(key);
        if entry.bytes > 0 {
            self.total = self.total.saturating_sub(entry.bytes);
            let owner = (entry.record.tenant, entry.record.owner);
            if let Some(used) = self.usage.get_mut(&owner) {
                *used = used.saturating_sub(entry.bytes);
                if *used == 0 {
                    self.usage.remove(&owner);
                }
            }
        }
        true
    }
}

#[derive(Debug)]
struct Entry {
    record: TaskRecord,
    /// Shared with the subscribers the engine published them to.
    log: Vec<Arc<LoggedEvent>>,
    /// The snapshot's and the log's bytes (0 when bytes are not counted).
    bytes: u64,
    /// The snapshot's share of `bytes`.
    snapshot_bytes: u64,
}

impl InMemoryStore {
    /// An empty store that keeps every task.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store that keeps at most `max` finished tasks.
    pub fn with_max_terminal_tasks(max: usize) -> Self {
        InMemoryStore {
            max_terminal: Some(max),
            ..Self::default()
        }
    }

    /// This store holding at most `max` bytes of snapshots and logs (see
    /// the module docs).
    pub fn with_max_bytes(self, max: u64) -> Self {
        InMemoryStore {
            max_bytes: Some(max),
            ..self
        }
    }

    /// This store granting each owner `quota` (see `store::quota`).
    pub fn with_storage_quota(self, quota: StorageQuota) -> Self {
        InMemoryStore { quota, ..self }
    }

    /// Whether commits count bytes: only when something is bounded by them.
    fn counts_bytes(&self) -> bool {
        self.max_bytes.is_some() || self.quota.max_bytes_per_owner.is_some()
    }

    /// How many tasks are held.
    pub fn len(&self) -> usize {
        self.lock().by_key.len()
    }

    /// `true` when no task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Tasks> {
        // A poisoned lock only means another thread panicked mid-update of a
        // plain map; the data is still structurally valid.
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What a commit changes in the byte counters.
struct CommitSize {
    /// The snapshot it writes.
    snapshot: u64,
    /// The snapshot and the events it writes.
    added: u64,
    /// The snapshot it replaces.
    replaced: u64,
}

impl InMemoryStore {
    /// Sizes the commit of `record` with `events` and decides it against
    /// the owner's quota and the store's bound, dropping finished tasks
    /// (never the committed one) to make room under the bound.
    fn admit(
        &self,
        tasks: &mut Tasks,
        key: &(String, String),
        record: &TaskRecord,
        events: &[Arc<LoggedEvent>],
        sizes: &[u64],
    ) -> Result<CommitSize, StoreError> {
        // The snapshot is not serialized to be measured: that would cost its
        // whole size on every commit, under the store's lock, however small
        // the change (a task of megabytes, appended to chunk by chunk, would
        // cost quadratic time). A task event is the snapshot itself; any
        // other event adds at most twice its size to it (a status message
        // is also appended to the history). So the count is an upper bound:
        // it may overstate what a task holds, never understate it.
        let replaced = tasks.by_key.get(key).map_or(0, |e| e.snapshot_bytes);
        let mut snapshot = replaced;
        let mut logged = 0u64;
        for (event, &n) in events.iter().zip(sizes) {
            logged = logged.saturating_add(n);
            snapshot = match event.event {
                StreamResponse::Task(_) => n,
                _ => snapshot.saturating_add(n.saturating_mul(2)),
            };
        }
        let size = CommitSize {
            snapshot,
            added: snapshot.saturating_add(logged),
            replaced,
        };
        let grow = |held: u64| held.saturating_sub(replaced).saturating_add(size.added);
        let owner = (record.tenant.clone(), record.owner.clone());
        let before = tasks.usage.get(&owner).copied().unwrap_or(0);
        let finishes = quota::finishes(record, events.len());
        self.quota
            .admit(&record.owner, finishes, before, grow(before))?;
        if let Some(max) = self.max_bytes
            && grow(tasks.total) > max
        {
            while grow(tasks.total) > max {
                match tasks.finished.front() {
                    Some(oldest) if oldest != key => {
                        if let Some(old) = tasks.finished.pop_front() {
                            tasks.remove(&old);
                        }
                    }
                    _ => break,
                }
            }
            let after = grow(tasks.total);
            if after > max && after > tasks.total && !finishes {
                return Err(StoreError::QuotaExceeded(format!(
                    "the in-memory store would hold {after} bytes, over its bound of {max} bytes, \
                     and holds no finished task left to drop"
                )));
            }
        }
        Ok(size)
    }
}

#[async_trait]
impl TaskStore for InMemoryStore {
    /// In the process, with no schema: ready while the process runs.
    async fn health(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Push configs and the outbox live beside the tasks.
    fn push_store(self: std::sync::Arc<Self>) -> Option<std::sync::Arc<dyn crate::PushStore>> {
        Some(self)
    }

    async fn commit_events(
        &self,
        record: &TaskRecord,
        events: &[StreamResponse],
    ) -> Result<(), StoreError> {
        let first_seq = record.first_event_seq(events.len());
        let logged: Vec<Arc<LoggedEvent>> = events
            .iter()
            .zip(first_seq..)
            .map(|(event, seq)| {
                Arc::new(LoggedEvent {
                    seq,
                    event: event.clone(),
                })
            })
            .collect();
        self.commit_shared(record, &logged).await
    }

    /// Keeps the engine's `Arc`s: an event is in memory once, whether the
    /// log or a subscriber holds it.
    async fn commit_shared(
        &self,
        record: &TaskRecord,
        logged: &[Arc<LoggedEvent>],
    ) -> Result<(), StoreError> {
        // Each event's size, measured before the lock is taken: commits of
        // other tasks need not wait while this one's events are walked.
        let sizes: Vec<u64> = if self.counts_bytes() {
            logged.iter().map(|e| quota::json_bytes(&e.event)).collect()
        } else {
            Vec::new()
        };
        let mut guard = self.lock();
        let tasks = &mut *guard;
        let key = (record.tenant.clone(), record.task.id.clone());
        let stored = tasks.by_key.get(&key);
        let stored_seq = stored.map(|e| e.record.last_seq).unwrap_or(0);
        let was_terminal = stored.is_some_and(|e| e.record.task.status.state.is_terminal());
        let first_seq = record.first_event_seq(logged.len());
        if logged.iter().zip(first_seq..).any(|(e, seq)| e.seq != seq) {
            return Err(StoreError::Backend(format!(
                "task {}: events numbered out of order for its snapshot",
                record.task.id
            )));
        }
        let expected = record.expected_stored_seq(logged.len());
        if stored_seq != expected {
            return Err(StoreError::SequenceConflict {
                task_id: record.task.id.clone(),
                expected,
                found: stored_seq,
            });
        }
        let size = if self.counts_bytes() {
            Some(self.admit(tasks, &key, record, logged, &sizes)?)
        } else {
            None
        };
        // Encoded before anything changes, so a failure leaves the store as it was.
        let queued = logged
            .iter()
            .map(|e| tasks.push.prepare(&key, &e.event, &record.task))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(size) = &size {
            let owner = (record.tenant.clone(), record.owner.clone());
            let used = tasks.usage.entry(owner).or_default();
            *used = used
                .saturating_sub(size.replaced)
                .saturating_add(size.added);
            tasks.total = tasks
                .total
                .saturating_sub(size.replaced)
                .saturating_add(size.added);
        }
        // One copy of the snapshot, whether the task is new or not.
        let entry = match tasks.by_key.entry(key.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => {
                let entry = e.into_mut();
                entry.record = record.clone();
                entry
            }
            std::collections::hash_map::Entry::Vacant(e) => e.insert(Entry {
                record: record.clone(),
                log: Vec::new(),
                bytes: 0,
                snapshot_bytes: 0,
            }),
        };
        if let Some(size) = &size {
            entry.bytes = entry
                .bytes
                .saturating_sub(size.replaced)
                .saturating_add(size.added);
            entry.snapshot_bytes = size.snapshot;
        }
        entry.log.extend(logged.iter().cloned());
        let mut notify = false;
        for (payload, seq) in queued.into_iter().zip(first_seq..) {
            if let Some(payload) = payload {
                tasks.push.enqueue(seq, payload);
                notify = true;
            }
        }
        if notify {
            self.push_wakeup.notify_one();
        }
        if !was_terminal && record.task.status.state.is_terminal() {
            tasks.finished.push_back(key);
            if let Some(max) = self.max_terminal {
                tasks.drop_oldest_finished(|finished, _| finished > max);
            }
        }
        Ok(())
    }

    async fn purge(&self, retention: &Retention, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let cutoff = retention.cutoff(now);
        let max = retention
            .max_finished
            .map(|m| usize::try_from(m).unwrap_or(usize::MAX));
        let mut guard = self.lock();
        let tasks = &mut *guard;
        let mut dropped = 0;
        if let Some(cutoff) = cutoff {
            // By age: a pass over the finished tasks (the finish order is
            // not exactly the status-time order).
            let finished = std::mem::take(&mut tasks.finished);
            let (old, keep): (VecDeque<_>, VecDeque<_>) = finished.into_iter().partition(|key| {
                tasks
                    .by_key
                    .get(key)
                    .is_none_or(|e| e.record.status_time() < cutoff)
            });
            tasks.finished = keep;
            for key in &old {
                if tasks.remove(key) {
                    dropped += 1;
                }
            }
        }
        if let Some(max) = max {
            dropped += tasks.drop_oldest_finished(|finished, _| finished > max);
        }
        Ok(dropped)
    }

    async fn load(&self, tenant: &str, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self
            .lock()
            .by_key
            .get(&(tenant.to_string(), task_id.to_string()))
            .map(|e| e.record.clone()))
    }

    async fn list(&self, q: &TaskQuery) -> Result<TaskPage, StoreError> {
        let tasks = self.lock();
        let mut matching: Vec<(i64, &TaskRecord)> = tasks
            .by_key
            .values()
            .map(|e| &e.record)
            .filter(|r| r.tenant == q.tenant && (q.all_owners || r.owner == q.owner))
            .filter(|r| {
                q.context_id
                    .as_ref()
                    .is_none_or(|c| &r.task.context_id == c)
            })
            .filter(|r| q.state.is_none_or(|s| r.task.status.state == s))
            .filter(|r| q.status_after.is_none_or(|t| r.status_time() >= t))
            .map(|r| (to_micros(r.status_time()), r))
            .collect();
        let total = matching.len() as u64;
        matching.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.task.id.cmp(&a.1.task.id)));
        let start = match &q.after {
            None => 0,
            Some(c) => matching
                .iter()
                .position(|(m, r)| (*m, r.task.id.as_str()) < (c.status_micros, c.task_id.as_str()))
                .unwrap_or(matching.len()),
        };
        let page: Vec<TaskRecord> = matching[start..]
            .iter()
            .take(q.limit)
            .map(|(_, r)| (*r).clone())
            .collect();
        let next = if start + page.len() < matching.len() {
            page.last().map(|r| ListCursor {
                status_micros: to_micros(r.status_time()),
                task_id: r.task.id.clone(),
            })
        } else {
            None
        };
        Ok(TaskPage {
            records: page,
            next,
            total,
        })
    }

    async fn events(&self, query: EventQuery<'_>) -> Result<Vec<LoggedEvent>, StoreError> {
        let tasks = self.lock();
        Ok(tasks
            .by_key
            .get(&(query.tenant.to_string(), query.task_id.to_string()))
            .map(|e| {
                e.log
                    .iter()
                    .filter(|l| l.seq > query.after)
                    .take(query.limit)
                    .map(|l| LoggedEvent::clone(l))
                    .collect()
            })
            .unwrap_or_default())
    }
}

/// Told about every successful commit of an [`ObservedStore`], before the
/// commit returns to the engine.
#[cfg(feature = "testing")]
#[async_trait]
pub trait CommitObserver: Send + Sync + std::fmt::Debug + 'static {
    /// `record` and `events` were just committed.
    async fn committed(&self, record: &TaskRecord, events: &[StreamResponse]);

    /// Runs before every load, e.g. to make reads as slow as over a network.
    async fn loading(&self) {}
}

/// An [`InMemoryStore`] that shows each successful commit to its observer
/// (feature `testing`). Only the four required [`TaskStore`] methods are
/// implemented, so the engine sees a store without push support.
#[cfg(feature = "testing")]
#[derive(Debug, Default)]
pub struct ObservedStore<O> {
    inner: InMemoryStore,
    /// Whatever the observer recorded.
    pub observer: O,
}

#[cfg(feature = "testing")]
impl<O> ObservedStore<O> {
    /// An empty store reporting to `observer`.
    pub fn new(observer: O) -> Self {
        ObservedStore {
            inner: InMemoryStore::new(),
            observer,
        }
    }
}

#[cfg(feature = "testing")]
#[async_trait]
impl<O: CommitObserver> TaskStore for ObservedStore<O> {
    async fn commit_events(
        &self,
        record: &TaskRecord,
        events: &[StreamResponse],
    ) -> Result<(), StoreError> {
        self.inner.commit_events(record, events).await?;
        self.observer.committed(record, events).await;
        Ok(())
    }

    async fn load(&self, tenant: &str, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        self.observer.loading().await;
        self.inner.load(tenant, task_id).await
    }

    async fn list(&self, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        self.inner.list(query).await
    }

    async fn events(&self, query: EventQuery<'_>) -> Result<Vec<LoggedEvent>, StoreError> {
        self.inner.events(query).await
    }
}
