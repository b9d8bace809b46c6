//! The crash test (issue 5): under concurrent load, `kill -9` the real
//! `switchboard serve`, restart it on the same store, and check that every
//! task and every event any client saw acknowledged is still there.
//!
//! "Acknowledged" is what a client received: a blocking `SendMessage`
//! reply (the task in the state it reported), or an SSE frame of a
//! streaming send (event `seq` of a task, with its payload). The server
//! promises that nothing is shown before it is durable, so after the crash
//! GetTask must return each acknowledged task in (at least) its
//! acknowledged state, and the task's log, replayed from event 0, must hold
//! each acknowledged event unchanged. The test prints
//! `crash: acknowledged tasks=… events=…, lost=…` and requires lost = 0.
//!
//! Runs on SQLite and on PostgreSQL (a throwaway server from
//! `switchboard_store_postgres::testing`; skipped when none can be started,
//! unless `SWITCHBOARD_REQUIRE_POSTGRES` is set).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use proc::{Serve, log_replay};
use switchboard_client::protocol::{Message, SendMessageResponse, StreamResponse, Task};
use switchboard_client::{A2AClient, ClientError};
use tokio::sync::watch;

/// Concurrent clients.
const CLIENTS: usize = 8;
/// Items (streamed events and blocking replies) the clients are shown
/// before the kill: the load is well under way, and there is plenty that
/// must survive it.
const ACKED_BEFORE_KILL: usize = 400;

/// What the clients were shown before the crash.
#[derive(Default)]
struct Acked {
    /// Blocking replies: the task as the reply showed it.
    replies: BTreeMap<String, Task>,
    /// Streamed events: task id → seq → payload.
    events: BTreeMap<String, BTreeMap<u64, StreamResponse>>,
}

/// One client: alternates streaming and blocking sends until the server
/// dies (its first error) or the test stops it.
async fn client_loop(
    base: String,
    n: usize,
    acked: Arc<Mutex<Acked>>,
    shown: Arc<watch::Sender<usize>>,
    stop: Arc<AtomicBool>,
) -> Result<(), ClientError> {
    // Half the clients use each binding; no reconnection: a dead server
    // must end the load, not be waited for.
    let binding = if n.is_multiple_of(2) {
        "JSONRPC"
    } else {
        "HTTP+JSON"
    };
    let client = A2AClient::builder()
        .preferred_bindings([binding])
        .no_reconnect()
        .connect(&base)
        .await?;
    let mut round = 0u32;
    while !stop.load(Ordering::Relaxed) {
        round += 1;
        if (n + round as usize).is_multiple_of(2) {
            let mut stream = client
                .send_streaming_message(Message::user_text("/steps 6"))
                .await?;
            while let Some(item) = stream.next().await {
                let ev = item?;
                let task = ev.event.task_id().unwrap_or_default().to_string();
                let seq = ev.seq.expect("our server numbers its events");
                acked
                    .lock()
                    .unwrap()
                    .events
                    .entry(task)
                    .or_default()
                    .insert(seq, ev.event);
                shown.send_modify(|n| *n += 1);
            }
        } else {
            match client
                .send_text(format!("/steps {}", 1 + round % 3))
                .await?
            {
                SendMessageResponse::Task(task) => {
                    acked.lock().unwrap().replies.insert(task.id.clone(), task);
                    shown.send_modify(|n| *n += 1);
                }
                other => panic!("client {n}: expected a task, got {other:?}"),
            }
        }
    }
    Ok(())
}

async fn crash_and_check(store: &str) {
    let server = Serve::start(store);
    let base = server.base();
    let acked = Arc::new(Mutex::new(Acked::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let shown = Arc::new(watch::Sender::new(0));
    let mut shown_so_far = shown.subscribe();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let client = client_loop(base.clone(), n, acked.clone(), shown.clone(), stop.clone());
            tokio::spawn(client)
        })
        .collect();
    // The answer is reduced to a bool at once: the `Ref` that `wait_for`
    // returns holds the value's lock, and the clients need it to count on.
    let loaded = tokio::time::timeout(
        Duration::from_secs(60),
        shown_so_far.wait_for(|n| *n >= ACKED_BEFORE_KILL),
    )
    .await
    .is_ok_and(|seen| seen.is_ok());
    assert!(
        loaded,
        "the clients were not shown {ACKED_BEFORE_KILL} items"
    );
    server.kill();
    stop.store(true, Ordering::Relaxed);
    let mut failed = 0;
    for c in clients {
        let ended = tokio::time::timeout(Duration::from_secs(15), c)
            .await
            .expect("a client hung after the kill")
            .unwrap();
        // The kill cut most clients mid-request; that is the point.
        failed += usize::from(ended.is_err());
    }

    let server = Serve::start(store);
    let base = server.base();
    let client = A2AClient::connect(&base).await.unwrap();
    let acked = std::mem::take(&mut *acked.lock().unwrap());
    let mut lost = 0usize;
    let mut tasks = 0usize;
    let mut events = 0usize;
    for (id, shown) in &acked.replies {
        tasks += 1;
        match client.get_task(id.as_str()).await {
            Ok(now) => {
                if now.status.state != shown.status.state || now.artifacts() != shown.artifacts() {
                    eprintln!("task {id}: acknowledged {shown:?}, after the crash {now:?}");
                    lost += 1;
                }
            }
            Err(e) => {
                eprintln!("task {id} (acknowledged by a reply) is gone: {e}");
                lost += 1;
            }
        }
    }
    for (id, shown) in &acked.events {
        tasks += 1;
        events += shown.len();
        if let Err(e) = client.get_task(id.as_str()).await {
            eprintln!(
                "task {id} (acknowledged by {} events) is gone: {e}",
                shown.len()
            );
            lost += 1 + shown.len();
            continue;
        }
        let upto = shown.keys().max().copied().unwrap_or(0);
        let log: BTreeMap<u64, StreamResponse> =
            log_replay(&base, id, upto).await.into_iter().collect();
        for (seq, event) in shown {
            if log.get(seq) != Some(event) {
                eprintln!(
                    "task {id}: acknowledged event {seq} {event:?}, in the log {:?}",
                    log.get(seq)
                );
                lost += 1;
            }
        }
    }
    println!(
        "crash: acknowledged tasks={tasks} events={events}, lost={lost} \
         ({failed} of {CLIENTS} clients cut by the kill)"
    );
    // A run that acknowledged next to nothing proves nothing.
    assert!(
        acked.replies.len() >= CLIENTS && acked.events.len() >= CLIENTS,
        "too little load: {} replies, {} streams",
        acked.replies.len(),
        acked.events.len()
    );
    assert!(failed > 0, "the kill interrupted no client");
    assert_eq!(lost, 0, "acknowledged data was lost in the crash");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_loses_nothing_acknowledged_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("crash.db").display());
    crash_and_check(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_loses_nothing_acknowledged_on_postgres() {
    let Some(url) =
        switchboard_store_postgres::testing::fresh_database_or_skip("crash_postgres").await
    else {
        return;
    };
    crash_and_check(&url).await;
}
