//! Push notifications for configs made over A2A 0.3, end to end over real
//! loopback HTTP, on each store (memory, SQLite, PostgreSQL): one task gets
//! a config inline in a 0.3 `message/send`, one from 0.3
//! `tasks/pushNotificationConfig/set`, one from the 0.3 REST route, one from
//! 0.3 gRPC `CreateTaskPushNotificationConfig` and one
//! from 1.0 `CreateTaskPushNotificationConfig`. The 0.3 receivers get, for
//! each event and in order, the 0.3 `Task` as of that event (`kind: "task"`,
//! kebab-case states), signed like 1.0 notifications; the 1.0 receiver keeps
//! getting `StreamResponse`s.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod push_receiver;
mod util;

use std::collections::BTreeMap;
use std::sync::Arc;

use push_receiver::{Received, Receiver};
use serde_json::{Value, json};
use switchboard_client::push::PushVerifier;
use switchboard_core::push::PushStore;
use switchboard_core::{PushConfigLimits, TaskStore};
use switchboard_proto::v03 as pb;
use switchboard_proto::v03::a2a_service_client::A2aServiceClient;
use util::TestServer;
use util::push::PushServer;

async fn push_server<S: TaskStore + PushStore>(store: Arc<S>) -> PushServer {
    let limits = PushConfigLimits {
        allow_hosts: vec!["127.0.0.1".into()],
        ..Default::default()
    };
    PushServer::start(store, limits).await
}

/// A JSON-RPC call without `A2A-Version`: a 0.3 call.
async fn rpc03(s: &TestServer, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (_, v, _) = s.post_json(&body.to_string(), &[]).await;
    assert!(v.get("error").is_none(), "{method}: {v}");
    v["result"].clone()
}

fn msg03(text: &str, task_id: Option<&str>) -> Value {
    let mut m = json!({"kind": "message", "messageId": format!("m-{}", util::uuid()),
        "role": "user", "parts": [{"kind": "text", "text": text}]});
    if let Some(t) = task_id {
        m["taskId"] = json!(t);
    }
    m
}

/// The 1.0 state name of a 0.3 kebab-case state.
fn state_10(kebab: &str) -> String {
    format!(
        "TASK_STATE_{}",
        kebab.replace('-', "_").to_ascii_uppercase()
    )
}

const KEBAB_STATES: &[&str] = &[
    "submitted",
    "working",
    "input-required",
    "completed",
    "canceled",
    "failed",
    "rejected",
    "auth-required",
    "unknown",
];

fn done03(got: &[Received]) -> bool {
    got.last()
        .is_some_and(|r| r.json()["status"]["state"] == "completed")
}

fn done10(got: &[Received]) -> bool {
    got.last()
        .is_some_and(|r| r.json()["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED")
}

/// Verifies every notification and returns them by sequence number,
/// checking the sequence numbers strictly increase (delivery order).
async fn by_seq(verifier: &PushVerifier, got: &[Received]) -> BTreeMap<u64, Value> {
    let mut out = BTreeMap::new();
    let mut last = 0;
    for r in got {
        let v = verifier.verify(&r.headers, &r.body).await.unwrap();
        assert!(
            v.claims.seq > last,
            "in order: {} after {last}",
            v.claims.seq
        );
        last = v.claims.seq;
        out.insert(v.claims.seq, r.json());
    }
    out
}

async fn v03_configs_receive_v03_tasks<S: TaskStore + PushStore>(store: Arc<S>) {
    let p = push_server(store).await;
    let s = &p.server;
    let (inline, rpc, rest, grpc, v10) = (
        Receiver::start().await,
        Receiver::start().await,
        Receiver::start().await,
        Receiver::start().await,
        Receiver::start().await,
    );

    // 0.3 message/send with an inline config: the task stops in input-required.
    let task = rpc03(
        s,
        "message/send",
        json!({"message": msg03("/ask", None), "configuration": {"blocking": true,
            "pushNotificationConfig": {"url": inline.url(), "token": "tok-inline",
                "authentication": {"schemes": ["Bearer"], "credentials": "cred"}}}}),
    )
    .await;
    assert_eq!(task["kind"], "task", "{task}");
    assert_eq!(task["status"]["state"], "input-required");
    let task_id = task["id"].as_str().unwrap().to_string();
    let context_id = task["contextId"].as_str().unwrap().to_string();

    // One config each over 0.3 JSON-RPC, 0.3 REST and 1.0.
    let set = rpc03(
        s,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": task_id, "pushNotificationConfig": {"id": "rpc03", "url": rpc.url()}}),
    )
    .await;
    assert_eq!(set["pushNotificationConfig"]["id"], "rpc03", "{set}");
    let resp = s
        .http
        .post(format!(
            "{}/v1/tasks/{task_id}/pushNotificationConfigs",
            s.base
        ))
        .header("Content-Type", "application/json")
        .body(json!({"pushNotificationConfig": {"id": "rest03", "url": rest.url()}}).to_string())
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let body = resp.text().await.unwrap();
    assert_eq!(status, 200, "{body}");
    // And one over 0.3 gRPC (`a2a.v1.A2AService`).
    let mut g = A2aServiceClient::connect(s.base.clone()).await.unwrap();
    g.create_task_push_notification_config(pb::CreateTaskPushNotificationConfigRequest {
        parent: format!("tasks/{task_id}"),
        config_id: "grpc03".into(),
        config: Some(pb::TaskPushNotificationConfig {
            name: String::new(),
            push_notification_config: Some(pb::PushNotificationConfig {
                id: "grpc03".into(),
                url: grpc.url(),
                ..Default::default()
            }),
        }),
    })
    .await
    .unwrap();
    let created10 = s
        .rpc(
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": "v10", "url": v10.url()}),
        )
        .await;
    assert!(created10.get("error").is_none(), "{created10}");

    // Configs made over 0.3 read back over either version.
    let got03 = rpc03(
        s,
        "tasks/pushNotificationConfig/get",
        json!({"id": task_id, "pushNotificationConfigId": "rest03"}),
    )
    .await;
    assert_eq!(got03["pushNotificationConfig"]["url"], rest.url());
    let got10 = s
        .rpc(
            "GetTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": "rpc03"}),
        )
        .await;
    assert_eq!(got10["result"]["url"], rpc.url(), "{got10}");
    let listed = rpc03(
        s,
        "tasks/pushNotificationConfig/list",
        json!({"id": task_id}),
    )
    .await;
    assert_eq!(listed.as_array().unwrap().len(), 5, "{listed}");

    // Answer over 1.0: the task runs to completion.
    let answer = s
        .rpc(
            "SendMessage",
            json!({"message": {"messageId": format!("m-{}", util::uuid()), "role": "ROLE_USER",
                "taskId": task_id, "parts": [{"text": "Ada"}]},
                "configuration": {"returnImmediately": false}}),
        )
        .await;
    assert_eq!(
        answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );

    let verifier = |rx: &Receiver| {
        PushVerifier::from_jwks_url(format!("{}/.well-known/jwks.json", s.base), rx.url())
            .issuer(&s.base)
    };
    let events10 = by_seq(
        &verifier(&v10),
        &v10.wait_until(20, "1.0 webhook", done10).await,
    )
    .await;
    assert!(events10.len() >= 2, "{events10:?}");
    for ev in events10.values() {
        assert!(ev.get("kind").is_none(), "1.0 payloads have no kind: {ev}");
        let key = ev.as_object().unwrap().keys().next().unwrap().clone();
        assert!(
            ["task", "message", "statusUpdate", "artifactUpdate"].contains(&key.as_str()),
            "a 1.0 StreamResponse: {ev}"
        );
    }

    for (name, rx) in [
        ("inline", &inline),
        ("rpc", &rpc),
        ("rest", &rest),
        ("grpc", &grpc),
    ] {
        let got = rx.wait_until(20, name, done03).await;
        let tasks = by_seq(&verifier(rx), &got).await;
        let mut history = 0;
        for (seq, t) in &tasks {
            assert_eq!(t["kind"], "task", "{name} #{seq}: {t}");
            assert_eq!(t["id"], task_id.as_str(), "{name} #{seq}");
            assert_eq!(t["contextId"], context_id.as_str(), "{name} #{seq}");
            let state = t["status"]["state"].as_str().unwrap();
            assert!(KEBAB_STATES.contains(&state), "{name} #{seq}: {state}");
            // It parses as the 0.3 Task type (parts, roles, states).
            let typed: switchboard_protocol::v03::rpc::Task =
                serde_json::from_value(t.clone()).unwrap_or_else(|e| panic!("{name}: {e}: {t}"));
            assert_eq!(typed.id, task_id);
            // The task as of that event: the status of the 1.0 event with
            // the same sequence number, when that event is a status update.
            if let Some(upd) = events10.get(seq).and_then(|e| e.get("statusUpdate")) {
                assert_eq!(
                    upd["status"]["state"].as_str().unwrap(),
                    state_10(state),
                    "{name} #{seq}: snapshot after the event"
                );
            }
            // Snapshots only grow.
            let h = t["history"].as_array().map_or(0, Vec::len);
            assert!(h >= history, "{name} #{seq}: history shrank");
            history = h;
        }
        let last = tasks.values().last().unwrap();
        assert_eq!(last["status"]["state"], "completed", "{name}");
        assert!(
            last["artifacts"].as_array().is_some_and(|a| !a.is_empty()),
            "{name}: the final task carries the artifacts: {last}"
        );
        if name == "inline" {
            // Created with the first events: the task itself starts the series.
            assert_eq!(tasks.keys().next(), Some(&1), "{name}");
            assert_eq!(tasks[&1]["status"]["state"], "submitted", "{tasks:?}");
            let h = &got[0].headers;
            assert_eq!(h["authorization"], "Bearer cred");
            assert_eq!(h["x-a2a-notification-token"], "tok-inline");
        } else {
            // The others see the same events as the 1.0 config made with them.
            let ours: Vec<_> = tasks.keys().collect();
            let theirs: Vec<_> = events10.keys().collect();
            assert_eq!(ours, theirs, "{name}");
        }
    }
}

#[tokio::test]
async fn v03_configs_receive_v03_tasks_memory() {
    v03_configs_receive_v03_tasks(Arc::new(switchboard_core::InMemoryStore::new())).await;
}

#[tokio::test]
async fn v03_configs_receive_v03_tasks_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("push.db");
    let store = switchboard_store_sqlite::SqliteStore::open(path.to_str().unwrap())
        .await
        .unwrap();
    v03_configs_receive_v03_tasks(Arc::new(store)).await;
}

#[tokio::test]
async fn v03_configs_receive_v03_tasks_postgres() {
    let Some(url) = switchboard_store_postgres::testing::fresh_database_or_skip("push_v03").await
    else {
        return;
    };
    let store = switchboard_store_postgres::PgStore::open(&url)
        .await
        .unwrap();
    v03_configs_receive_v03_tasks(Arc::new(store)).await;
}
