//! The in-memory store: fast, and gone when the process ends.
//!
//! Useful for tests, benchmarks and agents whose tasks need not survive a
//! restart. Lists scan every task of the tenant, which is fine for the
//! numbers a single process holds in memory.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use switchboard_protocol::StreamResponse;

use crate::store::{
    ListCursor, LoggedEvent, StoreError, TaskPage, TaskQuery, TaskRecord, TaskStore, to_micros,
};

/// Tasks and event logs in a hash map.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    tasks: Mutex<HashMap<(String, String), Entry>>,
}

#[derive(Debug)]
struct Entry {
    record: TaskRecord,
    log: Vec<LoggedEvent>,
}

impl InMemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(String, String), Entry>> {
        // A poisoned lock only means another thread panicked mid-update of a
        // plain map; the data is still structurally valid.
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl TaskStore for InMemoryStore {
    async fn commit(
        &self,
        record: &TaskRecord,
        event: Option<&StreamResponse>,
    ) -> Result<(), StoreError> {
        let mut tasks = self.lock();
        let key = (record.tenant.clone(), record.task.id.clone());
        let stored_seq = tasks.get(&key).map(|e| e.record.last_seq).unwrap_or(0);
        let expected = if event.is_some() {
            record.last_seq.saturating_sub(1)
        } else {
            record.last_seq
        };
        if stored_seq != expected {
            return Err(StoreError::SequenceConflict {
                task_id: record.task.id.clone(),
                expected,
                found: stored_seq,
            });
        }
        let entry = tasks.entry(key).or_insert_with(|| Entry {
            record: record.clone(),
            log: Vec::new(),
        });
        entry.record = record.clone();
        if let Some(ev) = event {
            entry.log.push(LoggedEvent {
                seq: record.last_seq,
                event: ev.clone(),
            });
        }
        Ok(())
    }

    async fn load(&self, tenant: &str, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self
            .lock()
            .get(&(tenant.to_string(), task_id.to_string()))
            .map(|e| e.record.clone()))
    }

    async fn list(&self, q: &TaskQuery) -> Result<TaskPage, StoreError> {
        let tasks = self.lock();
        let mut matching: Vec<(i64, &TaskRecord)> = tasks
            .values()
            .map(|e| &e.record)
            .filter(|r| r.tenant == q.tenant && r.owner == q.owner)
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

    async fn events(
        &self,
        tenant: &str,
        task_id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError> {
        let tasks = self.lock();
        Ok(tasks
            .get(&(tenant.to_string(), task_id.to_string()))
            .map(|e| {
                e.log
                    .iter()
                    .filter(|l| l.seq > after)
                    .take(limit)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }
}
