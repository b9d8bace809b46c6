//! Request and response objects of the eleven A2A operations, and the
//! operation table ([`for_each_operation!`](crate::for_each_operation)).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::serde_util::{self, null_as_default};
use crate::types::{Message, Metadata, Task, TaskState};

/// The operation table: every A2A operation, declared once.
///
/// Calls the macro named by its argument with one row per operation:
///
/// ```text
/// Name {
///     handler: fn_name,                    // RequestHandler's method (core)
///     request: RequestType,                // the canonical request (this module)
///     answer: unary ResponseType | stream, // one answer, or a stream of StreamResponse
///     jsonrpc: "Name",                     // 1.0 JSON-RPC method (= gRPC rpc name)
///     v03: "method/name" | none,           // the A2A 0.3 JSON-RPC method, if 0.3 has one
///     rest: [VERBS] "/route/{field}:verb" query [name: Kind, ..],
///     grpc: tonic_fn_name,                 // the tonic service method
/// }
/// ```
///
/// Route templates name request fields in braces; GET and DELETE routes
/// read the listed query parameters, POST routes the body (see
/// `switchboard-server`'s `rest.rs`). Everything that serves or calls an
/// operation is generated from this table: the typed request and answer
/// enums ([`crate::operations`]), the engine's dispatch, the JSON-RPC, REST
/// and gRPC bindings on the server and the client's transports. Adding a row
/// makes the compiler name every place that does not handle it yet.
///
/// `for_each_operation!(compact m)` calls `m` with the part most consumers
/// dispatch on, one short row per operation, so each matches one pattern
/// instead of the whole row:
///
/// ```text
/// (Name, handler, RequestType, unary, ResponseType)   // a unary operation
/// (Name, handler, RequestType, stream)                // a streaming one
/// ```
#[macro_export]
macro_rules! for_each_operation {
    ($m:ident) => {
        $crate::for_each_operation! { @table [$m] [] }
    };
    (compact $m:ident) => {
        $crate::for_each_operation! { @table [$crate::for_each_operation] [@compact $m] }
    };
    (@compact $m:ident $(
        $(#[$doc:meta])*
        $name:ident {
            handler: $handler:ident,
            request: $req:ty,
            answer: $kind:ident $($resp:ty)?,
            $($wire:tt)*
        }
    )*) => {
        $m! { $(($name, $handler, $req, $kind $(, $resp)?))* }
    };
    // The table itself, handed to the macro named by the tokens in the first
    // brackets, after the tokens in the second.
    (@table [$($m:tt)*] [$($prefix:tt)*]) => {
        $($m)*! {
            $($prefix)*
            /// Sends a message; answers with a task or a direct message.
            SendMessage {
                handler: send_message,
                request: SendMessageRequest,
                answer: unary SendMessageResponse,
                jsonrpc: "SendMessage",
                v03: "message/send",
                rest: [POST] "/message:send" query [],
                grpc: send_message,
            }
            /// Sends a message and streams what happens.
            SendStreamingMessage {
                handler: send_streaming_message,
                request: SendMessageRequest,
                answer: stream,
                jsonrpc: "SendStreamingMessage",
                v03: "message/stream",
                rest: [POST] "/message:stream" query [],
                grpc: send_streaming_message,
            }
            /// Reads a task.
            GetTask {
                handler: get_task,
                request: GetTaskRequest,
                answer: unary Task,
                jsonrpc: "GetTask",
                v03: "tasks/get",
                rest: [GET] "/tasks/{id}" query [historyLength: Int],
                grpc: get_task,
            }
            /// Lists the caller's tasks, a page at a time.
            ListTasks {
                handler: list_tasks,
                request: ListTasksRequest,
                answer: unary ListTasksResponse,
                jsonrpc: "ListTasks",
                v03: none,
                rest: [GET] "/tasks" query [
                    contextId: Str, status: State, pageSize: Int, pageToken: Str,
                    historyLength: Int, statusTimestampAfter: Timestamp, includeArtifacts: Bool
                ],
                grpc: list_tasks,
            }
            /// Cancels a task.
            CancelTask {
                handler: cancel_task,
                request: CancelTaskRequest,
                answer: unary Task,
                jsonrpc: "CancelTask",
                v03: "tasks/cancel",
                rest: [POST] "/tasks/{id}:cancel" query [],
                grpc: cancel_task,
            }
            /// Streams a task's events from now on (or after a `Last-Event-ID`).
            SubscribeToTask {
                handler: subscribe_to_task,
                request: SubscribeToTaskRequest,
                answer: stream,
                jsonrpc: "SubscribeToTask",
                v03: "tasks/resubscribe",
                rest: [GET, POST] "/tasks/{id}:subscribe" query [],
                grpc: subscribe_to_task,
            }
            /// Registers a webhook for a task's events.
            CreateTaskPushNotificationConfig {
                handler: create_push_config,
                request: TaskPushNotificationConfig,
                answer: unary TaskPushNotificationConfig,
                jsonrpc: "CreateTaskPushNotificationConfig",
                v03: "tasks/pushNotificationConfig/set",
                rest: [POST] "/tasks/{taskId}/pushNotificationConfigs" query [],
                grpc: create_task_push_notification_config,
            }
            /// Reads one webhook config.
            GetTaskPushNotificationConfig {
                handler: get_push_config,
                request: TaskPushNotificationConfigRef,
                answer: unary TaskPushNotificationConfig,
                jsonrpc: "GetTaskPushNotificationConfig",
                v03: "tasks/pushNotificationConfig/get",
                rest: [GET] "/tasks/{taskId}/pushNotificationConfigs/{id}" query [],
                grpc: get_task_push_notification_config,
            }
            /// Lists a task's webhook configs, a page at a time.
            ListTaskPushNotificationConfigs {
                handler: list_push_configs,
                request: ListTaskPushNotificationConfigsRequest,
                answer: unary ListTaskPushNotificationConfigsResponse,
                jsonrpc: "ListTaskPushNotificationConfigs",
                v03: "tasks/pushNotificationConfig/list",
                rest: [GET] "/tasks/{taskId}/pushNotificationConfigs" query [
                    pageSize: Int, pageToken: Str
                ],
                grpc: list_task_push_notification_configs,
            }
            /// Deletes one webhook config.
            DeleteTaskPushNotificationConfig {
                handler: delete_push_config,
                request: TaskPushNotificationConfigRef,
                answer: unary (),
                jsonrpc: "DeleteTaskPushNotificationConfig",
                v03: "tasks/pushNotificationConfig/delete",
                rest: [DELETE] "/tasks/{taskId}/pushNotificationConfigs/{id}" query [],
                grpc: delete_task_push_notification_config,
            }
            /// The card for authenticated callers.
            GetExtendedAgentCard {
                handler: get_extended_agent_card,
                request: GetExtendedAgentCardRequest,
                answer: unary AgentCard,
                jsonrpc: "GetExtendedAgentCard",
                v03: "agent/getAuthenticatedExtendedCard",
                rest: [GET] "/extendedAgentCard" query [],
                grpc: get_extended_agent_card,
            }
        }
    };
}

/// Parameters of SendMessage and SendStreamingMessage.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// Tenant, copied from the agent interface when it declares one.
    pub tenant: Option<String>,
    /// The message to send.
    pub message: Message,
    /// How the server should answer.
    pub configuration: Option<SendMessageConfiguration>,
    /// Optional request metadata.
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
#[serde_with::apply(
    Vec => #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")],
)]
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client accepts in the response.
    #[serde(alias = "accepted_output_modes")]
    pub accepted_output_modes: Vec<String>,
    /// A push notification config to register for the new task.
    #[serde(alias = "task_push_notification_config")]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// How much history to return (unset: all, 0: none, N: the last N).
    #[serde(alias = "history_length")]
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
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// Tenant.
    pub tenant: Option<String>,
    /// The task id.
    pub id: String,
    /// How much history to return.
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
}

/// Parameters of ListTasks.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Tenant.
    pub tenant: Option<String>,
    /// Only tasks of this context.
    #[serde(alias = "context_id")]
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub status: Option<TaskState>,
    /// Page size: default 50, 1..=100.
    #[serde(alias = "page_size")]
    pub page_size: Option<i32>,
    /// Cursor from a previous `nextPageToken`.
    #[serde(alias = "page_token")]
    pub page_token: Option<String>,
    /// History per task.
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
    /// Only tasks whose status timestamp is at or after this instant.
    #[serde(
        default,
        with = "serde_util::opt_timestamp",
        alias = "status_timestamp_after"
    )]
    pub status_timestamp_after: Option<DateTime<Utc>>,
    /// Include artifacts (default false: the field is omitted).
    #[serde(alias = "include_artifacts")]
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
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// Tenant.
    pub tenant: Option<String>,
    /// The task id.
    pub id: String,
    /// Optional metadata.
    pub metadata: Option<Metadata>,
}

/// Parameters of SubscribeToTask.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// Tenant.
    pub tenant: Option<String>,
    /// The task id.
    pub id: String,
}

/// How a push notification authenticates to its receiver.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// An IANA HTTP authentication scheme, e.g. `Bearer`.
    pub scheme: String,
    /// The credentials for that scheme.
    pub credentials: Option<String>,
}

/// A webhook registered for a task's updates.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Tenant.
    pub tenant: Option<String>,
    /// Config id (server-assigned when empty).
    pub id: Option<String>,
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: Option<String>,
    /// Where to POST notifications.
    pub url: String,
    /// A token echoed to the receiver.
    pub token: Option<String>,
    /// How to authenticate to the receiver.
    pub authentication: Option<AuthenticationInfo>,
}

/// Parameters of GetTaskPushNotificationConfig and DeleteTaskPushNotificationConfig.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfigRef {
    /// Tenant.
    pub tenant: Option<String>,
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The config id.
    pub id: String,
}

/// Parameters of ListTaskPushNotificationConfigs.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Tenant.
    pub tenant: Option<String>,
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Page size.
    #[serde(alias = "page_size")]
    pub page_size: Option<i32>,
    /// Cursor.
    #[serde(alias = "page_token")]
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
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetExtendedAgentCardRequest {
    /// Tenant.
    pub tenant: Option<String>,
}
