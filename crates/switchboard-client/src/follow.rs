//! Following one task to where it stops: the task's id and last state
//! gathered from a stream ([`Trail`]), and polling for a client that cannot
//! (or need not) hold a stream open ([`watch`]).
//!
//! A stream (`SendStreamingMessage`, `SubscribeToTask`) ends when the task
//! is terminal or interrupted (input-required, auth-required); what a
//! caller usually wants afterwards is which task it was and how it ended.
//! A [`Trail`] observes each event and keeps exactly that:
//!
//! ```no_run
//! # async fn run(client: switchboard_client::A2AClient) -> Result<(), switchboard_client::ClientError> {
//! use futures::StreamExt;
//! use switchboard_client::follow::Trail;
//!
//! let mut events = client.subscribe_to_task("task-1").await?;
//! let mut trail = Trail::default();
//! while let Some(item) = events.next().await {
//!     trail.observe(&item?.event);
//! }
//! println!("{:?} ended {:?}", trail.task_id, trail.state);
//! # Ok(()) }
//! ```
//!
//! [`watch`] asks `GetTask` again after each pause and yields every answer;
//! the stream ends after the first answer in which the task is terminal or
//! interrupted, or after the first error.

use std::time::Duration;

use futures::Stream;
use switchboard_protocol::{GetTaskRequest, StreamResponse, Task, TaskState};

use crate::{A2AClient, ClientError};

/// What a task's events said so far: which task, and its last state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Trail {
    /// The task's id, from the first event that names one.
    pub task_id: Option<String>,
    /// The last state an event carried.
    pub state: Option<TaskState>,
}

impl Trail {
    /// Takes in one event of the task's stream.
    pub fn observe(&mut self, event: &StreamResponse) {
        if let Some(state) = event.state() {
            self.state = Some(state);
        }
        if self.task_id.is_none() {
            self.task_id = event
                .task_id()
                .filter(|t| !t.is_empty())
                .map(str::to_string);
        }
    }
}

/// The task as `GetTask` answers it now and after each `pause`, until it
/// is terminal or interrupted (that answer is the last item) or a call
/// fails (the error is the last item).
pub fn watch(
    client: &A2AClient,
    request: GetTaskRequest,
    pause: Duration,
) -> impl Stream<Item = Result<Task, ClientError>> + '_ {
    futures::stream::unfold(Some(true), move |next| {
        let request = request.clone();
        async move {
            let first = next?;
            if !first {
                tokio::time::sleep(pause).await;
            }
            match client.get_task(request).await {
                Ok(task) => {
                    let state = task.status.state;
                    let more = !(state.is_terminal() || state.is_interrupted());
                    Some((Ok(task), more.then_some(false)))
                }
                Err(e) => Some((Err(e), None)),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_protocol::{TaskStatus, TaskStatusUpdateEvent};

    #[test]
    fn a_trail_keeps_the_first_task_id_and_the_last_state() {
        let mut trail = Trail::default();
        let update = |task: &str, state| {
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: task.into(),
                context_id: "c".into(),
                status: TaskStatus::new(state),
                metadata: None,
            })
        };
        trail.observe(&update("t1", TaskState::Working));
        trail.observe(&update("t2", TaskState::Completed));
        assert_eq!(trail.task_id.as_deref(), Some("t1"));
        assert_eq!(trail.state, Some(TaskState::Completed));
    }
}
