//! The shared `TaskStore` conformance suite, run against a real database
//! file and against the in-memory database.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use switchboard_core::store::conformance;
use switchboard_store_sqlite::{SqliteOptions, SqliteStore};

#[tokio::test]
async fn conforms_on_a_file() {
    let (_dir, store) = common::open_temp("tasks.db").await;
    conformance::run_all(&store).await;
    store.close().await;
}

#[tokio::test]
async fn conforms_on_a_file_with_synchronous_normal() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let options = SqliteOptions {
        synchronous_full: false,
        max_connections: 1,
        ..Default::default()
    };
    let store = SqliteStore::open_with(&url, options).await.unwrap();
    conformance::run_all(&store).await;
}

#[tokio::test]
async fn conforms_in_memory() {
    let store = SqliteStore::open_in_memory().await.unwrap();
    conformance::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms_on_a_multi_threaded_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("tasks.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    conformance::run_all(&store).await;
}
