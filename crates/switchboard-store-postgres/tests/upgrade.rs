//! A database written by `main` at 6e63c50 (schema version 5: push configs
//! and outbox rows keyed by `protocol_version`; its `pg_dump` is the
//! fixture), opened by this code (migration 0006): nothing lost, every
//! config and outbox row (pending, leased, retried, dead) the same but for
//! `protocol_version` turned into `payload_kind`, task events marked
//! `is_task`, and the new trigger queuing by kind. How the fixture was made:
//! the README beside `switchboard-push`'s `tests/fixtures/upgrade-6e63c50/`,
//! whose `upgrade.rs` checks delivery.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};
use switchboard_core::TaskStore;
use switchboard_protocol::{StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
use switchboard_store_postgres::{PgStore, testing};

const FIXTURE: &str = include_str!("fixtures/main-6e63c50.sql");

/// (table, its columns in a stable order, the order of its rows)
const CONFIGS: (&str, &str, &str) = (
    "push_configs",
    "ord, tenant, task_id, id, url, token, auth_scheme, auth_credentials, \
     hidden_metadata_keys, created_micros",
    "ord",
);
const OUTBOX: (&str, &str, &str) = (
    "push_outbox",
    "id, tenant, task_id, config_id, seq, payload, state, attempts, next_attempt_micros, \
     lease_until_micros, last_error, created_micros",
    "id",
);
const EVENTS: (&str, &str, &str) = (
    "task_events",
    "tenant, task_id, seq, event_json::text, status_micros, status_subus_nanos",
    "tenant, task_id, seq",
);

/// Every row of a table, as JSON arrays of its columns and then `last`.
async fn rows(conn: &mut PgConnection, table: (&str, &str, &str), last: &str) -> Vec<Value> {
    let (name, columns, order) = table;
    let sql =
        format!("SELECT json_build_array({columns}, {last})::text FROM {name} ORDER BY {order}");
    sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql))
        .fetch_all(conn)
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_str(r).unwrap())
        .collect()
}

/// `rows` with each one's last element replaced by what `f` makes of it.
fn map_last(rows: Vec<Value>, f: impl Fn(&Value) -> Value) -> Vec<Value> {
    rows.into_iter()
        .map(|mut row| {
            let cells = row.as_array_mut().unwrap();
            let last = cells.pop().unwrap();
            cells.push(f(&last));
            row
        })
        .collect()
}

/// What 0005's trigger gave a config of this version, as a payload kind.
fn kind_of_version(version: &Value) -> Value {
    match version.as_str().unwrap() {
        "0.3" => json!("task_snapshot"),
        "1.0" => json!("event"),
        other => panic!("the fixture holds only 1.0 and 0.3 configs, not {other}"),
    }
}

#[tokio::test]
async fn a_database_of_main_6e63c50_upgrades_without_loss() {
    let Some(url) = testing::fresh_database_or_skip("upgrade").await else {
        return;
    };
    testing::load_dump(&url, FIXTURE).await.unwrap();

    // As the old code left it.
    let mut conn = PgConnection::connect(&url).await.unwrap();
    let configs = rows(&mut conn, CONFIGS, "protocol_version").await;
    let outbox = rows(&mut conn, OUTBOX, "protocol_version").await;
    let events = rows(&mut conn, EVENTS, "seq").await;
    assert_eq!((configs.len(), outbox.len(), events.len()), (5, 20, 8));

    let store = PgStore::open(&url).await.unwrap();

    assert_eq!(
        rows(&mut conn, CONFIGS, "payload_kind").await,
        map_last(configs, kind_of_version),
        "configs: the same, with the kind their version meant"
    );
    assert_eq!(
        rows(&mut conn, OUTBOX, "payload_kind").await,
        map_last(outbox, kind_of_version),
        "outbox: every item the same, payload bytes included"
    );
    assert_eq!(
        rows(&mut conn, EVENTS, "is_task").await,
        map_last(events, |seq| json!(seq == &json!(1))),
        "events: the same; the first of each task is the task"
    );

    // A commit after the upgrade: the snapshot for the snapshot configs,
    // the event for the other.
    let mut record = store.load("", "upgrade-task").await.unwrap().unwrap();
    record.last_seq = 5;
    record.task.status = TaskStatus::new(TaskState::Completed);
    let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: record.task.id.clone(),
        context_id: record.task.context_id.clone(),
        status: record.task.status.clone(),
        metadata: None,
    });
    store.commit(&record, Some(&event)).await.unwrap();
    let queued: Vec<(String, String, bool)> = sqlx::query_as(
        "SELECT o.config_id, o.payload_kind, o.payload = CASE o.payload_kind \
             WHEN 'event' THEN e.event_json::text ELSE '{\"task\":' || t.task_json::text || '}' END \
         FROM push_outbox AS o \
         JOIN task_events AS e ON e.tenant = o.tenant AND e.task_id = o.task_id AND e.seq = o.seq \
         JOIN tasks AS t ON t.tenant = o.tenant AND t.id = o.task_id \
         WHERE o.seq = 5 ORDER BY o.id",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let expect = |c: &str, k: &str| (c.to_string(), k.to_string(), true);
    assert_eq!(
        queued,
        [
            expect("hook-10", "event"),
            expect("hook-03", "task_snapshot"),
            expect("hook-03-hidden", "task_snapshot"),
        ]
    );
    conn.close().await.unwrap();
    store.close().await;
}
