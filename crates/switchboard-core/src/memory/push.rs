//! [`PushStore`] for [`InMemoryStore`]: configs and the outbox in the same
//! mutex as the tasks.
//!
//! Because [`TaskStore::commit`](crate::TaskStore::commit) queues outbox
//! items while it holds that mutex, a commit and its notifications appear
//! together or not at all, the in-memory analogue of one SQL transaction.
//! Outbox ids increase in commit order, and a task's commits are serialized
//! by its runtime, so walking the outbox in id order meets each config's
//! items in sequence order: the first pending item met for a config is its
//! head, the only one [`claim`](PushStore::claim) may hand out.
//!
//! Nothing here survives the process, so at-least-once holds across
//! receiver outages but not across restarts; use a durable store for that.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use switchboard_protocol::{StreamResponse, Task};

use super::InMemoryStore;
use crate::TaskMap;
use crate::push::{
    ConfigPage, ConfigQuery, OutboxItem, OutboxState, PayloadKind, PushConfig, PushStore,
    PutConfig, Requeue, outbox_payload,
};
use crate::runtime::TaskKey;
use crate::store::StoreError;

/// Push configs and queued notifications of an [`InMemoryStore`].
#[derive(Debug, Default)]
pub(super) struct PushState {
    /// Per task, its configs in creation order with their list position.
    configs: TaskMap<Vec<(u64, Arc<PushConfig>)>>,
    next_ord: u64,
    outbox: BTreeMap<u64, Row>,
    next_id: u64,
}

#[derive(Debug)]
struct Row {
    /// The config as it was when the item was queued; used only when the
    /// config itself is gone (its task was evicted), otherwise the current
    /// config is read at claim time, as the SQL stores do.
    config: Arc<PushConfig>,
    seq: u64,
    payload: Arc<str>,
    attempts: u32,
    next_attempt: DateTime<Utc>,
    lease_until: Option<DateTime<Utc>>,
    last_error: Option<String>,
    state: OutboxState,
    created_at: DateTime<Utc>,
}

/// The payloads of one event, one per config of its task (in config
/// order), encoded once per payload kind.
pub(super) struct Prepared(Vec<(Arc<PushConfig>, Arc<str>)>);

impl PushState {
    /// The payloads to queue for `event` (committed with snapshot `task`),
    /// or `None` if the task has no configs.
    pub(super) fn prepare(
        &self,
        key: &TaskKey,
        event: &StreamResponse,
        task: &Task,
    ) -> Result<Option<Prepared>, StoreError> {
        let Some(list) = self.configs.get(key).filter(|l| !l.is_empty()) else {
            return Ok(None);
        };
        let mut by_kind: Vec<(PayloadKind, Arc<str>)> = Vec::new();
        let mut out = Vec::with_capacity(list.len());
        for (_, config) in list {
            let kind = config.payload_kind;
            let payload = match by_kind.iter().find(|(k, _)| *k == kind) {
                Some((_, p)) => p.clone(),
                None => {
                    let p: Arc<str> = outbox_payload(kind, event, task)?.into();
                    by_kind.push((kind, p.clone()));
                    p
                }
            };
            out.push((config.clone(), payload));
        }
        Ok(Some(Prepared(out)))
    }

    /// Queues the prepared items of event `seq`.
    pub(super) fn enqueue(&mut self, seq: u64, prepared: Prepared) {
        let now = Utc::now();
        for (config, payload) in prepared.0 {
            self.next_id += 1;
            self.outbox.insert(
                self.next_id,
                Row {
                    config,
                    seq,
                    payload,
                    attempts: 0,
                    next_attempt: now,
                    lease_until: None,
                    last_error: None,
                    state: OutboxState::Pending,
                    created_at: now,
                },
            );
        }
    }

    /// Drops an evicted task's configs (its queued items stay deliverable).
    pub(super) fn forget_task(&mut self, key: &TaskKey) {
        self.configs.remove(key);
    }

    fn current(&self, row: &Row) -> Arc<PushConfig> {
        let c = &row.config;
        self.configs
            .get(&(c.tenant.clone(), c.task_id.clone()))
            .and_then(|list| list.iter().find(|(_, x)| x.id == c.id))
            .map(|(_, x)| x.clone())
            .unwrap_or_else(|| c.clone())
    }

    fn item(&self, id: u64, row: &Row) -> OutboxItem {
        let config = self.current(row);
        OutboxItem {
            id,
            tenant: config.tenant.clone(),
            task_id: config.task_id.clone(),
            config_id: config.id.clone(),
            seq: row.seq,
            payload: row.payload.to_string(),
            // The kind the payload was made as, as the SQL stores copy it.
            payload_kind: row.config.payload_kind,
            hidden_metadata_keys: config.hidden_metadata_keys.clone(),
            url: config.url.clone(),
            token: config.token.clone(),
            authentication: config.authentication.clone(),
            attempts: row.attempts,
            last_error: row.last_error.clone(),
            state: row.state,
            created_at: row.created_at,
        }
    }
}

#[async_trait]
impl PushStore for InMemoryStore {
    async fn put_config(
        &self,
        config: &PushConfig,
        max_per_task: usize,
    ) -> Result<PutConfig, StoreError> {
        let mut guard = self.lock();
        let push = &mut guard.push;
        let key = (config.tenant.clone(), config.task_id.clone());
        let list = push.configs.entry(key).or_default();
        if let Some(slot) = list.iter_mut().find(|(_, c)| c.id == config.id) {
            slot.1 = Arc::new(config.clone());
            return Ok(PutConfig::Replaced);
        }
        if list.len() >= max_per_task {
            return Ok(PutConfig::LimitReached);
        }
        push.next_ord += 1;
        list.push((push.next_ord, Arc::new(config.clone())));
        Ok(PutConfig::Created)
    }

    async fn get_config(
        &self,
        tenant: &str,
        task_id: &str,
        id: &str,
    ) -> Result<Option<PushConfig>, StoreError> {
        let guard = self.lock();
        Ok(guard
            .push
            .configs
            .get(&(tenant.to_string(), task_id.to_string()))
            .and_then(|list| list.iter().find(|(_, c)| c.id == id))
            .map(|(_, c)| (**c).clone()))
    }

    async fn list_configs(&self, query: ConfigQuery<'_>) -> Result<ConfigPage, StoreError> {
        let guard = self.lock();
        let Some(list) = guard
            .push
            .configs
            .get(&(query.tenant.to_string(), query.task_id.to_string()))
        else {
            return Ok(ConfigPage::default());
        };
        let rest: Vec<&(u64, Arc<PushConfig>)> = list
            .iter()
            .filter(|(ord, _)| query.after.is_none_or(|a| *ord > a))
            .collect();
        let page: Vec<&(u64, Arc<PushConfig>)> = rest.iter().take(query.limit).copied().collect();
        let next = if rest.len() > page.len() {
            page.last().map(|(ord, _)| *ord)
        } else {
            None
        };
        Ok(ConfigPage {
            configs: page.into_iter().map(|(_, c)| (**c).clone()).collect(),
            next,
        })
    }

    async fn delete_config(
        &self,
        tenant: &str,
        task_id: &str,
        id: &str,
    ) -> Result<bool, StoreError> {
        let mut guard = self.lock();
        let push = &mut guard.push;
        let key = (tenant.to_string(), task_id.to_string());
        let Some(list) = push.configs.get_mut(&key) else {
            return Ok(false);
        };
        let before = list.len();
        list.retain(|(_, c)| c.id != id);
        let removed = list.len() != before;
        if list.is_empty() {
            push.configs.remove(&key);
        }
        // Nothing is sent after a delete; dead letters stay for inspection.
        push.outbox.retain(|_, row| {
            !(row.state == OutboxState::Pending
                && row.config.tenant == tenant
                && row.config.task_id == task_id
                && row.config.id == id)
        });
        Ok(removed)
    }

    async fn count_configs(&self, tenant: &str, task_id: &str) -> Result<usize, StoreError> {
        let guard = self.lock();
        Ok(guard
            .push
            .configs
            .get(&(tenant.to_string(), task_id.to_string()))
            .map_or(0, Vec::len))
    }

    async fn claim(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        lease: Duration,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        let lease = chrono::TimeDelta::from_std(lease)
            .map_err(|e| StoreError::Backend(format!("lease out of range: {e}")))?;
        let mut guard = self.lock();
        let push = &mut guard.push;
        // Configs with an item in flight get nothing more (after a requeued
        // dead letter, the one in flight may be a later item than the head).
        let mut heads_seen: HashSet<(String, String, String)> = push
            .outbox
            .values()
            .filter(|r| r.state == OutboxState::Pending && r.lease_until.is_some_and(|t| t > now))
            .map(|r| {
                (
                    r.config.tenant.clone(),
                    r.config.task_id.clone(),
                    r.config.id.clone(),
                )
            })
            .collect();
        let mut chosen = Vec::new();
        for (id, row) in &push.outbox {
            if chosen.len() >= limit {
                break;
            }
            if row.state != OutboxState::Pending {
                continue;
            }
            let c = &row.config;
            // Only the first pending item of each config may go out.
            if !heads_seen.insert((c.tenant.clone(), c.task_id.clone(), c.id.clone())) {
                continue;
            }
            let leased = row.lease_until.is_some_and(|t| t > now);
            if row.next_attempt <= now && !leased {
                chosen.push(*id);
            }
        }
        let mut items = Vec::with_capacity(chosen.len());
        for id in chosen {
            if let Some(row) = push.outbox.get_mut(&id) {
                row.attempts = row.attempts.saturating_add(1);
                row.lease_until = Some(now + lease);
            }
            if let Some(row) = push.outbox.get(&id) {
                items.push(push.item(id, row));
            }
        }
        Ok(items)
    }

    async fn ack(&self, id: u64) -> Result<(), StoreError> {
        self.lock().push.outbox.remove(&id);
        Ok(())
    }

    async fn retry(
        &self,
        id: u64,
        next_attempt_at: DateTime<Utc>,
        error: &str,
    ) -> Result<(), StoreError> {
        if let Some(row) = self.lock().push.outbox.get_mut(&id) {
            row.next_attempt = next_attempt_at;
            row.lease_until = None;
            row.last_error = Some(error.to_string());
        }
        Ok(())
    }

    async fn dead_letter(&self, id: u64, error: &str) -> Result<(), StoreError> {
        if let Some(row) = self.lock().push.outbox.get_mut(&id) {
            row.state = OutboxState::Dead;
            row.lease_until = None;
            row.last_error = Some(error.to_string());
        }
        Ok(())
    }

    async fn list_dead_letters(
        &self,
        tenant: &str,
        task_id: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        let guard = self.lock();
        Ok(guard
            .push
            .outbox
            .iter()
            .filter(|(_, r)| {
                r.state == OutboxState::Dead
                    && r.config.tenant == tenant
                    && task_id.is_none_or(|t| r.config.task_id == t)
            })
            .take(limit)
            .map(|(id, r)| guard.push.item(*id, r))
            .collect())
    }

    async fn requeue_dead_letter(&self, tenant: &str, id: u64) -> Result<Requeue, StoreError> {
        let mut guard = self.lock();
        let push = &mut guard.push;
        let Some(row) = push
            .outbox
            .get(&id)
            .filter(|r| r.state == OutboxState::Dead && r.config.tenant == tenant)
        else {
            return Ok(Requeue::NotFound);
        };
        let c = &row.config;
        let config_exists = push
            .configs
            .get(&(c.tenant.clone(), c.task_id.clone()))
            .is_some_and(|list| list.iter().any(|(_, x)| x.id == c.id));
        if !config_exists {
            return Ok(Requeue::ConfigDeleted);
        }
        if let Some(row) = push.outbox.get_mut(&id) {
            row.state = OutboxState::Pending;
            row.attempts = 0;
            row.next_attempt = Utc::now();
            row.lease_until = None;
        }
        self.push_wakeup.notify_one();
        Ok(Requeue::Requeued)
    }

    async fn pending_count(&self) -> Result<u64, StoreError> {
        let guard = self.lock();
        Ok(guard
            .push
            .outbox
            .values()
            .filter(|r| r.state == OutboxState::Pending)
            .count() as u64)
    }

    fn wakeup(&self) -> Option<Arc<tokio::sync::Notify>> {
        Some(self.push_wakeup.clone())
    }
}
