//! Task progress as the client shows it: the task-progress payloads of a
//! followed task are folded by a [`ProgressReducer`], and [`ProgressView`]
//! shows the result one of two ways.
//!
//! - **Bars** (stdout is a terminal): [`Row::all`] says what each row shows
//!   — a tracker's bar or spinner, its amount and mark — and
//!   [`Bars`] draws the rows: one per tracker (a bar with
//!   `progress/total`, or a spinner with the count when the total is
//!   unknown), then one `total` row; finished trackers stay, marked `✓`
//!   (completed) or `✗` (failed). Text printed meanwhile goes above the
//!   bars, whole lines at a time.
//! - **Plain lines** (a pipe, a file, `TERM=dumb`): one running line
//!   (`progress download 12/40 (30%) · scan 7 — total 12/40 (30%)`) each
//!   time it changes, and one final line per finished tracker
//!   (`progress ✓ download 40/40 completed`, `✗ … failed`, `· … ended` for
//!   a tracker that stopped reporting without a status).
//!
//! The total adds up the trackers whose total is known, unless the agent
//! sent an aggregate with a total. A status update that only carries
//! progress (its text is the agent's rendering of the same numbers) is
//! shown as progress instead of a `· working: …` line.
//!
//! The figures (amounts, percentages, the total) are computed here once, for
//! both.

use std::collections::HashSet;
use std::io::Write;

use switchboard_protocol::progress::{
    ProgressReducer, ProgressTracker, TrackerStatus, format_amount,
};
use switchboard_protocol::{StreamResponse, Task};

use crate::bars::Bars;
use crate::output::write_through;
use crate::sanitize::printable;

/// The progress of the followed task and how it is being shown.
#[derive(Debug)]
pub struct ProgressView {
    reducer: ProgressReducer,
    /// The bars (bar mode, until the end), drawn from the first tracker on.
    bars: Option<Bars>,
    /// Output held back while the bars are drawn: the start of a line.
    held: String,
    /// Finished trackers already reported with a final line (plain mode).
    reported: HashSet<String>,
    /// The last `progress …` line printed (plain mode).
    last_line: Option<String>,
}

impl ProgressView {
    /// Progress printed as plain lines.
    pub fn plain() -> Self {
        ProgressView {
            reducer: ProgressReducer::new(),
            bars: None,
            held: String::new(),
            reported: HashSet::new(),
            last_line: None,
        }
    }

    /// Progress drawn as `bars`, on the terminal the text goes to.
    pub fn bars(bars: Bars) -> Self {
        ProgressView {
            bars: Some(bars),
            ..ProgressView::plain()
        }
    }

    /// Folds a stream item; `true` when it carried a progress payload.
    pub fn fold(&mut self, ev: &StreamResponse) -> bool {
        self.reducer.apply(ev)
    }

    /// Folds a polled task; `true` when it carried a progress payload.
    pub fn fold_task(&mut self, task: &Task) -> bool {
        self.reducer.apply_task(task)
    }

    /// Shows `text` on the live status line; `false` when there is none
    /// (plain lines: the caller prints the status instead).
    pub fn set_status(&mut self, text: &str) -> bool {
        self.bars.as_mut().map(|b| b.set_status(text)).is_some()
    }

    /// Removes the live status line, if any.
    pub fn clear_status(&mut self) {
        if let Some(bars) = self.bars.as_mut() {
            bars.clear_status();
        }
    }

    /// Writes `text` to `out`, above the bars when they are drawn. The bars
    /// are redrawn after whole lines only, so while they are up a line's
    /// start is held back until its end arrives.
    pub fn write<W: Write>(&mut self, out: &mut W, text: &str) {
        let Some(bars) = self.bars.as_mut().filter(|b| b.is_drawn()) else {
            return write_through(out, text);
        };
        self.held.push_str(text);
        if let Some(end) = self.held.rfind('\n') {
            let lines: String = self.held.drain(..=end).collect();
            bars.print(&mut || write_through(out, &lines));
        }
    }

    /// Shows the current state: updates the bars, or prints the plain lines
    /// that changed. `mid_line`: `out` is in the middle of a line.
    pub fn show<W: Write>(&mut self, out: &mut W, mid_line: bool) {
        if self.reducer.is_empty() {
            return;
        }
        if let Some(bars) = self.bars.as_mut() {
            // Bars are drawn below whole lines: end a half-printed one.
            if mid_line && !bars.is_drawn() {
                write_through(out, "\n");
            }
            return bars.update(&self.reducer);
        }
        for line in self.plain_lines() {
            write_through(out, &printable(&format!("{line}\n")));
        }
    }

    /// Takes the bars down for good (they stay on screen as drawn last);
    /// later output goes below them, and nothing is drawn live any more.
    pub fn end<W: Write>(&mut self, out: &mut W) {
        if let Some(mut bars) = self.bars.take().filter(Bars::is_drawn) {
            bars.finish(&self.reducer);
            if !self.held.is_empty() {
                write_through(out, &format!("{}\n", self.held));
                self.held.clear();
            }
        }
    }

    /// The plain lines to print now: one final line per tracker that
    /// finished since the last call, then the running line if it changed.
    pub fn plain_lines(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        // A tracker that runs again (same id) may finish again.
        let active: Vec<&str> = self
            .reducer
            .active()
            .iter()
            .map(|t| t.id.as_str())
            .collect();
        self.reported.retain(|id| !active.contains(&id.as_str()));
        for t in self.reducer.finished() {
            if self.reported.insert(t.id.clone()) {
                lines.push(finished_line(t));
            }
        }
        if let Some(line) = running_line(&self.reducer)
            && self.last_line.as_ref() != Some(&line)
        {
            lines.push(line.clone());
            self.last_line = Some(line);
        }
        lines
    }
}

/// How a tracker ended (or that it has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Running,
    Completed,
    Failed,
    /// Stopped reporting (left the snapshots, or the task ended) without a
    /// terminal status.
    Ended,
}

impl Mark {
    fn of(t: &ProgressTracker, finished: bool) -> Mark {
        match t.status {
            Some(TrackerStatus::Completed) => Mark::Completed,
            Some(TrackerStatus::Failed) => Mark::Failed,
            _ if finished => Mark::Ended,
            _ => Mark::Running,
        }
    }

    pub fn glyph(self) -> &'static str {
        match self {
            Mark::Running => " ",
            Mark::Completed => "✓",
            Mark::Failed => "✗",
            Mark::Ended => "·",
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Mark::Running => "running",
            Mark::Completed => "completed",
            Mark::Failed => "failed",
            Mark::Ended => "ended",
        }
    }
}

/// `12/40 (30%)`, `7` (total unknown), `?/40`, or `` (nothing known).
fn amount(progress: Option<f64>, total: Option<f64>) -> String {
    match (progress, total) {
        (Some(p), Some(t)) => {
            let mut s = format!("{}/{}", format_amount(p), format_amount(t));
            if let Some(f) = fraction(p, t) {
                s.push_str(&format!(" ({}%)", percent(f)));
            }
            s
        }
        (Some(p), None) => format_amount(p),
        (None, Some(t)) => format!("?/{}", format_amount(t)),
        (None, None) => String::new(),
    }
}

/// `p / t` in `0..=1` when it means something.
fn fraction(p: f64, t: f64) -> Option<f64> {
    (t > 0.0 && p.is_finite() && t.is_finite()).then(|| (p / t).clamp(0.0, 1.0))
}

/// A fraction as a whole percentage, rounded down (100 only when done).
fn percent(f: f64) -> u64 {
    (f * 100.0).floor() as u64
}

/// `id amount`, e.g. `download 12/40 (30%)`.
fn tracker_text(t: &ProgressTracker) -> String {
    let a = amount(t.progress, t.total);
    if a.is_empty() {
        t.id.clone()
    } else {
        format!("{} {a}", t.id)
    }
}

/// The overall figure: the agent's aggregate when it has a total, else the
/// sum over every tracker seen (running and finished) whose total is known.
/// `None` when there is nothing to add up.
fn overall(reducer: &ProgressReducer) -> Option<(f64, Option<f64>)> {
    if let Some(a) = reducer.aggregate()
        && let (Some(p), Some(t)) = (a.progress, a.total)
    {
        return Some((p, Some(t)));
    }
    let known: Vec<&ProgressTracker> = reducer
        .finished()
        .iter()
        .chain(reducer.active())
        .filter(|t| t.total.is_some())
        .collect();
    if known.is_empty() {
        return reducer
            .aggregate()
            .and_then(|a| a.progress)
            .map(|p| (p, None));
    }
    let progress = known.iter().filter_map(|t| t.progress).sum();
    let total = known.iter().filter_map(|t| t.total).sum();
    Some((progress, Some(total)))
}

/// The plain running line, when a tracker is active:
/// `progress download 12/40 (30%) · index 3/25 (12%) · scan 7 — total 15/65 (23%)`.
fn running_line(reducer: &ProgressReducer) -> Option<String> {
    if reducer.active().is_empty() {
        return None;
    }
    let trackers: Vec<String> = reducer.active().iter().map(tracker_text).collect();
    let mut line = format!("progress {}", trackers.join(" · "));
    if let Some((p, t)) = overall(reducer) {
        line.push_str(&format!(" — total {}", amount(Some(p), t)));
    }
    Some(line)
}

/// The plain final line of a tracker: `progress ✓ download 40/40 completed`.
fn finished_line(t: &ProgressTracker) -> String {
    let mark = Mark::of(t, true);
    let a = amount(t.progress, t.total);
    let a = a.split(" (").next().unwrap_or_default();
    let a = if a.is_empty() {
        String::new()
    } else {
        format!(" {a}")
    };
    format!("progress {} {}{a} {}", mark.glyph(), t.id, mark.word())
}

/// What one row of the live display shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The tracker id, or `total`.
    pub label: String,
    /// `Some(fraction)` draws a bar, `None` a spinner.
    pub fraction: Option<f64>,
    /// Still running, or how it ended.
    pub mark: Mark,
    /// The amount and the tracker's message, e.g. `12/40 30%  download: 12 files`.
    pub text: String,
}

impl Row {
    fn tracker(t: &ProgressTracker, finished: bool) -> Row {
        let mark = Mark::of(t, finished);
        let fraction = t
            .total
            .map(|total| fraction(t.progress.unwrap_or(0.0), total).unwrap_or(1.0));
        let mut text = match (t.progress, t.total, fraction) {
            (p, Some(total), Some(f)) => format!(
                "{}/{} {:>3}%",
                format_amount(p.unwrap_or(0.0)),
                format_amount(total),
                percent(f)
            ),
            (p, _, _) => p.map(format_amount).unwrap_or_default(),
        };
        let note = match (mark, t.message.as_deref()) {
            (Mark::Failed | Mark::Ended, Some(m)) => format!("{} ({m})", mark.word()),
            (Mark::Failed | Mark::Ended, None) => mark.word().to_string(),
            (_, Some(m)) => m.to_string(),
            (_, None) => String::new(),
        };
        if !note.is_empty() {
            text.push_str("  ");
            text.push_str(&note);
        }
        Row {
            label: printable(&t.id).into_owned(),
            fraction,
            mark,
            text: printable(&text).into_owned(),
        }
    }

    /// The `total` row: finished once no tracker is running.
    fn total(reducer: &ProgressReducer) -> Row {
        let done = reducer.active().is_empty();
        let (p, t) = overall(reducer).unwrap_or((0.0, None));
        let fraction = t.map(|t| fraction(p, t).unwrap_or(1.0));
        let mut text = match (t, fraction) {
            (Some(t), Some(f)) => format!(
                "{}/{} {:>3}%",
                format_amount(p),
                format_amount(t),
                percent(f)
            ),
            _ => format_amount(p),
        };
        if let Some(m) = reducer.aggregate().and_then(|a| a.message.as_deref()) {
            text.push_str("  ");
            text.push_str(m);
        }
        // Done: failed if one failed, ended if one just stopped reporting,
        // completed if all completed.
        let marks: Vec<Mark> = reducer
            .finished()
            .iter()
            .map(|t| Mark::of(t, true))
            .collect();
        let mark = if !done {
            Mark::Running
        } else if marks.contains(&Mark::Failed) {
            Mark::Failed
        } else if marks.contains(&Mark::Ended) {
            Mark::Ended
        } else {
            Mark::Completed
        };
        Row {
            label: "total".to_string(),
            fraction,
            mark,
            text: printable(&text).into_owned(),
        }
    }

    /// A row per tracker (finished ones first, then the running ones), then
    /// the total.
    pub fn all(reducer: &ProgressReducer) -> Vec<Row> {
        let mut rows: Vec<Row> = reducer
            .finished()
            .iter()
            .map(|t| Row::tracker(t, true))
            .chain(reducer.active().iter().map(|t| Row::tracker(t, false)))
            .collect();
        rows.push(Row::total(reducer));
        rows
    }
}
