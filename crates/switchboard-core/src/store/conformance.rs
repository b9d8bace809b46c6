//! The conformance suite for [`TaskStore`] implementations.
//!
//! Call [`run_all`] from a test with a fresh, empty store. Each check panics
//! with a message naming the broken rule.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chrono::{TimeZone, Utc};
use switchboard_protocol::{
    Artifact, Message, Part, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

use super::*;
use fixtures::log_of;

fn record(
    tenant: &str,
    owner: &str,
    id: &str,
    ctx: &str,
    state: TaskState,
    secs: i64,
) -> TaskRecord {
    let ts = Utc.timestamp_opt(1_800_000_000 + secs, 0).single().unwrap();
    TaskRecord {
        tenant: tenant.into(),
        owner: owner.into(),
        task: Task {
            id: id.into(),
            context_id: ctx.into(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: Some(ts),
            },
            artifacts: Some(vec![]),
            history: Some(vec![
                Message::user_text(format!("hello {id}"))
                    .with_task_id(id)
                    .with_context_id(ctx),
            ]),
            metadata: None,
        },
        last_seq: 0,
        created_at: ts,
    }
}

/// The status update that announces `r`'s current status (and carries its
/// metadata, so concurrent writers can be told apart in the log).
pub fn status_event(r: &TaskRecord) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: r.task.id.clone(),
        context_id: r.task.context_id.clone(),
        status: r.task.status.clone(),
        metadata: r.task.metadata.clone(),
    })
}

/// Commits `r` as a new task, the task itself being its first event, and
/// returns it as committed.
async fn create(store: &dyn TaskStore, mut r: TaskRecord) -> TaskRecord {
    r.last_seq = 1;
    fixtures::commit_as_task(store, &r).await.unwrap();
    r
}

/// Runs every check against `store`, which must start empty.
pub async fn run_all(store: &dyn TaskStore) {
    commit_and_load_roundtrip(store).await;
    sequence_is_enforced(store).await;
    several_events_commit_atomically(store).await;
    tenants_are_separate(store).await;
    list_orders_filters_and_pages(store).await;
    // Last: it deletes other checks' finished tasks.
    retention_deletes_only_old_finished_tasks(store).await;
}

/// `purge` deletes finished tasks by age and by count, with their logs,
/// and never an unfinished one.
pub async fn retention_deletes_only_old_finished_tasks(store: &dyn TaskStore) {
    async fn put(store: &dyn TaskStore, id: &str, state: TaskState, secs: i64) {
        create(
            store,
            record("ret", "anonymous", id, "ctx-ret", state, secs),
        )
        .await;
    }
    let exists = |id: &'static str| async move { store.load("ret", id).await.unwrap().is_some() };
    // Long before every other check's tasks (some of which carry the real
    // time, so "now" is set in the past too).
    put(store, "ret-old-done", TaskState::Completed, -100_000_000).await;
    put(store, "ret-old-failed", TaskState::Failed, -100_000_000).await;
    put(store, "ret-old-working", TaskState::Working, -100_000_000).await;
    put(
        store,
        "ret-old-asking",
        TaskState::InputRequired,
        -100_000_000,
    )
    .await;
    let now = Utc.timestamp_opt(1_700_100_000, 0).single().unwrap();

    let keep_all = Retention::default();
    assert!(keep_all.keeps_everything());
    assert_eq!(store.purge(&keep_all, now).await.unwrap(), 0);
    assert!(exists("ret-old-done").await);

    let by_age = Retention {
        max_age: Some(std::time::Duration::from_secs(50_000)),
        max_finished: None,
    };
    assert_eq!(
        store.purge(&by_age, now).await.unwrap(),
        2,
        "the two old finished tasks"
    );
    assert!(!exists("ret-old-done").await && !exists("ret-old-failed").await);
    assert!(
        log_of(store, "ret", "ret-old-done").await.is_empty(),
        "log gone too"
    );
    assert!(
        exists("ret-old-working").await && exists("ret-old-asking").await,
        "unfinished stay"
    );
    assert_eq!(store.purge(&by_age, now).await.unwrap(), 0, "idempotent");

    // Newer than every other check's tasks.
    put(store, "ret-new-0", TaskState::Completed, 10_000_000).await;
    put(store, "ret-new-1", TaskState::Canceled, 10_000_001).await;
    put(store, "ret-new-2", TaskState::Rejected, 10_000_002).await;
    let by_count = Retention {
        max_age: None,
        max_finished: Some(2),
    };
    assert!(store.purge(&by_count, now).await.unwrap() >= 1);
    assert!(!exists("ret-new-0").await, "the oldest finished task goes");
    assert!(
        exists("ret-new-1").await && exists("ret-new-2").await,
        "the newest two stay"
    );
    assert!(
        exists("ret-old-working").await,
        "unfinished tasks do not count"
    );
    assert_eq!(store.purge(&by_count, now).await.unwrap(), 0);
}

/// The bytes [`storage_quota_is_per_owner`] expects its store to grant
/// each owner: open the store with
/// `StorageQuota::per_owner(conformance::QUOTA_BYTES)`.
pub const QUOTA_BYTES: u64 = 8 * 1024;

/// A store opened with a quota of [`QUOTA_BYTES`] per owner (and nothing
/// else in it) refuses a commit that takes an owner past it, writing
/// nothing, while another owner of the same tenant still writes; lets an
/// existing task finish however large; and counts a purged task's bytes
/// off its owner.
pub async fn storage_quota_is_per_owner(store: &dyn TaskStore) {
    use crate::store::quota::json_bytes;
    // A task of about 3 KiB: two fit under the quota, three do not.
    let big = |owner: &str, id: &str, state: TaskState| {
        let mut r = record("q", owner, id, "ctx-q", state, 0);
        r.task.history = Some(vec![
            Message::user_text("x".repeat(1500))
                .with_task_id(id)
                .with_context_id("ctx-q"),
        ]);
        r.last_seq = 1;
        r
    };
    let size = 2 * json_bytes(&big("alice", "q-a0", TaskState::Working).task);
    assert!(2 * size < QUOTA_BYTES && 3 * size > QUOTA_BYTES, "{size}");
    for id in ["q-a0", "q-a1"] {
        fixtures::commit_as_task(store, &big("alice", id, TaskState::Working))
            .await
            .unwrap_or_else(|e| panic!("{id} is under the quota: {e}"));
    }
    let over = fixtures::commit_as_task(store, &big("alice", "q-a2", TaskState::Working)).await;
    assert!(
        matches!(over, Err(StoreError::QuotaExceeded(_))),
        "a third task is over the quota: {over:?}"
    );
    assert!(
        store.load("q", "q-a2").await.unwrap().is_none(),
        "a refused commit writes nothing"
    );
    assert!(log_of(store, "q", "q-a2").await.is_empty());

    // Another principal of the same tenant has a quota of its own.
    for id in ["q-b0", "q-b1"] {
        fixtures::commit_as_task(store, &big("bob", id, TaskState::Working))
            .await
            .unwrap_or_else(|e| panic!("bob's {id} is under his quota: {e}"));
    }

    // Growing an unfinished task past the quota is refused; finishing an
    // existing task is not, however large the last commit.
    let mut grown = big("alice", "q-a1", TaskState::Working);
    grown.last_seq = 2;
    let artifact = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: "q-a1".into(),
        context_id: "ctx-q".into(),
        artifact: Artifact {
            artifact_id: "a".into(),
            name: None,
            description: None,
            parts: vec![Part::text("y".repeat(4000))],
            metadata: None,
            extensions: vec![],
        },
        append: false,
        last_chunk: true,
        metadata: None,
    });
    let refused = store.commit(&grown, Some(&artifact)).await;
    assert!(
        matches!(refused, Err(StoreError::QuotaExceeded(_))),
        "growing past the quota: {refused:?}"
    );
    assert_eq!(store.load("q", "q-a1").await.unwrap().unwrap().last_seq, 1);
    grown.task.status = TaskStatus::new(TaskState::Completed);
    grown.task.status.timestamp = Some(Utc.timestamp_opt(1_700_000_000, 0).single().unwrap());
    store
        .commit(&grown, Some(&artifact))
        .await
        .expect("finishing a task is never refused for its size");

    // Retention gives the space back.
    let retention = Retention {
        max_age: Some(std::time::Duration::from_secs(1)),
        max_finished: None,
    };
    let now = Utc.timestamp_opt(1_800_000_000, 0).single().unwrap();
    assert_eq!(store.purge(&retention, now).await.unwrap(), 1);
    fixtures::commit_as_task(store, &big("alice", "q-a2", TaskState::Working))
        .await
        .expect("a purged task's bytes no longer count");
}

/// A committed snapshot and log load back exactly.
pub async fn commit_and_load_roundtrip(store: &dyn TaskStore) {
    let mut r = create(
        store,
        record("", "anonymous", "rt-1", "ctx-rt", TaskState::Submitted, 0),
    )
    .await;
    r.task.status = TaskStatus::new(TaskState::Working);
    r.last_seq = 2;
    store.commit(&r, Some(&status_event(&r))).await.unwrap();
    r.task.artifacts = Some(vec![
        Artifact::new(vec![
            Part::text("out"),
            Part::data(serde_json::json!({"n": 1})),
        ])
        .with_id("a1"),
    ]);
    r.last_seq = 3;
    let art = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: "rt-1".into(),
        context_id: "ctx-rt".into(),
        artifact: r.task.artifacts().first().cloned().unwrap(),
        append: false,
        last_chunk: true,
        metadata: None,
    });
    store.commit(&r, Some(&art)).await.unwrap();
    // A snapshot-only commit (e.g. a follow-up message) keeps the sequence.
    r.task
        .history
        .as_mut()
        .unwrap()
        .push(Message::user_text("more"));
    store.commit(&r, None).await.unwrap();

    let loaded = store
        .load("", "rt-1")
        .await
        .unwrap()
        .expect("task must load after commit");
    assert_eq!(loaded.task, r.task, "snapshot must round-trip exactly");
    assert_eq!(loaded.last_seq, 3);
    assert_eq!(loaded.owner, "anonymous");
    let log = log_of(store, "", "rt-1").await;
    assert_eq!(
        log.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![1, 2, 3],
        "log in order"
    );
    assert_eq!(log[2].event, art);
    let tail = store
        .events(EventQuery::new("", "rt-1").after(1).limit(1))
        .await
        .unwrap();
    assert_eq!(tail.len(), 1, "limit applies");
    assert_eq!(
        tail[0].seq, 2,
        "events after a sequence start right after it"
    );
    assert!(store.load("", "missing").await.unwrap().is_none());
    assert!(log_of(store, "", "missing").await.is_empty());
}

/// A writer that skips or repeats a sequence number is refused, and the
/// stored state is unchanged.
pub async fn sequence_is_enforced(store: &dyn TaskStore) {
    let r = create(
        store,
        record("", "anonymous", "seq-1", "ctx-seq", TaskState::Submitted, 1),
    )
    .await;
    let before = store.load("", "seq-1").await.unwrap().unwrap();
    let mut dup = r.clone();
    dup.task.status = TaskStatus::new(TaskState::Failed);
    let err = store
        .commit(&dup, Some(&status_event(&dup)))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::SequenceConflict { .. }),
        "repeated seq must conflict: {err}"
    );
    let mut gap = r.clone();
    gap.last_seq = 5;
    assert!(
        store.commit(&gap, Some(&status_event(&gap))).await.is_err(),
        "a gap must conflict"
    );
    assert_eq!(
        store.load("", "seq-1").await.unwrap().unwrap(),
        before,
        "failed commits change nothing"
    );
    assert_eq!(log_of(store, "", "seq-1").await.len(), 1);
}

/// A commit with several events appends them all, numbered in order, or —
/// on a sequence conflict — writes nothing; concurrent multi-event commits
/// of different tasks do not disturb each other.
pub async fn several_events_commit_atomically(store: &dyn TaskStore) {
    let mut r = record(
        "",
        "anonymous",
        "multi-1",
        "ctx-multi",
        TaskState::Submitted,
        2,
    );
    r.last_seq = 2;
    let created = StreamResponse::Task(r.task.clone());
    r.task.status = TaskStatus::new(TaskState::Working);
    let working = status_event(&r);
    store
        .commit_events(&r, &[created.clone(), working.clone()])
        .await
        .unwrap();
    let log = log_of(store, "", "multi-1").await;
    assert_eq!(
        log,
        vec![
            LoggedEvent {
                seq: 1,
                event: created
            },
            LoggedEvent {
                seq: 2,
                event: working
            },
        ],
        "both events, numbered from 1"
    );
    assert_eq!(store.load("", "multi-1").await.unwrap().unwrap(), r);

    // Expects the log to end at 3 (5 - 2), but it ends at 2: nothing is written.
    let before = r.clone();
    let mut gap = r.clone();
    gap.last_seq = 5;
    gap.task.status = TaskStatus::new(TaskState::Completed);
    let err = store
        .commit_events(&gap, &[status_event(&gap), status_event(&gap)])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::SequenceConflict { .. }), "{err}");
    assert_eq!(store.load("", "multi-1").await.unwrap().unwrap(), before);
    assert_eq!(log_of(store, "", "multi-1").await.len(), 2);

    // A snapshot-only commit: no event, same sequence.
    r.task.metadata = Some(Default::default());
    store.commit_events(&r, &[]).await.unwrap();
    assert_eq!(store.load("", "multi-1").await.unwrap().unwrap(), r);
    assert_eq!(log_of(store, "", "multi-1").await.len(), 2);

    // Many tasks at once, each created with three events in one commit (a
    // store that groups concurrent commits must keep them apart).
    let commits = (0..24).map(|i| {
        let id = format!("multi-many-{i}");
        let mut r = record("", "anonymous", &id, "ctx-multi", TaskState::Submitted, 3);
        r.last_seq = 3;
        let first = StreamResponse::Task(r.task.clone());
        r.task.status = TaskStatus::new(TaskState::Working);
        let second = status_event(&r);
        r.task.status = TaskStatus::new(TaskState::Completed);
        let third = status_event(&r);
        async move {
            store
                .commit_events(&r, &[first, second, third])
                .await
                .map(|()| r)
        }
    });
    for r in futures::future::join_all(commits).await {
        let r = r.unwrap();
        let log = log_of(store, "", &r.task.id).await;
        assert_eq!(
            log.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![1, 2, 3],
            "{}",
            r.task.id
        );
        assert_eq!(log[2].event.state(), Some(TaskState::Completed));
        assert_eq!(store.load("", &r.task.id).await.unwrap().unwrap(), r);
    }
}

/// The same id in two tenants are two tasks.
pub async fn tenants_are_separate(store: &dyn TaskStore) {
    let state_in = |tenant: &'static str| async move {
        let found = store.load(tenant, "same-id").await.unwrap();
        found.map(|r| r.task.status.state)
    };
    let same_id = |tenant, state, secs| record(tenant, "anonymous", "same-id", "c", state, secs);
    create(store, same_id("tenant-a", TaskState::Working, 2)).await;
    assert_eq!(state_in("tenant-b").await, None);
    create(store, same_id("tenant-b", TaskState::Completed, 3)).await;
    assert_eq!(state_in("tenant-a").await, Some(TaskState::Working));
    assert_eq!(state_in("tenant-b").await, Some(TaskState::Completed));
}

/// ListTasks order (status time desc, id desc), filters, totals and cursors.
pub async fn list_orders_filters_and_pages(store: &dyn TaskStore) {
    let tenant = "list-tenant";
    for i in 0..7 {
        let state = if i % 2 == 0 {
            TaskState::Completed
        } else {
            TaskState::Working
        };
        let ctx = if i < 4 { "ctx-a" } else { "ctx-b" };
        create(
            store,
            record(tenant, "alice", &format!("task-{i}"), ctx, state, 100 + i),
        )
        .await;
    }
    // Two tasks with the same status time are ordered by id, descending.
    create(
        store,
        record(
            tenant,
            "alice",
            "task-tie",
            "ctx-b",
            TaskState::Working,
            106,
        ),
    )
    .await;
    // Someone else's task never shows up.
    create(
        store,
        record(tenant, "bob", "bobs-task", "ctx-a", TaskState::Working, 200),
    )
    .await;

    let q = |limit: usize| TaskQuery {
        limit,
        ..fixtures::all_of(tenant)
    };
    let all = store.list(&q(100)).await.unwrap();
    let ids: Vec<&str> = all.records.iter().map(|r| r.task.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "task-tie", "task-6", "task-5", "task-4", "task-3", "task-2", "task-1", "task-0"
        ]
    );
    assert_eq!(all.total, 8);
    assert!(all.next.is_none(), "a complete page has no cursor");

    let mut seen = Vec::new();
    let mut query = q(3);
    loop {
        let page = store.list(&query).await.unwrap();
        assert_eq!(page.total, 8, "total counts all pages");
        assert!(page.records.len() <= 3);
        seen.extend(page.records.iter().map(|r| r.task.id.clone()));
        match page.next {
            Some(c) => query.after = Some(c),
            None => break,
        }
    }
    assert_eq!(seen, ids, "pages concatenate to the full order");

    let mut f = q(100);
    f.context_id = Some("ctx-a".into());
    f.state = Some(TaskState::Completed);
    let page = store.list(&f).await.unwrap();
    let ids: Vec<&str> = page.records.iter().map(|r| r.task.id.as_str()).collect();
    assert_eq!(ids, vec!["task-2", "task-0"]);
    assert_eq!(page.total, 2);

    let mut f = q(100);
    f.status_after = Some(Utc.timestamp_opt(1_800_000_000 + 105, 0).single().unwrap());
    let page = store.list(&f).await.unwrap();
    assert_eq!(page.total, 3, "statusTimestampAfter is inclusive");

    // An administrator's listing: every owner's tasks of the tenant.
    let mut f = q(100);
    f.all_owners = true;
    let page = store.list(&f).await.unwrap();
    assert_eq!(page.total, 9, "alice's eight and bob's one");
    assert_eq!(page.records[0].task.id, "bobs-task", "newest first");
}

/// What [`write_before_reopening`] committed, for
/// [`survived_reopening`] to find again.
#[derive(Debug, Clone)]
pub struct BeforeReopening {
    /// Task `task-a` of tenant "", finished after four events.
    pub finished: TaskRecord,
    /// Task `task-b` of tenant "t2", just created.
    pub other: TaskRecord,
    /// The log of `finished`, as read before the reopen.
    pub log: Vec<LoggedEvent>,
}

/// Commits two tasks in two tenants, one of them finished, to a fresh
/// store; reopen it (a new store on the same data, or after a crash) and
/// pass what this returns to [`survived_reopening`].
pub async fn write_before_reopening(store: &dyn TaskStore) -> BeforeReopening {
    let mut finished = fixtures::commit_task(store, "", "task-a", 3).await;
    finished.task.status = TaskStatus::new(TaskState::Completed);
    finished.last_seq = 4;
    store
        .commit(&finished, Some(&status_event(&finished)))
        .await
        .unwrap();
    let other = fixtures::commit_task(store, "t2", "task-b", 1).await;
    let log = log_of(store, "", "task-a").await;
    BeforeReopening {
        finished,
        other,
        log,
    }
}

/// Everything `before` committed loads back from the reopened `store`:
/// snapshots, metadata and events, to the nanosecond.
pub async fn survived_reopening(store: &dyn TaskStore, before: &BeforeReopening) {
    let finished = &before.finished;
    assert_eq!(
        store.load("", "task-a").await.unwrap().as_ref(),
        Some(finished),
        "snapshot and metadata survive, to the nanosecond"
    );
    assert_eq!(
        store.load("t2", "task-b").await.unwrap().as_ref(),
        Some(&before.other)
    );
    let reread = log_of(store, "", "task-a").await;
    assert_eq!(reread, before.log);
    assert_eq!(
        reread.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![1, 2, 3, 4]
    );
    assert_eq!(
        reread[3].event,
        status_event(finished),
        "events survive, to the nanosecond"
    );
    assert_eq!(store.list(&fixtures::all_of("")).await.unwrap().total, 1);
}

/// After a store is reopened (or its server crashed) the log continues where
/// it stopped, and the sequence is still enforced. `last` is the task as it
/// was last committed before the reopen.
pub async fn log_continues_after_reopening(store: &dyn TaskStore, last: &TaskRecord) {
    let mut next = last.clone();
    next.last_seq = last.last_seq + 1;
    store
        .commit(&next, Some(&status_event(&next)))
        .await
        .unwrap();
    let err = store
        .commit(&next, Some(&status_event(&next)))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::SequenceConflict { expected, found, .. }
                if expected == last.last_seq && found == next.last_seq
        ),
        "a repeated sequence number after a reopen: {err}"
    );
}

/// `status_after` compares to the nanosecond, even where the database keeps
/// microseconds. `store` must hold no other task of alice's in tenant "".
pub async fn status_after_is_exact_below_a_microsecond(store: &dyn TaskStore) {
    // Status time ...123_456_789 ns: micros ...123_456, rest 789 ns.
    fixtures::commit_task(store, "", "exact", 1).await;
    let mut q = fixtures::all_of("");
    for (nanos, expected) in [
        (123_456_000, 1),
        (123_456_789, 1),
        (123_456_790, 0),
        (123_457_000, 0),
    ] {
        q.status_after = Some(Utc.timestamp_opt(1_800_000_000, nanos).single().unwrap());
        let page = store.list(&q).await.unwrap();
        assert_eq!(page.total, expected, "after {nanos} ns");
        assert_eq!(page.records.len() as u64, expected, "after {nanos} ns");
    }
}

/// Records and logs for a store crate's own tests (durability, concurrency),
/// built the way the suite builds them.
pub mod fixtures {
    use super::*;

    /// Alice's task `id` in `state`, its status `secs` after a fixed instant
    /// and with nanoseconds on purpose: the wire form keeps milliseconds only,
    /// a store must keep them all.
    pub fn record(tenant: &str, id: &str, state: TaskState, secs: i64) -> TaskRecord {
        let mut r = super::record(tenant, "alice", id, &format!("ctx-{id}"), state, secs);
        let ts = Utc
            .timestamp_opt(1_800_000_000 + secs, 123_456_789)
            .single()
            .unwrap();
        r.task.status.timestamp = Some(ts);
        r.created_at = ts;
        r
    }

    /// A task's whole log; panics if the store fails to read it.
    pub async fn log_of(store: &dyn TaskStore, tenant: &str, task_id: &str) -> Vec<LoggedEvent> {
        let query = EventQuery::new(tenant, task_id);
        store.events(query).await.expect("the log reads")
    }

    /// Commits `n` events to a fresh task: the task itself, then status
    /// updates; returns the record as last committed.
    pub async fn commit_task(store: &dyn TaskStore, tenant: &str, id: &str, n: u64) -> TaskRecord {
        let mut r = create(store, record(tenant, id, TaskState::Submitted, 0)).await;
        for seq in 2..=n {
            r.task.status = TaskStatus::new(TaskState::Working);
            r.last_seq = seq;
            store.commit(&r, Some(&status_event(&r))).await.unwrap();
        }
        r
    }

    /// Commits `r` as it is, with the task itself as its one event (how a
    /// task's first event looks; `r.last_seq` says which sequence it takes).
    pub async fn commit_as_task(store: &dyn TaskStore, r: &TaskRecord) -> Result<(), StoreError> {
        store
            .commit(r, Some(&StreamResponse::Task(r.task.clone())))
            .await
    }

    /// Asserts that exactly one of `results`, commits racing for the same
    /// sequence number, succeeded, and that each other one was refused with
    /// a sequence conflict: it expected the log to end at `expected`, and
    /// found the winner's `found`.
    pub fn assert_one_won(
        results: &[Result<(), StoreError>],
        expected: u64,
        found: u64,
        what: &str,
    ) {
        let mut won = 0;
        for result in results {
            match result {
                Ok(()) => won += 1,
                Err(StoreError::SequenceConflict {
                    expected: e,
                    found: f,
                    ..
                }) if (*e, *f) == (expected, found) => {}
                Err(e) => panic!("{what}: unexpected error: {e}"),
            }
        }
        assert_eq!(won, 1, "{what}: exactly one writer wins");
    }

    /// Every task of alice's in `tenant`, one page of 100.
    pub fn all_of(tenant: &str) -> TaskQuery {
        TaskQuery {
            tenant: tenant.into(),
            owner: "alice".into(),
            all_owners: false,
            context_id: None,
            state: None,
            status_after: None,
            limit: 100,
            after: None,
        }
    }

    /// Task `id` working, at sequence `seq`, for outbox tests where only
    /// the sequence matters.
    pub fn working_record(id: &str, seq: u64) -> TaskRecord {
        let mut r = super::record("", "anonymous", id, "ctx", TaskState::Working, 0);
        r.task.status = TaskStatus::new(TaskState::Working);
        r.task.artifacts = None;
        r.last_seq = seq;
        r.created_at = Utc::now();
        r
    }
}
