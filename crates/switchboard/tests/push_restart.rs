//! At-least-once across a crash: the real `switchboard serve` on a SQLite
//! file queues notifications for a receiver that answers 503, is killed
//! with SIGKILL mid-backlog, and restarts on the same file; once the
//! receiver recovers, every event of every task arrives (0 lost), each
//! signed with a key the restarted server still publishes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;
mod push_receiver;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc::{Serve, rpc};
use push_receiver::Receiver;
use serde_json::json;
use switchboard_client::push::PushVerifier;

/// `serve` on `dir/push.db`, with retries fast enough for a test.
fn start_serve(dir: &Path) -> Serve {
    let store = format!("sqlite://{}", dir.join("push.db").display());
    Serve::start_configured(
        dir,
        "serve",
        &store,
        "push_retry_base_ms = 50\npush_retry_max_ms = 200\npush_lease_secs = 2\npush_max_attempts = 1000\n",
        &["--push-allow-host", "127.0.0.1"],
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_mid_backlog_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start().await;
    // The first few get through, then the receiver fails for a while.
    rx.answer(503);
    rx.accept_next(5);

    let serve = start_serve(dir.path());
    let mut tasks = Vec::new();
    for i in 0..6 {
        let r = rpc(
            &serve.base(),
            "SendMessage",
            json!({"message": {"messageId": format!("m{i}"), "role": "ROLE_USER",
                               "parts": [{"text": "/steps 3"}]},
                   "configuration": {"taskPushNotificationConfig": {"url": rx.url()}}}),
        )
        .await;
        assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        tasks.push(r["task"]["id"].as_str().unwrap().to_string());
    }
    // Let a few deliveries and failed attempts happen, then crash.
    rx.wait_refused(10, 20).await;
    let before_kill = rx.accepted().len();
    assert!(before_kill >= 1, "some were delivered before the crash");
    serve.kill();

    // The receiver recovers while the server is down; the server comes back.
    rx.answer(200);
    let serve = start_serve(dir.path());
    let complete = |got: &[push_receiver::Received]| {
        let mut seqs: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
        for r in got {
            let v = r.json();
            let done = v["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED";
            let e = seqs.entry(r.task_id()).or_default();
            e.insert(e.len() as u64);
            if done {
                e.insert(u64::MAX);
            }
        }
        tasks
            .iter()
            .all(|t| seqs.get(t).is_some_and(|s| s.contains(&u64::MAX)))
    };
    let got = rx.wait_until(60, "backlog after restart", complete).await;

    // Every task: contiguous 1..=last, ending with its completion, in
    // order per task (duplicates allowed: at-least-once).
    let verifier = PushVerifier::from_jwks_url(serve.jwks_url(), rx.url());
    let mut per_task: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for r in &got {
        let v = verifier.verify(&r.headers, &r.body).await.unwrap();
        per_task
            .entry(v.claims.task_id)
            .or_default()
            .push(v.claims.seq);
    }
    let mut total = 0;
    for t in &tasks {
        let seqs = &per_task[t];
        let mut ordered = seqs.clone();
        ordered.dedup();
        assert!(
            ordered.windows(2).all(|w| w[0] < w[1]),
            "task {t}: in order ({seqs:?})"
        );
        let last = *ordered.last().unwrap();
        assert_eq!(
            ordered,
            (1..=last).collect::<Vec<_>>(),
            "task {t}: every event, none lost"
        );
        total += ordered.len();
    }
    println!(
        "push restart: {} tasks, {total} events, {} deliveries ({} before the kill), 0 lost",
        tasks.len(),
        got.len(),
        before_kill
    );
    serve.kill();
}
