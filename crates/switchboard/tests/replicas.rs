//! Two `switchboard serve` replicas on one PostgreSQL database.
//!
//! A task started on replica A is streamed, read, listed and cancelled
//! through replica B; then A is killed (SIGKILL) mid-task, B fails the
//! orphan within the lease time, and a client that was streaming from A
//! resumes on B with `Last-Event-ID`, seeing no gap and no duplicate.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use proc::{Serve, rpc, send_rpc};
use serde_json::{Value, json};
use switchboard_protocol::Message;

/// The lease the replicas run with: short, so the orphan test is quick.
const LEASE_MS: u64 = 1_500;

/// A replica on `store`.
fn start_replica(store: &str) -> Serve {
    Serve::start_with(store, &["--replica-lease-ms", &LEASE_MS.to_string()])
}

/// Starts `/long 60` without waiting for it; returns the task id.
async fn start_long_task(base: &str) -> String {
    let r = rpc(
        base,
        "SendMessage",
        json!({
            "message": Message::user_text("/long 60"),
            "configuration": {"returnImmediately": true}
        }),
    )
    .await;
    r["task"]["id"].as_str().unwrap().to_string()
}

/// One SSE frame: its id (the event's sequence number) and JSON-RPC result.
#[derive(Debug, Clone)]
struct Frame {
    seq: u64,
    result: Value,
}

impl Frame {
    fn state(&self) -> Option<&str> {
        self.result
            .get("statusUpdate")
            .or_else(|| self.result.get("task"))
            .and_then(|v| v["status"]["state"].as_str())
    }
}

/// Opens SubscribeToTask on `base` (resuming after `after`, if given) and
/// forwards frames to the returned channel until the stream ends or breaks.
async fn subscribe(
    base: &str,
    task_id: &str,
    after: Option<u64>,
) -> tokio::sync::mpsc::UnboundedReceiver<Frame> {
    let after = after.map(|seq| seq.to_string());
    let mut headers = vec![("Accept", "text/event-stream")];
    if let Some(after) = &after {
        headers.push(("Last-Event-ID", after));
    }
    let resp = send_rpc(base, "SubscribeToTask", json!({"id": task_id}), &headers).await;
    assert_eq!(resp.status(), 200);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut events = resp.bytes_stream().eventsource();
        while let Some(Ok(ev)) = events.next().await {
            let v: Value = serde_json::from_str(&ev.data).unwrap();
            assert!(v.get("error").is_none(), "stream error: {v}");
            let frame = Frame {
                seq: ev.id.parse().unwrap(),
                result: v["result"].clone(),
            };
            if tx.send(frame).is_err() {
                return;
            }
        }
    });
    rx
}

/// Receives frames until one satisfies `done` (returned last) or the
/// stream ends; panics after `within`.
async fn until(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Frame>,
    within: Duration,
    mut done: impl FnMut(&Frame) -> bool,
) -> Vec<Frame> {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Err(_) => panic!("timed out; frames so far: {out:?}"),
            Ok(None) => return out,
            Ok(Some(f)) => {
                let stop = done(&f);
                out.push(f);
                if stop {
                    return out;
                }
            }
        }
    }
}

/// Reads `rx` until the status update that reports step `step` of the
/// long task ("working: {step}/…").
async fn until_step(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Frame>, step: u32) -> Vec<Frame> {
    let prefix = format!("working: {step}/");
    until(rx, Duration::from_secs(10), |f| {
        f.result["statusUpdate"]["status"]["message"]["parts"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with(&prefix))
    })
    .await
}

fn assert_contiguous(frames: &[Frame], from: u64) {
    let seqs: Vec<u64> = frames.iter().map(|f| f.seq).collect();
    let expected: Vec<u64> = (from..from + seqs.len() as u64).collect();
    assert_eq!(seqs, expected, "no gap, no duplicate");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_share_tasks_cancel_and_fail_orphans() {
    let Some(url) =
        switchboard_store_postgres::testing::fresh_database_or_skip("two_replicas").await
    else {
        return;
    };
    let a = start_replica(&url);
    let b = start_replica(&url);

    // --- A task on A, streamed, read, listed and cancelled through B. ---
    let task = start_long_task(&a.base()).await;
    let mut on_a = subscribe(&a.base(), &task, None).await;
    let mut on_b = subscribe(&b.base(), &task, None).await;
    // B's subscribers hear A's statuses (announced with NOTIFY).
    let seen_b = until_step(&mut on_b, 3).await;
    assert_contiguous(&seen_b, seen_b[0].seq);
    assert!(
        seen_b[0].result.get("task").is_some(),
        "the task comes first"
    );

    let got = rpc(&b.base(), "GetTask", json!({"id": task})).await;
    assert_eq!(got["status"]["state"], "TASK_STATE_WORKING");
    for base in [a.base(), b.base()] {
        let list = rpc(&base, "ListTasks", json!({})).await;
        assert!(
            list["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["id"] == task.as_str()),
            "listed on {base}: {list}"
        );
    }

    let canceled = rpc(&b.base(), "CancelTask", json!({"id": task})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    // Both replicas' subscribers see the cancellation, in order, and their
    // streams end there.
    for (name, rx) in [("A", &mut on_a), ("B", &mut on_b)] {
        let rest = until(rx, Duration::from_secs(10), |f| {
            f.state() == Some("TASK_STATE_CANCELED")
        })
        .await;
        assert_eq!(
            rest.last().and_then(Frame::state),
            Some("TASK_STATE_CANCELED"),
            "{name}: {rest:?}"
        );
        assert!(
            until(rx, Duration::from_secs(5), |_| false)
                .await
                .is_empty(),
            "{name}: the stream ends at the terminal event"
        );
    }
    // The agent on A was stopped: the task never changes again.
    let before = rpc(&a.base(), "GetTask", json!({"id": task})).await;
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let after = rpc(&a.base(), "GetTask", json!({"id": task})).await;
    assert_eq!(before, after, "a canceled task stays as it is");
    assert_eq!(after["status"]["state"], "TASK_STATE_CANCELED");

    // --- A dies mid-task: B fails the orphan, a stream resumes on B. ---
    let orphan = start_long_task(&a.base()).await;
    let mut on_a = subscribe(&a.base(), &orphan, None).await;
    let seen_a = until_step(&mut on_a, 4).await;
    assert_contiguous(&seen_a, seen_a[0].seq);
    // The client's connection broke earlier than A's last commit: it last
    // saw the first status, so B must replay the rest from the log.
    let last_seen = seen_a[1].seq;
    assert!(last_seen < seen_a.last().unwrap().seq);
    let killed_at = Instant::now();
    a.kill();

    let mut resumed = subscribe(&b.base(), &orphan, Some(last_seen)).await;
    let rest = until(&mut resumed, Duration::from_secs(20), |f| {
        f.state() == Some("TASK_STATE_FAILED")
    })
    .await;
    let failed_after = killed_at.elapsed();
    // Everything A committed after what the client saw, then the failure.
    assert_contiguous(&rest, last_seen + 1);
    let last = rest.last().unwrap();
    assert_eq!(last.state(), Some("TASK_STATE_FAILED"), "{rest:?}");
    let why = last.result["statusUpdate"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(why.contains("lease expired"), "{why}");
    // The lease (1.5 s) plus a sweep (lease / 4) plus the renewal period
    // the dead replica had already paid for: well within 3 leases.
    assert!(
        failed_after < Duration::from_millis(3 * LEASE_MS + 2_000),
        "orphan failed after {failed_after:?}"
    );
    let got = rpc(&b.base(), "GetTask", json!({"id": orphan})).await;
    assert_eq!(got["status"]["state"], "TASK_STATE_FAILED");
    eprintln!(
        "replicas: streamed+cancelled across replicas; orphan failed {failed_after:?} after SIGKILL; resumed at seq {} with {} frames, no gap",
        last_seen + 1,
        rest.len()
    );
    drop(b);
}

/// Starts `/long 60` on `base` and returns the whole JSON-RPC answer (a
/// task, or the quota's refusal).
async fn try_long_task(base: &str) -> Value {
    proc::call(
        base,
        "SendMessage",
        json!({"message": Message::user_text("/long 60"),
               "configuration": {"returnImmediately": true}}),
    )
    .await
}

/// Starts `/long 60` on `base` until it is admitted (a place is given back
/// asynchronously), for at most `within`; returns the task id.
async fn long_task_once_admitted(base: &str, within: Duration, what: &str) -> String {
    let deadline = Instant::now() + within;
    loop {
        let v = try_long_task(base).await;
        if let Some(id) = v["result"]["task"]["id"].as_str() {
            return id.to_string();
        }
        assert!(Instant::now() < deadline, "{what}: {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The concurrent-task quota is one count over all replicas: a caller with a
/// quota of 2 and one task on each replica is refused a third on either; a
/// task that ends frees its place for either replica; and the places held by
/// a replica killed mid-task come back once its lease and row expire.
#[tokio::test(flavor = "multi_thread")]
async fn the_concurrent_task_quota_is_counted_across_replicas() {
    let Some(url) =
        switchboard_store_postgres::testing::fresh_database_or_skip("replicas_share_quota").await
    else {
        return;
    };
    let flags = [
        "--replica-lease-ms",
        &LEASE_MS.to_string(),
        "--max-active-tasks-per-principal",
        "2",
        "--share-active-tasks",
    ];
    let a = Serve::start_with(&url, &flags);
    let b = Serve::start_with(&url, &flags);
    let refused = |base: String| async move {
        let v = try_long_task(&base).await;
        let message = v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            v.get("result").is_none() && message.contains("concurrent tasks"),
            "expected the concurrent-task quota's refusal, got {v}"
        );
    };
    let on_a = start_long_task(&a.base()).await;
    let _on_b = start_long_task(&b.base()).await;
    refused(a.base()).await;
    refused(b.base()).await;

    // A's task ends (cancelled through B): its place is free on B too (the
    // run on A gives it back as it ends, just after the cancel).
    let canceled = rpc(&b.base(), "CancelTask", json!({"id": on_a})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    let third = long_task_once_admitted(
        &b.base(),
        Duration::from_secs(10),
        "the place never came back",
    )
    .await;
    refused(a.base()).await;

    // B dies holding both places; A fails its orphans and, once B's row has
    // expired too, gives its places back.
    b.kill();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = rpc(&a.base(), "GetTask", json!({"id": third})).await;
        if got["status"]["state"] == "TASK_STATE_FAILED" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the orphan was never failed: {got}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for _ in 0..2 {
        long_task_once_admitted(
            &a.base(),
            Duration::from_secs(30),
            "B's places never came back",
        )
        .await;
    }
    refused(a.base()).await;
}
