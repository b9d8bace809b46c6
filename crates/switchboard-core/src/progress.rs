//! # Emitting task progress (`task-progress/v1`)
//!
//! [`ProgressEmitter`] is how an agent reports *how far along* its work is,
//! with the A2A task-progress extension
//! ([`TASK_PROGRESS_URI`](switchboard_protocol::progress::TASK_PROGRESS_URI);
//! the data model lives in
//! [`switchboard_protocol::progress`]).
//!
//! An agent gets the run's emitter from [`TaskEvents::progress`] (one per
//! run, flushed by the engine when the run ends) and declares the extension
//! on its card, so that clients know to activate it:
//!
//! ```
//! use switchboard_core::{RequestHandler, agent_fn};
//! use switchboard_protocol::AgentCard;
//! use switchboard_protocol::progress::ProgressLimits;
//!
//! let agent = agent_fn(|_ctx, events| async move {
//!     let progress = events.progress();
//!     let download = progress.tracker("download").total(100).message("fetching").start().await?;
//!     for _ in 0..100 {
//!         // ... fetch one file ...
//!         download.advance(1).await?;
//!     }
//!     download.complete().await?;
//!     events.artifact_text("result", "done").await?;
//!     Ok(())
//! });
//! let card = AgentCard::new("fetcher", "Fetches", "1.0")
//!     .with_extension(ProgressLimits::default().to_extension());
//! let handler = RequestHandler::builder(agent, card).build();
//! # let _ = handler;
//! ```
//!
//! ## What goes on the wire
//! Every update is a **full snapshot**: all active trackers plus an
//! aggregate, written into the status-update event's metadata *and* into
//! the status message's metadata (so `GetTask` shows it too), sent as a
//! `WORKING` status through [`TaskEvents::transient_status`], whose message
//! text is a short summary such as `download 50/100, index 3`. Transient
//! messages do not pile up in the task history. A tracker that completes or
//! fails stays in every later snapshot with its final values, so a snapshot
//! lists every tracker of the run, finished ones included, and a client that
//! joins late (or reads `GetTask`) still sees what was done. Only to stay
//! within `maxTrackers` are the oldest finished trackers left out (the
//! extension allows omitting a terminal tracker); the aggregate keeps
//! counting them.
//! The engine hides the entry from callers that did not activate the
//! extension, so the emitter always writes it.
//!
//! ## Invalid updates are refused where they are made
//! Progress above the total, negative or NaN numbers, progress that goes
//! down, messages or ids over the declared limits, duplicate ids, too many
//! trackers, and updates after a tracker finished all return a
//! [`ProgressError`] and send nothing. Every snapshot that leaves is
//! therefore schema-valid and monotonic per tracker.
//!
//! ## Rate limiting by coalescing
//! A tracker sends at most `recommendedMaxUpdatesPerSecond` updates per
//! second (default 2). An update inside the window is not sent at once: the
//! newest value replaces any pending one and a background timer sends it
//! when the window opens, so the final value always arrives. While one
//! tracker's window is closed, snapshots triggered by other trackers show
//! its last *sent* value, which keeps every tracker within the rate.
//! [`TrackerBuilder::start`], [`Tracker::complete`] and
//! [`Tracker::fail`] are never delayed: they are sent before they return.
//! [`ProgressEmitter::flush`] sends every pending value now; call it before
//! the agent returns if trackers are still running, because once the task
//! finishes, late updates are refused by the engine.
//!
//! The emitter is cheap to clone and safe to use from concurrent tasks; use
//! one emitter (and clones of it) per run, since each snapshot lists only
//! the trackers its emitter knows. All timing uses `tokio::time`, so tests
//! can run on a paused clock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::Utc;
use switchboard_protocol::progress::{
    ProgressAggregate, ProgressLimits, ProgressPayload, ProgressTracker, ProgressViolation,
    TrackerStatus, validate,
};
use switchboard_protocol::{Message, Metadata, TaskState, TaskStatus};
use tokio::time::Instant;

use crate::events::{EmitError, TaskEvents};

/// The longest status-message summary, in characters.
const MAX_SUMMARY_CHARS: usize = 200;

/// Why a progress call was refused. Nothing was sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProgressError {
    /// A tracker id must have at least one character.
    #[error("a tracker id must not be empty")]
    EmptyId,
    /// The id is longer than the declared `maxIdChars`.
    #[error("tracker id {id:?} has {chars} characters; the limit is {max}")]
    IdTooLong {
        /// The id.
        id: String,
        /// Its length in characters.
        chars: usize,
        /// The limit.
        max: usize,
    },
    /// Ids are stable within a task and cannot be reused, even after the
    /// tracker finished.
    #[error("tracker {0:?} already exists in this task; tracker ids cannot be reused")]
    DuplicateId(String),
    /// `maxTrackers` trackers are already active.
    #[error("{max} trackers are already active (maxTrackers); finish one first")]
    TooManyTrackers {
        /// The limit.
        max: usize,
    },
    /// A number is NaN, infinite or negative.
    #[error("tracker {id:?}: {field} must be a finite number >= 0, got {value}")]
    InvalidNumber {
        /// The tracker.
        id: String,
        /// `progress`, `total` or `delta`.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// Progress above the total.
    #[error("tracker {id:?}: progress {progress} exceeds the total {total}")]
    ExceedsTotal {
        /// The tracker.
        id: String,
        /// The progress asked for.
        progress: f64,
        /// The total.
        total: f64,
    },
    /// Progress never goes down.
    #[error("tracker {id:?}: progress cannot go back from {current} to {requested}")]
    Decreasing {
        /// The tracker.
        id: String,
        /// The progress already reported.
        current: f64,
        /// The progress asked for.
        requested: f64,
    },
    /// A new total below the progress already reported.
    #[error("tracker {id:?}: total {total} is below the progress already reported ({progress})")]
    TotalBelowProgress {
        /// The tracker.
        id: String,
        /// The progress.
        progress: f64,
        /// The total asked for.
        total: f64,
    },
    /// A message is longer than the declared `maxMessageChars`.
    #[error("{what} has {chars} characters; the limit is {max}")]
    MessageTooLong {
        /// Which message (`tracker "x" message`, `summary`).
        what: String,
        /// Its length in characters.
        chars: usize,
        /// The limit.
        max: usize,
    },
    /// The tracker already completed or failed.
    #[error("tracker {id:?} is already {status}; a finished tracker takes no more updates")]
    Finished {
        /// The tracker.
        id: String,
        /// How it finished.
        status: TrackerStatus,
    },
    /// This emitter has no tracker with that id.
    #[error("no tracker {0:?} in this emitter")]
    UnknownTracker(String),
    /// A snapshot failed validation. This is a bug in the emitter; nothing was sent.
    #[error("internal error: the progress snapshot would be invalid: {0:?}")]
    InvalidSnapshot(Vec<ProgressViolation>),
    /// The engine refused the status update (for example: the task already
    /// finished or was canceled).
    #[error(transparent)]
    Emit(#[from] EmitError),
}

impl ProgressError {
    /// `true` when the task is over (finished or canceled): stop reporting.
    pub fn is_task_over(&self) -> bool {
        matches!(self, Self::Emit(EmitError::TaskTerminal { .. }))
    }
}

/// A number that can be used as progress or total: every primitive integer
/// and float type.
pub trait Amount: Copy {
    /// The value as `f64` (integers above 2^53 round).
    fn to_f64(self) -> f64;
}

macro_rules! amount {
    ($($t:ty),*) => {$(
        impl Amount for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
amount!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64
);

/// Reports task progress; see the module docs.
#[derive(Clone)]
pub struct ProgressEmitter {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ProgressEmitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressEmitter")
            .field("task_id", &self.inner.events.task_id())
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

struct Inner {
    events: TaskEvents,
    limits: ProgressLimits,
    /// Minimum time between two updates of one tracker (`None`: unlimited).
    interval: Option<Duration>,
    state: Mutex<State>,
    /// Held while a snapshot is built and sent, so snapshots leave in the
    /// order their contents were read.
    send: tokio::sync::Mutex<()>,
}

struct State {
    /// Trackers in the next snapshot, in start order: the active ones and
    /// the finished ones (until they make room for new ones).
    entries: Vec<Entry>,
    /// Finished trackers left out of snapshots to stay within
    /// `maxTrackers`.
    retired: HashMap<String, TrackerStatus>,
    /// The sum of their final progress, for the aggregate.
    retired_progress: f64,
    /// The sum of their totals (`None` once one had no total).
    retired_total: Option<f64>,
    /// The aggregate's message.
    summary: Option<String>,
    /// Set once the engine said the task is over.
    task_over: Option<(String, TaskState)>,
}

impl State {
    fn new() -> Self {
        State {
            entries: Vec::new(),
            retired: HashMap::new(),
            retired_progress: 0.0,
            retired_total: Some(0.0),
            summary: None,
            task_over: None,
        }
    }
}

struct Entry {
    /// The newest values.
    current: ProgressTracker,
    /// What was last sent (`None`: never).
    shown: Option<ProgressTracker>,
    /// When it was last sent.
    last_sent: Option<Instant>,
    /// A background flush is scheduled at this instant.
    flush_at: Option<Instant>,
}

impl Entry {
    fn dirty(&self) -> bool {
        self.shown.as_ref() != Some(&self.current)
    }

    fn window_open(&self, interval: Option<Duration>, now: Instant) -> bool {
        match (self.last_sent, interval) {
            (Some(last), Some(iv)) => now >= last + iv,
            _ => true,
        }
    }

    fn status(&self) -> TrackerStatus {
        self.current.status.unwrap_or(TrackerStatus::Running)
    }

    /// Finished, and its final values sent: it may leave the snapshot.
    fn retirable(&self) -> bool {
        self.shown
            .as_ref()
            .is_some_and(ProgressTracker::is_terminal)
    }
}

/// Which pending updates a send must include regardless of their window.
enum Force<'a> {
    None,
    One(&'a str),
    All,
}

impl ProgressEmitter {
    /// An emitter writing through `events`, within `limits` (usually the
    /// ones the agent declares on its card with
    /// [`ProgressLimits::to_extension`]). Limits above the schema caps are
    /// clamped; a rate of `f64::INFINITY` disables rate limiting.
    pub fn new(events: TaskEvents, limits: ProgressLimits) -> Self {
        let limits = limits.clamped();
        let rate = limits.recommended_max_updates_per_second;
        let interval =
            (rate.is_finite() && rate > 0.0).then(|| Duration::from_secs_f64(1.0 / rate));
        ProgressEmitter {
            inner: Arc::new(Inner {
                events,
                limits,
                interval,
                state: Mutex::new(State::new()),
                send: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &ProgressLimits {
        &self.inner.limits
    }

    /// Starts describing a new tracker; finish with [`TrackerBuilder::start`].
    pub fn tracker(&self, id: impl Into<String>) -> TrackerBuilder {
        TrackerBuilder {
            emitter: self.clone(),
            id: id.into(),
            total: None,
            progress: 0.0,
            message: None,
        }
    }

    /// Sets (or clears) the aggregate's message. It goes out with the next
    /// snapshot; nothing is sent by this call.
    pub fn set_summary(&self, message: Option<String>) -> Result<(), ProgressError> {
        if let Some(m) = &message {
            check_message(&self.inner.limits, "summary".into(), m)?;
        }
        self.inner.lock().summary = message;
        Ok(())
    }

    /// Sends every pending (coalesced) value now, whatever the rate windows
    /// say. Returns once they are in the task.
    pub async fn flush(&self) -> Result<(), ProgressError> {
        self.inner.check_task_over()?;
        Inner::send(&self.inner, Force::All).await
    }

    /// The newest values of every tracker in the next snapshot (pending ones
    /// included), in start order.
    pub fn trackers(&self) -> Vec<ProgressTracker> {
        self.inner
            .lock()
            .entries
            .iter()
            .map(|e| e.current.clone())
            .collect()
    }

    /// How many trackers are running.
    pub fn active_count(&self) -> usize {
        self.inner
            .lock()
            .entries
            .iter()
            .filter(|e| !e.status().is_terminal())
            .count()
    }
}

/// Describes a tracker before it starts: total, initial progress, message.
#[derive(Debug)]
#[must_use = "a tracker only exists once `start().await` returns"]
pub struct TrackerBuilder {
    emitter: ProgressEmitter,
    id: String,
    total: Option<f64>,
    progress: f64,
    message: Option<String>,
}

impl TrackerBuilder {
    /// The total amount of work (omit it when unknown).
    pub fn total(mut self, total: impl Amount) -> Self {
        self.total = Some(total.to_f64());
        self
    }

    /// The initial progress (default 0).
    pub fn progress(mut self, progress: impl Amount) -> Self {
        self.progress = progress.to_f64();
        self
    }

    /// A human-readable hint.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Validates the tracker, adds it, and sends a snapshot with it before
    /// returning (a start is never delayed by rate limiting).
    pub async fn start(self) -> Result<Tracker, ProgressError> {
        let inner = &self.emitter.inner;
        let limits = &inner.limits;
        let id = self.id;
        let chars = id.chars().count();
        if chars == 0 {
            return Err(ProgressError::EmptyId);
        }
        if chars > limits.max_id_chars {
            return Err(ProgressError::IdTooLong {
                id,
                chars,
                max: limits.max_id_chars,
            });
        }
        check_amount(&id, "progress", self.progress)?;
        if let Some(total) = self.total {
            check_amount(&id, "total", total)?;
            check_within(&id, self.progress, total)?;
        }
        if let Some(m) = &self.message {
            check_message(limits, format!("tracker {id:?} message"), m)?;
        }
        {
            let mut st = inner.lock();
            st.check_task_over()?;
            if st.retired.contains_key(&id) || st.entries.iter().any(|e| e.current.id == id) {
                return Err(ProgressError::DuplicateId(id));
            }
            if st.entries.len() >= limits.max_trackers {
                // Room for the new tracker: the oldest finished one leaves
                // the snapshot, or none has finished yet.
                let Some(oldest) = st.entries.iter().position(Entry::retirable) else {
                    return Err(ProgressError::TooManyTrackers {
                        max: limits.max_trackers,
                    });
                };
                st.retire(oldest);
            }
            let now = Utc::now();
            st.entries.push(Entry {
                current: ProgressTracker {
                    id: id.clone(),
                    progress: Some(self.progress),
                    total: self.total,
                    message: self.message,
                    status: Some(TrackerStatus::Running),
                    started_at: Some(now),
                    updated_at: Some(now),
                },
                shown: None,
                last_sent: None,
                flush_at: None,
            });
        }
        if let Err(e) = Inner::send(inner, Force::One(&id)).await {
            // Never shown: take it back so the id can be tried again.
            inner
                .lock()
                .entries
                .retain(|e| e.current.id != id || e.shown.is_some());
            return Err(e);
        }
        Ok(Tracker {
            emitter: self.emitter,
            id,
        })
    }
}

/// One running tracker. Clone it to update it from several places.
#[derive(Debug, Clone)]
pub struct Tracker {
    emitter: ProgressEmitter,
    id: String,
}

/// A change to one tracker.
enum Update {
    Set(f64),
    Advance(f64),
    Total(f64),
    Message(String),
    SetWithMessage(f64, String),
    Complete,
    Fail(String),
}

impl Tracker {
    /// The tracker's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The newest values (pending ones included), the final ones once it
    /// finished; `None` once it left the snapshot to make room (see the
    /// module docs).
    pub fn current(&self) -> Option<ProgressTracker> {
        self.emitter
            .inner
            .lock()
            .entries
            .iter()
            .find(|e| e.current.id == self.id)
            .map(|e| e.current.clone())
    }

    /// Sets the progress. It may not go down or exceed the total.
    pub async fn set(&self, progress: impl Amount) -> Result<(), ProgressError> {
        self.update(Update::Set(progress.to_f64())).await
    }

    /// Adds `delta` (>= 0) to the progress.
    pub async fn advance(&self, delta: impl Amount) -> Result<(), ProgressError> {
        self.update(Update::Advance(delta.to_f64())).await
    }

    /// Sets or changes the total; it may not be below the progress.
    pub async fn set_total(&self, total: impl Amount) -> Result<(), ProgressError> {
        self.update(Update::Total(total.to_f64())).await
    }

    /// Sets the human-readable hint.
    pub async fn set_message(&self, message: impl Into<String>) -> Result<(), ProgressError> {
        self.update(Update::Message(message.into())).await
    }

    /// Sets progress and hint in one update.
    pub async fn set_with_message(
        &self,
        progress: impl Amount,
        message: impl Into<String>,
    ) -> Result<(), ProgressError> {
        self.update(Update::SetWithMessage(progress.to_f64(), message.into()))
            .await
    }

    /// Marks the tracker completed (progress = total when the total is
    /// known) and sends it before returning. Later snapshots show it
    /// completed. If the
    /// engine refuses the write for a passing reason (a store error), the
    /// completion stays pending and [`ProgressEmitter::flush`] retries it.
    pub async fn complete(&self) -> Result<(), ProgressError> {
        self.update(Update::Complete).await
    }

    /// Marks the tracker failed with `reason` as its message (cut to the
    /// message limit: a failure is never refused for its length) and sends
    /// it before returning. Later snapshots show it failed.
    pub async fn fail(&self, reason: impl Into<String>) -> Result<(), ProgressError> {
        self.update(Update::Fail(reason.into())).await
    }

    async fn update(&self, update: Update) -> Result<(), ProgressError> {
        let inner = &self.emitter.inner;
        let finishing = matches!(update, Update::Complete | Update::Fail(_));
        let send_now = {
            let mut st = inner.lock();
            st.check_task_over()?;
            let Some(entry) = st.entries.iter_mut().find(|e| e.current.id == self.id) else {
                return Err(match st.retired.get(&self.id) {
                    Some(status) => ProgressError::Finished {
                        id: self.id.clone(),
                        status: *status,
                    },
                    None => ProgressError::UnknownTracker(self.id.clone()),
                });
            };
            let status = entry.status();
            if status.is_terminal() {
                return Err(ProgressError::Finished {
                    id: self.id.clone(),
                    status,
                });
            }
            let next = apply(&inner.limits, &entry.current, update)?;
            let changed = !same_values(&next, &entry.current);
            if changed {
                entry.current = ProgressTracker {
                    updated_at: Some(Utc::now()),
                    ..next
                };
            }
            if finishing {
                true
            } else if !changed {
                false
            } else if entry.window_open(inner.interval, Instant::now()) {
                true
            } else {
                inner.schedule(&mut st);
                false
            }
        };
        if send_now {
            let force = if finishing {
                Force::One(&self.id)
            } else {
                Force::None
            };
            Inner::send(inner, force).await?;
        }
        Ok(())
    }
}

/// The tracker after `update`, validated. Does not touch `updatedAt`.
fn apply(
    limits: &ProgressLimits,
    t: &ProgressTracker,
    update: Update,
) -> Result<ProgressTracker, ProgressError> {
    let id = &t.id;
    let current = t.progress.unwrap_or(0.0);
    let mut next = t.clone();
    let set = |next: &mut ProgressTracker, p: f64| -> Result<(), ProgressError> {
        check_amount(id, "progress", p)?;
        if p < current {
            return Err(ProgressError::Decreasing {
                id: id.clone(),
                current,
                requested: p,
            });
        }
        if let Some(total) = t.total {
            check_within(id, p, total)?;
        }
        next.progress = Some(p);
        Ok(())
    };
    match update {
        Update::Set(p) => set(&mut next, p)?,
        Update::Advance(d) => {
            check_amount(id, "delta", d)?;
            set(&mut next, current + d)?;
        }
        Update::Total(total) => {
            check_amount(id, "total", total)?;
            if total < current {
                return Err(ProgressError::TotalBelowProgress {
                    id: id.clone(),
                    progress: current,
                    total,
                });
            }
            next.total = Some(total);
        }
        Update::Message(m) => {
            check_message(limits, format!("tracker {id:?} message"), &m)?;
            next.message = Some(m);
        }
        Update::SetWithMessage(p, m) => {
            check_message(limits, format!("tracker {id:?} message"), &m)?;
            set(&mut next, p)?;
            next.message = Some(m);
        }
        Update::Complete => {
            if let Some(total) = t.total {
                next.progress = Some(total);
            }
            next.status = Some(TrackerStatus::Completed);
        }
        Update::Fail(reason) => {
            next.message = Some(truncate(&reason, limits.max_message_chars));
            next.status = Some(TrackerStatus::Failed);
        }
    }
    Ok(next)
}

/// Equal apart from `updatedAt`.
fn same_values(a: &ProgressTracker, b: &ProgressTracker) -> bool {
    a.progress == b.progress && a.total == b.total && a.message == b.message && a.status == b.status
}

fn check_amount(id: &str, field: &'static str, value: f64) -> Result<(), ProgressError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(ProgressError::InvalidNumber {
            id: id.to_string(),
            field,
            value,
        })
    }
}

fn check_within(id: &str, progress: f64, total: f64) -> Result<(), ProgressError> {
    // Covers "total 0 means progress 0" as well.
    if progress > total {
        Err(ProgressError::ExceedsTotal {
            id: id.to_string(),
            progress,
            total,
        })
    } else {
        Ok(())
    }
}

fn check_message(limits: &ProgressLimits, what: String, m: &str) -> Result<(), ProgressError> {
    let chars = m.chars().count();
    if chars > limits.max_message_chars {
        Err(ProgressError::MessageTooLong {
            what,
            chars,
            max: limits.max_message_chars,
        })
    } else {
        Ok(())
    }
}

/// Cuts `s` to at most `max` characters, ending with `…` when cut.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    if max > 0 {
        out.push('…');
    }
    out
}

/// The status message text: `download 50/100, index 3`.
fn summary_text(trackers: &[ProgressTracker]) -> String {
    if trackers.is_empty() {
        return "progress".to_string();
    }
    let mut out = String::new();
    for (i, t) in trackers.iter().enumerate() {
        let part = t.summary();
        let sep = if i == 0 { "" } else { ", " };
        if out.chars().count() + sep.len() + part.chars().count() > MAX_SUMMARY_CHARS {
            out.push_str(&format!("{sep}+{} more", trackers.len() - i));
            break;
        }
        out.push_str(sep);
        out.push_str(&part);
    }
    out
}

impl State {
    /// Leaves the finished tracker at `index` out of later snapshots; the
    /// aggregate keeps its amounts.
    fn retire(&mut self, index: usize) {
        let entry = self.entries.remove(index);
        let t = entry.shown.unwrap_or(entry.current);
        self.retired_progress += t.progress.unwrap_or(0.0);
        self.retired_total = match (self.retired_total, t.total) {
            (Some(sum), Some(total)) => Some(sum + total),
            _ => None,
        };
        self.retired
            .insert(t.id, t.status.unwrap_or(TrackerStatus::Completed));
    }

    fn check_task_over(&self) -> Result<(), ProgressError> {
        match &self.task_over {
            Some((task_id, state)) => Err(ProgressError::Emit(EmitError::TaskTerminal {
                task_id: task_id.clone(),
                state: *state,
            })),
            None => Ok(()),
        }
    }
}

/// One snapshot ready to send.
struct Built {
    payload: ProgressPayload,
    /// The trackers whose new values it carries.
    included: Vec<ProgressTracker>,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn check_task_over(&self) -> Result<(), ProgressError> {
        self.lock().check_task_over()
    }

    /// Builds the next snapshot: pending values whose window is open (or
    /// that are forced) go in with their new values, every other tracker
    /// with the values last sent. `None`: nothing new to send.
    fn build(&self, st: &State, force: &Force<'_>) -> Option<Built> {
        let now = Instant::now();
        let mut trackers = Vec::with_capacity(st.entries.len());
        let mut included = Vec::new();
        for e in &st.entries {
            let forced = match force {
                Force::None => false,
                Force::One(id) => e.current.id == *id,
                Force::All => true,
            };
            if e.dirty() && (forced || e.window_open(self.interval, now)) {
                trackers.push(e.current.clone());
                included.push(e.current.clone());
            } else if let Some(shown) = &e.shown {
                trackers.push(shown.clone());
            }
        }
        if included.is_empty() {
            return None;
        }
        let mut aggregate = ProgressAggregate::from_trackers(&trackers);
        aggregate.progress = aggregate.progress.map(|p| p + st.retired_progress);
        aggregate.total = match (aggregate.total, st.retired_total) {
            (Some(t), Some(r)) => Some(t + r),
            _ => None,
        };
        aggregate.message = st.summary.clone();
        Some(Built {
            payload: ProgressPayload {
                trackers,
                aggregate: Some(aggregate),
            },
            included,
        })
    }

    /// Builds and sends one snapshot, then records what was sent.
    async fn send(this: &Arc<Inner>, force: Force<'_>) -> Result<(), ProgressError> {
        let _turn = this.send.lock().await;
        let built = {
            let st = this.lock();
            st.check_task_over()?;
            this.build(&st, &force)
        };
        let Some(built) = built else {
            return Ok(());
        };
        if let Err(v) = validate(&built.payload, &this.limits) {
            return Err(ProgressError::InvalidSnapshot(v));
        }
        let mut metadata = Metadata::new();
        built.payload.insert_into(&mut metadata);
        let mut message = Message::agent_text(summary_text(&built.payload.trackers));
        message.metadata = Some(metadata.clone());
        let status = TaskStatus::new(TaskState::Working).with_message(message);
        let sent = this.events.transient_status(status, Some(metadata)).await;
        let mut st = this.lock();
        if let Err(e) = sent {
            if let EmitError::TaskTerminal { task_id, state } = &e {
                st.task_over = Some((task_id.clone(), *state));
            }
            return Err(e.into());
        }
        let now = Instant::now();
        for t in built.included {
            if let Some(e) = st.entries.iter_mut().find(|e| e.current.id == t.id) {
                e.shown = Some(t);
                e.last_sent = Some(now);
            }
        }
        this.schedule(&mut st);
        Ok(())
    }

    /// Makes sure every pending value whose window is closed has a timer
    /// that sends it when the window opens.
    fn schedule(self: &Arc<Self>, st: &mut State) {
        let Some(interval) = self.interval else {
            return;
        };
        let now = Instant::now();
        for e in &mut st.entries {
            if !e.dirty() || e.flush_at.is_some() {
                continue;
            }
            let Some(last) = e.last_sent else { continue };
            let opens = last + interval;
            if opens <= now {
                continue;
            }
            e.flush_at = Some(opens);
            let inner = Arc::clone(self);
            let id = e.current.id.clone();
            tokio::spawn(async move {
                tokio::time::sleep_until(opens).await;
                {
                    let mut st = inner.lock();
                    if let Some(e) = st.entries.iter_mut().find(|e| e.current.id == id)
                        && e.flush_at == Some(opens)
                    {
                        e.flush_at = None;
                    }
                }
                if let Err(e) = Inner::send(&inner, Force::None).await {
                    if e.is_task_over() {
                        tracing::debug!(task_id = %inner.events.task_id(), error = %e, "progress after the task ended was dropped");
                    } else {
                        tracing::warn!(task_id = %inner.events.task_id(), error = %e, "a coalesced progress update could not be sent; it stays pending");
                    }
                }
            });
        }
    }
}
