//! SQLite-specific behaviour: durability across reopen, concurrent writers,
//! bad files, idempotent migrations, group-commit edge cases and backups.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::future::Future;
use std::sync::Arc;

use switchboard_core::store::conformance::fixtures::{
    all_of, assert_one_won, commit_as_task, commit_task, log_of, record,
};
use switchboard_core::store::conformance::{self, status_event};
use switchboard_core::{EventQuery, StoreError, TaskStore};
use switchboard_protocol::{Message, TaskState, TaskStatus};
use switchboard_store_sqlite::SqliteStore;

/// Runs `write(store, k)` for every `k` in `0..n`, each in its own tokio
/// task, all at once; their results, in `k` order.
async fn concurrently<T, F, Fut>(store: &Arc<SqliteStore>, n: u32, write: F) -> Vec<T>
where
    F: Fn(Arc<SqliteStore>, u32) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let writers: Vec<_> = (0..n)
        .map(|k| tokio::spawn(write(Arc::clone(store), k)))
        .collect();
    let mut results = Vec::new();
    for w in writers {
        results.push(w.await.unwrap());
    }
    results
}

#[tokio::test]
async fn commits_survive_reopening_the_file() {
    let (_dir, path) = common::temp_db("durable.db");

    let store = SqliteStore::open(&path).await.unwrap();
    let before = conformance::write_before_reopening(&store).await;
    // Dropped without `close`: everything that `commit` acknowledged must
    // already be on disk.
    drop(store);

    let store = SqliteStore::open(&format!("sqlite://{path}"))
        .await
        .unwrap();
    conformance::survived_reopening(&store, &before).await;
    conformance::log_continues_after_reopening(&store, &before.finished).await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_to_many_tasks_all_land() {
    let (_dir, store) = common::open_temp("concurrent.db").await;
    let store = Arc::new(store);

    concurrently(&store, 32, |store, w| async move {
        for t in 0..8 {
            commit_task(store.as_ref(), "", &format!("w{w:02}-t{t}"), 3).await;
        }
    })
    .await;

    let page = store.list(&all_of("")).await.unwrap();
    assert_eq!(page.total, 32 * 8);
    for w in 0..32 {
        for t in 0..8 {
            let id = format!("w{w:02}-t{t}");
            let r = store.load("", &id).await.unwrap().unwrap();
            assert_eq!(r.last_seq, 3, "{id}");
            let log = log_of(&*store, "", &id).await;
            assert_eq!(
                log.iter().map(|e| e.seq).collect::<Vec<_>>(),
                vec![1, 2, 3],
                "{id}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_to_one_task_get_conflicts_not_corruption() {
    let store = Arc::new(SqliteStore::open_in_memory().await.unwrap());
    let base = commit_task(store.as_ref(), "", "contended", 1).await;
    // Sixteen writers all try to append event 2; exactly one may win.
    let results = concurrently(&store, 16, |store, i| {
        let mut r = base.clone();
        async move {
            r.task.metadata = Some(
                serde_json::json!({ "writer": i })
                    .as_object()
                    .unwrap()
                    .clone(),
            );
            r.last_seq = 2;
            store.commit(&r, Some(&status_event(&r))).await
        }
    })
    .await;
    assert_one_won(&results, 1, 2, "appending event 2");
    assert_eq!(log_of(&*store, "", "contended").await.len(), 2);
    assert_eq!(
        store.load("", "contended").await.unwrap().unwrap().last_seq,
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_commit_in_a_group_fails_alone() {
    let store = Arc::new(SqliteStore::open_in_memory().await.unwrap());
    // A snapshot-only commit at seq 0 followed by an event at seq 0 twice:
    // the second event row collides in the log table (a backend error), which
    // must not take the other commits of its group down with it.
    let mut bad = record("", "bad", TaskState::Submitted, 0);
    bad.last_seq = 0;
    commit_as_task(store.as_ref(), &bad).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..64 {
        let store = Arc::clone(&store);
        let bad = bad.clone();
        tasks.push(tokio::spawn(async move {
            if i % 8 == 0 {
                let err = commit_as_task(store.as_ref(), &bad).await.unwrap_err();
                assert!(matches!(err, StoreError::Backend(_)), "{err}");
            } else {
                commit_task(store.as_ref(), "", &format!("good-{i}"), 2).await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(store.list(&all_of("")).await.unwrap().total, 1 + 56);
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-db.db");
    std::fs::write(&path, vec![b'x'; 8192]).unwrap();
    let err = SqliteStore::open(path.to_str().unwrap()).await.unwrap_err();
    match &err {
        StoreError::Backend(msg) => {
            assert!(msg.contains("not-a-db.db"), "names the file: {msg}");
            assert!(msg.contains("not a database"), "says what is wrong: {msg}");
        }
        other => panic!("expected a backend error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_missing_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/tasks.db");
    let err = SqliteStore::open(path.to_str().unwrap()).await.unwrap_err();
    assert!(matches!(err, StoreError::Backend(_)), "{err}");
}

#[tokio::test]
async fn migrations_are_idempotent() {
    let (_dir, path) = common::temp_db("twice.db");
    let first = SqliteStore::open(&path).await.unwrap();
    commit_task(&first, "", "kept", 2).await;
    // A second store on the same file while the first is open, then a third
    // after both are gone: each runs the migrations again, harmlessly.
    let second = SqliteStore::open(&path).await.unwrap();
    assert_eq!(second.load("", "kept").await.unwrap().unwrap().last_seq, 2);
    first.close().await;
    second.close().await;
    let third = SqliteStore::open(&format!("sqlite:{path}")).await.unwrap();
    assert_eq!(log_of(&third, "", "kept").await.len(), 2);
}

#[tokio::test]
async fn two_stores_on_one_file_see_each_others_commits() {
    let (_dir, path) = common::temp_db("shared.db");
    let a = SqliteStore::open(&path).await.unwrap();
    let b = SqliteStore::open(&path).await.unwrap();
    let r = commit_task(&a, "", "shared", 1).await;
    assert_eq!(b.load("", "shared").await.unwrap().unwrap(), r);
    let mut next = r.clone();
    next.last_seq = 2;
    b.commit(&next, Some(&status_event(&next))).await.unwrap();
    let err = a
        .commit(&next, Some(&status_event(&next)))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::SequenceConflict { .. }), "{err}");
}

#[tokio::test]
async fn memory_url_opens_an_in_memory_store() {
    let store = SqliteStore::open("sqlite::memory:").await.unwrap();
    commit_task(&store, "", "m", 2).await;
    assert_eq!(log_of(&store, "", "m").await.len(), 2);
}

#[tokio::test]
async fn status_after_is_exact_below_a_microsecond() {
    let store = SqliteStore::open_in_memory().await.unwrap();
    conformance::status_after_is_exact_below_a_microsecond(&store).await;
}

#[tokio::test]
async fn backup_is_a_consistent_openable_copy() {
    let (dir, store) = common::open_temp("live.db").await;
    let r = commit_task(&store, "", "backed-up", 3).await;
    let copy = dir.path().join("copy.db");
    store.backup_to(&copy).await.unwrap();
    assert!(
        store.backup_to(&copy).await.is_err(),
        "an existing file is not overwritten"
    );
    let restored = SqliteStore::open(copy.to_str().unwrap()).await.unwrap();
    assert_eq!(restored.load("", "backed-up").await.unwrap().unwrap(), r);
    assert_eq!(log_of(&restored, "", "backed-up").await.len(), 3);
}

#[tokio::test]
async fn corrupt_rows_are_reported_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corrupt.db");
    let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
    commit_task(&store, "", "mangled", 1).await;
    store.close().await;
    {
        use sqlx::{Connection, SqliteConnection};
        let mut conn = SqliteConnection::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        sqlx::query("UPDATE tasks SET task_json = '{\"nope\":' WHERE id = 'mangled'")
            .execute(&mut conn)
            .await
            .unwrap();
        sqlx::query("UPDATE task_events SET event_json = '[]' WHERE task_id = 'mangled'")
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
    }
    let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
    assert!(matches!(
        store.load("", "mangled").await,
        Err(StoreError::Corrupt(_))
    ));
    assert!(matches!(
        store.list(&all_of("")).await,
        Err(StoreError::Corrupt(_))
    ));
    assert!(matches!(
        store.events(EventQuery::new("", "mangled")).await,
        Err(StoreError::Corrupt(_))
    ));
}

/// A commit that fails halfway (its event collides in the log) changes
/// nothing, and the store keeps working afterwards.
async fn failed_commit_is_rolled_back(store: &SqliteStore) {
    // The log of a task whose events are numbered 0 can collide: a second
    // event 0 passes the sequence check but not the log's primary key.
    let mut r = record("", "half", TaskState::Submitted, 0);
    commit_as_task(store, &r).await.unwrap();
    let before = store.load("", "half").await.unwrap().unwrap();
    r.task.status = TaskStatus::new(TaskState::Failed);
    let err = store.commit(&r, Some(&status_event(&r))).await.unwrap_err();
    assert!(matches!(err, StoreError::Backend(_)), "{err}");
    assert_eq!(
        store.load("", "half").await.unwrap().unwrap(),
        before,
        "the snapshot write was rolled back"
    );
    // The writer connection is usable again, and the database is still there.
    let ok = commit_task(store, "", "after-failure", 2).await;
    assert_eq!(store.load("", "after-failure").await.unwrap().unwrap(), ok);
    assert_eq!(store.list(&all_of("")).await.unwrap().total, 2);
}

#[tokio::test]
async fn a_failed_commit_is_rolled_back_in_memory() {
    failed_commit_is_rolled_back(&SqliteStore::open_in_memory().await.unwrap()).await;
}

#[tokio::test]
async fn a_failed_commit_is_rolled_back_on_a_file() {
    let (_dir, store) = common::open_temp("rb.db").await;
    failed_commit_is_rolled_back(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn group_commits_keep_per_task_order() {
    // Many tasks, each written by its own tokio task as fast as possible,
    // plus snapshot-only commits in between: whatever groups the writer
    // forms, every log ends up complete and in order, and every snapshot is
    // the last one committed.
    let (_dir, store) = common::open_temp("order.db").await;
    let store = Arc::new(store);
    let written = concurrently(&store, 24, |store, t| async move {
        let mut r = commit_task(store.as_ref(), "", &format!("ordered-{t}"), 1).await;
        for seq in 2..=20 {
            r.task
                .history
                .as_mut()
                .unwrap()
                .push(Message::user_text(format!("m{seq}")));
            store.commit(&r, None).await.unwrap();
            r.last_seq = seq;
            store.commit(&r, Some(&status_event(&r))).await.unwrap();
        }
        r
    })
    .await;
    for r in written {
        assert_eq!(store.load("", &r.task.id).await.unwrap().unwrap(), r);
        let log = log_of(&*store, "", &r.task.id).await;
        assert_eq!(
            log.iter().map(|e| e.seq).collect::<Vec<_>>(),
            (1..=20).collect::<Vec<_>>()
        );
    }
}

/// Concurrent commits of one owner meet in group commits: the quota holds
/// there too (exactly as many tasks as fit are written, the others are
/// refused whole), and the per-owner counter always equals a recount of
/// what is stored, after retention too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_storage_quota_holds_in_group_commits() {
    use switchboard_core::store::quota::{StorageQuota, json_bytes};
    let (dir, path) = common::temp_db("quota.db");
    let task = |k: u32| {
        let mut r = record("", &format!("q{k:02}"), TaskState::Working, 0);
        r.task.history = Some(vec![Message::user_text("z".repeat(1000))]);
        r.last_seq = 1;
        r
    };
    let size = 2 * json_bytes(&task(0).task);
    let options = switchboard_store_sqlite::SqliteOptions {
        storage_quota: StorageQuota::per_owner(10 * size + size / 2),
        ..Default::default()
    };
    let store = Arc::new(SqliteStore::open_with(&path, options).await.unwrap());
    let results = concurrently(&store, 32, |store, k| async move {
        commit_as_task(store.as_ref(), &task(k)).await
    })
    .await;
    let written = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(written, 10, "{results:?}");
    for r in &results {
        assert!(
            matches!(r, Ok(()) | Err(StoreError::QuotaExceeded(_))),
            "{r:?}"
        );
    }
    assert_eq!(store.list(&all_of("")).await.unwrap().total, 10);

    // Finish them all, then let retention take them.
    for k in 0..32 {
        if let Some(mut r) = store.load("", &format!("q{k:02}")).await.unwrap() {
            r.task.status = TaskStatus::new(TaskState::Completed);
            r.last_seq = 2;
            store.commit(&r, Some(&status_event(&r))).await.unwrap();
        }
    }
    let recount = async || {
        let pool = sqlx::SqlitePool::connect(&format!("sqlite://{path}"))
            .await
            .unwrap();
        let counted: Option<i64> = sqlx::query_scalar(
            "SELECT bytes FROM storage_usage WHERE tenant = '' AND owner = 'alice'",
        )
        .fetch_optional(&pool)
        .await
        .unwrap();
        let stored: i64 = sqlx::query_scalar(
            "SELECT COALESCE((SELECT SUM(octet_length(task_json)) FROM tasks), 0) \
             + COALESCE((SELECT SUM(octet_length(event_json)) FROM task_events), 0)",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        pool.close().await;
        (counted.unwrap_or(0), stored)
    };
    let (counted, stored) = recount().await;
    assert_eq!(counted, stored);
    assert!(counted > 10 * size as i64);
    let retention = switchboard_core::Retention {
        max_age: None,
        max_finished: Some(0),
    };
    assert_eq!(
        store.purge(&retention, chrono::Utc::now()).await.unwrap(),
        10
    );
    assert_eq!(recount().await, (0, 0));
    drop(dir);
}

/// A handler on the store, its agent never called.
fn handler_on(store: Arc<SqliteStore>, recover: bool) -> switchboard_core::RequestHandler {
    let agent = switchboard_core::agent_fn(|_ctx, _events| async { Ok(()) });
    let card = switchboard_protocol::AgentCard::new("a", "b", "1.0");
    switchboard_core::RequestHandler::builder(agent, card)
        .store(store)
        .recover_abandoned(recover)
        .build()
}

#[tokio::test]
async fn runs_left_unfinished_are_failed_at_start_unless_recovery_is_off() {
    let (_dir, path) = common::temp_db("abandoned.db");
    let store = SqliteStore::open(&path).await.unwrap();
    commit_task(&store, "t1", "left-working", 2).await;
    // Working now, but not when this store opened: a run of this process
    // is never taken for an abandoned one.
    assert!(store.take_abandoned_runs().is_empty());
    // The process dies.
    drop(store);

    // Restarted with recovery off: the task is left as it is.
    let store = Arc::new(SqliteStore::open(&path).await.unwrap());
    let handler = handler_on(store.clone(), false);
    assert_eq!(handler.recover_abandoned().await, 0);
    let left = store.load("t1", "left-working").await.unwrap().unwrap();
    assert_eq!(left.task.status.state, TaskState::Working);
    drop((handler, store));

    // Restarted as usual: failed, saying why, and only once.
    let store = Arc::new(SqliteStore::open(&path).await.unwrap());
    let handler = handler_on(store.clone(), true);
    assert_eq!(handler.recover_abandoned().await, 1);
    assert_eq!(handler.recover_abandoned().await, 1, "the one pass's count");
    let failed = store.load("t1", "left-working").await.unwrap().unwrap();
    assert_eq!(failed.task.status.state, TaskState::Failed);
    let why = failed.task.status.message.as_ref().map(Message::text);
    assert!(
        why.as_deref().is_some_and(|w| w.contains("run was lost")),
        "{why:?}"
    );
    assert!(store.take_abandoned_runs().is_empty(), "handed out once");
}

/// An agent that takes back the abandoned tasks whose id starts with
/// "resume" and completes them, saying for whom.
struct Resumer;

#[switchboard_core::async_trait]
impl switchboard_core::AgentExecutor for Resumer {
    async fn execute(
        &self,
        _ctx: switchboard_core::RequestContext,
        _events: switchboard_core::TaskEvents,
    ) -> Result<(), switchboard_core::BoxError> {
        Ok(())
    }

    fn resumes(&self, task: &switchboard_protocol::Task) -> bool {
        task.id.starts_with("resume")
    }

    async fn resume(
        &self,
        ctx: switchboard_core::RequestContext,
        events: switchboard_core::TaskEvents,
    ) -> Result<(), switchboard_core::BoxError> {
        let from = ctx.task.map(|t| t.status.state.to_string());
        events
            .artifact_text(
                "resumed",
                format!("resumed for {} from {from:?}", ctx.call.principal),
            )
            .await?;
        Ok(())
    }
}

/// Polls the store until `task_id` of `tenant` is in a terminal state.
async fn terminal(
    store: &SqliteStore,
    tenant: &str,
    task_id: &str,
) -> switchboard_core::TaskRecord {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let r = store.load(tenant, task_id).await.unwrap().unwrap();
        if r.task.status.state.is_terminal() {
            return r;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{task_id} never ended: {r:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn an_agent_resumes_the_runs_it_takes_back_each_agent_its_own() {
    let (_dir, path) = common::temp_db("resumed.db");
    let ns = |name: &str| format!("{name}{}", switchboard_core::handler::NAMESPACE_SEPARATOR);
    let store = SqliteStore::open(&path).await.unwrap();
    for (tenant, id) in [
        (String::new(), "resume-root"),
        (String::new(), "lost-root"),
        (ns("/mounted"), "resume-mounted"),
        (ns("/removed"), "resume-removed"),
    ] {
        commit_task(&store, &tenant, id, 2).await;
    }
    drop(store);

    let store = Arc::new(SqliteStore::open(&path).await.unwrap());
    let card = switchboard_protocol::AgentCard::new("a", "b", "1.0");
    let root = switchboard_core::RequestHandler::builder(Resumer, card.clone())
        .store(store.clone())
        .build();
    let mounted = switchboard_core::RequestHandler::builder(Resumer, card)
        .store(store.clone())
        .namespace("/mounted")
        .build();
    // Each takes its own: the root those of no namespace, one resumed and
    // one failed; the mounted agent its namespace's.
    assert_eq!(root.recover_abandoned().await, 2);
    assert_eq!(mounted.recover_abandoned().await, 1);
    // What no agent took (a namespace no longer served) is failed.
    assert_eq!(root.fail_unclaimed_abandoned().await, 1);
    assert!(store.take_abandoned_runs().is_empty());

    for (tenant, id) in [
        (String::new(), "resume-root"),
        (ns("/mounted"), "resume-mounted"),
    ] {
        let done = terminal(&store, &tenant, id).await;
        assert_eq!(done.task.status.state, TaskState::Completed, "{done:?}");
        let text = done.task.artifacts()[0].text();
        let from = Some(TaskState::Working.to_string());
        assert_eq!(text, format!("resumed for alice from {from:?}"));
        // Continued from the stored log: numbered on from it.
        let seqs: Vec<u64> = log_of(store.as_ref(), &tenant, id)
            .await
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
        assert!(seqs.len() > 2, "{seqs:?}");
    }
    for (tenant, id) in [
        (String::new(), "lost-root"),
        (ns("/removed"), "resume-removed"),
    ] {
        let failed = terminal(&store, &tenant, id).await;
        assert_eq!(failed.task.status.state, TaskState::Failed, "{failed:?}");
        let why = failed.task.status.message.as_ref().map(Message::text);
        assert!(
            why.as_deref().is_some_and(|w| w.contains("run was lost")),
            "{why:?}"
        );
    }
}
