//! Commit throughput of the SQLite store: `cargo run --release -p
//! switchboard-store-sqlite --example commit_bench -- [PATH] [CONCURRENCY] [TASKS]`.
//!
//! Each of CONCURRENCY workers creates tasks the way a blocking SendMessage
//! does (submitted, working, artifact-free completion: three commits, each
//! awaited before the next) until TASKS tasks are done, then prints tasks/s
//! and commits/s for `synchronous=FULL` and `NORMAL`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use chrono::Utc;
use switchboard_core::{StoreError, TaskRecord, TaskStore};
use switchboard_protocol::{
    Message, StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use switchboard_store_sqlite::{SqliteOptions, SqliteStore};

async fn one_task(store: &SqliteStore, id: String) -> Result<(), StoreError> {
    let mut r = TaskRecord {
        tenant: String::new(),
        owner: "bench".into(),
        task: Task {
            id: id.clone(),
            context_id: format!("ctx-{id}"),
            status: TaskStatus::new(TaskState::Submitted),
            artifacts: Some(vec![]),
            history: Some(vec![
                Message::user_text("hello, benchmark").with_task_id(&id),
            ]),
            metadata: None,
        },
        last_seq: 1,
        created_at: Utc::now(),
    };
    store
        .commit(&r, Some(&StreamResponse::Task(r.task.clone())))
        .await?;
    for (seq, state) in [(2, TaskState::Working), (3, TaskState::Completed)] {
        r.task.status = TaskStatus::new(state);
        r.last_seq = seq;
        let ev = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: id.clone(),
            context_id: r.task.context_id.clone(),
            status: r.task.status.clone(),
            metadata: None,
        });
        store.commit(&r, Some(&ev)).await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).cloned().unwrap_or_else(|| "/tmp".into());
    let concurrency: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(64);
    let tasks: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(5000);
    for full in [true, false] {
        let path = format!("{dir}/commit-bench-{}.db", std::process::id());
        let options = SqliteOptions {
            synchronous_full: full,
            ..Default::default()
        };
        let store = Arc::new(SqliteStore::open_with(&path, options).await?);
        let next = Arc::new(AtomicUsize::new(0));
        let start = Instant::now();
        let mut workers = Vec::new();
        for _ in 0..concurrency {
            let (store, next) = (Arc::clone(&store), Arc::clone(&next));
            workers.push(tokio::spawn(async move {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= tasks {
                        return Ok::<(), StoreError>(());
                    }
                    one_task(&store, format!("task-{n}")).await?;
                }
            }));
        }
        for w in workers {
            w.await??;
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "synchronous={} concurrency={concurrency}: {tasks} tasks in {secs:.2}s = {:.0} tasks/s, {:.0} commits/s",
            if full { "FULL" } else { "NORMAL" },
            tasks as f64 / secs,
            3.0 * tasks as f64 / secs
        );
        if let Ok(store) = Arc::try_unwrap(store) {
            store.close().await;
        }
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{path}{suffix}"));
        }
    }
    Ok(())
}
