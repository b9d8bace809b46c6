//! Storage quotas: how many bytes one principal may keep in a store.
//!
//! Every task belongs to an **owner**, a (tenant, principal) pair, and what
//! the owner holds is what the store keeps of its tasks: each task's
//! snapshot and its event log, counted as the JSON the SQL stores write
//! (the in-memory store counts the events' JSON without keeping it, and bounds each snapshot from above by what its events add). A store
//! keeps one counter per owner, changed by every commit and every deletion
//! in the same atomic step as the write, so the check costs a lookup, never
//! a scan:
//!
//! - a commit adds the size of its events and the difference between the
//!   new snapshot and the one it replaces;
//! - deleting a task (retention, eviction) takes off its snapshot and log.
//!
//! [`StorageQuota::admit`] decides a commit: one that leaves its owner above
//! [`StorageQuota::max_bytes_per_owner`] and holding more than before is
//! refused with [`StoreError::QuotaExceeded`] (the engine answers
//! ResourceExhausted), and nothing is written. One kind of commit is always
//! admitted: the one that finishes a task that already exists (a terminal
//! status), so that no task is left running for ever because its owner ran
//! out of space. Such a task cannot grow afterwards, so an owner goes over
//! its quota by at most one final commit per task it had started while
//! under it.
//!
//! Without a quota ([`StorageQuota::default`]) a store still keeps the
//! counters where that costs nothing extra; the in-memory store skips its
//! accounting entirely.

use crate::store::{StoreError, TaskRecord};

/// The storage a store grants each owner; see the [module docs](self).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StorageQuota {
    /// Most bytes one (tenant, principal) may hold; `None`: no limit.
    pub max_bytes_per_owner: Option<u64>,
}

impl StorageQuota {
    /// A quota of `bytes` per owner.
    pub fn per_owner(bytes: u64) -> Self {
        StorageQuota {
            max_bytes_per_owner: Some(bytes),
        }
    }

    /// Whether a commit by `owner` may bring it from `before` to `after`
    /// bytes; `finishes`: the commit finishes an existing task
    /// ([`finishes`]).
    pub fn admit(
        &self,
        owner: &str,
        finishes: bool,
        before: u64,
        after: u64,
    ) -> Result<(), StoreError> {
        match self.max_bytes_per_owner {
            Some(max) if after > max && after > before && !finishes => {
                Err(exceeded(owner, after, max))
            }
            _ => Ok(()),
        }
    }
}

/// The refusal of a commit that would bring `owner` to `after` bytes, over
/// its quota of `max`.
pub fn exceeded(owner: &str, after: u64, max: u64) -> StoreError {
    StoreError::QuotaExceeded(format!(
        "principal {owner:?} would hold {after} bytes of tasks and events; \
         the limit is {max} bytes per principal"
    ))
}

/// The commit finishes a task that already exists (see the [module docs](self)).
pub fn finishes(record: &TaskRecord, events: usize) -> bool {
    record.expected_stored_seq(events) > 0 && record.task.status.state.is_terminal()
}

pub use super::json_size::json_bytes;
