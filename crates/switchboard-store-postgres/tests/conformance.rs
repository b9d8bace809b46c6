//! The shared conformance suites, `TaskStore`'s and `PushStore`'s, run
//! against a real PostgreSQL server, each on a store on a fresh database of
//! this test binary's private server (see
//! `switchboard_store_postgres::testing`): with the default options, with one
//! connection, one group-commit writer (asked for as 0, which means 1) and
//! asynchronous commit, and (the task suite) on a pool handed in.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;

use switchboard_core::{push, store};
use switchboard_store_postgres::{PgOptions, PgStore, testing};

/// Runs both suites, each on a store that `open` makes on a fresh database
/// for the test `test`; returns early (skipped) without PostgreSQL.
async fn conforms<F, Fut>(test: &str, open: F)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = PgStore>,
{
    let Some(url) = testing::fresh_database_or_skip(test).await else {
        return;
    };
    let tasks = open(url).await;
    store::conformance::run_all(&tasks).await;
    tasks.close().await;
    let url = testing::fresh_database_or_skip(test).await.unwrap();
    let outbox = open(url).await;
    push::conformance::run_all(&outbox).await;
    outbox.close().await;
}

#[tokio::test]
async fn conforms_with_default_options() {
    conforms("conforms", |url| async move {
        PgStore::open(&url).await.unwrap()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms_with_one_connection_one_writer_and_asynchronous_commit() {
    let options = PgOptions {
        max_connections: 1,
        commit_writers: 0,
        synchronous_commit: false,
        ..Default::default()
    };
    conforms("conforms_with_one_connection", |url| {
        let options = options.clone();
        async move { PgStore::open_with(&url, options).await.unwrap() }
    })
    .await;
}

#[tokio::test]
async fn conforms_on_a_shared_pool() {
    let Some(url) = testing::fresh_database_or_skip("conforms_on_a_shared_pool").await else {
        return;
    };
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let store = PgStore::from_pool(pool.clone()).await.unwrap();
    store::conformance::run_all(&store).await;
    // The pool is the one handed in.
    let tasks: i64 = sqlx::query_scalar("SELECT count(*) FROM tasks")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert!(tasks > 0);
}

/// The storage quota case, with the default options (commits go through
/// the group-commit writers; one at a time, each is decided on what the
/// owner holds, exactly as the other stores decide it).
#[tokio::test]
async fn keeps_the_storage_quota() {
    use switchboard_core::store::quota::StorageQuota;
    let Some(url) = testing::fresh_database_or_skip("keeps_the_storage_quota").await else {
        return;
    };
    let options = PgOptions {
        storage_quota: StorageQuota::per_owner(store::conformance::QUOTA_BYTES),
        ..Default::default()
    };
    let store = PgStore::open_with(&url, options).await.unwrap();
    store::conformance::storage_quota_is_per_owner(&store).await;
    store.close().await;
}
