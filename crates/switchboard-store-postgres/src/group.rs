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
//!   waits for the next batch), since one statement cannot update a row
//!   twice; and rows are sorted by key, so two replicas' batches lock the
//!   tasks they share in the same order.
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
use tokio::sync::{Mutex, mpsc, oneshot};

use crate::{TaskRow, backend};

/// Writers working at once; each holds one pooled connection while it
/// writes a batch.
pub(crate) const WRITERS: usize = 4;

/// Most commits per statement.
const MAX_BATCH: usize = 256;

/// Commits waiting for a writer; senders wait when it is full.
const QUEUE: usize = 4096;

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

/// Starts the writers on `pool` and returns their queue. They stop when
/// every sender is gone.
pub(crate) fn start(pool: PgPool) -> mpsc::Sender<Job> {
    let (tx, rx) = mpsc::channel(QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    for _ in 0..WRITERS {
        tokio::spawn(writer(pool.clone(), rx.clone()));
    }
    tx
}

/// Takes what has queued (waiting only when nothing has), writes it, and
/// answers each commit; commits of a task already in the batch go first
/// into the next one.
async fn writer(pool: PgPool, queue: Arc<Mutex<mpsc::Receiver<Job>>>) {
    let mut held: Vec<Job> = Vec::new();
    loop {
        let mut jobs = std::mem::take(&mut held);
        if jobs.is_empty() {
            // Idle: wait for work. Whoever holds the queue waits for the
            // next commit; the other idle writers wait for the queue.
            let mut rx = queue.lock().await;
            if rx.recv_many(&mut jobs, MAX_BATCH).await == 0 {
                // Every sender is gone and the queue is drained.
                return;
            }
        } else if let Ok(mut rx) = queue.try_lock() {
            // Held commits go now, with whatever else has queued; never
            // wait for the queue here (an idle writer may hold it until
            // the next commit arrives, which may never come).
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
        held = later;
        batch.sort_by(|a, b| (&a.row.tenant, &a.row.id).cmp(&(&b.row.tenant, &b.row.id)));
        write(&pool, batch).await;
    }
}

/// Writes one batch and answers its commits.
async fn write(pool: &PgPool, batch: Vec<Job>) {
    if batch.len() > 1 {
        match write_group(pool, &batch).await {
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
        )
        .await;
        let _ = job.done.send(outcome);
    }
}

/// The batch as one statement; which of its rows were applied, in order.
async fn write_group(pool: &PgPool, batch: &[Job]) -> Result<Vec<bool>, StoreError> {
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
/// time or NULLs, is it a task). Returns the positions of the commits it
/// applied. The conditions are the one-row statements' (see `COMMIT_FIRST`
/// and `COMMIT_NEXT`), row by row.
const COMMIT_GROUP: &str = "WITH input AS ( \
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], \
             $6::bigint[], $7::int[], $8::bigint[], $9::int[], $10::bigint[], $11::text[], \
             $12::bigint[], $13::text[], $14::bigint[]) WITH ORDINALITY \
         AS i (tenant, id, context_id, owner, state, status_micros, status_subus_nanos, \
               created_micros, created_subus_nanos, last_seq, task_json, expected, \
               lease_owner, lease_micros, ord) \
     ), created AS ( \
         INSERT INTO tasks (tenant, id, context_id, owner, state, status_micros, \
             status_subus_nanos, created_micros, created_subus_nanos, last_seq, task_json, \
             lease_owner, lease_until) \
         SELECT tenant, id, context_id, owner, state, status_micros, status_subus_nanos, \
             created_micros, created_subus_nanos, last_seq, task_json::json, lease_owner, \
             CASE WHEN lease_owner IS NULL THEN NULL \
                 ELSE (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + lease_micros END \
         FROM input WHERE expected = 0 ORDER BY ord \
         ON CONFLICT (tenant, id) DO UPDATE SET \
             context_id = excluded.context_id, owner = excluded.owner, state = excluded.state, \
             status_micros = excluded.status_micros, \
             status_subus_nanos = excluded.status_subus_nanos, \
             created_micros = excluded.created_micros, \
             created_subus_nanos = excluded.created_subus_nanos, \
             last_seq = excluded.last_seq, task_json = excluded.task_json, \
             lease_owner = excluded.lease_owner, lease_until = excluded.lease_until \
         WHERE tasks.last_seq = 0 \
         RETURNING tenant, id \
     ), updated AS ( \
         UPDATE tasks AS t SET context_id = i.context_id, owner = i.owner, state = i.state, \
             status_micros = i.status_micros, status_subus_nanos = i.status_subus_nanos, \
             created_micros = i.created_micros, created_subus_nanos = i.created_subus_nanos, \
             last_seq = i.last_seq, task_json = i.task_json::json, lease_owner = i.lease_owner, \
             lease_until = CASE WHEN i.lease_owner IS NULL THEN NULL \
                 ELSE (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + i.lease_micros END \
         FROM input AS i \
         WHERE i.expected > 0 AND t.tenant = i.tenant AND t.id = i.id AND t.last_seq = i.expected \
         RETURNING t.tenant, t.id \
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
     SELECT ord FROM put";
