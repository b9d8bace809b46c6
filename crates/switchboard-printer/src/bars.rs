//! Live progress bars with `indicatif`: one row per tracker (a bar when its
//! total is known, a spinner with the count when not), then the `total` row,
//! drawn below the command's output and redrawn in place.
//!
//! [`Bars`] only draws: what each row shows is decided by
//! [`Row::all`](crate::progress::Row::all). It draws on any
//! `ProgressDrawTarget`: the real terminal (`ProgressDrawTarget::stdout()`),
//! or, in tests, a terminal emulator whose screen can be read back.

use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use switchboard_protocol::progress::ProgressReducer;

use crate::progress::{Mark, Row};
use crate::status_line::StatusLine;

/// Bar positions are fractions of this (amounts may be fractional).
const SCALE: u64 = 10_000;
/// Spinner frame interval.
const TICK: Duration = Duration::from_millis(120);

/// One drawn row.
#[derive(Debug)]
struct Drawn {
    label: String,
    bar: ProgressBar,
    /// What it shows now (`None`: nothing yet).
    shown: Option<Row>,
}

/// The display.
#[derive(Debug)]
pub struct Bars {
    multi: MultiProgress,
    rows: Vec<Drawn>,
    total: Option<Drawn>,
    /// Width of the label column (the longest label so far).
    label_width: usize,
    /// How often spinners turn on their own (`None`: only when redrawn).
    tick: Option<Duration>,
    /// The live status line above the bars, from the first status on.
    status: Option<StatusLine>,
    /// When the command started: the status line's clock.
    started: Instant,
}

impl Bars {
    /// Bars drawn on `target` (`ProgressDrawTarget::stdout()` for the
    /// terminal); nothing is drawn before the first [`Bars::update`], so
    /// they can be made before it is known whether any will be needed.
    pub fn new(target: ProgressDrawTarget) -> Self {
        Bars {
            multi: MultiProgress::with_draw_target(target),
            rows: Vec::new(),
            total: None,
            label_width: 0,
            tick: Some(TICK),
            status: None,
            started: Instant::now(),
        }
    }

    /// Bars whose spinners turn only when redrawn, never from indicatif's
    /// ticker thread: a screen read between two updates is then exactly
    /// what the last update drew.
    #[cfg(test)]
    pub fn without_ticks(mut self) -> Self {
        self.tick = None;
        self
    }

    /// Whether anything is drawn yet (the first update or status draws).
    pub fn is_drawn(&self) -> bool {
        self.total.is_some() || self.status.is_some()
    }

    /// Shows `text` on the live status line (the top row), drawing it the
    /// first time.
    pub fn set_status(&mut self, text: &str) {
        match &self.status {
            Some(line) => {
                line.set(text);
            }
            None => {
                let bar = self.multi.insert(0, StatusLine::bar(self.started, text));
                self.status = Some(StatusLine::drawn(bar, self.tick));
            }
        }
    }

    /// Removes the live status line (it only said that the client waits).
    pub fn clear_status(&mut self) {
        if let Some(line) = self.status.take() {
            line.remove(&self.multi);
            // Nothing else drawn: take the line off the screen now (a
            // redraw could be skipped by the rate limit, and later output
            // is written straight to the terminal).
            if self.total.is_none() {
                let _ = self.multi.clear();
            }
        }
    }

    /// `⠋ label [=====>    ] text` running, `✓ label [==========] text`
    /// once finished; rows without a total have no bar.
    fn style(row: &Row) -> ProgressStyle {
        let mark = match row.mark {
            Mark::Running => "{spinner:.cyan}",
            other => other.glyph(),
        };
        let bar = match (row.fraction.is_some(), row.mark) {
            (false, _) => "",
            (true, Mark::Running) => " [{bar:30.cyan/blue}]",
            (true, Mark::Completed) => " [{bar:30.green}]",
            (true, Mark::Failed) => " [{bar:30.red}]",
            (true, Mark::Ended) => " [{bar:30.yellow}]",
        };
        ProgressStyle::with_template(&format!("{mark} {{prefix}}{bar} {{wide_msg}}"))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ")
    }

    /// Brings one drawn row to `row`; `relabel` when the label column
    /// got wider.
    fn apply(drawn: &mut Drawn, row: Row, width: usize, relabel: bool, tick: Option<Duration>) {
        let bar = &drawn.bar;
        if relabel {
            bar.set_prefix(format!("{:<width$}", row.label));
        }
        let old = drawn.shown.take();
        if old.as_ref() == Some(&row) {
            drawn.shown = old;
            return;
        }
        let was_finished = old.as_ref().is_some_and(|o| o.mark != Mark::Running);
        if was_finished && row.mark == Mark::Running {
            // The same id runs again.
            bar.reset();
        }
        let restyle = old
            .as_ref()
            .is_none_or(|o| o.mark != row.mark || o.fraction.is_some() != row.fraction.is_some());
        if restyle {
            bar.set_style(Self::style(&row));
        }
        if let Some(f) = row.fraction {
            bar.set_position((f * SCALE as f64).round() as u64);
        }
        bar.set_message(row.text.clone());
        match row.mark {
            Mark::Running if restyle => {
                if let Some(tick) = tick {
                    bar.enable_steady_tick(tick);
                }
            }
            Mark::Running => {}
            _ => {
                // `abandon` keeps the position (`finish` would fill the bar).
                bar.disable_steady_tick();
                bar.abandon();
            }
        }
        drawn.shown = Some(row);
    }

    /// A bar already showing `row`, so that it is never drawn half set up.
    fn new_bar(row: &Row, width: usize) -> ProgressBar {
        let position = row
            .fraction
            .map_or(0, |f| (f * SCALE as f64).round() as u64);
        ProgressBar::new(SCALE)
            .with_style(Self::style(row))
            .with_prefix(format!("{:<width$}", row.label))
            .with_message(row.text.clone())
            .with_position(position)
    }

    /// Redraws for the reducer's current state.
    pub fn update(&mut self, reducer: &ProgressReducer) {
        let mut rows = Row::all(reducer);
        let widest = rows.iter().map(|r| r.label.chars().count()).max();
        let width = self.label_width.max(widest.unwrap_or(0));
        let relabel = width != self.label_width;
        self.label_width = width;
        let Some(total_row) = rows.pop() else {
            return;
        };
        let total = self.total.get_or_insert_with(|| Drawn {
            label: total_row.label.clone(),
            bar: self.multi.add(Self::new_bar(&total_row, width)),
            shown: None,
        });
        for row in rows {
            let i = match self.rows.iter().position(|d| d.label == row.label) {
                Some(i) => i,
                None => {
                    let bar = self
                        .multi
                        .insert_before(&total.bar, Self::new_bar(&row, width));
                    self.rows.push(Drawn {
                        label: row.label.clone(),
                        bar,
                        shown: None,
                    });
                    self.rows.len() - 1
                }
            };
            if let Some(d) = self.rows.get_mut(i) {
                Self::apply(d, row, width, relabel, self.tick);
            }
        }
        Self::apply(total, total_row, width, relabel, self.tick);
    }

    /// Runs `print` with the bars taken down, then redraws them: what it
    /// prints lands above the bars.
    pub fn print(&mut self, print: &mut dyn FnMut()) {
        self.multi.suspend(print);
    }

    /// Draws the final state and leaves the bars on screen, for good.
    pub fn finish(&mut self, reducer: &ProgressReducer) {
        if let Some(line) = &self.status {
            line.freeze();
        }
        if !reducer.is_empty() {
            self.update(reducer);
        }
        // Whatever is still running (the task stopped for input, or the
        // stream broke) stays as it was last drawn.
        for d in self.rows.iter().chain(&self.total) {
            if !d.bar.is_finished() {
                d.bar.disable_steady_tick();
                d.bar.abandon();
            }
        }
    }
}
