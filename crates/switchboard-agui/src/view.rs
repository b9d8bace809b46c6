//! The view projection: the state document a bridge run shows an AG-UI
//! client (ADR 0003, Decision 4 of issue 20), kept incrementally.
//!
//! The A2A serve-side opt-in describes *one task* under `/a2a`
//! ([`crate::convert`]). A bridge run is one turn of a conversation the
//! client keeps, and AG-UI clients send their state back on every run, so
//! the view is a document that lives across runs:
//!
//! ```json
//! {"…the client's own keys…": "kept as they are",
//!  "view": {
//!    "contextId": "…",
//!    "tasksById": {"<taskId>": {"taskId", "contextId", "state", "message"?, "timestamp"?}},
//!    "pendingInterrupts": {"<interruptId>": {"interruptId", "taskId", "contextId",
//!                                            "reason", "formId"?}},
//!    "artifacts": {"<artifactId>": {"taskId", "name"?, "description"?,
//!                                   "parts": [<A2A parts>], "lastChunk"}},
//!    "config": {…},
//!    "state": {…the agent's own state…}}}
//! ```
//!
//! A converter in [`crate::convert::Projection::View`] starts from the
//! client's state (`RunAgentInput.state`): its keys other than `view` are
//! kept untouched, and of its `view` the five maps and `contextId` are
//! taken over (so tasks, artifacts and config of earlier runs stay, and a
//! resume run can remove the interrupt it answers); anything else under
//! `view` is the bridge's and is dropped. The first `STATE_SNAPSHOT` of a
//! run therefore never erases what the UI keeps in its state.
//!
//! Changes are recorded as operations when they happen (like the `/a2a`
//! document), never by diffing the whole document: one
//! `add` per appended part, a diff of only the one entry that changed (a
//! task entry is five short strings), one `add`/`replace` per config key,
//! one `add`/`remove` per interrupt.
//!
//! - `contextId` is set once the stream names one, so the next run can
//!   continue the conversation (ADR 0001).
//! - A task entry is its status, flattened: `state` is the short label
//!   (`input-required`, …), `message` the status message's text.
//! - An interrupt is pending from the input-required/auth-required status
//!   that raised it until the task's status moves on (or a resume run
//!   answers it).
//! - `config` is what an Engram agent reported (status-update or artifact
//!   metadata under [`ENGRAM_URI`], an object), merged key by key: a key
//!   is added or replaced, never removed.
//! - `state` is the agent's own state: what it reported under
//!   [`crate::hints::AGENT_STATE`] (`agui_state`, an object) in the metadata
//!   of a status update, its message or an artifact update, merged key by
//!   key like `config`, each changed key sent as the diff of its old value
//!   (so an agent that updates one entry of a list while it works — a plan
//!   whose steps get done — gives the UI a `STATE_DELTA` of that entry).
//!   The UI's own keys (everything but `view`) are what the bridge
//!   forwards to the agent (`metadata.agui.state`, when told to), so each
//!   side edits its own part of one shared document.

use serde_json::{Map, Value};

use crate::events::PatchOp;
use crate::patch::{self, escape_token};
use crate::state::{ArtifactEntry, Changes};

/// The Engram extension's URI (ADR 0002): the key of the config payload in
/// A2A metadata, and the extension a config message activates.
pub const ENGRAM_URI: &str = "urn:agui:engram:v1";

/// The view's maps, in the document's (sorted) order.
const MAPS: [&str; 5] = [
    "artifacts",
    "config",
    "pendingInterrupts",
    "state",
    "tasksById",
];

/// The view document and the operations the client has yet to get.
#[derive(Debug, Default)]
pub(crate) struct ViewDoc {
    /// The client's state's keys other than `view`.
    others: Map<String, Value>,
    /// `/view/contextId`, once known.
    context_id: Option<String>,
    /// `/view/artifacts`: artifact id → entry (earlier runs' as the client sent them).
    artifacts: Map<String, Value>,
    /// `/view/config`.
    config: Map<String, Value>,
    /// `/view/pendingInterrupts`: interrupt id → entry.
    pending_interrupts: Map<String, Value>,
    /// `/view/state`: the agent's own state.
    agent_state: Map<String, Value>,
    /// `/view/tasksById`: task id → entry.
    tasks: Map<String, Value>,
    /// The task the stream is about and its context.
    current: Option<(String, String)>,
    /// What the client has yet to get ([`crate::state::Document::sync`]).
    pub(crate) changes: Changes,
}

fn pointer(map: &str, key: &str) -> String {
    format!("/view/{map}/{}", escape_token(key))
}

impl ViewDoc {
    /// A view that starts from the client's state (see the module docs).
    pub(crate) fn from_client(state: Option<&Value>) -> ViewDoc {
        let mut doc = ViewDoc::default();
        let Some(Value::Object(state)) = state else {
            return doc;
        };
        let mut others = state.clone();
        if let Some(Value::Object(mut view)) = others.remove("view") {
            doc.context_id = match view.remove("contextId") {
                Some(Value::String(c)) => Some(c),
                _ => None,
            };
            for (name, map) in MAPS.into_iter().zip([
                &mut doc.artifacts,
                &mut doc.config,
                &mut doc.pending_interrupts,
                &mut doc.agent_state,
                &mut doc.tasks,
            ]) {
                if let Some(Value::Object(m)) = view.remove(name) {
                    *map = m;
                }
            }
        }
        doc.others = others;
        doc
    }

    /// The whole document as it is now.
    pub(crate) fn snapshot(&self) -> Value {
        let mut view = Map::new();
        if let Some(c) = &self.context_id {
            view.insert("contextId".into(), Value::from(c.as_str()));
        }
        for (name, map) in MAPS.into_iter().zip([
            &self.artifacts,
            &self.config,
            &self.pending_interrupts,
            &self.agent_state,
            &self.tasks,
        ]) {
            view.insert(name.into(), Value::Object(map.clone()));
        }
        let mut doc = self.others.clone();
        doc.insert("view".into(), Value::Object(view));
        Value::Object(doc)
    }

    /// The stream is about `task_id` in `context_id`: sets `/view/contextId`.
    pub(crate) fn set_ids(&mut self, task_id: &str, context_id: &str) {
        self.current = Some((task_id.to_owned(), context_id.to_owned()));
        if context_id.is_empty() || self.context_id.as_deref() == Some(context_id) {
            return;
        }
        if self.changes.recording() {
            let op = match self.context_id {
                Some(_) => PatchOp::replace("/view/contextId", Value::from(context_id)),
                None => PatchOp::add("/view/contextId", Value::from(context_id)),
            };
            self.changes.push(op);
        }
        self.context_id = Some(context_id.to_owned());
    }

    /// Sets the current task's entry in `/view/tasksById` from its status.
    pub(crate) fn set_status(
        &mut self,
        message: Option<&str>,
        state: &str,
        timestamp: Option<&str>,
    ) {
        let Some((task_id, context_id)) = &self.current else {
            return;
        };
        let mut entry = Map::new();
        entry.insert("taskId".into(), Value::from(task_id.as_str()));
        entry.insert("contextId".into(), Value::from(context_id.as_str()));
        entry.insert("state".into(), Value::from(state));
        if let Some(m) = message {
            entry.insert("message".into(), Value::from(m));
        }
        if let Some(t) = timestamp {
            entry.insert("timestamp".into(), Value::from(t));
        }
        let task_id = task_id.clone();
        put(
            &mut self.tasks,
            &mut self.changes,
            "tasksById",
            &task_id,
            Value::Object(entry),
        );
    }

    /// Sets an artifact's whole entry (a new artifact, or one replaced).
    pub(crate) fn put_artifact(&mut self, id: &str, entry: ArtifactEntry) {
        let mut value = entry.to_value();
        if let (Value::Object(v), Some((task_id, _))) = (&mut value, &self.current) {
            v.insert("taskId".into(), Value::from(task_id.as_str()));
        }
        put(
            &mut self.artifacts,
            &mut self.changes,
            "artifacts",
            id,
            value,
        );
    }

    /// Appends `parts` to a known artifact's entry and sets its `lastChunk`
    /// (nothing changes when there is no such entry).
    pub(crate) fn append_parts(&mut self, id: &str, parts: Vec<Value>, last_chunk: bool) {
        let recording = self.changes.recording();
        let Some(Value::Object(entry)) = self.artifacts.get_mut(id) else {
            return;
        };
        let at = pointer("artifacts", id);
        if let Some(Value::Array(old)) = entry.get_mut("parts") {
            if recording {
                for (i, p) in parts.iter().enumerate() {
                    self.changes.push(PatchOp::add(
                        format!("{at}/parts/{}", old.len() + i),
                        p.clone(),
                    ));
                }
            }
            old.extend(parts);
        }
        if entry.get("lastChunk") != Some(&Value::Bool(last_chunk)) {
            if recording {
                let path = format!("{at}/lastChunk");
                self.changes.push(if entry.contains_key("lastChunk") {
                    PatchOp::replace(path, Value::Bool(last_chunk))
                } else {
                    PatchOp::add(path, Value::Bool(last_chunk))
                });
            }
            entry.insert("lastChunk".into(), Value::Bool(last_chunk));
        }
    }

    /// Records a pending interrupt of the current task.
    pub(crate) fn add_interrupt(&mut self, id: &str, reason: &str, form_id: Option<&str>) {
        let Some((task_id, context_id)) = &self.current else {
            return;
        };
        let mut entry = Map::new();
        entry.insert("interruptId".into(), Value::from(id));
        entry.insert("taskId".into(), Value::from(task_id.as_str()));
        entry.insert("contextId".into(), Value::from(context_id.as_str()));
        entry.insert("reason".into(), Value::from(reason));
        if let Some(f) = form_id {
            entry.insert("formId".into(), Value::from(f));
        }
        put(
            &mut self.pending_interrupts,
            &mut self.changes,
            "pendingInterrupts",
            id,
            Value::Object(entry),
        );
    }

    /// Removes the pending interrupt `id` (answered by a resume run).
    pub(crate) fn remove_interrupt(&mut self, id: &str) {
        if self.pending_interrupts.remove(id).is_some() && self.changes.recording() {
            self.changes
                .push(PatchOp::remove(pointer("pendingInterrupts", id)));
        }
    }

    /// Removes the interrupts of `task_id`: its status moved on.
    pub(crate) fn clear_interrupts_of(&mut self, task_id: &str) {
        let ids: Vec<String> = self
            .pending_interrupts
            .iter()
            .filter(|(_, e)| e.get("taskId").and_then(Value::as_str) == Some(task_id))
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            self.remove_interrupt(&id);
        }
    }

    /// Merges an Engram config payload into `/view/config`, key by key.
    pub(crate) fn merge_config(&mut self, payload: &Map<String, Value>) {
        for (key, value) in payload {
            if self.config.get(key) == Some(value) {
                continue;
            }
            if self.changes.recording() {
                let path = pointer("config", key);
                self.changes.push(if self.config.contains_key(key) {
                    PatchOp::replace(path, value.clone())
                } else {
                    PatchOp::add(path, value.clone())
                });
            }
            self.config.insert(key.clone(), value.clone());
        }
    }
}

impl ViewDoc {
    /// Merges the state an agent reported into `/view/state`, key by key:
    /// a new key is added, a changed one diffed against its old value.
    pub(crate) fn merge_agent_state(&mut self, reported: &Map<String, Value>) {
        for (key, value) in reported {
            if self.agent_state.get(key) != Some(value) {
                put(
                    &mut self.agent_state,
                    &mut self.changes,
                    "state",
                    key,
                    value.clone(),
                );
            }
        }
    }
}

/// Sets `map[key]` (the map at `/view/<name>`) to `value`, recording an
/// `add` for a new key, else the diff of the old entry against the new one.
fn put(map: &mut Map<String, Value>, changes: &mut Changes, name: &str, key: &str, value: Value) {
    let recording = changes.recording();
    match map.get_mut(key) {
        Some(old) => {
            if recording {
                patch::diff_at(&pointer(name, key), old, &value, changes.ops_mut());
            }
            *old = value;
        }
        None => {
            if recording {
                changes.push(PatchOp::add(pointer(name, key), value.clone()));
            }
            map.insert(key.to_owned(), value);
        }
    }
}
