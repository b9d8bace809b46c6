//! [`PushStore`] for [`SqliteStore`]: webhook configs and the durable outbox.
//!
//! The outbox rows themselves are written by the `push_outbox_fill` trigger
//! (migration `0002_push.sql`, as last replaced by `0007_push_trigger.sql`):
//! every row appended to `task_events` queues itself in `push_outbox` once
//! per config of its task, inside the commit's own transaction; a config of
//! [`PayloadKind::TaskSnapshot`](switchboard_core::push::PayloadKind::TaskSnapshot) is queued the task row written in the same
//! transaction instead, unless the event is itself a task (`is_task`). That covers the lone-commit and the group-commit paths
//! alike without touching them, and makes "event durable ⇔ notifications
//! queued" a property of the schema.
//!
//! Everything else here writes through the writer pool's single connection
//! (SQLite has one writer; sharing it avoids "database is locked" between
//! our own connections) inside `BEGIN IMMEDIATE` transactions, so a claim's
//! read and its lease update are one atomic step even if another process
//! opens the same file.
//!
//! Claiming first asks a reader whether anything is due at all, so an idle
//! worker's polling never takes the write lock.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::query::Query;
use sqlx::sqlite::SqliteArguments;
use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Sqlite};
use switchboard_core::StoreError;
use switchboard_core::push::{
    ConfigPage, ConfigQuery, OutboxItem, PushConfig, PushStore, PutConfig, Requeue,
};
use switchboard_core::store::backend;
use switchboard_core::store::rows::{self, OUTBOX_ITEM_COLUMNS, db_after, db_id, db_limit};

use crate::{Columns, SqliteStore};

/// Lets the delivery worker know about new outbox rows without polling:
/// the tasks of this process known to have push configs, and the signal.
#[derive(Debug, Default)]
pub(crate) struct PushHints {
    tasks: Mutex<HashSet<(String, String)>>,
    wakeup: Arc<tokio::sync::Notify>,
}

impl PushHints {
    fn remember(&self, tenant: &str, task_id: &str) {
        self.tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((tenant.to_string(), task_id.to_string()));
    }

    /// Called after every successful event commit: wakes the worker when the
    /// task has configs (the trigger then queued rows).
    pub(crate) fn committed(&self, tenant: &str, task_id: &str) {
        let known = self
            .tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&(tenant.to_string(), task_id.to_string()));
        if known {
            self.wakeup.notify_one();
        }
    }
}

fn micros(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

fn decode_config(row: &SqliteRow) -> Result<PushConfig, StoreError> {
    rows::push_config(&Columns(row))
}

fn decode_item(row: &SqliteRow) -> Result<OutboxItem, StoreError> {
    rows::outbox_item(&Columns(row))
}

/// Binds a config's columns as parameters 1 to 9 (tenant, task_id, id,
/// url, token, auth_scheme, auth_credentials, payload_kind,
/// hidden_metadata_keys), the order its UPDATE and INSERT share.
fn bind_config<'q>(
    query: Query<'q, Sqlite, SqliteArguments>,
    config: &'q PushConfig,
    hidden: &'q str,
) -> Query<'q, Sqlite, SqliteArguments> {
    let (scheme, credentials) = rows::auth_columns(config);
    query
        .bind(&config.tenant)
        .bind(&config.task_id)
        .bind(&config.id)
        .bind(&config.url)
        .bind(config.token.as_deref())
        .bind(scheme)
        .bind(credentials)
        .bind(config.payload_kind.as_str())
        .bind(hidden)
}

impl SqliteStore {
    /// Runs one outbox statement on its own on the writer connection (it
    /// needs no transaction: it reads nothing it depends on).
    async fn write_outbox(
        &self,
        statement: Query<'_, Sqlite, SqliteArguments>,
        what: &str,
    ) -> Result<(), StoreError> {
        self.writer.statement(statement, what).await
    }
}

/// `sql` with one config's key bound as parameters 1 to 3 (tenant,
/// task_id, id).
fn on_config<'q>(
    sql: &'static str,
    tenant: &'q str,
    task_id: &'q str,
    id: &'q str,
) -> Query<'q, Sqlite, SqliteArguments> {
    sqlx::query(sql).bind(tenant).bind(task_id).bind(id)
}

#[async_trait]
impl PushStore for SqliteStore {
    async fn put_config(
        &self,
        config: &PushConfig,
        max_per_task: usize,
    ) -> Result<PutConfig, StoreError> {
        let hidden = rows::hidden_keys_column(config)?;
        let outcome = self
            .writer
            .transaction("committing a push config", async |tx| {
                let updated = bind_config(
                    sqlx::query(
                        "UPDATE push_configs SET url = ?4, token = ?5, auth_scheme = ?6, \
                 auth_credentials = ?7, payload_kind = ?8, hidden_metadata_keys = ?9 \
                 WHERE tenant = ?1 AND task_id = ?2 AND id = ?3",
                    ),
                    config,
                    &hidden,
                )
                .execute(&mut *tx)
                .await
                .map_err(backend("updating a push config"))?;
                let outcome = if updated.rows_affected() == 1 {
                    PutConfig::Replaced
                } else {
                    let count: i64 = sqlx::query_scalar(
                        "SELECT COUNT(*) FROM push_configs WHERE tenant = ?1 AND task_id = ?2",
                    )
                    .bind(&config.tenant)
                    .bind(&config.task_id)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(backend("counting push configs"))?;
                    if usize::try_from(count).unwrap_or(usize::MAX) >= max_per_task {
                        PutConfig::LimitReached
                    } else {
                        bind_config(
                    sqlx::query(
                        "INSERT INTO push_configs (tenant, task_id, id, url, token, auth_scheme, \
                         auth_credentials, payload_kind, hidden_metadata_keys, created_micros) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    ),
                    config,
                    &hidden,
                )
                .bind(micros(Utc::now()))
                .execute(&mut *tx)
                .await
                .map_err(backend("inserting a push config"))?;
                        PutConfig::Created
                    }
                };
                Ok(outcome)
            })
            .await?;
        if outcome != PutConfig::LimitReached {
            self.push.remember(&config.tenant, &config.task_id);
        }
        Ok(outcome)
    }

    async fn get_config(
        &self,
        tenant: &str,
        task_id: &str,
        id: &str,
    ) -> Result<Option<PushConfig>, StoreError> {
        let select = "SELECT * FROM push_configs WHERE tenant = ?1 AND task_id = ?2 AND id = ?3";
        let row = on_config(select, tenant, task_id, id)
            .fetch_optional(&self.readers)
            .await
            .map_err(backend("reading a push config"))?;
        row.as_ref().map(decode_config).transpose()
    }

    async fn list_configs(&self, query: ConfigQuery<'_>) -> Result<ConfigPage, StoreError> {
        let after = db_after(query.after);
        // One extra row tells whether there is a next page.
        let fetch = db_limit(query.limit).saturating_add(1);
        let rows = sqlx::query(
            "SELECT * FROM push_configs WHERE tenant = ?1 AND task_id = ?2 AND ord > ?3 \
             ORDER BY ord LIMIT ?4",
        )
        .bind(query.tenant)
        .bind(query.task_id)
        .bind(after)
        .bind(fetch)
        .fetch_all(&self.readers)
        .await
        .map_err(backend("listing push configs"))?;
        let rows: Vec<_> = rows.iter().map(Columns).collect();
        rows::config_page(&rows, query.limit)
    }

    async fn delete_config(
        &self,
        tenant: &str,
        task_id: &str,
        id: &str,
    ) -> Result<bool, StoreError> {
        let deleted = self
            .writer
            .transaction("committing a push config delete", async |tx| {
                let delete =
                    "DELETE FROM push_configs WHERE tenant = ?1 AND task_id = ?2 AND id = ?3";
                let deleted = on_config(delete, tenant, task_id, id)
                    .execute(&mut *tx)
                    .await
                    .map_err(backend("deleting a push config"))?;
                // Nothing is sent after a delete; dead letters stay for inspection.
                let drop_pending = "DELETE FROM push_outbox \
             WHERE tenant = ?1 AND task_id = ?2 AND config_id = ?3 AND state = 0";
                on_config(drop_pending, tenant, task_id, id)
                    .execute(&mut *tx)
                    .await
                    .map_err(backend("dropping a deleted config's notifications"))?;
                Ok(deleted.rows_affected() > 0)
            })
            .await?;
        Ok(deleted)
    }

    async fn count_configs(&self, tenant: &str, task_id: &str) -> Result<usize, StoreError> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM push_configs WHERE tenant = ?1 AND task_id = ?2",
        )
        .bind(tenant)
        .bind(task_id)
        .fetch_one(&self.readers)
        .await
        .map_err(backend("counting push configs"))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    async fn claim(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        lease: Duration,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        let now_us = micros(now);
        // Cheap check on a reader first: idle polling never takes the write lock.
        let any: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM push_outbox WHERE state = 0 AND next_attempt_micros <= ?1 \
             AND lease_until_micros <= ?1 LIMIT 1",
        )
        .bind(now_us)
        .fetch_optional(&self.readers)
        .await
        .map_err(backend("looking for due notifications"))?;
        if any.is_none() {
            return Ok(Vec::new());
        }
        let lease_us = i64::try_from(lease.as_micros()).unwrap_or(i64::MAX);
        let mut items = self
            .writer
            .transaction("committing a notification claim", async |tx| {
                // Due, unleased heads: no earlier pending row of the same config, and
                // no row of it in flight (after a requeue, a later row may be).
                let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "SELECT {OUTBOX_ITEM_COLUMNS} FROM push_outbox AS o \
             JOIN push_configs AS c \
               ON c.tenant = o.tenant AND c.task_id = o.task_id AND c.id = o.config_id \
             WHERE o.state = 0 AND o.next_attempt_micros <= ?1 AND o.lease_until_micros <= ?1 \
               AND NOT EXISTS (SELECT 1 FROM push_outbox AS p \
                   WHERE p.tenant = o.tenant AND p.task_id = o.task_id \
                     AND p.config_id = o.config_id AND p.seq < o.seq AND p.state = 0) \
               AND NOT EXISTS (SELECT 1 FROM push_outbox AS q \
                   WHERE q.tenant = o.tenant AND q.task_id = o.task_id \
                     AND q.config_id = o.config_id AND q.state = 0 \
                     AND q.lease_until_micros > ?1) \
             ORDER BY o.next_attempt_micros, o.id LIMIT ?2"
                )))
                .bind(now_us)
                .bind(db_limit(limit))
                .fetch_all(&mut *tx)
                .await
                .map_err(backend("claiming notifications"))?;
                let items = rows
                    .iter()
                    .map(decode_item)
                    .collect::<Result<Vec<_>, _>>()?;
                if !items.is_empty() {
                    let mut qb = QueryBuilder::<Sqlite>::new(
                        "UPDATE push_outbox SET attempts = attempts + 1, lease_until_micros = ",
                    );
                    qb.push_bind(now_us.saturating_add(lease_us));
                    qb.push(" WHERE id IN (");
                    let mut ids = qb.separated(", ");
                    for item in &items {
                        ids.push_bind(db_id(item.id));
                    }
                    ids.push_unseparated(")");
                    qb.build()
                        .execute(&mut *tx)
                        .await
                        .map_err(backend("leasing notifications"))?;
                }
                Ok(items)
            })
            .await?;
        for item in &mut items {
            item.attempts = item.attempts.saturating_add(1);
            // After a restart this is how the hints learn which tasks have configs.
            self.push.remember(&item.tenant, &item.task_id);
        }
        Ok(items)
    }

    async fn ack(&self, id: u64) -> Result<(), StoreError> {
        let delete = sqlx::query("DELETE FROM push_outbox WHERE id = ?1").bind(db_id(id));
        self.write_outbox(delete, "acknowledging a notification")
            .await
    }

    async fn retry(
        &self,
        id: u64,
        next_attempt_at: DateTime<Utc>,
        error: &str,
    ) -> Result<(), StoreError> {
        let update = sqlx::query(
            "UPDATE push_outbox SET next_attempt_micros = ?2, lease_until_micros = 0, \
             last_error = ?3 WHERE id = ?1",
        )
        .bind(db_id(id))
        .bind(micros(next_attempt_at))
        .bind(error);
        self.write_outbox(update, "scheduling a notification retry")
            .await
    }

    async fn dead_letter(&self, id: u64, error: &str) -> Result<(), StoreError> {
        let update = sqlx::query(
            "UPDATE push_outbox SET state = 1, lease_until_micros = 0, last_error = ?2 \
             WHERE id = ?1",
        )
        .bind(db_id(id))
        .bind(error);
        self.write_outbox(update, "dead-lettering a notification")
            .await
    }

    async fn list_dead_letters(
        &self,
        tenant: &str,
        task_id: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {OUTBOX_ITEM_COLUMNS} FROM push_outbox AS o \
             LEFT JOIN push_configs AS c \
               ON c.tenant = o.tenant AND c.task_id = o.task_id AND c.id = o.config_id \
             WHERE o.state = 1 AND o.tenant = ?1 AND (?2 IS NULL OR o.task_id = ?2) \
             ORDER BY o.id LIMIT ?3"
        )))
        .bind(tenant)
        .bind(task_id)
        .bind(db_limit(limit))
        .fetch_all(&self.readers)
        .await
        .map_err(backend("listing dead letters"))?;
        rows.iter().map(decode_item).collect()
    }

    async fn requeue_dead_letter(&self, tenant: &str, id: u64) -> Result<Requeue, StoreError> {
        let outcome = self
            .writer
            .transaction("committing a dead letter requeue", async |tx| {
                // The dead letter, and whether its config still exists.
                let found: Option<(String, i64)> = sqlx::query_as(
                    "SELECT o.task_id, EXISTS (SELECT 1 FROM push_configs AS c \
                 WHERE c.tenant = o.tenant AND c.task_id = o.task_id AND c.id = o.config_id) \
             FROM push_outbox AS o WHERE o.id = ?1 AND o.tenant = ?2 AND o.state = 1",
                )
                .bind(db_id(id))
                .bind(tenant)
                .fetch_optional(&mut *tx)
                .await
                .map_err(backend("looking up a dead letter"))?;
                let outcome = match found {
                    None => Requeue::NotFound,
                    Some((_, 0)) => Requeue::ConfigDeleted,
                    Some((task_id, _)) => {
                        sqlx::query(
                    "UPDATE push_outbox SET state = 0, attempts = 0, next_attempt_micros = 0, \
                     lease_until_micros = 0 WHERE id = ?1",
                )
                .bind(db_id(id))
                .execute(&mut *tx)
                .await
                .map_err(backend("requeueing a dead letter"))?;
                        self.push.remember(tenant, &task_id);
                        Requeue::Requeued
                    }
                };
                Ok(outcome)
            })
            .await?;
        if outcome == Requeue::Requeued {
            self.push.wakeup.notify_one();
        }
        Ok(outcome)
    }

    async fn pending_count(&self) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM push_outbox WHERE state = 0")
            .fetch_one(&self.readers)
            .await
            .map_err(backend("counting pending notifications"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn wakeup(&self) -> Option<Arc<tokio::sync::Notify>> {
        Some(self.push.wakeup.clone())
    }
}
