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

/// `file` in `dir` as a URL with `scheme` (`sqlite://` or `sqlite:`), or a
/// plain path when `scheme` is empty.
fn url(scheme: &str, dir: &Path, file: &str) -> String {
    format!("{scheme}{}", dir.join(file).display())
}

#[tokio::test]
async fn conforms_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    conforms(|file| {
        let path = url("", dir.path(), file);
        async move { SqliteStore::open(&path).await.unwrap() }
    })
    .await;
}

#[tokio::test]
async fn conforms_on_a_file_with_synchronous_normal() {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        synchronous_full: false,
        max_connections: 1,
        ..Default::default()
    };
    conforms(|file| {
        let (url, options) = (url("sqlite://", dir.path(), file), options.clone());
        async move { SqliteStore::open_with(&url, options).await.unwrap() }
    })
    .await;
}

#[tokio::test]
async fn conforms_in_memory() {
    conforms(|_| async { SqliteStore::open_in_memory().await.unwrap() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conforms_on_a_multi_threaded_runtime() {
    let dir = tempfile::tempdir().unwrap();
    conforms(|file| {
        let url = url("sqlite:", dir.path(), file);
        async move { SqliteStore::open(&url).await.unwrap() }
    })
    .await;
}
