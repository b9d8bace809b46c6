//! The proxy runtime: a remote A2A agent behind this server.
//!
//! Each message is forwarded to the remote agent with switchboard's client
//! (streaming when the remote's card says it streams, else a blocking send
//! followed by a subscription while the remote task runs), and what comes
//! back is *mirrored* into the local task: the remote's status updates,
//! artifact chunks (appends and last chunks kept) and final state become the
//! local task's events. So everything this server does for a task — the
//! durable event log, resubscribe, push, progress, `/agui`, tenancy, limits
//! and authentication — applies to an agent that has none of it.
//!
//! A local conversation is one remote conversation: a new message in a
//! local context goes to a remote context derived from it (a digest of the
//! tenant, the caller and the context id, so callers who pick the same
//! context id never share one).
//!
//! The local task remembers its remote task: the first status it mirrors
//! carries the remote task and context ids in its metadata (the event's and
//! the status message's, under [`REMOTE_TASK_ID`] and [`REMOTE_CONTEXT_ID`]),
//! which stays in the task's history. A follow-up message on a local task
//! waiting for input goes to that remote task. A cancel of the local task
//! cancels the remote one — while a run forwards, and also while the task
//! waits for input (a watcher held until the task finishes, for at most a
//! day). A server shutting down does not cancel remote tasks.
//!
//! A remote that answers with a message (no task) answers the caller with
//! that message. A remote that cannot be reached, refuses our credentials,
//! answers with an error or stays silent longer than `timeout` fails the task
//! with a [`ProxyError`] naming what happened.
//!
//! The card ([`ProxyAgent::card`]) is the remote's rewritten: name,
//! description, version, provider, skills, modes and capabilities are the
//! remote's; interfaces, security schemes and signatures are this server's
//! to fill in (clients reach the agent through us, with our credentials).
//!
//! Every forwarded message writes one audit line (JSON when the server logs
//! JSON) at `info` on the tracing target [`AUDIT_TARGET`]: the caller's
//! principal, the agent, the remote URL, the local and remote task ids, the
//! outcome and the duration. Credentials never appear in it: they are
//! headers, which neither the line nor the client's errors carry.
//!
//! A server killed while forwarding loses no task whose remote task it
//! had announced: at the next start the engine asks the agent to resume
//! such a task ([`AgentExecutor::resumes`]), and the run subscribes to the
//! remote task again by the id the local task remembers, mirrors what it
//! missed (chunks appended to artifacts it had, artifacts it had not seen,
//! the current status) and then what follows, and ends as the remote ends.
//! A remote task already finished, or one that can no longer be subscribed
//! to, is read once (`GetTask`) and its final state mirrored. A task killed
//! before the remote answered (no remote id yet) fails at the next start,
//! as every unfinished run of a single-process store; the events mirrored
//! before are all in its log either way.

mod config;
mod error;

pub use config::{ConfigError, ProxyConfig};
pub use error::ProxyError;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use switchboard_client::{A2AClient, EventStream};
use switchboard_core::{AgentExecutor, BoxError, RequestContext, TaskEvents, async_trait};
use switchboard_protocol::{
    A2AError, AgentCard, Message, Metadata, SendMessageResponse, StreamResponse, Task, TaskState,
    TaskStatus,
};
use tokio::sync::Semaphore;

/// The tracing target of the audit lines.
pub const AUDIT_TARGET: &str = "switchboard::audit";

/// Metadata key of the remote task's id on the local task's first mirrored status.
pub const REMOTE_TASK_ID: &str = "switchboard.proxy.remoteTaskId";

/// Metadata key of the remote task's context id, beside [`REMOTE_TASK_ID`].
pub const REMOTE_CONTEXT_ID: &str = "switchboard.proxy.remoteContextId";

/// How long a local task waiting for input is watched for a cancel to
/// pass on to its remote task.
const WATCH_WAITING: Duration = Duration::from_secs(24 * 60 * 60);

/// How long a cancel of the remote task may take before it is given up.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(10);

/// An agent that forwards to a remote A2A agent; see the module docs.
#[derive(Debug)]
pub struct ProxyAgent {
    name: String,
    config: Arc<ProxyConfig>,
    client: A2AClient,
    remote_card: AgentCard,
    slots: Arc<Semaphore>,
    /// Local tasks waiting for input, by id: the remote task to cancel if
    /// the local one is canceled meanwhile.
    waiting: Arc<Mutex<HashMap<String, (u64, String)>>>,
    generation: AtomicU64,
}

/// The remote task a run is mirroring.
#[derive(Debug, Default, Clone)]
struct Remote {
    task_id: Option<String>,
    context_id: Option<String>,
}

/// How a run ended, when it did not fail.
enum End {
    /// The remote task reached a final state (mirrored).
    Finished(TaskState),
    /// It waits for input (mirrored); the local task does too.
    Interrupted(TaskState),
    /// The remote answered with a message.
    Replied,
    /// The local task was canceled (the remote one too).
    Canceled,
    /// The server is shutting down.
    Stopped,
}

impl End {
    fn outcome(&self) -> String {
        match self {
            End::Finished(s) | End::Interrupted(s) => s.to_string(),
            End::Replied => "message".into(),
            End::Canceled => "canceled".into(),
            End::Stopped => "shutdown".into(),
        }
    }
}

impl ProxyAgent {
    /// Connects to the remote agent of `config` (reads its card, once) as
    /// the agent `name`. Fails when the configuration cannot work, a
    /// credential variable is unset, or the remote's card cannot be read.
    pub async fn connect(name: impl Into<String>, config: ProxyConfig) -> Result<Self, BoxError> {
        config.validate()?;
        let mut builder = A2AClient::builder().connect_timeout(config.connect_timeout);
        for (name, value) in config.headers()? {
            builder = builder.header(name, value);
        }
        let client = builder
            .connect(&config.url)
            .await
            .map_err(|e| ProxyError::from_client(&config.url, e))?;
        let remote_card = client
            .card()
            .cloned()
            .ok_or_else(|| format!("no agent card at {}", config.url))?;
        Ok(ProxyAgent {
            name: name.into(),
            slots: Arc::new(Semaphore::new(config.max_concurrent)),
            config: Arc::new(config),
            client,
            remote_card,
            waiting: Arc::new(Mutex::new(HashMap::new())),
            generation: AtomicU64::new(0),
        })
    }

    /// Its settings.
    pub fn config(&self) -> &ProxyConfig {
        &self.config
    }

    /// The remote's card as it was read.
    pub fn remote_card(&self) -> &AgentCard {
        &self.remote_card
    }

    /// This agent's card: the remote's, its interfaces, security and
    /// signatures left for the server (they are ours), its extended card
    /// not offered (the remote's is for the remote's callers). It streams
    /// whatever the remote does: the local task's events are ours.
    pub fn card(&self) -> AgentCard {
        let mut card = self.remote_card.clone();
        card.supported_interfaces.clear();
        card.security_schemes.clear();
        card.security_requirements.clear();
        card.signatures.clear();
        card.capabilities.streaming = Some(true);
        card.capabilities.push_notifications = None;
        card.capabilities.extended_agent_card = None;
        card
    }

    /// The client for this call: the caller's activated extensions go on.
    fn client_for(&self, ctx: &RequestContext) -> Result<A2AClient, ProxyError> {
        if ctx.call.activated_extensions.is_empty() {
            return Ok(self.client.clone());
        }
        self.client
            .with_extensions(ctx.call.activated_extensions.iter().cloned())
            .map_err(|e| ProxyError::from_client(&self.config.url, e))
    }

    fn url(&self) -> &str {
        &self.config.url
    }

    async fn forward(
        &self,
        ctx: &RequestContext,
        events: &TaskEvents,
        remote: &mut Remote,
    ) -> Result<End, ProxyError> {
        let client = self.client_for(ctx)?;
        let mut message = ctx.message.clone();
        message.task_id.clone_from(&remote.task_id);
        message.context_id = Some(
            remote
                .context_id
                .clone()
                .unwrap_or_else(|| remote_context(ctx)),
        );
        // Ids of our tasks mean nothing to the remote.
        message.reference_task_ids.clear();
        let mut mirror = Mirror::new(events, self.url(), remote.task_id.is_some());
        let streams = self.remote_card.capabilities.streaming == Some(true);
        let stream = if streams {
            let opened = self
                .call(events, client.send_streaming_message(message))
                .await?;
            match opened {
                Some(stream) => stream,
                None => return self.stopped(&client, events, remote).await,
            }
        } else {
            let answer = match self.call(events, client.send_message(message)).await? {
                Some(answer) => answer,
                None => return self.stopped(&client, events, remote).await,
            };
            match answer {
                SendMessageResponse::Message(m) => {
                    return mirror.reply(m).await.map(|()| End::Replied);
                }
                SendMessageResponse::Task(task) => {
                    if let Some(end) = mirror.task(task, remote).await? {
                        return Ok(end);
                    }
                }
                other => {
                    return Err(ProxyError::Remote {
                        url: self.url().into(),
                        message: format!("unexpected answer {other:?}"),
                    });
                }
            }
            let Some(id) = remote.task_id.clone() else {
                return Err(ProxyError::NoRemoteTask);
            };
            match self.call(events, client.subscribe_to_task(id)).await? {
                Some(stream) => stream,
                None => return self.stopped(&client, events, remote).await,
            }
        };
        self.follow(stream, &client, events, remote, &mut mirror)
            .await
    }

    /// Mirrors `stream` until the remote task finishes or waits for input.
    async fn follow(
        &self,
        mut stream: EventStream,
        client: &A2AClient,
        events: &TaskEvents,
        remote: &mut Remote,
        mirror: &mut Mirror<'_>,
    ) -> Result<End, ProxyError> {
        loop {
            let next = match self.bounded(events, stream.next()).await? {
                Some(next) => next,
                None => return self.stopped(client, events, remote).await,
            };
            let event = match next {
                None => break,
                Some(Err(e)) => return Err(ProxyError::from_client(self.url(), e)),
                Some(Ok(event)) => event.event,
            };
            let end = match event {
                StreamResponse::Task(task) => mirror.task(task, remote).await?,
                StreamResponse::Message(m) if !mirror.has_task => {
                    mirror.reply(m).await?;
                    Some(End::Replied)
                }
                StreamResponse::Message(m) => {
                    mirror
                        .status(TaskStatus::new(TaskState::Working).with_message(m), None)
                        .await?
                }
                StreamResponse::StatusUpdate(update) => {
                    if remote.task_id.is_none() {
                        remote.task_id = Some(update.task_id.clone());
                        remote.context_id = Some(update.context_id.clone());
                    }
                    mirror.status(update.status, update.metadata).await?
                }
                StreamResponse::ArtifactUpdate(update) => {
                    if remote.task_id.is_none() {
                        remote.task_id = Some(update.task_id.clone());
                        remote.context_id = Some(update.context_id.clone());
                    }
                    mirror
                        .artifact(update.artifact, update.append, update.last_chunk)
                        .await?;
                    None
                }
                other => {
                    tracing::debug!(?other, "an event the proxy does not mirror");
                    None
                }
            };
            if let Some(end) = end {
                return Ok(end);
            }
        }
        // The stream ended without a final state: read the task once.
        let Some(id) = remote.task_id.clone() else {
            return Err(ProxyError::Ended {
                url: self.url().into(),
                state: "not yet created".into(),
            });
        };
        let Some(task) = self.call(events, client.get_task(id)).await? else {
            return self.stopped(client, events, remote).await;
        };
        let state = task.status.state;
        match mirror.task(task, remote).await? {
            Some(end) => Ok(end),
            None => Err(ProxyError::Ended {
                url: self.url().into(),
                state: state.to_string(),
            }),
        }
    }

    /// `call`, unless the local task is canceled first (`None`), within
    /// `timeout`; a client error is the remote's.
    async fn bounded<T, F>(&self, events: &TaskEvents, call: F) -> Result<Option<T>, ProxyError>
    where
        F: std::future::Future<Output = T>,
    {
        tokio::select! {
            biased;
            _ = events.cancelled() => Ok(None),
            out = tokio::time::timeout(self.config.timeout, call) => out
                .map(Some)
                .map_err(|_| ProxyError::TimedOut { url: self.url().into(), after: self.config.timeout }),
        }
    }

    /// [`Self::bounded`] of a client call, its error the remote's.
    async fn call<T, F>(&self, events: &TaskEvents, call: F) -> Result<Option<T>, ProxyError>
    where
        F: std::future::Future<Output = Result<T, switchboard_client::ClientError>>,
    {
        match self.bounded(events, call).await? {
            Some(Ok(value)) => Ok(Some(value)),
            Some(Err(e)) => Err(ProxyError::from_client(self.url(), e)),
            None => Ok(None),
        }
    }

    /// The local run was told to stop: a caller's cancel (the local task
    /// is canceled already) cancels the remote task; a shutdown does not.
    async fn stopped(
        &self,
        client: &A2AClient,
        events: &TaskEvents,
        remote: &Remote,
    ) -> Result<End, ProxyError> {
        if events.state().await != Some(TaskState::Canceled) {
            return Ok(End::Stopped);
        }
        if let Some(id) = &remote.task_id {
            cancel_remote(client, self.url(), id).await;
        }
        Ok(End::Canceled)
    }

    /// Keeps the remote task of a local task that waits for input, so that
    /// a cancel of the local one (which reaches no run) cancels it too.
    fn watch_waiting(&self, events: &TaskEvents, remote_task: String) {
        let task_id = events.task_id().to_string();
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(task_id.clone(), (generation, remote_task));
        }
        let map: Weak<Mutex<HashMap<String, (u64, String)>>> = Arc::downgrade(&self.waiting);
        let (events, client, url) = (events.clone(), self.client.clone(), self.config.url.clone());
        tokio::spawn(async move {
            // Bounded: a task nobody answers does not hold a watcher (and
            // its task's runtime) for ever; after this, a cancel of it no
            // longer reaches the remote.
            let finished = tokio::time::timeout(WATCH_WAITING, events.finished()).await;
            let still = map.upgrade().and_then(|map| {
                let mut map = map.lock().ok()?;
                match map.get(&task_id) {
                    Some((g, _)) if *g == generation => map.remove(&task_id),
                    _ => None,
                }
            });
            if let Some((_, remote_task)) = still
                && finished.is_ok()
                && events.state().await == Some(TaskState::Canceled)
            {
                cancel_remote(&client, &url, &remote_task).await;
            }
        });
    }

    fn take_waiting(&self, task_id: &str) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.remove(task_id);
        }
    }
}

async fn cancel_remote(client: &A2AClient, url: &str, remote_task: &str) {
    match tokio::time::timeout(CANCEL_TIMEOUT, client.cancel_task(remote_task)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            tracing::warn!(remote = %url, remote_task_id = %remote_task, error = %e, "could not cancel the remote task");
        }
        Err(_) => {
            tracing::warn!(remote = %url, remote_task_id = %remote_task, "canceling the remote task timed out");
        }
    }
}

/// The remote context of the local context of `ctx`: one remote
/// conversation per local one, so the remote agent's memory of earlier
/// tasks carries on. A digest of the tenant, the caller and the context id,
/// since callers choose context ids: two callers naming the same one never
/// share a remote conversation.
fn remote_context(ctx: &RequestContext) -> String {
    use sha2::Digest as _;
    let mut hash = sha2::Sha256::new();
    for part in [&ctx.call.tenant, &ctx.call.principal, &ctx.context_id] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    let hex: String = hash.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The remote task of a local task, from the metadata its first mirrored
/// status left in the status message or the history.
fn remote_of(task: &Task) -> Option<Remote> {
    let current = task.status.message.iter();
    let history = task.history.iter().flatten().rev();
    current.chain(history).find_map(|m| {
        let md = m.metadata.as_ref()?;
        let id = md.get(REMOTE_TASK_ID)?.as_str()?;
        Some(Remote {
            task_id: Some(id.to_string()),
            context_id: md
                .get(REMOTE_CONTEXT_ID)
                .and_then(|v| v.as_str())
                .map(str::to_string),
        })
    })
}

/// Writes what the remote sends into the local task.
struct Mirror<'a> {
    events: &'a TaskEvents,
    url: &'a str,
    /// The local task exists (a follow-up's does from the start).
    has_task: bool,
    /// The remote ids were written into the local task in this run.
    announced: bool,
    /// Artifacts the local task has (mirrored in this run, or before it
    /// when resumed), with how many parts: what a remote snapshot adds.
    seen: HashMap<String, usize>,
}

impl<'a> Mirror<'a> {
    fn new(events: &'a TaskEvents, url: &'a str, has_task: bool) -> Self {
        Mirror {
            events,
            url,
            has_task,
            announced: false,
            seen: HashMap::new(),
        }
    }

    /// The mirror of a run that takes `local` over from a previous process:
    /// the remote ids are in it already, and so are its artifacts' parts so
    /// far.
    fn resumed(events: &'a TaskEvents, url: &'a str, local: &Task) -> Self {
        Mirror {
            events,
            url,
            has_task: true,
            announced: true,
            seen: local
                .artifacts()
                .iter()
                .map(|a| (a.artifact_id.clone(), a.parts.len()))
                .collect(),
        }
    }

    /// The remote sent what the local task cannot take (a transition the
    /// state machine refuses, an event after the end).
    fn err(&self, e: impl std::fmt::Display) -> ProxyError {
        ProxyError::Remote {
            url: self.url.to_string(),
            message: format!("an event the task cannot take: {e}"),
        }
    }

    async fn reply(&mut self, mut m: Message) -> Result<(), ProxyError> {
        m.task_id = None;
        self.events.reply(m).await.map_err(|e| self.err(e))
    }

    /// A snapshot of the remote task: its ids remembered, its artifacts not
    /// seen yet and its status mirrored.
    async fn task(&mut self, task: Task, remote: &mut Remote) -> Result<Option<End>, ProxyError> {
        remote.task_id = Some(task.id.clone());
        remote.context_id = Some(task.context_id.clone());
        if !self.announced {
            self.announce(remote).await?;
        }
        for mut artifact in task.artifacts.unwrap_or_default() {
            let parts = artifact.parts.len();
            match self.seen.get(&artifact.artifact_id).copied() {
                None => {
                    self.seen.insert(artifact.artifact_id.clone(), parts);
                    self.events
                        .artifact(artifact)
                        .await
                        .map_err(|e| self.err(e))?;
                }
                // Chunks appended since the local task last heard.
                Some(had) if had < parts => {
                    artifact.parts.drain(..had);
                    self.seen.insert(artifact.artifact_id.clone(), parts);
                    self.events
                        .artifact_chunk(artifact, true, false)
                        .await
                        .map_err(|e| self.err(e))?;
                }
                Some(_) => {}
            }
        }
        self.status(task.status, None).await
    }

    /// `WORKING` with the remote ids in the status's and its message's
    /// metadata: how the local task remembers its remote task.
    async fn announce(&mut self, remote: &Remote) -> Result<(), ProxyError> {
        let mut md = Metadata::new();
        if let Some(id) = &remote.task_id {
            md.insert(REMOTE_TASK_ID.into(), id.clone().into());
        }
        if let Some(id) = &remote.context_id {
            md.insert(REMOTE_CONTEXT_ID.into(), id.clone().into());
        }
        let mut note = Message::agent_text("forwarded to the remote agent");
        note.metadata = Some(md.clone());
        let status = TaskStatus::new(TaskState::Working).with_message(note);
        self.events
            .status(status, Some(md))
            .await
            .map_err(|e| self.err(e))?;
        self.announced = true;
        self.has_task = true;
        Ok(())
    }

    async fn status(
        &mut self,
        status: TaskStatus,
        metadata: Option<Metadata>,
    ) -> Result<Option<End>, ProxyError> {
        let state = status.state;
        if matches!(state, TaskState::Submitted | TaskState::Unspecified) {
            return Ok(None);
        }
        let mut status = status;
        if let Some(m) = &mut status.message {
            // Ours now: the engine writes the local task's ids into it.
            m.task_id = None;
            m.context_id = None;
        }
        self.events
            .status(status, metadata)
            .await
            .map_err(|e| self.err(e))?;
        self.has_task = true;
        Ok(if state.is_terminal() {
            Some(End::Finished(state))
        } else if state.is_interrupted() {
            Some(End::Interrupted(state))
        } else {
            None
        })
    }

    async fn artifact(
        &mut self,
        artifact: switchboard_protocol::Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), ProxyError> {
        let parts = artifact.parts.len();
        let had = self.seen.entry(artifact.artifact_id.clone()).or_default();
        *had = if append { *had + parts } else { parts };
        self.events
            .artifact_chunk(artifact, append, last_chunk)
            .await
            .map_err(|e| self.err(e))?;
        self.has_task = true;
        Ok(())
    }
}

#[async_trait]
impl AgentExecutor for ProxyAgent {
    async fn execute(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
        let _slot = self.slots.clone().try_acquire_owned().map_err(|_| {
            A2AError::ResourceExhausted(format!(
                "this agent forwards at most {} calls at once (max_concurrent); try again later",
                self.config.max_concurrent
            ))
        })?;
        let started = Instant::now();
        let mut remote = Remote::default();
        let result = match &ctx.task {
            Some(task) => match remote_of(task) {
                Some(found) => {
                    self.take_waiting(&ctx.task_id);
                    remote = found;
                    self.forward(&ctx, &events, &mut remote).await
                }
                None => Err(ProxyError::NoRemoteTask),
            },
            None => self.forward(&ctx, &events, &mut remote).await,
        };
        self.settle(&ctx, &events, started, remote, result)
    }

    /// A task whose remote task is known: its run is the remote's, which
    /// may well go on without us.
    fn resumes(&self, task: &Task) -> bool {
        remote_of(task).is_some()
    }

    async fn resume(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
        // It was admitted before the restart: it waits for a place rather
        // than failing for want of one.
        let _slot = self.slots.clone().acquire_owned().await?;
        let started = Instant::now();
        let local = ctx.task.as_ref();
        let mut remote = local.and_then(remote_of).unwrap_or_default();
        let result = match local {
            Some(local) => self.reattach(local, &events, &mut remote).await,
            None => Err(ProxyError::NoRemoteTask),
        };
        self.settle(&ctx, &events, started, remote, result)
    }
}

impl ProxyAgent {
    /// The audit line of a call, and what its run returns: a task left
    /// waiting for input keeps its remote task watched for a cancel.
    fn settle(
        &self,
        ctx: &RequestContext,
        events: &TaskEvents,
        started: Instant,
        remote: Remote,
        result: Result<End, ProxyError>,
    ) -> Result<(), BoxError> {
        let outcome = match &result {
            Ok(end) => end.outcome(),
            Err(e) => e.outcome().to_string(),
        };
        tracing::info!(
            target: AUDIT_TARGET,
            principal = %ctx.call.principal,
            agent = %self.name,
            remote = %self.config.url,
            task_id = %ctx.task_id,
            remote_task_id = %remote.task_id.as_deref().unwrap_or(""),
            outcome = %outcome,
            duration_ms = started.elapsed().as_millis() as u64,
            "proxied call"
        );
        match result {
            Ok(End::Interrupted(_)) => {
                if let Some(id) = remote.task_id {
                    self.watch_waiting(events, id);
                }
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Mirrors the remote task of `local` (a task a previous process was
    /// mirroring) again: subscribed to by its id, what the local task
    /// missed mirrored first (the stream's first item is the remote task
    /// as it is now), then what follows. A remote task that cannot be
    /// subscribed to (finished, or unknown to a remote that restarted) is
    /// read once and mirrored as it is.
    async fn reattach(
        &self,
        local: &Task,
        events: &TaskEvents,
        remote: &mut Remote,
    ) -> Result<End, ProxyError> {
        let Some(id) = remote.task_id.clone() else {
            return Err(ProxyError::NoRemoteTask);
        };
        let client = self.client.clone();
        let mut mirror = Mirror::resumed(events, self.url(), local);
        let subscribed = self
            .call(events, client.subscribe_to_task(id.clone()))
            .await;
        let stream = match subscribed {
            Ok(Some(stream)) => stream,
            Ok(None) => return self.stopped(&client, events, remote).await,
            Err(e) => {
                tracing::debug!(remote = %self.url(), remote_task_id = %id, error = %e, "the remote task cannot be subscribed to; reading it");
                let Some(task) = self.call(events, client.get_task(id)).await? else {
                    return self.stopped(&client, events, remote).await;
                };
                let state = task.status.state;
                return match mirror.task(task, remote).await? {
                    Some(end) => Ok(end),
                    None => Err(ProxyError::Ended {
                        url: self.url().into(),
                        state: state.to_string(),
                    }),
                };
            }
        };
        self.follow(stream, &client, events, remote, &mut mirror)
            .await
    }
}
