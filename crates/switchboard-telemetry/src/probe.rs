//! Which operation a request ran and which A2A error answered it.
//!
//! A layer around the whole server sees requests as HTTP: it knows the
//! binding from the head, but a JSON-RPC request's operation is in its
//! body. Rather than decoding bodies twice, the layer runs the request
//! inside [`observe`], which gives it a slot (a tokio task-local); the
//! engine calls [`note_operation`] at the top of each operation and the
//! bindings' error table calls [`note_error`] for the error it answers
//! with. Outside [`observe`] both do nothing.

use std::cell::Cell;
use std::future::Future;

use switchboard_protocol::Operation;

/// What a request's handling noted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Noted {
    /// The operation it ran (the last one noted).
    pub operation: Option<Operation>,
    /// The `ErrorInfo` reason of the A2A error it was answered with.
    pub error: Option<&'static str>,
}

#[derive(Debug, Default)]
struct Slot {
    operation: Cell<Option<Operation>>,
    error: Cell<Option<&'static str>>,
}

tokio::task_local! {
    static SLOT: Slot;
}

/// Runs `fut` with a fresh slot and returns its output with what was noted
/// while it ran.
pub async fn observe<F: Future>(fut: F) -> (F::Output, Noted) {
    SLOT.scope(Slot::default(), async move {
        let out = fut.await;
        let noted = SLOT
            .try_with(|s| Noted {
                operation: s.operation.get(),
                error: s.error.get(),
            })
            .unwrap_or_default();
        (out, noted)
    })
    .await
}

/// Notes the operation the current request runs.
pub fn note_operation(op: Operation) {
    let _ = SLOT.try_with(|s| s.operation.set(Some(op)));
}

/// Notes the A2A error (its `ErrorInfo` reason) the current request is
/// answered with.
pub fn note_error(reason: &'static str) {
    let _ = SLOT.try_with(|s| s.error.set(Some(reason)));
}
