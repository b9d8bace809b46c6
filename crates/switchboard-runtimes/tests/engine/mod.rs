//! Driving a runtime's agent through a real engine (`RequestHandler`) the
//! way a binding would: a blocking send, a read of the task, and what its
//! status says.
#![allow(clippy::unwrap_used, clippy::panic, dead_code)]

use futures::StreamExt as _;
use switchboard_core::{CallContext, RequestHandler};
use switchboard_protocol::{
    A2AError, CancelTaskRequest, GetTaskRequest, Message, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskStatus,
};

/// Sends `message` as `call` and waits for the task it makes.
pub async fn send(h: &RequestHandler, call: &CallContext, message: Message) -> Task {
    match h
        .send_message(call, SendMessageRequest::new(message))
        .await
        .unwrap()
    {
        SendMessageResponse::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Streams a message of `text` as `call`; every event, to the end.
pub async fn stream(h: &RequestHandler, call: &CallContext, text: &str) -> Vec<StreamResponse> {
    let request = SendMessageRequest::new(Message::user_text(text));
    let stream = h.send_streaming_message(call, request).await.unwrap();
    stream.map(|e| e.unwrap().event).collect().await
}

/// Sends `text` as `call` and returns as soon as its task exists.
pub async fn start(h: &RequestHandler, call: &CallContext, text: &str) -> Result<Task, A2AError> {
    let mut req = SendMessageRequest::new(Message::user_text(text));
    req.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    match h.send_message(call, req).await? {
        SendMessageResponse::Task(task) => Ok(task),
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Cancels the task `id` as `call`; the task as the cancel left it.
pub async fn cancel(h: &RequestHandler, call: &CallContext, id: &str) -> Task {
    let request = CancelTaskRequest {
        tenant: None,
        id: id.to_string(),
        metadata: None,
    };
    h.cancel_task(call, request).await.unwrap()
}

/// The task `id` as `call` reads it, its whole history.
pub async fn get(h: &RequestHandler, call: &CallContext, id: &str) -> Task {
    h.get_task(
        call,
        GetTaskRequest {
            tenant: None,
            id: id.to_string(),
            history_length: None,
        },
    )
    .await
    .unwrap()
}

/// The text of a status's message (empty without one).
pub fn status_text(status: &TaskStatus) -> String {
    status
        .message
        .as_ref()
        .map(Message::text)
        .unwrap_or_default()
}
