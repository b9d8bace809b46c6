//! The AG-UI state document of a converted stream, kept incrementally.
//!
//! A client holds a copy of the state: the run's last `STATE_SNAPSHOT`
//! with every `STATE_DELTA` since applied to it. The converter must send
//! exactly what brings that copy up to date. Keeping a second copy of the
//! document and diffing the two after every A2A event would clone and walk
//! the whole tree each time — quadratic in the size of a chunked artifact.
//! Instead, [`StateDoc`] records the RFC 6902 operations *as it changes*:
//!
//! - an appended chunk is one `add` per new part (at its index);
//! - a new artifact is one `add` of the whole entry; a replaced one, or a
//!   new status, is diffed against only its own old value
//!   ([`patch::diff_at`]), so nothing is sent when it did not change;
//! - while the client has no copy (a run's start, an interrupt) nothing is
//!   recorded: the next emission is a snapshot anyway.
//!
//! Each operation is made against the document as it was at that moment,
//! so applied in order to the client's copy they give the document now.
//!
//! The recording itself ([`Changes`]) is shared with the view projection's
//! document ([`crate::view`]); [`Document`] is the one of the two a
//! converter keeps.
//!
//! The document's fixed shape (the ids, the status's three texts, an
//! artifact's entry) is kept in plain fields, not as JSON values: its
//! strings are compared and replaced in place, and JSON is made only for
//! what goes out (a snapshot, an operation's value). Only the artifacts'
//! parts, which are any A2A part, are kept as JSON.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::convert::artifact_pointer;
use crate::events::{EventKind, PatchOp, StateDelta, StateSnapshot};
use crate::patch;
use crate::view::ViewDoc;

/// `/a2a/status`'s keys, in the document's (sorted) order, and their paths.
const STATUS_KEYS: [&str; 3] = ["message", "state", "timestamp"];
const STATUS_PATHS: [&str; 3] = [
    "/a2a/status/message",
    "/a2a/status/state",
    "/a2a/status/timestamp",
];

/// The texts of `/a2a/status`, in [`STATUS_KEYS`] order; `None` leaves a key out.
type Status = [Option<String>; 3];

/// One artifact's entry under `/a2a/artifacts`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArtifactEntry {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    /// A2A 1.0 JSON parts, appended to as chunks arrive.
    pub(crate) parts: Vec<Value>,
    pub(crate) last_chunk: bool,
}

impl ArtifactEntry {
    /// The entry as it is in the document.
    pub(crate) fn to_value(&self) -> Value {
        let mut entry = Map::new();
        entry.insert("parts".into(), Value::Array(self.parts.clone()));
        entry.insert("lastChunk".into(), Value::Bool(self.last_chunk));
        if let Some(n) = &self.name {
            entry.insert("name".into(), Value::from(n.as_str()));
        }
        if let Some(d) = &self.description {
            entry.insert("description".into(), Value::from(d.as_str()));
        }
        Value::Object(entry)
    }
}

/// The state document (`{"a2a": {…, "artifacts": {…}}}`, see
/// [`crate::convert`]) and the operations the client has yet to get.
#[derive(Debug, Default)]
pub(crate) struct StateDoc {
    /// `/a2a/taskId` and `/a2a/contextId`, once a run started.
    ids: Option<(String, String)>,
    /// `/a2a/status`, once there is one.
    status: Option<Status>,
    /// `/a2a/artifacts`: artifact id → entry.
    artifacts: BTreeMap<String, ArtifactEntry>,
    /// What the client has yet to get.
    changes: Changes,
}

impl StateDoc {
    /// The whole document as it is now.
    pub(crate) fn snapshot(&self) -> Value {
        let mut artifacts = Map::new();
        for (id, entry) in &self.artifacts {
            artifacts.insert(id.clone(), entry.to_value());
        }
        let mut a2a = Map::new();
        a2a.insert("artifacts".into(), Value::Object(artifacts));
        if let Some((task_id, context_id)) = &self.ids {
            a2a.insert("taskId".into(), Value::from(task_id.as_str()));
            a2a.insert("contextId".into(), Value::from(context_id.as_str()));
        }
        if let Some(status) = &self.status {
            a2a.insert("status".into(), status_value(status));
        }
        let mut doc = Map::new();
        doc.insert("a2a".into(), Value::Object(a2a));
        Value::Object(doc)
    }

    /// Sets `/a2a/taskId` and `/a2a/contextId`.
    pub(crate) fn set_ids(&mut self, task_id: &str, context_id: &str) {
        let recording = self.changes.recording();
        match &mut self.ids {
            Some((task, context)) => {
                for (path, old, new) in [
                    ("/a2a/taskId", task, task_id),
                    ("/a2a/contextId", context, context_id),
                ] {
                    if old.as_str() != new {
                        if recording {
                            self.changes.push(PatchOp::replace(path, Value::from(new)));
                        }
                        old.clear();
                        old.push_str(new);
                    }
                }
            }
            None => {
                if recording {
                    self.changes
                        .push(PatchOp::add("/a2a/taskId", Value::from(task_id)));
                    self.changes
                        .push(PatchOp::add("/a2a/contextId", Value::from(context_id)));
                }
                self.ids = Some((task_id.to_owned(), context_id.to_owned()));
            }
        }
    }

    /// Sets `/a2a/status` to the object of its three texts (a `None` text
    /// leaves its key out).
    ///
    /// The operations are those of diffing the new object against the old
    /// one ([`patch::diff_at`]: the old keys in order, replaced or removed,
    /// then the new keys, added), but a text is copied only when it
    /// changed: a status update mostly changes the state alone.
    pub(crate) fn set_status(
        &mut self,
        message: Option<&str>,
        state: &str,
        timestamp: Option<&str>,
    ) {
        let new = [message, Some(state), timestamp];
        let recording = self.changes.recording();
        let Some(old) = &mut self.status else {
            let status: Status = new.map(|text| text.map(str::to_owned));
            if recording {
                self.changes
                    .push(PatchOp::add("/a2a/status", status_value(&status)));
            }
            self.status = Some(status);
            return;
        };
        let had: [bool; 3] = std::array::from_fn(|i| old[i].is_some());
        for ((slot, new), path) in old.iter_mut().zip(new).zip(STATUS_PATHS) {
            match (slot.as_mut(), new) {
                (Some(o), Some(n)) if o.as_str() == n => {}
                (Some(o), Some(n)) => {
                    if recording {
                        self.changes.push(PatchOp::replace(path, Value::from(n)));
                    }
                    o.clear();
                    o.push_str(n);
                }
                (Some(_), None) => {
                    if recording {
                        self.changes.push(PatchOp::remove(path));
                    }
                    *slot = None;
                }
                (None, _) => {}
            }
        }
        for (((slot, new), had), path) in old.iter_mut().zip(new).zip(had).zip(STATUS_PATHS) {
            if let (false, Some(n)) = (had, new) {
                if recording {
                    self.changes.push(PatchOp::add(path, Value::from(n)));
                }
                *slot = Some(n.to_owned());
            }
        }
    }

    /// Sets an artifact's whole entry (a new artifact, or one replaced).
    pub(crate) fn put_artifact(&mut self, id: &str, entry: ArtifactEntry) {
        let recording = self.changes.recording();
        match self.artifacts.get_mut(id) {
            Some(old) => {
                if recording {
                    let path = artifact_pointer(id);
                    patch::diff_at(
                        &path,
                        &old.to_value(),
                        &entry.to_value(),
                        self.changes.ops_mut(),
                    );
                }
                *old = entry;
            }
            None => {
                if recording {
                    self.changes
                        .push(PatchOp::add(artifact_pointer(id), entry.to_value()));
                }
                self.artifacts.insert(id.to_owned(), entry);
            }
        }
    }

    /// Appends `parts` to a known artifact's entry and sets its `lastChunk`
    /// (nothing changes when there is no such entry).
    pub(crate) fn append_parts(&mut self, id: &str, parts: Vec<Value>, last_chunk: bool) {
        let recording = self.changes.recording();
        let Some(entry) = self.artifacts.get_mut(id) else {
            return;
        };
        let at = artifact_pointer(id);
        if recording {
            let first = entry.parts.len();
            for (i, p) in parts.iter().enumerate() {
                self.changes
                    .push(PatchOp::add(format!("{at}/parts/{}", first + i), p.clone()));
            }
        }
        entry.parts.extend(parts);
        if entry.last_chunk != last_chunk {
            if recording {
                self.changes.push(PatchOp::replace(
                    format!("{at}/lastChunk"),
                    Value::Bool(last_chunk),
                ));
            }
            entry.last_chunk = last_chunk;
        }
    }
}

/// The operations a client has yet to get of a document, recorded as the
/// document changes; shared by both projections ([`StateDoc`] and
/// [`crate::view::ViewDoc`]).
#[derive(Debug, Default)]
pub(crate) struct Changes {
    /// A snapshot went out this run: changes go out as deltas.
    client_has_copy: bool,
    /// Changes since the client's copy, as operations on it.
    ops: Vec<PatchOp>,
}

impl Changes {
    /// `true` when changes must be recorded (the client holds a copy); while
    /// it does not, the next emission is a snapshot anyway.
    pub(crate) fn recording(&self) -> bool {
        self.client_has_copy
    }

    /// Records one operation (callers check [`Changes::recording`] first,
    /// so no value is cloned for nothing).
    pub(crate) fn push(&mut self, op: PatchOp) {
        self.ops.push(op);
    }

    /// The client's copy is gone (or must be replaced).
    pub(crate) fn forget_client_copy(&mut self) {
        self.client_has_copy = false;
        self.ops.clear();
    }

    /// The snapshot that gives the client `doc` as its copy.
    pub(crate) fn snapshot(&mut self, doc: Value) -> EventKind {
        self.client_has_copy = true;
        self.ops.clear();
        StateSnapshot {
            snapshot: doc,
            subagent_run_id: None,
        }
        .into()
    }

    /// The delta of what changed since the client's copy, or nothing when
    /// nothing did.
    pub(crate) fn delta(&mut self) -> Option<EventKind> {
        if self.ops.is_empty() {
            return None;
        }
        Some(
            StateDelta {
                delta: std::mem::take(&mut self.ops),
                subagent_run_id: None,
            }
            .into(),
        )
    }

    /// Where [`patch::diff_at`] appends its operations.
    pub(crate) fn ops_mut(&mut self) -> &mut Vec<PatchOp> {
        &mut self.ops
    }
}

/// The status as it is in the document: an object of the texts it has.
fn status_value(status: &Status) -> Value {
    let mut object = Map::new();
    for (key, text) in STATUS_KEYS.iter().zip(status) {
        if let Some(text) = text {
            object.insert((*key).to_owned(), Value::from(text.as_str()));
        }
    }
    Value::Object(object)
}

/// The state document of a converter's projection
/// ([`crate::convert::Projection`]): what the converter changes, said once
/// for both. The view's own changes (interrupts, config) are not part of
/// the `{"a2a": …}` document and do nothing there.
#[derive(Debug)]
pub(crate) enum Document {
    /// `{"a2a": …}`, one task.
    A2a(StateDoc),
    /// `{…, "view": …}`, the bridge's view.
    View(ViewDoc),
}

impl Document {
    pub(crate) fn snapshot(&self) -> Value {
        match self {
            Document::A2a(d) => d.snapshot(),
            Document::View(d) => d.snapshot(),
        }
    }

    /// What the client has yet to get of the document.
    fn changes(&mut self) -> &mut Changes {
        match self {
            Document::A2a(d) => &mut d.changes,
            Document::View(d) => &mut d.changes,
        }
    }

    /// The client's copy is gone (or must be replaced): the next
    /// [`Document::sync`] sends a snapshot.
    pub(crate) fn forget_client_copy(&mut self) {
        self.changes().forget_client_copy();
    }

    pub(crate) fn set_ids(&mut self, task_id: &str, context_id: &str) {
        match self {
            Document::A2a(d) => d.set_ids(task_id, context_id),
            Document::View(d) => d.set_ids(task_id, context_id),
        }
    }

    pub(crate) fn set_status(
        &mut self,
        message: Option<&str>,
        state: &str,
        timestamp: Option<&str>,
    ) {
        match self {
            Document::A2a(d) => d.set_status(message, state, timestamp),
            Document::View(d) => d.set_status(message, state, timestamp),
        }
    }

    pub(crate) fn put_artifact(&mut self, id: &str, entry: ArtifactEntry) {
        match self {
            Document::A2a(d) => d.put_artifact(id, entry),
            Document::View(d) => d.put_artifact(id, entry),
        }
    }

    pub(crate) fn append_parts(&mut self, id: &str, parts: Vec<Value>, last_chunk: bool) {
        match self {
            Document::A2a(d) => d.append_parts(id, parts, last_chunk),
            Document::View(d) => d.append_parts(id, parts, last_chunk),
        }
    }

    /// What brings the client up to date: a snapshot when it has no copy,
    /// else a delta of what changed, or nothing when nothing did.
    pub(crate) fn sync(&mut self) -> Option<EventKind> {
        if self.changes().recording() {
            return self.changes().delta();
        }
        let doc = self.snapshot();
        Some(self.changes().snapshot(doc))
    }

    /// The view, for the changes only it has.
    pub(crate) fn view(&mut self) -> Option<&mut ViewDoc> {
        match self {
            Document::A2a(_) => None,
            Document::View(d) => Some(d),
        }
    }
}
