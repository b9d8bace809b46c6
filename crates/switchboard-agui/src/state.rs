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

use serde_json::{Map, Value};

use crate::convert::artifact_pointer;
use crate::events::{EventKind, PatchOp, StateDelta, StateSnapshot};
use crate::patch::{self, escape_token};

/// The state document (`{"a2a": {…, "artifacts": {…}}}`, see
/// [`crate::convert`]) and the operations the client has yet to get.
#[derive(Debug, Default)]
pub(crate) struct StateDoc {
    /// Everything under `/a2a` but the artifacts.
    a2a: Map<String, Value>,
    /// `/a2a/artifacts`: artifact id → entry.
    artifacts: Map<String, Value>,
    /// A snapshot went out this run: changes go out as deltas.
    client_has_copy: bool,
    /// Changes since the client's copy, as operations on it.
    pending: Vec<PatchOp>,
}

impl StateDoc {
    /// The whole document as it is now.
    pub(crate) fn snapshot(&self) -> Value {
        let mut a2a = self.a2a.clone();
        a2a.insert("artifacts".into(), Value::Object(self.artifacts.clone()));
        let mut doc = Map::new();
        doc.insert("a2a".into(), Value::Object(a2a));
        Value::Object(doc)
    }

    /// The client's copy is gone (or must be replaced): the next
    /// [`StateDoc::sync`] sends a snapshot.
    pub(crate) fn forget_client_copy(&mut self) {
        self.client_has_copy = false;
        self.pending.clear();
    }

    /// Sets `/a2a/<key>` (`taskId`, `contextId`, `status`).
    pub(crate) fn set(&mut self, key: &str, value: Value) {
        let recording = self.client_has_copy;
        match self.a2a.get_mut(key) {
            Some(old) if *old == value => {}
            Some(old) => {
                if recording {
                    patch::diff_at(&format!("/a2a/{key}"), old, &value, &mut self.pending);
                }
                *old = value;
            }
            None => {
                if recording {
                    self.pending
                        .push(PatchOp::add(format!("/a2a/{key}"), value.clone()));
                }
                self.a2a.insert(key.to_owned(), value);
            }
        }
    }

    /// Sets `/a2a/status` to the object of `fields` (key, text; a `None`
    /// text leaves its key out), keys in the document's (sorted) order.
    ///
    /// The operations are those of diffing the new object against the old
    /// one ([`patch::diff_at`]: the old keys in order, replaced or removed,
    /// then the new keys, added), but the stored object is changed in place
    /// and a value is copied only when it changed: a status update mostly
    /// changes the state alone.
    pub(crate) fn set_status(&mut self, fields: [(&str, Option<&str>); 3]) {
        debug_assert!(fields.is_sorted_by_key(|(k, _)| *k));
        let recording = self.client_has_copy;
        let Some(Value::Object(old)) = self.a2a.get_mut("status") else {
            let status = fields
                .iter()
                .filter_map(|&(k, v)| Some((k.to_owned(), Value::from(v?))))
                .collect();
            self.set("status", Value::Object(status));
            return;
        };
        let path = |k: &str| format!("/a2a/status/{}", escape_token(k));
        let had: [bool; 3] = fields.map(|(k, _)| old.contains_key(k));
        for ((k, new), had) in fields.iter().zip(had) {
            if !had {
                continue;
            }
            match (old.get_mut(*k), new) {
                (Some(Value::String(o)), Some(n)) if o == n => {}
                (Some(slot), Some(n)) => {
                    if recording {
                        self.pending
                            .push(PatchOp::replace(path(k), Value::from(*n)));
                    }
                    *slot = Value::from(*n);
                }
                (_, None) => {
                    if recording {
                        self.pending.push(PatchOp::remove(path(k)));
                    }
                    old.remove(*k);
                }
                (None, Some(_)) => {}
            }
        }
        for ((k, new), had) in fields.iter().zip(had) {
            if let (false, Some(n)) = (had, new) {
                if recording {
                    self.pending.push(PatchOp::add(path(k), Value::from(*n)));
                }
                old.insert((*k).to_owned(), Value::from(*n));
            }
        }
    }

    /// Sets an artifact's whole entry (a new artifact, or one replaced).
    pub(crate) fn put_artifact(&mut self, id: &str, entry: Value) {
        let recording = self.client_has_copy;
        match self.artifacts.get_mut(id) {
            Some(old) => {
                if recording {
                    patch::diff_at(&artifact_pointer(id), old, &entry, &mut self.pending);
                }
                *old = entry;
            }
            None => {
                if recording {
                    self.pending
                        .push(PatchOp::add(artifact_pointer(id), entry.clone()));
                }
                self.artifacts.insert(id.to_owned(), entry);
            }
        }
    }

    /// Appends `parts` to a known artifact's entry and sets its `lastChunk`
    /// (nothing changes when there is no such entry).
    pub(crate) fn append_parts(&mut self, id: &str, parts: Vec<Value>, last_chunk: bool) {
        let recording = self.client_has_copy;
        let Some(Value::Object(entry)) = self.artifacts.get_mut(id) else {
            return;
        };
        let at = artifact_pointer(id);
        if let Some(Value::Array(old)) = entry.get_mut("parts") {
            if recording {
                let first = old.len();
                self.pending.extend(
                    parts
                        .iter()
                        .enumerate()
                        .map(|(i, p)| PatchOp::add(format!("{at}/parts/{}", first + i), p.clone())),
                );
            }
            old.extend(parts);
        }
        let last = Value::Bool(last_chunk);
        match entry.get_mut("lastChunk") {
            Some(old) if *old == last => {}
            Some(old) => {
                if recording {
                    self.pending
                        .push(PatchOp::replace(format!("{at}/lastChunk"), last.clone()));
                }
                *old = last;
            }
            None => {
                if recording {
                    self.pending
                        .push(PatchOp::add(format!("{at}/lastChunk"), last.clone()));
                }
                entry.insert("lastChunk".into(), last);
            }
        }
    }

    /// What brings the client up to date: a snapshot when it has no copy,
    /// else a delta of what changed, or nothing when nothing did.
    pub(crate) fn sync(&mut self) -> Option<EventKind> {
        if !self.client_has_copy {
            self.client_has_copy = true;
            self.pending.clear();
            return Some(
                StateSnapshot {
                    snapshot: self.snapshot(),
                    subagent_run_id: None,
                }
                .into(),
            );
        }
        if self.pending.is_empty() {
            return None;
        }
        Some(
            StateDelta {
                delta: std::mem::take(&mut self.pending),
                subagent_run_id: None,
            }
            .into(),
        )
    }
}
