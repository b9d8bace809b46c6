//! # Task progress: the A2A `task-progress/v1` extension
//!
//! A2A tasks report *what state* they are in (`WORKING`, `COMPLETED`, ...),
//! but not *how far along* they are. The task-progress extension
//! ([`TASK_PROGRESS_URI`]) adds that without touching any core type: an agent
//! writes a small JSON object into the `metadata` of its status updates, under
//! the extension's URI as the key.
//!
//! ```json
//! "metadata": {
//!   "https://a2a-protocol.org/extensions/task-progress/v1": {
//!     "trackers": [
//!       {"id": "download", "progress": 50, "total": 100, "status": "running"},
//!       {"id": "index", "progress": 3}
//!     ],
//!     "aggregate": {"progress": 53}
//!   }
//! }
//! ```
//!
//! ## The model
//! - A **tracker** ([`ProgressTracker`]) is one unit of work that progresses
//!   on its own (a download, a tool call). Its `id` is stable for the task.
//!   `progress` counts what is done and `total` (when known) what there is to
//!   do: `0 <= progress <= total`, and a `total` of 0 forces `progress` 0.
//!   While `total` is known, `progress` never goes down across updates
//!   ([`check_monotonic`]).
//! - Each payload ([`ProgressPayload`]) is a **snapshot** of the task's
//!   trackers. A finished tracker carries `status` `completed` or `failed`
//!   and may be left out of later snapshots (our emitter keeps listing it,
//!   leaving out the oldest finished ones only to stay within
//!   `maxTrackers`); a tracker that disappears is "no longer active".
//! - The optional **aggregate** ([`ProgressAggregate`]) is one number for one
//!   progress bar. It is *advisory*: if it does not add up with the trackers,
//!   that is not an error.
//! - The agent card may declare **limits** ([`ProgressLimits`]): how many
//!   trackers, how long ids and messages may be, and how many updates per
//!   second per tracker an agent should send at most.
//!
//! ## What this module gives you
//! - The payload types, serialized exactly as the spec's JSON Schema
//!   ([`TASK_PROGRESS_SCHEMA`]) wants them, with whole numbers written as
//!   integers (`50`, not `50.0`).
//! - [`validate`] for a typed payload and [`validate_value`] /
//!   [`ProgressPayload::from_metadata`] for raw JSON. They check everything
//!   the schema says *and* the rules it cannot express; every problem comes
//!   back as a [`ProgressViolation`] naming the JSON Pointer path and the
//!   [`ProgressRule`] that broke.
//! - [`ProgressReducer`], the client side: it folds stream items into the set
//!   of active trackers, tolerating whatever other servers send.
//!
//! Agents emit progress with `switchboard_core::progress::ProgressEmitter`,
//! which builds on these types.
//!
//! ```
//! use switchboard_protocol::progress::*;
//!
//! let payload = ProgressPayload::new(vec![
//!     ProgressTracker::new("download").with_progress(50.0).with_total(100.0),
//! ]);
//! assert!(validate(&payload, &ProgressLimits::default()).is_ok());
//!
//! let bad = ProgressPayload::new(vec![
//!     ProgressTracker::new("download").with_progress(150.0).with_total(100.0),
//! ]);
//! let violations = validate(&bad, &ProgressLimits::default()).unwrap_err();
//! assert_eq!(violations[0].rule, ProgressRule::ProgressExceedsTotal);
//! assert_eq!(violations[0].path, "/trackers/0/progress");
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value, json};

use crate::card::{AgentCard, AgentExtension};
use crate::serde_util;
use crate::types::{Metadata, StreamResponse, Task, TaskState, TaskStatusUpdateEvent};

/// The extension's URI: the key of the payload in `metadata`, the value
/// clients put in `A2A-Extensions`, and the `uri` of the card declaration.
pub const TASK_PROGRESS_URI: &str = "https://a2a-protocol.org/extensions/task-progress/v1";

/// The normative JSON Schema of the payload (spec §8), verbatim.
pub const TASK_PROGRESS_SCHEMA: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://a2a-protocol.org/extensions/task-progress/v1/schema.json",
  "title": "A2A Task Progress Metadata Extension v1",
  "type": "object",
  "required": ["trackers"],
  "properties": {
    "trackers": {
      "type": "array",
      "items": { "$ref": "#/definitions/tracker" },
      "maxItems": 100
    },
    "aggregate": { "$ref": "#/definitions/aggregate" }
  },
  "additionalProperties": false,
  "definitions": {
    "tracker": {
      "type": "object",
      "required": ["id"],
      "properties": {
        "id": { "type": "string", "minLength": 1, "maxLength": 128 },
        "progress": { "type": "number" },
        "total": { "type": "number" },
        "message": { "type": "string", "maxLength": 512 },
        "status": { "type": "string", "enum": ["running", "completed", "failed"] },
        "startedAt": { "type": "string", "format": "date-time" },
        "updatedAt": { "type": "string", "format": "date-time" }
      },
      "additionalProperties": false
    },
    "aggregate": {
      "type": "object",
      "properties": {
        "progress": { "type": "number" },
        "total": { "type": "number" },
        "message": { "type": "string", "maxLength": 512 }
      },
      "additionalProperties": false
    }
  }
}"##;

/// The schema's hard cap on trackers per payload (`maxItems`).
pub const SCHEMA_MAX_TRACKERS: usize = 100;
/// The schema's hard cap on message length, in characters (`maxLength`).
pub const SCHEMA_MAX_MESSAGE_CHARS: usize = 512;
/// The schema's hard cap on tracker id length, in characters (`maxLength`).
pub const SCHEMA_MAX_ID_CHARS: usize = 128;
/// The spec's default `maxTrackers` (§3.1).
pub const DEFAULT_MAX_TRACKERS: usize = 20;
/// The spec's default `recommendedMaxUpdatesPerSecond` (§6).
pub const DEFAULT_MAX_UPDATES_PER_SECOND: f64 = 2.0;
/// The description used in the card declaration.
pub const TASK_PROGRESS_DESCRIPTION: &str = "Structured task progress reporting";

/// Largest integer an `f64` holds exactly (2^53).
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

// ---------------------------------------------------------------------------
// Payload types
// ---------------------------------------------------------------------------

/// The state of one tracker's unit of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrackerStatus {
    /// Still going.
    Running,
    /// Done; `progress == total` when the total is known.
    Completed,
    /// The unit of work failed.
    Failed,
}

impl TrackerStatus {
    /// The wire value: `running`, `completed` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }

    /// Parses the wire value (exact, as the schema's `enum` requires).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "running" => Some(Self::Running),
            "completed" => Some(Self::Completed),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }

    /// `true` for `completed` and `failed`: the tracker takes no more updates
    /// and may be left out of later snapshots.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed)
    }
}

impl fmt::Display for TrackerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One independently progressing unit of work.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProgressTracker {
    /// Stable identifier within the task (1 to 128 characters).
    pub id: String,
    /// How much is done (`>= 0`).
    #[serde(serialize_with = "opt_number")]
    pub progress: Option<f64>,
    /// How much there is to do (`>= progress`); `None` when unknown.
    #[serde(serialize_with = "opt_number")]
    pub total: Option<f64>,
    /// A short human-readable hint for a UI.
    pub message: Option<String>,
    /// `running`, `completed` or `failed`.
    pub status: Option<TrackerStatus>,
    /// When the work started.
    #[serde(default, with = "serde_util::opt_timestamp")]
    pub started_at: Option<DateTime<Utc>>,
    /// When this tracker last changed.
    #[serde(default, with = "serde_util::opt_timestamp")]
    pub updated_at: Option<DateTime<Utc>>,
}

impl ProgressTracker {
    /// A tracker with only an id.
    pub fn new(id: impl Into<String>) -> Self {
        ProgressTracker {
            id: id.into(),
            progress: None,
            total: None,
            message: None,
            status: None,
            started_at: None,
            updated_at: None,
        }
    }

    /// Sets `progress`.
    pub fn with_progress(mut self, progress: f64) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Sets `total`.
    pub fn with_total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// Sets `message`.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Sets `status`.
    pub fn with_status(mut self, status: TrackerStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// `true` when `status` is `completed` or `failed`.
    pub fn is_terminal(&self) -> bool {
        self.status.is_some_and(TrackerStatus::is_terminal)
    }

    /// `progress / total` in `0..=1`, when both are known and `total > 0`.
    pub fn fraction(&self) -> Option<f64> {
        match (self.progress, self.total) {
            (Some(p), Some(t)) if t > 0.0 && p.is_finite() && t.is_finite() => {
                Some((p / t).clamp(0.0, 1.0))
            }
            _ => None,
        }
    }

    /// A short human summary, for a status message or a log line: the
    /// tracker's message when it has one (what the agent wrote for people),
    /// else its id, with the amounts: `fetching files (50/100)`,
    /// `index 3`, `download done`, `upload 5/30 failed: disk full`.
    ///
    /// ```
    /// use switchboard_protocol::progress::{ProgressTracker, TrackerStatus};
    /// let walk = ProgressTracker::new("walk").with_progress(0.0).with_total(26.0);
    /// assert_eq!(walk.summary(), "walk 0/26");
    /// let walk = walk.with_message("walking src/");
    /// assert_eq!(walk.summary(), "walking src/ (0/26)");
    /// assert_eq!(walk.with_status(TrackerStatus::Completed).summary(), "walk done");
    /// ```
    pub fn summary(&self) -> String {
        let amount = match (self.progress, self.total) {
            (Some(p), Some(t)) => Some(format!("{}/{}", format_amount(p), format_amount(t))),
            (Some(p), None) => Some(format_amount(p)),
            (None, Some(t)) => Some(format!("?/{}", format_amount(t))),
            (None, None) => None,
        };
        let message = self.message.as_deref().filter(|m| !m.trim().is_empty());
        let id_amount = match &amount {
            Some(a) => format!("{} {a}", self.id),
            None => self.id.clone(),
        };
        match self.status {
            // The running message described work in progress; the id names
            // what finished.
            Some(TrackerStatus::Completed) => format!("{} done", self.id),
            // A failed tracker's message is the reason.
            Some(TrackerStatus::Failed) => match message {
                Some(reason) => format!("{id_amount} failed: {reason}"),
                None => format!("{id_amount} failed"),
            },
            _ => match (message, amount) {
                (Some(m), Some(a)) => format!("{m} ({a})"),
                (Some(m), None) => m.to_owned(),
                (None, _) => id_amount,
            },
        }
    }
}

/// One number for one progress bar. Advisory: clients must not treat an
/// aggregate that does not add up with the trackers as an error.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgressAggregate {
    /// Overall progress.
    #[serde(serialize_with = "opt_number")]
    pub progress: Option<f64>,
    /// Overall total; `None` when unknown.
    #[serde(serialize_with = "opt_number")]
    pub total: Option<f64>,
    /// A short human-readable hint for a UI.
    pub message: Option<String>,
}

impl ProgressAggregate {
    /// The sum of the trackers' progress, and the sum of their totals when
    /// every tracker has one (otherwise the total is unknown).
    pub fn from_trackers<'a>(trackers: impl IntoIterator<Item = &'a ProgressTracker>) -> Self {
        let mut progress = 0.0;
        let mut total = Some(0.0);
        for t in trackers {
            progress += t.progress.unwrap_or(0.0);
            total = match (total, t.total) {
                (Some(sum), Some(t)) => Some(sum + t),
                _ => None,
            };
        }
        ProgressAggregate {
            progress: Some(progress),
            total,
            message: None,
        }
    }

    /// `progress / total` in `0..=1`, when both are known and `total > 0`.
    pub fn fraction(&self) -> Option<f64> {
        match (self.progress, self.total) {
            (Some(p), Some(t)) if t > 0.0 && p.is_finite() && t.is_finite() => {
                Some((p / t).clamp(0.0, 1.0))
            }
            _ => None,
        }
    }
}

/// The value stored at `metadata[TASK_PROGRESS_URI]`: a snapshot of the
/// active trackers plus an optional aggregate.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgressPayload {
    /// The task's trackers: every active one, and finished ones (which a
    /// sender may leave out once it has sent them finished).
    pub trackers: Vec<ProgressTracker>,
    /// A single overall figure, advisory.
    pub aggregate: Option<ProgressAggregate>,
}

impl ProgressPayload {
    /// A payload with these trackers and no aggregate.
    pub fn new(trackers: Vec<ProgressTracker>) -> Self {
        ProgressPayload {
            trackers,
            aggregate: None,
        }
    }

    /// Sets the aggregate.
    pub fn with_aggregate(mut self, aggregate: ProgressAggregate) -> Self {
        self.aggregate = Some(aggregate);
        self
    }

    /// The tracker with this id, if present.
    pub fn tracker(&self, id: &str) -> Option<&ProgressTracker> {
        self.trackers.iter().find(|t| t.id == id)
    }

    /// The payload as JSON.
    pub fn to_value(&self) -> Value {
        // Serializing plain data into a `Value` cannot fail; fall back to an
        // empty snapshot rather than panic if it somehow did.
        serde_json::to_value(self).unwrap_or_else(|_| json!({ "trackers": [] }))
    }

    /// Stores the payload at `metadata[TASK_PROGRESS_URI]`.
    pub fn insert_into(&self, metadata: &mut Metadata) {
        metadata.insert(TASK_PROGRESS_URI.to_string(), self.to_value());
    }

    /// A metadata map holding only this payload.
    pub fn to_metadata(&self) -> Metadata {
        let mut md = Metadata::new();
        self.insert_into(&mut md);
        md
    }

    /// Reads and validates the payload at `metadata[TASK_PROGRESS_URI]`
    /// against the schema's hard caps. `None`: no progress entry.
    pub fn from_metadata(metadata: &Metadata) -> Option<Result<Self, InvalidProgress>> {
        Self::from_metadata_with_limits(metadata, &ProgressLimits::schema_caps())
    }

    /// Like [`from_metadata`](Self::from_metadata), but also enforces the
    /// limits an agent declared on its card.
    pub fn from_metadata_with_limits(
        metadata: &Metadata,
        limits: &ProgressLimits,
    ) -> Option<Result<Self, InvalidProgress>> {
        metadata
            .get(TASK_PROGRESS_URI)
            .map(|v| Self::from_value(v, limits))
    }

    /// Validates raw JSON and decodes it. The JSON itself is checked (unknown
    /// keys, wrong types, bad timestamps), not only what a typed decode keeps.
    pub fn from_value(value: &Value, limits: &ProgressLimits) -> Result<Self, InvalidProgress> {
        let (payload, violations) = inspect(value, limits);
        match (payload, violations.is_empty()) {
            (Some(p), true) => Ok(p),
            (payload, _) => Err(InvalidProgress {
                violations,
                payload,
            }),
        }
    }
}

/// A progress entry that broke the rules.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidProgress {
    /// Everything that is wrong with it (never empty).
    pub violations: Vec<ProgressViolation>,
    /// A best-effort reading for tolerant clients: trackers with a string id
    /// are kept, fields of the wrong type are dropped. `None` when the entry
    /// is not an object with a `trackers` array.
    pub payload: Option<ProgressPayload>,
}

impl fmt::Display for InvalidProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid task-progress payload: ")?;
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InvalidProgress {}

// ---------------------------------------------------------------------------
// Limits (the card declaration)
// ---------------------------------------------------------------------------

/// The limits an agent declares in its card's extension `params`.
///
/// Values above the schema's hard caps are clamped to them, so a payload
/// within the limits is always schema-valid.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressLimits {
    /// `maxTrackers`: trackers per payload (default 20, cap 100).
    pub max_trackers: usize,
    /// `maxMessageChars`: characters per message (default and cap 512).
    pub max_message_chars: usize,
    /// `maxIdChars`: characters per tracker id (default and cap 128).
    pub max_id_chars: usize,
    /// `recommendedMaxUpdatesPerSecond`: per tracker (default 2).
    pub recommended_max_updates_per_second: f64,
}

impl Default for ProgressLimits {
    fn default() -> Self {
        ProgressLimits {
            max_trackers: DEFAULT_MAX_TRACKERS,
            max_message_chars: SCHEMA_MAX_MESSAGE_CHARS,
            max_id_chars: SCHEMA_MAX_ID_CHARS,
            recommended_max_updates_per_second: DEFAULT_MAX_UPDATES_PER_SECOND,
        }
    }
}

impl ProgressLimits {
    /// Exactly the schema's hard caps (100 trackers, 512-char messages,
    /// 128-char ids): what any payload must respect, whoever sent it.
    pub fn schema_caps() -> Self {
        ProgressLimits {
            max_trackers: SCHEMA_MAX_TRACKERS,
            ..Self::default()
        }
    }

    /// These limits with every value clamped to the schema's hard caps and a
    /// non-positive or non-finite rate replaced by the default. Unbounded
    /// rate (`f64::INFINITY`) is kept.
    pub fn clamped(&self) -> Self {
        let rate = self.recommended_max_updates_per_second;
        ProgressLimits {
            max_trackers: self.max_trackers.min(SCHEMA_MAX_TRACKERS),
            max_message_chars: self.max_message_chars.min(SCHEMA_MAX_MESSAGE_CHARS),
            max_id_chars: self.max_id_chars.min(SCHEMA_MAX_ID_CHARS),
            recommended_max_updates_per_second: if rate > 0.0 && !rate.is_nan() {
                rate
            } else {
                DEFAULT_MAX_UPDATES_PER_SECOND
            },
        }
    }

    /// Reads the limits from a card's extension declaration. Missing or
    /// unusable params (not a positive number) fall back to the spec
    /// defaults; values above the schema caps are clamped.
    pub fn from_extension(ext: &AgentExtension) -> Self {
        let d = Self::default();
        let Some(params) = &ext.params else {
            return d;
        };
        let count = |key: &str, default: usize| -> usize {
            match params.get(key).and_then(Value::as_f64) {
                Some(n) if n >= 1.0 && n.is_finite() => {
                    // Saturating float-to-int conversion; fractions round down.
                    n as usize
                }
                _ => default,
            }
        };
        let rate = match params
            .get("recommendedMaxUpdatesPerSecond")
            .and_then(Value::as_f64)
        {
            Some(r) if r > 0.0 && r.is_finite() => r,
            _ => d.recommended_max_updates_per_second,
        };
        ProgressLimits {
            max_trackers: count("maxTrackers", d.max_trackers),
            max_message_chars: count("maxMessageChars", d.max_message_chars),
            max_id_chars: count("maxIdChars", d.max_id_chars),
            recommended_max_updates_per_second: rate,
        }
        .clamped()
    }

    /// Finds the task-progress declaration in a card. `None`: the agent does
    /// not declare the extension.
    pub fn from_card(card: &AgentCard) -> Option<Self> {
        card.capabilities
            .extensions
            .iter()
            .find(|e| e.uri == TASK_PROGRESS_URI)
            .map(Self::from_extension)
    }

    /// The card declaration (`required: false`) carrying these limits.
    pub fn to_extension(&self) -> AgentExtension {
        let l = self.clamped();
        let mut params = Map::new();
        params.insert("maxTrackers".into(), json!(l.max_trackers));
        params.insert("maxMessageChars".into(), json!(l.max_message_chars));
        params.insert("maxIdChars".into(), json!(l.max_id_chars));
        params.insert(
            "recommendedMaxUpdatesPerSecond".into(),
            number_value(l.recommended_max_updates_per_second),
        );
        AgentExtension {
            uri: TASK_PROGRESS_URI.to_string(),
            description: Some(TASK_PROGRESS_DESCRIPTION.to_string()),
            required: false,
            params: Some(params),
        }
    }
}

// ---------------------------------------------------------------------------
// Violations
// ---------------------------------------------------------------------------

/// Which rule a payload broke.
///
/// The first group mirrors the JSON Schema keywords of §8
/// ([`is_schema`](Self::is_schema) is `true`): a schema validator reports
/// these too. The second group are the spec's rules the schema cannot
/// express, and the limits an agent declares on its card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProgressRule {
    /// Schema `type`: a value has the wrong JSON type.
    Type,
    /// Schema `required`: `trackers` or a tracker's `id` is missing.
    Required,
    /// Schema `additionalProperties: false`: an unknown key.
    AdditionalProperties,
    /// Schema `enum`: `status` is not running, completed or failed.
    Enum,
    /// Schema `minLength`: an empty tracker id.
    MinLength,
    /// Schema `maxLength`: an id over 128 or a message over 512 characters.
    MaxLength,
    /// Schema `maxItems`: more than 100 trackers.
    MaxItems,
    /// Schema `format: date-time`: a timestamp that is not RFC 3339.
    DateTime,
    /// A number is NaN or infinite (only possible in typed payloads).
    NotFinite,
    /// `progress` or `total` is below 0.
    Negative,
    /// `progress` is above `total`.
    ProgressExceedsTotal,
    /// `total` is 0 but `progress` is not (omit `total` when unknown).
    ZeroTotalProgress,
    /// More trackers than the declared `maxTrackers`.
    MaxTrackers,
    /// An id longer than the declared `maxIdChars`.
    MaxIdChars,
    /// A message longer than the declared `maxMessageChars`.
    MaxMessageChars,
    /// Two trackers share an id in one payload.
    DuplicateId,
    /// A tracker's progress went down while its total is known.
    NonMonotonic,
}

impl ProgressRule {
    /// `true` for the rules a JSON Schema validator enforces too.
    pub fn is_schema(self) -> bool {
        matches!(
            self,
            Self::Type
                | Self::Required
                | Self::AdditionalProperties
                | Self::Enum
                | Self::MinLength
                | Self::MaxLength
                | Self::MaxItems
                | Self::DateTime
        )
    }

    /// A stable kebab-case name, e.g. `progress-exceeds-total`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Type => "type",
            Self::Required => "required",
            Self::AdditionalProperties => "additional-properties",
            Self::Enum => "enum",
            Self::MinLength => "min-length",
            Self::MaxLength => "max-length",
            Self::MaxItems => "max-items",
            Self::DateTime => "date-time",
            Self::NotFinite => "not-finite",
            Self::Negative => "negative",
            Self::ProgressExceedsTotal => "progress-exceeds-total",
            Self::ZeroTotalProgress => "zero-total-progress",
            Self::MaxTrackers => "max-trackers",
            Self::MaxIdChars => "max-id-chars",
            Self::MaxMessageChars => "max-message-chars",
            Self::DuplicateId => "duplicate-id",
            Self::NonMonotonic => "non-monotonic",
        }
    }
}

impl fmt::Display for ProgressRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken rule: where, which rule, and a sentence saying what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressViolation {
    /// JSON Pointer into the payload, e.g. `/trackers/0/progress` (`""` is
    /// the payload itself).
    pub path: String,
    /// The rule.
    pub rule: ProgressRule,
    /// What is wrong, for humans.
    pub message: String,
}

impl ProgressViolation {
    fn new(path: impl Into<String>, rule: ProgressRule, message: impl Into<String>) -> Self {
        ProgressViolation {
            path: path.into(),
            rule,
            message: message.into(),
        }
    }
}

impl fmt::Display for ProgressViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(payload)"
        } else {
            &self.path
        };
        write!(f, "{path}: {} [{}]", self.message, self.rule)
    }
}

impl std::error::Error for ProgressViolation {}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

/// Checks a typed payload against the schema and the spec's other rules,
/// within `limits` (clamped to the schema caps).
pub fn validate(
    payload: &ProgressPayload,
    limits: &ProgressLimits,
) -> Result<(), Vec<ProgressViolation>> {
    let limits = limits.clamped();
    let mut out = Vec::new();
    check_count(payload.trackers.len(), &limits, &mut out);
    let mut seen = HashSet::new();
    for (i, t) in payload.trackers.iter().enumerate() {
        let path = format!("/trackers/{i}");
        check_id(&path, &t.id, &limits, &mut out);
        if !seen.insert(t.id.as_str()) {
            out.push(duplicate(&path, &t.id));
        }
        check_numbers(&path, t.progress, t.total, true, &mut out);
        if let Some(m) = &t.message {
            check_message(&path, m, &limits, &mut out);
        }
    }
    if let Some(a) = &payload.aggregate {
        check_numbers("/aggregate", a.progress, a.total, false, &mut out);
        if let Some(m) = &a.message {
            check_message("/aggregate", m, &limits, &mut out);
        }
    }
    if out.is_empty() { Ok(()) } else { Err(out) }
}

/// Checks raw JSON (the value at `metadata[TASK_PROGRESS_URI]`) against the
/// schema and the spec's other rules, within `limits`.
pub fn validate_value(
    value: &Value,
    limits: &ProgressLimits,
) -> Result<(), Vec<ProgressViolation>> {
    let (_, out) = inspect(value, limits);
    if out.is_empty() { Ok(()) } else { Err(out) }
}

/// Compares two successive snapshots of one task: every tracker in `next`
/// whose total is known must not report less progress than it did in `prev`.
pub fn check_monotonic(prev: &ProgressPayload, next: &ProgressPayload) -> Vec<ProgressViolation> {
    let before: HashMap<&str, f64> = prev
        .trackers
        .iter()
        .filter_map(|t| t.progress.map(|p| (t.id.as_str(), p)))
        .collect();
    let mut out = Vec::new();
    for (i, t) in next.trackers.iter().enumerate() {
        if let Some(v) = monotonic_violation(i, t, before.get(t.id.as_str()).copied()) {
            out.push(v);
        }
    }
    out
}

fn monotonic_violation(
    index: usize,
    t: &ProgressTracker,
    previous: Option<f64>,
) -> Option<ProgressViolation> {
    let (Some(now), Some(before), Some(_)) = (t.progress, previous, t.total) else {
        return None;
    };
    (now < before).then(|| {
        ProgressViolation::new(
            format!("/trackers/{index}/progress"),
            ProgressRule::NonMonotonic,
            format!(
                "tracker `{}` went back from {} to {} although its total is known",
                t.id,
                format_amount(before),
                format_amount(now)
            ),
        )
    })
}

fn check_count(n: usize, limits: &ProgressLimits, out: &mut Vec<ProgressViolation>) {
    check_size(
        "/trackers".into(),
        format_args!("{n} trackers"),
        n,
        (SCHEMA_MAX_TRACKERS, ProgressRule::MaxItems),
        (
            limits.max_trackers,
            ProgressRule::MaxTrackers,
            "maxTrackers",
        ),
        out,
    );
}

fn check_id(path: &str, id: &str, limits: &ProgressLimits, out: &mut Vec<ProgressViolation>) {
    let path = format!("{path}/id");
    let chars = id.chars().count();
    if chars == 0 {
        out.push(ProgressViolation::new(
            path,
            ProgressRule::MinLength,
            "tracker id must not be empty",
        ));
    } else {
        check_size(
            path,
            format_args!("tracker id has {chars} characters"),
            chars,
            (SCHEMA_MAX_ID_CHARS, ProgressRule::MaxLength),
            (limits.max_id_chars, ProgressRule::MaxIdChars, "maxIdChars"),
            out,
        );
    }
}

fn check_message(path: &str, m: &str, limits: &ProgressLimits, out: &mut Vec<ProgressViolation>) {
    let chars = m.chars().count();
    check_size(
        format!("{path}/message"),
        format_args!("message has {chars} characters"),
        chars,
        (SCHEMA_MAX_MESSAGE_CHARS, ProgressRule::MaxLength),
        (
            limits.max_message_chars,
            ProgressRule::MaxMessageChars,
            "maxMessageChars",
        ),
        out,
    );
}

/// Checks a size `n` (described by `what`) against the schema's hard cap,
/// then against the limit the agent declared under `limit_name` (already
/// clamped to that cap). Over the cap breaks a schema rule; over only the
/// declared limit breaks one of ours; at most one of the two is reported.
fn check_size(
    path: String,
    what: fmt::Arguments<'_>,
    n: usize,
    (cap, cap_rule): (usize, ProgressRule),
    (limit, limit_rule, limit_name): (usize, ProgressRule, &str),
    out: &mut Vec<ProgressViolation>,
) {
    if n > cap {
        out.push(ProgressViolation::new(
            path,
            cap_rule,
            format!("{what}; the schema allows at most {cap}"),
        ));
    } else if n > limit {
        out.push(ProgressViolation::new(
            path,
            limit_rule,
            format!("{what}; the agent declares {limit_name} {limit}"),
        ));
    }
}

fn duplicate(path: &str, id: &str) -> ProgressViolation {
    ProgressViolation::new(
        format!("{path}/id"),
        ProgressRule::DuplicateId,
        format!("tracker id `{id}` appears more than once in this snapshot"),
    )
}

/// The numeric rules. `tracker`: the ordering rules apply (they do not for
/// the advisory aggregate, whose numbers only have to be numbers).
fn check_numbers(
    path: &str,
    progress: Option<f64>,
    total: Option<f64>,
    tracker: bool,
    out: &mut Vec<ProgressViolation>,
) {
    let mut ok = true;
    for (field, v) in [("progress", progress), ("total", total)] {
        let Some(v) = v else { continue };
        if !v.is_finite() {
            ok = false;
            out.push(ProgressViolation::new(
                format!("{path}/{field}"),
                ProgressRule::NotFinite,
                format!("{field} is {v}; JSON numbers are finite"),
            ));
        } else if tracker && v < 0.0 {
            ok = false;
            out.push(ProgressViolation::new(
                format!("{path}/{field}"),
                ProgressRule::Negative,
                format!("{field} is {}; it must be >= 0", format_amount(v)),
            ));
        }
    }
    if !tracker || !ok {
        return;
    }
    if let (Some(p), Some(t)) = (progress, total) {
        if t == 0.0 && p != 0.0 {
            out.push(ProgressViolation::new(
                format!("{path}/progress"),
                ProgressRule::ZeroTotalProgress,
                format!(
                    "total is 0 so progress must be 0, got {} (omit total when it is unknown)",
                    format_amount(p)
                ),
            ));
        } else if p > t {
            out.push(ProgressViolation::new(
                format!("{path}/progress"),
                ProgressRule::ProgressExceedsTotal,
                format!(
                    "progress {} exceeds total {}",
                    format_amount(p),
                    format_amount(t)
                ),
            ));
        }
    }
}

/// Walks raw JSON once: collects every violation and a best-effort typed
/// reading (see [`InvalidProgress::payload`]).
fn inspect(
    value: &Value,
    limits: &ProgressLimits,
) -> (Option<ProgressPayload>, Vec<ProgressViolation>) {
    let limits = limits.clamped();
    let mut out = Vec::new();
    let Some(obj) = value.as_object() else {
        out.push(type_error("", "the payload", "an object", value));
        return (None, out);
    };
    for key in obj.keys() {
        if key != "trackers" && key != "aggregate" {
            out.push(unknown_key("", key, "the payload"));
        }
    }
    let items = match obj.get("trackers") {
        None => {
            out.push(ProgressViolation::new(
                "/trackers",
                ProgressRule::Required,
                "`trackers` is required (an empty list when nothing is in progress)",
            ));
            None
        }
        Some(Value::Array(items)) => Some(items),
        Some(other) => {
            out.push(type_error("/trackers", "trackers", "an array", other));
            None
        }
    };
    let mut trackers = Vec::new();
    if let Some(items) = items {
        check_count(items.len(), &limits, &mut out);
        let mut seen = HashSet::new();
        for (i, item) in items.iter().enumerate() {
            let path = format!("/trackers/{i}");
            if let Some(t) = inspect_tracker(&path, item, &limits, &mut out) {
                if !seen.insert(t.id.clone()) {
                    out.push(duplicate(&path, &t.id));
                }
                trackers.push(t);
            }
        }
    }
    let aggregate = obj
        .get("aggregate")
        .and_then(|a| inspect_aggregate(a, &limits, &mut out));
    let payload = items.map(|_| ProgressPayload {
        trackers,
        aggregate,
    });
    (payload, out)
}

const TRACKER_KEYS: [&str; 7] = [
    "id",
    "progress",
    "total",
    "message",
    "status",
    "startedAt",
    "updatedAt",
];

fn inspect_tracker(
    path: &str,
    item: &Value,
    limits: &ProgressLimits,
    out: &mut Vec<ProgressViolation>,
) -> Option<ProgressTracker> {
    let Some(obj) = item.as_object() else {
        out.push(type_error(path, "a tracker", "an object", item));
        return None;
    };
    for key in obj.keys() {
        if !TRACKER_KEYS.contains(&key.as_str()) {
            out.push(unknown_key(path, key, "a tracker"));
        }
    }
    let id = match obj.get("id") {
        None => {
            out.push(ProgressViolation::new(
                format!("{path}/id"),
                ProgressRule::Required,
                "a tracker needs an `id`",
            ));
            None
        }
        Some(Value::String(s)) => {
            check_id(path, s, limits, out);
            Some(s.clone())
        }
        Some(other) => {
            out.push(type_error(&format!("{path}/id"), "id", "a string", other));
            None
        }
    };
    let progress = field::<f64>(path, obj, "progress", out);
    let total = field::<f64>(path, obj, "total", out);
    check_numbers(path, progress, total, true, out);
    let message = field::<String>(path, obj, "message", out);
    if let Some(m) = &message {
        check_message(path, m, limits, out);
    }
    let status = parsed_field(
        path,
        obj,
        "status",
        TrackerStatus::parse,
        ProgressRule::Enum,
        "one of running, completed, failed",
        out,
    );
    let started_at = timestamp_field(path, obj, "startedAt", out);
    let updated_at = timestamp_field(path, obj, "updatedAt", out);
    Some(ProgressTracker {
        id: id?,
        progress,
        total,
        message,
        status,
        started_at,
        updated_at,
    })
}

fn inspect_aggregate(
    value: &Value,
    limits: &ProgressLimits,
    out: &mut Vec<ProgressViolation>,
) -> Option<ProgressAggregate> {
    let path = "/aggregate";
    let Some(obj) = value.as_object() else {
        out.push(type_error(path, "aggregate", "an object", value));
        return None;
    };
    for key in obj.keys() {
        if !["progress", "total", "message"].contains(&key.as_str()) {
            out.push(unknown_key(path, key, "the aggregate"));
        }
    }
    let progress = field::<f64>(path, obj, "progress", out);
    let total = field::<f64>(path, obj, "total", out);
    let message = field::<String>(path, obj, "message", out);
    if let Some(m) = &message {
        check_message(path, m, limits, out);
    }
    Some(ProgressAggregate {
        progress,
        total,
        message,
    })
}

/// A JSON type a payload field may be required to have.
trait FieldType: Sized {
    /// How a type error names it, e.g. `a number`.
    const NAME: &'static str;
    /// The value as this type, `None` when it is another JSON type.
    fn read(value: &Value) -> Option<Self>;
}

impl FieldType for f64 {
    const NAME: &'static str = "a number";
    fn read(value: &Value) -> Option<Self> {
        value.as_f64()
    }
}

impl FieldType for String {
    const NAME: &'static str = "a string";
    fn read(value: &Value) -> Option<Self> {
        value.as_str().map(str::to_owned)
    }
}

/// `obj[key]` as a `T`; `None` when the key is absent or holds another JSON
/// type, which is recorded as a type error.
fn field<T: FieldType>(
    path: &str,
    obj: &Map<String, Value>,
    key: &str,
    out: &mut Vec<ProgressViolation>,
) -> Option<T> {
    let value = obj.get(key)?;
    let typed = T::read(value);
    if typed.is_none() {
        out.push(type_error(&format!("{path}/{key}"), key, T::NAME, value));
    }
    typed
}

fn timestamp_field(
    path: &str,
    obj: &Map<String, Value>,
    key: &str,
    out: &mut Vec<ProgressViolation>,
) -> Option<DateTime<Utc>> {
    parsed_field(
        path,
        obj,
        key,
        parse_rfc3339,
        ProgressRule::DateTime,
        "an RFC 3339 date-time",
        out,
    )
}

/// `obj[key]`, a string, as `parse` reads it; a string it refuses is
/// recorded as breaking `rule` (`expected` says what the string should be).
fn parsed_field<T>(
    path: &str,
    obj: &Map<String, Value>,
    key: &str,
    parse: impl FnOnce(&str) -> Option<T>,
    rule: ProgressRule,
    expected: &str,
    out: &mut Vec<ProgressViolation>,
) -> Option<T> {
    let s = field::<String>(path, obj, key, out)?;
    let parsed = parse(&s);
    if parsed.is_none() {
        out.push(ProgressViolation::new(
            format!("{path}/{key}"),
            rule,
            format!("{key} {s:?} is not {expected}"),
        ));
    }
    parsed
}

/// Parses an RFC 3339 `date-time` strictly: `YYYY-MM-DDTHH:MM:SS[.frac]`
/// followed by `Z` or `±HH:MM` (`T` and `Z` may be lowercase), as JSON
/// Schema's `date-time` format requires.
pub fn parse_rfc3339(s: &str) -> Option<DateTime<Utc>> {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let shape_ok = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape_ok {
        return None;
    }
    let mut i = 19;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    let offset_ok = match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            i + 6 == b.len() && digits(i + 1..i + 3) && b[i + 3] == b':' && digits(i + 4..i + 6)
        }
        _ => false,
    };
    if !offset_ok {
        return None;
    }
    serde_util::parse_timestamp(s).ok()
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn type_error(path: &str, what: &str, expected: &str, got: &Value) -> ProgressViolation {
    ProgressViolation::new(
        path,
        ProgressRule::Type,
        format!("{what} must be {expected}, got {}", json_kind(got)),
    )
}

fn unknown_key(path: &str, key: &str, owner: &str) -> ProgressViolation {
    ProgressViolation::new(
        format!("{path}/{}", pointer_escape(key)),
        ProgressRule::AdditionalProperties,
        format!("unknown key {key:?} in {owner}"),
    )
}

/// Escapes one JSON Pointer reference token (RFC 6901).
fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

/// Serializes a number as an integer when it is whole (and exactly
/// representable), so `50.0` goes on the wire as `50`.
fn serialize_number<S: Serializer>(v: f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() && v.fract() == 0.0 && v.abs() <= MAX_EXACT_INTEGER {
        // Exact: a whole number within ±2^53 fits in an i64 without loss.
        s.serialize_i64(v as i64)
    } else {
        s.serialize_f64(v)
    }
}

fn opt_number<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => serialize_number(*v, s),
        None => s.serialize_none(),
    }
}

fn number_value(v: f64) -> Value {
    serialize_number(v, serde_json::value::Serializer).unwrap_or(Value::Null)
}

/// Formats an amount for humans: `50`, `2.5`.
pub fn format_amount(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() <= MAX_EXACT_INTEGER {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

// ---------------------------------------------------------------------------
// The client-side reducer
// ---------------------------------------------------------------------------

/// How many violations a reducer keeps (it counts all of them).
const MAX_KEPT_VIOLATIONS: usize = 256;
/// How many finished trackers a reducer remembers.
const MAX_FINISHED: usize = 1024;

/// Folds one task's stream items into its current progress: the active
/// trackers, the finished ones, and the latest aggregate.
///
/// - Payloads are **snapshots**: a tracker missing from a later payload is
///   no longer active and moves to [`finished`](Self::finished) with its
///   last known values (its `status` tells whether it completed, failed, or
///   just disappeared). A tracker whose status is `completed`/`failed` goes
///   there at once.
/// - When the task reaches a terminal state, every active tracker moves to
///   `finished`: no work is active in a finished task.
/// - It reads `TaskStatusUpdateEvent.metadata[URI]` and, for `Task` items (or
///   updates without event metadata), `status.message.metadata[URI]`, then
///   `Task.metadata[URI]`.
/// - It is **tolerant**: an invalid payload from another server is applied
///   as far as it can be read, and what was wrong is recorded in
///   [`violations`](Self::violations). An aggregate that does not add up is
///   advisory and never recorded.
///
/// Use one reducer per task.
///
/// ```
/// use switchboard_protocol::progress::*;
/// let mut r = ProgressReducer::new();
/// let p = ProgressPayload::new(vec![ProgressTracker::new("a").with_progress(1.0)]);
/// r.apply_metadata(&p.to_metadata());
/// assert_eq!(r.active()[0].id, "a");
/// r.apply_metadata(&ProgressPayload::new(vec![]).to_metadata());
/// assert!(r.active().is_empty());
/// assert_eq!(r.finished()[0].id, "a");
/// ```
#[derive(Debug, Clone)]
pub struct ProgressReducer {
    limits: ProgressLimits,
    active: Vec<ProgressTracker>,
    finished: Vec<ProgressTracker>,
    aggregate: Option<ProgressAggregate>,
    violations: Vec<ProgressViolation>,
    violation_count: u64,
    snapshots: u64,
}

impl Default for ProgressReducer {
    fn default() -> Self {
        Self::new()
    }
}

impl ProgressReducer {
    /// A reducer that checks payloads against the schema's hard caps.
    pub fn new() -> Self {
        Self::with_limits(ProgressLimits::schema_caps())
    }

    /// A reducer that also checks the limits the agent declared.
    pub fn with_limits(limits: ProgressLimits) -> Self {
        ProgressReducer {
            limits,
            active: Vec::new(),
            finished: Vec::new(),
            aggregate: None,
            violations: Vec::new(),
            violation_count: 0,
            snapshots: 0,
        }
    }

    /// Folds one stream item (or push payload). Returns `true` when it
    /// carried a progress entry, valid or not.
    pub fn apply(&mut self, item: &StreamResponse) -> bool {
        match item {
            StreamResponse::Task(t) => self.apply_task(t),
            StreamResponse::StatusUpdate(u) => self.apply_status_update(u),
            _ => false,
        }
    }

    /// Folds a task snapshot (GetTask, the first item of a stream, a push).
    pub fn apply_task(&mut self, task: &Task) -> bool {
        let message = task.status.message.as_ref();
        self.apply_first_entry(
            message.and_then(|m| m.metadata.as_ref()),
            task.metadata.as_ref(),
            task.status.state,
        )
    }

    /// Folds a status update.
    pub fn apply_status_update(&mut self, update: &TaskStatusUpdateEvent) -> bool {
        let message = update.status.message.as_ref();
        self.apply_first_entry(
            update.metadata.as_ref(),
            message.and_then(|m| m.metadata.as_ref()),
            update.status.state,
        )
    }

    /// Folds the progress entry of `first`, or of `second` when `first` has
    /// none (a task and its status message may each carry one; which one
    /// wins depends on the item), then ends every tracker if `state` is
    /// terminal.
    fn apply_first_entry(
        &mut self,
        first: Option<&Metadata>,
        second: Option<&Metadata>,
        state: TaskState,
    ) -> bool {
        let has_entry = |md: &&Metadata| md.contains_key(TASK_PROGRESS_URI);
        let found = first
            .filter(has_entry)
            .or(second.filter(has_entry))
            .is_some_and(|md| self.apply_metadata(md));
        if state.is_terminal() {
            self.end_all();
        }
        found
    }

    /// Folds the progress entry of a metadata map, if it has one.
    pub fn apply_metadata(&mut self, metadata: &Metadata) -> bool {
        let Some(read) = ProgressPayload::from_metadata_with_limits(metadata, &self.limits) else {
            return false;
        };
        match read {
            Ok(p) => self.apply_payload(p),
            Err(InvalidProgress {
                violations,
                payload,
            }) => {
                self.record(violations);
                if let Some(p) = payload {
                    self.fold(p);
                }
            }
        }
        true
    }

    /// Folds an already decoded payload (it is validated again).
    pub fn apply_payload(&mut self, payload: ProgressPayload) {
        if let Err(v) = validate(&payload, &self.limits) {
            self.record(v);
        }
        self.fold(payload);
    }

    fn record(&mut self, violations: Vec<ProgressViolation>) {
        self.violation_count += violations.len() as u64;
        let room = MAX_KEPT_VIOLATIONS.saturating_sub(self.violations.len());
        self.violations.extend(violations.into_iter().take(room));
    }

    fn fold(&mut self, payload: ProgressPayload) {
        self.snapshots += 1;
        let mut regressions = Vec::new();
        for (i, t) in payload.trackers.iter().enumerate() {
            let before = self.tracker(&t.id).and_then(|p| p.progress);
            if let Some(v) = monotonic_violation(i, t, before) {
                regressions.push(v);
            }
        }
        self.record(regressions);

        let mut next_active: Vec<ProgressTracker> = Vec::new();
        for t in payload.trackers {
            self.finished.retain(|f| f.id != t.id);
            // A repeated id (already reported) keeps its last occurrence.
            next_active.retain(|a| a.id != t.id);
            if t.is_terminal() {
                self.finished.push(t);
            } else {
                next_active.push(t);
            }
        }
        for gone in std::mem::take(&mut self.active) {
            let still_there = next_active.iter().any(|a| a.id == gone.id)
                || self.finished.iter().any(|f| f.id == gone.id);
            if !still_there {
                self.finished.push(gone);
            }
        }
        self.active = next_active;
        self.aggregate = payload.aggregate;
        self.trim_finished();
    }

    fn end_all(&mut self) {
        let ended = std::mem::take(&mut self.active);
        self.finished.extend(ended);
        self.trim_finished();
    }

    fn trim_finished(&mut self) {
        if self.finished.len() > MAX_FINISHED {
            let excess = self.finished.len() - MAX_FINISHED;
            self.finished.drain(..excess);
        }
    }

    /// The trackers of the latest snapshot that are still running, in the
    /// agent's order.
    pub fn active(&self) -> &[ProgressTracker] {
        &self.active
    }

    /// Trackers that completed, failed or disappeared, oldest first, with
    /// their last known values.
    pub fn finished(&self) -> &[ProgressTracker] {
        &self.finished
    }

    /// The last known state of a tracker, active or finished.
    pub fn tracker(&self, id: &str) -> Option<&ProgressTracker> {
        self.active
            .iter()
            .find(|t| t.id == id)
            .or_else(|| self.finished.iter().rev().find(|t| t.id == id))
    }

    /// The aggregate of the latest snapshot, as the agent sent it (advisory).
    pub fn aggregate(&self) -> Option<&ProgressAggregate> {
        self.aggregate.as_ref()
    }

    /// An aggregate computed from every tracker seen (active and finished).
    pub fn derived_aggregate(&self) -> ProgressAggregate {
        ProgressAggregate::from_trackers(self.finished.iter().chain(&self.active))
    }

    /// The first violations seen (up to 256 are kept).
    pub fn violations(&self) -> &[ProgressViolation] {
        &self.violations
    }

    /// How many violations were seen in total.
    pub fn violation_count(&self) -> u64 {
        self.violation_count
    }

    /// How many snapshots were folded.
    pub fn snapshots(&self) -> u64 {
        self.snapshots
    }

    /// `true` when no progress was seen at all.
    pub fn is_empty(&self) -> bool {
        self.snapshots == 0
    }
}
