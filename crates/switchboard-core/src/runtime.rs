//! The live side of one task: its state machine, its bus and its runs.
//!
//! A [`TaskRuntime`] exists while anyone cares about a task in this process:
//! an executor working on it, a caller waiting for it, a subscriber watching
//! it. It holds the authoritative snapshot behind an async mutex, so every
//! change to one task is serialized, and follows one path:
//!
//! 1. validate the change against the state machine (terminal tasks never
//!    change; artifacts are appended only to open artifacts);
//! 2. commit the new snapshot and the event, with the next sequence number,
//!    to the store;
//! 3. only then swap in the new snapshot and publish the event on the bus.
//!
//! Subscribers take the snapshot and a bus receiver under the same lock, so
//! they see every later event exactly once. A subscriber that falls behind
//! the bus reads the missed events back from the store's log.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use futures::stream::BoxStream;
use switchboard_protocol::{
    A2AError, Artifact, Message, Metadata, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;

use crate::TaskMap;
use crate::events::EmitError;
use crate::store::{EventQuery, LoggedEvent, StoreError, TaskRecord, TaskStore};
use switchboard_telemetry::metrics::METRICS;

/// Identifies a task: (tenant, task id).
pub(crate) type TaskKey = (String, String);

/// Events on a task's bus are shared, not copied per subscriber.
pub(crate) type BusEvent = Arc<LoggedEvent>;

/// How many events a subscriber may fall behind before it reads from the log.
/// Every task pays for the bus's slots twice (made and dropped, one by one)
/// and holds them while it lives: 256 cost ~3k instructions per task, 64
/// cost a quarter; a subscriber further behind loses nothing, it reads the
/// store's log.
pub(crate) const BUS_CAPACITY: usize = 64;

/// A stream of a task's events as bindings consume them.
pub type EventStream = BoxStream<'static, Result<LoggedEvent, A2AError>>;

/// The live tasks of this process, by key. Entries are weak: a runtime lives
/// exactly as long as someone holds it.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    live: Mutex<TaskMap<Weak<TaskRuntime>>>,
    /// Other replicas write to the same store (see [`crate::cluster`]):
    /// cached snapshots may be stale, so a conflicting commit reloads the
    /// task and tries again instead of failing.
    pub(crate) shared: bool,
}

/// How often one change is retried after losing a commit race to another
/// replica before the error goes to the caller.
const MAX_CONFLICT_RETRIES: usize = 5;

impl Registry {
    /// A registry for a store only this process writes (`shared = false`)
    /// or one shared with other replicas.
    pub(crate) fn new(shared: bool) -> Self {
        Registry {
            live: Mutex::default(),
            shared,
        }
    }

    /// Every live runtime.
    pub(crate) fn all(&self) -> Vec<Arc<TaskRuntime>> {
        self.lock().values().filter_map(Weak::upgrade).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TaskMap<Weak<TaskRuntime>>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn get(&self, key: &TaskKey) -> Option<Arc<TaskRuntime>> {
        self.lock().get(key).and_then(Weak::upgrade)
    }

    /// Registers `rt` unless a live runtime for the same task exists, in
    /// which case that one is returned and `rt` is dropped.
    pub(crate) fn insert_or_get(&self, rt: Arc<TaskRuntime>) -> Arc<TaskRuntime> {
        let mut live = self.lock();
        if let Some(existing) = live.get(&rt.key).and_then(Weak::upgrade) {
            return existing;
        }
        live.insert(rt.key.clone(), Arc::downgrade(&rt));
        rt
    }

    fn remove_dead(&self, key: &TaskKey) {
        let mut live = self.lock();
        if live.get(key).is_some_and(|w| w.strong_count() == 0) {
            live.remove(key);
        }
    }
}

/// `events` as logged events numbered from `first_seq` on.
fn logged_from(first_seq: u64, events: impl IntoIterator<Item = StreamResponse>) -> Vec<BusEvent> {
    events
        .into_iter()
        .zip(first_seq..)
        .map(|(event, seq)| Arc::new(LoggedEvent { seq, event }))
        .collect()
}

struct State {
    record: TaskRecord,
    /// Artifacts that received `lastChunk`; appending to them is refused.
    closed_artifacts: HashSet<String>,
    /// The current status message is transient: it is dropped, not moved
    /// into the history, when the next status replaces it.
    transient_status: bool,
}

/// One change an agent (or the engine) asks for.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    Status {
        status: TaskStatus,
        metadata: Option<Metadata>,
        /// See `State::transient_status`.
        transient: bool,
        /// Keys merged into the task's own metadata (the snapshot's), so
        /// that what they record outlives the event (token usage, say).
        task_metadata: Option<Metadata>,
    },
    Artifact {
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
        metadata: Option<Metadata>,
    },
}

impl Change {
    /// A status that is kept in the history once replaced (the usual kind;
    /// a transient one spells out `transient: true`).
    pub(crate) fn status(status: TaskStatus, metadata: Option<Metadata>) -> Change {
        Change::Status {
            status,
            metadata,
            transient: false,
            task_metadata: None,
        }
    }
}

/// A task just created by [`TaskRuntime::create`].
pub(crate) struct Created {
    pub(crate) runtime: Arc<TaskRuntime>,
    /// The task as event 1 showed it.
    pub(crate) snapshot: Task,
    /// The snapshot's sequence number (1).
    pub(crate) seq: u64,
    /// Every event after the snapshot, from event 2 on.
    pub(crate) rx: broadcast::Receiver<BusEvent>,
    /// The outcome of the first changes, if any were given.
    pub(crate) change: Option<Result<(), EmitError>>,
}

/// The live state of one task. See the module docs.
pub(crate) struct TaskRuntime {
    pub(crate) key: TaskKey,
    pub(crate) owner: String,
    store: Arc<dyn TaskStore>,
    registry: Arc<Registry>,
    state: tokio::sync::Mutex<State>,
    bus: broadcast::Sender<BusEvent>,
    /// `true` while an executor runs on this task; [`Self::wait_idle`]'s
    /// waiters are woken through `idle` when it turns false. (A `watch`
    /// channel did both, but wakes eight `Notify`s per change.)
    running: AtomicBool,
    idle: Notify,
    /// Cancels the current run.
    run_cancel: Mutex<Option<CancellationToken>>,
    /// The last sequence this runtime committed or caught up to, readable
    /// without the state lock, so announcements of our own commits are
    /// skipped cheaply.
    known_seq: AtomicU64,
}

impl std::fmt::Debug for TaskRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskRuntime")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl Drop for TaskRuntime {
    fn drop(&mut self) {
        self.registry.remove_dead(&self.key);
    }
}

impl TaskRuntime {
    fn new(record: TaskRecord, store: Arc<dyn TaskStore>, registry: Arc<Registry>) -> Self {
        let (bus, _) = broadcast::channel(BUS_CAPACITY);
        let known_seq = AtomicU64::new(record.last_seq);
        TaskRuntime {
            key: (record.tenant.clone(), record.task.id.clone()),
            owner: record.owner.clone(),
            store,
            registry,
            state: tokio::sync::Mutex::new(State {
                record,
                closed_artifacts: HashSet::new(),
                transient_status: false,
            }),
            bus,
            running: AtomicBool::new(false),
            idle: Notify::new(),
            run_cancel: Mutex::new(None),
            known_seq,
        }
    }

    /// Wraps an already stored task.
    pub(crate) fn loaded(
        record: TaskRecord,
        store: Arc<dyn TaskStore>,
        registry: Arc<Registry>,
    ) -> Arc<Self> {
        registry
            .clone()
            .insert_or_get(Arc::new(Self::new(record, store, registry)))
    }

    /// Creates a new task: commits its first snapshot as event 1 (the `Task`
    /// item every stream starts with) and marks a run as active.
    ///
    /// With `changes` (the agent's first emission, or first batch, which is
    /// what creates a task), they become events 2, 3, … **in the same
    /// commit**: one durable write instead of several, and nobody can
    /// observe the task in between because it is registered only
    /// afterwards. The returned snapshot is still event 1's and the receiver
    /// still yields events 2…, so callers see exactly what separate commits
    /// would have shown them. If a change is invalid, the task is created
    /// alone and the error is returned beside it.
    pub(crate) async fn create(
        mut record: TaskRecord,
        store: Arc<dyn TaskStore>,
        registry: Arc<Registry>,
        cancel: CancellationToken,
        changes: Vec<Change>,
    ) -> Result<Created, EmitError> {
        record.last_seq = 1;
        // Event 1 is the task as created; once committed (it is not
        // published: callers get it as their snapshot) its task is the
        // snapshot handed back, moved rather than copied.
        let first = StreamResponse::Task(record.task.clone());
        let rt = Arc::new(Self::new(record, store, registry.clone()));
        let mut st = rt.state.lock().await;
        let prepared = (!changes.is_empty()).then(|| Self::prepare_all(&st, changes));
        let (first, published, change_result) = match prepared {
            Some(Ok((next, events))) => {
                // Committed as the `Arc`s the bus then carries (a store that
                // keeps events in memory keeps these, not copies).
                let mut all = logged_from(1, std::iter::once(first).chain(events));
                timed_commit(rt.store.commit_shared(&next.record, &all)).await?;
                count_transitions(None, all.iter().map(|e| &e.event));
                switchboard_telemetry::trace::remember_origin(&rt.key.1);
                let logged = all.split_off(1);
                // The snapshot handed back: moved out unless the store kept it.
                let first = all
                    .pop()
                    .map(|e| Arc::try_unwrap(e).map_or_else(|e| e.event.clone(), |e| e.event));
                *st = next;
                rt.known_seq.store(st.record.last_seq, Ordering::Release);
                (first, logged, Some(Ok(())))
            }
            Some(Err(e)) => {
                timed_commit(rt.store.commit(&st.record, Some(&first))).await?;
                count_transitions(None, std::iter::once(&first));
                (Some(first), Vec::new(), Some(Err(e)))
            }
            None => {
                timed_commit(rt.store.commit(&st.record, Some(&first))).await?;
                count_transitions(None, std::iter::once(&first));
                (Some(first), Vec::new(), None)
            }
        };
        let Some(StreamResponse::Task(snapshot)) = first else {
            // Cannot happen: `first` is the task event built above.
            return Err(EmitError::Store(StoreError::Backend(
                "the created task's first event went missing".into(),
            )));
        };
        // Registered and published under the state lock: a subscriber that
        // finds the runtime waits for the lock and then sees the new events
        // in its snapshot, not twice.
        let rt = registry.insert_or_get(rt.clone());
        let rx = rt.bus.subscribe();
        for logged in published {
            let _ = rt.bus.send(logged);
        }
        drop(st);
        rt.begin_run(cancel);
        Ok(Created {
            runtime: rt,
            snapshot,
            seq: 1,
            rx,
            change: change_result,
        })
    }

    /// The current snapshot.
    pub(crate) async fn snapshot(&self) -> Task {
        self.state.lock().await.record.task.clone()
    }

    /// The current state, without copying the snapshot.
    pub(crate) async fn state(&self) -> TaskState {
        self.state.lock().await.record.task.status.state
    }

    /// The current snapshot, its sequence number and a receiver for every
    /// later event, taken atomically.
    pub(crate) async fn subscribe(&self) -> (Task, u64, broadcast::Receiver<BusEvent>) {
        let st = self.state.lock().await;
        (
            st.record.task.clone(),
            st.record.last_seq,
            self.bus.subscribe(),
        )
    }

    /// Marks a run as active with its cancellation token.
    pub(crate) fn begin_run(&self, cancel: CancellationToken) {
        *self.run_cancel.lock().unwrap_or_else(|p| p.into_inner()) = Some(cancel);
        self.running.store(true, Ordering::Release);
    }

    /// Marks the run as over.
    pub(crate) fn end_run(&self) {
        *self.run_cancel.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.running.store(false, Ordering::Release);
        self.idle.notify_waiters();
    }

    /// `true` while an executor runs on this task.
    pub(crate) fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// Waits until no executor runs on this task.
    pub(crate) async fn wait_idle(&self) {
        loop {
            // Made before the flag is read: `notify_waiters` wakes every
            // `Notified` that exists when it is called, so an `end_run`
            // between the read and the await is not missed.
            let idle = self.idle.notified();
            if !self.running.load(Ordering::Acquire) {
                return;
            }
            idle.await;
        }
    }

    /// Signals the current run (if any) to stop.
    pub(crate) fn cancel_run(&self) {
        if let Some(token) = self
            .run_cancel
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            token.cancel();
        }
    }

    /// Accepts a follow-up message on a non-terminal task: adds it to the
    /// history and moves the task back to `WORKING`, in one commit, so that
    /// waiters and subscribers see the task resume before the new run emits.
    pub(crate) async fn accept_follow_up(&self, message: Message) -> Result<(), A2AError> {
        let mut st = self.state.lock().await;
        let mut attempt = 0;
        loop {
            match self.try_accept_follow_up(&mut st, message.clone()).await {
                Err(EmitError::Store(StoreError::SequenceConflict { .. }))
                    if self.registry.shared && attempt < MAX_CONFLICT_RETRIES =>
                {
                    attempt += 1;
                    self.refresh(&mut st)
                        .await
                        .map_err(|e| A2AError::Internal(e.to_string()))?;
                }
                Err(EmitError::TaskTerminal { .. }) => {
                    return Err(terminal_error(&st.record.task));
                }
                Err(EmitError::Store(e)) => return Err(A2AError::from(e)),
                Err(e) => return Err(A2AError::Internal(e.to_string())),
                Ok(()) => return Ok(()),
            }
        }
    }

    async fn try_accept_follow_up(
        &self,
        st: &mut State,
        message: Message,
    ) -> Result<(), EmitError> {
        if st.record.task.status.state.is_terminal() {
            return Err(EmitError::TaskTerminal {
                task_id: st.record.task.id.clone(),
                state: st.record.task.status.state,
            });
        }
        let mut rec = st.record.clone();
        retire_status_message(&mut rec.task, st.transient_status);
        rec.task.history.get_or_insert_with(Vec::new).push(message);
        let status = TaskStatus::new(TaskState::Working);
        rec.task.status = status.clone();
        let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: rec.task.id.clone(),
            context_id: rec.task.context_id.clone(),
            status,
            metadata: None,
        });
        self.commit_and_publish(st, rec, event).await?;
        st.transient_status = false;
        Ok(())
    }

    /// Gives `event` the next sequence number, commits it with the new
    /// snapshot `rec`, and only then makes `rec` current and publishes.
    async fn commit_and_publish(
        &self,
        st: &mut State,
        mut rec: TaskRecord,
        event: StreamResponse,
    ) -> Result<(), EmitError> {
        rec.last_seq += 1;
        let logged = Arc::new(LoggedEvent {
            seq: rec.last_seq,
            event,
        });
        timed_commit(
            self.store
                .commit_shared(&rec, std::slice::from_ref(&logged)),
        )
        .await?;
        count_transitions(Some(st.record.task.status.state), [&logged.event]);
        switchboard_telemetry::trace::remember_origin(&self.key.1);
        self.known_seq.store(rec.last_seq, Ordering::Release);
        st.record = rec;
        // No receivers is fine: nobody is watching right now.
        let _ = self.bus.send(logged);
        Ok(())
    }

    /// Validates, commits and publishes one change: [`Self::apply_all`]
    /// with a batch of one.
    pub(crate) async fn apply(&self, change: Change) -> Result<(), EmitError> {
        self.apply_all(vec![change]).await
    }

    /// Validates, commits and publishes several changes as **one commit**:
    /// each is validated against the state the ones before it leave, and
    /// either all of them are written (consecutive sequence numbers, one
    /// durable write) or, if one is refused, none is.
    pub(crate) async fn apply_all(&self, changes: Vec<Change>) -> Result<(), EmitError> {
        if changes.is_empty() {
            return Ok(());
        }
        let mut st = self.state.lock().await;
        let mut changes = changes;
        let mut attempt = 0;
        loop {
            // Only a shared store can have moved on without us; keep a copy
            // of the changes to re-validate them against the reloaded task.
            let retry =
                (self.registry.shared && attempt < MAX_CONFLICT_RETRIES).then(|| changes.clone());
            let (next, events) = Self::prepare_all(&st, changes)?;
            let logged = logged_from(st.record.last_seq + 1, events);
            match timed_commit(self.store.commit_shared(&next.record, &logged)).await {
                Ok(()) => {
                    count_transitions(
                        Some(st.record.task.status.state),
                        logged.iter().map(|e| &e.event),
                    );
                    switchboard_telemetry::trace::remember_origin(&self.key.1);
                    *st = next;
                    self.known_seq.store(st.record.last_seq, Ordering::Release);
                    for logged in logged {
                        // No receivers is fine: nobody is watching right now.
                        let _ = self.bus.send(logged);
                    }
                    return Ok(());
                }
                Err(e @ StoreError::SequenceConflict { .. }) => {
                    let Some(again) = retry else {
                        return Err(e.into());
                    };
                    attempt += 1;
                    self.refresh(&mut st).await?;
                    changes = again;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Catches up with commits another replica made: see [`Self::refresh`].
    /// Cheap when `seq` (an announced sequence) is already known.
    pub(crate) async fn catch_up(&self, seq: Option<u64>) -> Result<(), StoreError> {
        if seq.is_some_and(|s| s <= self.known_seq.load(Ordering::Acquire)) {
            return Ok(());
        }
        let mut st = self.state.lock().await;
        self.refresh(&mut st).await
    }

    /// Reloads the task from the store and publishes, in order, the events
    /// other replicas committed since our snapshot. If the task turned
    /// terminal (canceled or failed elsewhere), the local run is cancelled.
    async fn refresh(&self, st: &mut State) -> Result<(), StoreError> {
        let (tenant, id) = &self.key;
        let Some(latest) = self.store.load(tenant, id).await? else {
            return Ok(());
        };
        let mut after = st.record.last_seq;
        if latest.last_seq <= after {
            return Ok(());
        }
        while after < latest.last_seq {
            let batch = self
                .store
                .events(EventQuery::new(tenant, id).after(after).limit(256))
                .await?;
            if batch.is_empty() {
                break;
            }
            for ev in batch {
                if ev.seq > latest.last_seq {
                    break;
                }
                after = ev.seq;
                if let StreamResponse::ArtifactUpdate(a) = &ev.event
                    && a.last_chunk
                {
                    st.closed_artifacts.insert(a.artifact.artifact_id.clone());
                }
                let _ = self.bus.send(Arc::new(ev));
            }
        }
        st.record = latest;
        st.transient_status = false;
        self.known_seq.store(st.record.last_seq, Ordering::Release);
        if st.record.task.status.state.is_terminal() {
            self.cancel_run();
        }
        Ok(())
    }

    /// Validates `changes` in a row, each against the state the ones
    /// before it leave, on one copy of `st`: the state after the last one
    /// (its record's `last_seq` counted on by one per change) and the
    /// events in order. Nothing is committed; the first refused change is
    /// the error, and the copy goes with it.
    fn prepare_all(
        st: &State,
        changes: Vec<Change>,
    ) -> Result<(State, Vec<StreamResponse>), EmitError> {
        // One copy for the whole batch: the task is cloned once per
        // commit, not once per change.
        let mut next = State {
            record: st.record.clone(),
            closed_artifacts: st.closed_artifacts.clone(),
            transient_status: st.transient_status,
        };
        let mut events = Vec::with_capacity(changes.len());
        for change in changes {
            events.push(Self::prepare(&mut next, change)?);
        }
        Ok((next, events))
    }

    /// Validates `change` against `st` and applies it there, returning its
    /// event. A refused change may leave `st` half-changed: it is always a
    /// copy ([`Self::prepare_all`]'s) that is dropped then.
    fn prepare(st: &mut State, change: Change) -> Result<StreamResponse, EmitError> {
        let state = st.record.task.status.state;
        if state.is_terminal() {
            return Err(EmitError::TaskTerminal {
                task_id: st.record.task.id.clone(),
                state,
            });
        }
        let event = match change {
            Change::Status {
                mut status,
                metadata,
                transient,
                task_metadata,
            } => {
                let to = status.state;
                // A task is submitted exactly once, when it is created.
                if matches!(to, TaskState::Unspecified | TaskState::Submitted) {
                    return Err(EmitError::InvalidTransition { from: state, to });
                }
                if status.timestamp.is_none() {
                    status.timestamp = Some(chrono::Utc::now());
                }
                let task = &mut st.record.task;
                if let Some(m) = &mut status.message {
                    m.task_id = Some(task.id.clone());
                    m.context_id = Some(task.context_id.clone());
                }
                // The message being replaced is kept unless it was transient.
                retire_status_message(task, st.transient_status);
                st.transient_status = transient;
                task.status = status.clone();
                if let Some(extra) = task_metadata {
                    task.metadata
                        .get_or_insert_with(Default::default)
                        .extend(extra);
                }
                StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: task.id.clone(),
                    context_id: task.context_id.clone(),
                    status,
                    metadata,
                })
            }
            Change::Artifact {
                artifact,
                append,
                last_chunk,
                metadata,
            } => {
                if artifact.parts.is_empty() {
                    return Err(EmitError::EmptyArtifact(artifact.artifact_id));
                }
                if st.closed_artifacts.contains(&artifact.artifact_id) {
                    return Err(EmitError::ArtifactClosed(artifact.artifact_id));
                }
                let task = &mut st.record.task;
                let artifacts = task.artifacts.get_or_insert_with(Vec::new);
                let existing = artifacts
                    .iter_mut()
                    .find(|a| a.artifact_id == artifact.artifact_id);
                match (append, existing) {
                    (true, Some(a)) => {
                        a.parts.extend(artifact.parts.iter().cloned());
                        if artifact.name.is_some() {
                            a.name = artifact.name.clone();
                        }
                        if artifact.description.is_some() {
                            a.description = artifact.description.clone();
                        }
                        if let Some(md) = &artifact.metadata {
                            a.metadata
                                .get_or_insert_with(Default::default)
                                .extend(md.clone());
                        }
                    }
                    (true, None) => return Err(EmitError::UnknownArtifact(artifact.artifact_id)),
                    (false, Some(a)) => *a = artifact.clone(),
                    (false, None) => artifacts.push(artifact.clone()),
                }
                if last_chunk {
                    st.closed_artifacts.insert(artifact.artifact_id.clone());
                }
                StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: task.id.clone(),
                    context_id: task.context_id.clone(),
                    artifact,
                    append,
                    last_chunk,
                    metadata,
                })
            }
        };
        st.record.last_seq += 1;
        Ok(event)
    }

    /// A stream of this task's events. With `first`, it yields that snapshot
    /// (taken at sequence `seq`) and then every later event; without, it
    /// resumes after sequence `seq`, replaying what the log holds past it.
    /// Whenever the bus cannot help (resuming, lagging), it reads the store's
    /// log, so no event is skipped or repeated. It ends after a terminal
    /// event or, when the event arrives live, at input-required. It keeps the
    /// runtime alive while it is consumed.
    pub(crate) fn stream(
        self: Arc<Self>,
        first: Option<Task>,
        seq: u64,
        now_seq: u64,
        mut rx: broadcast::Receiver<BusEvent>,
    ) -> EventStream {
        Box::pin(async_stream::stream! {
            // Counted while the stream lives, whoever drops it.
            let _subscriber = METRICS.stream_subscribers.track();
            let mut last = seq;
            if let Some(first) = first {
                let first_state = first.status.state;
                yield Ok(LoggedEvent { seq, event: StreamResponse::Task(first) });
                if first_state.is_terminal() {
                    return;
                }
            }
            // Events up to `target` are read from the log; the bus takes over
            // after. Events past `now_seq` happened after we subscribed: live.
            let mut target = now_seq;
            loop {
                while last < target {
                    let query = EventQuery::new(&self.key.0, &self.key.1).after(last).limit(256);
                    let batch = match self.store.events(query).await {
                        Ok(b) => b,
                        Err(e) => {
                            yield Err(A2AError::Internal(format!("reading the task's event log: {e}")));
                            return;
                        }
                    };
                    if batch.is_empty() {
                        break;
                    }
                    for ev in batch {
                        if ev.seq > target {
                            break;
                        }
                        last = ev.seq;
                        let done = ends_stream(&ev.event, ev.seq > now_seq);
                        yield Ok(ev);
                        if done {
                            return;
                        }
                    }
                }
                target = last;
                match rx.recv().await {
                    Ok(ev) if ev.seq <= last => {}
                    Ok(ev) if ev.seq == last + 1 => {
                        last = ev.seq;
                        target = last;
                        let done = ends_stream(&ev.event, true);
                        yield Ok((*ev).clone());
                        if done {
                            return;
                        }
                    }
                    // A gap: the event is committed, so the log has it and
                    // everything before it.
                    Ok(ev) => target = ev.seq,
                    // Fell behind the bus: read the log until it runs out.
                    Err(broadcast::error::RecvError::Lagged(_)) => target = u64::MAX,
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        })
    }
}

/// An event that ends a stream: terminal states always; input-required
/// when it arrives live (the client must send a new message, which starts a
/// new stream), not when it is replayed from the log on a resume.
/// Auth-required keeps the stream open, as the spec recommends.
fn ends_stream(event: &StreamResponse, live: bool) -> bool {
    event.is_final() || (live && event.state() == Some(TaskState::InputRequired))
}

/// Moves the current status message into the history, so that the history
/// keeps the conversation in order (question, then answer). A transient
/// message (e.g. a progress update) is dropped instead.
fn retire_status_message(task: &mut Task, transient: bool) {
    if let Some(m) = task.status.message.take()
        && !transient
    {
        task.history.get_or_insert_with(Vec::new).push(m);
    }
}

pub(crate) fn terminal_error(task: &Task) -> A2AError {
    A2AError::UnsupportedOperation(format!(
        "task {} is {} and cannot accept messages; send a new message in context {} (with referenceTaskIds) to start a follow-up task",
        task.id,
        task.status.state.label(),
        task.context_id
    ))
}

/// A store commit, timed into `switchboard_store_commit_duration_seconds`.
async fn timed_commit<T>(commit: impl std::future::Future<Output = T>) -> T {
    let started = std::time::Instant::now();
    let out = commit.await;
    METRICS.store_commit.observe(started.elapsed());
    out
}

/// Counts the states committed `events` move a task into (`from` is its
/// state before them; `None` for a new task), for
/// `switchboard_task_transitions_total`: a status update that keeps the
/// state is no transition.
fn count_transitions<'e>(
    mut from: Option<TaskState>,
    events: impl IntoIterator<Item = &'e StreamResponse>,
) {
    for event in events {
        if let Some(to) = event.state()
            && from != Some(to)
        {
            METRICS.task_entered(to);
            from = Some(to);
        }
    }
}
