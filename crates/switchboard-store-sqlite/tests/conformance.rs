//! The shared conformance suites, `TaskStore`'s and `PushStore`'s, each on a
//! fresh store of every configuration: a real database file (with the
//! default options, and with `synchronous = NORMAL` on one connection), the
//! in-memory database, and a file on a multi-threaded runtime.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::path::Path;

use switchboard_core::{push, store};
use switchboard_store_sqlite::{SqliteOptions, SqliteStore};

/// Runs both suites, each on a fresh store that `open` makes for a database
/// file name.
async fn conforms<F, Fut>(open: F)
where
    F: Fn(&'static str) -> Fut,
    Fut: Future<Output = SqliteStore>,
{
    let tasks = open("tasks.db").await;
    store::conformance::run_all(&tasks).await;
    tasks.close().await;
    let outbox = open("push.db").await;
    push::conformance::run_all(&outbox).await;
    outbox.close().await;
}

/// Opens database `file` in `dir` with `options`, by a URL with `scheme`
/// (`sqlite://`, `sqlite:`) or, when `scheme` is empty, by its plain path.
async fn open_in(dir: &Path, scheme: &str, file: &str, options: SqliteOptions) -> SqliteStore {
    let url = format!("{scheme}{}", dir.join(file).display());
    SqliteStore::open_with(&url, options).await.unwrap()
}

#[tokio::test]
async fn conforms_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    conforms(|file| open_in(dir.path(), "", file, SqliteOptions::default())).await;
}

#[tokio::test]
async fn conforms_on_a_file_with_synchronous_normal() {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        synchronous_full: false,
        max_connections: 1,
        ..Default::default()
    };
    conforms(|file| open_in(dir.path(), "sqlite://", file, options.clone())).await;
}

#[tokio::test]
async fn conforms_in_memory() {
    conforms(|_| async { SqliteStore::open_in_memory().await.unwrap() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms_on_a_multi_threaded_runtime() {
    let dir = tempfile::tempdir().unwrap();
    conforms(|file| open_in(dir.path(), "sqlite:", file, SqliteOptions::default())).await;
}

/// The storage quota case, on a file and in memory (one commit at a time:
/// the one-round-trip path).
#[tokio::test]
async fn keeps_the_storage_quota() {
    use switchboard_core::store::quota::StorageQuota;
    let quota = StorageQuota::per_owner(store::conformance::QUOTA_BYTES);
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        storage_quota: quota,
        ..Default::default()
    };
    let on_file = open_in(dir.path(), "", "quota.db", options).await;
    store::conformance::storage_quota_is_per_owner(&on_file).await;
    on_file.close().await;
    let in_memory = SqliteStore::open_in_memory_with(quota).await.unwrap();
    store::conformance::storage_quota_is_per_owner(&in_memory).await;
}
