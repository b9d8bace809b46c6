//! The live status line: what a followed task is doing now, as one line
//! redrawn in place on a terminal instead of one printed line per status.
//!
//! An agent that reports as it goes (`/long 30` in the demo sends a
//! `working` status every half second) would otherwise fill the screen
//! with lines that each replace the previous one's meaning. On a terminal
//! the client shows them as one row above the progress bars:
//!
//! ```text
//! ⠹ 12s · working: working: 24/60 half-seconds
//! ```
//!
//! a spinner (it keeps turning while nothing arrives, so a stalled agent
//! looks different from a hung client), the time since the command started
//! and the latest status text, made printable ([`printable`]) and cut to one
//! line. When the command ends the spinner stops and the row stays with the
//! final elapsed time; for `send`, whose line only says that the client is
//! waiting, it is removed once the answer is there.
//!
//! Only `working` and `submitted` statuses go to the line: a state a person
//! must act on (input-required, auth-required) or a final one is printed as
//! a line of its own. Off a terminal, and with `--json`, nothing here is
//! used: every status is printed.
//!
//! The row is part of the [`Bars`](crate::bars::Bars)' `MultiProgress`, so
//! it shares its redraw limit (the draw target's rate, 10 per second) and
//! the rule that text printed meanwhile lands above it.

use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::sanitize::printable;

/// One live line: spinner, elapsed time, text.
#[derive(Debug)]
pub struct StatusLine {
    bar: ProgressBar,
}

impl StatusLine {
    /// The bar of a line showing `text`, its clock started at `started`
    /// (the command's start). It draws nowhere until added to the display;
    /// then wrap it with [`StatusLine::drawn`].
    pub fn bar(started: Instant, text: &str) -> ProgressBar {
        // Hidden, not indicatif's default stderr: nothing may reach the
        // terminal except through the display, or it stays there as a
        // stray line the display does not know about.
        ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
            .with_style(running_style())
            .with_elapsed(started.elapsed())
            .with_message(one_line(text))
    }

    /// Wraps a bar made by [`StatusLine::bar`] once it is in the display,
    /// draws it, and starts its spinner turning every `tick` when given
    /// (tests draw without ticks, so that a screen shows exactly what was
    /// set).
    pub fn drawn(bar: ProgressBar, tick: Option<Duration>) -> Self {
        bar.tick();
        if let Some(tick) = tick {
            bar.enable_steady_tick(tick);
        }
        StatusLine { bar }
    }

    /// Shows `text` now; returns whether it changed.
    pub fn set(&self, text: &str) -> bool {
        let text = one_line(text);
        if self.bar.message() == text {
            return false;
        }
        self.bar.set_message(text);
        // Without a ticker (tests) nothing else redraws the line.
        self.bar.tick();
        true
    }

    /// Stops the spinner and leaves the line as it is, with the final
    /// elapsed time.
    pub fn freeze(&self) {
        self.bar.disable_steady_tick();
        self.bar.set_style(frozen_style());
        self.bar.abandon();
    }

    /// Takes the line out of `multi`, the display it was added to (which
    /// must then be cleared or redrawn to take it off the screen).
    pub fn remove(self, multi: &MultiProgress) {
        self.bar.disable_steady_tick();
        self.bar.finish_and_clear();
        multi.remove(&self.bar);
    }
}

/// `⠹ 12s · working: …`
fn running_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner:.cyan} {elapsed} · {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .tick_strings(&TICKS)
}

/// `  12s · working: …`: the spinner's cell left blank.
fn frozen_style() -> ProgressStyle {
    ProgressStyle::with_template("  {elapsed} · {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// The spinner's frames (braille dots, one cell wide everywhere), then the
/// blank that indicatif shows, as the last tick string, once finished.
const TICKS: [&str; 11] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏", " "];

/// `text` made printable, on one line.
fn one_line(text: &str) -> String {
    let text = printable(text);
    let words: Vec<&str> = text.split_whitespace().collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_one_printable_line() {
        assert_eq!(one_line("a\nb\t c\x1b[2Jd"), "a b cd");
    }
}
