//! The shared `TaskStore` conformance suite, run against a real PostgreSQL
//! server (a fresh database on this test binary's private server; see
//! `switchboard_store_postgres::testing`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use switchboard_core::store::conformance;
use switchboard_store_postgres::{PgOptions, PgStore, testing};

#[tokio::test]
async fn conforms() {
    let Some(store) = common::fresh_store_or_skip("conforms").await else {
        return;
    };
    conformance::run_all(&store).await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms_with_one_connection_and_asynchronous_commit() {
    let Some(url) = testing::fresh_database_or_skip("conforms_with_one_connection").await else {
        return;
    };
    let options = PgOptions {
        max_connections: 1,
        synchronous_commit: false,
        ..Default::default()
    };
    let store = PgStore::open_with(&url, options).await.unwrap();
    conformance::run_all(&store).await;
}

#[tokio::test]
async fn conforms_on_a_shared_pool() {
    let Some(url) = testing::fresh_database_or_skip("conforms_on_a_shared_pool").await else {
        return;
    };
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let store = PgStore::from_pool(pool.clone()).await.unwrap();
    conformance::run_all(&store).await;
    // The pool is the one handed in.
    let tasks: i64 = sqlx::query_scalar("SELECT count(*) FROM tasks")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert!(tasks > 0);
}
