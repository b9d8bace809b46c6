//! The agent behind the bridge: the six A2A operations a run uses.
//!
//! A run needs only `SendMessage`, `SendStreamingMessage`, `GetTask`,
//! `ListTasks` (the tasks of a context, to tell which of the client's
//! messages the agent has), `SubscribeToTask` and `CancelTask`. [`Backend`]
//! is those six, typed,
//! with the failures already sorted into the [`BridgeError`]s a `RUN_ERROR`
//! reports, so the run driver never sees a transport's error type:
//!
//! | what happened | [`BridgeError`] |
//! |---|---|
//! | connection refused, DNS, TLS, timeout, `502`/`503`/`504` | [`BridgeError::AgentUnavailable`] |
//! | the agent answered an A2A error | [`BridgeError::Agent`] (its code and message) |
//! | the answer is not A2A (HTML, foreign JSON, another operation's answer) | [`BridgeError::AgentProtocol`] |
//!
//! The two sends take the extensions to activate for that call: the Engram
//! lane is requested only by the calls that carry a config message.
//!
//! Two implementations:
//! - `RemoteBackend` (feature `remote`, default; `crate::remote`): an agent
//!   elsewhere, through `switchboard_client::A2AClient` (any binding its
//!   card offers), as the bridge's own caller: the agent cannot tell the
//!   bridge's callers apart, so each request's backend carries the
//!   [`Owner`] of its [`Caller`](crate::Caller) and the run driver scopes
//!   tasks and contexts to it ([`crate::owner`]). The extensions of a call
//!   go out in `A2A-Extensions` through a second client made once per
//!   extension set (`A2AClient::with_extensions`).
//! - [`HostedBackend`]: the agent this process hosts, called through its
//!   [`RequestHandler`] with the *caller's* [`CallContext`], so a bridged
//!   run sees exactly the tasks and tenant the caller would see over A2A.
//!
//! The HTTP endpoint makes one backend per request through a
//! [`BackendFactory`]: a remote backend is shared by every request;
//! [`HostedAgent`] admits each request (authenticates the caller) and
//! wraps the handler with that caller's context.

use std::sync::Arc;

use async_trait::async_trait;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use http::request::Parts;
use switchboard_core::{CallContext, RequestHandler};
use switchboard_protocol::{
    A2AError, CancelTaskRequest, GetTaskRequest, ListTasksRequest, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task,
};

use crate::BridgeError;
use crate::owner::Owner;
#[cfg(feature = "remote")]
pub use crate::remote::{RemoteBackend, client_error};

/// One item of an agent's stream: the event and, when the agent numbers
/// its events, its sequence number (the converter's frame ids use it).
#[derive(Debug, Clone, PartialEq)]
pub struct A2aEvent {
    /// The event's position in the task's log, when known.
    pub seq: Option<u64>,
    /// The event.
    pub event: StreamResponse,
}

/// An agent's stream, failures already mapped. An error ends it.
pub type A2aStream = BoxStream<'static, Result<A2aEvent, BridgeError>>;

/// The A2A operations a bridged run uses. See the module docs.
#[async_trait]
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// `SendMessage`, requesting `extensions` for this call.
    async fn send_message(
        &self,
        request: SendMessageRequest,
        extensions: &[String],
    ) -> Result<SendMessageResponse, BridgeError>;

    /// `SendStreamingMessage`, requesting `extensions` for this call.
    async fn send_streaming_message(
        &self,
        request: SendMessageRequest,
        extensions: &[String],
    ) -> Result<A2aStream, BridgeError>;

    /// `GetTask`, with the task's whole history.
    async fn get_task(&self, task_id: &str) -> Result<Task, BridgeError>;

    /// `SubscribeToTask`: the task now, then its updates.
    async fn subscribe_to_task(&self, task_id: &str) -> Result<A2aStream, BridgeError>;

    /// `CancelTask`: the task as it is once canceled.
    async fn cancel_task(&self, task_id: &str) -> Result<Task, BridgeError>;

    /// `ListTasks` of `context_id`: its most recent tasks (one page), with
    /// their history.
    async fn list_tasks(&self, context_id: &str) -> Result<Vec<Task>, BridgeError>;

    /// The caller the bridge scopes this backend's runs to, when the agent
    /// cannot ([`crate::owner`]); `None` when the agent scopes them itself.
    fn owner(&self) -> Option<&Owner> {
        None
    }

    /// The A2A context of the conversation the caller's client names
    /// `thread_id` ([`Owner::thread_context_id`] of the caller): how the
    /// CopilotKit routes find a thread's tasks again. The anonymous
    /// caller's when the backend knows no caller.
    fn thread_context_id(&self, thread_id: &str) -> String {
        match self.owner() {
            Some(owner) => owner.thread_context_id(thread_id),
            None => Owner::of(switchboard_core::ANONYMOUS).thread_context_id(thread_id),
        }
    }
}

/// The most tasks of a context a run reads to learn which messages the
/// agent has (the most recent ones: the messages a client sends again are
/// those of its last runs).
pub const CONTEXT_TASKS_READ: i32 = 20;

/// The `ListTasks` request of a context's most recent tasks.
pub(crate) fn context_tasks(context_id: &str) -> ListTasksRequest {
    ListTasksRequest {
        context_id: Some(context_id.to_owned()),
        page_size: Some(CONTEXT_TASKS_READ),
        ..ListTasksRequest::default()
    }
}

/// Makes the backend of one HTTP request (see the module docs).
#[async_trait]
pub trait BackendFactory: Send + Sync + 'static {
    /// The backend that serves the request whose head is `head`.
    async fn backend(&self, head: &Parts) -> Result<Arc<dyn Backend>, BridgeError>;
}

/// An A2A error, as the agent's answer.
pub fn agent_error(error: A2AError) -> BridgeError {
    BridgeError::Agent {
        code: error.code().into(),
        message: error.to_string(),
    }
}

/// `?` on the hosted handler's answers: its A2A errors are the agent's.
impl From<A2AError> for BridgeError {
    fn from(error: A2AError) -> Self {
        agent_error(error)
    }
}

/// The agent this process hosts, called as one caller.
#[derive(Debug, Clone)]
pub struct HostedBackend {
    handler: RequestHandler,
    call: CallContext,
}

impl HostedBackend {
    /// Calls `handler` as the caller `call` describes (identity, tenant,
    /// extensions it asked for).
    pub fn new(handler: RequestHandler, call: CallContext) -> Self {
        HostedBackend { handler, call }
    }

    /// The caller's tenant, as a sent message's `tenant` field (the agent
    /// sees the request). Task operations need no such field: the handler
    /// finds tasks by the call's tenant.
    fn tenant(&self) -> Option<String> {
        (!self.call.tenant.is_empty()).then(|| self.call.tenant.clone())
    }

    /// The caller's context with `extensions` requested as well (those the
    /// card declares become active, as on any A2A call).
    fn call_with(&self, extensions: &[String]) -> Result<CallContext, BridgeError> {
        if extensions.is_empty() {
            return Ok(self.call.clone());
        }
        let mut call = self
            .call
            .clone()
            .with_extensions_header(&extensions.join(","));
        self.handler.activate_extensions(&mut call)?;
        Ok(call)
    }
}

fn hosted_stream(stream: switchboard_core::EventStream) -> A2aStream {
    stream
        .map_ok(|item| A2aEvent {
            // The engine numbers a task's events from 1; a direct reply has 0.
            seq: (item.seq > 0).then_some(item.seq),
            event: item.event,
        })
        .map_err(agent_error)
        .boxed()
}

#[async_trait]
impl Backend for HostedBackend {
    async fn send_message(
        &self,
        mut request: SendMessageRequest,
        extensions: &[String],
    ) -> Result<SendMessageResponse, BridgeError> {
        let call = self.call_with(extensions)?;
        request.tenant = request.tenant.or_else(|| self.tenant());
        Ok(self.handler.send_message(&call, request).await?)
    }

    async fn send_streaming_message(
        &self,
        mut request: SendMessageRequest,
        extensions: &[String],
    ) -> Result<A2aStream, BridgeError> {
        let call = self.call_with(extensions)?;
        request.tenant = request.tenant.or_else(|| self.tenant());
        let stream = self.handler.send_streaming_message(&call, request).await?;
        Ok(hosted_stream(stream))
    }

    async fn get_task(&self, task_id: &str) -> Result<Task, BridgeError> {
        let request = GetTaskRequest {
            tenant: None,
            id: task_id.to_owned(),
            history_length: None,
        };
        Ok(self.handler.get_task(&self.call, request).await?)
    }

    async fn subscribe_to_task(&self, task_id: &str) -> Result<A2aStream, BridgeError> {
        let request = SubscribeToTaskRequest {
            tenant: None,
            id: task_id.to_owned(),
        };
        let stream = self.handler.subscribe_to_task(&self.call, request).await?;
        Ok(hosted_stream(stream))
    }

    async fn cancel_task(&self, task_id: &str) -> Result<Task, BridgeError> {
        let request = CancelTaskRequest {
            tenant: None,
            id: task_id.to_owned(),
            metadata: None,
        };
        Ok(self.handler.cancel_task(&self.call, request).await?)
    }

    async fn list_tasks(&self, context_id: &str) -> Result<Vec<Task>, BridgeError> {
        let mut request = context_tasks(context_id);
        request.tenant = self.tenant();
        Ok(self.handler.list_tasks(&self.call, request).await?.tasks)
    }

    /// The engine scopes tasks to their owner itself; the caller's thread
    /// context carries its principal all the same, so two callers' threads
    /// of the same name are two conversations for the agent too.
    fn thread_context_id(&self, thread_id: &str) -> String {
        Owner::of(&self.call.principal).thread_context_id(thread_id)
    }
}

/// How [`HostedAgent`] learns who is calling: the request head in, the
/// caller's context (or the A2A error that refuses it) out. `serve` passes
/// its gate's admission (`Gate::admit`).
pub type Admit =
    Arc<dyn Fn(&Parts) -> BoxFuture<'static, Result<CallContext, A2AError>> + Send + Sync>;

/// The hosted agent as a [`BackendFactory`]: each request is admitted as
/// its caller, then served by a [`HostedBackend`] with that context.
#[derive(Clone)]
pub struct HostedAgent {
    handler: RequestHandler,
    admit: Admit,
}

impl std::fmt::Debug for HostedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedAgent").finish_non_exhaustive()
    }
}

impl HostedAgent {
    /// Serves `handler`, admitting each request with `admit`.
    pub fn new(handler: RequestHandler, admit: Admit) -> Self {
        HostedAgent { handler, admit }
    }

    /// Serves `handler` to everyone as the anonymous caller (a server
    /// without authentication).
    pub fn anonymous(handler: RequestHandler) -> Self {
        let admit: Admit = Arc::new(|_| Box::pin(async { Ok(CallContext::anonymous()) }));
        HostedAgent::new(handler, admit)
    }
}

#[async_trait]
impl BackendFactory for HostedAgent {
    async fn backend(&self, head: &Parts) -> Result<Arc<dyn Backend>, BridgeError> {
        let call = (self.admit)(head).await?;
        Ok(Arc::new(HostedBackend::new(self.handler.clone(), call)))
    }
}
