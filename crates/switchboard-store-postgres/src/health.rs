//! The store's readiness check (`TaskStore::health`), what `/readyz` asks.
//!
//! Ready means three things, checked with one cheap query and one look at
//! memory: the database answers; every migration this build embeds is
//! recorded as applied (a replica started against a database another
//! version has not migrated yet would fail on its first commit); and, for a
//! replica, the lease heartbeat succeeded within the last lease length. A
//! replica that cannot renew its leases is about to have its running tasks
//! taken by the others as orphans, so it should get no new work.

use sqlx::PgPool;
use sqlx::migrate::Migrator;
use switchboard_core::StoreError;

use crate::cluster::Replica;

pub(crate) async fn check(
    pool: &PgPool,
    migrator: &Migrator,
    replica: Option<&Replica>,
) -> Result<(), StoreError> {
    let applied: i64 =
        sqlx::query_scalar("SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations WHERE success")
            .fetch_one(pool)
            .await
            .map_err(crate::backend("health check"))?;
    let latest = migrator.iter().map(|m| m.version).max().unwrap_or(0);
    if applied < latest {
        return Err(StoreError::Backend(format!(
            "schema at migration {applied}, this build needs {latest}"
        )));
    }
    if let Some(replica) = replica
        && !replica.lease_held()
    {
        return Err(StoreError::Backend(
            "this replica has not renewed its task leases within a lease length".into(),
        ));
    }
    Ok(())
}
