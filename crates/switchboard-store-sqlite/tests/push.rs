//! The outbox on SQLite beyond the shared `PushStore` conformance suite
//! (which `conformance.rs` runs): what only a durable store can show,
//! notifications queued by group commits and by lone commits alike, and the
//! outbox surviving a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use switchboard_core::TaskStore;
use switchboard_core::push::{PushConfig, PushStore, conformance};
use switchboard_core::store::conformance::fixtures::working_record as record;
use switchboard_protocol::StreamResponse;
use switchboard_store_sqlite::SqliteStore;

fn hook(task: &str) -> PushConfig {
    PushConfig {
        tenant: String::new(),
        task_id: task.into(),
        id: "h".into(),
        url: "https://hooks.example.com/x".into(),
        token: None,
        authentication: None,
        payload_kind: switchboard_core::push::PayloadKind::Event,
        hidden_metadata_keys: Vec::new(),
    }
}

/// Many tasks committing at once go through the group-commit path; every
/// event of every task with a config is queued exactly once, and the outbox
/// is still there after the store is closed and reopened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_commits_queue_and_the_outbox_survives_reopen() {
    let (_dir, path) = common::temp_db("group.db");
    let store = Arc::new(SqliteStore::open(&path).await.unwrap());
    let tasks: Vec<String> = (0..40).map(|i| format!("g{i}")).collect();
    for t in &tasks {
        store.put_config(&hook(t), 10).await.unwrap();
    }
    let mut joins = Vec::new();
    for t in tasks.clone() {
        let store = store.clone();
        joins.push(tokio::spawn(async move {
            for seq in 1..=5 {
                let r = record(&t, seq);
                store
                    .commit(&r, Some(&StreamResponse::Task(r.task.clone())))
                    .await
                    .unwrap();
            }
        }));
    }
    for j in joins {
        j.await.unwrap();
    }
    assert_eq!(store.pending_count().await.unwrap(), 200);
    let store = Arc::try_unwrap(store).unwrap();
    store.close().await;

    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(
        store.pending_count().await.unwrap(),
        200,
        "the outbox is durable"
    );
    let mut seen = std::collections::HashMap::<String, Vec<u64>>::new();
    for i in conformance::drain(&store).await {
        seen.entry(i.task_id).or_default().push(i.seq);
    }
    assert_eq!(seen.len(), 40);
    for (t, seqs) in seen {
        assert_eq!(seqs, vec![1, 2, 3, 4, 5], "task {t} in order, once each");
    }
}
