//! Runs the example as a process, as a user would: killed with SIGKILL in
//! the middle of a task and started again on the same SQLite file, it
//! fails the task whose run was lost before it answers anyone; sent
//! SIGTERM, it ends the task in flight, its stream with it, and exits 0.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use switchboard_client::A2AClient;
use switchboard_client::protocol::{Message, TaskState};

/// The example, serving on a free loopback port; killed when dropped.
struct Agent {
    child: Child,
    base: String,
}

impl Agent {
    /// Starts the example on `store` and waits for its "listening" line.
    fn start(store: &str) -> Agent {
        let mut child = Command::new(env!("CARGO_BIN_EXE_durable-agent"))
            .args([store, "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = line
            .trim()
            .rsplit(' ')
            .next()
            .filter(|u| u.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("no listening line, got {line:?}"))
            .to_string();
        Agent { child, base }
    }

    /// SIGTERM, then the exit status, waited for up to `within`; `None` if
    /// the process is still running then.
    fn terminate(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -TERM failed");
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// `kill -9`: the process gets no chance to finish anything.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_killed_with_its_process_is_failed_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("tasks.db").display());

    // A task that would work for an hour, seen working.
    let agent = Agent::start(&store);
    let client = A2AClient::connect(&agent.base).await.unwrap();
    let mut stream = client
        .send_streaming_message(Message::user_text("sleep 3600000"))
        .await
        .unwrap();
    let mut task_id = None;
    while let Some(item) = stream.next().await {
        let event = item.unwrap().event;
        task_id = event.task_id().map(str::to_string);
        if event.state() == Some(TaskState::Working) {
            break;
        }
    }
    let task_id = task_id.expect("the stream named no task");
    assert_eq!(
        client.get_task(&task_id).await.unwrap().status.state,
        TaskState::Working
    );
    agent.kill();

    // Started again on the same file, with nothing asked of it.
    let agent = Agent::start(&store);
    let client = A2AClient::connect(&agent.base).await.unwrap();
    let task = client.get_task(&task_id).await.unwrap();
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    let why = task.status.message.as_ref().map(Message::text);
    assert!(
        why.as_deref().is_some_and(|w| w.contains("run was lost")),
        "the failure says why: {why:?}"
    );

    // Subscribing to it ends (a finished task has nothing to follow)
    // instead of waiting forever for a run that is gone.
    let ended = tokio::time::timeout(Duration::from_secs(60), async {
        match client.subscribe_to_task(&task_id).await {
            Err(e) => format!("refused: {e}"),
            Ok(mut events) => {
                let mut last = None;
                while let Some(item) = events.next().await {
                    match item {
                        Ok(item) => last = item.event.state().or(last),
                        Err(e) => return format!("ended with: {e}"),
                    }
                }
                format!("ended in {last:?}")
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "SubscribeToTask on the failed task hangs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_task_in_flight_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let mut agent = Agent::start(&store);
    let client = A2AClient::connect(&agent.base).await.unwrap();
    let mut stream = client
        .send_streaming_message(Message::user_text("sleep 3600000"))
        .await
        .unwrap();
    let mut task_id = None;
    while let Some(item) = stream.next().await {
        let event = item.unwrap().event;
        task_id = event.task_id().map(str::to_string);
        if event.state() == Some(TaskState::Working) {
            break;
        }
    }
    let task_id = task_id.expect("the stream named no task");

    // The stream in flight is answered to its end: the task's final status,
    // then a clean close, not a cut connection.
    let reader = tokio::spawn(async move {
        let mut last = None;
        while let Some(item) = stream.next().await {
            let event = item
                .expect("the stream ends cleanly, not with an error")
                .event;
            last = event.state().or(last);
        }
        last
    });
    let status = tokio::task::spawn_blocking(move || {
        let status = agent.terminate(Duration::from_secs(60));
        (agent, status)
    });
    let (agent, status) = status.await.unwrap();
    let status = status.expect("still running a minute after SIGTERM");
    assert!(status.success(), "exit status after SIGTERM: {status}");
    drop(agent);
    let last = reader.await.unwrap();
    assert_eq!(last, Some(TaskState::Failed), "the stream's final state");

    // The drained task is finished in the store, not left working.
    let agent = Agent::start(&store);
    let client = A2AClient::connect(&agent.base).await.unwrap();
    let task = client.get_task(&task_id).await.unwrap();
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    let why = task.status.message.as_ref().map(Message::text);
    assert!(
        why.as_deref().is_some_and(|w| w.contains("shut down")),
        "failed as cut short by the shutdown (not as a lost run): {why:?}"
    );
}
