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
//! - subagent runs start once per run (`SUBAGENT_STARTED`, under a parent
//!   that has started when it names one) and finish or fail only while
//!   active; a message, tool call or reasoning message continued with a
//!   `subagentRunId` must be continued by the run that opened it;
//! - `RUN_FINISHED` is refused while any of them is still open, subagent
//!   runs included.

use std::collections::{HashMap, HashSet};

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

/// Open things by id, each with the subagent run that opened it (`None`:
/// the parent agent).
type Open = HashMap<String, Option<String>>;

/// Checks a stream of events, one at a time.
#[derive(Debug, Default)]
pub struct Verifier {
    index: usize,
    run: RunState,
    seen_first: bool,
    text: Open,
    tools: Open,
    reasoning_messages: Open,
    reasoning_spans: Open,
    steps: Open,
    /// Subagent runs started and not yet finished.
    subagents: HashSet<String>,
    /// Subagent runs that finished in this run (their ids are not reused).
    subagents_done: HashSet<String>,
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

    /// `true` when something (message, call, step, subagent, …) is still open.
    pub fn has_open(&self) -> bool {
        !(self.text.is_empty()
            && self.tools.is_empty()
            && self.reasoning_messages.is_empty()
            && self.reasoning_spans.is_empty()
            && self.steps.is_empty()
            && self.subagents.is_empty())
    }

    /// Checks the next event.
    pub fn observe(&mut self, event: &Event) -> Result<(), VerifyError> {
        let owner = subagent_of(&event.kind);
        let result = self.check(&event.kind, owner);
        let index = self.index;
        self.index += 1;
        result.map_err(|rule| VerifyError {
            index,
            event_type: event.type_name(),
            rule,
        })
    }

    fn check(&mut self, kind: &EventKind, owner: Option<&str>) -> Result<(), String> {
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
        let open = |set: &mut Open, id: &str, what: &str| {
            if set.contains_key(id) {
                return Err(format!("{what} {id:?} is already open"));
            }
            set.insert(id.to_owned(), owner.map(str::to_owned));
            Ok(())
        };
        // A continuation that names a subagent run names the opener's.
        let is_open = |set: &Open, id: &str, what: &str| match set.get(id) {
            None => Err(format!("no open {what} with id {id:?}")),
            Some(opener) if owner.is_some() && opener.as_deref() != owner => Err(format!(
                "subagentRunId {owner:?} does not match the {what} {id:?} opener's {opener:?}"
            )),
            Some(_) => Ok(()),
        };
        let close = |set: &mut Open, id: &str, what: &str| {
            is_open(set, id, what)?;
            set.remove(id);
            Ok::<(), String>(())
        };
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
                        "cannot send RUN_FINISHED while messages, tool calls, reasoning, steps or subagents are open: {:?}",
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
            K::SubagentStarted(e) => {
                let id = &e.subagent_run_id;
                if self.subagents.contains(id) {
                    return Err(format!("subagent {id:?} is already active"));
                }
                if self.subagents_done.contains(id) {
                    return Err(format!(
                        "subagent {id:?} has already finished in this run (ids are per invocation)"
                    ));
                }
                if let Some(parent) = &e.parent_subagent_run_id
                    && !self.subagents.contains(parent)
                    && !self.subagents_done.contains(parent)
                {
                    return Err(format!(
                        "parentSubagentRunId {parent:?} has not been started in this run"
                    ));
                }
                self.subagents.insert(id.clone());
            }
            K::SubagentFinished(e) => self.end_subagent(&e.subagent_run_id)?,
            K::SubagentError(e) => self.end_subagent(&e.subagent_run_id)?,
            _ => {}
        }
        Ok(())
    }

    fn end_subagent(&mut self, id: &str) -> Result<(), String> {
        if !self.subagents.remove(id) {
            return Err(format!("no active subagent with id {id:?}"));
        }
        self.subagents_done.insert(id.to_owned());
        Ok(())
    }

    fn open_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self
            .text
            .keys()
            .chain(self.tools.keys())
            .chain(self.reasoning_messages.keys())
            .chain(self.reasoning_spans.keys())
            .chain(self.steps.keys())
            .chain(&self.subagents)
            .map(String::as_str)
            .collect();
        ids.sort_unstable();
        ids
    }
}

/// The `subagentRunId` an event names, for the kinds whose ownership the
/// client checks.
fn subagent_of(kind: &EventKind) -> Option<&str> {
    use EventKind as K;
    match kind {
        K::TextMessageStart(e) => e.subagent_run_id.as_deref(),
        K::TextMessageContent(e) => e.subagent_run_id.as_deref(),
        K::TextMessageEnd(e) => e.subagent_run_id.as_deref(),
        K::ToolCallStart(e) => e.subagent_run_id.as_deref(),
        K::ToolCallArgs(e) => e.subagent_run_id.as_deref(),
        K::ToolCallEnd(e) => e.subagent_run_id.as_deref(),
        K::ReasoningStart(e) => e.subagent_run_id.as_deref(),
        K::ReasoningMessageStart(e) => e.subagent_run_id.as_deref(),
        K::ReasoningMessageContent(e) => e.subagent_run_id.as_deref(),
        K::ReasoningMessageEnd(e) => e.subagent_run_id.as_deref(),
        K::ReasoningEnd(e) => e.subagent_run_id.as_deref(),
        K::StepStarted(e) => e.subagent_run_id.as_deref(),
        K::StepFinished(e) => e.subagent_run_id.as_deref(),
        _ => None,
    }
}
