//! How much a single request may ask of the engine.
//!
//! Everything a caller sends is stored and repeated: a context id is copied
//! into every event of its task, a message into its task's history, and the
//! history into every answer that includes it. Without bounds one request
//! can make every later answer huge (a 9 MB context id made 37 MB answers).
//! [`Limits`] caps what comes in — id lengths, parts per message, part and
//! message size, metadata size — each refused with `InvalidParams`
//! (JSON-RPC -32602, HTTP 400, gRPC INVALID_ARGUMENT) naming the field, and
//! caps what goes out by default: GetTask and ListTasks return at most
//! [`Limits::default_history_length`] messages of history when the caller
//! does not ask for a length.

use serde_json::Value;
use switchboard_protocol::{A2AError, Message, Metadata, Part, PartContent, Task};

/// Per-request limits of the engine (see the [module docs](self)); part of
/// [`HandlerConfig`](crate::HandlerConfig). The defaults are safe for the
/// open internet and far above what ordinary agents exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest id a caller may send (task, context, message, artifact,
    /// push config ids), in bytes (default 256).
    pub max_id_bytes: usize,
    /// Most parts in one message (default 100).
    pub max_parts_per_message: usize,
    /// Largest part (its text, data as JSON, raw bytes or URL), in bytes
    /// (default 4 MiB).
    pub max_part_bytes: usize,
    /// Largest message, all parts and metadata together, in bytes
    /// (default 8 MiB; the request body cap of the bindings also applies).
    pub max_message_bytes: usize,
    /// Largest metadata object (of a request, a message or a part), as
    /// JSON, in bytes (default 64 KiB).
    pub max_metadata_bytes: usize,
    /// History returned by GetTask and ListTasks when the request sets no
    /// `historyLength`: the most recent this many messages (default 100).
    /// A caller asking for more gets what it asks for.
    pub default_history_length: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_id_bytes: 256,
            max_parts_per_message: 100,
            max_part_bytes: 4 * 1024 * 1024,
            max_message_bytes: 8 * 1024 * 1024,
            max_metadata_bytes: 64 * 1024,
            default_history_length: 100,
        }
    }
}

impl Limits {
    /// Refuses an id longer than [`Limits::max_id_bytes`]. `field` is only
    /// written out for an id refused, so a name built with `format_args!`
    /// costs nothing otherwise.
    pub fn check_id(&self, field: impl std::fmt::Display, id: &str) -> Result<(), A2AError> {
        if id.len() > self.max_id_bytes {
            return Err(over_limit(
                format_args!("{field}"),
                format_args!(
                    "is {} bytes long; the limit is {}",
                    id.len(),
                    self.max_id_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Refuses metadata larger than [`Limits::max_metadata_bytes`];
    /// returns its size.
    pub fn check_metadata(
        &self,
        field: &str,
        metadata: Option<&Metadata>,
    ) -> Result<usize, A2AError> {
        let Some(metadata) = metadata else {
            return Ok(0);
        };
        let size = json_size(metadata.values()) + metadata.keys().map(String::len).sum::<usize>();
        if size > self.max_metadata_bytes {
            return Err(over_limit(
                format_args!("{field}"),
                format_args!(
                    "is {size} bytes as JSON; the limit is {}",
                    self.max_metadata_bytes
                ),
            ));
        }
        Ok(size)
    }

    /// Checks a message a caller sent: its ids, part count, each part's
    /// size, its metadata and its total size.
    pub fn check_message(&self, msg: &Message) -> Result<(), A2AError> {
        self.check_id("message.messageId", &msg.message_id)?;
        if let Some(id) = &msg.context_id {
            self.check_id("message.contextId", id)?;
        }
        if let Some(id) = &msg.task_id {
            self.check_id("message.taskId", id)?;
        }
        for (i, id) in msg.reference_task_ids.iter().enumerate() {
            self.check_id(format_args!("message.referenceTaskIds[{i}]"), id)?;
        }
        if msg.parts.len() > self.max_parts_per_message {
            return Err(over_limit(
                format_args!("message.parts"),
                format_args!(
                    "has {} parts; the limit is {}",
                    msg.parts.len(),
                    self.max_parts_per_message
                ),
            ));
        }
        let mut total = self.check_metadata("message.metadata", msg.metadata.as_ref())?;
        for (i, part) in msg.parts.iter().enumerate() {
            let size = part_size(part);
            if size > self.max_part_bytes {
                return Err(over_limit(
                    format_args!("message.parts[{i}]"),
                    format_args!("is {size} bytes; the limit is {}", self.max_part_bytes),
                ));
            }
            total += size;
            // The field's name is only written out for metadata there is.
            if let Some(metadata) = &part.metadata {
                total +=
                    self.check_metadata(&format!("message.parts[{i}].metadata"), Some(metadata))?;
            }
        }
        if total > self.max_message_bytes {
            return Err(over_limit(
                format_args!("message"),
                format_args!("is {total} bytes; the limit is {}", self.max_message_bytes),
            ));
        }
        Ok(())
    }

    /// The history length to return: the caller's, else the default.
    pub(crate) fn history_length(&self, asked: Option<i32>) -> Option<i32> {
        asked.or(Some(
            i32::try_from(self.default_history_length).unwrap_or(i32::MAX),
        ))
    }
}

/// The refusal of `field` for being over a limit, as `detail` says.
///
/// Cold, and given its texts unformatted: the checks run on every message,
/// and the refusals' formatting inlined among them would spread the checks
/// over more instruction-cache lines than they need.
#[cold]
fn over_limit(field: std::fmt::Arguments<'_>, detail: std::fmt::Arguments<'_>) -> A2AError {
    A2AError::invalid_field(field.to_string(), detail.to_string())
}

/// Per-principal and per-task quotas of the engine, refused with
/// [`A2AError::ResourceExhausted`] (HTTP 429, gRPC RESOURCE_EXHAUSTED,
/// JSON-RPC -31429); part of [`HandlerConfig`](crate::HandlerConfig). The
/// request rate per principal is the server's (`switchboard_server::rate`):
/// it is checked before a request reaches the engine. The bytes a
/// principal keeps are the store's to count and bound, in the transaction
/// of each commit ([`StorageQuota`](crate::store::quota::StorageQuota),
/// given to the store when it is opened); the engine answers its refusal
/// with the same ResourceExhausted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quotas {
    /// Most tasks one principal (in one tenant) may have worked on at once
    /// in this process: runs of its agent in progress (default 100). A task
    /// waiting for input holds no run and does not count; a follow-up that
    /// resumes it does. A new task or follow-up over the quota is refused
    /// before the agent sees it. Anonymous callers are counted per client
    /// address ([`CallContext::client`](crate::CallContext::client)), so one
    /// cannot take the quota of all. The count is this process's, unless
    /// [`share_active_tasks`](Self::share_active_tasks) is set.
    pub max_active_tasks_per_principal: usize,
    /// With a cluster (replicas on one PostgreSQL database), count
    /// [`max_active_tasks_per_principal`](Self::max_active_tasks_per_principal)
    /// across every replica (see [`crate::cluster`]), so that a caller spread
    /// over N replicas does not get N times the quota (default off). It
    /// costs two statements on the database per run, on one row per caller:
    /// a caller starting thousands of tasks a second serializes on it.
    pub share_active_tasks: bool,
    /// Most SubscribeToTask streams open at once on one task (default 64).
    pub max_subscribers_per_task: usize,
    /// Largest answer of GetTask and ListTasks, as JSON, in bytes (default
    /// 16 MiB). A ListTasks page ends early (its `nextPageToken` continues
    /// where it stopped); a task's history is trimmed from the oldest
    /// message; a task larger than the budget even without history is
    /// refused, naming its size.
    pub max_response_bytes: usize,
}

impl Default for Quotas {
    fn default() -> Self {
        Quotas {
            max_active_tasks_per_principal: 100,
            share_active_tasks: false,
            max_subscribers_per_task: 64,
            max_response_bytes: 16 * 1024 * 1024,
        }
    }
}

impl Quotas {
    /// Fits `task` into `budget` bytes of JSON: drops its oldest history
    /// messages while it is larger, and refuses it when it is larger even
    /// without history. Returns its size.
    pub(crate) fn fit_task(task: &mut Task, budget: usize) -> Result<usize, A2AError> {
        let mut size = json_len(task);
        if size <= budget {
            return Ok(size);
        }
        if let Some(history) = &mut task.history {
            let mut dropped = 0;
            while size > budget && dropped < history.len() {
                // The message and the comma before the next one.
                size = size.saturating_sub(json_len(&history[dropped]) + 1);
                dropped += 1;
            }
            history.drain(..dropped);
            if history.is_empty() {
                task.history = None;
            }
            size = json_len(task);
        }
        if size > budget {
            return Err(A2AError::ResourceExhausted(format!(
                "task {} is {size} bytes as JSON even without its history; answers are limited to {budget} bytes",
                task.id
            )));
        }
        Ok(size)
    }
}

/// Counts holders per key and refuses past a maximum; a [`Slot`] gives its
/// place back when dropped.
///
/// Keys are counted by their hash under a per-process random SipHash key,
/// so taking a place formats and copies nothing: the key is hashed once
/// and the map (which does not hash its `u64`s again) is looked up once.
/// Two keys would share a count only if their 64-bit hashes collided,
/// which a caller cannot aim for without the process's key.
#[derive(Debug, Default)]
pub(crate) struct Counter {
    keys: std::hash::RandomState,
    held: std::sync::Mutex<Held>,
}

/// Holders per key hash.
type Held = std::collections::HashMap<u64, usize, std::hash::BuildHasherDefault<Prehashed>>;

/// The hasher of a map whose keys are already hashes: passes them through.
#[derive(Debug, Default)]
struct Prehashed(u64);

impl std::hash::Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are hashed with it; this keeps any other input
        // correct, if not fast.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// One place in a [`Counter`], held until dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    counter: std::sync::Arc<Counter>,
    key: u64,
    /// The place this slot also holds in a count shared by every replica
    /// (see `Cluster::acquire_run`), given back when the slot is dropped.
    shared: Option<crate::cluster::SharedPlace>,
}

impl Counter {
    fn key(&self, key: impl std::hash::Hash) -> u64 {
        std::hash::BuildHasher::hash_one(&self.keys, key)
    }

    fn held_map(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A place under `key` if fewer than `max` are held. A tuple of
    /// strings is a key as it is: each is hashed with its end marked.
    pub(crate) fn try_acquire(
        self: &std::sync::Arc<Self>,
        key: impl std::hash::Hash,
        max: usize,
    ) -> Option<Slot> {
        let key = self.key(key);
        let mut held = self.held_map();
        let n = held.entry(key).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(Slot {
            counter: self.clone(),
            key,
            shared: None,
        })
    }

    #[cfg(test)]
    pub(crate) fn held(&self, key: impl std::hash::Hash) -> usize {
        let key = self.key(key);
        self.held_map().get(&key).copied().unwrap_or(0)
    }
}

impl Slot {
    /// This slot also holds `place`, given back with it.
    pub(crate) fn with_shared(mut self, place: crate::cluster::SharedPlace) -> Self {
        self.shared = Some(place);
        self
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(place) = self.shared.take() {
            place.release();
        }
        let mut held = self.counter.held_map();
        if let Some(n) = held.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                held.remove(&self.key);
            }
        }
    }
}

/// The size of a value as compact JSON (`usize::MAX` if it cannot be
/// serialized).
pub(crate) fn json_len<T: serde::Serialize>(value: &T) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |b| b.len())
}

/// The size of a part's content, in bytes.
fn part_size(part: &Part) -> usize {
    match &part.content {
        PartContent::Text(t) => t.len(),
        PartContent::Data(v) => json_size([v]),
        PartContent::Url(u) => u.len(),
        PartContent::Raw(b) => b.len(),
        _ => 0,
    }
}

/// The size of values as compact JSON.
fn json_size<'a>(values: impl IntoIterator<Item = &'a Value>) -> usize {
    values
        .into_iter()
        .map(|v| serde_json::to_vec(v).map_or(usize::MAX, |b| b.len()))
        .fold(0, usize::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(v: Value) -> Message {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn each_limit_names_its_field() {
        let limits = Limits {
            max_id_bytes: 4,
            max_parts_per_message: 2,
            max_part_bytes: 8,
            max_message_bytes: 12,
            max_metadata_bytes: 16,
            default_history_length: 1,
        };
        let ok = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]});
        assert!(limits.check_message(&message(ok.clone())).is_ok());
        for (change, field) in [
            (json!({"contextId": "12345"}), "message.contextId"),
            (json!({"messageId": "12345"}), "message.messageId"),
            (
                json!({"referenceTaskIds": ["a", "b", "12345", "c"]}),
                "message.referenceTaskIds[2]",
            ),
            (
                json!({"parts": [{"text": "a"}, {"text": "b"}, {"text": "c"}]}),
                "message.parts",
            ),
            (
                json!({"parts": [{"text": "123456789"}]}),
                "message.parts[0]",
            ),
            (
                json!({"parts": [{"text": "1234567"}, {"text": "1234567"}]}),
                "message",
            ),
            (
                json!({"metadata": {"k": "12345678901234567"}}),
                "message.metadata",
            ),
        ] {
            let mut v = ok.clone();
            for (k, val) in change.as_object().into_iter().flatten() {
                v[k] = val.clone();
            }
            match limits.check_message(&message(v)) {
                Err(A2AError::InvalidParams { violations, .. }) => {
                    assert_eq!(violations[0].field, field);
                }
                other => panic!("{field}: {other:?}"),
            }
        }
        assert_eq!(limits.history_length(None), Some(1));
        assert_eq!(limits.history_length(Some(5)), Some(5));
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn slots_are_counted_per_key_and_given_back_on_drop() {
        let counter = std::sync::Arc::new(Counter::default());
        let a1 = counter.try_acquire("a", 2).unwrap();
        let _a2 = counter.try_acquire("a", 2).unwrap();
        assert!(counter.try_acquire("a", 2).is_none(), "full");
        let _b = counter.try_acquire("b", 2).unwrap();
        drop(a1);
        assert_eq!(counter.held("a"), 1);
        assert!(counter.try_acquire("a", 2).is_some());
    }

    #[test]
    fn a_task_over_the_budget_loses_its_oldest_history_or_is_refused() {
        let mut task: Task = serde_json::from_value(json!({
            "id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
            "history": (0..10).map(|i| json!({"messageId": format!("m{i}"), "role": "ROLE_USER",
                "parts": [{"text": "x".repeat(100)}]})).collect::<Vec<_>>()
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let whole = json_len(&task);
        let mut same = task.clone();
        assert_eq!(Quotas::fit_task(&mut same, whole), Ok(whole));
        // One message (and its comma) too many: the oldest two must go.
        let message = json_len(&task.history.as_ref().map(|h| h[0].clone()));
        let budget = whole - message - 2;
        let size = Quotas::fit_task(&mut task, budget).unwrap_or_else(|e| panic!("{e}"));
        assert!(size <= budget);
        let history = task.history.clone().unwrap_or_default();
        assert_eq!(history.len(), 8, "the two oldest went");
        assert_eq!(history[0].message_id, "m2");
        match Quotas::fit_task(&mut task, 20) {
            Err(A2AError::ResourceExhausted(m)) => assert!(m.contains("task t is"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
