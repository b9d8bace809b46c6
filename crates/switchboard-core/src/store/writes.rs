//! Whether a store's writes work, for its readiness check.
//!
//! A store can answer reads while every write fails: a full disk, a
//! read-only file, a database refusing writes. A readiness probe that only
//! reads would keep sending work to a server that cannot keep it. So a
//! store records the outcome of its writes in a [`WriteHealth`]: the error
//! of the last write that failed, cleared by the next one that succeeds.
//! While it holds an error, the store's [`TaskStore::health`] tries a small
//! real write of its own (a probe), so it reports ready again as soon as
//! writes work, without waiting for a caller to risk one.
//!
//! A store that has no probe telling a full disk apart from a write that
//! happens to fit (PostgreSQL reuses space inside pages it already has)
//! asks [`WriteHealth::recent_failure`] instead: not ready for a while
//! after a failed write, or until one succeeds, then ready again so that
//! callers' writes can show whether the cause is gone.
//!
//! A refusal that is the store's decision (a sequence conflict, a quota)
//! means the write path works, and counts as a success.
//!
//! [`TaskStore::health`]: crate::TaskStore::health

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::store::StoreError;

/// The error of the last failed write, until a write succeeds.
#[derive(Debug, Default)]
pub struct WriteHealth {
    failure: Mutex<Option<(String, Instant)>>,
}

impl WriteHealth {
    /// Records the outcome of a write; returns whether the write failed.
    pub fn record<T>(&self, outcome: &Result<T, StoreError>) -> bool {
        match outcome {
            Ok(_)
            | Err(StoreError::SequenceConflict { .. })
            | Err(StoreError::QuotaExceeded(_)) => {
                self.succeeded();
                false
            }
            Err(e) => {
                self.failed(e);
                true
            }
        }
    }

    /// Records a failed write.
    pub fn failed(&self, error: &StoreError) {
        // What failed, without the `Backend` variant's own prefix (the
        // store's health error adds its own).
        let what = match error {
            StoreError::Backend(what) => what.clone(),
            other => other.to_string(),
        };
        *self.lock() = Some((what, Instant::now()));
    }

    /// Records a write that succeeded.
    pub fn succeeded(&self) {
        let mut failure = self.lock();
        if failure.take().is_some() {
            tracing::info!("store writes succeed again");
        }
    }

    /// The error of the last write, if it failed.
    pub fn failure(&self) -> Option<String> {
        self.lock().as_ref().map(|(e, _)| e.clone())
    }

    /// The error of the last write, if it failed less than `within` ago.
    pub fn recent_failure(&self, within: Duration) -> Option<String> {
        self.lock()
            .as_ref()
            .filter(|(_, at)| at.elapsed() < within)
            .map(|(e, _)| e.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(String, Instant)>> {
        // Only a string behind the lock: a panic elsewhere leaves it valid.
        self.failure.lock().unwrap_or_else(|p| p.into_inner())
    }
}
