//! The converter: a task's A2A event stream, read as AG-UI events.
//!
//! This is the one place that decides what an A2A stream *means* to an
//! AG-UI client. Feed it the items of a stream in order — the engine's
//! [`LoggedEvent`]s or a client's `(seq, StreamResponse)` pairs — and it
//! returns, for each, the AG-UI events to send and the SSE id of each
//! ([`Frame`]).
//!
//! ## The mapping
//! - **One run per stream.** The first item opens it with `RUN_STARTED`
//!   (`threadId` = the A2A context id, `runId` = the task id, unless
//!   [`ConverterOptions`] names others). A task that paused (input-required)
//!   and continued in the same stream — a replayed log — continues with a
//!   new run `"<runId>:<n>"`, since AG-UI allows runs one after another.
//! - **Parts** become messages by their hints (see [`crate::hints`]):
//!   text and code blocks → `TEXT_MESSAGE_*` (code inside a Markdown fence),
//!   thinking → `REASONING_START`, `REASONING_MESSAGE_*`, `REASONING_END`,
//!   tool calls → `TOOL_CALL_START/ARGS/END`, tool results →
//!   `TOOL_CALL_RESULT` (failures with `metadata.a2a.isError`), error parts →
//!   a text message of their own (`metadata.a2a.error`). Unhinted text is
//!   assistant text. Data and file parts appear only in the state.
//!   A tool call hinted with `agui_predict_state` is preceded by a
//!   `CUSTOM` [`PREDICT_STATE_EVENT`] naming the state keys a UI may fill
//!   from its arguments.
//! - **Subagents.** Parts hinted with `agui_subagent_run_id` are another
//!   agent's output (a task the agent delegated to): the first such part
//!   of a run id starts it (`SUBAGENT_STARTED`, `name` from
//!   `agui_subagent_name`), every event made of its parts carries that
//!   `subagentRunId`, and it finishes (`SUBAGENT_FINISHED`, its messages
//!   closed first) when a part of another agent follows or the run ends.
//! - **Blocks.** Each source (one artifact, or the task's status messages)
//!   has at most one open block; a part continues it when it names the same
//!   block (the same `agui_block_id`, or for unhinted artifact text the same
//!   artifact since it last started), else the open block ends and a new one
//!   begins. Agents' block ids are scoped to their source (an artifact, or
//!   the status messages), and a block id opened again gets a new message
//!   id (`<id>#<n>`), so no two AG-UI messages share an id. An artifact's `lastChunk` ends its block; so does the end of the
//!   run. Unhinted status messages are one text message each.
//! - **State.** The first state emission of a run is a `STATE_SNAPSHOT`, the
//!   later ones `STATE_DELTA`s (RFC 6902, only when something changed) of
//!   this document:
//!
//!   ```json
//!   {"a2a": {
//!     "taskId": "…", "contextId": "…",
//!     "status": {"state": "working", "message": "…", "timestamp": "…"},
//!     "artifacts": {"<artifactId>": {"name": "…", "description": "…",
//!                                    "parts": [<A2A parts>], "lastChunk": true}}}}
//!   ```
//!
//!   `status.state` is the A2A state's short label (`input-required`, …);
//!   `parts` are A2A 1.0 JSON parts, appended to as chunks arrive.
//! - **Progress** (the task-progress extension's payload in a status
//!   update's metadata) becomes one activity, `messageId` `"<taskId>:progress"`,
//!   `activityType` [`PROGRESS_ACTIVITY`]: `ACTIVITY_SNAPSHOT` with the payload
//!   (`trackers`, `aggregate`) first, then `ACTIVITY_DELTA`s. The summary text
//!   such updates carry is not repeated as a message.
//! - **Endings.** Everything open is closed first. `completed` →
//!   `RUN_FINISHED {outcome: success}`; `canceled` → `{outcome: cancelled}`;
//!   `input-required` with tool calls in its status message → the calls,
//!   then `{outcome: success, pendingToolCallIds}`: the agent waits on the
//!   client to run them (frontend tools) and the client answers in its
//!   next run (a converter whose input holds every result raises nothing);
//!   otherwise `input-required` / `auth-required` → a `STATE_SNAPSHOT`, then
//!   `{outcome: interrupt}` with one interrupt (`id` [`interrupt_id`]:
//!   `"<taskId>:<status message id>"`, `reason` `input_required` or
//!   `a2a:auth_required`, the status text as `message`, `metadata {taskId,
//!   contextId}`); `failed` / `rejected` →
//!   `RUN_ERROR` with the status text and code `a2a:failed` / `a2a:rejected`.
//!   A direct message reply is a run with one text message.
//!   No `MESSAGES_SNAPSHOT` precedes an interrupt: the official client
//!   *replaces* its message list with one, and a stream only knows the
//!   messages it produced, so a snapshot would erase the user's turns; the
//!   conversation a resume needs is the A2A task's history, kept server-side.
//! - **Forms** (human in the loop, [`crate::hitl`]). When the interrupting
//!   status message holds an `a2a.hitl.form`, the interrupt carries it in
//!   `metadata.form` with a `responseSchema` made from its fields, and an
//!   activity ([`HITL_FORM_ACTIVITY`], `messageId` = the interrupt id,
//!   content `{stage: "awaiting_input", taskId, form, text}`) comes before
//!   the state snapshot. (Text and activity messages share one id space,
//!   so the question's text message is `"<interrupt id>:question"`.) The answer comes in a new AG-UI run:
//!   [`Converter::for_resume_run`] starts it with the decision
//!   (`ACTIVITY_DELTA`: `/stage` → `submitted` / `cancelled`, `/decision`)
//!   and the interrupt gone from the view, and marks the form `completed`
//!   when the task completes.
//!
//! ## Ids and resuming
//! Every id is derived from the A2A stream — task id, artifact id, the seq
//! where a block started, part index, A2A message id, the agent's block and
//! tool call ids — never random. So converting the same A2A items again gives
//! the same AG-UI events, which is how a dropped stream resumes: each frame's
//! SSE id is `"<seq>"` for the last event an A2A item produced and
//! `"<seq>.<i>"` for the ones before it. A client reconnects with that as
//! `Last-Event-ID`; the endpoint parses it ([`ResumePoint::parse`]), replays
//! the task's log from the start (A2A `SubscribeToTask` after 0) through
//! [`Converter::resuming`], which rebuilds its state silently up to that point
//! and sends only what follows.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use switchboard_core::LoggedEvent;
use switchboard_protocol::progress::TASK_PROGRESS_URI;
use switchboard_protocol::{
    Artifact, Message, Metadata, Part, PartContent, Role, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

use crate::events::*;
use crate::hints::{
    AGENT_STATE, PREDICT_STATE, PartHints, PartRole, read_tool_call, read_tool_result,
};
use crate::hitl::HitlForm;
use crate::patch::{diff, escape_token};
use crate::state::{ArtifactEntry, Document, StateDoc};
use crate::view::{ENGRAM_URI, ViewDoc};

/// The `activityType` of task-progress activities.
pub const PROGRESS_ACTIVITY: &str = "a2a-task-progress";

/// The `activityType` of a human-in-the-loop form (see [`crate::hitl`]).
pub const HITL_FORM_ACTIVITY: &str = "HITL_FORM";

/// Which state document a converter keeps (ADR 0003).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Projection {
    /// `{"a2a": …}`: the one task of the stream (the A2A endpoints' AG-UI
    /// opt-in).
    #[default]
    A2a,
    /// `{…, "view": …}`: the bridge's view of a conversation, starting from
    /// the client's state (see [`crate::view`]).
    View,
}

/// The id of the interrupt an input-required (or auth-required) status
/// raises: `"<taskId>:<messageId>"` of its status message, so a stream and
/// a GetTask snapshot name it alike; `"<taskId>:<seq>"` when the status has
/// no message.
pub fn interrupt_id(task_id: &str, status_message: Option<&Message>, seq: u64) -> String {
    match status_message {
        Some(m) => format!("{task_id}:{}", m.message_id),
        None => format!("{task_id}:{seq}"),
    }
}

/// An interrupt a resume run answers: what the converter needs to show the
/// decision ([`Converter::for_resume_run`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PendingInterrupt {
    /// Its id ([`interrupt_id`]).
    pub id: String,
    /// The task that waits.
    pub task_id: String,
    /// The form it asked for: its `HITL_FORM` activity is the one updated.
    pub form: Option<HitlForm>,
}

impl PendingInterrupt {
    /// The interrupt a task waits on, read from a GetTask snapshot: `None`
    /// unless it is in input-required or auth-required with a status
    /// message (without one the id holds the stream's seq, which a snapshot
    /// does not have: build the [`PendingInterrupt`] from the id the client
    /// answered instead).
    pub fn of_task(task: &Task) -> Option<PendingInterrupt> {
        if !matches!(
            task.status.state,
            TaskState::InputRequired | TaskState::AuthRequired
        ) {
            return None;
        }
        let message = task.status.message.as_ref()?;
        Some(PendingInterrupt {
            id: interrupt_id(&task.id, Some(message), 0),
            task_id: task.id.clone(),
            form: HitlForm::find(message),
        })
    }
}

/// The `HITL_FORM` activity the client holds, and its `/stage`.
#[derive(Debug, Clone)]
struct HitlActivity {
    message_id: String,
    stage: &'static str,
}

/// One event to send, with the SSE id that resumes right after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// `"<seq>"` or `"<seq>.<i>"`; `None` for items without a sequence number.
    pub id: Option<String>,
    /// The event.
    pub event: Event,
}

/// Where a resumed stream picks up: after event `index` of A2A item `seq`,
/// or after all of item `seq` when `index` is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePoint {
    /// The A2A sequence number.
    pub seq: u64,
    /// The last event of that item the client has, if not all of them.
    pub index: Option<u32>,
}

/// A `Last-Event-ID` that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Last-Event-ID {0:?} is not an AG-UI event id (expected <seq> or <seq>.<index>)")]
pub struct InvalidResumeId(pub String);

impl ResumePoint {
    /// Parses an SSE id made by the converter.
    pub fn parse(id: &str) -> Result<ResumePoint, InvalidResumeId> {
        let bad = || InvalidResumeId(id.to_owned());
        let (seq, index) = match id.trim().split_once('.') {
            Some((s, i)) => (s, Some(i.parse().map_err(|_| bad())?)),
            None => (id.trim(), None),
        };
        Ok(ResumePoint {
            seq: seq.parse().map_err(|_| bad())?,
            index,
        })
    }

    /// `true` when event `index` of item `seq` was already delivered.
    pub fn covers(&self, seq: u64, index: u32) -> bool {
        seq < self.seq || (seq == self.seq && self.index.is_none_or(|i| index <= i))
    }

    /// The SSE id of event `index` of the `count` events item `seq`
    /// converted to: what a client resumes from after it. The last event
    /// stands for the whole item (`<seq>`), the others for themselves
    /// (`<seq>.<index>`).
    pub fn of_event(seq: u64, index: usize, count: usize) -> ResumePoint {
        ResumePoint {
            seq,
            // A batch never holds anywhere near u32::MAX events.
            index: (index + 1 != count).then_some(index as u32),
        }
    }
}

/// The SSE id: `<seq>` or `<seq>.<index>`, what [`ResumePoint::parse`] reads.
impl std::fmt::Display for ResumePoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            None => write!(f, "{}", self.seq),
            Some(i) => write!(f, "{}.{i}", self.seq),
        }
    }
}

/// How a converter names its run and whether it stamps events.
#[derive(Debug, Clone, Default)]
pub struct ConverterOptions {
    /// `threadId` (default: the A2A context id).
    pub thread_id: Option<String>,
    /// `runId` (default: the task id, or the message id of a direct reply).
    pub run_id: Option<String>,
    /// The request to echo in `RUN_STARTED.input`.
    pub input: Option<RunAgentInput>,
    /// Stamp every event with the current time (ms since the epoch).
    pub timestamps: bool,
    /// The state document to keep (default: [`Projection::A2a`]).
    pub projection: Projection,
}

/// Where a part came from: blocks are tracked per source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Source {
    Artifact(String),
    Status,
}

/// The id of one part on its own (an error part's message id), described
/// rather than formatted: most parts continue a block and never need it.
#[derive(Debug, Clone, Copy)]
enum PartKey<'a> {
    /// Part `index` of artifact `artifact_id`'s chunk `seq`.
    Artifact {
        artifact_id: &'a str,
        seq: u64,
        index: usize,
    },
    /// Part `index` of the status message whose block key is `message_key`.
    Message { message_key: &'a str, index: usize },
}

impl PartKey<'_> {
    fn to_id(self, task_id: &str) -> String {
        match self {
            PartKey::Artifact {
                artifact_id,
                seq,
                index,
            } => format!("{task_id}:{artifact_id}:{seq}:{index}"),
            PartKey::Message { message_key, index } => format!("{message_key}:{index}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Code,
    Reasoning,
}

#[derive(Debug, Clone)]
struct OpenBlock {
    source: Source,
    kind: BlockKind,
    /// What a part names to continue this block.
    key: String,
    /// The AG-UI message id: the key, made unique if the key was used before.
    message_id: String,
    /// The subagent run whose output it is (its `subagentRunId`).
    subagent: Option<String>,
}

/// The subagent whose output the stream shows now.
#[derive(Debug, Clone)]
struct ActiveSubagent {
    /// The run id the agent's parts name (`agui_subagent_run_id`).
    named: String,
    /// The `subagentRunId` sent for it (the named id, `#n` added when the
    /// agent names a run it has named before: AG-UI ids are per invocation).
    id: String,
}

/// Converts one A2A stream into AG-UI events. See the module docs.
#[derive(Debug)]
pub struct Converter {
    options: ConverterOptions,
    resume: Option<ResumePoint>,
    /// The run is open (started, not yet finished or errored).
    running: bool,
    /// How many runs this stream has had.
    runs: u32,
    /// The stream is over (terminal state or error): nothing more is sent.
    over: bool,
    task_id: String,
    context_id: String,
    run_id: String,
    thread_id: String,
    /// Open blocks, in the order they opened.
    open: Vec<OpenBlock>,
    /// The state document, and what the client has yet to get of it.
    state: Document,
    /// Where each artifact last (re)started: its seq.
    artifact_starts: BTreeMap<String, u64>,
    /// How many blocks each key has opened (a reopened key gets `#n`).
    openings: BTreeMap<String, u32>,
    /// The progress activity's content as the client holds it.
    progress: Option<Value>,
    /// The form activity of the task's last interrupt, while it matters.
    hitl: Option<HitlActivity>,
    /// A resume run's answers, shown when its run starts.
    answers: Vec<(PendingInterrupt, ResumeEntry)>,
    /// The interrupts a resume run answered: a status that still shows one
    /// (the task as it was when the answer arrived) raises nothing.
    answered: Vec<String>,
    /// The subagent whose output the last part was, while it lasts.
    subagent: Option<ActiveSubagent>,
    /// How many times each subagent run id named by the agent was started.
    subagent_starts: BTreeMap<String, u32>,
    /// Events of the item being converted.
    out: Vec<Event>,
}

impl Converter {
    /// A converter for a fresh stream.
    pub fn new(options: ConverterOptions) -> Self {
        let state = match options.projection {
            Projection::A2a => Document::A2a(StateDoc::default()),
            Projection::View => Document::View(ViewDoc::from_client(
                options.input.as_ref().and_then(|i| i.state.as_ref()),
            )),
        };
        Converter {
            options,
            resume: None,
            running: false,
            runs: 0,
            over: false,
            task_id: String::new(),
            context_id: String::new(),
            run_id: String::new(),
            thread_id: String::new(),
            open: Vec::new(),
            state,
            artifact_starts: BTreeMap::new(),
            openings: BTreeMap::new(),
            progress: None,
            hitl: None,
            answers: Vec::new(),
            answered: Vec::new(),
            subagent: None,
            subagent_starts: BTreeMap::new(),
            out: Vec::new(),
        }
    }

    /// A converter for a *resume run*: a new AG-UI run whose `resume`
    /// answers interrupts of an earlier one, fed the stream of the task
    /// after the answer was sent (or, for a cancel, the canceled task).
    /// Right after `RUN_STARTED` it shows each answer — an `ACTIVITY_DELTA`
    /// on the form's `HITL_FORM` activity (`/stage` → `submitted` or
    /// `cancelled`, `/decision` = `{status, payload?}`) and, in the view, the
    /// interrupt gone from `/view/pendingInterrupts` (the run's
    /// `STATE_SNAPSHOT`) — then converts the stream as usual; the activity's
    /// `/stage` becomes `completed` when the task completes.
    ///
    /// Entries and interrupts are paired by interrupt id; an entry with no
    /// pending interrupt is ignored (checking a resume is the run driver's
    /// job). Not to be confused with [`Converter::resuming`], which
    /// reconnects a dropped *stream*.
    pub fn for_resume_run(
        options: ConverterOptions,
        resume: &[ResumeEntry],
        pending: &[PendingInterrupt],
    ) -> Self {
        let answers = resume
            .iter()
            .filter_map(|entry| {
                let p = pending.iter().find(|p| p.id == entry.interrupt_id)?;
                Some((p.clone(), entry.clone()))
            })
            .collect();
        Converter {
            answers,
            ..Converter::new(options)
        }
    }

    /// A converter for a resumed stream: feed it the task's log from the
    /// start; it sends nothing up to and including `point`.
    pub fn resuming(options: ConverterOptions, point: ResumePoint) -> Self {
        Converter {
            resume: Some(point),
            ..Converter::new(options)
        }
    }

    /// `true` once the stream reached its end (a terminal state or an error).
    pub fn is_over(&self) -> bool {
        self.over
    }

    /// Converts one engine stream item.
    pub fn convert_logged(&mut self, item: &LoggedEvent) -> Vec<Frame> {
        self.convert(item_seq(item), &item.event)
    }

    /// Converts one A2A stream item (with its SSE id / log sequence number,
    /// if it has one) into the frames to send.
    pub fn convert(&mut self, seq: Option<u64>, item: &StreamResponse) -> Vec<Frame> {
        let events = self.events(seq, item);
        let n = events.len();
        events
            .into_iter()
            .enumerate()
            .filter(|(i, _)| {
                let (Some(seq), Some(r)) = (seq, self.resume) else {
                    return true;
                };
                !r.covers(seq, *i as u32)
            })
            .map(|(i, event)| Frame {
                id: seq.map(|s| ResumePoint::of_event(s, i, n).to_string()),
                event,
            })
            .collect()
    }

    /// Converts one engine stream item into its events without framing
    /// them, for a writer that puts each one on the wire itself: event `i`
    /// of the `n` is the frame [`ResumePoint::of_event`]`(seq, i, n)` (none
    /// for seq 0, a direct reply), so no id is formatted before it is
    /// written. Nothing is left out: a [`Converter::resuming`] converter
    /// skips what the client has in [`Converter::convert_logged`] only.
    pub fn convert_logged_events(&mut self, item: &LoggedEvent) -> Vec<Event> {
        self.events(item_seq(item), &item.event)
    }

    /// Every event of one item, timestamped if the options say so.
    fn events(&mut self, seq: Option<u64>, item: &StreamResponse) -> Vec<Event> {
        if self.over {
            return Vec::new();
        }
        let at = seq.unwrap_or(0);
        match item {
            StreamResponse::Task(task) => self.task(at, task),
            StreamResponse::Message(m) => self.message(m),
            StreamResponse::StatusUpdate(u) => self.status(at, u),
            StreamResponse::ArtifactUpdate(u) => self.artifact(at, u),
            // StreamResponse is non-exhaustive; a future kind has no AG-UI meaning yet.
            #[allow(unreachable_patterns)]
            _ => {}
        }
        let mut events = std::mem::take(&mut self.out);
        if self.options.timestamps {
            let now = now_millis();
            for event in &mut events {
                event.timestamp = Some(now);
            }
        }
        events
    }

    /// The A2A stream broke (or ended without an ending): closes the run
    /// with `RUN_ERROR`. Nothing is sent if the run already ended.
    pub fn fail(&mut self, message: &str, code: &str) -> Vec<Frame> {
        if self.over {
            return Vec::new();
        }
        self.over = true;
        // RUN_ERROR may also be the very first event, or follow RUN_FINISHED.
        let mut events = Vec::new();
        self.close_all();
        // RUN_ERROR ends whatever the run had open, subagents included.
        self.subagent = None;
        events.append(&mut self.out);
        events.push(Event::new(RunError {
            message: message.to_owned(),
            code: Some(code.to_owned()),
            usage: None,
        }));
        self.running = false;
        let now = self.options.timestamps.then(now_millis);
        events
            .into_iter()
            .map(|mut event| {
                event.timestamp = now;
                Frame { id: None, event }
            })
            .collect()
    }

    fn emit(&mut self, kind: impl Into<EventKind>) {
        self.out.push(Event::new(kind));
    }

    fn start_run(&mut self, task_id: &str, context_id: &str) {
        self.start_run_as(task_id, context_id, task_id);
    }

    /// Opens a run for `task_id`, named `default_run` unless the options name it.
    fn start_run_as(&mut self, task_id: &str, context_id: &str, default_run: &str) {
        if self.running {
            return;
        }
        self.task_id = task_id.to_owned();
        self.context_id = context_id.to_owned();
        let base = self
            .options
            .run_id
            .clone()
            .unwrap_or_else(|| default_run.to_owned());
        self.run_id = if self.runs == 0 {
            base
        } else {
            format!("{base}:{}", self.runs)
        };
        self.runs += 1;
        self.thread_id = self
            .options
            .thread_id
            .clone()
            .unwrap_or_else(|| context_id.to_owned());
        self.running = true;
        self.state.forget_client_copy();
        self.progress = None;
        self.state.set_ids(task_id, context_id);
        let input = self.options.input.clone().map(Box::new);
        self.emit(RunStarted {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            parent_run_id: None,
            input,
            protocol_version: Some(PROTOCOL_VERSION.to_owned()),
        });
        self.show_answers();
    }

    /// At the start of a run that follows an interrupt: the answers of a
    /// resume run, or — in a log that goes on past the interrupt — the
    /// form marked submitted.
    fn show_answers(&mut self) {
        if self.answers.is_empty() {
            if let Some(h) = &self.hitl
                && h.stage == "awaiting_input"
            {
                self.set_hitl_stage("submitted", None);
            }
            return;
        }
        for (pending, entry) in std::mem::take(&mut self.answers) {
            self.answered.push(pending.id.clone());
            if let Some(view) = self.state.view() {
                view.remove_interrupt(&pending.id);
            }
            if pending.form.is_none() {
                continue;
            }
            let (stage, status) = match entry.status {
                ResumeStatus::Resolved => ("submitted", "resolved"),
                ResumeStatus::Cancelled => ("cancelled", "cancelled"),
            };
            let mut decision = Map::new();
            decision.insert("status".into(), json!(status));
            if let Some(p) = entry.payload {
                decision.insert("payload".into(), p);
            }
            self.hitl = Some(HitlActivity {
                message_id: pending.id,
                stage: "awaiting_input",
            });
            self.set_hitl_stage(stage, Some(Value::Object(decision)));
        }
        self.sync_state();
    }

    /// Moves the form activity to `stage` (and sets its `/decision`).
    fn set_hitl_stage(&mut self, stage: &'static str, decision: Option<Value>) {
        let Some(h) = &mut self.hitl else {
            return;
        };
        if h.stage == stage {
            return;
        }
        h.stage = stage;
        let message_id = h.message_id.clone();
        let mut patch = vec![PatchOp::replace("/stage", json!(stage))];
        if let Some(d) = decision {
            patch.push(PatchOp::add("/decision", d));
        }
        self.emit(ActivityDelta {
            message_id,
            activity_type: HITL_FORM_ACTIVITY.to_owned(),
            patch,
            subagent_run_id: None,
        });
    }

    fn task(&mut self, seq: u64, task: &Task) {
        self.start_run(&task.id, &task.context_id);
        // A snapshot's artifacts are whole: each one as if sent in one last chunk.
        for artifact in task.artifacts() {
            self.artifact_inner(seq, artifact, false, true);
        }
        self.status_inner(seq, &task.status, task.metadata.as_ref());
    }

    fn message(&mut self, m: &Message) {
        let context = m.context_id.clone().unwrap_or_default();
        let task = m.task_id.as_deref().unwrap_or(&m.message_id);
        self.start_run_as(task, &context, &m.message_id);
        self.message_parts(m);
        self.close_all();
        self.finish(RunFinishedOutcome::Success {
            pending_tool_call_ids: None,
        });
        self.over = true;
    }

    fn status(&mut self, seq: u64, u: &TaskStatusUpdateEvent) {
        self.start_run(&u.task_id, &u.context_id);
        self.agent_metadata(u.metadata.as_ref());
        self.status_inner(seq, &u.status, u.metadata.as_ref());
    }

    /// Takes what an agent reported in update metadata into the view: the
    /// Engram config into `/view/config` (the payload under
    /// [`ENGRAM_URI`], an object), its own state into `/view/state` (under
    /// [`AGENT_STATE`], an object).
    fn agent_metadata(&mut self, metadata: Option<&Metadata>) {
        let (Some(view), Some(metadata)) = (self.state.view(), metadata) else {
            return;
        };
        if let Some(Value::Object(payload)) = metadata.get(ENGRAM_URI) {
            view.merge_config(payload);
        }
        if let Some(Value::Object(reported)) = metadata.get(AGENT_STATE) {
            view.merge_agent_state(reported);
        }
    }

    fn status_inner(&mut self, seq: u64, status: &TaskStatus, metadata: Option<&Metadata>) {
        let state = status.state;
        let text = status.message.as_ref().map(Message::text);
        let timestamp = status
            .timestamp
            .as_ref()
            .map(switchboard_protocol::serde_util::format_timestamp);
        self.state
            .set_status(text.as_deref(), state.label(), timestamp.as_deref());
        // An input-required status whose message calls tools waits for the
        // client to run them (frontend tools): the run ends with the calls
        // pending, and the results come in the client's next run.
        let awaited = awaited_tool_calls(state, status.message.as_ref());
        let waits_for_tools =
            !awaited.is_empty() && !awaited.iter().all(|id| self.input_answers(id));
        let interrupted = matches!(state, TaskState::InputRequired | TaskState::AuthRequired)
            && awaited.is_empty()
            && !self
                .answered
                .contains(&interrupt_id(&self.task_id, status.message.as_ref(), seq));
        if !interrupted {
            let task_id = self.task_id.clone();
            if let Some(view) = self.state.view() {
                view.clear_interrupts_of(&task_id);
            }
        }
        self.agent_metadata(status.message.as_ref().and_then(|m| m.metadata.as_ref()));
        let progress = progress_payload(status, metadata);
        let has_progress = progress.is_some();
        if let Some(p) = progress {
            self.progress_activity(p);
        }
        let failed = matches!(state, TaskState::Failed | TaskState::Rejected);
        // The question of an interrupt a resume run answered was shown in
        // the run it interrupted.
        let answered = !interrupted
            && !waits_for_tools
            && matches!(state, TaskState::InputRequired | TaskState::AuthRequired);
        if let Some(m) = &status.message
            && m.role != Role::User
            && !has_progress
            && !failed
            && !answered
        {
            self.message_parts(m);
        }
        match state {
            TaskState::Completed => {
                self.close_all();
                self.set_hitl_stage("completed", None);
                self.sync_state();
                self.finish(RunFinishedOutcome::Success {
                    pending_tool_call_ids: None,
                });
                self.over = true;
            }
            TaskState::Canceled => {
                self.close_all();
                self.set_hitl_stage("cancelled", None);
                self.sync_state();
                self.finish(RunFinishedOutcome::Cancelled);
                self.over = true;
            }
            TaskState::Failed | TaskState::Rejected => {
                self.close_all();
                self.sync_state();
                let (code, default) = if state == TaskState::Failed {
                    ("a2a:failed", "the task failed")
                } else {
                    ("a2a:rejected", "the agent rejected the task")
                };
                let message = text.filter(|t| !t.is_empty()).unwrap_or(default.into());
                self.emit(RunError {
                    message,
                    code: Some(code.to_owned()),
                    usage: None,
                });
                self.subagent = None;
                self.running = false;
                self.over = true;
            }
            TaskState::InputRequired if waits_for_tools => {
                self.close_all();
                self.sync_state();
                self.finish(RunFinishedOutcome::Success {
                    pending_tool_call_ids: Some(awaited),
                });
            }
            TaskState::InputRequired | TaskState::AuthRequired if interrupted => {
                self.close_all();
                let reason = if state == TaskState::InputRequired {
                    "input_required"
                } else {
                    "a2a:auth_required"
                };
                let id = interrupt_id(&self.task_id, status.message.as_ref(), seq);
                let form = status.message.as_ref().and_then(HitlForm::find);
                let text = text.filter(|t| !t.is_empty());
                if let Some(view) = self.state.view() {
                    view.add_interrupt(&id, reason, form.as_ref().map(|f| f.form_id.as_str()));
                }
                let mut metadata = Map::new();
                metadata.insert("taskId".into(), json!(self.task_id));
                metadata.insert("contextId".into(), json!(self.context_id));
                let mut response_schema = None;
                if let Some(form) = &form {
                    metadata.insert("form".into(), Value::Object(form.data.clone()));
                    response_schema = form.response_schema();
                    self.form_activity(&id, form, text.as_deref());
                }
                // The interrupt rule: the state a resume needs goes out in full first.
                self.state.forget_client_copy();
                self.sync_state();
                let interrupt = Interrupt {
                    id,
                    reason: reason.to_owned(),
                    message: text,
                    response_schema,
                    metadata: Some(metadata),
                    ..Interrupt::default()
                };
                self.finish(RunFinishedOutcome::Interrupt {
                    interrupts: vec![interrupt],
                });
            }
            _ => self.sync_state(),
        }
    }

    /// The `HITL_FORM` activity of interrupt `id`: the form awaiting input.
    fn form_activity(&mut self, id: &str, form: &HitlForm, text: Option<&str>) {
        let mut content = Map::new();
        content.insert("stage".into(), json!("awaiting_input"));
        content.insert("taskId".into(), json!(self.task_id));
        content.insert("form".into(), Value::Object(form.data.clone()));
        if let Some(t) = text {
            content.insert("text".into(), json!(t));
        }
        self.emit(ActivitySnapshot {
            message_id: id.to_owned(),
            activity_type: HITL_FORM_ACTIVITY.to_owned(),
            content,
            replace: Some(true),
            subagent_run_id: None,
        });
        self.hitl = Some(HitlActivity {
            message_id: id.to_owned(),
            stage: "awaiting_input",
        });
    }

    fn finish(&mut self, outcome: RunFinishedOutcome) {
        self.end_subagent();
        self.emit(RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            result: None,
            outcome: Some(outcome),
            usage: None,
        });
        self.running = false;
    }

    fn progress_activity(&mut self, payload: Value) {
        let Some(content) = payload.as_object() else {
            return;
        };
        let message_id = format!("{}:progress", self.task_id);
        match &self.progress {
            None => self.emit(ActivitySnapshot {
                message_id,
                activity_type: PROGRESS_ACTIVITY.to_owned(),
                content: content.clone(),
                replace: Some(true),
                subagent_run_id: None,
            }),
            Some(old) => {
                let patch = diff(old, &payload);
                if patch.is_empty() {
                    return;
                }
                self.emit(ActivityDelta {
                    message_id,
                    activity_type: PROGRESS_ACTIVITY.to_owned(),
                    patch,
                    subagent_run_id: None,
                });
            }
        }
        self.progress = Some(payload);
    }

    fn artifact(&mut self, seq: u64, u: &TaskArtifactUpdateEvent) {
        self.start_run(&u.task_id, &u.context_id);
        self.agent_metadata(u.metadata.as_ref());
        self.agent_metadata(u.artifact.metadata.as_ref());
        self.artifact_inner(seq, &u.artifact, u.append, u.last_chunk);
        self.sync_state();
    }

    fn artifact_inner(&mut self, seq: u64, a: &Artifact, append: bool, last_chunk: bool) {
        let source = Source::Artifact(a.artifact_id.clone());
        let known = self.artifact_starts.contains_key(&a.artifact_id);
        let parts_json: Vec<Value> = a
            .parts
            .iter()
            .map(|p| serde_json::to_value(p).unwrap_or(Value::Null))
            .collect();
        if append && known {
            self.state
                .append_parts(&a.artifact_id, parts_json, last_chunk);
        } else {
            let entry = ArtifactEntry {
                name: a.name.clone(),
                description: a.description.clone(),
                parts: parts_json,
                last_chunk,
            };
            self.state.put_artifact(&a.artifact_id, entry);
            // A new start (or a replacement) begins new blocks.
            self.close_source(&source);
            self.artifact_starts.insert(a.artifact_id.clone(), seq);
        }
        let start = self
            .artifact_starts
            .get(&a.artifact_id)
            .copied()
            .unwrap_or(seq);
        let default_key = format!("{}:{}:{start}", self.task_id, a.artifact_id);
        for (i, part) in a.parts.iter().enumerate() {
            let part_key = PartKey::Artifact {
                artifact_id: &a.artifact_id,
                seq,
                index: i,
            };
            self.part(&source, part, &default_key, part_key);
        }
        if last_chunk {
            self.close_source(&source);
        }
    }

    fn message_parts(&mut self, m: &Message) {
        let mut default_key = if self.task_id == m.message_id {
            m.message_id.clone()
        } else {
            format!("{}:{}", self.task_id, m.message_id)
        };
        // A form's activity takes `<taskId>:<messageId>` (the interrupt id);
        // AG-UI message ids are shared by text and activity messages (the
        // official client replaces a text message by an activity snapshot
        // of the same id), so the question's text takes another.
        if m.parts.iter().any(|p| HitlForm::from_part(p).is_some()) {
            default_key.push_str(":question");
        }
        // The text parts of one message are lines of one text, as
        // `Message::text` joins them (a reconnect's snapshot shows the
        // history that way): plain text after plain text gets a newline.
        // An artifact's parts are chunks of a stream and join as they are.
        let mut after_text = false;
        for (i, part) in m.parts.iter().enumerate() {
            let part_key = PartKey::Message {
                message_key: &default_key,
                index: i,
            };
            let plain_text = matches!(&part.content, PartContent::Text(t) if !t.is_empty())
                && PartHints::read(part).role() == PartRole::Plain;
            if plain_text && after_text {
                let mut line = part.clone();
                if let PartContent::Text(t) = &mut line.content {
                    t.insert(0, '\n');
                }
                self.part(&Source::Status, &line, &default_key, part_key);
            } else {
                self.part(&Source::Status, part, &default_key, part_key);
            }
            after_text = plain_text;
        }
        // Unhinted status text is one message per A2A message.
        if let Some(b) = self.open.iter().find(|b| b.source == Source::Status)
            && b.key == default_key
        {
            self.close_source(&Source::Status);
        }
    }

    fn part(&mut self, source: &Source, part: &Part, default_key: &str, part_key: PartKey<'_>) {
        let hints = PartHints::read(part);
        self.enter_subagent(source, &hints);
        // A message belongs to one agent: the source's block of another
        // (opened before this subagent started elsewhere) closes first, as
        // its opener's.
        let current = self.subagent.as_ref().map(|s| s.id.as_str());
        if self
            .open
            .iter()
            .any(|b| &b.source == source && b.subagent.as_deref() != current)
        {
            self.close_source(source);
        }
        let start = self.out.len();
        self.part_events(source, part, &hints, default_key, part_key);
        if let Some(active) = &self.subagent {
            stamp(&mut self.out[start..], &active.id);
        }
    }

    fn part_events(
        &mut self,
        source: &Source,
        part: &Part,
        hints: &PartHints,
        default_key: &str,
        part_key: PartKey<'_>,
    ) {
        let text = match &part.content {
            PartContent::Text(t) => Some(t.as_str()),
            _ => None,
        };
        // An agent's block ids are unique within a source at best: they are
        // scoped to it (status messages share one scope, so a block may
        // continue from one status message into the next).
        let block_key = |suffix: &str| match (&hints.block_id, source) {
            (Some(id), Source::Artifact(a)) => format!("{}:{a}:{id}", self.task_id),
            (Some(id), Source::Status) => format!("{}:{id}", self.task_id),
            (None, _) => format!("{default_key}{suffix}"),
        };
        match hints.role() {
            PartRole::Plain | PartRole::Text => {
                if let Some(t) = text {
                    let key = block_key("");
                    self.block(source, BlockKind::Text, key, t);
                }
            }
            PartRole::Code => {
                if let Some(t) = text {
                    let key = block_key(":code");
                    self.block(source, BlockKind::Code, key, t);
                }
            }
            PartRole::Reasoning => {
                if let Some(t) = text {
                    let key = block_key(":reasoning");
                    self.block(source, BlockKind::Reasoning, key, t);
                }
            }
            PartRole::ToolCall => {
                self.close_source(source);
                if let Some(call) = read_tool_call(part, hints) {
                    if let Some(mappings) = predict_state(part, &call.name) {
                        self.emit(Custom {
                            name: PREDICT_STATE_EVENT.to_owned(),
                            value: mappings,
                            subagent_run_id: None,
                        });
                    }
                    self.emit(ToolCallStart {
                        tool_call_id: call.id.clone(),
                        tool_call_name: call.name,
                        parent_message_id: None,
                        subagent_run_id: None,
                    });
                    self.emit(ToolCallArgs {
                        tool_call_id: call.id.clone(),
                        delta: call.arguments.to_string(),
                        subagent_run_id: None,
                    });
                    self.emit(ToolCallEnd {
                        tool_call_id: call.id,
                        subagent_run_id: None,
                    });
                }
            }
            PartRole::ToolResult => {
                self.close_source(source);
                if let Some(result) = read_tool_result(part, hints) {
                    let mut a2a = Map::new();
                    a2a.insert("taskId".into(), json!(self.task_id));
                    let content = match &result.error {
                        Some(e) => {
                            a2a.insert("isError".into(), json!(true));
                            e.clone()
                        }
                        None => result.content,
                    };
                    let mut metadata = Map::new();
                    metadata.insert("a2a".into(), Value::Object(a2a));
                    self.out.push(
                        Event::new(ToolCallResult {
                            message_id: format!("{}:{}:result", self.task_id, result.tool_call_id),
                            tool_call_id: result.tool_call_id,
                            content: Content::Text(content),
                            role: Some(ToolRole::Tool),
                            subagent_run_id: None,
                        })
                        .with_metadata(metadata),
                    );
                }
            }
            PartRole::Error => {
                self.close_source(source);
                let message = match &part.content {
                    PartContent::Text(t) => t.clone(),
                    PartContent::Data(v) => v.to_string(),
                    _ => "error".to_owned(),
                };
                let mut metadata = Map::new();
                metadata.insert("a2a".into(), json!({"error": true}));
                let id = part_key.to_id(&self.task_id);
                self.out.push(
                    Event::new(TextMessageStart {
                        message_id: id.clone(),
                        role: Some(TextRole::Assistant),
                        name: None,
                        subagent_run_id: None,
                    })
                    .with_metadata(metadata),
                );
                self.emit(TextMessageContent {
                    message_id: id.clone(),
                    delta: message,
                    subagent_run_id: None,
                });
                self.emit(TextMessageEnd {
                    message_id: id,
                    subagent_run_id: None,
                });
            }
        }
    }

    /// Adds `text` to the block `key` of `source`, opening it (and closing
    /// the source's other block) when it is not the open one.
    fn block(&mut self, source: &Source, kind: BlockKind, key: String, text: &str) {
        let open = self
            .open
            .iter()
            .find(|b| &b.source == source && b.kind == kind && b.key == key)
            .map(|b| b.message_id.clone());
        let message_id = match open {
            Some(id) => id,
            // An empty part opens nothing (a writer's closing chunk).
            None if text.is_empty() => return,
            None => {
                self.close_source(source);
                self.open_block(source.clone(), kind, key)
            }
        };
        if text.is_empty() {
            return;
        }
        let delta = text.to_owned();
        match kind {
            BlockKind::Text | BlockKind::Code => self.emit(TextMessageContent {
                message_id,
                delta,
                subagent_run_id: None,
            }),
            BlockKind::Reasoning => self.emit(ReasoningMessageContent {
                message_id,
                delta,
                subagent_run_id: None,
            }),
        }
    }

    /// Opens a block and returns its message id.
    fn open_block(&mut self, source: Source, kind: BlockKind, key: String) -> String {
        let n = self.openings.entry(key.clone()).or_insert(0);
        let message_id = if *n == 0 {
            key.clone()
        } else {
            format!("{key}#{n}")
        };
        *n += 1;
        match kind {
            BlockKind::Text | BlockKind::Code => {
                self.emit(TextMessageStart {
                    message_id: message_id.clone(),
                    role: Some(TextRole::Assistant),
                    name: None,
                    subagent_run_id: None,
                });
                if kind == BlockKind::Code {
                    self.emit(TextMessageContent {
                        message_id: message_id.clone(),
                        delta: "```\n".into(),
                        subagent_run_id: None,
                    });
                }
            }
            BlockKind::Reasoning => {
                self.emit(ReasoningStart {
                    message_id: message_id.clone(),
                    subagent_run_id: None,
                });
                self.emit(ReasoningMessageStart {
                    message_id: message_id.clone(),
                    role: ReasoningRole::Reasoning,
                    subagent_run_id: None,
                });
            }
        }
        self.open.push(OpenBlock {
            source,
            kind,
            key,
            message_id: message_id.clone(),
            subagent: self.subagent.as_ref().map(|s| s.id.clone()),
        });
        message_id
    }

    fn close_source(&mut self, source: &Source) {
        if let Some(i) = self.open.iter().position(|b| &b.source == source) {
            let b = self.open.remove(i);
            self.close_block(b);
        }
    }

    fn close_all(&mut self) {
        for b in std::mem::take(&mut self.open) {
            self.close_block(b);
        }
    }

    fn close_block(&mut self, b: OpenBlock) {
        let start = self.out.len();
        let subagent = b.subagent.clone();
        self.close_block_events(b);
        if let Some(id) = subagent {
            stamp(&mut self.out[start..], &id);
        }
    }

    /// The part's subagent (none for the agent's own output) becomes the
    /// active one: when it is another than the last part's, that one's
    /// messages close and it finishes (`SUBAGENT_FINISHED`), and the new
    /// one starts (`SUBAGENT_STARTED`). The source's open block closes too,
    /// as a message belongs to one agent.
    fn enter_subagent(&mut self, source: &Source, hints: &PartHints) {
        let named = hints.subagent_run_id.as_deref();
        if named == self.subagent.as_ref().map(|s| s.named.as_str()) {
            return;
        }
        self.close_source(source);
        self.end_subagent();
        let Some(named) = named else {
            return;
        };
        let n = self.subagent_starts.entry(named.to_owned()).or_insert(0);
        let id = if *n == 0 {
            named.to_owned()
        } else {
            format!("{named}#{n}")
        };
        *n += 1;
        self.emit(SubagentStarted {
            subagent_run_id: id.clone(),
            name: hints
                .subagent_name
                .clone()
                .unwrap_or_else(|| named.to_owned()),
            ..SubagentStarted::default()
        });
        self.subagent = Some(ActiveSubagent {
            named: named.to_owned(),
            id,
        });
    }

    /// Closes the active subagent's messages and finishes it.
    fn end_subagent(&mut self) {
        let Some(active) = self.subagent.take() else {
            return;
        };
        let (its, others): (Vec<OpenBlock>, Vec<OpenBlock>) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|b| b.subagent.as_deref() == Some(active.id.as_str()));
        self.open = others;
        for b in its {
            self.close_block(b);
        }
        self.emit(SubagentFinished {
            subagent_run_id: active.id,
            result: None,
            outcome: Some(SubagentOutcome::Success),
        });
    }

    /// Whether the run's input answers tool call `id` (a `tool` message).
    fn input_answers(&self, id: &str) -> bool {
        self.options.input.as_ref().is_some_and(|input| {
            input
                .messages
                .iter()
                .any(|m| matches!(m, crate::events::Message::Tool(t) if t.tool_call_id == id))
        })
    }

    fn close_block_events(&mut self, b: OpenBlock) {
        let id = b.message_id;
        match b.kind {
            BlockKind::Text => self.emit(TextMessageEnd {
                message_id: id,
                subagent_run_id: None,
            }),
            BlockKind::Code => {
                self.emit(TextMessageContent {
                    message_id: id.clone(),
                    delta: "\n```".into(),
                    subagent_run_id: None,
                });
                self.emit(TextMessageEnd {
                    message_id: id,
                    subagent_run_id: None,
                });
            }
            BlockKind::Reasoning => {
                self.emit(ReasoningMessageEnd {
                    message_id: id.clone(),
                    subagent_run_id: None,
                });
                self.emit(ReasoningEnd {
                    message_id: id,
                    subagent_run_id: None,
                });
            }
        }
    }

    /// Sends the state: a snapshot when the client has none this run, else
    /// the delta (if anything changed).
    fn sync_state(&mut self) {
        if let Some(event) = self.state.sync() {
            self.emit(event);
        }
    }

    /// The state document as it is now (what the client's copy equals
    /// after the last `STATE_SNAPSHOT` or `STATE_DELTA` sent).
    pub fn state(&self) -> Value {
        self.state.snapshot()
    }
}

/// The task-progress payload of a status update (its own metadata first,
/// then its message's).
fn progress_payload(status: &TaskStatus, metadata: Option<&Metadata>) -> Option<Value> {
    let find = |md: &Metadata| md.get(TASK_PROGRESS_URI).filter(|v| v.is_object()).cloned();
    metadata.and_then(find).or_else(|| {
        status
            .message
            .as_ref()
            .and_then(|m| m.metadata.as_ref())
            .and_then(find)
    })
}

/// An engine item's SSE id / log position: a direct message reply travels
/// with seq 0, it has none.
fn item_seq(item: &LoggedEvent) -> Option<u64> {
    (item.seq > 0).then_some(item.seq)
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The JSON Pointer of an artifact in the state document.
pub fn artifact_pointer(artifact_id: &str) -> String {
    format!("/a2a/artifacts/{}", escape_token(artifact_id))
}

/// The `name` of the `CUSTOM` event that tells a UI which state keys it
/// may predict from a tool call's arguments (CopilotKit's convention).
pub const PREDICT_STATE_EVENT: &str = "PredictState";

/// The `PredictState` value of a tool call part hinted with
/// [`PREDICT_STATE`]: `[{"state_key", "tool", "tool_argument"}]`, `tool`
/// being the call's; `None` without (well-formed) mappings.
fn predict_state(part: &Part, tool: &str) -> Option<Value> {
    let mappings = part.metadata.as_ref()?.get(PREDICT_STATE)?.as_array()?;
    let value: Vec<Value> = mappings
        .iter()
        .filter_map(|m| {
            let state_key = m.get("state_key")?.as_str()?;
            let argument = m.get("tool_argument")?.as_str()?;
            Some(json!({"state_key": state_key, "tool": tool, "tool_argument": argument}))
        })
        .collect();
    (!value.is_empty()).then_some(Value::Array(value))
}

/// The ids of the tool calls an input-required status message makes: the
/// tools the agent waits on the client to run.
fn awaited_tool_calls(state: TaskState, message: Option<&Message>) -> Vec<String> {
    let Some(message) = message.filter(|_| state == TaskState::InputRequired) else {
        return Vec::new();
    };
    message
        .parts
        .iter()
        .filter_map(|part| {
            let hints = PartHints::read(part);
            (hints.role() == PartRole::ToolCall)
                .then(|| read_tool_call(part, &hints))
                .flatten()
                .map(|call| call.id)
        })
        .collect()
}

/// Sets the `subagentRunId` of `events` (those that have one).
fn stamp(events: &mut [Event], id: &str) {
    for event in events {
        if let Some(slot) = event.subagent_run_id_mut() {
            *slot = Some(id.to_owned());
        }
    }
}
