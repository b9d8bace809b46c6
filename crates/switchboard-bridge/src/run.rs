//! The run driver: one `RunAgentInput` in, one AG-UI run out.
//!
//! [`run`] turns an input into A2A calls on a [`Backend`] and the answers
//! into AG-UI events. Whatever happens, the run it yields is well formed:
//! `RUN_STARTED` (echoing the input's `threadId`/`runId`) first, then
//! exactly one terminal event — `RUN_FINISHED` (success, interrupt or
//! cancelled) or `RUN_ERROR` — and nothing after it.
//!
//! ## What a run does
//! 1. **Options and addressing.** [`RunOptions::from_input`] reads
//!    `forwardedProps.a2a`. A named `taskId` is read first (`GetTask`): its
//!    context addresses the run unless `contextId` names one, and a
//!    different explicit `contextId` is [`BridgeError::ContextMismatch`].
//!    Without either, the context is the one the bridge projected into
//!    the client's state on an earlier run (`state.view.contextId`), else
//!    a new one (ADR 0001): minted for the caller over a remote agent, else
//!    the agent's. AG-UI's `threadId` and `runId`
//!    name the AG-UI run only; they never reach the agent. Messages of the
//!    input that the named task already holds (its history's parts name the
//!    AG-UI messages they came from) are not new: clients send the whole
//!    conversation on every run. Results of tools a task of the context
//!    waits on (an input-required status calling frontend tools) go to
//!    that task.
//! 2. **Resume.** An input with `resume` answers the interrupt of a paused
//!    task (the task named by `taskId`, else by the interrupt in the
//!    client's `view.pendingInterrupts`, else by the interrupt id's
//!    `<taskId>:` prefix). A cancelled answer cancels the task
//!    (`CancelTask`) and the run finishes `cancelled`; a resolved one is
//!    sent on the same task (an `a2a.hitl.formResponse`) and the run streams
//!    the task to its end, as in `stream` mode.
//! 3. **`stream` mode** with something to send: `SendStreamingMessage` (a
//!    new task, or the named one) through the converter until the task
//!    finishes, fails or interrupts.
//! 4. **Reconnect** (a `taskId` and no new message): the task's snapshot
//!    first — `STATE_SNAPSHOT`, then `MESSAGES_SNAPSHOT` (the client's own
//!    messages, the task's history and the text of its artifacts, under the
//!    converter's ids) — then, if the task is still going, `SubscribeToTask`
//!    from there. The subscription's own first item is the snapshot when it
//!    is one (taken with the subscription, so nothing falls between the
//!    two); `GetTask`'s is used otherwise. A finished task is the snapshot
//!    and its ending: a closed run is never reopened.
//! 5. **`send` mode**: `SendMessage` with `returnImmediately` (into the
//!    named task, or a new one), then `RUN_FINISHED` with the task in the
//!    state. Such a run reports the task, not its content: the text of it
//!    comes in a `stream` run or a reconnect. With no new message it is the
//!    snapshot alone.
//! 6. **`cancel` mode**: `CancelTask` of the named task, then its snapshot
//!    (an ended task: the snapshot alone).
//!
//! **Ownership.** Over a remote agent every task and context a run names
//! is checked against the caller ([`crate::owner`]): the named task is
//! read first in every mode, and one outside the caller's contexts is
//! `TaskNotFound`; a new context is minted for the caller.
//!
//! **Each message once.** In a known context the run reads the context's
//! recent tasks (`ListTasks`) and leaves out the input's messages they
//! hold: a run that produced no assistant text (rejected, failed,
//! aborted) leaves its user message in the client's trailing turn, and the
//! agent must not get it twice. A repeated `resume` of an interrupt the
//! task has answered already shows the task as it is (a reconnect).
//!
//! A stream that continues a task the client has already seen (a resume,
//! a message into a running task) starts with the task as it was; that
//! first snapshot updates the state but its messages are not sent again.
//! A run that ends in an interrupt sends `STATE_SNAPSHOT` and
//! `MESSAGES_SNAPSHOT` right before its `RUN_FINISHED` (AG-UI's interrupt
//! rule: what a resume needs).
//!
//! ## Failures
//! Every [`BridgeError`] — from reading the input, from any call, an agent
//! stream that ends before the task finishes or pauses, or that carries an
//! event of another task ([`BridgeError::AgentProtocol`]), an agent silent for longer than
//! [`RunConfig::agent_timeout`] ([`BridgeError::AgentUnavailable`]) — ends
//! the run with `RUN_ERROR {message, code}`, after closing whatever
//! message was open.
//!
//! ## Disconnects
//! The run is a lazy stream: when the AG-UI client goes away, the endpoint
//! drops it, which drops the A2A stream. By default the A2A task is not
//! cancelled — it keeps running at the agent, and a later run reconnects to
//! it by its `taskId`; with [`BridgeConfig::cancel_on_disconnect`] a run
//! dropped before its terminal event cancels its task.
//!
//! [`BridgeConfig::cancel_on_disconnect`]: crate::BridgeConfig::cancel_on_disconnect

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use serde_json::Value;
use switchboard_agui::convert::{PendingInterrupt, Projection};
use switchboard_agui::events::ResumeEntry;
use switchboard_agui::events::{
    AssistantMessage, Content, Event, EventKind, FunctionCall, Message as AguiMessage,
    MessagesSnapshot, ReasoningMessage, RunAgentInput, RunError, RunFinished, RunFinishedOutcome,
    RunStarted, StateSnapshot, TextRole, ToolCall, ToolMessage, UserMessage,
};
use switchboard_agui::hints::{PartHints, PartRole, read_tool_call};
use switchboard_agui::{Converter, ConverterOptions, PROTOCOL_VERSION};
use switchboard_protocol::{
    A2AError, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
    StreamResponse, Task, TaskState, TaskStatusUpdateEvent,
};

use crate::backend::{A2aEvent, A2aStream, Backend, agent_error};
use crate::input::{self, Addressing, Outbound};
use crate::{BridgeConfig, BridgeError, Mode, RunOptions};

/// How runs talk to the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunConfig {
    /// The bridge's input options (system messages, Engram).
    pub bridge: BridgeConfig,
    /// The longest the agent may stay silent: a call's answer, or the next
    /// event of a stream. Past it the run ends with `RUN_ERROR`
    /// (`bridge:agent_unavailable`); the task is left as it is.
    pub agent_timeout: Duration,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            bridge: BridgeConfig::default(),
            agent_timeout: Duration::from_secs(300),
        }
    }
}

/// The AG-UI run of `input` against `backend`. See the module docs.
pub fn run(
    backend: Arc<dyn Backend>,
    config: RunConfig,
    input: RunAgentInput,
) -> impl Stream<Item = Event> + Send + 'static {
    async_stream::stream! {
        yield Event::new(RunStarted {
            thread_id: input.thread_id.clone(),
            run_id: input.run_id.clone(),
            parent_run_id: input.parent_run_id.clone(),
            input: Some(Box::new(input.clone())),
            protocol_version: Some(PROTOCOL_VERSION.to_owned()),
        });
        let driver = Driver { backend, config, input };
        let (before, follow) = match driver.plan().await {
            Ok(Plan::Done(events)) => (events, None),
            Ok(Plan::Follow(before, follow)) => (before, Some(follow)),
            Err(e) => (vec![run_error(&e)], None),
        };
        // What the client has of the conversation, for the snapshot an
        // interrupt needs.
        let mut transcript = Transcript::default();
        for event in before {
            let end = event.ends_run();
            transcript.record(&event);
            yield event;
            if end {
                return;
            }
        }
        let Some(mut follow) = follow else {
            // A plan that ends without a terminal event finishes the run.
            yield driver.finished();
            return;
        };
        // Dropped with the run: a client that goes away before the run's
        // end cancels the task, when the bridge is configured so.
        let mut on_disconnect = CancelOnDisconnect {
            backend: driver
                .config
                .bridge
                .cancel_on_disconnect
                .then(|| driver.backend.clone()),
            task_id: None,
        };
        loop {
            let next = tokio::time::timeout(driver.config.agent_timeout, follow.stream.next()).await;
            let events = match next {
                Ok(Some(Ok(item))) => {
                    on_disconnect.saw(&item.event);
                    follow.convert(&item)
                }
                Ok(Some(Err(e))) => follow.fail(&e),
                Ok(None) => follow.fail(&BridgeError::AgentProtocol(
                    "the agent's stream ended before the task finished or paused".into(),
                )),
                Err(_) => follow.fail(&BridgeError::AgentUnavailable(format!(
                    "the agent sent nothing for {}s",
                    driver.config.agent_timeout.as_secs_f32()
                ))),
            };
            for event in events {
                let end = event.ends_run();
                if end {
                    // The run ends here, not by the client leaving.
                    on_disconnect.backend = None;
                }
                if is_interrupt(&event) {
                    // AG-UI: the run that interrupts ends with the state and
                    // the messages a resume needs.
                    yield Event::new(StateSnapshot {
                        snapshot: follow.converter.state(),
                        subagent_run_id: None,
                    });
                    yield transcript.snapshot(&driver.input.messages);
                } else {
                    transcript.record(&event);
                }
                yield event;
                if end {
                    return;
                }
            }
        }
    }
}

/// The conversation as the client holds it during a run: the last
/// `MESSAGES_SNAPSHOT` the run sent (else the input's messages) and the
/// message events since. Kept as events and folded only when a snapshot
/// is needed (an interrupt), so a run that never needs one pays a copy
/// of its message events only.
#[derive(Default)]
struct Transcript {
    base: Option<Vec<AguiMessage>>,
    said: Vec<Event>,
}

impl Transcript {
    fn record(&mut self, event: &Event) {
        match &event.kind {
            EventKind::MessagesSnapshot(snapshot) => {
                self.base = Some(snapshot.messages.clone());
                self.said.clear();
            }
            _ if is_message_content(event) => self.said.push(event.clone()),
            _ => {}
        }
    }

    /// The `MESSAGES_SNAPSHOT` of the conversation so far.
    fn snapshot(&self, input: &[AguiMessage]) -> Event {
        let mut messages = Messages::new(self.base.as_deref().unwrap_or(input));
        for event in &self.said {
            messages.fold(event);
        }
        Event::new(MessagesSnapshot {
            messages: messages.into_messages(),
        })
    }
}

/// `RUN_FINISHED` with an interrupt outcome.
fn is_interrupt(event: &Event) -> bool {
    matches!(
        &event.kind,
        EventKind::RunFinished(RunFinished {
            outcome: Some(RunFinishedOutcome::Interrupt { .. }),
            ..
        })
    )
}

/// Cancels the task of a run that is dropped before it ended (the client
/// went away), when [`BridgeConfig::cancel_on_disconnect`] is on: `backend`
/// is set while that is to happen.
///
/// [`BridgeConfig::cancel_on_disconnect`]: crate::BridgeConfig::cancel_on_disconnect
struct CancelOnDisconnect {
    backend: Option<Arc<dyn Backend>>,
    /// The run's task, from the first agent event that names one.
    task_id: Option<String>,
}

impl CancelOnDisconnect {
    fn saw(&mut self, event: &StreamResponse) {
        if self.task_id.is_some() || self.backend.is_none() {
            return;
        }
        self.task_id = event_task_id(event).map(str::to_owned);
    }
}

/// The task an agent's event is about (none for a direct reply).
fn event_task_id(event: &StreamResponse) -> Option<&str> {
    match event {
        StreamResponse::Task(task) => Some(&task.id),
        StreamResponse::StatusUpdate(update) => Some(&update.task_id),
        StreamResponse::ArtifactUpdate(update) => Some(&update.task_id),
        _ => None,
    }
}

impl Drop for CancelOnDisconnect {
    fn drop(&mut self) {
        let (Some(backend), Some(task_id)) = (self.backend.take(), self.task_id.take()) else {
            return;
        };
        // A run is dropped on the runtime that served it; without one
        // there is nothing to cancel with.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            match backend.cancel_task(&task_id).await {
                Ok(_) => tracing::debug!(%task_id, "the client went away: task canceled"),
                Err(e) => {
                    tracing::debug!(%task_id, error = %e, "the client went away: cancel failed")
                }
            }
        });
    }
}

/// What a run does after its `RUN_STARTED`.
enum Plan {
    /// Send these events; the run is over after them (a terminal event
    /// among them ends it, else [`Driver::finished`] does).
    Done(Vec<Event>),
    /// Send these events, then follow an agent stream.
    Follow(Vec<Event>, Box<Follow>),
}

/// An agent stream being converted.
struct Follow {
    stream: A2aStream,
    converter: Converter,
    /// The stream continues a task the client has seen: its first item,
    /// the task as it was, brings no new messages.
    known_task: bool,
    /// The task the stream is about, from its first event that names one.
    task_id: Option<String>,
}

impl Follow {
    fn new(stream: A2aStream, converter: Converter, known_task: bool) -> Box<Follow> {
        Box::new(Follow {
            stream,
            converter,
            known_task,
            task_id: None,
        })
    }

    fn convert(&mut self, item: &A2aEvent) -> Vec<Event> {
        // A stream is one task's: an event of another (an agent's bug, a
        // proxy mixing streams) must not end or change this run.
        if let Some(named) = event_task_id(&item.event) {
            match &self.task_id {
                Some(task_id) if task_id != named => {
                    let error = BridgeError::AgentProtocol(format!(
                        "the agent's stream of task {task_id} carried an event of task {named}"
                    ));
                    return self.fail(&error);
                }
                Some(_) => {}
                None => self.task_id = Some(named.to_owned()),
            }
        }
        let first_of_known =
            std::mem::take(&mut self.known_task) && matches!(item.event, StreamResponse::Task(_));
        let events = run_events(&mut self.converter, item.seq, &item.event);
        if first_of_known {
            events
                .into_iter()
                .filter(|event| !is_message_content(event))
                .collect()
        } else {
            events
        }
    }

    fn fail(&mut self, error: &BridgeError) -> Vec<Event> {
        let events: Vec<Event> = self
            .converter
            .fail(&error.to_string(), error.code())
            .into_iter()
            .map(|frame| frame.event)
            .collect();
        if events.is_empty() {
            // The converter sends nothing once its stream is over; the run
            // still gets its one terminal event.
            vec![run_error(error)]
        } else {
            events
        }
    }
}

struct Driver {
    backend: Arc<dyn Backend>,
    config: RunConfig,
    input: RunAgentInput,
}

impl Driver {
    async fn plan(&self) -> Result<Plan, BridgeError> {
        let options = RunOptions::from_input(&self.input)?;
        if let (Some(owner), Some(context)) = (self.backend.owner(), &options.context_id) {
            owner.check_context(context)?;
        }
        if options.mode == Mode::Cancel {
            return self.cancel(&options).await;
        }
        if let Some(resume) = self.input.resume.as_deref().filter(|r| !r.is_empty()) {
            return self.resume(&options, resume).await;
        }
        let task = match &options.task_id {
            Some(id) => Some(self.get_task(id).await?),
            None => None,
        };
        if let Some(task) = &task {
            check_context(&options, task)?;
        }
        let mut addressing = Addressing {
            context_id: options
                .context_id
                .clone()
                .or_else(|| task.as_ref().map(|t| t.context_id.clone()))
                .or_else(|| self.context_from_state()),
            task_id: options.task_id.clone(),
            context_is_new: false,
        };
        let mut known_task = task.is_some();
        let unseen = match (&task, addressing.context_id.clone()) {
            (Some(task), _) => without_seen(&self.input, task.history()),
            (None, Some(context)) => {
                let tasks = self.context_tasks(&context).await?;
                // A context named before the agent has a task in it (a
                // CopilotKit thread's first run): the agent has seen nothing.
                addressing.context_is_new = tasks.is_empty();
                // Results of the tools a task waits on go to that task.
                if let Some(waiting) = waiting_for_results(&self.input, &tasks) {
                    addressing.task_id = Some(waiting.id.clone());
                    known_task = true;
                }
                without_seen(&self.input, tasks.iter().flat_map(Task::history))
            }
            (None, None) => Cow::Borrowed(&self.input),
        };
        let mut outbound = input::outbound(&unseen, &addressing, &self.config.bridge)?;
        if let (Some(outbound), Some(owner)) = (&mut outbound, self.backend.owner())
            && outbound.message.context_id.is_none()
        {
            // A new context is the caller's: the bridge names it.
            outbound.message.context_id = Some(owner.new_context_id());
        }
        match (outbound, task) {
            (None, None) => Err(BridgeError::NothingToSend(
                "the input has no new message and names no taskId to reconnect to".into(),
            )),
            (None, Some(task)) => self.reconnect(options.mode, task).await,
            (Some(outbound), _) => match options.mode {
                Mode::Stream | Mode::Cancel => self.stream(outbound, known_task).await,
                Mode::Send => self.send(outbound).await,
            },
        }
    }

    /// The context the bridge projected into the client's state on an
    /// earlier run, if it is the caller's: a state naming another's
    /// context starts a new one (the history the client sent travels
    /// with it), it does not reach into the other's.
    fn context_from_state(&self) -> Option<String> {
        let context = self
            .input
            .state
            .as_ref()
            .and_then(input::context_from_state)?;
        match self.backend.owner() {
            Some(owner) if !owner.owns(&context) => None,
            _ => Some(context),
        }
    }

    /// The most recent tasks of `context`: what the agent has of the
    /// conversation. An agent without `ListTasks` has told the bridge
    /// nothing: the run sends the turn as the client gave it.
    async fn context_tasks(&self, context: &str) -> Result<Vec<Task>, BridgeError> {
        match self
            .timed("ListTasks", self.backend.list_tasks(context))
            .await
        {
            Ok(tasks) => Ok(tasks),
            Err(BridgeError::Agent { code, message }) => {
                tracing::debug!(code, %message, "ListTasks refused; the turn is sent as it is");
                Ok(Vec::new())
            }
            Err(e) => Err(e),
        }
    }

    /// `mode: "cancel"`: cancels the named task and reports it; a task
    /// that has ended (before, or while the cancel was on its way) is
    /// reported as it is.
    async fn cancel(&self, options: &RunOptions) -> Result<Plan, BridgeError> {
        let Some(task_id) = &options.task_id else {
            return Err(BridgeError::InvalidOptions(
                "mode \"cancel\" needs forwardedProps.a2a.taskId".into(),
            ));
        };
        let task = self.get_task(task_id).await?;
        check_context(options, &task)?;
        let mut converter = self.converter();
        if task.status.state.is_terminal() {
            return Ok(Plan::Done(self.snapshot(&mut converter, None, &task)));
        }
        let now = match self
            .timed("CancelTask", self.backend.cancel_task(&task.id))
            .await
        {
            Ok(canceled) => canceled,
            Err(e) => {
                let now = self.get_task(&task.id).await?;
                if !now.status.state.is_terminal() {
                    return Err(e);
                }
                now
            }
        };
        Ok(Plan::Done(self.snapshot(&mut converter, None, &now)))
    }

    /// The converter's options for this run: AG-UI's ids, the input
    /// echoed, and the bridge's `/view` projection, which starts from the
    /// client's state (ADR 0003).
    fn converter_options(&self) -> ConverterOptions {
        ConverterOptions {
            thread_id: Some(self.input.thread_id.clone()),
            run_id: Some(self.input.run_id.clone()),
            input: Some(self.input.clone()),
            projection: Projection::View,
            ..ConverterOptions::default()
        }
    }

    fn converter(&self) -> Converter {
        Converter::new(self.converter_options())
    }

    /// `RUN_FINISHED {outcome: success}` of this run.
    fn finished(&self) -> Event {
        Event::new(RunFinished {
            thread_id: self.input.thread_id.clone(),
            run_id: self.input.run_id.clone(),
            result: None,
            outcome: Some(RunFinishedOutcome::Success {
                pending_tool_call_ids: None,
            }),
            usage: None,
        })
    }

    /// Waits for `call` at most [`RunConfig::agent_timeout`].
    async fn timed<T>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, BridgeError>>,
    ) -> Result<T, BridgeError> {
        tokio::time::timeout(self.config.agent_timeout, call)
            .await
            .unwrap_or_else(|_| {
                Err(BridgeError::AgentUnavailable(format!(
                    "{what}: no answer within {}s",
                    self.config.agent_timeout.as_secs_f32()
                )))
            })
    }

    /// `GetTask` of a task the run names. A task outside the caller's
    /// contexts is answered as one the agent does not have
    /// ([`crate::owner`]).
    async fn get_task(&self, id: &str) -> Result<Task, BridgeError> {
        let task = self.timed("GetTask", self.backend.get_task(id)).await?;
        if let Some(owner) = self.backend.owner()
            && !owner.owns(&task.context_id)
        {
            return Err(agent_error(A2AError::TaskNotFound(id.to_owned())));
        }
        Ok(task)
    }

    /// `SendStreamingMessage` of `outbound`.
    async fn open_stream(&self, outbound: Outbound) -> Result<A2aStream, BridgeError> {
        let request = SendMessageRequest::new(outbound.message);
        self.timed(
            "SendStreamingMessage",
            self.backend
                .send_streaming_message(request, &outbound.extensions),
        )
        .await
    }

    /// Streams `outbound` (into a task the client knows when `known_task`).
    async fn stream(&self, outbound: Outbound, known_task: bool) -> Result<Plan, BridgeError> {
        let stream = self.open_stream(outbound).await?;
        Ok(Plan::Follow(
            Vec::new(),
            Follow::new(stream, self.converter(), known_task),
        ))
    }

    /// Sends `outbound` without waiting for the task, and reports the task.
    async fn send(&self, outbound: Outbound) -> Result<Plan, BridgeError> {
        let mut request = SendMessageRequest::new(outbound.message);
        request.configuration = Some(SendMessageConfiguration {
            return_immediately: true,
            ..SendMessageConfiguration::default()
        });
        let answer = self
            .timed(
                "SendMessage",
                self.backend.send_message(request, &outbound.extensions),
            )
            .await?;
        let mut converter = self.converter();
        let (item, reply) = match answer {
            // A direct reply is the whole answer: a run with its text.
            SendMessageResponse::Message(m) => (StreamResponse::Message(m), true),
            SendMessageResponse::Task(task) => (StreamResponse::Task(task), false),
            other => {
                return Err(BridgeError::AgentProtocol(format!(
                    "SendMessage answered neither a task nor a message: {other:?}"
                )));
            }
        };
        Ok(Plan::Done(
            run_events(&mut converter, None, &item)
                .into_iter()
                .filter(|e| reply || !is_message_content(e))
                .collect(),
        ))
    }

    /// The task's snapshot, then (in `stream` mode, while it runs) its
    /// updates.
    async fn reconnect(&self, mode: Mode, task: Task) -> Result<Plan, BridgeError> {
        let mut converter = self.converter();
        if mode == Mode::Send || task.status.state.is_terminal() {
            return Ok(Plan::Done(self.snapshot(&mut converter, None, &task)));
        }
        let mut stream = self
            .timed("SubscribeToTask", self.backend.subscribe_to_task(&task.id))
            .await?;
        let first = tokio::time::timeout(self.config.agent_timeout, stream.next()).await;
        let before = match first {
            Ok(Some(Ok(A2aEvent {
                seq,
                event: StreamResponse::Task(now),
            }))) => self.snapshot(&mut converter, seq, &now),
            Ok(Some(Ok(item))) => {
                let mut events = self.snapshot(&mut converter, None, &task);
                let more = converter.convert(item.seq, &item.event);
                events.extend(more.into_iter().map(|f| f.event));
                events
            }
            Ok(Some(Err(e))) => return Err(e),
            // A subscription that ends at once: the task ended meanwhile.
            Ok(None) => {
                let now = self.get_task(&task.id).await?;
                return Ok(Plan::Done(self.snapshot(&mut converter, None, &now)));
            }
            Err(_) => {
                return Err(BridgeError::AgentUnavailable(format!(
                    "SubscribeToTask: nothing within {}s",
                    self.config.agent_timeout.as_secs_f32()
                )));
            }
        };
        let mut follow = Follow::new(stream, converter, false);
        follow.task_id = Some(task.id.clone());
        Ok(Plan::Follow(before, follow))
    }

    /// `task` as the client should now hold it: the converter's state
    /// snapshot, a `MESSAGES_SNAPSHOT`, the rest of what the converter made
    /// of it (activities, the task's ending if it has one).
    fn snapshot(&self, converter: &mut Converter, seq: Option<u64>, task: &Task) -> Vec<Event> {
        let events = run_events(converter, seq, &StreamResponse::Task(task.clone()));
        let mut messages = Messages::new(&self.input.messages);
        for m in task.history() {
            messages.add_history(task, m);
        }
        let mut rest = Vec::new();
        for event in events {
            if !messages.fold(&event) {
                rest.push(event);
            }
        }
        let snapshot = Event::new(MessagesSnapshot {
            messages: messages.into_messages(),
        });
        let at = rest
            .iter()
            .position(|e| matches!(e.kind, EventKind::StateSnapshot(_)))
            .map_or(0, |i| i + 1);
        rest.insert(at, snapshot);
        rest
    }

    /// Answers the interrupt of a paused task. The run's converter is a
    /// resume run's ([`Converter::for_resume_run`]): it shows the decision
    /// on the form's activity and drops the interrupt from the state before
    /// the task's stream (or, for a cancel, its canceled status).
    async fn resume(
        &self,
        options: &RunOptions,
        resume: &[ResumeEntry],
    ) -> Result<Plan, BridgeError> {
        let task_id = resume_task_id(options, &self.input, resume)?;
        let task = self.get_task(&task_id).await?;
        check_context(options, &task)?;
        if answered(&task, resume) {
            // The same answer again (a retry, a second tab): the task has
            // it already, so the run shows the task as it is now.
            return self.reconnect(Mode::Stream, task).await;
        }
        // Checks that `resume` answers exactly the task's interrupt.
        let answer = input::resume_message(resume, &task)?;
        let pending: Vec<PendingInterrupt> = PendingInterrupt::of_task(&task).into_iter().collect();
        let mut converter = Converter::for_resume_run(self.converter_options(), resume, &pending);
        match answer {
            Some(outbound) => {
                let stream = self.open_stream(outbound).await?;
                Ok(Plan::Follow(
                    Vec::new(),
                    Follow::new(stream, converter, true),
                ))
            }
            None => {
                let canceled = self
                    .timed("CancelTask", self.backend.cancel_task(&task.id))
                    .await?;
                // Only the new status: the task's artifacts and messages
                // were shown by the run that paused.
                let update = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: canceled.id.clone(),
                    context_id: canceled.context_id.clone(),
                    status: canceled.status.clone(),
                    metadata: canceled.metadata.clone(),
                });
                Ok(Plan::Done(run_events(&mut converter, None, &update)))
            }
        }
    }
}

/// Whether `resume` answers an interrupt of `task` that is no longer
/// pending: the task left it (it runs again, or has ended) and every entry
/// names one of the task's interrupts (`<taskId>:…`).
fn answered(task: &Task, resume: &[ResumeEntry]) -> bool {
    !task.status.state.is_interrupted()
        && resume.iter().all(|entry| {
            entry
                .interrupt_id
                .strip_prefix(task.id.as_str())
                .is_some_and(|rest| rest.len() > 1 && rest.starts_with(':'))
        })
}

/// `input` without the messages the agent already holds (`history`: the
/// named task's, or the context's tasks'). The bridge tags each part it
/// sends with the AG-UI message it came from (`metadata.agui.messageId`),
/// and AG-UI clients send the whole conversation on every run: without
/// this, a reconnect would send the task the message that started it once
/// more, and a run after one that produced no assistant text (rejected,
/// failed, aborted) would send the earlier run's message again.
fn without_seen<'a, 'm>(
    input: &'a RunAgentInput,
    history: impl IntoIterator<Item = &'m switchboard_protocol::Message>,
) -> Cow<'a, RunAgentInput> {
    let seen: HashSet<&str> = history
        .into_iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| p.metadata.as_ref()?.get("agui")?.get("messageId")?.as_str())
        .collect();
    if !input.messages.iter().any(|m| seen.contains(m.id())) {
        return Cow::Borrowed(input);
    }
    let mut unseen = input.clone();
    unseen.messages.retain(|m| !seen.contains(m.id()));
    Cow::Owned(unseen)
}

/// The task of `tasks` that waits on the client to run tools (in
/// input-required, its status message calling them: frontend tools) whose
/// results `input` holds: where those results go. Clients answer a pending
/// tool call with a `tool` message in their next run, naming only the call.
fn waiting_for_results<'t>(input: &RunAgentInput, tasks: &'t [Task]) -> Option<&'t Task> {
    let results: HashSet<&str> = input
        .messages
        .iter()
        .filter_map(|m| match m {
            AguiMessage::Tool(t) => Some(t.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    if results.is_empty() {
        return None;
    }
    tasks.iter().find(|task| {
        task.status.state == TaskState::InputRequired
            && task.status.message.as_ref().is_some_and(|m| {
                m.parts.iter().any(|part| {
                    let hints = PartHints::read(part);
                    hints.role() == PartRole::ToolCall
                        && read_tool_call(part, &hints)
                            .is_some_and(|c| results.contains(c.id.as_str()))
                })
            })
    })
}

/// A different explicit `contextId` than the task's is an error (ADR 0001).
fn check_context(options: &RunOptions, task: &Task) -> Result<(), BridgeError> {
    match &options.context_id {
        Some(context) if *context != task.context_id => Err(BridgeError::ContextMismatch {
            task_id: task.id.clone(),
            context_id: context.clone(),
        }),
        _ => Ok(()),
    }
}

/// The task a resume answers: the run's `taskId`, else the task of the
/// interrupt in the client's `view.pendingInterrupts`, else the interrupt
/// id's prefix (ids are `<taskId>:<…>`).
fn resume_task_id(
    options: &RunOptions,
    input: &RunAgentInput,
    resume: &[ResumeEntry],
) -> Result<String, BridgeError> {
    if let Some(id) = &options.task_id {
        return Ok(id.clone());
    }
    let Some(entry) = resume.first() else {
        return Err(BridgeError::InvalidResume("resume is empty".into()));
    };
    let pending = input
        .state
        .as_ref()
        .and_then(|s| s.get("view"))
        .and_then(|v| v.get("pendingInterrupts"))
        .and_then(|p| p.get(&entry.interrupt_id))
        .and_then(|i| i.get("taskId"))
        .and_then(Value::as_str);
    if let Some(id) = pending {
        return Ok(id.to_owned());
    }
    match entry.interrupt_id.split_once(':') {
        Some((task, _)) if !task.is_empty() => Ok(task.to_owned()),
        _ => Err(BridgeError::InvalidResume(format!(
            "interrupt {:?} names no task (and the run names no taskId)",
            entry.interrupt_id
        ))),
    }
}

fn run_error(error: &BridgeError) -> Event {
    Event::new(RunError {
        message: error.to_string(),
        code: Some(error.code().to_owned()),
        usage: None,
    })
}

/// The events `converter` makes of `item`, less the RUN_STARTED it opens a
/// run with: the run's RUN_STARTED is the driver's, sent already.
fn run_events(converter: &mut Converter, seq: Option<u64>, item: &StreamResponse) -> Vec<Event> {
    converter
        .convert(seq, item)
        .into_iter()
        .map(|frame| frame.event)
        .filter(|event| !matches!(event.kind, EventKind::RunStarted(_)))
        .collect()
}

/// Events that make up messages (text, reasoning, tool calls and results).
fn is_message_content(event: &Event) -> bool {
    use EventKind as K;
    matches!(
        event.kind,
        K::TextMessageStart(_)
            | K::TextMessageContent(_)
            | K::TextMessageEnd(_)
            | K::TextMessageChunk(_)
            | K::ReasoningStart(_)
            | K::ReasoningMessageStart(_)
            | K::ReasoningMessageContent(_)
            | K::ReasoningMessageEnd(_)
            | K::ReasoningMessageChunk(_)
            | K::ReasoningEnd(_)
            | K::ReasoningEncryptedValue(_)
            | K::ToolCallStart(_)
            | K::ToolCallArgs(_)
            | K::ToolCallEnd(_)
            | K::ToolCallChunk(_)
            | K::ToolCallResult(_)
    )
}

/// The messages of a `MESSAGES_SNAPSHOT`, in order, each id once: the
/// official client *replaces* its list with a snapshot, so it starts from
/// the client's own messages.
struct Messages {
    list: Vec<AguiMessage>,
    ids: HashSet<String>,
}

impl Messages {
    fn new(client: &[AguiMessage]) -> Self {
        let mut messages = Messages {
            list: Vec::new(),
            ids: HashSet::new(),
        };
        for m in client {
            messages.push(m.clone());
        }
        messages
    }

    fn push(&mut self, message: AguiMessage) {
        if self.ids.insert(message.id().to_owned()) {
            self.list.push(message);
        }
    }

    /// A message of the task's history. A user message the bridge sent is
    /// the client's own (its parts name their AG-UI messages in
    /// `metadata.agui.messageId`); an agent message has the id the
    /// converter gives status messages (`<taskId>:<messageId>`).
    fn add_history(&mut self, task: &Task, m: &switchboard_protocol::Message) {
        let text = m.text();
        if text.is_empty() {
            return;
        }
        match m.role {
            Role::User => {
                let client_ids = m
                    .parts
                    .iter()
                    .filter_map(|p| p.metadata.as_ref()?.get("agui")?.get("messageId")?.as_str());
                let mut known = false;
                for id in client_ids {
                    known |= self.ids.contains(id);
                }
                if !known {
                    self.push(AguiMessage::User(UserMessage {
                        id: m.message_id.clone(),
                        content: Content::Text(text),
                        ..UserMessage::default()
                    }));
                }
            }
            _ => {
                let id = if m.message_id == task.id {
                    m.message_id.clone()
                } else {
                    format!("{}:{}", task.id, m.message_id)
                };
                self.push(AguiMessage::Assistant(AssistantMessage {
                    id,
                    content: Some(text),
                    ..AssistantMessage::default()
                }));
            }
        }
    }

    /// Folds one of the converter's message events into the list; `false`
    /// for events that are not message content.
    fn fold(&mut self, event: &Event) -> bool {
        use EventKind as K;
        match &event.kind {
            K::TextMessageStart(e) => {
                let id = e.message_id.clone();
                if self.restart_text(&id) {
                    return true;
                }
                let content = Some(String::new());
                self.push(match e.role.unwrap_or_default() {
                    TextRole::User => AguiMessage::User(UserMessage {
                        id,
                        content: Content::Text(String::new()),
                        ..UserMessage::default()
                    }),
                    _ => AguiMessage::Assistant(AssistantMessage {
                        id,
                        content,
                        ..AssistantMessage::default()
                    }),
                });
            }
            K::TextMessageContent(e) => self.append_text(&e.message_id, &e.delta),
            K::ReasoningMessageStart(e) => {
                if !self.restart_text(&e.message_id) {
                    self.push(AguiMessage::Reasoning(ReasoningMessage {
                        id: e.message_id.clone(),
                        content: String::new(),
                        ..ReasoningMessage::default()
                    }));
                }
            }
            K::ReasoningMessageContent(e) => self.append_text(&e.message_id, &e.delta),
            K::ToolCallStart(e) => {
                let call = ToolCall {
                    id: e.tool_call_id.clone(),
                    kind: "function".into(),
                    function: FunctionCall {
                        name: e.tool_call_name.clone(),
                        arguments: String::new(),
                    },
                    encrypted_value: None,
                    metadata: None,
                };
                let parent = e.parent_message_id.as_deref().unwrap_or(&e.tool_call_id);
                let existing = self.list.iter_mut().find_map(|m| match m {
                    AguiMessage::Assistant(a) if a.id == parent => Some(a),
                    _ => None,
                });
                match existing {
                    Some(a) => a.tool_calls.get_or_insert_with(Vec::new).push(call),
                    None => self.push(AguiMessage::Assistant(AssistantMessage {
                        id: parent.to_owned(),
                        tool_calls: Some(vec![call]),
                        ..AssistantMessage::default()
                    })),
                }
            }
            K::ToolCallArgs(e) => {
                for m in &mut self.list {
                    if let AguiMessage::Assistant(a) = m {
                        for call in a.tool_calls.iter_mut().flatten() {
                            if call.id == e.tool_call_id {
                                call.function.arguments.push_str(&e.delta);
                            }
                        }
                    }
                }
            }
            K::ToolCallResult(e) => self.push(AguiMessage::Tool(ToolMessage {
                id: e.message_id.clone(),
                content: e.content.clone(),
                tool_call_id: e.tool_call_id.clone(),
                ..ToolMessage::default()
            })),
            _ => return is_message_content(event),
        }
        true
    }

    /// Empties the text of the message `id` when the list has it already,
    /// so the converter's content events that follow rebuild it: the
    /// client's copy of a message it saw before a disconnect (or the
    /// task's history) would otherwise get the same text appended again.
    /// `false` when the message is new.
    fn restart_text(&mut self, id: &str) -> bool {
        if !self.ids.contains(id) {
            return false;
        }
        for m in &mut self.list {
            match m {
                AguiMessage::Assistant(a) if a.id == id => a.content = Some(String::new()),
                AguiMessage::User(u) if u.id == id => u.content = Content::Text(String::new()),
                AguiMessage::Reasoning(r) if r.id == id => r.content.clear(),
                _ => {}
            }
        }
        true
    }

    fn append_text(&mut self, id: &str, delta: &str) {
        for m in &mut self.list {
            match m {
                AguiMessage::Assistant(a) if a.id == id => {
                    a.content.get_or_insert_with(String::new).push_str(delta)
                }
                AguiMessage::User(u) if u.id == id => {
                    if let Content::Text(t) = &mut u.content {
                        t.push_str(delta);
                    }
                }
                AguiMessage::Reasoning(r) if r.id == id => r.content.push_str(delta),
                _ => {}
            }
        }
    }

    fn into_messages(self) -> Vec<AguiMessage> {
        self.list
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use async_trait::async_trait;
    use futures::stream;
    use serde_json::json;
    use switchboard_agui::Verifier;
    use switchboard_protocol::{Message, TaskState, TaskStatus};

    use super::*;

    /// A backend whose streams are `items`, then nothing.
    #[derive(Debug)]
    struct Scripted {
        items: Vec<A2aEvent>,
    }

    #[async_trait]
    impl Backend for Scripted {
        async fn send_message(
            &self,
            _: SendMessageRequest,
            _: &[String],
        ) -> Result<SendMessageResponse, BridgeError> {
            Err(BridgeError::AgentUnavailable("not scripted".into()))
        }

        async fn send_streaming_message(
            &self,
            _: SendMessageRequest,
            _: &[String],
        ) -> Result<A2aStream, BridgeError> {
            Ok(stream::iter(self.items.clone().into_iter().map(Ok)).boxed())
        }

        async fn get_task(&self, id: &str) -> Result<Task, BridgeError> {
            Err(BridgeError::Agent {
                code: -32001,
                message: format!("task not found: {id}"),
            })
        }

        async fn subscribe_to_task(&self, id: &str) -> Result<A2aStream, BridgeError> {
            self.get_task(id).await.map(|_| stream::empty().boxed())
        }

        async fn cancel_task(&self, id: &str) -> Result<Task, BridgeError> {
            self.get_task(id).await
        }

        async fn list_tasks(&self, _: &str) -> Result<Vec<Task>, BridgeError> {
            Ok(Vec::new())
        }
    }

    fn user_input() -> RunAgentInput {
        serde_json::from_value(json!({
            "threadId": "t", "runId": "r",
            "messages": [{"id": "u1", "role": "user", "content": "hi"}],
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn a_stream_that_stops_before_the_task_ends_is_a_run_error() {
        let task = Task {
            id: "task-1".into(),
            context_id: "ctx-1".into(),
            status: TaskStatus::new(TaskState::Working)
                .with_message(Message::agent_text("working on it")),
            artifacts: None,
            history: None,
            metadata: None,
        };
        let backend = Arc::new(Scripted {
            items: vec![A2aEvent {
                seq: Some(1),
                event: StreamResponse::Task(task),
            }],
        });
        let events: Vec<Event> = run(backend, RunConfig::default(), user_input())
            .collect()
            .await;
        Verifier::verify_all(&events).unwrap();
        let types: Vec<&str> = events.iter().map(Event::type_name).collect();
        assert_eq!(types.first(), Some(&"RUN_STARTED"));
        assert_eq!(types.last(), Some(&"RUN_ERROR"), "{types:?}");
        let EventKind::RunError(error) = &events[events.len() - 1].kind else {
            unreachable!()
        };
        assert_eq!(error.code.as_deref(), Some("bridge:agent_protocol"));
        assert!(error.message.contains("ended before"), "{}", error.message);
    }

    #[tokio::test]
    async fn an_event_of_another_task_is_a_run_error_not_its_end() {
        let task = |id: &str, state: TaskState| Task {
            id: id.into(),
            context_id: "ctx-1".into(),
            status: TaskStatus::new(state),
            artifacts: None,
            history: None,
            metadata: None,
        };
        let other_done = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "task-2".into(),
            context_id: "ctx-1".into(),
            status: TaskStatus::new(TaskState::Completed),
            metadata: None,
        });
        let backend = Arc::new(Scripted {
            items: vec![
                A2aEvent {
                    seq: Some(1),
                    event: StreamResponse::Task(task("task-1", TaskState::Working)),
                },
                A2aEvent {
                    seq: Some(2),
                    event: other_done,
                },
            ],
        });
        let events: Vec<Event> = run(backend, RunConfig::default(), user_input())
            .collect()
            .await;
        Verifier::verify_all(&events).unwrap();
        let EventKind::RunError(error) = &events[events.len() - 1].kind else {
            panic!(
                "{:?}",
                events.iter().map(Event::type_name).collect::<Vec<_>>()
            )
        };
        assert_eq!(error.code.as_deref(), Some("bridge:agent_protocol"));
        assert!(error.message.contains("task-2"), "{}", error.message);
    }

    #[tokio::test]
    async fn an_empty_stream_is_a_run_error_too() {
        let backend = Arc::new(Scripted { items: Vec::new() });
        let events: Vec<Event> = run(backend, RunConfig::default(), user_input())
            .collect()
            .await;
        let types: Vec<&str> = events.iter().map(Event::type_name).collect();
        assert_eq!(types, ["RUN_STARTED", "RUN_ERROR"]);
        Verifier::verify_all(&events).unwrap();
    }

    #[test]
    fn messages_the_task_holds_are_not_sent_again() {
        let sent = crate::input::tagged_user_text("hi", "u1");
        let mut task = Task {
            id: "task-1".into(),
            context_id: "ctx-1".into(),
            status: TaskStatus::new(TaskState::Working),
            artifacts: None,
            history: Some(vec![Message::agent_text("untagged")]),
            metadata: None,
        };
        let mut input = user_input();
        assert!(matches!(
            without_seen(&input, task.history()),
            Cow::Borrowed(_)
        ));
        task.history = Some(vec![sent]);
        input.messages.push(
            serde_json::from_value(json!({"id": "u2", "role": "user", "content": "more"})).unwrap(),
        );
        let unseen = without_seen(&input, task.history());
        let ids: Vec<&str> = unseen.messages.iter().map(AguiMessage::id).collect();
        assert_eq!(ids, ["u2"]);
    }

    #[test]
    fn a_message_the_client_already_holds_is_rebuilt_not_appended_to() {
        // The client saw the status message before it disconnected; the
        // reconnect's snapshot renders it again under the same id.
        let client: Vec<AguiMessage> = serde_json::from_value(json!([
            {"id": "u1", "role": "user", "content": "/long 3"},
            {"id": "task-1:m1", "role": "assistant", "content": "working: 1/6"},
        ]))
        .unwrap();
        let mut messages = Messages::new(&client);
        let converter = [
            json!({"type": "TEXT_MESSAGE_START", "messageId": "task-1:m1", "role": "assistant"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "task-1:m1", "delta": "working: 1/6"}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": "task-1:m1"}),
        ];
        for event in converter {
            let event: Event = serde_json::from_value(event).unwrap();
            assert!(messages.fold(&event));
        }
        let list = messages.into_messages();
        assert_eq!(list.len(), 2);
        let AguiMessage::Assistant(status) = &list[1] else {
            panic!("{list:?}")
        };
        assert_eq!(status.content.as_deref(), Some("working: 1/6"));
    }

    #[test]
    fn a_resume_finds_its_task() {
        let entry = |id: &str| switchboard_agui::events::ResumeEntry {
            interrupt_id: id.into(),
            status: switchboard_agui::events::ResumeStatus::Resolved,
            payload: None,
            metadata: None,
        };
        let mut input = user_input();
        let named = RunOptions {
            task_id: Some("t-named".into()),
            ..RunOptions::default()
        };
        let none = RunOptions::default();
        assert_eq!(
            resume_task_id(&named, &input, &[entry("t-1:m-1")]).unwrap(),
            "t-named"
        );
        assert_eq!(
            resume_task_id(&none, &input, &[entry("t-1:m-1")]).unwrap(),
            "t-1"
        );
        input.state = Some(json!({"view": {"pendingInterrupts": {
            "i-7": {"interruptId": "i-7", "taskId": "t-from-state"}
        }}}));
        assert_eq!(
            resume_task_id(&none, &input, &[entry("i-7")]).unwrap(),
            "t-from-state"
        );
        let err = resume_task_id(&none, &input, &[entry("nocolon")]).unwrap_err();
        assert_eq!(err.code(), "bridge:invalid_resume");
    }
}
