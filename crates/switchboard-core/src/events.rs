//! [`TaskEvents`]: how an agent answers.
//!
//! Every method is an `async fn` that returns only after the change is
//! durable in the store and published to subscribers, so an agent that
//! awaits its emissions can never get ahead of what clients see. A refused
//! change (a status after the task finished, an append to an unknown
//! artifact, ...) comes back as an [`EmitError`] and changes nothing.
//!
//! The handle is cheap to clone and can be used from concurrent code; the
//! task's changes are applied one at a time in the order they arrive.

use std::sync::Arc;

use chrono::Utc;
use switchboard_protocol::{
    A2AError, Artifact, Message, Metadata, Part, Role, Task, TaskState, TaskStatus,
};
use tokio::sync::{Mutex, broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use crate::executor::BoxError;
use crate::progress::ProgressEmitter;
use crate::runtime::{BusEvent, Change, Registry, TaskRuntime};
use crate::store::{StoreError, TaskRecord, TaskStore};
use switchboard_protocol::progress::ProgressLimits;

/// Why an emission was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmitError {
    /// The task already reached a terminal state (for example, it was canceled).
    #[error("task {task_id} is already {state}; a finished task never changes")]
    TaskTerminal {
        /// The task.
        task_id: String,
        /// Its terminal state.
        state: TaskState,
    },
    /// The state machine does not allow this status.
    #[error("a task cannot move from {from} to {to}")]
    InvalidTransition {
        /// Current state.
        from: TaskState,
        /// Requested state.
        to: TaskState,
    },
    /// `append` named an artifact that does not exist yet.
    #[error("artifact {0} does not exist yet; send it with append=false first")]
    UnknownArtifact(String),
    /// The artifact already received its last chunk.
    #[error("artifact {0} already received its last chunk")]
    ArtifactClosed(String),
    /// Artifacts need at least one part.
    #[error("artifact {0} has no parts; an artifact needs at least one")]
    EmptyArtifact(String),
    /// `reply` was called after the run created a task.
    #[error(
        "reply() must be the first emission; this run already created task {0} (use a status message instead)"
    )]
    ReplyAfterTask(String),
    /// A direct reply must have a messageId and at least one part.
    #[error("a reply needs a messageId and at least one part")]
    InvalidReply,
    /// The run already answered with a direct message.
    #[error("this run already answered with a direct message; it cannot emit anything else")]
    AlreadyReplied,
    /// The store refused the write.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An artifact id longer than the server's id limit
    /// ([`crate::Limits::max_id_bytes`]).
    #[error("artifact id of {len} bytes; ids are at most {max} bytes")]
    ArtifactIdTooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
}

/// What the first emission of a run decided; delivered to the caller.
pub(crate) enum Outcome {
    /// A direct message reply; no task exists.
    Message(Message),
    /// A task exists: its runtime, the snapshot at `seq` and a receiver for
    /// everything after it.
    Task {
        runtime: Arc<TaskRuntime>,
        snapshot: Task,
        seq: u64,
        rx: broadcast::Receiver<BusEvent>,
    },
    /// The agent refused the request with a protocol error.
    Error(A2AError),
}

/// The outcome of the changes that created a task (`None`: there were none).
type FirstChange = Option<Result<(), EmitError>>;

enum EmitState {
    /// Nothing emitted yet (new task): the first emission decides.
    Pending {
        user_message: Message,
        outcome: Option<oneshot::Sender<Outcome>>,
    },
    /// The task exists.
    Task(Arc<TaskRuntime>),
    /// The run answered with a message.
    Replied,
}

/// What every run of one handler shares: where tasks live and how progress
/// is limited (from the agent card's task-progress declaration).
pub(crate) struct RunEnv {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) registry: Arc<Registry>,
    pub(crate) progress_limits: ProgressLimits,
    /// Longest artifact id an agent may emit ([`crate::Limits::max_id_bytes`]):
    /// agents often derive ids from what callers sent, and every event of
    /// the artifact repeats it.
    pub(crate) max_id_bytes: usize,
}

pub(crate) struct Shared {
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    pub(crate) tenant: String,
    pub(crate) owner: String,
    pub(crate) env: Arc<RunEnv>,
    pub(crate) cancel: CancellationToken,
    state: Mutex<EmitState>,
    /// The run's progress emitter, made on first use; taken (and flushed)
    /// when the run finishes, which also breaks the emitter → events cycle.
    progress: std::sync::Mutex<Option<ProgressEmitter>>,
}

/// The handle an agent uses to answer one message. See the module docs.
#[derive(Clone)]
pub struct TaskEvents {
    inner: Arc<Shared>,
}

impl std::fmt::Debug for TaskEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskEvents")
            .field("task_id", &self.inner.task_id)
            .finish_non_exhaustive()
    }
}

impl TaskEvents {
    /// For a new task: nothing exists until the first emission.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn pending(
        task_id: String,
        context_id: String,
        tenant: String,
        owner: String,
        env: Arc<RunEnv>,
        cancel: CancellationToken,
        user_message: Message,
        outcome: oneshot::Sender<Outcome>,
    ) -> Self {
        let state = EmitState::Pending {
            user_message,
            outcome: Some(outcome),
        };
        TaskEvents {
            inner: Arc::new(Shared {
                task_id,
                context_id,
                tenant,
                owner,
                env,
                cancel,
                state: Mutex::new(state),
                progress: std::sync::Mutex::new(None),
            }),
        }
    }

    /// For a follow-up on an existing task.
    pub(crate) fn for_task(
        runtime: Arc<TaskRuntime>,
        context_id: String,
        env: Arc<RunEnv>,
        cancel: CancellationToken,
    ) -> Self {
        TaskEvents {
            inner: Arc::new(Shared {
                task_id: runtime.key.1.clone(),
                context_id,
                tenant: runtime.key.0.clone(),
                owner: runtime.owner.clone(),
                env,
                cancel,
                state: Mutex::new(EmitState::Task(runtime)),
                progress: std::sync::Mutex::new(None),
            }),
        }
    }

    /// This run's task-progress emitter (one per run, shared by every clone
    /// of the handle), limited as the agent card declares. See
    /// [`crate::progress`]. Pending coalesced updates are flushed when the
    /// run ends, before the engine settles the task.
    pub fn progress(&self) -> ProgressEmitter {
        let mut slot = self
            .inner
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert_with(|| {
            ProgressEmitter::new(self.clone(), self.inner.env.progress_limits.clone())
        })
        .clone()
    }

    /// The id of the task this run works on.
    pub fn task_id(&self) -> &str {
        &self.inner.task_id
    }

    /// The conversation this run belongs to.
    pub fn context_id(&self) -> &str {
        &self.inner.context_id
    }

    /// `true` once the task was canceled or the server is shutting down.
    /// Long-running agents should check this (or await [`cancelled`](Self::cancelled)) and stop.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Resolves when the task is canceled or the server shuts down.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// The task's state now; `None` while this run has created no task (or
    /// answered with a message). After [`cancelled`](Self::cancelled) it
    /// tells a caller's cancel (the task is already `CANCELED`) from the
    /// server shutting down (the task is not finished).
    pub async fn state(&self) -> Option<TaskState> {
        let runtime = match &*self.inner.state.lock().await {
            EmitState::Task(runtime) => runtime.clone(),
            _ => return None,
        };
        Some(runtime.state().await)
    }

    /// Resolves once the task is finished (completed, failed, canceled,
    /// rejected), also after the run returned: what an agent that keeps
    /// something alive past its run (a process waiting for the answer to an
    /// input-required question) waits on, since a cancel then reaches no
    /// run. Resolves at once when this run created no task.
    pub async fn finished(&self) {
        let runtime = match &*self.inner.state.lock().await {
            EmitState::Task(runtime) => runtime.clone(),
            _ => return,
        };
        // Holding the runtime keeps it the task's live one (the registry
        // holds it weakly), so every later change is published here.
        let (task, _, mut rx) = runtime.subscribe().await;
        if task.status.state.is_terminal() {
            return;
        }
        loop {
            match rx.recv().await {
                Ok(event) if event.event.state().is_some_and(TaskState::is_terminal) => return,
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    if runtime.state().await.is_terminal() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    /// Answers with a direct message instead of a task. Must be the run's
    /// first and only emission.
    pub async fn reply(&self, mut message: Message) -> Result<(), EmitError> {
        let mut st = self.inner.state.lock().await;
        match &mut *st {
            EmitState::Pending { outcome, .. } => {
                if message.parts.is_empty() || message.message_id.is_empty() {
                    // The caller is owed an answer: tell it the agent misbehaved.
                    if let Some(tx) = outcome.take() {
                        let _ = tx.send(Outcome::Error(A2AError::InvalidAgentResponse(
                            "the agent replied with a message without parts or messageId".into(),
                        )));
                    }
                    *st = EmitState::Replied;
                    return Err(EmitError::InvalidReply);
                }
                message.context_id = Some(self.inner.context_id.clone());
                message.task_id = None;
                if let Some(tx) = outcome.take() {
                    let _ = tx.send(Outcome::Message(message));
                }
                *st = EmitState::Replied;
                Ok(())
            }
            EmitState::Task(_) => Err(EmitError::ReplyAfterTask(self.inner.task_id.clone())),
            EmitState::Replied => Err(EmitError::AlreadyReplied),
        }
    }

    /// Answers with a direct agent message holding one text part.
    pub async fn reply_text(&self, text: impl Into<String>) -> Result<(), EmitError> {
        self.reply(Message::agent_text(text)).await
    }

    /// Creates the task now (in `SUBMITTED`) if it does not exist yet.
    pub async fn submit(&self) -> Result<(), EmitError> {
        let mut st = self.inner.state.lock().await;
        self.ensure_task(&mut st, Vec::new()).await.map(|_| ())
    }

    /// Sets a status. `TASK_STATE_SUBMITTED` is set by the engine when the
    /// task is created and cannot be set again.
    pub async fn status(
        &self,
        status: TaskStatus,
        metadata: Option<Metadata>,
    ) -> Result<(), EmitError> {
        self.apply(Change::status(status, metadata)).await
    }

    /// Sets a status whose message is *transient*: once a newer status
    /// replaces it, it is dropped instead of being kept in the task history.
    /// For high-frequency updates (progress) that would otherwise flood the
    /// history; the spec allows agents to leave such messages out.
    pub async fn transient_status(
        &self,
        status: TaskStatus,
        metadata: Option<Metadata>,
    ) -> Result<(), EmitError> {
        self.apply(Change::Status {
            status,
            metadata,
            transient: true,
            task_metadata: None,
        })
        .await
    }

    /// Sets a status and merges `metadata` into the task's own metadata
    /// (the snapshot's `metadata`, which GetTask shows); the status update
    /// event carries the same keys. For what a run records about the whole
    /// task, such as the tokens a model used.
    pub async fn status_with_task_metadata(
        &self,
        status: TaskStatus,
        metadata: Metadata,
    ) -> Result<(), EmitError> {
        self.apply(Change::Status {
            status,
            metadata: Some(metadata.clone()),
            transient: false,
            task_metadata: Some(metadata),
        })
        .await
    }

    /// The caller's earlier tasks in this run's context (the conversation),
    /// oldest first, at most `limit` (the most recent ones; 1..=100), this
    /// run's own task left out. What an agent with multi-turn memory reads
    /// its history from: the store's snapshots, so it survives restarts.
    pub async fn context_tasks(&self, limit: usize) -> Result<Vec<Task>, StoreError> {
        let s = &self.inner;
        let query = crate::store::TaskQuery {
            tenant: s.tenant.clone(),
            owner: s.owner.clone(),
            all_owners: false,
            context_id: Some(s.context_id.clone()),
            state: None,
            status_after: None,
            // One more: this run's own task may be among them.
            limit: limit.clamp(1, 100) + 1,
            after: None,
        };
        let page = s.env.store.list(&query).await?;
        let mut records: Vec<TaskRecord> = page
            .records
            .into_iter()
            .filter(|r| r.task.id != s.task_id)
            .collect();
        records.truncate(limit.clamp(1, 100));
        records.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.task.id.cmp(&b.task.id))
        });
        Ok(records.into_iter().map(|r| r.task).collect())
    }

    /// Sets `state` with an optional agent text message.
    pub async fn set_state(&self, state: TaskState, text: Option<String>) -> Result<(), EmitError> {
        self.status(state_status(state, text), None).await
    }

    /// `WORKING`, with a short note on what is happening.
    pub async fn working(&self, note: impl Into<String>) -> Result<(), EmitError> {
        self.set_state(TaskState::Working, Some(note.into())).await
    }

    /// `INPUT_REQUIRED`: asks the client a question. The client answers with
    /// a new message on the same task, which starts a new run.
    pub async fn ask(&self, question: impl Into<String>) -> Result<(), EmitError> {
        self.set_state(TaskState::InputRequired, Some(question.into()))
            .await
    }

    /// `AUTH_REQUIRED`: the client must authenticate out of band.
    pub async fn require_auth(&self, explanation: impl Into<String>) -> Result<(), EmitError> {
        self.set_state(TaskState::AuthRequired, Some(explanation.into()))
            .await
    }

    /// `COMPLETED`.
    pub async fn complete(&self) -> Result<(), EmitError> {
        self.set_state(TaskState::Completed, None).await
    }

    /// `COMPLETED` with a final agent message.
    pub async fn complete_with(&self, text: impl Into<String>) -> Result<(), EmitError> {
        self.set_state(TaskState::Completed, Some(text.into()))
            .await
    }

    /// `FAILED` with a reason.
    pub async fn fail(&self, reason: impl Into<String>) -> Result<(), EmitError> {
        self.set_state(TaskState::Failed, Some(reason.into())).await
    }

    /// `REJECTED` with a reason.
    pub async fn reject(&self, reason: impl Into<String>) -> Result<(), EmitError> {
        self.set_state(TaskState::Rejected, Some(reason.into()))
            .await
    }

    /// Emits a whole artifact in one event (`lastChunk: true`).
    pub async fn artifact(&self, artifact: Artifact) -> Result<(), EmitError> {
        self.apply(Change::Artifact {
            artifact,
            append: false,
            last_chunk: true,
            metadata: None,
        })
        .await
    }

    /// Emits a one-part text artifact named `name`.
    pub async fn artifact_text(
        &self,
        name: impl Into<String>,
        text: impl Into<String>,
    ) -> Result<(), EmitError> {
        let artifact = Artifact::new(vec![Part::text(text)]).with_name(name);
        self.artifact(artifact).await
    }

    /// Emits one chunk of an artifact. `append: false` starts (or replaces)
    /// the artifact; `append: true` adds parts to it; `last_chunk: true`
    /// closes it.
    pub async fn artifact_chunk(
        &self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), EmitError> {
        self.apply(Change::Artifact {
            artifact,
            append,
            last_chunk,
            metadata: None,
        })
        .await
    }

    /// Starts an artifact that is written in chunks; see [`ArtifactWriter`].
    pub fn artifact_writer(&self, name: impl Into<String>) -> ArtifactWriter {
        ArtifactWriter {
            events: self.clone(),
            artifact_id: uuid::Uuid::now_v7().to_string(),
            name: Some(name.into()),
            started: false,
        }
    }

    /// Starts a batch: changes that are committed together, in one durable
    /// write, when [`EventBatch::commit`] is awaited. Each change is still
    /// its own event with its own sequence number, and subscribers see them
    /// in order; but either all of them happen or (if one is refused) none
    /// does, and no client can observe the task between them.
    ///
    /// An agent that has its whole answer at once should send it as one
    /// batch: `events.batch().artifact(a).complete().commit().await`. On a
    /// durable store that is one commit instead of two, which matters under
    /// load, and a client never sees the artifact of a task that then fails
    /// to complete.
    pub fn batch(&self) -> EventBatch {
        EventBatch {
            events: self.clone(),
            changes: Vec::new(),
        }
    }

    async fn apply(&self, change: Change) -> Result<(), EmitError> {
        self.apply_all(vec![change]).await
    }

    async fn apply_all(&self, changes: Vec<Change>) -> Result<(), EmitError> {
        if changes.is_empty() {
            return Ok(());
        }
        let max = self.inner.env.max_id_bytes;
        for change in &changes {
            if let Change::Artifact { artifact, .. } = change
                && artifact.artifact_id.len() > max
            {
                return Err(EmitError::ArtifactIdTooLong {
                    len: artifact.artifact_id.len(),
                    max,
                });
            }
        }
        let mut st = self.inner.state.lock().await;
        if matches!(*st, EmitState::Pending { .. }) {
            // The first emission (or batch) creates the task, in the same commit.
            let (_, first) = self.ensure_task(&mut st, changes).await?;
            return first.unwrap_or(Ok(()));
        }
        let (rt, _) = self.ensure_task(&mut st, Vec::new()).await?;
        // The runtime serializes changes itself; release our lock first so
        // a slow store does not hold up unrelated bookkeeping.
        drop(st);
        rt.apply_all(changes).await
    }

    /// The task's runtime, creating the task if nothing was emitted yet —
    /// with `first` as its first changes in the same commit, whose outcome
    /// is returned beside it (`None` when the task already existed or
    /// `first` is empty).
    async fn ensure_task(
        &self,
        st: &mut EmitState,
        first: Vec<Change>,
    ) -> Result<(Arc<TaskRuntime>, FirstChange), EmitError> {
        match st {
            EmitState::Task(rt) => Ok((rt.clone(), None)),
            EmitState::Replied => Err(EmitError::AlreadyReplied),
            EmitState::Pending {
                user_message,
                outcome,
            } => {
                let s = &self.inner;
                let now = Utc::now();
                let record = TaskRecord {
                    tenant: s.tenant.clone(),
                    owner: s.owner.clone(),
                    task: Task {
                        id: s.task_id.clone(),
                        context_id: s.context_id.clone(),
                        status: TaskStatus {
                            state: TaskState::Submitted,
                            message: None,
                            timestamp: Some(now),
                        },
                        artifacts: Some(Vec::new()),
                        history: Some(vec![user_message.clone()]),
                        metadata: None,
                    },
                    last_seq: 0,
                    created_at: now,
                };
                let created = TaskRuntime::create(
                    record,
                    s.env.store.clone(),
                    s.env.registry.clone(),
                    s.cancel.clone(),
                    first,
                )
                .await?;
                let rt = created.runtime;
                if let Some(tx) = outcome.take() {
                    let _ = tx.send(Outcome::Task {
                        runtime: rt.clone(),
                        snapshot: created.snapshot,
                        seq: created.seq,
                        rx: created.rx,
                    });
                }
                *st = EmitState::Task(rt.clone());
                Ok((rt, created.change))
            }
        }
    }

    /// Called by the engine when `execute` returned (or panicked): settles
    /// the task so it never stays `WORKING` without an executor.
    pub(crate) async fn finish(&self, result: Result<(), BoxError>) {
        let progress = self
            .inner
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(p) = progress
            && let Err(e) = p.flush().await
            && !e.is_task_over()
        {
            tracing::warn!(task_id = %self.inner.task_id, error = %e, "could not flush progress at the end of the run");
        }
        let mut st = self.inner.state.lock().await;
        // A protocol error before anything was emitted goes back to the caller.
        if let (EmitState::Pending { outcome, .. }, Err(e)) = (&mut *st, &result)
            && let Some(a2a) = e.downcast_ref::<A2AError>()
        {
            if let Some(tx) = outcome.take() {
                let _ = tx.send(Outcome::Error(a2a.clone()));
            }
            *st = EmitState::Replied;
            return;
        }
        if matches!(*st, EmitState::Replied) {
            return;
        }
        // A run told to stop that left its task unsettled was cut short:
        // CancelTask settles the task (canceled) before the run sees the
        // signal, so what remains is the server shutting down. Returning
        // Ok then does not mean the work is done.
        let stopped = self.inner.cancel.is_cancelled();
        let settle = |result: &Result<(), BoxError>| Change::Status {
            status: match result {
                Ok(()) if stopped => TaskStatus::new(TaskState::Failed).with_message(Message::new(
                    Role::Agent,
                    vec![Part::text(
                        "the server shut down before the task finished; send the message again",
                    )],
                )),
                Ok(()) => TaskStatus::new(TaskState::Completed),
                Err(e) => TaskStatus::new(TaskState::Failed).with_message(Message::new(
                    Role::Agent,
                    vec![Part::text(format!("the agent failed: {e}"))],
                )),
            },
            metadata: None,
            transient: false,
            task_metadata: None,
        };
        // A run that emitted nothing gets its task created and settled in
        // one commit.
        let first: Vec<Change> = matches!(*st, EmitState::Pending { .. })
            .then(|| settle(&result))
            .into_iter()
            .collect();
        let settled_on_creation = !first.is_empty();
        let rt = match self.ensure_task(&mut st, first).await {
            Ok((rt, Some(Err(e)))) => {
                tracing::error!(task_id = %self.inner.task_id, error = %e, "could not settle the task after its run");
                rt
            }
            Ok((rt, _)) => rt,
            Err(e) => {
                tracing::error!(task_id = %self.inner.task_id, error = %e, "could not create the task for a finished run");
                if let EmitState::Pending { outcome, .. } = &mut *st
                    && let Some(tx) = outcome.take()
                {
                    let error = match e {
                        EmitError::Store(s) => A2AError::from(s),
                        other => A2AError::Internal(other.to_string()),
                    };
                    let _ = tx.send(Outcome::Error(error));
                }
                return;
            }
        };
        drop(st);
        if !settled_on_creation {
            let state = rt.state().await;
            if !state.is_terminal() && !state.is_interrupted() {
                if let Err(e) = rt.apply(settle(&result)).await {
                    // Canceled concurrently: terminal already, nothing to settle.
                    if !matches!(e, EmitError::TaskTerminal { .. }) {
                        tracing::error!(task_id = %self.inner.task_id, error = %e, "could not settle the task after its run");
                    }
                }
            } else if let Err(e) = &result {
                tracing::warn!(task_id = %self.inner.task_id, error = %e, "agent returned an error after the task settled");
            }
        }
        rt.end_run();
    }
}

/// `state` now, with an optional agent text message.
fn state_status(state: TaskState, text: Option<String>) -> TaskStatus {
    TaskStatus {
        state,
        message: text.map(Message::agent_text),
        timestamp: Some(Utc::now()),
    }
}

/// Changes committed together; made by [`TaskEvents::batch`]. The
/// builder methods mirror [`TaskEvents`]'; nothing happens until
/// [`commit`](Self::commit) is awaited.
#[derive(Debug)]
#[must_use = "a batch does nothing until `commit().await`"]
pub struct EventBatch {
    events: TaskEvents,
    changes: Vec<Change>,
}

impl EventBatch {
    /// Adds a status; see [`TaskEvents::status`].
    pub fn status(mut self, status: TaskStatus, metadata: Option<Metadata>) -> Self {
        self.changes.push(Change::status(status, metadata));
        self
    }

    /// Adds `state` with an optional agent text message.
    pub fn set_state(self, state: TaskState, text: Option<String>) -> Self {
        self.status(state_status(state, text), None)
    }

    /// Adds `WORKING` with a note.
    pub fn working(self, note: impl Into<String>) -> Self {
        self.set_state(TaskState::Working, Some(note.into()))
    }

    /// Adds `COMPLETED`.
    pub fn complete(self) -> Self {
        self.set_state(TaskState::Completed, None)
    }

    /// Adds `COMPLETED` with a final agent message.
    pub fn complete_with(self, text: impl Into<String>) -> Self {
        self.set_state(TaskState::Completed, Some(text.into()))
    }

    /// Adds `INPUT_REQUIRED` with a question.
    pub fn ask(self, question: impl Into<String>) -> Self {
        self.set_state(TaskState::InputRequired, Some(question.into()))
    }

    /// Adds `FAILED` with a reason.
    pub fn fail(self, reason: impl Into<String>) -> Self {
        self.set_state(TaskState::Failed, Some(reason.into()))
    }

    /// Adds a whole artifact (`lastChunk: true`); see [`TaskEvents::artifact`].
    pub fn artifact(mut self, artifact: Artifact) -> Self {
        self.changes.push(Change::Artifact {
            artifact,
            append: false,
            last_chunk: true,
            metadata: None,
        });
        self
    }

    /// Adds a one-part text artifact named `name`.
    pub fn artifact_text(self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.artifact(Artifact::new(vec![Part::text(text)]).with_name(name))
    }

    /// How many changes the batch holds.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// `true` if the batch holds no change (committing it does nothing).
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Commits every change of the batch in one durable write and then
    /// publishes them in order; returns after that, like every emission.
    /// If one change is refused, none is made and its error is returned.
    pub async fn commit(self) -> Result<(), EmitError> {
        self.events.apply_all(self.changes).await
    }
}

/// Writes one artifact in chunks: the first [`append`](Self::append) starts
/// it, later ones add to it, [`finish`](Self::finish) sends the last chunk.
#[derive(Debug)]
pub struct ArtifactWriter {
    events: TaskEvents,
    artifact_id: String,
    name: Option<String>,
    started: bool,
}

impl ArtifactWriter {
    /// The artifact's id.
    pub fn artifact_id(&self) -> &str {
        &self.artifact_id
    }

    async fn send(&mut self, part: Part, last: bool) -> Result<(), EmitError> {
        // A literal rather than `Artifact::new`: the id is already known,
        // so no fresh one is generated per chunk.
        let mut artifact = Artifact {
            artifact_id: self.artifact_id.clone(),
            name: None,
            description: None,
            parts: vec![part],
            metadata: None,
            extensions: Vec::new(),
        };
        if !self.started {
            artifact.name = self.name.take();
        }
        let append = self.started;
        self.events.artifact_chunk(artifact, append, last).await?;
        self.started = true;
        Ok(())
    }

    /// Sends one more chunk.
    pub async fn append(&mut self, part: Part) -> Result<(), EmitError> {
        self.send(part, false).await
    }

    /// Sends the last chunk and closes the artifact.
    pub async fn finish(mut self, part: Part) -> Result<(), EmitError> {
        self.send(part, true).await
    }
}
