//! What the integration tests of this crate share: running one task
//! through a real [`RequestHandler`].
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use switchboard_core::{CallContext, RequestHandler};
use switchboard_protocol::{Message, SendMessageRequest, SendMessageResponse, Task, TaskState};

/// Sends the message `go` through `h` (its agent runs the whole task) and
/// returns the task, which must have completed.
pub async fn run_task(h: &RequestHandler) -> Task {
    let resp = h
        .send_message(
            &CallContext::anonymous(),
            SendMessageRequest::new(Message::user_text("go")),
        )
        .await
        .unwrap();
    let SendMessageResponse::Task(task) = resp else {
        panic!("expected a task, got {resp:?}")
    };
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    task
}
