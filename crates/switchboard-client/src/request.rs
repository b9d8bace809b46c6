//! [`IntoRequest`]: the short ways to say what a call is about.
//!
//! Every client method takes the protocol's request object, so every field
//! of the spec is reachable. The common cases need only an id or a message,
//! so those convert into the full request:
//!
//! | method | also accepts |
//! |---|---|
//! | `send_message`, `send_streaming_message` | a [`Message`] |
//! | `get_task`, `cancel_task`, `subscribe_to_task` | a task id (`&str`, `String`) |
//! | `list_push_configs` | a task id |
//! | `get_push_config`, `delete_push_config` | `(task_id, config_id)` |
//!
//! The trait exists (instead of `From`) because both sides of such a `From`
//! would be foreign to this crate.

use switchboard_protocol::{
    CancelTaskRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest, Message,
    SendMessageRequest, SubscribeToTaskRequest, TaskPushNotificationConfigRef,
};

/// Converts a value into the request object `R` of an operation.
pub trait IntoRequest<R> {
    /// Builds the request.
    fn into_request(self) -> R;
}

impl<R> IntoRequest<R> for R {
    fn into_request(self) -> R {
        self
    }
}

impl IntoRequest<SendMessageRequest> for Message {
    fn into_request(self) -> SendMessageRequest {
        SendMessageRequest::new(self)
    }
}

/// Implements `IntoRequest<$req>` for task ids.
macro_rules! from_task_id {
    ($req:ty, |$id:ident| $build:expr) => {
        impl IntoRequest<$req> for String {
            fn into_request(self) -> $req {
                let $id = self;
                $build
            }
        }
        impl IntoRequest<$req> for &String {
            fn into_request(self) -> $req {
                let $id = self.clone();
                $build
            }
        }
        impl IntoRequest<$req> for &str {
            fn into_request(self) -> $req {
                let $id = self.to_string();
                $build
            }
        }
    };
}

from_task_id!(GetTaskRequest, |id| GetTaskRequest {
    tenant: None,
    id,
    history_length: None,
});
from_task_id!(CancelTaskRequest, |id| CancelTaskRequest {
    tenant: None,
    id,
    metadata: None,
});
from_task_id!(SubscribeToTaskRequest, |id| SubscribeToTaskRequest {
    tenant: None,
    id,
});
from_task_id!(ListTaskPushNotificationConfigsRequest, |task_id| {
    ListTaskPushNotificationConfigsRequest {
        tenant: None,
        task_id,
        page_size: None,
        page_token: None,
    }
});

impl<T: Into<String>, C: Into<String>> IntoRequest<TaskPushNotificationConfigRef> for (T, C) {
    fn into_request(self) -> TaskPushNotificationConfigRef {
        TaskPushNotificationConfigRef {
            tenant: None,
            task_id: self.0.into(),
            id: self.1.into(),
        }
    }
}
