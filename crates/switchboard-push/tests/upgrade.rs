//! Databases written by `main` at 6e63c50 (schema version 5: push configs
//! and outbox rows keyed by `protocol_version`), opened by this code
//! (migrations 0006 and 0007), on SQLite and on PostgreSQL:
//!
//! - nothing is lost: read straight from the tables, every config and outbox
//!   row (pending, leased, retried, dead) is the same, payload bytes
//!   included, but for `protocol_version` turned into the `payload_kind` it
//!   meant, and the first event of each task is marked `is_task`;
//! - every queued notification, the dead letter too once requeued, goes out
//!   byte for byte as the old worker sent it (0.3 configs the 0.3 `Task`,
//!   1.0 configs the event);
//! - an event committed after the upgrade reaches each webhook in the form
//!   its config asked for;
//! - no table, index, trigger or function names the legacy column or a 0.3
//!   version any more: the stores' current schema knows no protocol version.
//!
//! Fixtures and how they were made: `tests/fixtures/upgrade-6e63c50/README.md`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use common::options;
use serde_json::{Value, json};
use sqlx::Connection as _;
use switchboard_core::push::{PayloadKind, PushStore};
use switchboard_core::{TaskRecord, TaskStore};
use switchboard_protocol::{StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
use switchboard_push::testing::Receiver;
use switchboard_push::{KeySet, NotificationClaims, PushWorker};
use switchboard_store_postgres::{PgStore, testing};
use switchboard_store_sqlite::SqliteStore;
use tokio_util::sync::CancellationToken;

const SQLITE_FIXTURE: &[u8] = include_bytes!("fixtures/upgrade-6e63c50/sqlite.sqlite");
const POSTGRES_FIXTURE: &str = include_str!("fixtures/upgrade-6e63c50/postgres.sql");
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
    let o = options(Arc::new(KeySet::generate().unwrap()));
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

/// The tables compared: name, the columns both schemas have, row order.
type Table = (&'static str, &'static str, &'static str);
const TABLES: [Table; 3] = [
    (
        "push_configs",
        "ord, tenant, task_id, id, url, token, auth_scheme, auth_credentials, \
         hidden_metadata_keys, created_micros",
        "ord",
    ),
    (
        "push_outbox",
        "id, tenant, task_id, config_id, seq, payload, state, attempts, next_attempt_micros, \
         lease_until_micros, last_error, created_micros",
        "id",
    ),
    (
        "task_events",
        "tenant, task_id, seq, event_json",
        "tenant, task_id, seq",
    ),
];
/// The column of each table that migration 0006 changes, before and after
/// (`is_task` as 0 or 1 on both databases).
const BEFORE: [&str; 3] = ["protocol_version", "protocol_version", "seq"];
const AFTER_SQLITE: [&str; 3] = ["payload_kind", "payload_kind", "is_task"];
const AFTER_POSTGRES: [&str; 3] = ["payload_kind", "payload_kind", "CAST(is_task AS INT)"];

/// Per table, its rows as JSON arrays of its columns and then `last`, read
/// straight from the database at `url` (`array`: its JSON array function).
async fn read(url: &str, array: &str, last: [&str; 3]) -> Vec<Vec<Value>> {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(url).await.unwrap();
    let mut tables = Vec::new();
    for ((table, columns, order), last) in TABLES.into_iter().zip(last) {
        let sql = format!(
            "SELECT CAST({array}({columns}, {last}) AS TEXT) FROM {table} ORDER BY {order}"
        );
        let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut conn)
            .await
            .unwrap();
        tables.push(
            rows.iter()
                .map(|r| serde_json::from_str(r).unwrap())
                .collect(),
        );
    }
    conn.close().await.unwrap();
    tables
}

/// What migration 0006 must make of the tables `before`: the same rows, a
/// config's or item's `protocol_version` turned into the payload kind the
/// 0005 trigger gave it, and each task's first event (the task) marked.
fn upgraded(before: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    let kind_of_version = |v: &Value| match v.as_str() {
        Some("0.3") => json!("task_snapshot"),
        Some("1.0") => json!("event"),
        other => panic!("the fixtures hold only 1.0 and 0.3 configs, not {other:?}"),
    };
    let is_task = |seq: &Value| json!(i32::from(seq == &json!(1)));
    let changes: [&dyn Fn(&Value) -> Value; 3] = [&kind_of_version, &kind_of_version, &is_task];
    before
        .into_iter()
        .zip(changes)
        .map(|(rows, change)| {
            rows.into_iter()
                .map(|mut row| {
                    let cells = row.as_array_mut().unwrap();
                    let last = cells.pop().unwrap();
                    cells.push(change(&last));
                    row
                })
                .collect()
        })
        .collect()
}

/// How many schema objects of the database at `url` still name the legacy
/// version column or a 0.3 version (`sql` counts them): none may, once the
/// migrations ran.
async fn legacy_mentions(url: &str, sql: &'static str) -> i64 {
    let mut conn = sqlx::AnyConnection::connect(url).await.unwrap();
    let n = sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    n
}

/// Tables, indexes and triggers of SQLite that name the legacy column or a 0.3 version.
const SQLITE_LEGACY: &str = "SELECT count(*) FROM sqlite_master \
     WHERE sql LIKE '%protocol_version%' OR sql LIKE '%0.3%'";
/// Columns and functions of PostgreSQL that name the legacy column or a 0.3 version.
const POSTGRES_LEGACY: &str = "SELECT \
     (SELECT count(*) FROM information_schema.columns \
      WHERE table_schema = current_schema() AND column_name = 'protocol_version') \
     + (SELECT count(*) FROM pg_proc \
        WHERE pronamespace = current_schema()::regnamespace \
        AND (prosrc LIKE '%protocol_version%' OR prosrc LIKE '%0.3%'))";

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
async fn a_sqlite_database_of_main_6e63c50_upgrades_without_loss() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("upgraded.sqlite");
    std::fs::write(&path, SQLITE_FIXTURE).unwrap();
    let url = format!("sqlite://{}", path.display());
    let before = read(&url, "json_array", BEFORE).await;
    assert!(
        legacy_mentions(&url, SQLITE_LEGACY).await > 0,
        "the check sees them"
    );
    assert_eq!(before.iter().map(Vec::len).collect::<Vec<_>>(), [5, 20, 8]);
    let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
    assert_eq!(
        read(&url, "json_array", AFTER_SQLITE).await,
        upgraded(before)
    );
    assert_eq!(legacy_mentions(&url, SQLITE_LEGACY).await, 0);
    delivers_as_before(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_database_of_main_6e63c50_upgrades_without_loss() {
    let Some(url) = testing::fresh_database_or_skip("upgrade").await else {
        return;
    };
    testing::load_dump(&url, POSTGRES_FIXTURE).await.unwrap();
    let before = read(&url, "json_build_array", BEFORE).await;
    assert!(
        legacy_mentions(&url, POSTGRES_LEGACY).await > 0,
        "the check sees them"
    );
    assert_eq!(before.iter().map(Vec::len).collect::<Vec<_>>(), [5, 20, 8]);
    let store = PgStore::open(&url).await.unwrap();
    assert_eq!(
        read(&url, "json_build_array", AFTER_POSTGRES).await,
        upgraded(before)
    );
    assert_eq!(legacy_mentions(&url, POSTGRES_LEGACY).await, 0);
    delivers_as_before(Arc::new(store)).await;
}
