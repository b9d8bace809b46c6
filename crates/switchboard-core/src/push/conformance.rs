//! The conformance suite for [`PushStore`] implementations.
//!
//! The outbox contract only means something together with task commits, so
//! the suite takes a store that is both a [`TaskStore`] and a [`PushStore`]
//! (the same object, as in production). Call [`run_all`] with a fresh,
//! empty store; each check panics with a message naming the broken rule.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use switchboard_protocol::{
    AuthenticationInfo, Message, StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

use super::*;
use crate::store::{TaskRecord, TaskStore};

fn config(tenant: &str, task: &str, id: &str) -> PushConfig {
    PushConfig {
        tenant: tenant.into(),
        task_id: task.into(),
        id: id.into(),
        url: format!("https://hooks.example.com/{task}/{id}"),
        token: Some(format!("tok-{id}")),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some("secret".into()),
        }),
        payload_kind: PayloadKind::Event,
        hidden_metadata_keys: vec![format!("urn:hidden:{id}")],
    }
}

/// A task being committed event by event, like the engine does.
struct Writer {
    record: TaskRecord,
}

impl Writer {
    fn new(tenant: &str, id: &str) -> Writer {
        let now = Utc::now();
        Writer {
            record: TaskRecord {
                tenant: tenant.into(),
                owner: "anonymous".into(),
                task: Task {
                    id: id.into(),
                    context_id: format!("ctx-{id}"),
                    status: TaskStatus {
                        state: TaskState::Submitted,
                        message: None,
                        timestamp: Some(now),
                    },
                    artifacts: None,
                    history: Some(vec![Message::user_text("hi").with_task_id(id)]),
                    metadata: None,
                },
                last_seq: 0,
                created_at: now,
            },
        }
    }

    /// A writer for task `id` of the default tenant, which gets one config
    /// (`config_id`) before its first event.
    async fn with_config(push: &dyn PushStore, id: &str, config_id: &str) -> Writer {
        push.put_config(&config("", id, config_id), 10)
            .await
            .unwrap();
        Writer::new("", id)
    }

    /// [`with_config`](Self::with_config), then the task is created
    /// (`SUBMITTED`): its first item is queued.
    async fn submitted(
        tasks: &dyn TaskStore,
        push: &dyn PushStore,
        id: &str,
        config_id: &str,
    ) -> Writer {
        let mut w = Writer::with_config(push, id, config_id).await;
        w.step(tasks, TaskState::Submitted).await;
        w
    }

    /// Commits the next event; returns it.
    async fn step(&mut self, store: &dyn TaskStore, state: TaskState) -> StreamResponse {
        self.record.last_seq += 1;
        self.record.task.status = TaskStatus::new(state);
        let event = if self.record.last_seq == 1 {
            StreamResponse::Task(self.record.task.clone())
        } else {
            self.status_event()
        };
        store.commit(&self.record, Some(&event)).await.unwrap();
        event
    }

    /// Creates the task and moves it to working in one commit of two
    /// events, as the engine commits a task with its first change; returns
    /// both events.
    async fn create_working(&mut self, store: &dyn TaskStore) -> [StreamResponse; 2] {
        self.record.last_seq = 2;
        let created = StreamResponse::Task(self.record.task.clone());
        self.record.task.status = TaskStatus::new(TaskState::Working);
        let working = self.status_event();
        store
            .commit_events(&self.record, &[created.clone(), working.clone()])
            .await
            .unwrap();
        [created, working]
    }

    /// The status update event for the task's current status.
    fn status_event(&self) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.record.task.id.clone(),
            context_id: self.record.task.context_id.clone(),
            status: self.record.task.status.clone(),
            metadata: None,
        })
    }
}

const LEASE: Duration = Duration::from_secs(30);

/// Claims everything due now for `task` (other checks' items are ignored).
async fn claim_for(store: &dyn PushStore, task: &str) -> Vec<OutboxItem> {
    claim_at(store, task, Utc::now(), LEASE).await
}

/// Claims what is due for `task` at `now`, with a `lease`.
async fn claim_at(
    store: &dyn PushStore,
    task: &str,
    now: DateTime<Utc>,
    lease: Duration,
) -> Vec<OutboxItem> {
    store
        .claim(now, 1000, lease)
        .await
        .unwrap()
        .into_iter()
        .filter(|i| i.task_id == task)
        .collect()
}

/// Delivers everything in the outbox the way a worker would: claims what
/// is due, acks it, and again until nothing is left. Returns the items in
/// the order they were claimed (each config's in its own order).
pub async fn drain(store: &dyn PushStore) -> Vec<OutboxItem> {
    let mut delivered = Vec::new();
    loop {
        let items = store.claim(Utc::now(), 64, LEASE).await.unwrap();
        if items.is_empty() {
            return delivered;
        }
        for item in items {
            store.ack(item.id).await.unwrap();
            delivered.push(item);
        }
    }
}

/// The ids of a page's configs, in order.
fn ids(page: &ConfigPage) -> Vec<&str> {
    page.configs.iter().map(|c| c.id.as_str()).collect()
}

/// `tenant`'s dead letters of task `task` (at most 10).
async fn dead_letters(push: &dyn PushStore, tenant: &str, task: &str) -> Vec<OutboxItem> {
    push.list_dead_letters(tenant, Some(task), 10)
        .await
        .unwrap()
}

/// Asserts that `item` carries `event` as its payload (compared as JSON).
fn assert_payload_is(item: &OutboxItem, event: &StreamResponse) {
    let body: StreamResponse = serde_json::from_str(&item.payload).unwrap();
    assert_eq!(
        serde_json::to_value(&body).unwrap(),
        serde_json::to_value(event).unwrap(),
        "the payload of item {} is the event",
        item.seq
    );
}

/// Runs every check against `store`, which must start empty.
pub async fn run_all<S: TaskStore + PushStore>(store: &S) {
    config_crud(store).await;
    commits_queue_one_item_per_config(store, store).await;
    multi_event_commits_queue_every_event(store, store).await;
    snapshot_configs_queue_the_task_snapshot(store, store).await;
    order_per_config_survives_retries(store, store).await;
    leases_expire(store, store).await;
    delete_stops_delivery_and_keeps_dead_letters(store, store).await;
    dead_letters_can_be_requeued(store, store).await;
    // Last: it purges every other check's finished tasks.
    purging_a_task_never_loses_a_pending_notification(store, store).await;
}

/// Retention may delete a finished task, but a notification of it that is
/// still waiting is delivered all the same.
pub async fn purging_a_task_never_loses_a_pending_notification(
    tasks: &dyn TaskStore,
    push: &dyn PushStore,
) {
    let t = "purge-pending-task";
    let mut w = Writer::submitted(tasks, push, t, "a").await;
    let done = w.step(tasks, TaskState::Completed).await;
    let everything_finished = crate::store::Retention {
        max_age: Some(Duration::from_secs(1)),
        max_finished: Some(0),
    };
    tasks
        .purge(&everything_finished, Utc::now() + chrono::Duration::days(1))
        .await
        .unwrap();
    let mut delivered = Vec::new();
    for _ in 0..2 {
        let items = claim_for(push, t).await;
        assert_eq!(items.len(), 1, "still queued after the purge: {items:?}");
        delivered.push(items[0].payload.clone());
        push.ack(items[0].id).await.unwrap();
    }
    let last: StreamResponse = serde_json::from_str(&delivered[1]).unwrap();
    assert_eq!(
        serde_json::to_value(&last).unwrap(),
        serde_json::to_value(&done).unwrap()
    );
    // Once delivered, nothing keeps the task.
    tasks
        .purge(&everything_finished, Utc::now() + chrono::Duration::days(1))
        .await
        .unwrap();
    assert!(
        tasks.load("", t).await.unwrap().is_none(),
        "purged once delivered"
    );
    assert!(claim_for(push, t).await.is_empty());
}

/// A page of task `task_id`'s configs in the default tenant.
fn page(task_id: &str, after: Option<u64>, limit: usize) -> ConfigQuery<'_> {
    ConfigQuery {
        tenant: "",
        task_id,
        after,
        limit,
    }
}

/// Put/get/list/delete, the per-task limit, paging and tenant scoping.
pub async fn config_crud(store: &dyn PushStore) {
    let t = "crud-task";
    assert_eq!(store.count_configs("", t).await.unwrap(), 0);
    for i in 0..3 {
        let outcome = store
            .put_config(&config("", t, &format!("c{i}")), 3)
            .await
            .unwrap();
        assert_eq!(outcome, PutConfig::Created, "config c{i} is new");
    }
    assert_eq!(
        store.put_config(&config("", t, "c3"), 3).await.unwrap(),
        PutConfig::LimitReached,
        "a fourth config is refused at limit 3"
    );
    let mut changed = config("", t, "c1");
    changed.url = "https://other.example.com/hook".into();
    changed.hidden_metadata_keys = vec!["urn:a".into(), "urn:b".into()];
    changed.payload_kind = PayloadKind::TaskSnapshot;
    assert_eq!(
        store.put_config(&changed, 3).await.unwrap(),
        PutConfig::Replaced,
        "same id replaces, even at the limit"
    );
    assert_eq!(
        store.get_config("", t, "c1").await.unwrap(),
        Some(changed.clone()),
        "get returns exactly what was put"
    );
    assert_eq!(store.get_config("", t, "nope").await.unwrap(), None);
    assert_eq!(
        store.get_config("other-tenant", t, "c1").await.unwrap(),
        None,
        "configs are scoped by tenant"
    );
    assert_eq!(store.count_configs("", t).await.unwrap(), 3);

    let first = store.list_configs(page(t, None, 2)).await.unwrap();
    assert_eq!(
        ids(&first),
        ["c0", "c1"],
        "creation order; a replaced config keeps its place"
    );
    let next = first.next.expect("a second page exists");
    let second = store.list_configs(page(t, Some(next), 2)).await.unwrap();
    assert_eq!(ids(&second), ["c2"]);
    assert_eq!(second.next, None, "the last page has no cursor");
    assert!(
        store
            .list_configs(page("no-such-task", None, 10))
            .await
            .unwrap()
            .configs
            .is_empty()
    );

    assert!(store.delete_config("", t, "c0").await.unwrap());
    assert!(
        !store.delete_config("", t, "c0").await.unwrap(),
        "deleting again is a no-op"
    );
    assert_eq!(store.count_configs("", t).await.unwrap(), 2);
    assert_eq!(
        store.put_config(&config("", t, "c4"), 3).await.unwrap(),
        PutConfig::Created,
        "room again after a delete"
    );
}

/// A commit of several events (a task created together with its first
/// change) queues one item per event, delivered in sequence order.
pub async fn multi_event_commits_queue_every_event(tasks: &dyn TaskStore, push: &dyn PushStore) {
    let t = "multi-queue-task";
    // An inline config exists before its task does.
    let mut w = Writer::with_config(push, t, "a").await;
    let [created, working] = w.create_working(tasks).await;
    for (seq, event) in [(1, created), (2, working)] {
        let items = claim_for(push, t).await;
        assert_eq!(items.len(), 1, "one config, its head: {items:?}");
        assert_eq!(items[0].seq, seq);
        assert_payload_is(&items[0], &event);
        push.ack(items[0].id).await.unwrap();
    }
    assert!(claim_for(push, t).await.is_empty());
}

/// A [`PayloadKind::TaskSnapshot`] config is queued the task as of each
/// event (the snapshot committed with it, as `{"task": ..}`), an
/// [`PayloadKind::Event`] config of the same task the event; both items
/// carry their config's kind, which is stored with the config. A task event
/// is its own snapshot; a creation commit of two events queues the final
/// snapshot for the second.
pub async fn snapshot_configs_queue_the_task_snapshot(tasks: &dyn TaskStore, push: &dyn PushStore) {
    let t = "snapshot-task";
    let snapshots = PushConfig {
        payload_kind: PayloadKind::TaskSnapshot,
        hidden_metadata_keys: Vec::new(),
        ..config("", t, "snap")
    };
    push.put_config(&snapshots, 10).await.unwrap();
    push.put_config(&config("", t, "event"), 10).await.unwrap();
    assert_eq!(
        push.get_config("", t, "snap").await.unwrap().unwrap(),
        snapshots,
        "the kind is stored with the config"
    );
    let mut w = Writer::new("", t);
    let [created, working] = w.create_working(tasks).await;
    let after_2 = StreamResponse::Task(w.record.task.clone());
    let e3 = w.step(tasks, TaskState::Completed).await;
    let after_3 = StreamResponse::Task(w.record.task.clone());
    let json = |e: &StreamResponse| serde_json::to_value(e).unwrap();
    let expect = [
        (1, json(&created), json(&created)),
        (2, json(&after_2), json(&working)),
        (3, json(&after_3), json(&e3)),
    ];
    for (seq, snapshot, event) in expect {
        let items = claim_for(push, t).await;
        assert_eq!(items.len(), 2, "both configs' heads: {items:?}");
        for item in items {
            assert_eq!(item.seq, seq);
            let body: serde_json::Value = serde_json::from_str(&item.payload).unwrap();
            let (kind, want) = if item.config_id == "snap" {
                (PayloadKind::TaskSnapshot, &snapshot)
            } else {
                (PayloadKind::Event, &event)
            };
            assert_eq!(item.payload_kind, kind, "item {seq}");
            assert_eq!(&body, want, "config {} item {seq}", item.config_id);
            push.ack(item.id).await.unwrap();
        }
    }
    assert!(claim_for(push, t).await.is_empty());
}

/// Each committed event queues one item per config, with the event's JSON
/// as payload; events before the first config queue nothing.
pub async fn commits_queue_one_item_per_config(tasks: &dyn TaskStore, push: &dyn PushStore) {
    let t = "queue-task";
    let mut w = Writer::new("", t);
    w.step(tasks, TaskState::Submitted).await;
    assert!(
        claim_for(push, t).await.is_empty(),
        "no configs, nothing queued"
    );
    push.put_config(&config("", t, "a"), 10).await.unwrap();
    push.put_config(&config("", t, "b"), 10).await.unwrap();
    let e2 = w.step(tasks, TaskState::Working).await;
    let e3 = w.step(tasks, TaskState::Completed).await;

    let heads = claim_for(push, t).await;
    assert_eq!(
        heads.len(),
        2,
        "one item per config (the head), not both events: {heads:?}"
    );
    for item in &heads {
        assert_eq!(item.seq, 2, "heads are the oldest events");
        assert_eq!(item.attempts, 1, "a claim counts as an attempt");
        assert_eq!(item.state, OutboxState::Pending);
        assert_eq!(item.payload_kind, PayloadKind::Event);
        assert_payload_is(item, &e2);
        let c = config("", t, &item.config_id);
        assert_eq!(
            (
                &item.url,
                &item.token,
                &item.authentication,
                &item.hidden_metadata_keys
            ),
            (&c.url, &c.token, &c.authentication, &c.hidden_metadata_keys),
            "delivery target comes from the config"
        );
    }
    assert!(
        claim_for(push, t).await.is_empty(),
        "leased heads block their configs"
    );
    for item in &heads {
        push.ack(item.id).await.unwrap();
    }
    let next = claim_for(push, t).await;
    assert_eq!(next.len(), 2);
    assert!(next.iter().all(|i| i.seq == 3), "then the next event");
    assert_payload_is(&next[0], &e3);
    for item in &next {
        push.ack(item.id).await.unwrap();
        push.ack(item.id).await.unwrap(); // acking twice is harmless
    }
    assert!(claim_for(push, t).await.is_empty(), "all delivered");
}

/// A failed head keeps later items of its config back until it is delivered
/// or dead-lettered; other configs are not held up.
pub async fn order_per_config_survives_retries(tasks: &dyn TaskStore, push: &dyn PushStore) {
    let t = "order-task";
    let mut w = Writer::submitted(tasks, push, t, "slow").await;
    w.step(tasks, TaskState::Working).await;
    w.step(tasks, TaskState::Working).await;

    let head = claim_for(push, t).await;
    assert_eq!(head.len(), 1);
    assert_eq!(head[0].seq, 1);
    let later = Utc::now() + TimeDelta::seconds(3600);
    push.retry(head[0].id, later, "503 Service Unavailable")
        .await
        .unwrap();
    assert!(
        claim_for(push, t).await.is_empty(),
        "item 2 must wait while item 1 waits for its retry"
    );
    // Due again (time travel by claiming "in the future").
    let again = claim_at(push, t, later + TimeDelta::seconds(1), LEASE).await;
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].seq, again[0].attempts),
        (1, 2),
        "the same item, second attempt"
    );
    assert_eq!(
        again[0].last_error.as_deref(),
        Some("503 Service Unavailable"),
        "the last error is kept"
    );
    push.dead_letter(again[0].id, "gave up after 2 attempts")
        .await
        .unwrap();
    let next = claim_for(push, t).await;
    assert_eq!(next.len(), 1, "a dead letter no longer blocks its config");
    assert_eq!(next[0].seq, 2);
    push.ack(next[0].id).await.unwrap();
    let last = claim_for(push, t).await;
    assert_eq!(last[0].seq, 3);
    push.ack(last[0].id).await.unwrap();

    let dead = dead_letters(push, "", t).await;
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].seq, 1);
    assert_eq!(dead[0].state, OutboxState::Dead);
    assert_eq!(
        dead[0].last_error.as_deref(),
        Some("gave up after 2 attempts")
    );
    assert!(
        dead_letters(push, "other", t).await.is_empty(),
        "dead letters are scoped by tenant"
    );
}

/// A claim that is never acked (the worker died) is handed out again once
/// its lease runs out.
pub async fn leases_expire(tasks: &dyn TaskStore, push: &dyn PushStore) {
    let t = "lease-task";
    Writer::submitted(tasks, push, t, "x").await;
    let now = Utc::now();
    let first = claim_at(push, t, now, Duration::from_secs(5)).await;
    assert_eq!(first.len(), 1);
    let during = claim_at(push, t, now + TimeDelta::seconds(4), LEASE).await;
    assert!(during.is_empty(), "a live lease keeps the item");
    let after = claim_at(push, t, now + TimeDelta::seconds(6), LEASE).await;
    assert_eq!(after.len(), 1, "an expired lease frees the item");
    assert_eq!(after[0].id, first[0].id);
    assert_eq!(after[0].attempts, 2);
    push.ack(after[0].id).await.unwrap();
    assert!(push.pending_count().await.is_ok());
}

/// Deleting a config drops its pending items (nothing is sent after a
/// delete) but keeps its dead letters.
pub async fn delete_stops_delivery_and_keeps_dead_letters(
    tasks: &dyn TaskStore,
    push: &dyn PushStore,
) {
    let t = "delete-task";
    let mut w = Writer::submitted(tasks, push, t, "gone").await;
    w.step(tasks, TaskState::Working).await;
    let head = claim_for(push, t).await;
    push.dead_letter(head[0].id, "410 Gone").await.unwrap();
    let before = push.pending_count().await.unwrap();
    assert!(push.delete_config("", t, "gone").await.unwrap());
    assert_eq!(
        push.pending_count().await.unwrap(),
        before - 1,
        "the pending item of the deleted config is dropped"
    );
    w.step(tasks, TaskState::Completed).await;
    assert!(
        claim_for(push, t).await.is_empty(),
        "no config, nothing queued or sent"
    );
    assert_eq!(
        dead_letters(push, "", t).await.len(),
        1,
        "dead letters survive the delete"
    );
    assert_eq!(
        push.list_dead_letters("", None, 1000)
            .await
            .unwrap()
            .iter()
            .filter(|d| d.task_id == t)
            .count(),
        1
    );
}

/// An operator can put a dead letter back in the queue: it is pending and
/// due at once with a fresh attempt count and is no longer listed as dead.
/// It never goes out while a later item of its config is in flight (one
/// attempt per config at a time still holds). Unknown ids, other tenants and
/// dead letters whose config is gone are refused.
pub async fn dead_letters_can_be_requeued(tasks: &dyn TaskStore, push: &dyn PushStore) {
    let t = "requeue-task";
    let mut w = Writer::submitted(tasks, push, t, "r").await;
    w.step(tasks, TaskState::Working).await;
    let head = claim_for(push, t).await;
    assert_eq!(head.len(), 1);
    push.dead_letter(head[0].id, "500 Internal Server Error")
        .await
        .unwrap();
    let id = head[0].id;
    let second = claim_for(push, t).await;
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].seq, 2, "the dead letter no longer blocks item 2");

    assert_eq!(
        push.requeue_dead_letter("other", id).await.unwrap(),
        Requeue::NotFound,
        "dead letters are scoped by tenant"
    );
    assert_eq!(
        push.requeue_dead_letter("", u64::MAX / 2).await.unwrap(),
        Requeue::NotFound
    );
    assert_eq!(
        push.requeue_dead_letter("", id).await.unwrap(),
        Requeue::Requeued
    );
    assert!(
        dead_letters(push, "", t).await.is_empty(),
        "a requeued item is no longer dead"
    );
    assert_eq!(
        push.requeue_dead_letter("", id).await.unwrap(),
        Requeue::NotFound,
        "a pending item is not a dead letter"
    );
    assert!(
        claim_for(push, t).await.is_empty(),
        "item 2 is in flight: the requeued item waits for it"
    );
    push.ack(second[0].id).await.unwrap();
    let again = claim_for(push, t).await;
    assert_eq!(again.len(), 1, "one head per config: {again:?}");
    assert_eq!(
        (again[0].id, again[0].seq, again[0].attempts),
        (id, 1, 1),
        "the requeued item goes out, with a fresh attempt count"
    );
    assert_eq!(again[0].state, OutboxState::Pending);
    assert_eq!(
        again[0].last_error.as_deref(),
        Some("500 Internal Server Error"),
        "the last error is kept until the next attempt"
    );
    push.ack(again[0].id).await.unwrap();

    w.step(tasks, TaskState::Completed).await;
    let third = claim_for(push, t).await;
    assert_eq!(third.len(), 1);
    assert_eq!(third[0].seq, 3);
    push.dead_letter(third[0].id, "410 Gone").await.unwrap();
    assert!(push.delete_config("", t, "r").await.unwrap());
    assert_eq!(
        push.requeue_dead_letter("", third[0].id).await.unwrap(),
        Requeue::ConfigDeleted,
        "nothing could deliver a dead letter whose config is gone"
    );
    assert_eq!(
        dead_letters(push, "", t).await.len(),
        1,
        "a refused requeue leaves the dead letter in place"
    );
}
