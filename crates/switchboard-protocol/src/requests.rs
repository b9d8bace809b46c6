//! Request and response objects of the eleven A2A operations.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::serde_util::{self, is_empty, null_as_default};
use crate::types::{Message, Metadata, Task, TaskState};

/// Parameters of SendMessage and SendStreamingMessage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// Tenant, copied from the agent interface when it declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The message to send.
    pub message: Message,
    /// How the server should answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Optional request metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl SendMessageRequest {
    /// A request with just a message.
    pub fn new(message: Message) -> Self {
        SendMessageRequest {
            tenant: None,
            message,
            configuration: None,
            metadata: None,
        }
    }

    /// `true` unless `returnImmediately` was set.
    pub fn is_blocking(&self) -> bool {
        !self
            .configuration
            .as_ref()
            .is_some_and(|c| c.return_immediately)
    }

    /// The requested `historyLength`, if any.
    pub fn history_length(&self) -> Option<i32> {
        self.configuration.as_ref().and_then(|c| c.history_length)
    }
}

/// Options of a SendMessage call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client accepts in the response.
    #[serde(
        default,
        skip_serializing_if = "is_empty",
        deserialize_with = "null_as_default",
        alias = "accepted_output_modes"
    )]
    pub accepted_output_modes: Vec<String>,
    /// A push notification config to register for the new task.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "task_push_notification_config"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// How much history to return (unset: all, 0: none, N: the last N).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "history_length"
    )]
    pub history_length: Option<i32>,
    /// `true`: return as soon as the task exists instead of waiting for it
    /// to finish or be interrupted.
    #[serde(
        default,
        skip_serializing_if = "serde_util::is_false",
        deserialize_with = "null_as_default",
        alias = "return_immediately"
    )]
    pub return_immediately: bool,
}

/// Parameters of GetTask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// Tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task id.
    pub id: String,
    /// How much history to return.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "history_length"
    )]
    pub history_length: Option<i32>,
}

/// Parameters of ListTasks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Only tasks of this context.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "context_id")]
    pub context_id: Option<String>,
    /// Only tasks in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// Page size: default 50, 1..=100.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "page_size")]
    pub page_size: Option<i32>,
    /// Cursor from a previous `nextPageToken`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "page_token")]
    pub page_token: Option<String>,
    /// History per task.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "history_length"
    )]
    pub history_length: Option<i32>,
    /// Only tasks whose status timestamp is at or after this instant.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_util::opt_timestamp",
        alias = "status_timestamp_after"
    )]
    pub status_timestamp_after: Option<DateTime<Utc>>,
    /// Include artifacts (default false: the field is omitted).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "include_artifacts"
    )]
    pub include_artifacts: Option<bool>,
}

/// The default ListTasks page size.
pub const DEFAULT_PAGE_SIZE: i32 = 50;
/// The largest ListTasks page size.
pub const MAX_PAGE_SIZE: i32 = 100;

/// Result of ListTasks. All four fields are REQUIRED and always emitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// This page of tasks, most recently updated first.
    #[serde(default, deserialize_with = "null_as_default")]
    pub tasks: Vec<Task>,
    /// Cursor for the next page; empty on the last page.
    #[serde(default, alias = "next_page_token")]
    pub next_page_token: String,
    /// The page size that was applied.
    #[serde(default, alias = "page_size")]
    pub page_size: i32,
    /// Number of tasks matching the filters, over all pages.
    #[serde(default, alias = "total_size")]
    pub total_size: i32,
}

/// Parameters of CancelTask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// Tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task id.
    pub id: String,
    /// Optional metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Parameters of SubscribeToTask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// Tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task id.
    pub id: String,
}

/// How a push notification authenticates to its receiver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// An IANA HTTP authentication scheme, e.g. `Bearer`.
    pub scheme: String,
    /// The credentials for that scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A webhook registered for a task's updates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Config id (server-assigned when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The task.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "task_id")]
    pub task_id: Option<String>,
    /// Where to POST notifications.
    pub url: String,
    /// A token echoed to the receiver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// How to authenticate to the receiver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

/// Parameters of GetTaskPushNotificationConfig and DeleteTaskPushNotificationConfig.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfigRef {
    /// Tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The config id.
    pub id: String,
}

/// Parameters of ListTaskPushNotificationConfigs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Page size.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "page_size")]
    pub page_size: Option<i32>,
    /// Cursor.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "page_token")]
    pub page_token: Option<String>,
}

/// Result of ListTaskPushNotificationConfigs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs.
    #[serde(default, deserialize_with = "null_as_default")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Cursor for the next page; empty on the last page.
    #[serde(default, alias = "next_page_token")]
    pub next_page_token: String,
}

/// Parameters of GetExtendedAgentCard.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetExtendedAgentCardRequest {
    /// Tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
}
