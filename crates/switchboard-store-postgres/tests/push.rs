//! The outbox on PostgreSQL beyond the shared `PushStore` conformance suite
//! (which `conformance.rs` runs): what only a shared database can show, two
//! stores (two replicas) claiming from one outbox at once, the trigger's
//! NOTIFY waking another replica, and the shared signing key document.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use switchboard_core::push::{PushConfig, PushStore};
use switchboard_core::store::conformance::fixtures::working_record as record;
use switchboard_core::{StoreError, TaskStore};
use switchboard_protocol::StreamResponse;
use switchboard_store_postgres::PgStore;

async fn commit(store: &PgStore, task: &str, seq: u64) -> Result<(), StoreError> {
    let r = record(task, seq);
    store
        .commit(&r, Some(&StreamResponse::Task(r.task.clone())))
        .await
}

fn hook(task: &str, id: &str) -> PushConfig {
    PushConfig {
        tenant: String::new(),
        task_id: task.into(),
        id: id.into(),
        url: format!("https://hooks.example.com/{task}/{id}"),
        token: None,
        authentication: None,
        payload_kind: switchboard_core::push::PayloadKind::Event,
        hidden_metadata_keys: Vec::new(),
    }
}

/// A commit that loses on its sequence number writes no event, so its
/// trigger never runs: nothing is queued for an event that does not exist.
#[tokio::test]
async fn a_refused_commit_queues_nothing() {
    let Some(store) = common::fresh_store_or_skip("a_refused_commit_queues_nothing").await else {
        return;
    };
    store.put_config(&hook("t", "h"), 10).await.unwrap();
    commit(&store, "t", 1).await.unwrap();
    assert_eq!(store.pending_count().await.unwrap(), 1);
    let err = commit(&store, "t", 1).await.unwrap_err();
    assert!(
        matches!(err, StoreError::SequenceConflict { .. }),
        "{err:?}"
    );
    assert_eq!(
        store.pending_count().await.unwrap(),
        1,
        "the refused event queued no notification"
    );
}

/// Two replicas (two `PgStore`s, two pools) drain one outbox while a third
/// keeps committing. Every queued item is delivered, none twice while
/// leased, never two of one config at once, and each config sees its
/// events in order. Some attempts fail and are retried, releasing leases.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_claim_concurrently() {
    let Some([writer, first, second]) =
        common::replicas_or_skip("two_replicas_claim_concurrently").await
    else {
        return;
    };
    let replicas = [first, second];
    const TASKS: usize = 6;
    const EVENTS: u64 = 6;
    let tasks: Vec<String> = (0..TASKS).map(|i| format!("task{i}")).collect();
    for t in &tasks {
        for c in ["a", "b"] {
            writer.put_config(&hook(t, c), 10).await.unwrap();
        }
    }
    let expected = TASKS * 2 * EVENTS as usize;

    #[derive(Default)]
    struct Log {
        /// Configs with an item being delivered right now, by item id.
        in_flight: HashMap<(String, String), u64>,
        /// Item ids delivered (acked).
        delivered: HashSet<u64>,
        /// Per config, the sequence numbers in delivery order.
        order: HashMap<(String, String), Vec<u64>>,
        violations: Vec<String>,
    }
    let log = Arc::new(Mutex::new(Log::default()));

    let producing = {
        let tasks = tasks.clone();
        tokio::spawn(async move {
            for seq in 1..=EVENTS {
                for t in &tasks {
                    commit(&writer, t, seq).await.unwrap();
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };

    let mut workers = Vec::new();
    for (n, store) in replicas.iter().enumerate() {
        let store = store.clone();
        let log = log.clone();
        workers.push(tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            let mut attempts = 0_u64;
            loop {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "replica {n} did not finish in time"
                );
                let items = store
                    .claim(chrono::Utc::now(), 3, Duration::from_secs(30))
                    .await
                    .unwrap();
                if items.is_empty() {
                    if log.lock().unwrap().delivered.len() >= expected {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
                for item in &items {
                    let key = (item.task_id.clone(), item.config_id.clone());
                    let mut l = log.lock().unwrap();
                    if let Some(other) = l.in_flight.insert(key.clone(), item.id) {
                        l.violations.push(format!(
                            "replica {n} got item {} of {key:?} while item {other} was in flight",
                            item.id
                        ));
                    }
                    if l.delivered.contains(&item.id) {
                        l.violations
                            .push(format!("item {} handed out after its ack", item.id));
                    }
                }
                // "Deliver", slowly enough for the replicas to overlap.
                tokio::time::sleep(Duration::from_millis(3)).await;
                for item in items {
                    attempts += 1;
                    let key = (item.task_id.clone(), item.config_id.clone());
                    // Every fifth attempt fails once and is retried at once.
                    let fail = attempts.is_multiple_of(5) && item.attempts == 1;
                    {
                        let mut l = log.lock().unwrap();
                        l.in_flight.remove(&key);
                        if !fail {
                            if !l.delivered.insert(item.id) {
                                l.violations
                                    .push(format!("item {} delivered twice", item.id));
                            }
                            l.order.entry(key).or_default().push(item.seq);
                        }
                    }
                    if fail {
                        store
                            .retry(item.id, chrono::Utc::now(), "503 from the test")
                            .await
                            .unwrap();
                    } else {
                        store.ack(item.id).await.unwrap();
                    }
                }
            }
        }));
    }
    producing.await.unwrap();
    for w in workers {
        w.await.unwrap();
    }
    assert_eq!(replicas[0].pending_count().await.unwrap(), 0);
    let l = log.lock().unwrap();
    assert!(l.violations.is_empty(), "{:#?}", l.violations);
    assert_eq!(l.delivered.len(), expected, "every item delivered");
    assert_eq!(l.order.len(), TASKS * 2);
    for (key, seqs) in &l.order {
        assert_eq!(
            seqs,
            &(1..=EVENTS).collect::<Vec<_>>(),
            "config {key:?} saw its events in order"
        );
    }
}

/// The outbox trigger's NOTIFY reaches the worker of another replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_wakes_every_replica() {
    let Some([a, b]) = common::replicas_or_skip("a_commit_wakes_every_replica").await else {
        return;
    };
    let wake = b.wakeup().expect("PostgreSQL signals new items");
    a.put_config(&hook("w", "h"), 10).await.unwrap();
    // The listener connects in the background; keep committing until it
    // hears one (each event is a separate NOTIFY).
    let mut woke = false;
    for seq in 1..=20 {
        commit(&a, "w", seq).await.unwrap();
        if tokio::time::timeout(Duration::from_millis(500), wake.notified())
            .await
            .is_ok()
        {
            woke = true;
            break;
        }
    }
    assert!(woke, "replica b was never woken by replica a's commits");
    let items = b
        .claim(chrono::Utc::now(), 10, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(items.len(), 1, "and it can claim the head");
}

/// The first replica's key document wins; a stale replace is refused.
#[tokio::test]
async fn the_first_key_document_wins() {
    let Some([a, b]) = common::replicas_or_skip("the_first_key_document_wins").await else {
        return;
    };
    assert_eq!(b.push_keys().await.unwrap(), None);
    let first = a.push_keys_init("{\"from\":\"a\"}").await.unwrap();
    let second = b.push_keys_init("{\"from\":\"b\"}").await.unwrap();
    assert_eq!(first, second, "b loads a's document");
    assert_eq!(second.document, "{\"from\":\"a\"}");
    let v2 = a
        .push_keys_replace(first.version, "{\"rotated\":1}")
        .await
        .unwrap()
        .expect("the current version may be replaced");
    assert!(v2 > first.version);
    assert_eq!(
        b.push_keys_replace(first.version, "{\"stale\":1}")
            .await
            .unwrap(),
        None,
        "a replace based on an old version is refused"
    );
    let now = b.push_keys().await.unwrap().unwrap();
    assert_eq!(
        (now.document.as_str(), now.version),
        ("{\"rotated\":1}", v2)
    );
}

/// Many tasks committing at once share group-commit statements, and the
/// push trigger runs once per statement: every event of every task is still
/// queued once per config of its task, in sequence order per config, an
/// event config getting the event and a snapshot config the task as that
/// commit left it (a task event being its own snapshot).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_commits_queue_every_tasks_events_in_order() {
    let Some(store) = common::fresh_store_or_skip("group_commits_queue_in_order").await else {
        return;
    };
    const TASKS: usize = 24;
    let store = Arc::new(store);
    for i in 0..TASKS {
        let task = format!("g{i:02}");
        store.put_config(&hook(&task, "e"), 10).await.unwrap();
        let snapshot = PushConfig {
            payload_kind: switchboard_core::push::PayloadKind::TaskSnapshot,
            ..hook(&task, "s")
        };
        store.put_config(&snapshot, 10).await.unwrap();
    }
    // What each commit should queue: (task, seq) → (event, snapshot).
    let expected = Arc::new(Mutex::new(HashMap::new()));
    let start = Arc::new(tokio::sync::Barrier::new(TASKS));
    let mut writers = Vec::new();
    for i in 0..TASKS {
        let (store, expected, start) = (store.clone(), expected.clone(), start.clone());
        writers.push(tokio::spawn(async move {
            let task = format!("g{i:02}");
            start.wait().await;
            // Two commits of two events each: the task and a status, then
            // two statuses; every event of a commit shares its snapshot.
            for (last_seq, first_is_task) in [(2_u64, true), (4, false)] {
                let mut r = record(&task, last_seq);
                r.task.metadata =
                    Some(serde_json::from_value(serde_json::json!({"upto": last_seq})).unwrap());
                let status = switchboard_core::store::conformance::status_event(&r);
                let first = if first_is_task {
                    StreamResponse::Task(r.task.clone())
                } else {
                    status.clone()
                };
                store
                    .commit_events(&r, &[first.clone(), status.clone()])
                    .await
                    .unwrap();
                let snapshot = serde_json::json!({ "task": r.task });
                let mut expected = expected.lock().unwrap();
                for (seq, event) in [(last_seq - 1, first), (last_seq, status)] {
                    let is_task = matches!(event, StreamResponse::Task(_));
                    let event = serde_json::to_value(&event).unwrap();
                    let snapshot = if is_task {
                        event.clone()
                    } else {
                        snapshot.clone()
                    };
                    expected.insert((task.clone(), seq), (event, snapshot));
                }
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    let rows: Vec<(String, String, i64, String)> =
        sqlx::query_as("SELECT task_id, config_id, seq, payload FROM push_outbox ORDER BY id")
            .fetch_all(store.pool())
            .await
            .unwrap();
    assert_eq!(rows.len(), TASKS * 2 * 4, "each event once per config");
    let expected = expected.lock().unwrap();
    let mut seqs: HashMap<(String, String), Vec<i64>> = HashMap::new();
    for (task, config, seq, payload) in rows {
        let (event, snapshot) = &expected[&(task.clone(), seq as u64)];
        let payload: serde_json::Value = serde_json::from_str(&payload).unwrap();
        let want = if config == "s" { snapshot } else { event };
        assert_eq!(&payload, want, "{task} {config} {seq}");
        seqs.entry((task, config)).or_default().push(seq);
    }
    assert_eq!(seqs.len(), TASKS * 2);
    for (key, seqs) in seqs {
        assert_eq!(seqs, [1, 2, 3, 4], "{key:?}: queued in sequence order");
    }
}
