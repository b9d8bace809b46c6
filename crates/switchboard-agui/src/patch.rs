//! RFC 6902 patches between two JSON documents, and their application.
//!
//! The converter sends only what changed of its state and activities
//! (`STATE_DELTA`, `ACTIVITY_DELTA`). [`diff`] (and [`diff_at`], for one
//! value inside a larger document) produces operations that
//! apply cleanly to the *old* document, which is what a client holds:
//! objects are compared key by key (`add` for new keys, `remove` for gone
//! ones), an array that only grew gets one `add` per new element at its
//! index, and anything else that differs is a `replace`. A failed patch
//! breaks AG-UI UIs, so no operation ever names a path the old document does
//! not have (except the new key or index an `add` creates).
//!
//! [`apply`] is the other side, used by the tests to check that a snapshot
//! plus every delta equals the final state.

use serde_json::Value;

use crate::events::{PatchOp, PatchOpKind};

/// Escapes one JSON Pointer reference token (`~` → `~0`, `/` → `~1`).
pub fn escape_token(token: &str) -> String {
    if token.contains(['~', '/']) {
        token.replace('~', "~0").replace('/', "~1")
    } else {
        token.to_owned()
    }
}

/// The operations that turn `old` into `new` (empty when they are equal).
pub fn diff(old: &Value, new: &Value) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    diff_into(&mut String::new(), old, new, &mut ops);
    ops
}

/// Appends to `ops` the operations that turn `old` into `new` where both
/// are the value at `path` (a JSON Pointer) of a larger document: what
/// changed in one part of a document, without walking the rest of it.
pub fn diff_at(path: &str, old: &Value, new: &Value, ops: &mut Vec<PatchOp>) {
    diff_into(&mut path.to_owned(), old, new, ops);
}

fn diff_into(path: &mut String, old: &Value, new: &Value, ops: &mut Vec<PatchOp>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let len = path.len();
                path.push('/');
                path.push_str(&escape_token(k));
                match b.get(k) {
                    Some(vb) => diff_into(path, va, vb, ops),
                    None => ops.push(PatchOp::remove(path.clone())),
                }
                path.truncate(len);
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    ops.push(PatchOp::add(
                        format!("{path}/{}", escape_token(k)),
                        vb.clone(),
                    ));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if b.len() >= a.len() && b[..a.len()] == a[..] => {
            for (i, v) in b.iter().enumerate().skip(a.len()) {
                ops.push(PatchOp::add(format!("{path}/{i}"), v.clone()));
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                diff_into(path, va, vb, ops);
                path.truncate(len);
            }
        }
        (a, b) if a == b => {}
        (_, b) => ops.push(PatchOp::replace(path.clone(), b.clone())),
    }
}

/// Why a patch did not apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("patch operation {index} ({op:?} {path}) does not apply: {reason}")]
pub struct PatchError {
    /// Which operation.
    pub index: usize,
    /// Its kind.
    pub op: PatchOpKind,
    /// Its path.
    pub path: String,
    /// Why.
    pub reason: &'static str,
}

/// Applies `ops` to `doc` in order (all of RFC 6902 but `move`/`copy`/`test`
/// from paths that do not resolve, which fail).
pub fn apply(doc: &mut Value, ops: &[PatchOp]) -> Result<(), PatchError> {
    for (index, op) in ops.iter().enumerate() {
        let fail = |reason| PatchError {
            index,
            op: op.op,
            path: op.path.clone(),
            reason,
        };
        match op.op {
            PatchOpKind::Add => {
                let v = op.value.clone().ok_or_else(|| fail("add needs a value"))?;
                add(doc, &op.path, v).map_err(fail)?;
            }
            PatchOpKind::Remove => {
                remove(doc, &op.path).map_err(fail)?;
            }
            PatchOpKind::Replace => {
                let v = op
                    .value
                    .clone()
                    .ok_or_else(|| fail("replace needs a value"))?;
                let slot = doc
                    .pointer_mut(&op.path)
                    .ok_or_else(|| fail("no such path"))?;
                *slot = v;
            }
            PatchOpKind::Move => {
                let from = op.from.as_deref().ok_or_else(|| fail("move needs from"))?;
                let v = remove(doc, from).map_err(fail)?;
                add(doc, &op.path, v).map_err(fail)?;
            }
            PatchOpKind::Copy => {
                let from = op.from.as_deref().ok_or_else(|| fail("copy needs from"))?;
                let v = doc
                    .pointer(from)
                    .cloned()
                    .ok_or_else(|| fail("no such from"))?;
                add(doc, &op.path, v).map_err(fail)?;
            }
            PatchOpKind::Test => {
                if doc.pointer(&op.path) != op.value.as_ref() {
                    return Err(fail("test failed"));
                }
            }
        }
    }
    Ok(())
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn split_parent(path: &str) -> Result<(&str, String), &'static str> {
    let cut = path.rfind('/').ok_or("not a JSON Pointer")?;
    Ok((&path[..cut], unescape(&path[cut + 1..])))
}

fn add(doc: &mut Value, path: &str, v: Value) -> Result<(), &'static str> {
    if path.is_empty() {
        *doc = v;
        return Ok(());
    }
    let (parent, key) = split_parent(path)?;
    match doc.pointer_mut(parent).ok_or("no such parent")? {
        Value::Object(m) => {
            m.insert(key, v);
            Ok(())
        }
        Value::Array(a) => {
            let i = if key == "-" {
                a.len()
            } else {
                key.parse().map_err(|_| "bad array index")?
            };
            if i > a.len() {
                return Err("array index out of range");
            }
            a.insert(i, v);
            Ok(())
        }
        _ => Err("parent is not a container"),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, &'static str> {
    let (parent, key) = split_parent(path)?;
    match doc.pointer_mut(parent).ok_or("no such parent")? {
        Value::Object(m) => m.remove(&key).ok_or("no such key"),
        Value::Array(a) => {
            let i: usize = key.parse().map_err(|_| "bad array index")?;
            if i >= a.len() {
                return Err("array index out of range");
            }
            Ok(a.remove(i))
        }
        _ => Err("parent is not a container"),
    }
}
