//! What an agent author implements: [`AgentExecutor`].
//!
//! The engine calls [`AgentExecutor::execute`] once per incoming message with
//! a [`RequestContext`] (what was asked, by whom, in which task and context)
//! and a [`TaskEvents`] handle (how to answer). The first thing the agent
//! emits decides the shape of the answer:
//!
//! - [`TaskEvents::reply`] first: the caller gets a direct `Message` and no
//!   task is created.
//! - anything else first (a status, an artifact, `complete`, ...): a task is
//!   created in `SUBMITTED` and every later emission updates it.
//!
//! When `execute` returns `Ok(())` and the task is neither finished nor
//! waiting for input, the engine completes it; when it returns `Err`, the
//! engine fails it with the error's text. Returning an
//! [`A2AError`](switchboard_protocol::A2AError) before
//! anything was emitted sends that error to the caller instead.
//!
//! A run lives in the process that executes it. When that process dies
//! with a task still submitted or working, a single-process store reports
//! the task at the next start and the engine fails it, saying its run was
//! lost ([`RequestHandlerBuilder::recover_abandoned`](crate::RequestHandlerBuilder::recover_abandoned)).
//! An agent whose work outlives the process (a remote task it mirrors, a
//! job it can look up again) may take such a task back instead:
//! [`AgentExecutor::resumes`] says which, and [`AgentExecutor::resume`]
//! continues it, from what the task's stored snapshot remembers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use switchboard_protocol::{Message, Metadata, SendMessageConfiguration, Task};

use crate::context::CallContext;
use crate::events::TaskEvents;

/// The error type agents return: anything that implements `std::error::Error`,
/// a `String` or a `&str` converts into it with `?` or `.into()`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An agent.
///
/// ```
/// use switchboard_core::{AgentExecutor, BoxError, RequestContext, TaskEvents};
///
/// struct Shout;
///
/// #[switchboard_core::async_trait]
/// impl AgentExecutor for Shout {
///     async fn execute(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
///         events.working("shouting").await?;
///         events.artifact_text("shout", ctx.text().to_uppercase()).await?;
///         Ok(()) // completes the task
///     }
/// }
/// ```
#[async_trait]
pub trait AgentExecutor: Send + Sync + 'static {
    /// Handles one incoming message. See the module docs for what the
    /// return value means.
    async fn execute(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError>;

    /// Whether this agent continues `task`, whose run a previous process
    /// abandoned (it stopped while the task was submitted or working),
    /// rather than the engine failing it. Asked once per such task at
    /// start-up. The default, `false`, leaves the task to be failed with a
    /// message saying its run was lost.
    fn resumes(&self, task: &Task) -> bool {
        let _ = task;
        false
    }

    /// Continues a task [`resumes`](Self::resumes) accepted: `ctx.task` is
    /// its stored snapshot, `ctx.message` the last message of its history
    /// (what the lost run was handling; an empty user message if it has
    /// none), `ctx.call` its tenant and owner
    /// (no extensions, no push preference: the caller is gone). `events`
    /// goes on from the stored log, and the return value means what
    /// [`execute`](Self::execute)'s does (an error fails the task). The
    /// default fails it, as if `resumes` had said no.
    async fn resume(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
        let _ = (ctx, events);
        Err(ABANDONED_RUN.into())
    }
}

/// The status message of a task whose run was lost and not resumed.
pub(crate) const ABANDONED_RUN: &str =
    "the server stopped while this task was running; its run was lost and it cannot continue";

/// The future `#[async_trait]` makes of [`AgentExecutor::execute`].
type ExecuteFuture<'a> = Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send + 'a>>;

// Written out rather than with `#[async_trait]`, which would box an async
// block around the inner call: a shared agent (the engine holds its agent as
// an `Arc`, and `serve` hands it one) answers with its agent's own future,
// without another allocation and copy per message.
impl<T: AgentExecutor + ?Sized> AgentExecutor for Arc<T> {
    fn execute<'a, 'b>(&'a self, ctx: RequestContext, events: TaskEvents) -> ExecuteFuture<'b>
    where
        'a: 'b,
        Self: 'b,
    {
        (**self).execute(ctx, events)
    }

    fn resumes(&self, task: &Task) -> bool {
        (**self).resumes(task)
    }

    fn resume<'a, 'b>(&'a self, ctx: RequestContext, events: TaskEvents) -> ExecuteFuture<'b>
    where
        'a: 'b,
        Self: 'b,
    {
        (**self).resume(ctx, events)
    }
}

/// An [`AgentExecutor`] made from an async closure; see [`agent_fn`].
pub struct FnAgent<F>(F);

impl<F> std::fmt::Debug for FnAgent<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnAgent")
    }
}

type BoxFuture = ExecuteFuture<'static>;

/// Makes an agent from an async closure.
///
/// ```
/// use switchboard_core::agent_fn;
/// let agent = agent_fn(|ctx, events| async move {
///     events.reply_text(format!("you said: {}", ctx.text())).await?;
///     Ok(())
/// });
/// # let _ = agent;
/// ```
pub fn agent_fn<F, Fut>(
    f: F,
) -> FnAgent<impl Fn(RequestContext, TaskEvents) -> BoxFuture + Send + Sync + 'static>
where
    F: Fn(RequestContext, TaskEvents) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    FnAgent(move |ctx, events| Box::pin(f(ctx, events)) as BoxFuture)
}

// The closure's future is boxed already; it is the answer as it is.
impl<F> AgentExecutor for FnAgent<F>
where
    F: Fn(RequestContext, TaskEvents) -> BoxFuture + Send + Sync + 'static,
{
    fn execute<'a, 'b>(&'a self, ctx: RequestContext, events: TaskEvents) -> ExecuteFuture<'b>
    where
        'a: 'b,
        Self: 'b,
    {
        (self.0)(ctx, events)
    }
}

/// Everything an agent knows about the message it is handling.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// The incoming message, with `taskId` and `contextId` filled in.
    pub message: Message,
    /// The task this message continues (after input-required), if any: its
    /// snapshot before this message was added.
    pub task: Option<Task>,
    /// The id of the task this run works on (created lazily).
    pub task_id: String,
    /// The conversation.
    pub context_id: String,
    /// The caller's options (accepted output modes, history length, ...).
    pub configuration: Option<SendMessageConfiguration>,
    /// Request metadata.
    pub metadata: Option<Metadata>,
    /// Who is calling, in which tenant, with which extensions active.
    pub call: CallContext,
    /// `true` when the caller is streaming.
    pub streaming: bool,
}

impl RequestContext {
    /// The text of the incoming message (text parts joined with newlines).
    pub fn text(&self) -> String {
        self.message.text()
    }

    /// `true` when this message continues an existing task.
    pub fn is_follow_up(&self) -> bool {
        self.task.is_some()
    }

    /// `true` if the caller accepts output of `media_type` (no
    /// `acceptedOutputModes` means anything is accepted).
    pub fn accepts_output(&self, media_type: &str) -> bool {
        match &self.configuration {
            Some(c) if !c.accepted_output_modes.is_empty() => c
                .accepted_output_modes
                .iter()
                .any(|m| crate::context::media_type_matches(m, media_type)),
            _ => true,
        }
    }

    /// `true` if the caller activated the extension `uri` and the agent declares it.
    pub fn extension_active(&self, uri: &str) -> bool {
        self.call.activated_extensions.iter().any(|e| e == uri)
    }
}
