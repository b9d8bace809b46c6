//! One tool call: an A2A message sent, its task followed to an MCP result.
//!
//! The call sends the message (`SendStreamingMessage` when the card says the
//! agent streams, else `SendMessage`, which the agent answers once the task
//! finished or waits) and reads the task's events:
//!
//! - **Progress.** A working status is an MCP progress notification when the
//!   call carried a progress token: the task-progress extension's aggregate
//!   (or the trackers summed) when the status carries a payload, else one
//!   step per status, its message the status text. MCP wants progress to
//!   grow with each notification, so one that would not is left out.
//! - **Artifacts** are collected (appended chunks joined) and become the
//!   result when the task completes (the `content` module).
//! - **Input required.** The agent's question goes to the user
//!   (`Call::ask`); the answer is sent on the same task and the call goes
//!   on following it.
//! - **Cancellation.** An MCP cancellation (or a call whose caller went
//!   away: the call's future dropped) cancels the A2A task. A cancellation
//!   that comes before the agent named the task waits for the name.
//!
//! The agent's silence is bounded ([`crate::McpOptions::agent_timeout`]) on
//! every read, so a call never hangs on a stuck agent.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, InputRequest, InputRequests,
    InputRequiredResult, PrimitiveSchemaDefinition, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, StringSchema,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use switchboard_agui::hitl::HitlForm;
use switchboard_bridge::{Caller, Owner};
use switchboard_client::{A2AClient, ClientError};
use switchboard_protocol::progress::{ProgressAggregate, ProgressPayload};
use switchboard_protocol::{
    A2AError, Artifact, Message, Metadata, Part, Role, SendMessageResponse, StreamResponse,
    TaskState, TaskStatus,
};

use crate::content::ResultBuilder;
use crate::tools::Arguments;
use crate::{Agent, CallError, Inner};

/// The principal of a caller that came with none: the one host of a stdio
/// front.
pub const LOCAL_CALLER: &str = "mcp:local";

/// The key of the one question an input-required result asks.
const ANSWER: &str = "answer";

/// How long a cancellation waits for the agent to name the task it cancels.
const CANCEL_NAME_WAIT: Duration = Duration::from_secs(10);

/// Runs the tool call `request` (see the module docs).
pub(crate) async fn call_tool(
    inner: &Inner,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let outcome = match inner.tools.get(&request.name) {
        None => Err(CallError::UnknownTool(request.name.to_string())),
        Some(route) => {
            let agent = &inner.agents[route.agent];
            let mut call = Call::new(inner, agent, &context, &request.name);
            call.run(&request).await
        }
    };
    outcome.or_else(CallError::into_response)
}

/// What a followed message came to.
enum Settled {
    /// A direct reply, no task.
    Reply(Message),
    /// The task reached a terminal or interrupted state.
    Task,
    /// The stream ended with the task in neither.
    Ended,
}

/// What asking the user gave.
enum Asked {
    /// The user's answer: send it to the task.
    Answer(Vec<Part>),
    /// The call ends with this (an input-required result, or the question
    /// told in words).
    Return(CallToolResponse),
}

/// The task as the call has seen it.
#[derive(Debug, Default)]
struct TaskView {
    id: Option<String>,
    context_id: Option<String>,
    status: Option<TaskStatus>,
    artifacts: Vec<Artifact>,
}

impl TaskView {
    fn state(&self) -> Option<TaskState> {
        self.status.as_ref().map(|s| s.state)
    }

    fn status_text(&self) -> String {
        self.status
            .as_ref()
            .and_then(|s| s.message.as_ref())
            .map(Message::text)
            .unwrap_or_default()
    }

    fn id(&self) -> String {
        self.id.clone().unwrap_or_default()
    }

    /// Adds an artifact update: appended to the artifact of the same id,
    /// or replacing it.
    fn artifact(&mut self, artifact: Artifact, append: bool) {
        match self
            .artifacts
            .iter_mut()
            .find(|a| a.artifact_id == artifact.artifact_id)
        {
            Some(known) if append => known.parts.extend(artifact.parts),
            Some(known) => *known = artifact,
            None => self.artifacts.push(artifact),
        }
    }
}

/// Cancels the task when the call ends without settling it: dropped (its
/// caller went away) or failed on the way. Disarmed by an outcome that
/// leaves the task as it is on purpose (completed, or waiting for an answer
/// the caller will send).
#[derive(Debug)]
struct CancelGuard {
    client: A2AClient,
    task: Option<String>,
    armed: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (Some(task), Ok(runtime)) = (self.task.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let client = self.client.clone();
        runtime.spawn(async move {
            if let Err(error) = client.cancel_task(task.as_str()).await {
                tracing::debug!(%task, %error, "canceling an abandoned task");
            }
        });
    }
}

/// Progress notifications of one call.
struct Progress {
    token: Option<ProgressToken>,
    peer: Peer<RoleServer>,
    last: Option<f64>,
}

impl Progress {
    async fn status(&mut self, status: &TaskStatus, metadata: Option<&Metadata>) {
        let Some(token) = &self.token else {
            return;
        };
        let payload = metadata
            .and_then(ProgressPayload::from_metadata)
            .and_then(Result::ok);
        let (progress, total, message) = match payload {
            Some(payload) => {
                let aggregate = payload
                    .aggregate
                    .clone()
                    .unwrap_or_else(|| ProgressAggregate::from_trackers(&payload.trackers));
                let message = aggregate.message.clone().or_else(|| {
                    let summaries: Vec<String> =
                        payload.trackers.iter().map(|t| t.summary()).collect();
                    (!summaries.is_empty()).then(|| summaries.join("; "))
                });
                (aggregate.progress.unwrap_or(0.0), aggregate.total, message)
            }
            None => {
                let text = status.message.as_ref().map(Message::text);
                (self.last.map_or(1.0, |l| l.floor() + 1.0), None, text)
            }
        };
        if self.last.is_some_and(|last| progress <= last) {
            return;
        }
        self.last = Some(progress);
        let mut params = ProgressNotificationParam::new(token.clone(), progress);
        if let Some(total) = total {
            params = params.with_total(total);
        }
        if let Some(message) = message.filter(|m| !m.is_empty()) {
            params = params.with_message(message);
        }
        if let Err(error) = self.peer.notify_progress(params).await {
            tracing::debug!(%error, "progress notification not sent");
        }
    }
}

/// One tool call in flight.
struct Call<'a> {
    inner: &'a Inner,
    agent: &'a Agent,
    context: &'a RequestContext<RoleServer>,
    tool: &'a str,
    owner: Owner,
    progress: Progress,
    guard: CancelGuard,
    task: TaskView,
}

impl<'a> Call<'a> {
    fn new(
        inner: &'a Inner,
        agent: &'a Agent,
        context: &'a RequestContext<RoleServer>,
        tool: &'a str,
    ) -> Self {
        // Over HTTP, the authentication layer named the caller; rmcp hands
        // the request's head to the call in its extensions.
        let principal = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|head| head.extensions.get::<Caller>())
            .map_or(LOCAL_CALLER, |caller| caller.0.as_str());
        Call {
            inner,
            agent,
            context,
            tool,
            owner: Owner::of(principal),
            progress: Progress {
                token: context.meta.get_progress_token(),
                peer: context.peer.clone(),
                last: None,
            },
            guard: CancelGuard {
                client: agent.client.clone(),
                task: None,
                armed: true,
            },
            task: TaskView::default(),
        }
    }

    fn endpoint(&self) -> &str {
        self.agent.client.endpoint()
    }

    fn client_error(&self, error: ClientError) -> CallError {
        CallError::from_client(self.endpoint(), error)
    }

    async fn run(
        &mut self,
        request: &CallToolRequestParams,
    ) -> Result<CallToolResponse, CallError> {
        // A retry of an input-required result names its task in the state
        // it echoes, and carries the answer.
        let retry = request.request_state.as_deref();
        let arguments = Arguments::read(request.arguments.as_ref(), retry.is_some())
            .map_err(CallError::InvalidArguments)?;
        let mut message = match retry.or(arguments.task_id.as_deref()) {
            Some(task_id) => {
                self.adopt(task_id).await?;
                match retry {
                    Some(_) => {
                        let parts = self.retry_answer(request)?;
                        self.message_of(parts)
                    }
                    None => self.message(arguments.message.clone(), arguments.data.clone()),
                }
            }
            None => {
                self.task.context_id = Some(self.owner.new_context_id());
                self.message(arguments.message.clone(), arguments.data.clone())
            }
        };
        loop {
            match self.follow(message).await? {
                Settled::Reply(reply) => {
                    self.guard.armed = false;
                    let mut result = ResultBuilder::default();
                    result.parts(&reply.message_id, &reply.parts);
                    return Ok(result.build(false).into());
                }
                Settled::Task => {}
                Settled::Ended => self.refresh().await?,
            }
            let task_id = self.task.id();
            match self.task.state() {
                Some(TaskState::Completed) => {
                    self.guard.armed = false;
                    let mut result = ResultBuilder::default();
                    result.artifacts(&task_id, &self.task.artifacts);
                    if self.task.artifacts.is_empty() {
                        result.text(self.task.status_text());
                    }
                    return Ok(result.build(false).into());
                }
                Some(TaskState::Failed) => {
                    self.guard.armed = false;
                    return Err(CallError::Failed {
                        task_id,
                        reason: self.reason(),
                    });
                }
                Some(TaskState::Rejected) => {
                    self.guard.armed = false;
                    return Err(CallError::Rejected {
                        task_id,
                        reason: self.reason(),
                    });
                }
                Some(TaskState::Canceled) => {
                    self.guard.armed = false;
                    return Err(CallError::Canceled { task_id });
                }
                Some(TaskState::AuthRequired) => {
                    let schemes = if self.agent.schemes.is_empty() {
                        "a scheme its card does not name".to_owned()
                    } else {
                        self.agent.schemes.join(", ")
                    };
                    let message = self.reason();
                    self.cancel().await;
                    return Err(CallError::AuthRequired {
                        task_id,
                        schemes,
                        message,
                    });
                }
                Some(TaskState::InputRequired) => match self.ask().await? {
                    Asked::Answer(parts) => message = self.message_of(parts),
                    Asked::Return(response) => {
                        self.guard.armed = false;
                        return Ok(response);
                    }
                },
                _ => return Err(CallError::Unfinished(task_id)),
            }
        }
    }

    /// The agent's status text, or a placeholder.
    fn reason(&self) -> String {
        let text = self.task.status_text();
        if text.trim().is_empty() {
            "(the agent gave no reason)".to_owned()
        } else {
            text
        }
    }

    /// A user message on the call's context (and task, once known).
    fn message(&self, text: String, data: Option<Value>) -> Message {
        let mut parts = vec![Part::text(text)];
        if let Some(data) = data {
            parts.push(Part::data(data));
        }
        self.message_of(parts)
    }

    /// A user message of `parts` on the call's context (and task).
    fn message_of(&self, parts: Vec<Part>) -> Message {
        let mut message = Message::new(Role::User, parts);
        message.context_id.clone_from(&self.task.context_id);
        message.task_id.clone_from(&self.task.id);
        message
    }

    /// Takes over the caller's task `task_id` (to answer it): read, and
    /// checked to be in one of the caller's contexts.
    async fn adopt(&mut self, task_id: &str) -> Result<(), CallError> {
        let task = match self.agent.client.get_task(task_id).await {
            Ok(task) => task,
            Err(ClientError::Protocol(A2AError::TaskNotFound(_))) => {
                return Err(CallError::UnknownTask(task_id.to_owned()));
            }
            Err(error) => return Err(self.client_error(error)),
        };
        if !self.owner.owns(&task.context_id) {
            return Err(CallError::UnknownTask(task_id.to_owned()));
        }
        self.guard.task = Some(task.id.clone());
        self.task = TaskView {
            id: Some(task.id.clone()),
            context_id: Some(task.context_id.clone()),
            artifacts: task.artifacts.clone().unwrap_or_default(),
            status: Some(task.status),
        };
        Ok(())
    }

    /// The form the agent's question holds, if any.
    fn form(&self) -> Option<HitlForm> {
        self.task
            .status
            .as_ref()
            .and_then(|s| s.message.as_ref())
            .and_then(HitlForm::find)
    }

    /// The answer an input-required retry carries.
    fn retry_answer(&self, request: &CallToolRequestParams) -> Result<Vec<Part>, CallError> {
        let response = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get(ANSWER))
            .cloned()
            .ok_or_else(|| {
                CallError::InvalidArguments(format!("the retry carries no `{ANSWER}` response"))
            })?;
        let result: ElicitResult = serde_json::from_value(response)
            .map_err(|e| CallError::InvalidArguments(format!("the `{ANSWER}` response: {e}")))?;
        self.answer_of(result)
    }

    /// The parts that answer the agent: a form's response (its values)
    /// when the agent asked with a form, else the text. A declined or
    /// dismissed elicitation is [`CallError::NotAnswered`] (and the caller
    /// cancels the task).
    fn answer_of(&self, result: ElicitResult) -> Result<Vec<Part>, CallError> {
        let action = match result.action {
            ElicitationAction::Accept => {
                if let (Some(form), Some(values @ Value::Object(_))) =
                    (self.form(), &result.content)
                {
                    return Ok(vec![form.response(values.clone())]);
                }
                return Ok(vec![Part::text(match result.content {
                    Some(Value::Object(map)) => match map.get(ANSWER) {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => Value::Object(map).to_string(),
                    },
                    Some(other) => other.to_string(),
                    None => String::new(),
                })]);
            }
            ElicitationAction::Decline => "decline",
            _ => "cancel",
        };
        Err(CallError::NotAnswered {
            task_id: self.task.id(),
            action,
        })
    }

    /// The agent asks for input: asks the user, as the host allows.
    async fn ask(&mut self) -> Result<Asked, CallError> {
        let question = self.reason();
        let elicits = self
            .context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        let params = elicitation(&question, self.form().as_ref());
        let stateless = self
            .context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        if elicits && stateless {
            // 2026-07-28 has no server-to-client requests: the result asks,
            // and the client retries the call with the answer and the task
            // id it echoes.
            let mut requests = InputRequests::new();
            requests.insert(
                ANSWER.to_owned(),
                InputRequest::Elicitation(ElicitRequest::new(params)),
            );
            let result = InputRequiredResult::new(Some(requests), self.task.id.clone());
            return Ok(Asked::Return(result.into()));
        }
        if elicits {
            let asked = tokio::select! {
                // Cancel-safety: nothing is lost when the request is
                // dropped; the call ends either way.
                _ = self.context.ct.cancelled() => {
                    return Err(self.cancel_after_request().await);
                }
                asked = self.context.peer.create_elicitation(params) => asked,
            };
            match asked {
                Ok(result) => {
                    return match self.answer_of(result) {
                        Ok(parts) => Ok(Asked::Answer(parts)),
                        Err(error) => {
                            self.cancel().await;
                            Err(error)
                        }
                    };
                }
                Err(error) => {
                    tracing::debug!(%error, "elicitation failed; telling the question instead");
                }
            }
        }
        let task_id = self.task.id();
        let mut result = ResultBuilder::default();
        result.text(format!(
            "The agent asks: {question}\n\nIts task {task_id} is waiting for the answer: call the tool {} again with `task_id` \"{task_id}\" and the answer as `message`.",
            self.tool
        ));
        let mut result: CallToolResult = result.build(false);
        result.structured_content = Some(json!({
            "taskId": task_id,
            "state": TaskState::InputRequired.label(),
            "question": question,
        }));
        Ok(Asked::Return(result.into()))
    }

    /// Sends `message` and follows its task until it settles.
    async fn follow(&mut self, message: Message) -> Result<Settled, CallError> {
        let timeout = self.inner.options.agent_timeout;
        if !self.agent.streaming {
            let sent = tokio::select! {
                // Cancel-safety: a dropped send may still reach the agent;
                // its task, unnamed, runs to its end there.
                _ = self.context.ct.cancelled() => {
                    return Err(CallError::Canceled { task_id: self.task.id() });
                }
                sent = tokio::time::timeout(timeout, self.agent.client.send_message(message)) => sent,
            };
            return match sent {
                Err(_) => Err(CallError::Silent(timeout)),
                Ok(Err(error)) => Err(self.client_error(error)),
                Ok(Ok(SendMessageResponse::Message(reply))) => Ok(Settled::Reply(reply)),
                Ok(Ok(SendMessageResponse::Task(task))) => Ok(self
                    .apply(StreamResponse::Task(task))
                    .await
                    .unwrap_or(Settled::Ended)),
                Ok(Ok(_)) => Err(CallError::Agent(ClientError::Decode(
                    "the agent answered with neither a task nor a message".into(),
                ))),
            };
        }
        let opened = tokio::select! {
            _ = self.context.ct.cancelled() => {
                return Err(self.cancel_after_request().await);
            }
            opened = tokio::time::timeout(timeout, self.agent.client.send_streaming_message(message)) => opened,
        };
        let mut stream = match opened {
            Err(_) => return Err(CallError::Silent(timeout)),
            Ok(Err(error)) => return Err(self.client_error(error)),
            Ok(Ok(stream)) => stream,
        };
        let mut cancel_requested = false;
        loop {
            let next = tokio::select! {
                // Cancel-safety: `next` on the event stream is cancel-safe
                // (an event not yet taken stays in the stream).
                biased;
                _ = self.context.ct.cancelled(), if !cancel_requested => {
                    if self.task.id.is_some() {
                        self.cancel().await;
                        return Err(CallError::Canceled { task_id: self.task.id() });
                    }
                    // The agent has not named the task yet: cancel it as
                    // soon as it does.
                    cancel_requested = true;
                    continue;
                }
                next = tokio::time::timeout(
                    if cancel_requested { CANCEL_NAME_WAIT } else { timeout },
                    stream.next(),
                ) => next,
            };
            let event = match next {
                Err(_) => {
                    if cancel_requested {
                        return Err(CallError::Canceled {
                            task_id: self.task.id(),
                        });
                    }
                    self.cancel().await;
                    return Err(CallError::Silent(timeout));
                }
                Ok(None) => return Ok(Settled::Ended),
                Ok(Some(Err(error))) => return Err(self.client_error(error)),
                Ok(Some(Ok(event))) => event.event,
            };
            let settled = self.apply(event).await;
            if cancel_requested && self.task.id.is_some() {
                self.cancel().await;
                return Err(CallError::Canceled {
                    task_id: self.task.id(),
                });
            }
            if let Some(settled) = settled {
                return Ok(settled);
            }
        }
    }

    /// A cancellation that came while the message was being sent: the
    /// task, if the agent named it already, is canceled.
    async fn cancel_after_request(&mut self) -> CallError {
        self.cancel().await;
        CallError::Canceled {
            task_id: self.task.id(),
        }
    }

    /// Takes in one event; `Some` once the task settled.
    async fn apply(&mut self, event: StreamResponse) -> Option<Settled> {
        let (status, metadata) = match event {
            StreamResponse::Message(reply) => return Some(Settled::Reply(reply)),
            StreamResponse::Task(task) => {
                self.named(&task.id, &task.context_id);
                if let Some(artifacts) = task.artifacts {
                    self.task.artifacts = artifacts;
                }
                (task.status, task.metadata)
            }
            StreamResponse::StatusUpdate(update) => {
                self.named(&update.task_id, &update.context_id);
                (update.status, update.metadata)
            }
            StreamResponse::ArtifactUpdate(update) => {
                self.named(&update.task_id, &update.context_id);
                self.task.artifact(update.artifact, update.append);
                return None;
            }
            // A kind of event this version does not know: nothing to show.
            _ => return None,
        };
        let state = status.state;
        if matches!(state, TaskState::Working | TaskState::Submitted) {
            self.progress.status(&status, metadata.as_ref()).await;
        }
        self.task.status = Some(status);
        (state.is_terminal() || state.is_interrupted()).then_some(Settled::Task)
    }

    fn named(&mut self, task_id: &str, context_id: &str) {
        if self.task.id.as_deref() != Some(task_id) {
            self.task.id = Some(task_id.to_owned());
            self.guard.task = Some(task_id.to_owned());
        }
        if self.task.context_id.is_none() {
            self.task.context_id = Some(context_id.to_owned());
        }
    }

    /// Reads the task after a stream that ended before it settled.
    async fn refresh(&mut self) -> Result<(), CallError> {
        let Some(task_id) = self.task.id.clone() else {
            return Err(CallError::Agent(ClientError::Decode(
                "the agent's stream ended before it named a task".into(),
            )));
        };
        let task = self
            .agent
            .client
            .get_task(task_id.as_str())
            .await
            .map_err(|e| self.client_error(e))?;
        if let Some(artifacts) = task.artifacts
            && self.task.artifacts.len() < artifacts.len()
        {
            self.task.artifacts = artifacts;
        }
        self.task.status = Some(task.status);
        Ok(())
    }

    /// Cancels the task (if the agent named one); the outcome is the
    /// caller's error either way.
    async fn cancel(&mut self) {
        self.guard.armed = false;
        let Some(task_id) = self.task.id.clone() else {
            return;
        };
        if let Err(error) = self.agent.client.cancel_task(task_id.as_str()).await {
            tracing::debug!(task = %task_id, %error, "cancel");
        }
    }
}

/// The form that asks the agent's question: the agent's own form (an
/// `a2a.hitl.form`) when MCP can render its fields, else one text field,
/// `answer`.
fn elicitation(question: &str, form: Option<&HitlForm>) -> ElicitRequestParams {
    let requested_schema = form
        .and_then(HitlForm::response_schema)
        .and_then(|schema| ElicitationSchema::from_json_schema(schema).ok())
        .unwrap_or_else(|| {
            let answer = StringSchema::new()
                .title("Answer")
                .description(question.to_owned());
            let mut properties = BTreeMap::new();
            properties.insert(ANSWER.to_owned(), PrimitiveSchemaDefinition::String(answer));
            ElicitationSchema::new(properties).with_required(vec![ANSWER.to_owned()])
        });
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.to_owned(),
        requested_schema,
    }
}
