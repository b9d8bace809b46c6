//! # switchboard-printer
//!
//! Prints what an A2A agent says, for people or for scripts — the output
//! half of `switchboard client`, usable by any program that talks to agents
//! with `switchboard-client`.
//!
//! [`Output`] renders agent cards, tasks, messages, stream events, task
//! lists and failures:
//!
//! - **for people**: an artifact's text printed inline as its chunks arrive
//!   (later chunks keep the artifact's name); parts that carry AG-UI hints
//!   (reasoning, code, tool calls and their results) on labelled lines of
//!   their own ([`parts`]); status messages as `· working: …`; everything an
//!   agent supplies stripped of what a terminal would obey ([`sanitize`]:
//!   control and escape sequences, bidi overrides);
//! - **for scripts** (`json`): one line `{"type": …, "data": …}` per item,
//!   `data` being the item's A2A 1.0 JSON.
//!
//! Task progress (the task-progress extension's trackers) goes through a
//! [`ProgressView`]: live bars below the output on a terminal
//! ([`ProgressView::bars`], drawn by [`bars`] with the live status line of
//! [`status_line`] above them), or plain lines printed once per change
//! elsewhere ([`ProgressView::plain`]). Whether a terminal can draw bars is
//! [`draws_bars`]. AG-UI events read from a stream print one per line
//! ([`agui`]). A task left waiting for the user gets the command that goes
//! on ([`hints`]); a refusal the agent card explains, what the card offers
//! instead ([`offers`]).
//!
//! Write errors (a closed pipe, as in `| head`) are ignored: there is
//! nobody left to tell.

pub mod agui;
pub mod bars;
pub mod hints;
pub mod offers;
pub mod output;
pub mod parts;
pub mod progress;
pub mod push_config;
pub mod sanitize;
pub mod status_line;
#[cfg(test)]
mod tests;

use std::ffi::OsStr;

pub use output::{Failure, Output, Seen};
pub use progress::ProgressView;

/// `true` when progress is drawn as bars: stdout is a terminal (`is_tty`)
/// that can draw them (`TERM` is not `dumb`).
pub fn draws_bars(is_tty: bool, term: Option<&OsStr>) -> bool {
    is_tty && term.is_none_or(|t| t != "dumb")
}
