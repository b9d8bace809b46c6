//! The storage quota on PostgreSQL (see the crate docs, "Storage quota"):
//! concurrent commits of owners in group commits on two replicas, the
//! per-owner counts against a recount of the stored JSON after commits and
//! after retention, and the counts a migrated database starts with.
//!
//! The shared case, `storage_quota_is_per_owner`, runs in `conformance.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::Utc;
use sqlx::{Connection, PgConnection, PgPool};
use switchboard_core::store::conformance::fixtures::{commit_as_task, record};
use switchboard_core::store::conformance::status_event;
use switchboard_core::store::quota::{StorageQuota, json_bytes};
use switchboard_core::{Retention, StoreError, TaskRecord, TaskStore};
use switchboard_protocol::{Message, StreamResponse, TaskState, TaskStatus};
use switchboard_store_postgres::{PgOptions, PgStore, testing};

/// Per (tenant, owner): the bytes `storage_usage` counts, and a recount of
/// the snapshots' and logs' JSON as stored.
async fn counts(pool: &PgPool) -> BTreeMap<(String, String), (i64, i64)> {
    let rows: Vec<(String, String, i64, i64)> = sqlx::query_as(
        "SELECT COALESCE(u.tenant, s.tenant), COALESCE(u.owner, s.owner), \
             COALESCE(u.bytes, 0)::bigint, COALESCE(s.bytes, 0)::bigint \
         FROM (SELECT tenant, owner, sum(bytes) AS bytes FROM storage_usage \
               GROUP BY tenant, owner) AS u FULL JOIN ( \
             SELECT t.tenant, t.owner, sum(octet_length(t.task_json::text) \
                 + COALESCE((SELECT sum(octet_length(e.event_json::text)) \
                             FROM task_events AS e \
                             WHERE e.tenant = t.tenant AND e.task_id = t.id), 0)) AS bytes \
             FROM tasks AS t GROUP BY t.tenant, t.owner) AS s \
         ON s.tenant = u.tenant AND s.owner = u.owner",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    rows.into_iter()
        .map(|(tenant, owner, counted, stored)| ((tenant, owner), (counted, stored)))
        .collect()
}

/// Asserts that every owner's count equals the recount; returns the
/// counts by owner.
async fn counted_as_stored(pool: &PgPool) -> BTreeMap<String, i64> {
    let mut by_owner = BTreeMap::new();
    for ((_, owner), (counted, stored)) in counts(pool).await {
        assert_eq!(counted, stored, "{owner}: counted vs. stored");
        by_owner.insert(owner, counted);
    }
    by_owner
}

/// Task `id` of `owner`, working, whose snapshot holds about 2 KB.
fn task_of(owner: &str, id: &str) -> TaskRecord {
    let mut r = record("", id, TaskState::Working, 0);
    r.owner = owner.into();
    r.task.history = Some(vec![Message::user_text("z".repeat(1000))]);
    r.last_seq = 1;
    r
}

/// The bytes a task of [`task_of`] holds once committed as its own first
/// event: its snapshot and that event.
fn task_bytes() -> u64 {
    let task = task_of("alice", "q00").task;
    json_bytes(&task) + json_bytes(&StreamResponse::Task(task))
}

/// Finishes every task of `store` that `ids` names and is stored.
async fn finish(store: &PgStore, ids: impl Iterator<Item = String>) {
    for id in ids {
        if let Some(mut r) = store.load("", &id).await.unwrap() {
            r.task.status = TaskStatus::new(TaskState::Completed);
            r.last_seq += 1;
            store.commit(&r, Some(&status_event(&r))).await.unwrap();
        }
    }
}

/// Concurrent commits of two owners, through two replicas' group-commit
/// writers, meet in group statements and on several connections. Each is
/// decided on the count as its statement begins, with the earlier commits
/// of its owner in the same statement: at least as many of alice's tasks as
/// fit are written (no refusal without a full count), each refusal is
/// alice's and writes nothing, bob (under his quota) is never held back,
/// alice passes her quota by at most what the other statements running at
/// once added (one per writer: 2 per replica), and the counts always equal
/// a recount of what is stored, down to nothing after retention.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_storage_quota_holds_in_group_commits() {
    let Some(url) = testing::fresh_database_or_skip("quota_in_group_commits").await else {
        return;
    };
    let size = task_bytes();
    let fits = 10 * size + size / 2;
    let options = PgOptions {
        storage_quota: StorageQuota::per_owner(fits),
        ..Default::default()
    };
    let writers = options.commit_writers;
    let replicas = [
        Arc::new(PgStore::open_with(&url, options.clone()).await.unwrap()),
        Arc::new(PgStore::open_with(&url, options).await.unwrap()),
    ];
    let mut commits = Vec::new();
    for k in 0..40 {
        let store = replicas[k % 2].clone();
        // Four of every five are alice's; bob's eight all fit.
        let owner = if k % 5 == 4 { "bob" } else { "alice" };
        commits.push(tokio::spawn(async move {
            let r = task_of(owner, &format!("q{k:02}"));
            (owner, commit_as_task(store.as_ref(), &r).await)
        }));
    }
    let mut written = BTreeMap::<&str, usize>::new();
    for c in commits {
        let (owner, result) = c.await.unwrap();
        match result {
            Ok(()) => *written.entry(owner).or_default() += 1,
            Err(StoreError::QuotaExceeded(why)) => {
                assert_eq!(owner, "alice", "{why}");
                assert!(why.contains("\"alice\""), "{why}");
            }
            Err(e) => panic!("{owner}: {e:?}"),
        }
    }
    let statements_at_once = 2 * writers;
    assert!(
        (10..=10 * statements_at_once).contains(&written["alice"]),
        "{written:?}"
    );
    assert!(
        written["alice"] < 32,
        "some of alice's were refused: {written:?}"
    );
    assert_eq!(written["bob"], 8, "{written:?}");
    let pool = replicas[0].pool();
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM tasks")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(
        stored as usize,
        written["alice"] + written["bob"],
        "the refused commits wrote nothing"
    );
    let held = counted_as_stored(pool).await;
    assert_eq!(
        held["alice"],
        (written["alice"] as u64 * size) as i64,
        "{held:?}"
    );

    // Now that nothing races, alice is refused another task.
    let refused = commit_as_task(replicas[1].as_ref(), &task_of("alice", "late")).await;
    assert!(
        matches!(refused, Err(StoreError::QuotaExceeded(_))),
        "{refused:?}"
    );

    // Finishing is never refused, however full; retention then gives
    // everything back.
    finish(&replicas[1], (0..40).map(|k| format!("q{k:02}"))).await;
    let after_finishing = counted_as_stored(pool).await;
    assert!(
        after_finishing["alice"] > held["alice"],
        "{after_finishing:?}"
    );
    let retention = Retention {
        max_age: None,
        max_finished: Some(0),
    };
    assert_eq!(
        replicas[0].purge(&retention, Utc::now()).await.unwrap() as i64,
        stored
    );
    let held = counted_as_stored(pool).await;
    assert_eq!((held["alice"], held["bob"]), (0, 0));
}

/// Retention takes each purged task's snapshot and whole log off its
/// owner (the log's rows go in the purge's statement; the task row carries
/// their size), leaving the count of what stays exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_gives_the_bytes_back() {
    let Some(store) = common::fresh_store_or_skip("quota_retention").await else {
        return;
    };
    // Ten tasks each of alice and bob, with logs of one to four events;
    // the first six of each finish.
    for owner in ["alice", "bob"] {
        for k in 0..10_u64 {
            let id = format!("{owner}-{k}");
            let mut r = task_of(owner, &id);
            commit_as_task(&store, &r).await.unwrap();
            for _ in 0..k % 4 {
                r.last_seq += 1;
                store.commit(&r, Some(&status_event(&r))).await.unwrap();
            }
        }
        finish(&store, (0..6).map(|k| format!("{owner}-{k}"))).await;
    }
    let before = counted_as_stored(store.pool()).await;

    let retention = Retention {
        max_age: None,
        max_finished: Some(4),
    };
    assert_eq!(store.purge(&retention, Utc::now()).await.unwrap(), 8);
    let after = counted_as_stored(store.pool()).await;
    for owner in ["alice", "bob"] {
        assert!(
            0 < after[owner] && after[owner] < before[owner],
            "{owner}: {before:?} → {after:?}"
        );
    }
    // The recount reads the logs of the tasks that stay; the purged ones'
    // are gone, not left behind uncounted.
    let orphans: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM task_events AS e WHERE NOT EXISTS \
             (SELECT 1 FROM tasks AS t WHERE t.tenant = e.tenant AND t.id = e.task_id)",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(orphans, 0);
}

/// A database written before the counts existed gets them from its rows
/// when migrated (each task's sizes, each owner's sum), and the quota
/// counts them at once.
#[tokio::test]
async fn a_migrated_database_counts_what_it_already_holds() {
    let Some(url) = testing::fresh_database_or_skip("quota_migrated").await else {
        return;
    };
    // The schema before the counts (migration 13), and rows as a store of
    // that version wrote them: alice's task with a log of two events, and
    // bob's without a log.
    let mut conn = PgConnection::connect(&url).await.unwrap();
    sqlx::migrate!("./migrations")
        .run_direct(Some(13), &mut conn, false)
        .await
        .unwrap();
    let filler = "y".repeat(3000);
    sqlx::query(
        "INSERT INTO tasks (tenant, id, context_id, owner, state, status_micros, \
             status_subus_nanos, created_micros, created_subus_nanos, last_seq, task_json) \
         VALUES ('', 'old-a', 'c', 'alice', 'TASK_STATE_WORKING', 1, 0, 1, 0, 2, \
                 json_build_object('id', 'old-a', 'note', $1::text)), \
                ('', 'old-b', 'c', 'bob', 'TASK_STATE_WORKING', 1, 0, 1, 0, 0, '{\"id\": \"old-b\"}')",
    )
    .bind(&filler)
    .execute(&mut conn)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO task_events (tenant, task_id, seq, event_json) \
         VALUES ('', 'old-a', 1, json_build_object('n', $1::text)), ('', 'old-a', 2, '{}')",
    )
    .bind(&filler)
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();

    // Just above what alice holds now: one more task does not fit.
    let store = PgStore::open_with(
        &url,
        PgOptions {
            storage_quota: StorageQuota::per_owner(6200),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let held = counted_as_stored(store.pool()).await;
    assert!((6000..6200).contains(&held["alice"]), "{held:?}");
    assert!(held["bob"] > 0, "{held:?}");
    let refused = commit_as_task(&store, &task_of("alice", "new")).await;
    assert!(
        matches!(refused, Err(StoreError::QuotaExceeded(_))),
        "{refused:?}"
    );
    commit_as_task(&store, &task_of("bob", "new"))
        .await
        .unwrap();
    counted_as_stored(store.pool()).await;
}
