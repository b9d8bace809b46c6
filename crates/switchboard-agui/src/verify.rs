//! The ordering rules of the official client's `verifyEvents`, as a state
//! machine over a stream of events.
//!
//! The official client stops a run at the first event that breaks these
//! rules. [`Verifier`] applies the same ones, so tests (and debug builds of
//! producers) find a broken stream without a browser:
//! - the first event is `RUN_STARTED` (or `RUN_ERROR`); runs do not nest;
//! - after `RUN_ERROR` only a new `RUN_STARTED` may follow; after
//!   `RUN_FINISHED` only `RUN_STARTED` or `RUN_ERROR`;
//! - text messages, tool calls, reasoning messages, reasoning spans and steps
//!   are opened once, continued and closed only while open (several may be
//!   open at once, interleaved);
//! - `RUN_FINISHED` is refused while any of them is still open.

use std::collections::HashSet;

use crate::events::{Event, EventKind};

/// A broken rule, with the event's position in the stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {index} ({event_type}): {rule}")]
pub struct VerifyError {
    /// 0-based position of the offending event.
    pub index: usize,
    /// Its type.
    pub event_type: &'static str,
    /// What it broke.
    pub rule: String,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum RunState {
    #[default]
    Idle,
    Running,
    Finished,
    Errored,
}

/// Checks a stream of events, one at a time.
#[derive(Debug, Default)]
pub struct Verifier {
    index: usize,
    run: RunState,
    seen_first: bool,
    text: HashSet<String>,
    tools: HashSet<String>,
    reasoning_messages: HashSet<String>,
    reasoning_spans: HashSet<String>,
    steps: HashSet<String>,
}

impl Verifier {
    /// A verifier at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks all of `events` in order.
    pub fn verify_all<'a>(events: impl IntoIterator<Item = &'a Event>) -> Result<(), VerifyError> {
        let mut v = Verifier::new();
        events.into_iter().try_for_each(|e| v.observe(e))
    }

    /// `true` when something (message, call, step, …) is still open.
    pub fn has_open(&self) -> bool {
        !(self.text.is_empty()
            && self.tools.is_empty()
            && self.reasoning_messages.is_empty()
            && self.reasoning_spans.is_empty()
            && self.steps.is_empty())
    }

    /// Checks the next event.
    pub fn observe(&mut self, event: &Event) -> Result<(), VerifyError> {
        let result = self.check(&event.kind);
        let index = self.index;
        self.index += 1;
        result.map_err(|rule| VerifyError {
            index,
            event_type: event.type_name(),
            rule,
        })
    }

    fn check(&mut self, kind: &EventKind) -> Result<(), String> {
        use EventKind as K;
        let first = !self.seen_first;
        self.seen_first = true;
        if first && !matches!(kind, K::RunStarted(_) | K::RunError(_)) {
            return Err("the first event must be RUN_STARTED".into());
        }
        match self.run {
            RunState::Errored if !matches!(kind, K::RunStarted(_)) => {
                return Err("the run has already errored with RUN_ERROR".into());
            }
            RunState::Finished if !matches!(kind, K::RunStarted(_) | K::RunError(_)) => {
                return Err("the run has already finished with RUN_FINISHED".into());
            }
            _ => {}
        }
        fn open(set: &mut HashSet<String>, id: &str, what: &str) -> Result<(), String> {
            if set.insert(id.to_owned()) {
                Ok(())
            } else {
                Err(format!("{what} {id:?} is already open"))
            }
        }
        fn is_open(set: &HashSet<String>, id: &str, what: &str) -> Result<(), String> {
            if set.contains(id) {
                Ok(())
            } else {
                Err(format!("no open {what} with id {id:?}"))
            }
        }
        fn close(set: &mut HashSet<String>, id: &str, what: &str) -> Result<(), String> {
            if set.remove(id) {
                Ok(())
            } else {
                Err(format!("no open {what} with id {id:?}"))
            }
        }
        match kind {
            K::RunStarted(_) => {
                if self.run == RunState::Running {
                    return Err("cannot send RUN_STARTED while a run is still active".into());
                }
                *self = Verifier {
                    index: self.index,
                    run: RunState::Running,
                    seen_first: true,
                    ..Verifier::default()
                };
            }
            K::RunFinished(_) => {
                if self.has_open() {
                    return Err(format!(
                        "cannot send RUN_FINISHED while messages, tool calls, reasoning or steps are open: {:?}",
                        self.open_ids()
                    ));
                }
                self.run = RunState::Finished;
            }
            K::RunError(_) => self.run = RunState::Errored,
            K::TextMessageStart(e) => open(&mut self.text, &e.message_id, "text message")?,
            K::TextMessageContent(e) => is_open(&self.text, &e.message_id, "text message")?,
            K::TextMessageEnd(e) => close(&mut self.text, &e.message_id, "text message")?,
            K::ToolCallStart(e) => open(&mut self.tools, &e.tool_call_id, "tool call")?,
            K::ToolCallArgs(e) => is_open(&self.tools, &e.tool_call_id, "tool call")?,
            K::ToolCallEnd(e) => close(&mut self.tools, &e.tool_call_id, "tool call")?,
            K::ReasoningStart(e) => {
                open(&mut self.reasoning_spans, &e.message_id, "reasoning span")?
            }
            K::ReasoningEnd(e) => {
                close(&mut self.reasoning_spans, &e.message_id, "reasoning span")?
            }
            K::ReasoningMessageStart(e) => open(
                &mut self.reasoning_messages,
                &e.message_id,
                "reasoning message",
            )?,
            K::ReasoningMessageContent(e) => {
                is_open(&self.reasoning_messages, &e.message_id, "reasoning message")?
            }
            K::ReasoningMessageEnd(e) => close(
                &mut self.reasoning_messages,
                &e.message_id,
                "reasoning message",
            )?,
            K::StepStarted(e) => open(&mut self.steps, &e.step_name, "step")?,
            K::StepFinished(e) => close(&mut self.steps, &e.step_name, "step")?,
            _ => {}
        }
        Ok(())
    }

    fn open_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self
            .text
            .iter()
            .chain(&self.tools)
            .chain(&self.reasoning_messages)
            .chain(&self.reasoning_spans)
            .chain(&self.steps)
            .map(String::as_str)
            .collect();
        ids.sort_unstable();
        ids
    }
}
