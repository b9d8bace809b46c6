//! Several replicas on one store.
//!
//! Within one process, a task's `TaskRuntime` is the only
//! writer and its bus tells every local subscriber about each change. With
//! several replicas sharing a store (PostgreSQL), a task runs on one replica
//! while clients stream, read and cancel it through any other. A [`Cluster`]
//! supplies the two things the engine then needs from outside the process:
//!
//! 1. **Announcements.** Every commit, by any replica, is announced as
//!    `(tenant, task id, sequence)`. A replica that has the task live (a
//!    subscriber, a waiter) reads the new events from the store's log and
//!    publishes them on its local bus, so its subscribers see exactly what
//!    the running replica's subscribers see. Writers never trust their
//!    cached snapshot blindly: a commit that hits a sequence conflict (another
//!    replica wrote first) reloads the task and re-validates the change. That
//!    is how cancel works across replicas: the cancelling replica commits
//!    `CANCELED`; the running replica learns of it from the announcement (or
//!    from its next conflicting commit) and cancels its agent.
//! 2. **Leases.** A commit that leaves a task submitted or working records
//!    the committing replica as its lease holder, and the holder renews its
//!    leases while it lives. A lease that runs out means its replica died:
//!    [`take_orphans`](Cluster::take_orphans) hands each such task to exactly
//!    one surviving replica, which fails it with a clear status message, so no
//!    task stays "working" forever and its subscribers see a terminal event.
//! 3. **Shared quotas** (when
//!    [`Quotas::share_active_tasks`](crate::Quotas::share_active_tasks) is
//!    set). The concurrent-task quota
//!    ([`Quotas::max_active_tasks_per_principal`](crate::Quotas::max_active_tasks_per_principal))
//!    is counted by the cluster too ([`acquire_run`](Cluster::acquire_run)),
//!    so a caller spread over N replicas still has at most that many tasks
//!    worked on at once, not N times as many. Each replica first counts in
//!    its own memory (a refusal there costs nothing), then takes a place in
//!    the shared count; the place is given back when the run ends, and a
//!    replica that dies has its places given back with its membership. If
//!    the shared count cannot be reached, the replica's own count is the
//!    bound and the failure is logged: the store is then failing anyway.
//!
//! Without a cluster (memory, SQLite: one process), none of this runs.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use switchboard_protocol::{Message, TaskState, TaskStatus};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::events::EmitError;
use crate::runtime::{Change, Registry, TaskRuntime};
use crate::store::{StoreError, TaskStore};

/// A commit announced by some replica (possibly this one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The task's tenant.
    pub tenant: String,
    /// The task.
    pub task_id: String,
    /// The sequence number its log ends at now.
    pub seq: u64,
}

/// What the engine needs from a store shared by several replicas. See the
/// module docs.
#[async_trait]
pub trait Cluster: Send + Sync + std::fmt::Debug + 'static {
    /// This replica's id, as recorded in the leases it holds.
    fn replica_id(&self) -> &str;

    /// Every commit announced from now on. A lagging receiver gets
    /// `Lagged` and treats every live task as possibly changed, as it does
    /// on [`Announcement::Resync`].
    fn announcements(&self) -> broadcast::Receiver<Announcement>;

    /// Claims up to `limit` tasks whose lease ran out (their replica is
    /// gone) for this replica, which must now settle them. Each orphan is
    /// handed to exactly one caller across all replicas.
    async fn take_orphans(&self, limit: usize) -> Result<Vec<(String, String)>, StoreError>;

    /// Leaves the replica set as the server stops, so that the others stop
    /// counting this replica now rather than when its heartbeat runs out.
    /// Best effort (a replica that dies never calls it); the default does
    /// nothing.
    async fn leave(&self) {}

    /// Takes one of `max` places of the concurrent-task quota named `key`
    /// (a caller: tenant, principal and, for anonymous callers, address),
    /// counted across every replica: `Ok(false)` when all are taken. Each
    /// place taken is given back by one [`release_run`](Cluster::release_run)
    /// of this replica, or with this replica's membership when it dies. The
    /// default counts nothing (every place is granted): the replica's own
    /// count is then the bound.
    async fn acquire_run(&self, key: &str, max: usize) -> Result<bool, StoreError> {
        let _ = (key, max);
        Ok(true)
    }

    /// Gives back a place [`acquire_run`](Cluster::acquire_run) took. Best
    /// effort: a failure is logged by the implementation.
    async fn release_run(&self, key: &str) {
        let _ = key;
    }
}

/// A place taken in a cluster's shared concurrent-task count, given back by
/// [`SharedPlace::release`] (on a background task: it is called from a
/// `Drop`).
#[derive(Debug)]
pub(crate) struct SharedPlace {
    pub(crate) cluster: Arc<dyn Cluster>,
    pub(crate) key: String,
}

impl SharedPlace {
    /// Gives the place back, in the background on the current Tokio runtime
    /// (without one, the place stays taken until this replica's membership
    /// ends, which is logged).
    pub(crate) fn release(self) {
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move { self.cluster.release_run(&self.key).await });
            }
            Err(_) => tracing::warn!(
                "a shared concurrent-task place was dropped outside a Tokio runtime; it is given back when this replica leaves"
            ),
        }
    }
}

/// The name of a caller's concurrent-task quota in the shared count: its
/// tenant, principal and (anonymous callers) address, the first two
/// prefixed by their lengths so that no two callers share a name whatever
/// characters they hold.
pub(crate) fn run_quota_key(
    tenant: &str,
    principal: &str,
    client: Option<std::net::IpAddr>,
) -> String {
    let client = client.map(|c| c.to_string()).unwrap_or_default();
    format!(
        "{}:{tenant}{}:{principal}{client}",
        tenant.len(),
        principal.len()
    )
}

/// A change somebody announced, or a reason to re-check everything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Announcement {
    /// A commit, by any replica.
    Appended(Appended),
    /// Announcements may have been missed (the connection carrying them was
    /// lost): every live task should be re-read.
    Resync,
}

/// Starts this replica's two background duties (see the module docs):
/// applying announcements to live tasks, and failing orphans every
/// `sweep_every`. Both stop when `stop` is cancelled.
pub(crate) fn spawn_duties(
    cluster: Arc<dyn Cluster>,
    store: Arc<dyn TaskStore>,
    registry: Arc<Registry>,
    sweep_every: Duration,
    stop: CancellationToken,
) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        tracing::error!(
            "a cluster was configured outside a Tokio runtime; announcements and orphan sweeps are off"
        );
        return;
    };
    let mut rx = cluster.announcements();
    let follow_registry = registry.clone();
    let follow_stop = stop.clone();
    rt.spawn(async move {
        loop {
            let next = tokio::select! {
                _ = follow_stop.cancelled() => return,
                n = rx.recv() => n,
            };
            match next {
                Ok(Announcement::Appended(a)) => {
                    if let Some(task) = follow_registry.get(&(a.tenant, a.task_id)) {
                        spawn_catch_up(task, Some(a.seq));
                    }
                }
                Ok(Announcement::Resync) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    for task in follow_registry.all() {
                        spawn_catch_up(task, None);
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    rt.spawn(async move {
        let mut tick = tokio::time::interval(sweep_every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            // Tasks followed here but run elsewhere: re-read them, in case an
            // announcement was lost (a replica died between commit and NOTIFY).
            for task in registry.all() {
                if !task.is_running() {
                    spawn_catch_up(task, None);
                }
            }
            let orphans = match cluster.take_orphans(ORPHANS_PER_SWEEP).await {
                Ok(o) => o,
                Err(e) => {
                    tracing::warn!(error = %e, "looking for orphaned tasks failed");
                    continue;
                }
            };
            // One summary line per sweep, not one per task: a replica that
            // died with thousands of tasks must not flood the log.
            let (mut failed, mut errors, mut last_error) = (0_usize, 0_usize, None);
            for (tenant, task_id) in orphans {
                match fail_orphan(&*cluster, &store, &registry, &tenant, &task_id).await {
                    Ok(()) => failed += 1,
                    Err(e) => {
                        errors += 1;
                        last_error = Some(format!("task {task_id}: {e}"));
                    }
                }
            }
            if failed > 0 {
                tracing::warn!(failed, "failed the tasks of replicas that stopped (their leases expired)");
            }
            if let Some(last_error) = last_error {
                tracing::warn!(errors, %last_error, "failing orphaned tasks failed; their leases will expire again");
            }
        }
    });
}

/// Brings `task` up to date with the store in the background (`seq`: the
/// announced sequence, if any; see `TaskRuntime::catch_up`).
fn spawn_catch_up(task: Arc<TaskRuntime>, seq: Option<u64>) {
    tokio::spawn(async move {
        if let Err(e) = task.catch_up(seq).await {
            tracing::warn!(task_id = %task.key.1, error = %e, "catching up with other replicas' commits failed");
        }
    });
}

/// Orphans settled per sweep; the rest wait for the next one.
const ORPHANS_PER_SWEEP: usize = 100;

/// Fails a task whose replica died while running it.
async fn fail_orphan(
    cluster: &dyn Cluster,
    store: &Arc<dyn TaskStore>,
    registry: &Arc<Registry>,
    tenant: &str,
    task_id: &str,
) -> Result<(), EmitError> {
    let why = format!(
        "the server replica running this task stopped before it finished (its lease expired); replica {} failed it",
        cluster.replica_id()
    );
    fail_abandoned(store, registry, tenant, task_id, &why).await
}

/// Fails a task whose run is gone (its process died), unless it finished
/// meanwhile.
pub(crate) async fn fail_abandoned(
    store: &Arc<dyn TaskStore>,
    registry: &Arc<Registry>,
    tenant: &str,
    task_id: &str,
    why: &str,
) -> Result<(), EmitError> {
    let key = (tenant.to_string(), task_id.to_string());
    let task = match registry.get(&key) {
        Some(t) => t,
        None => match store.load(tenant, task_id).await? {
            Some(record) => TaskRuntime::loaded(record, store.clone(), registry.clone()),
            None => return Ok(()),
        },
    };
    let status = TaskStatus::new(TaskState::Failed).with_message(Message::agent_text(why));
    match task.apply(Change::status(status, None)).await {
        Ok(_) => {
            // The callers log one summary with the count.
            tracing::debug!(%task_id, reason = why, "failed an abandoned task");
            Ok(())
        }
        // Finished in the meantime: nothing to do.
        Err(EmitError::TaskTerminal { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}
