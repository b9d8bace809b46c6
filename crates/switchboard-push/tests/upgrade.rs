//! Databases written by `main` at 6e63c50 (push configs keyed by protocol
//! version, schema version 5), opened by this code: every queued
//! notification, dead letters included, goes out byte for byte as the old
//! worker sent it (0.3 configs the 0.3 `Task`, 1.0 configs the event), and
//! events committed after the upgrade still reach each webhook in the form
//! its config asked for. Fixtures and how they were made:
//! `tests/fixtures/upgrade-6e63c50/README.md`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use common::Receiver;
use switchboard_core::push::{PayloadKind, PushStore};
use switchboard_core::{TaskRecord, TaskStore};
use switchboard_protocol::{StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
use switchboard_push::{KeySet, NotificationClaims, PushOptions, PushWorker, RetryPolicy};
use switchboard_store_postgres::{PgStore, testing};
use switchboard_store_sqlite::SqliteStore;
use tokio_util::sync::CancellationToken;

const SQLITE_FIXTURE: &[u8] =
    include_bytes!("../../switchboard-store-sqlite/tests/fixtures/main-6e63c50.sqlite");
const POSTGRES_FIXTURE: &str =
    include_str!("../../switchboard-store-postgres/tests/fixtures/main-6e63c50.sql");
/// `"<task>/<config>/<seq>"` → the body the old worker sent.
const OLD_DELIVERIES: &str = include_str!("fixtures/upgrade-6e63c50/deliveries.json");

/// The fixtures' configs: (tenant, task, config, what it gets).
const CONFIGS: [(&str, &str, &str, PayloadKind); 5] = [
    ("", "upgrade-task", "hook-10", PayloadKind::Event),
    ("", "upgrade-task", "hook-03", PayloadKind::TaskSnapshot),
    (
        "",
        "upgrade-task",
        "hook-03-hidden",
        PayloadKind::TaskSnapshot,
    ),
    ("acme", "acme-task", "acme-03", PayloadKind::TaskSnapshot),
    ("acme", "acme-task", "acme-10", PayloadKind::Event),
];

type Bodies = BTreeMap<String, String>;

/// Runs a worker on `store` until `n` more notifications arrived at `rx`,
/// then returns everything `rx` accepted, keyed like the old deliveries.
async fn deliver(store: Arc<dyn PushStore>, rx: &Receiver, n: usize) -> Bodies {
    let mut o = PushOptions::new("http://agent.test", Arc::new(KeySet::generate().unwrap()));
    o.ssrf.allow_hosts = vec!["127.0.0.1".into()];
    o.poll_interval = Duration::from_millis(50);
    o.retry = RetryPolicy {
        base: Duration::from_millis(20),
        max: Duration::from_millis(200),
        max_attempts: 1000,
    };
    let before = rx.accepted().len();
    let worker = PushWorker::spawn(store, o, CancellationToken::new()).unwrap();
    let got = rx.wait_for(before + n, 30).await;
    worker.stop().await;
    let mut bodies = Bodies::new();
    for r in got {
        let jwt = r.header("x-a2a-notification-signature").unwrap();
        let claims = jwt.split('.').nth(1).unwrap();
        let claims: NotificationClaims = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(claims)
                .unwrap(),
        )
        .unwrap();
        let key = format!("{}/{}/{}", claims.task_id, claims.config_id, claims.seq);
        let body = String::from_utf8(r.body.to_vec()).unwrap();
        assert!(bodies.insert(key.clone(), body).is_none(), "{key} twice");
    }
    bodies
}

/// The whole check on an upgraded store.
async fn delivers_as_before<S: TaskStore + PushStore>(store: Arc<S>) {
    // The configs kept their kind; point them at a local receiver (the
    // delivery target is read from the config at claim time).
    let rx = Receiver::start().await;
    for (tenant, task, id, kind) in CONFIGS {
        let mut c = store.get_config(tenant, task, id).await.unwrap().unwrap();
        assert_eq!(c.payload_kind, kind, "config {id}");
        c.url = rx.url();
        store.put_config(&c, 10).await.unwrap();
    }
    let dead = store.list_dead_letters("", None, 10).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(
        (
            dead[0].config_id.as_str(),
            dead[0].seq,
            dead[0].payload_kind
        ),
        ("hook-03", 1, PayloadKind::TaskSnapshot)
    );
    store.requeue_dead_letter("", dead[0].id).await.unwrap();

    // Everything queued before the upgrade: the same bytes as then.
    let old: Bodies = serde_json::from_str(OLD_DELIVERIES).unwrap();
    let tasks = old.values().filter(|b| b.starts_with(r#"{"kind":"task""#));
    assert_eq!(
        (old.len(), tasks.count()),
        (20, 12),
        "both forms are covered"
    );
    let got = deliver(store.clone(), &rx, old.len()).await;
    assert_eq!(got.len(), old.len());
    for (key, body) in &old {
        assert_eq!(got.get(key), Some(body), "{key}");
    }

    // A new event after the upgrade, queued by the new trigger.
    let mut record: TaskRecord = store.load("", "upgrade-task").await.unwrap().unwrap();
    record.last_seq += 1;
    record.task.status = TaskStatus::new(TaskState::Completed);
    let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: record.task.id.clone(),
        context_id: record.task.context_id.clone(),
        status: record.task.status.clone(),
        metadata: None,
    });
    store.commit(&record, Some(&event)).await.unwrap();
    let got = deliver(store.clone(), &rx, 3).await;
    let body = |config: &str| -> serde_json::Value {
        serde_json::from_str(&got[&format!("upgrade-task/{config}/5")]).unwrap()
    };
    for config in ["hook-03", "hook-03-hidden"] {
        let task = body(config);
        assert_eq!(task["kind"], "task", "{config}: the 0.3 Task, {task}");
        assert_eq!(task["id"], "upgrade-task");
        assert_eq!(task["status"]["state"], "completed");
        assert_eq!(task["artifacts"][0]["artifactId"], "out", "the whole task");
    }
    assert_eq!(
        body("hook-10"),
        serde_json::to_value(&event).unwrap(),
        "the event as it is"
    );
    // The hidden extension stays hidden from the config that asked for it.
    assert!(!got["upgrade-task/hook-03-hidden/5"].contains("urn:x-ext:hidden"));
    assert!(got["upgrade-task/hook-03/5"].contains("urn:x-ext:hidden"));
    assert_eq!(store.pending_count().await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_database_of_main_6e63c50_delivers_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("upgraded.sqlite");
    std::fs::write(&path, SQLITE_FIXTURE).unwrap();
    let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
    delivers_as_before(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_database_of_main_6e63c50_delivers_as_before() {
    let Some(url) = testing::fresh_database_or_skip("upgrade").await else {
        return;
    };
    testing::load_dump(&url, POSTGRES_FIXTURE).await.unwrap();
    let store = PgStore::open(&url).await.unwrap();
    delivers_as_before(Arc::new(store)).await;
}
