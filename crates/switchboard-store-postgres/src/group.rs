//! Group commit: many tasks' commits in one statement, one transaction,
//! one WAL flush.
//!
//! With `synchronous_commit = on` every transaction waits for its WAL
//! flush, and every statement is a round trip plus a backend wake-up.
//! Writing each commit as its own transaction makes PostgreSQL do that work
//! once per task; with a small pool (10 connections against 64 clients) the
//! commits also queue for connections while each waits out its flush.
//!
//! So, like the SQLite store, [`PgStore::commit_events`](crate::PgStore)
//! hands its row to a queue, and a few **writers** (each on one pooled
//! connection at a time) take whatever has queued while they were busy and
//! write it as **one** statement: the rows travel as parallel arrays
//! (`unnest`), a data-modifying CTE creates the new tasks
//! (`INSERT … ON CONFLICT … WHERE last_seq = 0`), updates the others
//! (`UPDATE … FROM input WHERE last_seq = expected`) and appends the
//! events of exactly the rows it wrote. Each commit keeps its own
//! condition, so one commit's sequence conflict never stops another's; the
//! statement returns which rows it applied.
//!
//! - A batch holds each task at most once (a second commit of the same task
//!   that one writer took waits for its next batch), since one statement
//!   cannot update a row twice. Order between a task's commits is not the
//!   writers' to keep: the engine commits a task under its runtime's lock,
//!   one commit at a time, each waiting for its answer. Should two commits
//!   of one task be queued at once anyway, two writers may take one each;
//!   both expect the same sequence number, so exactly one applies and the
//!   other is answered as a conflict. Rows are sorted by key, so with
//!   the usual plan (index lookups driven by the input) two batches lock the
//!   tasks they share in the same order; should a plan lock them otherwise
//!   and two batches deadlock, PostgreSQL aborts one statement, which then
//!   takes the fallback below.
//! - If the statement fails as a whole (e.g. a deadlock with another
//!   replica, or one row breaking a constraint), nothing of it was written,
//!   and each commit is retried alone with the one-row statements, so one
//!   bad row fails only its own commit.
//! - A commit's caller waits for the statement's `COMMIT`: durability is
//!   unchanged, the flush is only shared.

use std::collections::HashSet;
use std::sync::Arc;

use sqlx::PgPool;
use switchboard_core::StoreError;
use tokio::sync::{Mutex, Semaphore, mpsc, oneshot};

use crate::{TaskRow, backend};

/// Writers working at once by default ([`PgOptions::commit_writers`]); each
/// holds one pooled connection while it writes a batch.
///
/// Two, measured (`bench/pg.sh replicas`, bench/RESULTS.md, session 16):
/// PostgreSQL spends ~460 µs of CPU per statement besides ~65 µs per task,
/// so at 64 clients four writers (batches of ~8) cost the machine ~215 µs
/// per task, two (~15) ~185 µs, one (~32) ~160 µs. One writer leaves the
/// server and PostgreSQL taking turns (nothing gathers while the only
/// statement runs, and a slow statement stalls every commit); two overlap
/// them at little extra cost.
///
/// [`PgOptions::commit_writers`]: crate::PgOptions::commit_writers
pub(crate) const WRITERS: usize = 2;

/// Most commits per statement.
const MAX_BATCH: usize = 256;

/// Commits waiting for a writer; senders wait when it is full.
const QUEUE: usize = 4096;

/// The `storage_usage` shards writers spread over (migration 0014): each
/// writer adds to its own row of an owner's count, picked at random once,
/// so writers (of this store or of other replicas) seldom wait for one
/// another's lock on it.
const USAGE_SHARDS: u64 = 64;

/// A shard for a new writer: pseudo-random (a hash of the time and a
/// counter), for spreading only.
fn pick_shard() -> i16 {
    use std::hash::{BuildHasher, Hasher};
    static STARTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    i16::try_from(h.finish() % USAGE_SHARDS).unwrap_or(0)
}

/// One commit waiting for its batch.
pub(crate) struct Job {
    pub(crate) row: TaskRow,
    /// The replica that leases the task (tasks left submitted or working on
    /// a replica store), and for how long.
    pub(crate) lease_owner: Option<Arc<String>>,
    pub(crate) lease_micros: i64,
    /// Whether the commit was applied (`false`: a sequence conflict).
    pub(crate) done: oneshot::Sender<Result<bool, StoreError>>,
}

/// How many of a store's writers may write at once: the writers each take
/// a permit before they take commits from the queue, and give it back when
/// their statement is answered. A lone store keeps all of its
/// [`PgOptions::commit_writers`]; a replica store's heartbeat lowers the
/// limit to its share of that budget while other replicas are alive (see
/// `cluster.rs`), so the database runs about as many group commits at once,
/// with batches as big, whatever the number of replicas.
///
/// [`PgOptions::commit_writers`]: crate::PgOptions::commit_writers
#[derive(Debug)]
pub(crate) struct WriterLimit {
    permits: Arc<Semaphore>,
    /// The limit in force: the permits in circulation, once any shrinking
    /// has taken its permits back.
    current: std::sync::Mutex<usize>,
    /// The writers running, which the limit never exceeds.
    writers: usize,
}

impl WriterLimit {
    fn new(writers: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(writers)),
            current: std::sync::Mutex::new(writers),
            writers,
        }
    }

    /// The writers this store runs, and so the most that may write at once.
    pub(crate) fn writers(&self) -> usize {
        self.writers
    }

    /// How many writers may write at once now.
    pub(crate) fn get(&self) -> usize {
        *self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lets `limit` writers (at least one, at most the writers running)
    /// write at once. Raising it takes effect at once; lowering it as the
    /// statements in flight end (their permits are taken out of circulation
    /// as they come back).
    pub(crate) fn set(&self, limit: usize) {
        let limit = limit.clamp(1, self.writers);
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if limit > *current {
            self.permits.add_permits(limit - *current);
        } else if limit < *current {
            let fewer = u32::try_from(*current - limit).unwrap_or(u32::MAX);
            let permits = self.permits.clone();
            tokio::spawn(async move {
                if let Ok(taken) = permits.acquire_many_owned(fewer).await {
                    taken.forget();
                }
            });
        }
        *current = limit;
    }
}

/// Starts `writers` writers (at least one) on `pool` and returns their
/// queue and their [`WriterLimit`]. They stop when every sender is gone and
/// every queued commit is answered.
pub(crate) fn start(pool: PgPool, writers: usize) -> (mpsc::Sender<Job>, Arc<WriterLimit>) {
    let writers = writers.max(1);
    let (tx, rx) = mpsc::channel(QUEUE);
    let shared = Arc::new(Shared {
        queue: Mutex::new(rx),
        deferred: std::sync::Mutex::new(Vec::new()),
        limit: Arc::new(WriterLimit::new(writers)),
    });
    for _ in 0..writers {
        tokio::spawn(writer(pool.clone(), shared.clone(), pick_shard()));
    }
    (tx, shared.limit.clone())
}

/// What a store's writers share.
struct Shared {
    queue: Mutex<mpsc::Receiver<Job>>,
    /// Commits of a task that was already in a batch, for the next batch
    /// whoever writes it (not kept by the writer that set them aside: it
    /// may wait for a permit while another writer waits for the queue).
    deferred: std::sync::Mutex<Vec<Job>>,
    limit: Arc<WriterLimit>,
}

/// Takes a permit, then the commits set aside and whatever has queued
/// (waiting only when nothing has), writes them, and answers each commit;
/// commits of a task already in the batch are set aside for the next one.
async fn writer(pool: PgPool, shared: Arc<Shared>, shard: i16) {
    loop {
        let Ok(_permit) = shared.limit.permits.clone().acquire_owned().await else {
            return;
        };
        let mut jobs =
            std::mem::take(&mut *shared.deferred.lock().unwrap_or_else(|e| e.into_inner()));
        if jobs.is_empty() {
            // Idle: wait for work. Whoever holds the queue waits for the
            // next commit; the other idle writers wait for the queue.
            let mut rx = shared.queue.lock().await;
            if rx.recv_many(&mut jobs, MAX_BATCH).await == 0 {
                // Every sender is gone and the queue is drained; the permit
                // goes to the next writer, which finds the same and stops.
                return;
            }
        } else if let Ok(mut rx) = shared.queue.try_lock() {
            // Set-aside commits go now, with whatever else has queued;
            // never wait for the queue here (an idle writer may hold it
            // until the next commit arrives, which may never come).
            while jobs.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(job) => jobs.push(job),
                    Err(_) => break,
                }
            }
        }
        let mut seen = HashSet::with_capacity(jobs.len());
        let (mut batch, later): (Vec<Job>, Vec<Job>) = jobs
            .into_iter()
            .partition(|j| seen.insert((j.row.tenant.clone(), j.row.id.clone())));
        if !later.is_empty() {
            shared
                .deferred
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(later);
        }
        batch.sort_by(|a, b| (&a.row.tenant, &a.row.id).cmp(&(&b.row.tenant, &b.row.id)));
        write(&pool, batch, shard).await;
    }
}

/// Writes one batch, adding to `shard` of its owners' counts, and answers
/// its commits.
async fn write(pool: &PgPool, batch: Vec<Job>, shard: i16) {
    if batch.len() > 1 {
        match write_group(pool, &batch, shard).await {
            Ok(applied) => {
                for (job, applied) in batch.into_iter().zip(applied) {
                    // The caller may have given up waiting; nothing to do then.
                    let _ = job.done.send(Ok(applied));
                }
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, commits = batch.len(), "PostgreSQL group commit failed; retrying one by one");
            }
        }
    }
    for job in batch {
        let outcome = crate::write_one(
            pool,
            &job.row,
            job.lease_owner.as_deref().map(String::as_str),
            job.lease_micros,
            shard,
        )
        .await;
        let _ = job.done.send(outcome);
    }
}

/// The batch as one statement; which of its rows were applied, in order.
async fn write_group(pool: &PgPool, batch: &[Job], shard: i16) -> Result<Vec<bool>, StoreError> {
    let n = batch.len();
    let mut tenants = Vec::with_capacity(n);
    let mut ids = Vec::with_capacity(n);
    let mut contexts = Vec::with_capacity(n);
    let mut owners = Vec::with_capacity(n);
    let mut states = Vec::with_capacity(n);
    let mut status_micros = Vec::with_capacity(n);
    let mut status_nanos = Vec::with_capacity(n);
    let mut created_micros = Vec::with_capacity(n);
    let mut created_nanos = Vec::with_capacity(n);
    let mut last_seqs = Vec::with_capacity(n);
    let mut task_jsons = Vec::with_capacity(n);
    let mut expected = Vec::with_capacity(n);
    let mut lease_owners = Vec::with_capacity(n);
    let mut lease_micros = Vec::with_capacity(n);
    let mut snapshot_bytes = Vec::with_capacity(n);
    let mut log_bytes = Vec::with_capacity(n);
    let mut quotas = Vec::with_capacity(n);
    // What the earlier commits of the same owner in this batch write: under
    // a quota each commit counts them, so a batch never passes a quota by
    // itself. Summed here rather than by a window in the statement, which
    // sorted every batch (by text in the database's collation) to do it.
    let mut before_me = Vec::with_capacity(n);
    let mut owners_so_far: Vec<(&str, &str, i64)> = Vec::new();
    let (mut ev_ord, mut ev_seq, mut ev_json, mut ev_micros, mut ev_nanos, mut ev_task) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for (ord, job) in (1_i64..).zip(batch) {
        let r = &job.row;
        tenants.push(r.tenant.as_str());
        ids.push(r.id.as_str());
        contexts.push(r.context_id.as_str());
        owners.push(r.owner.as_str());
        states.push(r.state);
        status_micros.push(r.status_micros);
        status_nanos.push(r.status_subus_nanos);
        created_micros.push(r.created_micros);
        created_nanos.push(r.created_subus_nanos);
        last_seqs.push(r.last_seq);
        task_jsons.push(r.task_json.as_str());
        expected.push(r.expected);
        lease_owners.push(job.lease_owner.as_deref().map(String::as_str));
        lease_micros.push(job.lease_micros);
        snapshot_bytes.push(r.snapshot_bytes);
        log_bytes.push(r.log_bytes);
        quotas.push(r.quota);
        let bytes = r.snapshot_bytes.saturating_add(r.log_bytes);
        match owners_so_far
            .iter_mut()
            .find(|(t, o, _)| *t == r.tenant && *o == r.owner)
        {
            Some((_, _, sum)) => {
                before_me.push(*sum);
                *sum = sum.saturating_add(bytes);
            }
            None => {
                before_me.push(0);
                owners_so_far.push((r.tenant.as_str(), r.owner.as_str(), bytes));
            }
        }
        for i in 0..r.event_seqs.len() {
            ev_ord.push(ord);
            ev_seq.push(r.event_seqs[i]);
            ev_json.push(r.event_jsons[i].as_str());
            ev_micros.push(r.event_status_micros[i]);
            ev_nanos.push(r.event_status_nanos[i]);
            ev_task.push(r.event_is_task[i]);
        }
    }
    let written: Vec<i64> = sqlx::query_scalar(COMMIT_GROUP)
        .bind(&tenants)
        .bind(&ids)
        .bind(&contexts)
        .bind(&owners)
        .bind(&states)
        .bind(&status_micros)
        .bind(&status_nanos)
        .bind(&created_micros)
        .bind(&created_nanos)
        .bind(&last_seqs)
        .bind(&task_jsons)
        .bind(&expected)
        .bind(&lease_owners)
        .bind(&lease_micros)
        .bind(&ev_ord)
        .bind(&ev_seq)
        .bind(&ev_json)
        .bind(&ev_micros)
        .bind(&ev_nanos)
        .bind(&ev_task)
        .bind(&snapshot_bytes)
        .bind(&log_bytes)
        .bind(&quotas)
        .bind(shard)
        .bind(&before_me)
        .fetch_all(pool)
        .await
        .map_err(backend(format!("committing {n} tasks in one group")))?;
    let mut applied = vec![false; n];
    for ord in written {
        if let Some(slot) = usize::try_from(ord - 1)
            .ok()
            .and_then(|i| applied.get_mut(i))
        {
            *slot = true;
        }
    }
    Ok(applied)
}

/// The group statement. Parameters: $1..$14 one entry per commit (tenant,
/// id, context_id, owner, state, status time in µs and the sub-µs rest,
/// creation time likewise, last_seq, task JSON, the expected stored
/// last_seq, lease holder or NULL, lease length in µs); $15..$20 one entry
/// per event (the 1-based position of its commit, seq, JSON, exact status
/// time or NULLs, is it a task); $21..$23 one entry per commit again (the
/// bytes of its snapshot and of its events, its owner's quota or NULL);
/// $24 the `storage_usage` shard this writer adds to; $25 one entry per
/// commit: what the earlier commits of its owner in the batch write
/// (`before_me`). Returns the positions of the commits it applied. The
/// conditions are the one-row statements' (see `COMMIT_FIRST` and
/// `COMMIT_NEXT`), row by row; under a quota each commit also counts
/// `before_me`, so a batch never passes a quota by itself.
/// Sums are cast to `bigint`: `sum` of a `bigint` is a `numeric`, whose
/// arithmetic (per row, in the quota's conditions) allocates.
const COMMIT_GROUP: &str = concat!(
    "WITH input AS ( \
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], \
             $6::bigint[], $7::int[], $8::bigint[], $9::int[], $10::bigint[], $11::text[], \
             $12::bigint[], $13::text[], $14::bigint[], $21::bigint[], $22::bigint[], \
             $23::bigint[], $25::bigint[]) WITH ORDINALITY \
         AS i (tenant, id, context_id, owner, state, status_micros, status_subus_nanos, \
               created_micros, created_subus_nanos, last_seq, task_json, expected, \
               lease_owner, lease_micros, snapshot_bytes, log_bytes, quota, before_me, ord) \
     ), usage AS ( \
         SELECT u.tenant, u.owner, sum(u.bytes)::bigint AS held FROM storage_usage AS u \
         JOIN (SELECT DISTINCT tenant, owner FROM input WHERE quota IS NOT NULL) AS k \
             ON u.tenant = k.tenant AND u.owner = k.owner \
         GROUP BY u.tenant, u.owner \
     ), created AS ( \
         INSERT INTO tasks (tenant, id, context_id, owner, state, status_micros, \
             status_subus_nanos, created_micros, created_subus_nanos, last_seq, task_json, \
             lease_owner, lease_until, snapshot_bytes, log_bytes, grew) \
         SELECT i.tenant, i.id, i.context_id, i.owner, i.state, i.status_micros, \
             i.status_subus_nanos, i.created_micros, i.created_subus_nanos, i.last_seq, \
             i.task_json::json, i.lease_owner, \
             CASE WHEN i.lease_owner IS NULL THEN NULL \
                 ELSE (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + i.lease_micros END, \
             i.snapshot_bytes, i.log_bytes, i.snapshot_bytes + i.log_bytes \
         FROM input AS i LEFT JOIN usage AS u ON u.tenant = i.tenant AND u.owner = i.owner \
         WHERE i.expected = 0 AND (i.quota IS NULL \
             OR COALESCE(u.held, 0) + i.before_me + i.snapshot_bytes + i.log_bytes <= i.quota) \
         ORDER BY i.ord ",
    crate::replace_snapshot!(),
    " WHERE tasks.last_seq = 0 \
         RETURNING tenant, id, owner, grew \
     ), updated AS ( \
         UPDATE tasks AS t SET context_id = i.context_id, owner = i.owner, state = i.state, \
             status_micros = i.status_micros, status_subus_nanos = i.status_subus_nanos, \
             created_micros = i.created_micros, created_subus_nanos = i.created_subus_nanos, \
             last_seq = i.last_seq, task_json = i.task_json::json, lease_owner = i.lease_owner, \
             lease_until = CASE WHEN i.lease_owner IS NULL THEN NULL \
                 ELSE (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + i.lease_micros END, \
             snapshot_bytes = i.snapshot_bytes, log_bytes = t.log_bytes + i.log_bytes, \
             grew = i.snapshot_bytes + i.log_bytes - t.snapshot_bytes \
         FROM input AS i LEFT JOIN usage AS u ON u.tenant = i.tenant AND u.owner = i.owner \
         WHERE i.expected > 0 AND t.tenant = i.tenant AND t.id = i.id AND t.last_seq = i.expected \
             AND (i.quota IS NULL OR i.snapshot_bytes + i.log_bytes - t.snapshot_bytes <= 0 \
                  OR COALESCE(u.held, 0) + i.before_me + i.snapshot_bytes + i.log_bytes \
                     - t.snapshot_bytes <= i.quota) \
         RETURNING t.tenant, t.id, t.owner, t.grew \
     ), counted AS ( \
         INSERT INTO storage_usage AS s (tenant, owner, shard, bytes) \
         SELECT tenant, owner, $24, sum(grew)::bigint FROM \
             (SELECT tenant, owner, grew FROM created UNION ALL \
              SELECT tenant, owner, grew FROM updated) AS g \
         GROUP BY tenant, owner HAVING sum(grew)::bigint <> 0 ORDER BY tenant, owner \
         ON CONFLICT (tenant, owner, shard) DO UPDATE SET bytes = s.bytes + excluded.bytes \
     ), put AS ( \
         SELECT i.ord FROM input AS i \
         JOIN (SELECT tenant, id FROM created UNION ALL SELECT tenant, id FROM updated) AS w \
             ON w.tenant = i.tenant AND w.id = i.id \
     ), appended AS ( \
         INSERT INTO task_events \
             (tenant, task_id, seq, event_json, status_micros, status_subus_nanos, is_task) \
         SELECT i.tenant, i.id, e.seq, e.json::json, e.micros, e.nanos, e.is_task \
         FROM unnest($15::bigint[], $16::bigint[], $17::text[], $18::bigint[], $19::int[], \
                     $20::boolean[]) AS e (ord, seq, json, micros, nanos, is_task) \
         JOIN put ON put.ord = e.ord JOIN input AS i ON i.ord = e.ord \
     ) \
     SELECT ord FROM put"
);

#[cfg(all(test, feature = "testing"))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use switchboard_core::store::conformance::fixtures::log_of;
    use switchboard_core::store::quota::StorageQuota;
    use switchboard_core::{TaskRecord, TaskStore};
    use switchboard_protocol::{StreamResponse, Task, TaskState, TaskStatus};

    use super::*;
    use crate::PgStore;

    /// Task `id` in the default tenant, ending at event `last_seq`.
    fn record(id: &str, state: TaskState, last_seq: u64) -> TaskRecord {
        let created_at = chrono::DateTime::from_timestamp(1_800_000_000, 123_456_789).unwrap();
        TaskRecord {
            tenant: String::new(),
            owner: "alice".into(),
            task: Task {
                id: id.into(),
                context_id: format!("ctx-{id}"),
                status: TaskStatus::new(state),
                artifacts: None,
                history: None,
                metadata: None,
            },
            last_seq,
            created_at,
        }
    }

    /// A commit of `record` with `events` task events, answered on the
    /// returned receiver.
    fn job(
        record: &TaskRecord,
        events: usize,
    ) -> (Job, oneshot::Receiver<Result<bool, StoreError>>) {
        job_under(record, events, &StorageQuota::default())
    }

    /// [`job`] under a storage quota.
    fn job_under(
        record: &TaskRecord,
        events: usize,
        quota: &StorageQuota,
    ) -> (Job, oneshot::Receiver<Result<bool, StoreError>>) {
        let events = vec![StreamResponse::Task(record.task.clone()); events];
        let (done, answer) = oneshot::channel();
        let job = Job {
            row: TaskRow::encode(record, &events, quota).unwrap(),
            lease_owner: None,
            lease_micros: 0,
            done,
        };
        (job, answer)
    }

    async fn store() -> Option<PgStore> {
        let url = crate::testing::fresh_database_or_skip("group commit").await?;
        Some(PgStore::open(&url).await.unwrap())
    }

    async fn seqs(store: &PgStore, id: &str) -> Vec<u64> {
        let log = log_of(store, "", id).await;
        log.iter().map(|e| e.seq).collect()
    }

    /// One statement writes creations and updates, and refuses exactly the
    /// commits the one-row statements would refuse, row by row.
    #[tokio::test]
    async fn one_statement_applies_each_commit_on_its_own_condition() {
        let Some(store) = store().await else { return };
        for (id, last) in [("taken", 1), ("moved-on", 3), ("next", 1)] {
            let (j, answer) = job(&record(id, TaskState::Working, last), last as usize);
            write(store.pool(), vec![j], 0).await;
            assert!(answer.await.unwrap().unwrap(), "seeding {id}");
        }
        let batch = [
            job(&record("fresh", TaskState::Submitted, 1), 1),
            // Created already: a conflict, like COMMIT_FIRST.
            job(&record("taken", TaskState::Submitted, 1), 1),
            // Expects 2, the log is at 3.
            job(&record("moved-on", TaskState::Working, 3), 1),
            // Expects 1: two events appended.
            job(&record("next", TaskState::Completed, 3), 2),
            // Not there: a conflict, like COMMIT_NEXT.
            job(&record("missing", TaskState::Working, 5), 1),
            // A commit of no event that only replaces the snapshot.
            job(&record("fresh-empty", TaskState::Submitted, 0), 0),
        ];
        let (jobs, _answers): (Vec<Job>, Vec<_>) = batch.into_iter().unzip();
        let applied = write_group(store.pool(), &jobs, 0).await.unwrap();
        assert_eq!(applied, [true, false, false, true, false, true]);

        assert_eq!(seqs(&store, "fresh").await, [1]);
        assert_eq!(seqs(&store, "taken").await, [1]);
        assert_eq!(seqs(&store, "moved-on").await, [1, 2, 3]);
        assert_eq!(seqs(&store, "next").await, [1, 2, 3]);
        assert_eq!(store.load("", "missing").await.unwrap(), None);
        let next = store.load("", "next").await.unwrap().unwrap();
        assert_eq!(next.task.status.state, TaskState::Completed);
        assert_eq!(next.last_seq, 3);
        let taken = store.load("", "taken").await.unwrap().unwrap();
        assert_eq!(
            taken.task.status.state,
            TaskState::Working,
            "the loser wrote nothing"
        );
        assert!(store.load("", "fresh-empty").await.unwrap().is_some());
    }

    /// Under a quota each commit of a batch counts what its owner's earlier
    /// commits in the same batch write: the batch stops at the quota, and
    /// another owner's commits between them are not held back.
    #[tokio::test]
    async fn commits_of_one_owner_in_a_batch_count_each_other_against_its_quota() {
        let Some(store) = store().await else { return };
        let mut bob = record("bob-1", TaskState::Working, 1);
        bob.owner = "bob".into();
        let alice: Vec<TaskRecord> = (1..=4)
            .map(|i| record(&format!("alice-{i}"), TaskState::Working, 1))
            .collect();
        let size = |r: &TaskRecord| {
            let (j, _) = job(r, 1);
            u64::try_from(j.row.snapshot_bytes + j.row.log_bytes).unwrap()
        };
        // Room for two of alice's four tasks (all the same size), not three.
        let quota = StorageQuota::per_owner(2 * size(&alice[0]) + size(&alice[0]) / 2);
        let with_quota = |r: &TaskRecord| job_under(r, 1, &quota).0;
        let jobs = [
            with_quota(&alice[0]),
            with_quota(&alice[1]),
            with_quota(&bob),
            with_quota(&alice[2]),
            with_quota(&alice[3]),
        ];
        let applied = write_group(store.pool(), &jobs, 0).await.unwrap();
        assert_eq!(applied, [true, true, true, false, false]);
        assert!(store.load("", "alice-2").await.unwrap().is_some());
        assert_eq!(store.load("", "alice-3").await.unwrap(), None);
        assert!(store.load("", "bob-1").await.unwrap().is_some());
    }

    /// A row that breaks a constraint fails the statement; then every
    /// commit is retried alone, so only that one fails.
    #[tokio::test]
    async fn a_failing_statement_falls_back_to_one_commit_at_a_time() {
        let Some(store) = store().await else { return };
        // An event at sequence 0 is accepted once; a second one collides in
        // the log's primary key (see the integration test
        // `a_failing_commit_changes_nothing`).
        let zero = record("zero", TaskState::Submitted, 0);
        let (j, answer) = job(&zero, 1);
        write(store.pool(), vec![j], 0).await;
        assert!(answer.await.unwrap().unwrap());

        let good = [
            record("good-1", TaskState::Working, 1),
            record("good-2", TaskState::Working, 1),
        ];
        let bad = record("zero", TaskState::Failed, 0);
        let as_batch = || {
            let (jobs, _): (Vec<Job>, Vec<_>) = [job(&good[0], 1), job(&bad, 1), job(&good[1], 1)]
                .into_iter()
                .unzip();
            jobs
        };
        // The statement as a whole is refused, and writes nothing...
        assert!(write_group(store.pool(), &as_batch(), 0).await.is_err());
        assert_eq!(store.load("", "good-1").await.unwrap(), None);
        // ...so the writer falls back, and only the bad commit fails.
        let (jobs, answers): (Vec<Job>, Vec<_>) =
            [job(&good[0], 1), job(&bad, 1), job(&good[1], 1)]
                .into_iter()
                .unzip();
        write(store.pool(), jobs, 0).await;
        let mut outcomes = Vec::new();
        for answer in answers {
            outcomes.push(answer.await.unwrap());
        }
        assert!(matches!(outcomes[0], Ok(true)), "{:?}", outcomes[0]);
        assert!(
            matches!(&outcomes[1], Err(StoreError::Backend(m)) if m.contains("task zero")),
            "{:?}",
            outcomes[1]
        );
        assert!(matches!(outcomes[2], Ok(true)), "{:?}", outcomes[2]);
        assert_eq!(seqs(&store, "good-1").await, [1]);
        assert_eq!(seqs(&store, "good-2").await, [1]);
        let zero_now = store.load("", "zero").await.unwrap().unwrap();
        assert_eq!(zero_now.task.status.state, TaskState::Submitted);
    }

    /// Two commits of one task queued together never both apply (they go in
    /// two batches, by one writer or two, and expect the same sequence
    /// number); and every queued commit is answered when the last sender
    /// goes, none dropped: with every writer free to write, and with four
    /// writers of which one may write at a time (the commit set aside then
    /// waits for the writer that holds the permit, not for the one that set
    /// it aside).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_writers_apply_one_of_a_tasks_rival_commits_and_drain_their_queue() {
        let Some(store) = store().await else { return };
        for limit in [4, 1] {
            // More writers than the default: rivals go to two writers more often.
            let (queue, writers) = start(store.pool().clone(), 4);
            writers.set(limit);
            assert_eq!(writers.get(), limit);
            rivals_and_many(&store, queue, &format!("l{limit}-")).await;
        }
    }

    /// Queues two rival commits of one task and twenty others, drops the
    /// queue, and checks every answer and what was stored.
    async fn rivals_and_many(store: &PgStore, queue: mpsc::Sender<Job>, prefix: &str) {
        let twice = format!("{prefix}twice");
        let mut answers = Vec::new();
        // Both expect an empty log: whichever is written first wins, the
        // other finds event 1 (set aside for a writer's next batch, it is
        // answered although no further commit arrives to wake the writers).
        for state in [TaskState::Working, TaskState::Failed] {
            let (j, answer) = job(&record(&twice, state, 1), 1);
            queue.send(j).await.unwrap();
            answers.push(answer);
        }
        for i in 0..20 {
            let (j, answer) = job(
                &record(&format!("{prefix}many-{i:02}"), TaskState::Working, 1),
                1,
            );
            queue.send(j).await.unwrap();
            answers.push(answer);
        }
        drop(queue);
        let mut outcomes = Vec::new();
        for answer in answers {
            outcomes.push(
                answer
                    .await
                    .expect("every queued commit is answered")
                    .unwrap(),
            );
        }
        let rivals = &outcomes[..2];
        assert!(
            rivals == [true, false] || rivals == [false, true],
            "{rivals:?}"
        );
        assert!(outcomes[2..].iter().all(|applied| *applied));
        // The task is what the applied one wrote, with its one event.
        let winner = if rivals[0] {
            TaskState::Working
        } else {
            TaskState::Failed
        };
        let stored = store.load("", &twice).await.unwrap().unwrap();
        assert_eq!(stored.task.status.state, winner);
        assert_eq!(seqs(store, &twice).await, [1]);
        for i in 0..20 {
            assert_eq!(seqs(store, &format!("{prefix}many-{i:02}")).await, [1]);
        }
    }
}
