//! The store's readiness check (`TaskStore::health`), what `/readyz` asks.
//!
//! Ready means four things, checked with one cheap query and two looks at
//! memory: the database answers; every migration this build embeds is
//! recorded as applied (a replica started against a database another
//! version has not migrated yet would fail on its first commit); for a
//! replica, the lease heartbeat succeeded within the last lease length (a
//! replica that cannot renew its leases is about to have its running tasks
//! taken by the others as orphans, so it should get no new work); and
//! writes work: the database does not refuse them outright (a read-only
//! transaction: a standby, `default_transaction_read_only`), and no commit
//! failed within the last [`WRITE_FAILURE_HOLD`] unless one succeeded
//! since. A full disk fails commits while reads go on; PostgreSQL ends the
//! failed transactions itself and the pool's connections stay usable, so
//! commits succeed again once there is space, without a restart. No probe
//! write tells that moment apart (a small write fits in pages the tables
//! already have), so readiness comes back after the hold and callers'
//! commits show whether the cause is gone
//! (`switchboard_core::store::writes`).

use std::time::Duration;

use sqlx::PgPool;
use sqlx::migrate::Migrator;
use switchboard_core::StoreError;
use switchboard_core::store::writes::WriteHealth;

/// How long a failed commit keeps the store not ready, unless a commit
/// succeeds first.
pub(crate) const WRITE_FAILURE_HOLD: Duration = Duration::from_secs(10);

use crate::cluster::Replica;

pub(crate) async fn check(
    pool: &PgPool,
    migrator: &Migrator,
    replica: Option<&Replica>,
    writes: &WriteHealth,
) -> Result<(), StoreError> {
    let (applied, read_only): (i64, bool) = sqlx::query_as(
        "SELECT (SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations WHERE success), \
                current_setting('transaction_read_only') = 'on'",
    )
    .fetch_one(pool)
    .await
    .map_err(crate::backend("health check"))?;
    let latest = migrator.iter().map(|m| m.version).max().unwrap_or(0);
    if applied < latest {
        return Err(StoreError::Backend(format!(
            "schema at migration {applied}, this build needs {latest}"
        )));
    }
    // Before the lease: a database refusing writes also stops the
    // heartbeat, and is the cause to report.
    if read_only {
        return Err(StoreError::Backend(
            "the database refuses writes (read-only transactions)".into(),
        ));
    }
    if let Some(replica) = replica
        && !replica.lease_held()
    {
        return Err(StoreError::Backend(
            "this replica has not renewed its task leases within a lease length".into(),
        ));
    }
    if let Some(error) = writes.recent_failure(WRITE_FAILURE_HOLD) {
        return Err(StoreError::Backend(format!("writes fail: {error}")));
    }
    Ok(())
}
