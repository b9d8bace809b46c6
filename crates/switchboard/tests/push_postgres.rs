//! Push notifications with the real `switchboard serve` on PostgreSQL (two
//! replicas sharing one database) and on SQLite: deliveries arrive in order
//! and verify against either replica's JWKS; dead letters are logged, listed
//! by `switchboard push dead-letters` and requeued by `switchboard push retry`;
//! and the shared signing key set rotates for every replica.
//!
//! The PostgreSQL tests skip without a test server unless
//! `SWITCHBOARD_REQUIRE_POSTGRES=1` (see `switchboard_store_postgres::testing`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;
mod push_receiver;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use proc::{Serve, log_replay, rpc};
use push_receiver::{Received, Receiver};
use serde_json::{Value, json};
use switchboard_client::push::PushVerifier;
use switchboard_store_postgres::{PgStore, testing};

/// `serve` on `store` as replica `name` (config and log in `dir`), with
/// retries fast enough for a test plus `extra_config`.
fn start_serve(dir: &Path, name: &str, store: &str, extra_config: &str) -> Serve {
    Serve::start_configured(
        dir,
        name,
        store,
        &format!("push_retry_base_ms = 20\npush_retry_max_ms = 100\n{extra_config}"),
        &["--push-allow-host", "127.0.0.1"],
    )
}

async fn send_with_push(base: &str, id: &str, text: &str, hook: &str) -> String {
    let r = rpc(
        base,
        "SendMessage",
        json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]},
               "configuration": {"taskPushNotificationConfig": {"url": hook}}}),
    )
    .await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    r["task"]["id"].as_str().unwrap().to_string()
}

/// Runs `switchboard push …`; returns (exit code, stdout, stderr).
fn push_cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("push")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn dead_letters(store: &str) -> Vec<Value> {
    let (code, out, err) = push_cli(&["dead-letters", "--store", store, "--json"]);
    assert_eq!(code, 0, "dead-letters failed: {err}");
    serde_json::from_str::<Vec<Value>>(&out).unwrap()
}

fn completed(got: &[Received], tasks: &[String]) -> bool {
    tasks.iter().all(|t| {
        got.iter().any(|r| {
            r.task_id() == *t
                && r.json()["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        })
    })
}

/// Waits (up to `secs`; `what` names it in a failure) until `done` holds
/// for the notifications `rx` accepted, verifies every one with the keys
/// `signer` publishes, and returns each task's sequence numbers in arrival
/// order.
async fn verified_seqs(
    rx: &Receiver,
    secs: u64,
    what: &str,
    done: impl Fn(&[Received]) -> bool,
    signer: &Serve,
) -> BTreeMap<String, Vec<u64>> {
    let got = rx.wait_until(secs, what, done).await;
    let verifier = PushVerifier::from_jwks_url(signer.jwks_url(), rx.url());
    let mut per_task: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for r in &got {
        let v = verifier
            .verify(&r.headers, &r.body)
            .await
            .unwrap_or_else(|e| panic!("a notification does not verify: {e}"));
        per_task
            .entry(v.claims.task_id)
            .or_default()
            .push(v.claims.seq);
    }
    per_task
}

/// Waits (up to `secs`; `what` names it in a failure) until every one of
/// `tasks` completed at `rx`, then asserts that each got every event, in
/// order (a repeat, a redelivery, is allowed), each one signed with
/// `signer`'s keys.
async fn assert_every_event_in_order(
    rx: &Receiver,
    secs: u64,
    what: &str,
    tasks: &[String],
    signer: &Serve,
) {
    let per_task = verified_seqs(rx, secs, what, |got| completed(got, tasks), signer).await;
    for t in tasks {
        let seqs = &per_task[t];
        let mut ordered = seqs.clone();
        ordered.dedup();
        let last = *ordered.last().unwrap();
        assert_eq!(
            ordered,
            (1..=last).collect::<Vec<_>>(),
            "task {t}: every event, in order ({seqs:?})"
        );
    }
}

/// Two replicas on one PostgreSQL database: tasks created on either reach
/// the receiver completely and in order, and every notification verifies
/// with the JWKS of replica A (the replicas share one key set).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_postgres_deliver_in_order_with_one_key_set() {
    let Some(url) = testing::fresh_database_or_skip("two_replicas_on_postgres").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = start_serve(dir.path(), "a", &url, "");
    let b = start_serve(dir.path(), "b", &url, "");
    let rx = Receiver::start().await;

    let jwks = |s: &Serve| {
        let url = s.jwks_url();
        async move { proc::get_json::<Value>(&url).await }
    };
    assert_eq!(
        jwks(&a).await,
        jwks(&b).await,
        "both replicas publish the same keys"
    );

    let mut tasks = Vec::new();
    for i in 0..4 {
        let replica = if i % 2 == 0 { &a } else { &b };
        tasks.push(send_with_push(&replica.base(), &format!("m{i}"), "/steps 3", &rx.url()).await);
    }
    assert_every_event_in_order(&rx, 30, "notifications from both replicas", &tasks, &a).await;
    assert!(
        !a.log().contains("ERROR") && !b.log().contains("ERROR"),
        "no errors logged:\n{}\n{}",
        a.log(),
        b.log()
    );
}

/// A replica killed (SIGKILL) mid-backlog loses nothing: the other replica
/// delivers the whole backlog, including what the dead one had claimed, once
/// its leases run out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_backlog_loses_nothing() {
    let Some(url) = testing::fresh_database_or_skip("a_replica_killed_mid_backlog").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let settings = "push_lease_secs = 1\npush_max_attempts = 1000\n";
    let a = start_serve(dir.path(), "a", &url, settings);
    let b = start_serve(dir.path(), "b", &url, settings);
    let rx = Receiver::start().await;
    rx.answer(503);
    rx.accept_next(3);
    let mut tasks = Vec::new();
    for i in 0..4 {
        tasks.push(send_with_push(&a.base(), &format!("k{i}"), "/steps 2", &rx.url()).await);
    }
    rx.wait_refused(8, 20).await;
    drop(a); // SIGKILL: its leases are left behind
    rx.answer(200);
    assert_every_event_in_order(&rx, 60, "backlog after a replica died", &tasks, &b).await;
}

/// The life of a dead letter through the CLI: a receiver that fails every
/// attempt makes the server dead-letter the notifications (with a `warn`
/// line); `push dead-letters` lists them; once the receiver is back,
/// `push retry --all` requeues them and the running server delivers them.
async fn dead_letters_round_trip(store: &str, dir: &Path) {
    let serve = start_serve(dir, "dl", store, "push_max_attempts = 2\n");
    let rx = Receiver::start().await;
    rx.answer(500);
    let task = send_with_push(&serve.base(), "dl-1", "/steps 2", &rx.url()).await;

    // Every event of the task (finished: the send was blocking) is
    // notified; each notification fails twice, then is dead, and the next
    // one of the config follows.
    let events = log_replay(&serve.base(), &task, u64::MAX).await.len();
    rx.wait_refused(2 * events, 30).await;
    // The last refusal is answered before its item is marked dead.
    let deadline = Instant::now() + Duration::from_secs(30);
    let dead = loop {
        let dead = dead_letters(store);
        if dead.len() == events {
            break dead;
        }
        assert!(
            Instant::now() < deadline,
            "{events} notifications were not dead-lettered: {dead:?}\n{}",
            serve.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(rx.refused(), 2 * events, "two attempts each, no more");
    let seqs: Vec<u64> = dead.iter().map(|d| d["seq"].as_u64().unwrap()).collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "every event of the task is a dead letter, oldest first"
    );
    for d in &dead {
        assert_eq!(d["taskId"], task.as_str());
        assert_eq!(d["url"], rx.url().as_str());
        assert_eq!(d["attempts"], 2, "the retry limit was used up: {d}");
        assert!(d["configId"].as_str().is_some_and(|c| !c.is_empty()));
        assert!(d["queuedAt"].as_str().is_some());
    }
    assert!(
        serve
            .log()
            .contains("push notification dead-lettered after its last attempt"),
        "a dead letter is logged at warn:\n{}",
        serve.log()
    );
    assert!(rx.accepted().is_empty());

    // The table form names the same items.
    let (code, table, _) = push_cli(&["dead-letters", "--store", store, "--limit", "1"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 2, "a header and one row (--limit 1): {table}");
    assert!(lines[1].starts_with(&format!("{}\t{task}\t", dead[0]["id"])));
    // Another tenant has none.
    let (code, out, _) = push_cli(&["dead-letters", "--store", store, "--tenant", "t2", "--json"]);
    assert_eq!((code, out.trim()), (0, "[]"));

    // An unknown id is an error (exit 1); the receiver recovers; retry all.
    let (code, _, err) = push_cli(&["retry", "--store", store, "987654321"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no such dead letter"), "{err}");
    rx.answer(200);
    let (code, out, err) = push_cli(&["retry", "--store", store, "--all"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), dead.len(), "{out}");
    assert!(dead_letters(store).is_empty(), "requeued, no longer dead");

    let per_task = verified_seqs(
        &rx,
        30,
        "requeued notifications",
        |got| got.len() >= dead.len(),
        &serve,
    )
    .await;
    assert_eq!(
        per_task[&task], seqs,
        "the requeued notifications arrive, in order"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_cli_on_postgres() {
    let Some(url) = testing::fresh_database_or_skip("dead_letters_cli_on_postgres").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    dead_letters_round_trip(&url, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_cli_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("dl.db").display());
    dead_letters_round_trip(&store, dir.path()).await;
}

#[test]
fn dead_letters_cli_refuses_missing_sqlite_files_and_lists_memory() {
    let dir = tempfile::tempdir().unwrap();
    let missing = format!("sqlite://{}", dir.path().join("typo.db").display());
    let (code, _, err) = push_cli(&["dead-letters", "--store", &missing]);
    assert_eq!(code, 2);
    assert!(err.contains("no SQLite database"), "{err}");
    assert!(!dir.path().join("typo.db").exists(), "nothing was created");
    let (code, out, _) = push_cli(&["dead-letters", "--store", "memory", "--json"]);
    assert_eq!((code, out.trim()), (0, "[]"));
    let (code, _, err) = push_cli(&["dead-letters", "--store", "redis://x"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown store"), "{err}");
}

/// The replicas' shared key set: the first replica's set is loaded by the
/// second; a rotation on one reaches the other at its next refresh, and the
/// old key stays published on both.
#[tokio::test]
async fn shared_keys_rotate_for_every_replica() {
    let Some(url) = testing::fresh_database_or_skip("shared_keys_rotate").await else {
        return;
    };
    let a = PgStore::open(&url).await.unwrap();
    let b = PgStore::open(&url).await.unwrap();
    let (keys_a, _) = switchboard_push::shared_keys::load(&a).await.unwrap();
    let (keys_b, mut version_b) = switchboard_push::shared_keys::load(&b).await.unwrap();
    let first = keys_a.current_kid();
    assert_eq!(keys_b.current_kid(), first, "b loads a's keys");

    assert!(
        !switchboard_push::shared_keys::refresh(&b, &keys_b, &mut version_b)
            .await
            .unwrap(),
        "nothing changed yet"
    );
    let rotated = switchboard_push::shared_keys::rotate(&a, &keys_a)
        .await
        .unwrap();
    assert_ne!(rotated, first);
    assert_eq!(keys_a.current_kid(), rotated);
    assert!(
        switchboard_push::shared_keys::refresh(&b, &keys_b, &mut version_b)
            .await
            .unwrap(),
        "b notices the rotation"
    );
    assert_eq!(
        keys_b.current_kid(),
        rotated,
        "b now signs with the new key"
    );
    assert_eq!(keys_b.published_kids(), [rotated.clone(), first.clone()]);
    // A replica started now loads the rotated set.
    let (keys_c, _) = switchboard_push::shared_keys::load(&PgStore::open(&url).await.unwrap())
        .await
        .unwrap();
    assert_eq!(keys_c.published_kids(), [rotated, first]);
}
