//! The storage quota per principal on a real `serve`, on the memory, the
//! SQLite and the PostgreSQL store: a principal whose tasks hold more bytes than
//! `--max-storage-bytes-per-principal` gets ResourceExhausted for a new
//! task, while another principal still works. A run that grows its task past
//! the quota fails, saying why: finishing a task is never refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use proc::{Serve, send_rpc};
use serde_json::{Value, json};
use switchboard_store_postgres::testing;

const ALICE: &str = "sb_storage_quota_alice";
const BOB: &str = "sb_storage_quota_bob";

/// SendMessage of a 2,000-byte text as the holder of `key`: the answer.
async fn send(base: &str, key: &str) -> Value {
    let params = json!({"message": {
        "messageId": uuid::Uuid::new_v4().to_string(),
        "role": "ROLE_USER",
        "parts": [{"text": "q".repeat(2000)}],
    }});
    send_rpc(base, "SendMessage", params, &[("x-api-key", key)])
        .await
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_principal_over_its_storage_quota_is_refused_and_another_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite://{}", dir.path().join("quota.db").display());
    for store in ["memory", sqlite.as_str()] {
        alice_is_stopped_and_bob_is_not(store).await;
    }
}

/// The same on PostgreSQL (skipped without PostgreSQL binaries, unless
/// `SWITCHBOARD_REQUIRE_POSTGRES` is set).
#[tokio::test(flavor = "multi_thread")]
async fn a_principal_over_its_storage_quota_is_refused_on_postgres() {
    let Some(url) = testing::fresh_database_or_skip("storage_quota_on_postgres").await else {
        return;
    };
    alice_is_stopped_and_bob_is_not(&url).await;
}

/// On a `serve` with `--store store` and a quota of 30,000 bytes per
/// principal: alice creates tasks until the quota refuses her, then bob
/// still creates one, alice is still refused, and she still lists hers.
async fn alice_is_stopped_and_bob_is_not(store: &str) {
    let alice = format!("{}=alice", switchboard_auth::hash_api_key(ALICE));
    let bob = format!("{}=bob", switchboard_auth::hash_api_key(BOB));
    let serve = Serve::start_with(
        store,
        &[
            "--api-key-hash",
            &alice,
            "--api-key-hash",
            &bob,
            "--max-storage-bytes-per-principal",
            "30000",
            "--rate-per-second",
            "0",
        ],
    );
    let base = serve.base();
    // Each task holds the text several times (history, artifact, log):
    // a few fit, and then the quota stops alice.
    let mut created = 0;
    let refusal = loop {
        let v = send(&base, ALICE).await;
        if v.get("error").is_some() {
            break v;
        }
        // A run that grows its task past the quota fails, saying why
        // (finishing a task is never refused); the next task is refused.
        let status = &v["result"]["task"]["status"];
        match status["state"].as_str() {
            Some("TASK_STATE_COMPLETED") => {}
            Some("TASK_STATE_FAILED") => {
                let why = status["message"]["parts"][0]["text"].as_str().unwrap();
                assert!(why.contains("storage quota"), "{store}: {why}");
            }
            _ => panic!("{store}: {v}"),
        }
        created += 1;
        assert!(created < 30, "{store}: the quota never stopped alice");
    };
    assert!(created >= 1, "{store}: alice's first task fits: {refusal}");
    let error = &refusal["error"];
    assert_eq!(
        error["code"], -31429,
        "{store}: ResourceExhausted: {refusal}"
    );
    let text = error["message"].as_str().unwrap();
    assert!(text.contains("storage quota"), "{store}: {text}");
    assert!(!text.contains("bob"), "{store}: {text}");

    // Bob has his own quota; alice stays refused.
    let v = send(&base, BOB).await;
    assert!(v.get("error").is_none(), "{store}: bob is not alice: {v}");
    let v = send(&base, ALICE).await;
    assert_eq!(v["error"]["code"], -31429, "{store}: {v}");
    // What alice has is still hers to read.
    let listed = send_rpc(&base, "ListTasks", json!({}), &[("x-api-key", ALICE)])
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(listed["result"]["totalSize"], created, "{store}: {listed}");
}

/// `--memory-max-bytes` bounds the memory store in bytes: finished tasks
/// are dropped, first finished first, to keep within it, and new tasks are
/// still served.
#[tokio::test(flavor = "multi_thread")]
async fn the_memory_store_drops_finished_tasks_to_keep_its_byte_bound() {
    let alice = format!("{}=alice", switchboard_auth::hash_api_key(ALICE));
    let serve = Serve::start_with(
        "memory",
        &[
            "--api-key-hash",
            &alice,
            "--memory-max-bytes",
            "60000",
            "--rate-per-second",
            "0",
        ],
    );
    let base = serve.base();
    let mut ids = Vec::new();
    for _ in 0..20 {
        let v = send(&base, ALICE).await;
        let task = &v["result"]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
        ids.push(task["id"].as_str().unwrap().to_string());
    }
    let get = async |id: &str| {
        send_rpc(&base, "GetTask", json!({"id": id}), &[("x-api-key", ALICE)])
            .await
            .json::<Value>()
            .await
            .unwrap()
    };
    let first = get(&ids[0]).await;
    assert_eq!(
        first["error"]["code"], -32001,
        "the oldest is dropped: {first}"
    );
    let last = get(&ids[19]).await;
    assert!(last.get("error").is_none(), "the newest is kept: {last}");
    let listed = send_rpc(&base, "ListTasks", json!({}), &[("x-api-key", ALICE)])
        .await
        .json::<Value>()
        .await
        .unwrap();
    let kept = listed["result"]["totalSize"].as_u64().unwrap();
    assert!((1..20).contains(&kept), "{listed}");
}
