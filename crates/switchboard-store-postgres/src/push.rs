//! [`PushStore`] for [`PgStore`]: webhook configs and a durable outbox that
//! several replicas drain together.
//!
//! ## Same transaction as the event
//!
//! Outbox rows are written by the `push_outbox_fill` trigger (migration
//! `0002_push.sql`, as last replaced by `0012_push_trigger_per_statement.sql`):
//! once per statement that appends to `task_events` (a group commit appends
//! many tasks' events in one), it queues every appended row in
//! `push_outbox` once per config of its task, each task's events in
//! sequence order; a config of
//! [`PayloadKind::TaskSnapshot`](switchboard_core::push::PayloadKind::TaskSnapshot) is queued the task row the same statement
//! wrote instead, unless the event is itself a task (`is_task`). The trigger
//! runs inside the commit's own statement, so the commit path knows nothing
//! about push beyond `is_task`, and an event is durable exactly when its
//! notifications are queued. The trigger
//! also sends `NOTIFY switchboard_push` (delivered only if the transaction
//! commits), which wakes the delivery workers of **every** replica
//! ([`PushStore::wakeup`] listens for it).
//!
//! ## Claiming with `SKIP LOCKED`
//!
//! [`claim`](PushStore::claim) is one statement:
//!
//! ```text
//! WITH heads AS (SELECT … due, unleased, no earlier pending item of the config
//!                FOR UPDATE OF o SKIP LOCKED LIMIT n)
//! UPDATE push_outbox SET attempts + 1, lease_until = now + lease FROM heads …
//! ```
//!
//! Why no item goes to two replicas, and no config has two items in flight:
//!
//! - Two claims racing for the same row: one locks it, the other *skips* it
//!   (no waiting). If the first already committed, PostgreSQL re-checks the
//!   row's `WHERE` on its newest version, finds the lease, and drops it.
//! - A config's next item N+1 is only a head when no earlier item of the
//!   config is pending in the claim's snapshot. Item N stays pending while it
//!   is leased, waiting for a retry or being delivered; it stops being
//!   pending only when it is acked (deleted) or dead-lettered, both
//!   committed. So N+1 cannot be claimed while N is anywhere in flight.
//! - A replica that dies holding a lease loses nothing: the lease runs out
//!   and the row is due again (at-least-once).
//!
//! ## Dead letters
//!
//! A dead letter is a row with `state = 1`; it keeps its payload, attempts
//! and last error for `switchboard push dead-letters`, and
//! [`requeue_dead_letter`](PushStore::requeue_dead_letter) turns it back
//! into a pending row.
//!
//! ## Shared signing keys
//!
//! Replicas must sign with the same keys, or a receiver would see valid
//! notifications from one replica and unknown `kid`s from another. The key
//! set document lives in `push_signing_keys` (one row, with a version):
//! [`PgStore::push_keys_init`] stores a candidate unless another replica
//! stored one first and returns whichever won, and
//! [`PgStore::push_keys_replace`] is a compare-and-set on the version, so a
//! rotation on one replica is never lost to a concurrent one.

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Postgres;
use sqlx::postgres::PgArguments;
use sqlx::postgres::{PgListener, PgRow};
use sqlx::query::{Query, QueryAs};
use switchboard_core::StoreError;
use switchboard_core::push::{
    ConfigPage, ConfigQuery, OutboxItem, PushConfig, PushStore, PutConfig, Requeue,
};
use switchboard_core::store::rows::{self, OUTBOX_ITEM_COLUMNS, db_after, db_id, db_limit};

use crate::{Columns, PgStore, backend};

/// The `NOTIFY` channel the outbox trigger signals on.
pub const PUSH_CHANNEL: &str = "switchboard_push";

/// Push state of one [`PgStore`] (shared by its clones): the wakeup signal
/// and the listener task that raises it.
#[derive(Debug, Default)]
pub(crate) struct PushShared {
    wakeup: Arc<tokio::sync::Notify>,
    /// Set once the `LISTEN` task was started (at the first `wakeup()`).
    listening: OnceLock<()>,
}

/// The key set document shared by the replicas, and its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedKeyDocument {
    /// The key file JSON (see `switchboard_push::KeySet`).
    pub document: String,
    /// Bumped at every change; compare it to notice rotations.
    pub version: i64,
}

fn decode_config(row: &PgRow) -> Result<PushConfig, StoreError> {
    rows::push_config(&Columns(row))
}

fn decode_item(row: &PgRow) -> Result<OutboxItem, StoreError> {
    rows::outbox_item(&Columns(row))
}

/// Leases due heads and returns them with their delivery target. A head is
/// a config's lowest pending item; it is not handed out while any item of
/// its config holds a live lease (after a requeued dead letter, a later
/// item may be the one in flight). `$1` now
/// (µs), `$2` limit, `$3` lease end (µs). See the module docs for why this
/// is safe with several replicas.
const CLAIM: &str = "WITH heads AS ( \
         SELECT o.id FROM push_outbox AS o \
         WHERE o.state = 0 AND o.next_attempt_micros <= $1 AND o.lease_until_micros <= $1 \
           AND EXISTS (SELECT 1 FROM push_configs AS c \
               WHERE c.tenant = o.tenant AND c.task_id = o.task_id AND c.id = o.config_id) \
           AND NOT EXISTS (SELECT 1 FROM push_outbox AS p \
               WHERE p.tenant = o.tenant AND p.task_id = o.task_id \
                 AND p.config_id = o.config_id AND p.seq < o.seq AND p.state = 0) \
           AND NOT EXISTS (SELECT 1 FROM push_outbox AS q \
               WHERE q.tenant = o.tenant AND q.task_id = o.task_id \
                 AND q.config_id = o.config_id AND q.state = 0 \
                 AND q.lease_until_micros > $1) \
         ORDER BY o.next_attempt_micros, o.id \
         LIMIT $2 \
         FOR UPDATE OF o SKIP LOCKED \
     ), claimed AS ( \
         UPDATE push_outbox AS u SET attempts = u.attempts + 1, lease_until_micros = $3 \
         FROM heads WHERE u.id = heads.id \
         RETURNING u.* \
     ) \
     SELECT o.id, o.tenant, o.task_id, o.config_id, o.seq, o.payload, \
         o.payload_kind, o.state, o.attempts, o.last_error, o.created_micros, \
         c.url, c.token, c.auth_scheme, c.auth_credentials, c.hidden_metadata_keys \
     FROM claimed AS o JOIN push_configs AS c \
       ON c.tenant = o.tenant AND c.task_id = o.task_id AND c.id = o.config_id \
     ORDER BY o.next_attempt_micros, o.id";

/// Stores a config in one statement: replaces it in place (keeping its
/// position) when its id exists, else inserts it unless the task already
/// has `$11` configs; answers whether it replaced and whether it created.
/// Parameters 1 to 9 as [`bind_config`] binds them, `$10` the creation time
/// (µs). The caller holds the task's config lock, so the count cannot change
/// under it.
const PUT_CONFIG: &str = "WITH replaced AS ( \
         UPDATE push_configs SET url = $4, token = $5, auth_scheme = $6, \
             auth_credentials = $7, payload_kind = $8, hidden_metadata_keys = $9 \
         WHERE tenant = $1 AND task_id = $2 AND id = $3 \
         RETURNING 1 \
     ), created AS ( \
         INSERT INTO push_configs (tenant, task_id, id, url, token, auth_scheme, \
             auth_credentials, payload_kind, hidden_metadata_keys, created_micros) \
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 \
         WHERE NOT EXISTS (SELECT 1 FROM replaced) \
           AND (SELECT count(*) FROM push_configs WHERE tenant = $1 AND task_id = $2) < $11 \
         RETURNING 1 \
     ) \
     SELECT EXISTS (SELECT 1 FROM replaced), EXISTS (SELECT 1 FROM created)";

/// Binds a config's columns as parameters 1 to 9 (tenant, task_id, id,
/// url, token, auth_scheme, auth_credentials, payload_kind,
/// hidden_metadata_keys), the order [`PUT_CONFIG`] reads them in.
fn bind_config<'q, O>(
    query: QueryAs<'q, Postgres, O, PgArguments>,
    config: &'q PushConfig,
    hidden: &'q str,
) -> QueryAs<'q, Postgres, O, PgArguments> {
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

/// `sql` with one config's key bound as parameters 1 to 3 (tenant,
/// task_id, id).
fn on_config<'q>(
    sql: &'static str,
    tenant: &'q str,
    task_id: &'q str,
    id: &'q str,
) -> Query<'q, Postgres, PgArguments> {
    sqlx::query(sql).bind(tenant).bind(task_id).bind(id)
}

impl PgStore {
    /// Runs one outbox statement on its own (it reads nothing it depends on).
    async fn write_outbox(
        &self,
        statement: Query<'_, Postgres, PgArguments>,
        what: &str,
    ) -> Result<(), StoreError> {
        statement.execute(&self.pool).await.map_err(backend(what))?;
        Ok(())
    }
}

#[async_trait]
impl PushStore for PgStore {
    async fn put_config(
        &self,
        config: &PushConfig,
        max_per_task: usize,
    ) -> Result<PutConfig, StoreError> {
        let hidden = rows::hidden_keys_column(config)?;
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(backend("starting a push config transaction"))?;
        // The limit must hold against concurrent creators on other replicas:
        // serialize the task's config writers on a transaction-scoped lock
        // (keyed by a hash; a collision only makes two tasks wait for each other).
        sqlx::query(
            "SELECT pg_advisory_xact_lock(hashtextextended(length($1) || ':' || $1 || $2, 7))",
        )
        .bind(&config.tenant)
        .bind(&config.task_id)
        .execute(&mut *tx)
        .await
        .map_err(backend("locking a task's push configs"))?;
        let (replaced, created): (bool, bool) =
            bind_config(sqlx::query_as(PUT_CONFIG), config, &hidden)
                .bind(Utc::now().timestamp_micros())
                .bind(i64::try_from(max_per_task).unwrap_or(i64::MAX))
                .fetch_one(&mut *tx)
                .await
                .map_err(backend("storing a push config"))?;
        let outcome = match (replaced, created) {
            (true, _) => PutConfig::Replaced,
            (false, true) => PutConfig::Created,
            (false, false) => PutConfig::LimitReached,
        };
        tx.commit()
            .await
            .map_err(backend("committing a push config"))?;
        Ok(outcome)
    }

    async fn get_config(
        &self,
        tenant: &str,
        task_id: &str,
        id: &str,
    ) -> Result<Option<PushConfig>, StoreError> {
        let select = "SELECT * FROM push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3";
        let row = on_config(select, tenant, task_id, id)
            .fetch_optional(&self.pool)
            .await
            .map_err(backend("reading a push config"))?;
        row.as_ref().map(decode_config).transpose()
    }

    async fn list_configs(&self, query: ConfigQuery<'_>) -> Result<ConfigPage, StoreError> {
        let after = db_after(query.after);
        // One extra row tells whether there is a next page.
        let rows = sqlx::query(
            "SELECT * FROM push_configs WHERE tenant = $1 AND task_id = $2 AND ord > $3 \
             ORDER BY ord LIMIT $4",
        )
        .bind(query.tenant)
        .bind(query.task_id)
        .bind(after)
        .bind(db_limit(query.limit).saturating_add(1))
        .fetch_all(&self.pool)
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
        // One statement: the config and its pending items go together;
        // dead letters stay for inspection.
        let delete = "WITH dropped AS ( \
                 DELETE FROM push_outbox WHERE tenant = $1 AND task_id = $2 \
                     AND config_id = $3 AND state = 0 \
             ) \
             DELETE FROM push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3";
        let deleted = on_config(delete, tenant, task_id, id)
            .execute(&self.pool)
            .await
            .map_err(backend("deleting a push config"))?;
        Ok(deleted.rows_affected() > 0)
    }

    async fn count_configs(&self, tenant: &str, task_id: &str) -> Result<usize, StoreError> {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM push_configs WHERE tenant = $1 AND task_id = $2",
        )
        .bind(tenant)
        .bind(task_id)
        .fetch_one(&self.pool)
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
        if limit == 0 {
            return Ok(Vec::new());
        }
        let now_us = now.timestamp_micros();
        let lease_us = i64::try_from(lease.as_micros()).unwrap_or(i64::MAX);
        let rows = sqlx::query(CLAIM)
            .bind(now_us)
            .bind(db_limit(limit))
            .bind(now_us.saturating_add(lease_us))
            .fetch_all(&self.pool)
            .await
            .map_err(backend("claiming notifications"))?;
        rows.iter().map(decode_item).collect()
    }

    async fn ack(&self, id: u64) -> Result<(), StoreError> {
        let delete = sqlx::query("DELETE FROM push_outbox WHERE id = $1").bind(db_id(id));
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
            "UPDATE push_outbox SET next_attempt_micros = $2, lease_until_micros = 0, \
             last_error = $3 WHERE id = $1",
        )
        .bind(db_id(id))
        .bind(next_attempt_at.timestamp_micros())
        .bind(error);
        self.write_outbox(update, "scheduling a notification retry")
            .await
    }

    async fn dead_letter(&self, id: u64, error: &str) -> Result<(), StoreError> {
        let update = sqlx::query(
            "UPDATE push_outbox SET state = 1, lease_until_micros = 0, last_error = $2 \
             WHERE id = $1",
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
             WHERE o.state = 1 AND o.tenant = $1 AND ($2::text IS NULL OR o.task_id = $2) \
             ORDER BY o.id LIMIT $3"
        )))
        .bind(tenant)
        .bind(task_id)
        .bind(db_limit(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(backend("listing dead letters"))?;
        rows.iter().map(decode_item).collect()
    }

    async fn requeue_dead_letter(&self, tenant: &str, id: u64) -> Result<Requeue, StoreError> {
        // One statement: look at the dead letter and its config, and flip it
        // back to pending only if the config still exists.
        let row: Option<(bool,)> = sqlx::query_as(
            "WITH dead AS ( \
                 SELECT o.id, EXISTS (SELECT 1 FROM push_configs AS c \
                     WHERE c.tenant = o.tenant AND c.task_id = o.task_id \
                       AND c.id = o.config_id) AS has_config \
                 FROM push_outbox AS o WHERE o.id = $1 AND o.tenant = $2 AND o.state = 1 \
                 FOR UPDATE \
             ), requeued AS ( \
                 UPDATE push_outbox AS u SET state = 0, attempts = 0, next_attempt_micros = 0, \
                     lease_until_micros = 0 \
                 FROM dead WHERE u.id = dead.id AND dead.has_config \
             ) \
             SELECT has_config FROM dead",
        )
        .bind(db_id(id))
        .bind(tenant)
        .fetch_optional(&self.pool)
        .await
        .map_err(backend("requeueing a dead letter"))?;
        Ok(match row {
            None => Requeue::NotFound,
            Some((false,)) => Requeue::ConfigDeleted,
            Some((true,)) => {
                // Wake the workers of every replica (best effort: polling
                // picks the item up anyway).
                if let Err(e) = sqlx::query("SELECT pg_notify($1, '')")
                    .bind(PUSH_CHANNEL)
                    .execute(&self.pool)
                    .await
                {
                    tracing::debug!(error = %e, "announcing a requeued dead letter");
                }
                Requeue::Requeued
            }
        })
    }

    async fn pending_count(&self) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM push_outbox WHERE state = 0")
            .fetch_one(&self.pool)
            .await
            .map_err(backend("counting pending notifications"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// Starts (once per store) a task that `LISTEN`s on [`PUSH_CHANNEL`] and
    /// raises the signal for every notification, whichever replica queued it.
    /// If the listening connection fails, sqlx reconnects; notifications
    /// missed meanwhile are covered by the worker's polling.
    fn wakeup(&self) -> Option<Arc<tokio::sync::Notify>> {
        let shared = &self.push;
        if shared.listening.set(()).is_ok() {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(listen(self.pool.clone(), Arc::downgrade(&shared.wakeup)));
                }
                Err(_) => return None,
            }
        }
        Some(shared.wakeup.clone())
    }
}

/// The `LISTEN` loop behind [`PgStore::wakeup`]. Ends when the store (and
/// everyone holding its signal) is gone or its pool is closed.
async fn listen(pool: sqlx::PgPool, wakeup: Weak<tokio::sync::Notify>) {
    let mut listener = loop {
        if pool.is_closed() || wakeup.strong_count() == 0 {
            return;
        }
        match PgListener::connect_with(&pool).await {
            Ok(mut l) => match l.listen(PUSH_CHANNEL).await {
                Ok(()) => break l,
                Err(e) => tracing::warn!(error = %e, "LISTEN for push notifications failed"),
            },
            Err(e) => tracing::warn!(error = %e, "connecting to LISTEN for push notifications"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    loop {
        match listener.try_recv().await {
            Ok(Some(_)) => {
                let Some(n) = wakeup.upgrade() else { return };
                n.notify_one();
            }
            // The connection dropped; sqlx reconnects at the next call.
            // Wake the worker once, since notifications may have been missed.
            Ok(None) => {
                let Some(n) = wakeup.upgrade() else { return };
                n.notify_one();
            }
            Err(e) => {
                if pool.is_closed() || wakeup.strong_count() == 0 {
                    return;
                }
                tracing::warn!(error = %e, "listening for push notifications");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

impl PgStore {
    /// Stores `candidate` as the replicas' push signing key set unless one is
    /// stored already, and returns the stored one (the first replica's
    /// candidate wins; the others load it).
    pub async fn push_keys_init(&self, candidate: &str) -> Result<SharedKeyDocument, StoreError> {
        sqlx::query(
            "INSERT INTO push_signing_keys (id, document, version) VALUES (1, $1, 1) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(candidate)
        .execute(&self.pool)
        .await
        .map_err(backend("storing the push signing keys"))?;
        self.push_keys()
            .await?
            .ok_or_else(|| StoreError::Corrupt("push_signing_keys lost its row".into()))
    }

    /// The stored push signing key set, if any.
    pub async fn push_keys(&self) -> Result<Option<SharedKeyDocument>, StoreError> {
        let row: Option<(String, i64)> =
            sqlx::query_as("SELECT document, version FROM push_signing_keys WHERE id = 1")
                .fetch_optional(&self.pool)
                .await
                .map_err(backend("reading the push signing keys"))?;
        Ok(row.map(|(document, version)| SharedKeyDocument { document, version }))
    }

    /// Replaces the stored key set if its version is still `expected`;
    /// returns the new version, or `None` when another replica changed it
    /// first (reload and try again).
    pub async fn push_keys_replace(
        &self,
        expected: i64,
        document: &str,
    ) -> Result<Option<i64>, StoreError> {
        sqlx::query_scalar(
            "UPDATE push_signing_keys SET document = $2, version = version + 1 \
             WHERE id = 1 AND version = $1 RETURNING version",
        )
        .bind(expected)
        .bind(document)
        .fetch_optional(&self.pool)
        .await
        .map_err(backend("replacing the push signing keys"))
    }
}
