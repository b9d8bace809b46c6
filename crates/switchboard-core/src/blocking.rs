//! # Blocking work in an agent
//!
//! An agent's `execute` runs on the runtime's worker threads, which every
//! connection and every other run share. Code that blocks there — `std::fs`,
//! a CPU-bound loop, a synchronous client library — holds a worker for as
//! long as it takes: a few such runs and the server stops answering
//! anyone, cancel requests included.
//!
//! [`TaskEvents::spawn_blocking`] is the way out: it runs a closure on
//! tokio's blocking pool and hands it a [`BlockingRun`], which carries the
//! run into synchronous code:
//!
//! - [`BlockingRun::check`] between two steps of the work: `Err(Cancelled)`
//!   once the task was canceled (or the server is shutting down), so `?`
//!   stops the work where it stands;
//! - [`BlockingRun::block_on`] for the run's async calls (progress,
//!   statuses, artifacts) from the blocking thread;
//! - [`BlockingRun::events`] for the rest of the run's handle.
//!
//! `spawn_blocking` resolves with the closure's value, or with
//! [`BlockingError::Cancelled`] as soon as the run is cancelled, without
//! waiting for the closure: the agent answers the cancel at once, and the
//! closure ends at its next `check`. A closure that never checks runs to its
//! end on the pool, unseen.
//!
//! ```
//! use switchboard_core::{BoxError, agent_fn};
//!
//! let agent = agent_fn(|ctx, events| async move {
//!     let dir = ctx.text();
//!     let names = events
//!         .spawn_blocking(move |run| -> Result<usize, BoxError> {
//!             let files = run.block_on(run.events().progress().tracker("files").start())?;
//!             let mut n = 0;
//!             for entry in std::fs::read_dir(&dir)? {
//!                 run.check()?; // stop here once the task is canceled
//!                 let _ = entry?;
//!                 n += 1;
//!                 run.block_on(files.advance(1))?;
//!             }
//!             Ok(n)
//!         })
//!         .await??;
//!     events.artifact_text("count", names.to_string()).await?;
//!     Ok(())
//! });
//! # let _ = agent;
//! ```
//!
//! Returning the `Cancelled` error from `execute` changes nothing: the task
//! is canceled already, and a run cut short by a shutdown is failed as such.

use std::future::Future;

use crate::events::TaskEvents;

/// Why [`TaskEvents::spawn_blocking`] has no value to give.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BlockingError {
    /// The run was cancelled (task canceled, or server shutting down)
    /// before the work returned; the work stops at its next
    /// [`BlockingRun::check`].
    #[error("the run was cancelled before its blocking work finished")]
    Cancelled,
    /// The work panicked; the message, when it was a string.
    #[error("the run's blocking work panicked: {0}")]
    Panicked(String),
}

/// [`BlockingRun::check`]'s answer once the run is cancelled.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the run was cancelled")]
pub struct Cancelled;

/// A run, as blocking code on the pool sees it; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct BlockingRun {
    events: TaskEvents,
    runtime: tokio::runtime::Handle,
}

impl BlockingRun {
    /// The run's handle: `is_cancelled`, progress, everything it emits
    /// (its async methods through [`Self::block_on`]).
    pub fn events(&self) -> &TaskEvents {
        &self.events
    }

    /// `true` once the task was canceled or the server is shutting down.
    pub fn is_cancelled(&self) -> bool {
        self.events.is_cancelled()
    }

    /// `Err(Cancelled)` once the run is cancelled: call it between two
    /// steps of the work and stop with `?`.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }

    /// Runs one of the run's async calls (a progress update, a status, an
    /// artifact) to its end from the blocking thread. Only there: called on
    /// a runtime worker (inside an async block), tokio refuses it with a
    /// panic, as it does any nested `block_on`.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}

impl TaskEvents {
    /// Runs `work` on tokio's blocking pool, so that blocking code (file
    /// walks, CPU-bound loops, synchronous clients) never holds a runtime
    /// worker; resolves with its value, or with
    /// [`BlockingError::Cancelled`] as soon as the run is cancelled. See
    /// [`crate::blocking`].
    pub async fn spawn_blocking<T, F>(&self, work: F) -> Result<T, BlockingError>
    where
        F: FnOnce(BlockingRun) -> T + Send + 'static,
        T: Send + 'static,
    {
        if self.is_cancelled() {
            return Err(BlockingError::Cancelled);
        }
        let run = BlockingRun {
            events: self.clone(),
            runtime: tokio::runtime::Handle::current(),
        };
        let handle = tokio::task::spawn_blocking(move || work(run));
        tokio::select! {
            done = handle => done.map_err(|e| match e.try_into_panic() {
                Ok(payload) => BlockingError::Panicked(panic_message(payload.as_ref())),
                // Blocking tasks are not aborted; only a runtime shutting
                // down drops one, which cancels the run too.
                Err(_) => BlockingError::Cancelled,
            }),
            () = self.cancelled() => Err(BlockingError::Cancelled),
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(not a string)".into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::sync::mpsc;
    use std::time::Duration;

    use switchboard_protocol::{
        AgentCard, CancelTaskRequest, GetTaskRequest, Message, SendMessageConfiguration,
        SendMessageRequest, SendMessageResponse, TaskState,
    };

    use crate::{BoxError, CallContext, RequestHandler, agent_fn};

    fn send(text: &str) -> SendMessageRequest {
        let mut req = SendMessageRequest::new(Message::user_text(text));
        req.configuration = Some(SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        });
        req
    }

    /// A blocking loop that only checks for cancel: canceling the task
    /// answers at once (the agent is not waiting for the loop), and the loop
    /// itself ends at its next check.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cancel_ends_the_wait_and_the_blocking_work() {
        let (started_tx, started) = mpsc::channel::<()>();
        let (ended_tx, ended) = mpsc::channel::<Result<u64, String>>();
        let agent = agent_fn(move |_ctx, events| {
            let (started_tx, ended_tx) = (started_tx.clone(), ended_tx.clone());
            async move {
                events.working("spinning").await?;
                let waited = events
                    .spawn_blocking(move |run| {
                        let _ = started_tx.send(());
                        let mut spins = 0u64;
                        let end = loop {
                            if let Err(e) = run.check() {
                                break Err(e.to_string());
                            }
                            spins += 1;
                            std::thread::yield_now();
                        };
                        let _ = ended_tx.send(end.map(|()| spins));
                    })
                    .await;
                Err::<(), BoxError>(Box::new(waited.expect_err("cancelled, not finished")))
            }
        });
        let h = RequestHandler::builder(agent, AgentCard::new("a", "a", "1.0")).build();
        let call = CallContext::anonymous();
        let SendMessageResponse::Task(task) = h.send_message(&call, send("go")).await.unwrap()
        else {
            panic!("a task")
        };
        tokio::task::spawn_blocking(move || started.recv_timeout(Duration::from_secs(60)))
            .await
            .unwrap()
            .expect("the work started");
        let cancel = CancelTaskRequest {
            tenant: None,
            id: task.id.clone(),
            metadata: None,
        };
        let canceled = h.cancel_task(&call, cancel).await.unwrap();
        assert_eq!(canceled.status.state, TaskState::Canceled);
        let end = tokio::task::spawn_blocking(move || ended.recv_timeout(Duration::from_secs(60)))
            .await
            .unwrap()
            .expect("the blocking work ended after the cancel");
        assert_eq!(end, Err("the run was cancelled".to_string()));
        // The run's error after the cancel leaves the task canceled.
        let get = GetTaskRequest {
            tenant: None,
            id: task.id,
            history_length: None,
        };
        let got = h.get_task(&call, get).await.unwrap();
        assert_eq!(got.status.state, TaskState::Canceled);
    }

    /// The work's value, or its panic as an error the agent can return.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_value_or_the_panic_comes_back() {
        let agent = agent_fn(|ctx, events| async move {
            let text = ctx.text();
            let answer = events
                .spawn_blocking(move |_run| {
                    if text == "panic" {
                        panic!("boom");
                    }
                    text.len()
                })
                .await?;
            events.artifact_text("len", answer.to_string()).await?;
            Ok(())
        });
        let h = RequestHandler::builder(agent, AgentCard::new("a", "a", "1.0")).build();
        let call = CallContext::anonymous();
        let mut req = send("four");
        req.configuration = None;
        let SendMessageResponse::Task(done) = h.send_message(&call, req).await.unwrap() else {
            panic!("a task")
        };
        assert_eq!(done.status.state, TaskState::Completed);
        assert_eq!(done.artifacts()[0].text(), "4");
        let mut req = send("panic");
        req.configuration = None;
        let SendMessageResponse::Task(failed) = h.send_message(&call, req).await.unwrap() else {
            panic!("a task")
        };
        assert_eq!(failed.status.state, TaskState::Failed);
        let why = failed.status.message.map(|m| m.text()).unwrap_or_default();
        assert!(why.contains("boom"), "{why}");
    }
}
