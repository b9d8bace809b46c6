//! PostgreSQL-specific behaviour: durability across stores and across a
//! server crash, replicas (several `PgStore`s, each with its own pool, on
//! one database) racing for the same sequence numbers, many concurrent
//! writers, byte-order listing under a non-C collation, clean errors for bad
//! URLs and unreachable servers, and the test harness itself.
//!
//! Every test gets a fresh database (or a private server when it needs to
//! crash one), so they run in parallel. Without PostgreSQL binaries they are
//! skipped, unless `SWITCHBOARD_REQUIRE_POSTGRES` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use sqlx::{AssertSqlSafe, Connection};
use switchboard_core::store::conformance::fixtures::{
    all_of, assert_one_won, commit_as_task, commit_task, log_of, record,
};
use switchboard_core::store::conformance::{self, status_event};
use switchboard_core::{EventQuery, Retention, StoreError, TaskStore};
use switchboard_protocol::{Message, Part, StreamResponse, TaskState, TaskStatus};
use switchboard_store_postgres::testing::{self, TestPostgres};
use switchboard_store_postgres::{PgCluster, PgOptions, PgStore};
use tokio::sync::Barrier;

fn writer_of(event: &StreamResponse) -> String {
    match event {
        StreamResponse::StatusUpdate(u) => u
            .metadata
            .as_ref()
            .and_then(|m| m.get("writer"))
            .and_then(|w| w.as_str())
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

fn seqs(log: &[switchboard_core::LoggedEvent]) -> Vec<u64> {
    log.iter().map(|e| e.seq).collect()
}

// ----------------------------------------------------------------------------
// Durability.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_survive_a_new_store_and_a_server_crash() {
    let Some(server) = testing::start_or_skip("commits_survive_a_server_crash") else {
        return;
    };
    let url = server.fresh_database().await.unwrap();

    let first = PgStore::open(&url).await.unwrap();
    let before = conformance::write_before_reopening(&first).await;
    // Dropped without `close`: what `commit` acknowledged is in the database.
    drop(first);

    let second = PgStore::open(&url).await.unwrap();
    conformance::survived_reopening(&second, &before).await;

    // Crash the server (no shutdown checkpoint) and bring it back: recovery
    // replays the write-ahead log, and the pool replaces its dead
    // connections by itself.
    server.restart().unwrap();
    let mut reloaded = None;
    for _ in 0..50 {
        match second.load("", "task-a").await {
            Ok(r) => {
                reloaded = r;
                break;
            }
            // A connection that died with the server may be handed out once.
            Err(StoreError::Backend(_)) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(
        reloaded.as_ref(),
        Some(&before.finished),
        "committed data survives a server crash"
    );
    conformance::survived_reopening(&second, &before).await;

    conformance::log_continues_after_reopening(&second, &before.finished).await;
    second.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_are_idempotent_and_safe_to_run_concurrently() {
    let Some(url) = testing::fresh_database_or_skip("migrations_are_idempotent").await else {
        return;
    };
    // Replicas starting at once all run the migrations; sqlx serializes
    // them with an advisory lock and skips what is applied.
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { PgStore::open(&url).await })
        })
        .collect();
    let mut stores = Vec::new();
    for h in handles {
        stores.push(h.await.unwrap().unwrap());
    }
    commit_task(&stores[0], "", "kept", 2).await;
    let again = PgStore::open(&url).await.unwrap();
    assert_eq!(again.load("", "kept").await.unwrap().unwrap().last_seq, 2);
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations")
        .fetch_one(again.pool())
        .await
        .unwrap();
    // Each embedded migration exactly once, however many replicas ran them.
    let embedded = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "sql")
        })
        .count();
    assert_eq!(usize::try_from(applied).unwrap(), embedded);
    assert!(embedded >= 2, "tasks and push migrations");
}

/// The tables retention and push delivery churn vacuum without autovacuum's
/// cost delay (migration 0010), and the others keep the cluster's settings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_churned_tables_vacuum_unthrottled() {
    let Some(url) = testing::fresh_database_or_skip("vacuum_unthrottled").await else {
        return;
    };
    let store = PgStore::open(&url).await.unwrap();
    let rows: Vec<(String, Option<Vec<String>>)> = sqlx::query_as(
        "SELECT relname::text, reloptions FROM pg_class \
         WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY relname",
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    let unthrottled: Vec<&str> = rows
        .iter()
        .filter(|(_, options)| {
            options
                .as_deref()
                .is_some_and(|o| o.iter().any(|o| o == "autovacuum_vacuum_cost_delay=0"))
        })
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        unthrottled,
        ["push_outbox", "task_events", "tasks"],
        "{rows:?}"
    );
}

/// Replicas share the group-commit budget: a replica alone may run all of
/// `commit_writers` statements at once, two run half each, three one each
/// (never none), and when one leaves the others take its share back at once
/// (its NOTIFY), not when its row would expire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_the_commit_writers() {
    let Some(url) = testing::fresh_database_or_skip("replicas_share_writers").await else {
        return;
    };
    let join = || join_with_four_writers(&url);
    let writers = |stores: &[&PgStore]| {
        stores
            .iter()
            .map(|s| s.commit_writers())
            .collect::<Vec<_>>()
    };
    let (a, _a) = join().await;
    eventually(|| writers(&[&a]) == [4]).await;
    let (b, b_cluster) = join().await;
    eventually(|| writers(&[&a, &b]) == [2, 2]).await;
    let (c, c_cluster) = join().await;
    eventually(|| writers(&[&a, &b, &c]) == [1, 1, 1]).await;
    // Commits still go through at one writer each.
    commit_task(&a, "", "shared-a", 3).await;
    commit_task(&c, "", "shared-c", 3).await;
    c_cluster.leave().await;
    eventually(|| writers(&[&a, &b]) == [2, 2]).await;
    b_cluster.leave().await;
    eventually(|| writers(&[&a]) == [4]).await;
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM replicas")
        .fetch_one(a.pool())
        .await
        .unwrap();
    assert_eq!(rows, 1, "the replicas that left deleted their rows");
}

/// A replica whose own row expired long ago (its heartbeat could not run,
/// e.g. during an outage) renews it at its next beat and counts again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_row_expired_long_ago_renews_it() {
    let Some(url) = testing::fresh_database_or_skip("replica_row_expired").await else {
        return;
    };
    let (a, _a) = join_with_four_writers(&url).await;
    eventually(|| a.commit_writers() == 4).await;
    sqlx::query("UPDATE replicas SET alive_until = 0")
        .execute(a.pool())
        .await
        .unwrap();
    // The second replica's join makes the first count again (NOTIFY).
    let (_b, _b_cluster) = join_with_four_writers(&url).await;
    eventually(|| a.commit_writers() == 2).await;
}

/// The concurrent-task quota counted across replicas: two replicas racing
/// for places never take more than the quota between them, a place given
/// back is free for either, and the places of a replica that leaves (or
/// whose row expires) come back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_share_the_concurrent_task_count() {
    use switchboard_core::Cluster;
    let Some(url) = testing::fresh_database_or_skip("shared_run_quota").await else {
        return;
    };
    let (_a, a) = join_with_four_writers(&url).await;
    let (_b, b) = join_with_four_writers(&url).await;
    // 40 takers, 20 on each replica, all at once, for a quota of 7.
    let mut takers = tokio::task::JoinSet::new();
    for i in 0..40 {
        let cluster = if i % 2 == 0 { a.clone() } else { b.clone() };
        takers.spawn(async move { (i % 2, cluster.acquire_run("alice", 7).await.unwrap()) });
    }
    let mut taken = [0, 0];
    while let Some(r) = takers.join_next().await {
        let (side, ok) = r.unwrap();
        taken[side] += usize::from(ok);
    }
    assert_eq!(taken[0] + taken[1], 7, "places taken by a and b: {taken:?}");
    // Another caller has its own places.
    assert!(a.acquire_run("bob", 7).await.unwrap());
    // Full for alice on both replicas; a place given back on one is free on the other.
    assert!(!a.acquire_run("alice", 7).await.unwrap());
    assert!(!b.acquire_run("alice", 7).await.unwrap());
    let (giver, other) = if taken[0] > 0 { (&a, &b) } else { (&b, &a) };
    giver.release_run("alice").await;
    assert!(other.acquire_run("alice", 7).await.unwrap());
    assert!(!giver.acquire_run("alice", 7).await.unwrap());
    // A release of a place this replica does not hold gives nothing back.
    let bob_holder = &b;
    bob_holder.release_run("bob").await;
    assert!(!a.acquire_run("alice", 7).await.unwrap());
    // When a leaves, the places it held come back.
    let held_by_a: i64 = sqlx::query_scalar(
        "SELECT COALESCE(sum(held), 0)::bigint FROM run_quota_held \
         WHERE replica = $1 AND key = sha256('alice')",
    )
    .bind(a.replica_id())
    .fetch_one(_b.pool())
    .await
    .unwrap();
    assert!(held_by_a > 0, "a holds places");
    a.leave().await;
    for _ in 0..held_by_a {
        assert!(
            b.acquire_run("alice", 7).await.unwrap(),
            "a's places came back"
        );
    }
    assert!(!b.acquire_run("alice", 7).await.unwrap());
}

/// The places of a replica that died (its row expired, it never left) are
/// given back by the heartbeat of a live one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_replicas_places_come_back() {
    use switchboard_core::Cluster;
    let Some(url) = testing::fresh_database_or_skip("dead_run_quota").await else {
        return;
    };
    let (_a, a) = join_with_four_writers(&url).await;
    for _ in 0..3 {
        assert!(a.acquire_run("carol", 3).await.unwrap());
    }
    assert!(!a.acquire_run("carol", 3).await.unwrap());
    // a dies: its heartbeat stops (one beat may still be under way, so its
    // row is expired again until b has noticed).
    let a_id = a.replica_id().to_string();
    drop(a);
    // b beats every 100 ms and deletes rows expired 300 ms ago or more.
    let (_b, b) = PgStore::open(&url)
        .await
        .unwrap()
        .replica(Duration::from_millis(300))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        sqlx::query("UPDATE replicas SET alive_until = 0 WHERE id = $1")
            .bind(&a_id)
            .execute(_b.pool())
            .await
            .unwrap();
        if b.acquire_run("carol", 3).await.unwrap() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the dead replica's places never came back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(b.acquire_run("carol", 3).await.unwrap());
    assert!(b.acquire_run("carol", 3).await.unwrap());
    assert!(!b.acquire_run("carol", 3).await.unwrap());
}

/// A replica store on `url` with a budget of four commit writers, and its
/// cluster. Its lease (and so its row) lasts far longer than a test: only
/// NOTIFY can make the other replicas count again in time.
async fn join_with_four_writers(url: &str) -> (PgStore, Arc<PgCluster>) {
    let options = PgOptions {
        commit_writers: 4,
        ..Default::default()
    };
    PgStore::open_with(url, options)
        .await
        .unwrap()
        .replica(Duration::from_secs(60))
        .await
        .unwrap()
}

/// Waits (10 s at most) until `done` holds.
async fn eventually(done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "not within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The store's connections use generic plans (see "Generic plans" in the
/// crate docs), and a URL that chooses the mode itself keeps its choice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_use_generic_plans_unless_the_url_says_otherwise() {
    let Some(url) = testing::fresh_database_or_skip("generic_plans").await else {
        return;
    };
    let mode = |store: PgStore| async move {
        sqlx::query_scalar::<_, String>("SHOW plan_cache_mode")
            .fetch_one(store.pool())
            .await
            .unwrap()
    };
    let store = PgStore::open(&url).await.unwrap();
    assert_eq!(mode(store).await, "force_generic_plan");
    let separator = if url.contains('?') { '&' } else { '?' };
    let chosen = format!("{url}{separator}options=-c%20plan_cache_mode%3Dauto");
    let store = PgStore::open(&chosen).await.unwrap();
    assert_eq!(mode(store).await, "auto");
}

// ----------------------------------------------------------------------------
// Replicas and concurrency.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_racing_in_lockstep_each_win_or_conflict() {
    // Two stores with their own pools: two replicas of the server.
    let Some(replicas) = common::replicas_or_skip::<2>("two_replicas_in_lockstep").await else {
        return;
    };
    let base = commit_task(replicas[0].as_ref(), "", "contended", 1).await;
    const LAST: u64 = 40;
    let barrier = Arc::new(Barrier::new(2));
    let mut writers = Vec::new();
    for (i, store) in replicas.iter().enumerate() {
        let store = Arc::clone(store);
        let barrier = Arc::clone(&barrier);
        let mut r = base.clone();
        writers.push(tokio::spawn(async move {
            let mut outcomes = Vec::new();
            for seq in 2..=LAST {
                r.task.metadata = Some(
                    serde_json::json!({ "writer": format!("replica-{i}"), "seq": seq })
                        .as_object()
                        .unwrap()
                        .clone(),
                );
                r.last_seq = seq;
                // Both replicas append event `seq` at the same moment.
                barrier.wait().await;
                outcomes.push(store.commit(&r, Some(&status_event(&r))).await);
            }
            outcomes
        }));
    }
    let mut results = Vec::new();
    for w in writers {
        results.push(w.await.unwrap());
    }
    let mut winners = Vec::new();
    for (k, seq) in (2..=LAST).enumerate() {
        let (a, b) = (&results[0][k], &results[1][k]);
        let won: Vec<usize> = [a, b]
            .iter()
            .enumerate()
            .filter(|(_, o)| o.is_ok())
            .map(|(i, _)| i)
            .collect();
        assert_eq!(
            won.len(),
            1,
            "exactly one replica wins seq {seq}: {a:?} / {b:?}"
        );
        let lost = if won[0] == 0 { b } else { a };
        match lost {
            Err(StoreError::SequenceConflict {
                expected, found, ..
            }) => {
                assert_eq!(*expected, seq - 1);
                assert_eq!(*found, seq, "the loser sees the winner's commit");
            }
            other => panic!("seq {seq}: expected a sequence conflict, got {other:?}"),
        }
        winners.push(format!("replica-{}", won[0]));
    }

    // Whichever replica reads, the log is complete and its events are the
    // winners'; the snapshot is the last winner's.
    for store in &replicas {
        let log = log_of(&**store, "", "contended").await;
        assert_eq!(seqs(&log), (1..=LAST).collect::<Vec<_>>());
        let writers: Vec<String> = log[1..].iter().map(|e| writer_of(&e.event)).collect();
        assert_eq!(writers, winners);
        let snapshot = store.load("", "contended").await.unwrap().unwrap();
        assert_eq!(snapshot.last_seq, LAST);
        assert_eq!(
            snapshot.task.metadata.unwrap()["writer"],
            winners.last().unwrap().as_str()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn free_running_replicas_never_leave_gaps_or_duplicates() {
    let Some(url) = testing::fresh_database_or_skip("free_running_replicas").await else {
        return;
    };
    let small = PgOptions {
        max_connections: 4,
        ..Default::default()
    };
    let replicas = [
        Arc::new(PgStore::open_with(&url, small.clone()).await.unwrap()),
        Arc::new(PgStore::open_with(&url, small).await.unwrap()),
    ];
    commit_task(replicas[0].as_ref(), "", "hot", 1).await;
    const TARGET: u64 = 120;
    // Eight writers, four per replica, each: read the task, append the next
    // event, and on a conflict read again and retry.
    let mut writers = Vec::new();
    for w in 0..8 {
        let store = Arc::clone(&replicas[w % 2]);
        writers.push(tokio::spawn(async move {
            let (mut won, mut conflicts) = (Vec::new(), 0_u32);
            loop {
                let mut r = store.load("", "hot").await.unwrap().unwrap();
                if r.last_seq >= TARGET {
                    return (won, conflicts);
                }
                r.last_seq += 1;
                r.task.metadata = Some(
                    serde_json::json!({ "writer": format!("w{w}") })
                        .as_object()
                        .unwrap()
                        .clone(),
                );
                match store.commit(&r, Some(&status_event(&r))).await {
                    Ok(()) => won.push(r.last_seq),
                    Err(StoreError::SequenceConflict { .. }) => conflicts += 1,
                    Err(e) => panic!("w{w}: {e}"),
                }
            }
        }));
    }
    let mut all_won = BTreeSet::new();
    let mut total_won = 0;
    let mut total_conflicts = 0;
    for w in writers {
        let (won, conflicts) = w.await.unwrap();
        total_won += won.len();
        total_conflicts += conflicts;
        all_won.extend(won);
    }
    assert_eq!(
        total_won as u64,
        TARGET - 1,
        "every sequence number was won exactly once"
    );
    assert_eq!(all_won, (2..=TARGET).collect::<BTreeSet<_>>());
    eprintln!("{total_won} commits won, {total_conflicts} conflicts");
    let log = replicas[1]
        .events(EventQuery::new("", "hot"))
        .await
        .unwrap();
    assert_eq!(
        seqs(&log),
        (1..=TARGET).collect::<Vec<_>>(),
        "no gap, no duplicate"
    );
    let snapshot = replicas[0].load("", "hot").await.unwrap().unwrap();
    assert_eq!(snapshot.last_seq, TARGET);
    assert_eq!(
        snapshot.task.metadata.unwrap()["writer"].as_str().unwrap(),
        writer_of(&log.last().unwrap().event),
        "the snapshot belongs to the last event"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_creating_one_task_collide_cleanly() {
    let Some([a, b]) = common::replicas_or_skip("replicas_creating_one_task").await else {
        return;
    };
    for round in 0..20 {
        let id = format!("new-{round}");
        let barrier = Arc::new(Barrier::new(2));
        let attempts = [Arc::clone(&a), Arc::clone(&b)].map(|store| {
            let barrier = Arc::clone(&barrier);
            let mut r = record("", &id, TaskState::Submitted, round);
            r.last_seq = 1;
            tokio::spawn(async move {
                barrier.wait().await;
                commit_as_task(store.as_ref(), &r).await
            })
        });
        let mut results = Vec::new();
        for attempt in attempts {
            results.push(attempt.await.unwrap());
        }
        assert_one_won(&results, 0, 1, &id);
        assert_eq!(seqs(&log_of(&*a, "", &id).await), vec![1]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_to_many_tasks_all_land() {
    let Some(replicas) = common::replicas_or_skip::<2>("concurrent_commits_to_many_tasks").await
    else {
        return;
    };
    let started = Instant::now();
    let mut writers = Vec::new();
    for w in 0..32 {
        let store = Arc::clone(&replicas[w % 2]);
        writers.push(tokio::spawn(async move {
            for t in 0..8 {
                commit_task(store.as_ref(), "", &format!("w{w:02}-t{t}"), 3).await;
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    eprintln!(
        "{} commits from 32 writers on 2 stores in {:?}",
        32 * 8 * 3,
        started.elapsed()
    );

    let page = replicas[0].list(&all_of("")).await.unwrap();
    assert_eq!(page.total, 32 * 8);
    for w in 0..32 {
        for t in 0..8 {
            let id = format!("w{w:02}-t{t}");
            let r = replicas[1].load("", &id).await.unwrap().unwrap();
            assert_eq!(r.last_seq, 3, "{id}");
            let log = replicas[0].events(EventQuery::new("", &id)).await.unwrap();
            assert_eq!(seqs(&log), vec![1, 2, 3], "{id}");
        }
    }
}

// ----------------------------------------------------------------------------
// Semantics that depend on PostgreSQL.

#[tokio::test]
async fn a_failing_commit_changes_nothing() {
    let Some(store) = common::fresh_store_or_skip("a_failing_commit_changes_nothing").await else {
        return;
    };
    // An event at sequence 0 is accepted once (the stored log is empty);
    // a second one collides with it in the log's primary key: a backend
    // error, and the snapshot written by the same statement is rolled back.
    let mut bad = record("", "bad", TaskState::Submitted, 0);
    commit_as_task(&store, &bad).await.unwrap();
    let before = store.load("", "bad").await.unwrap().unwrap();
    bad.task.status = TaskStatus::new(TaskState::Failed);
    let err = commit_as_task(&store, &bad).await.unwrap_err();
    match &err {
        StoreError::Backend(msg) => assert!(msg.contains("task bad"), "{msg}"),
        other => panic!("expected a backend error, got {other:?}"),
    }
    assert_eq!(store.load("", "bad").await.unwrap().unwrap(), before);
    // (`events` starts after a sequence number, so count event 0 directly.)
    let logged: i64 = sqlx::query_scalar("SELECT count(*) FROM task_events WHERE task_id = 'bad'")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(logged, 1);
    // The store is fine afterwards.
    commit_task(&store, "", "after", 2).await;
}

#[tokio::test]
async fn listing_orders_ids_by_bytes_whatever_the_database_collation() {
    let Some(_) = testing::fresh_database_or_skip("listing_orders_ids_by_bytes").await else {
        return;
    };
    let server = TestPostgres::shared().unwrap();
    // A database whose default collation is ICU's English, where "a" < "B"
    // and punctuation hardly counts, unlike byte order.
    let name = format!("icu_{}", std::process::id());
    let mut admin = sqlx::PgConnection::connect(&server.url()).await.unwrap();
    sqlx::query(AssertSqlSafe(format!(
        "CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' \
         LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
    let store = PgStore::open(&server.database_url(&name)).await.unwrap();
    let ids = ["a", "B", "b-2", "b2", "_x", "Z", "é"];
    for id in ids {
        let mut r = record("", id, TaskState::Working, 7);
        r.last_seq = 1;
        commit_as_task(&store, &r).await.unwrap();
    }
    let mut expected: Vec<&str> = ids.to_vec();
    expected.sort_by(|x, y| y.cmp(x));
    let mut seen = Vec::new();
    let mut q = all_of("");
    q.limit = 2;
    loop {
        let page = store.list(&q).await.unwrap();
        assert_eq!(page.total, ids.len() as u64);
        seen.extend(page.records.into_iter().map(|r| r.task.id));
        match page.next {
            Some(c) => q.after = Some(c),
            None => break,
        }
    }
    assert_eq!(
        seen, expected,
        "status ties are ordered by id bytes, descending"
    );
}

/// Retention deletes 500 tasks a statement, each statement resuming after
/// the last task the previous one deleted: across batch ends, and with
/// status-time ties broken by id, it deletes exactly the finished tasks
/// before the cutoff, then exactly the oldest beyond the count kept, with
/// their logs, and never an unfinished task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_purges_in_batches_exactly_the_oldest() {
    let Some(store) = common::fresh_store_or_skip("purges_in_batches").await else {
        return;
    };
    // 1,234 finished tasks, seven per status second (ties across batch
    // ends), and twenty unfinished ones among them.
    let mut writes = Vec::new();
    for i in 0..1254_i64 {
        let store = store.clone();
        writes.push(tokio::spawn(async move {
            let (id, state, secs) = if i < 1234 {
                (format!("done-{i:04}"), TaskState::Completed, i / 7)
            } else {
                (format!("open-{i:04}"), TaskState::Working, (i - 1234) * 9)
            };
            let mut r = record("", &id, state, secs);
            r.last_seq = 1;
            commit_as_task(&store, &r).await.unwrap();
        }));
    }
    for w in writes {
        w.await.unwrap();
    }
    let left = |state: &'static str| {
        let pool = store.pool().clone();
        async move {
            sqlx::query_scalar::<_, String>(
                "SELECT id FROM tasks WHERE state = $1 ORDER BY status_micros, id COLLATE \"C\"",
            )
            .bind(state)
            .fetch_all(&pool)
            .await
            .unwrap()
        }
    };
    let logs = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM task_events")
            .fetch_one(store.pool())
            .await
            .unwrap()
    };
    let now = Utc.timestamp_opt(1_800_000_100, 0).single().unwrap();

    // Status times are 1_800_000_000 + secs + 0.123456789: before the cutoff
    // (now - 50 s) are seconds 0..=49, i.e. tasks 0..350.
    let by_age = Retention {
        max_age: Some(Duration::from_secs(50)),
        max_finished: None,
    };
    assert_eq!(store.purge(&by_age, now).await.unwrap(), 350);
    let done = left("TASK_STATE_COMPLETED").await;
    assert_eq!(done.len(), 884);
    assert_eq!(done.first().map(String::as_str), Some("done-0350"));

    let by_count = Retention {
        max_age: None,
        max_finished: Some(100),
    };
    assert_eq!(store.purge(&by_count, now).await.unwrap(), 784);
    let expected: Vec<String> = (1134..1234).map(|i| format!("done-{i:04}")).collect();
    assert_eq!(left("TASK_STATE_COMPLETED").await, expected);
    assert_eq!(
        left("TASK_STATE_WORKING").await.len(),
        20,
        "unfinished stay"
    );
    assert_eq!(
        logs().await,
        120,
        "one event each left, the purged logs gone"
    );
    assert_eq!(store.purge(&by_count, now).await.unwrap(), 0, "idempotent");
}

/// Retention vacuums (and analyzes) the tables it deleted from once it has
/// deleted `vacuum_after_purged` tasks since the last time, counting across
/// purges, and not before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_vacuums_what_it_deleted() {
    let vacuum_after_100 = PgOptions {
        vacuum_after_purged: 100,
        ..PgOptions::default()
    };
    let Some(store) =
        common::fresh_store_with_or_skip("vacuums_what_it_deleted", vacuum_after_100).await
    else {
        return;
    };
    // Manual vacuums of each table, as PostgreSQL counts them (and the
    // manual analyzes, which must be as many).
    let vacuums = || async {
        let counts = sqlx::query_as::<_, (String, i64, i64)>(
            "SELECT relname::text, vacuum_count, analyze_count FROM pg_stat_user_tables \
             WHERE relname IN ('tasks', 'task_events') ORDER BY relname",
        )
        .fetch_all(store.pool())
        .await
        .unwrap();
        for (table, vacuumed, analyzed) in &counts {
            assert_eq!(vacuumed, analyzed, "{table}: each vacuum analyzes");
        }
        counts
            .into_iter()
            .map(|(table, vacuumed, _)| (table, vacuumed))
            .collect::<Vec<_>>()
    };
    let mut next = 0_i64;
    let mut finish = |n: i64| {
        let (store, from) = (store.clone(), next);
        next += n;
        async move {
            for i in from..from + n {
                let mut r = record("", &format!("done-{i:04}"), TaskState::Completed, i);
                r.last_seq = 1;
                commit_as_task(&store, &r).await.unwrap();
            }
        }
    };
    let keep_ten = Retention {
        max_age: None,
        max_finished: Some(10),
    };
    let now = Utc.timestamp_opt(1_800_000_000, 0).single().unwrap();
    let vacuumed = |n: i64| vec![("task_events".to_string(), n), ("tasks".to_string(), n)];
    assert_eq!(vacuums().await, vacuumed(0));
    // (tasks finished, then purged (all but ten), vacuums of each table so far)
    for (finished, purged, vacuums_so_far, why) in [
        (70, 60, 0, "60 deleted: under the 100"),
        (50, 50, 1, "110 deleted since the start"),
        (90, 90, 1, "90 since that vacuum"),
        (10, 10, 2, "100 since that vacuum"),
    ] {
        finish(finished).await;
        assert_eq!(store.purge(&keep_ten, now).await.unwrap(), purged, "{why}");
        assert_eq!(vacuums().await, vacuumed(vacuums_so_far), "{why}");
    }
}

#[tokio::test]
async fn status_after_is_exact_below_a_microsecond() {
    let Some(store) = common::fresh_store_or_skip("status_after_is_exact").await else {
        return;
    };
    conformance::status_after_is_exact_below_a_microsecond(&store).await;
}

#[tokio::test]
async fn awkward_content_round_trips() {
    let Some(store) = common::fresh_store_or_skip("awkward_content_round_trips").await else {
        return;
    };
    let mut r = record(
        "tenant with spaces/ünïcode",
        "awkward",
        TaskState::Working,
        1,
    );
    r.owner = "o'brien \"quoted\"".into();
    // A NUL character (json keeps the \u0000 escape; jsonb would refuse it),
    // big and fractional numbers, and a status time before 1970.
    r.task
        .history
        .as_mut()
        .unwrap()
        .push(Message::user_text("nul:\u{0} emoji:🦀 backslash:\\").with_task_id("awkward"));
    r.task.artifacts = Some(vec![
        switchboard_protocol::Artifact::new(vec![Part::data(serde_json::json!({
            "big": u64::MAX, "neg": i64::MIN, "pi": std::f64::consts::PI,
            "tiny": 1e-7, "nested": {"z": 1, "a": [true, null]}
        }))])
        .with_id("art"),
    ]);
    let old = Utc.timestamp_opt(-86_400, 999_999_999).single().unwrap();
    r.task.status.timestamp = Some(old);
    r.created_at = old;
    r.last_seq = 1;
    commit_as_task(&store, &r).await.unwrap();
    assert_eq!(store.load(&r.tenant, "awkward").await.unwrap().unwrap(), r);
    let log = log_of(&store, &r.tenant, "awkward").await;
    assert_eq!(log[0].event, StreamResponse::Task(r.task.clone()));
    assert!(
        store
            .events(
                EventQuery::new(&r.tenant, "awkward")
                    .after(u64::MAX)
                    .limit(10)
            )
            .await
            .unwrap()
            .is_empty()
    );
    let mut q = all_of(&r.tenant);
    q.owner = r.owner.clone();
    let page = store.list(&q).await.unwrap();
    assert_eq!(page.records, vec![r]);
}

#[tokio::test]
async fn an_empty_page_after_the_last_cursor_still_has_the_total() {
    let Some(store) = common::fresh_store_or_skip("empty_page_total").await else {
        return;
    };
    commit_task(&store, "", "only", 1).await;
    let mut q = all_of("");
    q.after = Some(switchboard_core::ListCursor {
        status_micros: i64::MIN,
        task_id: String::new(),
    });
    let page = store.list(&q).await.unwrap();
    assert!(page.records.is_empty());
    assert!(page.next.is_none());
    assert_eq!(page.total, 1);
    let empty = store.list(&all_of("nobody-here")).await.unwrap();
    assert_eq!((empty.records.len(), empty.total), (0, 0));
}

// ----------------------------------------------------------------------------
// Errors when opening.

/// `open` and friends are `Send` futures, so a server can open its store
/// inside `tokio::spawn` (checked at compile time; never called).
#[allow(dead_code)]
fn opening_can_be_spawned(pool: sqlx::PgPool) {
    fn assert_send<T: Send>(_: T) {}
    assert_send(PgStore::open("postgres://localhost/db"));
    assert_send(PgStore::open_with(
        "postgres://localhost/db",
        PgOptions::default(),
    ));
    assert_send(PgStore::from_pool(pool));
}

fn assert_backend(err: &StoreError, needles: &[&str]) {
    match err {
        StoreError::Backend(msg) => {
            for needle in needles {
                assert!(msg.contains(needle), "{msg:?} should mention {needle:?}");
            }
            assert!(!msg.contains("hunter2"), "the password leaked: {msg}");
        }
        other => panic!("expected a backend error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_bad_url_is_a_clear_error() {
    let err = PgStore::open("mysql://u:hunter2@localhost/db")
        .await
        .unwrap_err();
    assert_backend(&err, &["invalid PostgreSQL URL", "postgres://"]);
    let err = PgStore::open("postgres://u:hunter2@localhost:notaport/db")
        .await
        .unwrap_err();
    assert_backend(&err, &["invalid PostgreSQL URL", "u:***@localhost"]);
    let err = PgStore::open("").await.unwrap_err();
    assert_backend(&err, &["invalid PostgreSQL URL"]);
}

/// The error `open` fails with, which must come within 3 s.
async fn fails_within_3s(
    open: impl std::future::Future<Output = Result<PgStore, StoreError>>,
) -> StoreError {
    let started = Instant::now();
    let err = open.await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "failed after {:?}",
        started.elapsed()
    );
    err
}

#[tokio::test]
async fn a_refused_connection_fails_fast() {
    // A port nobody listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://u:hunter2@127.0.0.1:{port}/db");
    let err = fails_within_3s(PgStore::open(&url)).await;
    assert_backend(
        &err,
        &["connecting to PostgreSQL", &format!("127.0.0.1:{port}")],
    );
}

#[tokio::test]
async fn an_unreachable_host_fails_within_the_connect_timeout() {
    // 192.0.2.0/24 is TEST-NET-1: never routed, so packets vanish (or the
    // network says unreachable at once).
    let options = PgOptions {
        connect_timeout: Duration::from_millis(500),
        ..Default::default()
    };
    // Bounded by the timeout.
    let err = fails_within_3s(PgStore::open_with(
        "postgres://u:hunter2@192.0.2.1:5432/db",
        options,
    ))
    .await;
    assert_backend(&err, &["connecting to PostgreSQL", "192.0.2.1"]);
}

#[tokio::test]
async fn a_missing_database_is_a_clear_error() {
    let Some(url) = testing::fresh_database_or_skip("a_missing_database").await else {
        return;
    };
    let missing = format!("{}_missing", url);
    let err = PgStore::open(&missing).await.unwrap_err();
    assert_backend(&err, &["connecting to PostgreSQL", "does not exist"]);
}

// ----------------------------------------------------------------------------
// The harness.

#[test]
fn the_harness_starts_a_server_and_removes_it_on_drop() {
    let started = Instant::now();
    let Some(server) = testing::start_or_skip("the_harness_starts_a_server") else {
        return;
    };
    eprintln!("test server up in {:?}", started.elapsed());
    let dir = server.dir().to_path_buf();
    let port = server.port();
    assert!(dir.join("data").join("PG_VERSION").is_file());
    assert!(server.url().contains(&format!(":{port}/")));
    std::net::TcpStream::connect(("127.0.0.1", port)).expect("the server listens");

    let stopping = Instant::now();
    drop(server);
    eprintln!(
        "test server stopped and removed in {:?}",
        stopping.elapsed()
    );
    assert!(!dir.exists(), "{} is removed", dir.display());
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the server is stopped"
    );
}
