//! Reading one run's events back: how it ended, what it said.
//!
//! A client that drove a run (through `@ag-ui/client`, the bridge, or
//! `serve`'s `/agui`) holds a list of [`Event`]s. Most questions about the
//! run are the same few folds over it — did it finish, with an interrupt or
//! a RUN_ERROR, what text did it stream — and the one structural check every
//! run must pass: the official client's ordering rules ([`Verifier`]), and
//! exactly one terminal event (RUN_FINISHED or RUN_ERROR), last.
//! [`RunEvents`] is that vocabulary, for a slice of events or for anything
//! that holds one (an HTTP answer with its decoded events, say).
//!
//! ```
//! use switchboard_agui::events::{Event, RunError, RunFinished, RunStarted};
//! use switchboard_agui::run::RunEvents;
//!
//! let (thread_id, run_id) = (String::from("t1"), String::from("r1"));
//! let started = Event::new(RunStarted { thread_id: thread_id.clone(), run_id: run_id.clone(), ..Default::default() });
//! let finished = Event::new(RunFinished { thread_id, run_id, ..Default::default() });
//! let run = vec![started.clone(), finished];
//! assert!(run.check_ended().is_ok() && run.check_succeeded().is_ok());
//!
//! let failed = vec![started, Event::new(RunError { message: "no agent".into(), ..Default::default() })];
//! assert!(failed.check_ended().is_ok());
//! assert_eq!(failed.error(), Some((String::new(), "no agent".into())));
//! assert!(failed.check_succeeded().is_err());
//! ```

use serde_json::Value;

use crate::Verifier;
use crate::events::{Event, EventKind, RunFinishedOutcome};
use crate::patch::{self, PatchError};

/// The events of one run, in the order they came, and what they say.
pub trait RunEvents {
    /// Every event of the run.
    fn events(&self) -> &[Event];

    /// Each event's type (`RUN_STARTED`, …), e.g. for failure messages.
    fn types(&self) -> Vec<&'static str> {
        self.events().iter().map(|e| e.type_name()).collect()
    }

    /// How RUN_FINISHED says the run ended (none after a RUN_ERROR, or when
    /// the run has not finished).
    fn outcome(&self) -> Option<&RunFinishedOutcome> {
        self.events().iter().find_map(|e| match &e.kind {
            EventKind::RunFinished(f) => f.outcome.as_ref(),
            _ => None,
        })
    }

    /// The RUN_ERROR's code (empty when it has none) and message.
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

    /// The shared state after the run: its last STATE_SNAPSHOT with every
    /// later STATE_DELTA applied in order (`null` before any snapshot). The
    /// error is a delta that does not apply to the state before it.
    fn final_state(&self) -> Result<Value, PatchError> {
        let mut state = Value::Null;
        for e in self.events() {
            match &e.kind {
                EventKind::StateSnapshot(s) => state = s.snapshot.clone(),
                EventKind::StateDelta(d) => patch::apply(&mut state, &d.delta)?,
                _ => {}
            }
        }
        Ok(state)
    }

    /// Checks the official client's ordering rules, and that the run ended
    /// with exactly one terminal event, last. The error names what is wrong
    /// and lists the event types.
    fn check_ended(&self) -> Result<(), String> {
        let events = self.events();
        Verifier::verify_all(events).map_err(|e| format!("{e}: {:?}", self.types()))?;
        let terminals = events.iter().filter(|e| e.ends_run()).count();
        if terminals != 1 || !events.last().is_some_and(Event::ends_run) {
            return Err(format!(
                "{terminals} terminal events, the last event must be the one: {:?}",
                self.types()
            ));
        }
        Ok(())
    }

    /// Checks that the run finished with success: a RUN_FINISHED whose
    /// outcome is success or absent (which means success), no RUN_ERROR.
    fn check_succeeded(&self) -> Result<(), String> {
        let finished = self.events().iter().find_map(|e| match &e.kind {
            EventKind::RunFinished(f) => Some(f),
            _ => None,
        });
        match finished.map(|f| &f.outcome) {
            Some(None | Some(RunFinishedOutcome::Success { .. })) if self.error().is_none() => {
                Ok(())
            }
            outcome => Err(format!(
                "the run did not succeed: outcome {outcome:?}, error {:?}, events {:?}",
                self.error(),
                self.types()
            )),
        }
    }
}

impl RunEvents for [Event] {
    fn events(&self) -> &[Event] {
        self
    }
}

impl RunEvents for Vec<Event> {
    fn events(&self) -> &[Event] {
        self
    }
}
