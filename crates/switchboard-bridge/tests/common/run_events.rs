//! What the events of one AG-UI run say, and the checks every run must
//! pass. Shared by this crate's tests (through `common`) and by the
//! `switchboard` binary's `tests/bridge.rs`, which runs the same kind of
//! runs against the real processes and includes this file by its path: a
//! test's modules cannot be imported from another crate.
#![allow(dead_code, clippy::panic)]

use switchboard_agui::Verifier;
use switchboard_agui::events::{Event, EventKind, RunFinishedOutcome};

/// The decoded events of one run's answer.
pub trait RunEvents {
    /// Every event, in the order they came.
    fn events(&self) -> &[Event];

    /// Each event's type, for failure messages.
    fn types(&self) -> Vec<&'static str> {
        self.events().iter().map(|e| e.type_name()).collect()
    }

    /// How RUN_FINISHED says the run ended (none after a RUN_ERROR).
    fn outcome(&self) -> Option<&RunFinishedOutcome> {
        self.events().iter().find_map(|e| match &e.kind {
            EventKind::RunFinished(f) => f.outcome.as_ref(),
            _ => None,
        })
    }

    /// The RUN_ERROR's code and message.
    fn error(&self) -> Option<(String, String)> {
        self.events().iter().find_map(|e| match &e.kind {
            EventKind::RunError(r) => Some((r.code.clone().unwrap_or_default(), r.message.clone())),
            _ => None,
        })
    }

    /// Every text delta, joined.
    fn text(&self) -> String {
        self.events()
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::TextMessageContent(c) => Some(c.delta.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Asserts the official client's ordering rules, and that the run
    /// ended with exactly one terminal event (RUN_FINISHED or RUN_ERROR),
    /// last.
    fn assert_one_terminal_event_last(&self) {
        Verifier::verify_all(self.events()).unwrap_or_else(|e| panic!("{e}: {:?}", self.types()));
        let terminals = self.events().iter().filter(|e| is_terminal(e)).count();
        assert_eq!(terminals, 1, "{:?}", self.types());
        assert!(
            self.events().last().is_some_and(is_terminal),
            "{:?}",
            self.types()
        );
    }

    /// Asserts that the run finished with success: no interrupt, no
    /// RUN_ERROR.
    fn assert_succeeded(&self) {
        assert!(
            matches!(self.outcome(), Some(RunFinishedOutcome::Success { .. })),
            "{:?} {:?}",
            self.types(),
            self.error()
        );
    }
}

/// Whether `e` ends a run.
pub fn is_terminal(e: &Event) -> bool {
    matches!(e.kind, EventKind::RunFinished(_) | EventKind::RunError(_))
}
