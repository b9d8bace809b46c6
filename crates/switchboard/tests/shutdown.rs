//! Graceful shutdown of the real `switchboard serve` (issue "durability",
//! item 4): on SIGTERM the server stops accepting, lets running tasks reach
//! a terminal or interrupted state within its grace period (10 s), ends open
//! streams cleanly with their final event, and exits 0. A run cut short is
//! failed with the reason ("the server shut down…"), never called completed. Nothing it showed is
//! lost: after a restart on the same SQLite file, the task's log holds the
//! stream's events unchanged and the task is finished.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use proc::{Serve, log_replay, send_rpc};
use serde_json::{Value, json};
use switchboard_client::protocol::{StreamResponse, TaskState};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_settles_running_tasks_and_ends_streams_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("sb.db").display());
    let mut server = Serve::start(&store);
    let port = server.port;
    let base = server.base();

    // A task that would work for 60 s, streamed.
    let params = json!({"message": {"messageId": "m-long", "role": "ROLE_USER",
        "parts": [{"text": "/long 60"}]}});
    let resp = send_rpc(&base, "SendStreamingMessage", params, &[]).await;
    assert_eq!(resp.status(), 200);
    let mut events = resp.bytes_stream().eventsource();
    let mut seen: Vec<(u64, StreamResponse)> = Vec::new();
    // Read until the task is working.
    while let Some(ev) = events.next().await {
        let ev = ev.unwrap();
        let v: Value = serde_json::from_str(&ev.data).unwrap();
        let event: StreamResponse = serde_json::from_value(v["result"].clone()).unwrap();
        let working = event.state() == Some(TaskState::Working);
        seen.push((ev.id.parse().unwrap(), event));
        if working {
            break;
        }
    }
    let task_id = match &seen[0].1 {
        StreamResponse::Task(t) => t.id.clone(),
        other => panic!("a stream starts with the task: {other:?}"),
    };

    // SIGTERM: the process must exit 0 well within its 10 s grace period
    // (the agent stops when told to), and the stream must end by itself,
    // its last event terminal, not be cut.
    let asked = Instant::now();
    let reader = tokio::spawn(async move {
        let mut rest = Vec::new();
        while let Some(ev) = events.next().await {
            let ev = ev.expect("the stream ends cleanly, not with an error");
            let v: Value = serde_json::from_str(&ev.data).unwrap();
            assert!(v.get("error").is_none(), "{v}");
            let event: StreamResponse = serde_json::from_value(v["result"].clone()).unwrap();
            rest.push((ev.id.parse::<u64>().unwrap(), event));
        }
        rest
    });
    let exited = tokio::task::spawn_blocking(move || {
        let ok = server.terminate(Duration::from_secs(15));
        (ok, server)
    });
    let rest = tokio::time::timeout(Duration::from_secs(15), reader)
        .await
        .expect("the stream ended within the grace period")
        .unwrap();
    let (ok, server) = exited.await.unwrap();
    assert!(ok, "serve exited 0 after SIGTERM");
    let took = asked.elapsed();
    assert!(took < Duration::from_secs(12), "shutdown took {took:?}");
    drop(server);
    seen.extend(rest);
    // The demo agent stops when told to; cut short, its task is failed
    // with the reason, never reported completed.
    let last = &seen.last().unwrap().1;
    let StreamResponse::StatusUpdate(update) = last else {
        panic!("the stream ends with a status update: {last:?}")
    };
    assert_eq!(update.status.state, TaskState::Failed, "{last:?}");
    let why = serde_json::to_string(&update.status.message).unwrap();
    assert!(why.contains("server shut down"), "{why}");
    let seqs: Vec<u64> = seen.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "every event once, in order"
    );
    // Nothing is accepted any more: the port is closed.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());

    // Restart on the same file: the log is exactly what the stream showed,
    // and the task stays finished (not failed as abandoned: it settled).
    let server = Serve::start(&store);
    let log = log_replay(&server.base(), &task_id, u64::MAX).await;
    assert_eq!(log.len(), seen.len(), "log {log:?}");
    for ((a, ea), (b, eb)) in log.iter().zip(&seen) {
        assert_eq!(a, b);
        assert_eq!(
            serde_json::to_value(ea).unwrap(),
            serde_json::to_value(eb).unwrap(),
            "event {a}"
        );
    }
}
