//! Several replicas on one database: announcements and leases.
//!
//! [`PgStore::replica`] turns a store into one replica's view of a shared
//! database and returns the [`PgCluster`] the engine needs (see
//! `switchboard_core::cluster` for what the engine does with it):
//!
//! - **Announcements.** After every commit (but one that creates a task
//!   already finished: nobody can follow a task before its first commit,
//!   and a later reader reads the store), a replica store queues
//!   `'["tenant","task id",seq]'` for its announcer, a background task that
//!   sends everything queued so far as `pg_notify('switchboard_appended', …)`
//!   in **one** statement (`SELECT pg_notify(…) FROM unnest(…)`). Not inside
//!   the commit: NOTIFY takes a global lock held until the end of the
//!   transaction, WAL flush included, which serialized all commits
//!   (measured: ~400 req/s at 64 connections, commits queueing on
//!   `Lock:object`). Not one statement per commit either: that doubled the
//!   statements PostgreSQL runs per commit, and the commit waited for it.
//!   Receivers always find the commit already visible, and a task's
//!   announcements stay in commit order (one queue, one sender). Each replica `LISTEN`s on one dedicated connection and
//!   re-broadcasts what it hears in-process. If that connection drops, or a
//!   replica dies between a commit and its NOTIFY, an announcement is lost:
//!   the cluster then announces a `Resync`, and the engine also re-reads
//!   every task it follows (but does not run) at each orphan sweep, so a lost
//!   announcement delays followers by one sweep at most.
//! - **Membership.** Each replica keeps a row in `replicas` (migration
//!   0011) that its heartbeat renews for one lease length; at each beat it
//!   counts the rows alive and lets its share of the group-commit budget
//!   ([`PgOptions::commit_writers`](crate::PgOptions::commit_writers)
//!   divided by the live replicas, at least one) write at once, so the
//!   database runs as many commit statements, with batches as big, however
//!   many replicas share it (measured: a second replica with its own
//!   writers halved the batches and cost PostgreSQL ~30 µs more CPU per
//!   task). Joining and [leaving](PgCluster::leave) send a NOTIFY on
//!   [`MEMBERS`], on which every replica counts again at once; a dead
//!   replica's row expires with its leases.
//! - **Leases.** A commit that leaves a task submitted or working sets
//!   `lease_owner` to the replica and `lease_until` to the database clock
//!   plus the lease length; other commits clear both. A heartbeat renews the
//!   replica's leases three times per lease length. `take_orphans` claims
//!   expired leases with `FOR UPDATE SKIP LOCKED`, so each orphan goes to
//!   exactly one survivor.
//! - **Shared quotas.** [`Cluster::acquire_run`] takes a place of a caller's
//!   concurrent-task quota in `run_quota` (migration 0013) in one statement
//!   that also records it per replica in `run_quota_held`; the run's end
//!   gives it back. The heartbeat that deletes an expired replica's row
//!   subtracts that replica's places in the same statement, and
//!   [`PgCluster::leave`] its own, so a dead replica's callers get their
//!   places back within about two lease lengths.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::PgListener;
use switchboard_core::{Announcement, Appended, Cluster, StoreError};
use tokio::sync::{Notify, broadcast, mpsc};

use crate::{PgStore, backend};

/// The NOTIFY channel commits are announced on.
pub const CHANNEL: &str = "switchboard_appended";

/// The NOTIFY channel a replica joining or leaving calls the others to count
/// again on.
pub const MEMBERS: &str = "switchboard_replicas";

/// The database's clock in microseconds, as leases are measured.
const NOW_MICROS: &str = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

/// Who this replica is, as its commits record it, and where its commits
/// are announced.
#[derive(Debug, Clone)]
pub(crate) struct Replica {
    pub(crate) id: Arc<String>,
    pub(crate) lease_micros: i64,
    pub(crate) announcer: mpsc::Sender<String>,
    /// When the heartbeat last renewed this replica's leases (none yet: `None`).
    renewed: Arc<std::sync::Mutex<Option<tokio::time::Instant>>>,
}

impl Replica {
    /// Whether the heartbeat renewed the leases within the last lease length.
    pub(crate) fn lease_held(&self) -> bool {
        let lease = Duration::from_micros(u64::try_from(self.lease_micros).unwrap_or(0));
        let renewed = *self.renewed.lock().unwrap_or_else(|e| e.into_inner());
        renewed.is_some_and(|at| at.elapsed() <= lease)
    }

    fn mark_renewed(&self) {
        *self.renewed.lock().unwrap_or_else(|e| e.into_inner()) = Some(tokio::time::Instant::now());
    }
}

/// Announcements waiting for the announcer; beyond this, new ones are
/// dropped (followers then catch up at the next sweep, see the module docs).
const ANNOUNCE_QUEUE: usize = 65_536;

/// Announcements sent per statement at most.
const ANNOUNCE_BATCH: usize = 1024;

/// One replica's membership in a shared database. Dropping it stops the
/// listener and the heartbeat (and so, eventually, this replica's leases).
#[derive(Debug)]
pub struct PgCluster {
    store: PgStore,
    replica: Replica,
    lease: Duration,
    announcements: broadcast::Sender<Announcement>,
    stop: tokio::sync::watch::Sender<bool>,
    /// Held by the heartbeat while it renews this replica's row, and by
    /// [`PgCluster::leave`] while it deletes it, so that a beat never
    /// brings the row back after the replica left.
    membership: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

impl PgStore {
    /// Makes this store one replica of several sharing the database: its
    /// commits take `lease`-long leases on the tasks they leave running and
    /// announce themselves to the other replicas. Returns the store to use
    /// and the cluster to give the engine
    /// (`RequestHandlerBuilder::cluster`). Starts listening before it
    /// returns, so no announcement made after this call is missed.
    pub async fn replica(self, lease: Duration) -> Result<(PgStore, Arc<PgCluster>), StoreError> {
        let lease = lease.max(Duration::from_millis(300));
        let (announcer, queue) = mpsc::channel(ANNOUNCE_QUEUE);
        let replica = Replica {
            id: Arc::new(uuid_like()),
            lease_micros: i64::try_from(lease.as_micros()).unwrap_or(i64::MAX),
            announcer,
            renewed: Arc::default(),
        };
        let store = PgStore {
            replica: Some(replica.clone()),
            ..self
        };
        let mut listener = PgListener::connect_with(&store.pool)
            .await
            .map_err(backend("connecting the LISTEN connection"))?;
        listener
            .listen_all([CHANNEL, MEMBERS])
            .await
            .map_err(backend("listening for announcements"))?;
        let (announcements, _) = broadcast::channel(4096);
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let recount = Arc::new(Notify::new());
        let membership = Arc::new(tokio::sync::Mutex::new(()));
        tokio::spawn(listen(
            listener,
            announcements.clone(),
            recount.clone(),
            stopped.clone(),
        ));
        tokio::spawn(heartbeat(
            store.clone(),
            replica.clone(),
            lease,
            Beat {
                recount,
                membership: membership.clone(),
                stopped: stopped.clone(),
            },
        ));
        tokio::spawn(send_announcements(store.pool.clone(), queue, stopped));
        let cluster = Arc::new(PgCluster {
            store: store.clone(),
            replica,
            lease,
            announcements,
            stop,
            membership,
        });
        tracing::info!(replica = %cluster.replica.id, lease_ms = lease.as_millis() as u64, "joined the replica set");
        Ok((store, cluster))
    }
}

/// A replica id: unique per process start, readable in logs.
fn uuid_like() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("replica-{}-{:x}", std::process::id(), nanos)
}

/// Re-broadcasts the announcements the LISTEN connection hears, and wakes
/// the heartbeat to count the replicas when one joins or leaves, until
/// `stopped`.
async fn listen(
    mut listener: PgListener,
    out: broadcast::Sender<Announcement>,
    recount: Arc<Notify>,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        let next = tokio::select! {
            _ = stopped.wait_for(|s| *s) => return,
            n = listener.try_recv() => n,
        };
        match next {
            Ok(Some(n)) if n.channel() == MEMBERS => recount.notify_one(),
            Ok(Some(n)) => match parse(n.payload()) {
                Some(a) => {
                    let _ = out.send(Announcement::Appended(a));
                }
                None => tracing::warn!(payload = n.payload(), "ignoring a malformed announcement"),
            },
            // The connection dropped (the next call reconnects): whatever
            // was announced meanwhile is lost, so everyone re-reads.
            Ok(None) => {
                tracing::warn!("the LISTEN connection dropped; resynchronizing live tasks");
                let _ = out.send(Announcement::Resync);
            }
            Err(e) => {
                tracing::warn!(error = %e, "the LISTEN connection failed; retrying in 1 s");
                let _ = out.send(Announcement::Resync);
                tokio::select! {
                    _ = stopped.wait_for(|s| *s) => return,
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        }
    }
}

/// Queues the announcement that task `task_id` of `tenant` now ends at
/// `seq`, for every replica (this one too). Never waits: when the queue is
/// full the announcement is dropped and followers catch up at the next
/// sweep.
pub(crate) fn announce(replica: &Replica, tenant: &str, task_id: &str, seq: i64) {
    let payload = serde_json::json!([tenant, task_id, seq]).to_string();
    if let Err(e) = replica.announcer.try_send(payload) {
        tracing::warn!(%task_id, error = %e, "dropped an announcement; followers catch up at the next sweep");
    }
}

/// Sends queued announcements, everything queued so far in one statement,
/// until the queue closes (the store is dropped) or `stopped`. Best effort:
/// a failed statement is logged, and followers catch up at the next sweep.
async fn send_announcements(
    pool: sqlx::PgPool,
    mut queue: mpsc::Receiver<String>,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    let mut batch = Vec::with_capacity(ANNOUNCE_BATCH);
    loop {
        batch.clear();
        let n = tokio::select! {
            _ = stopped.wait_for(|s| *s) => return,
            n = queue.recv_many(&mut batch, ANNOUNCE_BATCH) => n,
        };
        if n == 0 {
            return;
        }
        if let Err(e) = sqlx::query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p")
            .bind(CHANNEL)
            .bind(&batch)
            .execute(&pool)
            .await
        {
            tracing::warn!(error = %e, announcements = n, "announcing commits to the other replicas failed");
        }
    }
}

/// Reads `["tenant","task id",seq]`.
fn parse(payload: &str) -> Option<Appended> {
    let (tenant, task_id, seq): (String, String, u64) = serde_json::from_str(payload).ok()?;
    Some(Appended {
        tenant,
        task_id,
        seq,
    })
}

/// What the heartbeat answers to besides its clock.
struct Beat {
    /// A replica joined or left: count again now.
    recount: Arc<Notify>,
    /// See [`PgCluster::membership`].
    membership: Arc<tokio::sync::Mutex<()>>,
    stopped: tokio::sync::watch::Receiver<bool>,
}

/// Three times per lease length (and whenever a replica joins or leaves)
/// until `stopped`: renews this replica's leases and its row in `replicas`,
/// and sets its share of the group-commit budget from the replicas alive.
/// The first beat is at once, and tells the others that a replica joined.
async fn heartbeat(store: PgStore, replica: Replica, lease: Duration, mut beat: Beat) {
    let sql = format!("UPDATE tasks SET lease_until = {NOW_MICROS} + $2 WHERE lease_owner = $1");
    let mut tick = tokio::time::interval(lease / 3);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut joined = false;
    loop {
        tokio::select! {
            _ = beat.stopped.wait_for(|s| *s) => return,
            _ = tick.tick() => {}
            _ = beat.recount.notified() => {}
        }
        match sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(replica.id.as_str())
            .bind(replica.lease_micros)
            .execute(&store.pool)
            .await
        {
            Ok(_) => replica.mark_renewed(),
            Err(e) => tracing::warn!(error = %e, "renewing this replica's task leases failed"),
        }
        let guard = beat.membership.lock().await;
        if *beat.stopped.borrow() {
            return;
        }
        if let Err(e) = sqlx::query(DROP_EMPTY_PLACES).execute(&store.pool).await {
            tracing::debug!(error = %e, "deleting the empty shared concurrent-task counts failed");
        }
        match count_replicas(&store, &replica).await {
            Ok(alive) => {
                let budget = store.writers.writers();
                store.writers.set(budget / alive.max(1));
                if !joined {
                    joined = true;
                    notify_members(&store, &replica).await;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "counting the live replicas failed; commit writers unchanged");
            }
        }
        drop(guard);
    }
}

/// Renews this replica's row in `replicas` for one lease length, deletes the
/// rows that expired a lease length ago or more (replicas that died) and
/// gives back their places in the shared concurrent-task count, and returns
/// how many replicas are alive, this one included.
async fn count_replicas(store: &PgStore, replica: &Replica) -> Result<usize, StoreError> {
    let sql = format!(
        "WITH gone AS (DELETE FROM replicas WHERE alive_until < {NOW_MICROS} - $2 RETURNING id), \
              me AS (INSERT INTO replicas (id, alive_until) VALUES ($1, {NOW_MICROS} + $2) \
                     ON CONFLICT (id) DO UPDATE SET alive_until = EXCLUDED.alive_until), \
              {} \
         SELECT count(*) FROM replicas WHERE id <> $1 AND alive_until > {NOW_MICROS}",
        free_places_of("gone")
    );
    let others: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(replica.id.as_str())
        .bind(replica.lease_micros)
        .fetch_one(&store.pool)
        .await
        .map_err(backend("counting the live replicas"))?;
    Ok(usize::try_from(others).unwrap_or(0).saturating_add(1))
}

/// The common table expressions that give back the shared concurrent-task
/// places held by the replicas whose ids the CTE `gone` lists: their rows in
/// `run_quota_held` go, and each caller's total drops by what they held.
fn free_places_of(gone: &str) -> String {
    format!(
        "freed AS (DELETE FROM run_quota_held AS h USING {gone} \
             WHERE h.replica = {gone}.id RETURNING h.key, h.held), \
         lowered AS (UPDATE run_quota AS q SET held = greatest(q.held - f.held, 0) \
             FROM (SELECT key, sum(held) AS held FROM freed GROUP BY key) AS f \
             WHERE q.key = f.key)"
    )
}

/// Takes a place: $1 the quota's name, $2 its size, $3 this replica. Counts
/// 1 when taken. The total's row is locked by the upsert and its `WHERE`
/// re-read on the latest version, so concurrent takers never overshoot.
const ACQUIRE_RUN: &str = "WITH k AS (SELECT sha256(convert_to($1, 'UTF8')) AS key), \
     total AS (INSERT INTO run_quota AS q (key, held) SELECT key, 1 FROM k \
         ON CONFLICT (key) DO UPDATE SET held = q.held + 1 WHERE q.held < $2 \
         RETURNING q.key), \
     mine AS (INSERT INTO run_quota_held AS h (key, replica, held) SELECT key, $3, 1 FROM total \
         ON CONFLICT (replica, key) DO UPDATE SET held = h.held + 1 RETURNING 1) \
     SELECT count(*) FROM mine";

/// Gives a place back: $1 the quota's name, $2 this replica. The total drops
/// only if this replica still holds a place there (its places may have been
/// given back already, had its row expired while it lived).
const RELEASE_RUN: &str = "WITH k AS (SELECT sha256(convert_to($1, 'UTF8')) AS key), \
     mine AS (UPDATE run_quota_held AS h SET held = h.held - 1 FROM k \
         WHERE h.replica = $2 AND h.key = k.key AND h.held > 0 RETURNING h.key) \
     UPDATE run_quota AS q SET held = q.held - 1 FROM mine WHERE q.key = mine.key AND q.held > 0";

/// Deletes the shared counts left at zero (runs end far more often than
/// callers come and go, so this is not done at every release).
const DROP_EMPTY_PLACES: &str = "WITH a AS (DELETE FROM run_quota_held WHERE held <= 0) \
     DELETE FROM run_quota WHERE held <= 0";

/// Calls every replica (this one too) to count the replicas again.
async fn notify_members(store: &PgStore, replica: &Replica) {
    if let Err(e) = sqlx::query("SELECT pg_notify($1, $2)")
        .bind(MEMBERS)
        .bind(replica.id.as_str())
        .execute(&store.pool)
        .await
    {
        tracing::warn!(error = %e, "telling the other replicas about a change of members failed");
    }
}

#[async_trait]
impl Cluster for PgCluster {
    fn replica_id(&self) -> &str {
        &self.replica.id
    }

    fn announcements(&self) -> broadcast::Receiver<Announcement> {
        self.announcements.subscribe()
    }

    async fn take_orphans(&self, limit: usize) -> Result<Vec<(String, String)>, StoreError> {
        let sql = format!(
            "UPDATE tasks SET lease_owner = $1, lease_until = {NOW_MICROS} + $2 \
             WHERE (tenant, id) IN ( \
                 SELECT tenant, id FROM tasks \
                 WHERE lease_owner IS NOT NULL AND lease_until < {NOW_MICROS} \
                 ORDER BY lease_until LIMIT $3 FOR UPDATE SKIP LOCKED) \
             RETURNING tenant, id"
        );
        let rows: Vec<(String, String)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(self.replica.id.as_str())
            .bind(self.replica.lease_micros)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.store.pool)
            .await
            .map_err(backend("claiming orphaned tasks"))?;
        Ok(rows)
    }

    async fn leave(&self) {
        PgCluster::leave(self).await;
    }

    async fn acquire_run(&self, key: &str, max: usize) -> Result<bool, StoreError> {
        let taken: i64 = sqlx::query_scalar(ACQUIRE_RUN)
            .bind(key)
            .bind(i64::try_from(max).unwrap_or(i64::MAX))
            .bind(self.replica.id.as_str())
            .fetch_one(&self.store.pool)
            .await
            .map_err(backend(
                "taking a place in the shared concurrent-task count",
            ))?;
        Ok(taken == 1)
    }

    async fn release_run(&self, key: &str) {
        if let Err(e) = sqlx::query(RELEASE_RUN)
            .bind(key)
            .bind(self.replica.id.as_str())
            .execute(&self.store.pool)
            .await
        {
            tracing::warn!(error = %e, "giving back a place in the shared concurrent-task count failed; it is given back when this replica leaves");
        }
    }
}

impl PgCluster {
    /// How long a lease lasts without renewal.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// Leaves the replica set: stops the heartbeat and the listener, deletes
    /// this replica's row and calls the others to count again, so they take
    /// back its share of the commit writers now instead of when the row
    /// expires. Its leases run out as usual (the tasks it leaves running are
    /// orphans for the others). Best effort: a failure is logged.
    pub async fn leave(&self) {
        self.stop.send_replace(true);
        let _guard = self.membership.lock().await;
        // Its places in the shared concurrent-task count go with it (runs
        // still ending now find theirs gone and give back nothing).
        let sql = format!(
            "WITH row AS (DELETE FROM replicas WHERE id = $1), me AS (SELECT $1::text AS id), {} \
             SELECT 1",
            free_places_of("me")
        );
        let gone = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(self.replica.id.as_str())
            .execute(&self.store.pool)
            .await;
        match gone {
            Ok(_) => notify_members(&self.store, &self.replica).await,
            Err(e) => {
                tracing::warn!(error = %e, "leaving the replica set failed; the others notice when its row expires")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_parse() {
        assert_eq!(
            parse(r#"["t","id-1",7]"#),
            Some(Appended {
                tenant: "t".into(),
                task_id: "id-1".into(),
                seq: 7
            })
        );
        assert_eq!(parse("garbage"), None);
        assert_eq!(parse(r#"["t","id",-1]"#), None);
    }
}
