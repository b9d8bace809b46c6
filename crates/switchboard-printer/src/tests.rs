//! Unit tests of the printer: inline artifacts, JSON Lines, plain progress lines, and the live
//! bars drawn on a `vt100` terminal emulator and read back as a screen.

use std::io::Write;
use std::sync::{Arc, Mutex};

use indicatif::{ProgressDrawTarget, TermLike};
use serde_json::{Value, json};
use switchboard_protocol::progress::{ProgressReducer, TASK_PROGRESS_URI};
use switchboard_protocol::{AgentCard, Message, StreamResponse, TaskState};

use crate::bars::Bars;
use crate::draws_bars;
use crate::output::{Output, progress_only};
use crate::progress::{Mark, ProgressView, Row};

#[test]
fn streamed_artifact_chunks_print_inline() {
    let ev = |append: bool, last: bool, text: &str| {
        let v = json!({"artifactUpdate": {"taskId": "t", "contextId": "c",
            "artifact": {"artifactId": "a", "name": "echo", "parts": [{"text": text}]},
            "append": append, "lastChunk": last}});
        serde_json::from_value::<StreamResponse>(v).unwrap_or_else(|e| panic!("{e}"))
    };
    let mut buf = Vec::new();
    let mut out = Output::new(false, &mut buf, std::io::sink(), None);
    out.event(&ev(false, false, "echo: "), None);
    out.event(&ev(true, false, "hel"), None);
    out.event(&ev(true, true, "lo"), None);
    out.event(&ev(false, false, "second"), None);
    out.close_artifact();
    assert_eq!(
        String::from_utf8_lossy(&buf),
        "  ▸ echo: echo: hello\n  ▸ echo: second\n"
    );
}

/// An agent cannot drive the user's terminal: its text is printed without
/// the title-setting OSC and the screen-clearing CSI it carries, in every
/// place agent text shows (artifact text, status messages, ids), while JSON
/// output keeps the text as sent (JSON escapes it).
#[test]
fn agent_text_cannot_drive_the_terminal() {
    let hostile = "\x1b]0;title\x07\x1b[2Jhi\u{9b}31m\r\u{202e}\u{2066}";
    let events = [
        json!({"artifactUpdate": {"taskId": "t", "contextId": "c",
            "artifact": {"artifactId": "a", "name": hostile, "parts": [{"text": hostile}]},
            "lastChunk": true}}),
        json!({"statusUpdate": {"taskId": hostile, "contextId": "c", "status": {
            "state": "TASK_STATE_FAILED",
            "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": hostile}]}}}}),
    ]
    .map(|v| serde_json::from_value::<StreamResponse>(v).unwrap_or_else(|e| panic!("{e}")));
    let mut buf = Vec::new();
    let mut out = Output::new(false, &mut buf, std::io::sink(), None);
    for ev in &events {
        out.event(ev, None);
    }
    out.close_artifact();
    let printed = String::from_utf8_lossy(&buf);
    assert!(printed.contains("hi"), "{printed}");
    assert!(
        !printed
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)),
        "{printed:?}"
    );
    assert!(
        !printed.contains("title") && !printed.contains("31m"),
        "{printed:?}"
    );

    let mut buf = Vec::new();
    let mut out = Output::new(true, &mut buf, std::io::sink(), None);
    out.event(&events[0], None);
    let line: Value = serde_json::from_slice(&buf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(line["data"]["artifact"]["parts"][0]["text"], hostile);
}

/// A chunk that arrives after another item closed its artifact's line is
/// labelled by the artifact's name (only the first chunk carries it), and
/// hinted parts render as labelled lines, not JSON.
#[test]
fn later_chunks_keep_the_artifact_name_and_hints_render() {
    let events = [
        json!({"artifactUpdate": {"taskId": "t", "contextId": "c",
            "artifact": {"artifactId": "a-1", "name": "report", "parts": [{"text": "part one"}]}}}),
        json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {
            "state": "TASK_STATE_WORKING",
            "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "still going"}]}}}}),
        json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "append": true, "lastChunk": true,
            "artifact": {"artifactId": "a-1", "parts": [
                {"data": {"id": "c1", "name": "lookup", "arguments": {"q": "x"}},
                 "metadata": {"agui_event_type": "tool_call", "agui_tool_call_id": "c1", "agui_tool_name": "lookup"}},
                {"data": {"tool_call_id": "c1", "content": "found", "error": ""},
                 "metadata": {"agui_event_type": "tool_call", "agui_tool_call_id": "c1", "agui_is_error": false}}
            ]}}}),
    ]
    .map(|v| serde_json::from_value::<StreamResponse>(v).unwrap_or_else(|e| panic!("{e}")));
    let mut buf = Vec::new();
    let mut out = Output::new(false, &mut buf, std::io::sink(), None);
    for ev in &events {
        out.event(ev, None);
    }
    let printed = String::from_utf8_lossy(&buf);
    assert!(printed.contains("  ▸ report: part one\n"), "{printed}");
    assert!(
        printed.contains("  ▸ report: \n    → lookup({\"q\":\"x\"})\n    ← lookup: found\n"),
        "{printed}"
    );
    assert!(!printed.contains("a-1"), "{printed}");
}

/// The card shows how to get in: each scheme with the flag that answers
/// it, and which are required (a refusal points the user there).
#[test]
fn the_card_shows_its_security_schemes() {
    let card: AgentCard = serde_json::from_value(json!({
        "name": "a", "description": "", "version": "1",
        "supportedInterfaces": [],
        "securitySchemes": {
            "apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}}
        },
        "securityRequirements": [{"schemes": {"apiKey": {"list": []}}}, {"schemes": {"bearer": {"list": []}}}],
        "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    let mut buf = Vec::new();
    Output::new(false, &mut buf, std::io::sink(), None).card(&card);
    let printed = String::from_utf8_lossy(&buf);
    assert!(
        printed.contains(
            "  security:\n    apiKey: API key in the X-API-Key header; pass --api-key\n    \
             bearer: HTTP bearer token (JWT); pass --token\n    required: apiKey, or bearer\n"
        ),
        "{printed}"
    );
}

/// A working status update carrying these trackers (and its text).
fn progress_update(state: &str, text: &str, trackers: Value) -> StreamResponse {
    let md = json!({ TASK_PROGRESS_URI: { "trackers": trackers } });
    let v = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
        "status": {"state": state, "message": {"messageId": "m", "role": "ROLE_AGENT",
            "parts": [{"text": text}], "metadata": md}},
        "metadata": md}});
    serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
}

fn plain_output(buf: &mut Vec<u8>) -> Output<&mut Vec<u8>, std::io::Sink> {
    Output::new(false, buf, std::io::sink(), Some(ProgressView::plain()))
}

#[test]
fn plain_progress_lines_print_once_per_change() {
    let mut buf = Vec::new();
    let mut out = plain_output(&mut buf);
    let working = "TASK_STATE_WORKING";
    let started = json!([{"id": "download", "progress": 12, "total": 40},
                         {"id": "index", "progress": 3, "total": 25},
                         {"id": "scan", "progress": 7}]);
    out.event(
        &progress_update(working, "download 12/40, scan 7", started.clone()),
        None,
    );
    // The same numbers again: nothing new to print.
    out.event(&progress_update(working, "again", started), None);
    out.event(
        &progress_update(
            working,
            "download done",
            json!([{"id": "download", "progress": 40, "total": 40, "status": "completed"},
                   {"id": "index", "progress": 4, "total": 25, "status": "failed"},
                   {"id": "scan", "progress": 9}]),
        ),
        None,
    );
    // The task ends while `scan` still runs: it ended without a status.
    let done = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
        "status": {"state": "TASK_STATE_COMPLETED"}}});
    out.event(
        &serde_json::from_value(done).unwrap_or_else(|e| panic!("{e}")),
        None,
    );
    assert_eq!(
        String::from_utf8_lossy(&buf),
        "progress download 12/40 (30%) · index 3/25 (12%) · scan 7 — total 15/65 (23%)\n\
         progress ✓ download 40/40 completed\n\
         progress ✗ index 4/25 failed\n\
         progress scan 9 — total 44/65 (67%)\n\
         progress · scan 9 ended\n"
    );
}

#[test]
fn status_lines_that_only_restate_progress_are_not_printed() {
    assert!(progress_only(true, TaskState::Working));
    assert!(!progress_only(false, TaskState::Working));
    assert!(!progress_only(true, TaskState::Failed));
    assert!(!progress_only(true, TaskState::InputRequired));
    // Without a progress view the status line prints as before.
    let mut buf = Vec::new();
    let mut out = Output::new(false, &mut buf, std::io::sink(), None);
    out.event(
        &progress_update(
            "TASK_STATE_WORKING",
            "download 1/40",
            json!([{"id": "download", "progress": 1, "total": 40}]),
        ),
        None,
    );
    assert_eq!(
        String::from_utf8_lossy(&buf),
        "  · working: download 1/40\n"
    );
}

#[test]
fn rows_are_bars_or_spinners_with_marks() {
    let mut r = ProgressReducer::new();
    let md = |trackers: Value| {
        serde_json::from_value::<switchboard_protocol::Metadata>(
            json!({ TASK_PROGRESS_URI: { "trackers": trackers } }),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
    r.apply_metadata(&md(json!([
        {"id": "download", "progress": 10, "total": 40, "message": "10 files"},
        {"id": "scan", "progress": 7},
        {"id": "odd", "progress": 0.5, "total": 2}
    ])));
    let rows = Row::all(&r);
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0].label, "download");
    assert_eq!(rows[0].fraction, Some(0.25));
    assert_eq!(rows[0].mark, Mark::Running);
    assert_eq!(rows[0].text, "10/40  25%  10 files");
    assert_eq!(rows[1].fraction, None);
    assert_eq!(rows[1].text, "7");
    assert_eq!(rows[2].text, "0.5/2  25%");
    assert_eq!(rows[3].label, "total");
    assert_eq!(rows[3].text, "10.5/42  25%");
    assert_eq!(rows[3].mark, Mark::Running);
    r.apply_metadata(&md(json!([
        {"id": "download", "progress": 40, "total": 40, "status": "completed"},
        {"id": "scan", "progress": 9, "status": "failed", "message": "disk full"}
    ])));
    let rows = Row::all(&r);
    let by = |id: &str| rows.iter().find(|row| row.label == id).cloned();
    let download = by("download").unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(
        (download.mark, download.fraction),
        (Mark::Completed, Some(1.0))
    );
    let scan = by("scan").unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(scan.mark, Mark::Failed);
    assert_eq!(scan.text, "9  failed (disk full)");
    // `odd` left the snapshot without a status.
    let odd = by("odd").unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(odd.mark, Mark::Ended);
    let total = by("total").unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(total.mark, Mark::Failed);
    assert_eq!(total.text, "40.5/42  96%");
}

#[test]
fn json_lines_unwrap_the_stream_wrapper() {
    let mut buf = Vec::new();
    let mut out = Output::new(true, &mut buf, std::io::sink(), None);
    let msg = StreamResponse::Message(Message::agent_text("hi"));
    out.event(&msg, Some(7));
    let v: Value = serde_json::from_slice(&buf).unwrap_or_default();
    assert_eq!(v["type"], "message");
    assert_eq!(v["seq"], 7);
    assert_eq!(v["data"]["parts"][0]["text"], "hi");
}

#[test]
fn bars_are_drawn_only_on_a_capable_terminal() {
    use std::ffi::OsStr;
    assert!(draws_bars(true, Some(OsStr::new("xterm-256color"))));
    assert!(draws_bars(true, None));
    assert!(!draws_bars(true, Some(OsStr::new("dumb"))));
    assert!(!draws_bars(false, Some(OsStr::new("xterm-256color"))));
    assert!(!draws_bars(false, None));
}

/// A terminal for the bar tests: a `vt100` emulator that both the command's
/// text (through [`Write`]) and the bars (through indicatif's [`TermLike`])
/// draw on, as they would on a real terminal; [`Screen::lines`] reads back
/// what a person would see.
#[derive(Clone)]
struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
    /// Every byte fed, for failure messages.
    raw: Arc<Mutex<Vec<u8>>>,
    rows: u16,
    cols: u16,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Screen({}x{})", self.rows, self.cols)
    }
}

impl Screen {
    fn new(rows: u16, cols: u16) -> Screen {
        let size = |n: u16| std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN);
        Screen {
            parser: Arc::new(Mutex::new(vt100::Parser::new(size(rows), size(cols), 0))),
            raw: Arc::default(),
            rows,
            cols,
        }
    }

    fn feed(&self, bytes: &[u8]) {
        if let Ok(mut p) = self.parser.lock() {
            p.process(bytes);
        }
        if let Ok(mut raw) = self.raw.lock() {
            raw.extend_from_slice(bytes);
        }
    }

    /// The screen's rows down to the last non-blank one, trailing blanks
    /// trimmed.
    fn lines(&self) -> Vec<String> {
        let parser = self.parser.lock().unwrap_or_else(|e| e.into_inner());
        let mut lines: Vec<String> = parser
            .screen()
            .rows(0, self.cols)
            .map(|l| l.trim_end().to_string())
            .collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    }

    /// Moves the cursor `n` cells in `direction` (the final byte of the
    /// CSI sequence: A up, B down, C right, D left); nothing for 0.
    fn move_cursor(&self, n: usize, direction: char) -> std::io::Result<()> {
        if n > 0 {
            self.feed(format!("\x1b[{n}{direction}").as_bytes());
        }
        Ok(())
    }

    /// What was fed so far, as text.
    fn raw(&self) -> String {
        let raw = self.raw.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&raw).into_owned()
    }

    /// The row of `label` (rows are `MARK LABEL …`), without its mark: the
    /// spinner of a running row turns on its own (and is blank once the
    /// bars are abandoned).
    fn row(&self, label: &str) -> String {
        let lines = self.lines();
        lines
            .iter()
            .map(|l| l.chars().skip(2).collect::<String>())
            .find(|l| l.split_whitespace().next() == Some(label))
            .unwrap_or_else(|| {
                panic!(
                    "no {label:?} row in\n{}\n{:?}",
                    lines.join("\n"),
                    self.raw()
                )
            })
    }
}

/// The command's text, as a terminal gets it: the tty turns `\n` into
/// `\r\n` (`onlcr`).
impl Write for Screen {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf).replace('\n', "\r\n");
        self.feed(text.as_bytes());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The bars, as ANSI control sequences (what `console::Term` writes).
impl TermLike for Screen {
    fn width(&self) -> u16 {
        self.cols
    }
    fn height(&self) -> u16 {
        self.rows
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.move_cursor(n, 'A')
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.move_cursor(n, 'B')
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.move_cursor(n, 'C')
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.move_cursor(n, 'D')
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.feed(format!("{s}\r\n").as_bytes());
        Ok(())
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.feed(s.as_bytes());
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        self.feed(b"\r\x1b[2K");
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An output whose text and bars both go to `screen`.
fn terminal_output(screen: &Screen) -> Output<Screen, std::io::Sink> {
    let target = ProgressDrawTarget::term_like(Box::new(screen.clone()));
    let bars = Bars::new(target).without_ticks();
    Output::new(
        false,
        screen.clone(),
        std::io::sink(),
        Some(ProgressView::bars(bars)),
    )
}

fn stream_item(v: Value) -> StreamResponse {
    serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
}

fn artifact_chunk(text: &str, append: bool, last: bool) -> StreamResponse {
    stream_item(json!({"artifactUpdate": {"taskId": "t", "contextId": "c",
        "artifact": {"artifactId": "a", "name": "report", "parts": [{"text": text}]},
        "append": append, "lastChunk": last}}))
}

/// `line` with the live status line's elapsed seconds (`12s`) as `Ns`:
/// how long a test takes is not what it checks.
fn without_elapsed(line: &str) -> String {
    match line.split_once("s · ") {
        Some((head, tail)) => {
            let digits = head.len() - head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            if digits == 0 {
                return line.to_string();
            }
            format!("{}Ns · {tail}", &head[..head.len() - digits])
        }
        None => line.to_string(),
    }
}

#[test]
fn bars_draw_below_the_output_and_stay_when_the_task_ends() {
    let screen = Screen::new(24, 100);
    let mut out = terminal_output(&screen);
    let working = "TASK_STATE_WORKING";
    out.event(
        &stream_item(json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": working, "message": {"messageId": "m0", "role": "ROLE_AGENT",
                "parts": [{"text": "starting two jobs"}]}}}})),
        None,
    );
    // No tracker yet: no bars; the status is on the live line (spinner,
    // elapsed time, text).
    let lines = screen.lines();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    let live = without_elapsed(&lines[0]);
    let spinner = live.chars().next().unwrap_or(' ');
    assert!("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏".contains(spinner), "{live}");
    assert_eq!(
        &live[spinner.len_utf8()..],
        " Ns · working: starting two jobs"
    );

    out.event(
        &progress_update(
            working,
            "download 12/40, scan 7",
            json!([{"id": "download", "progress": 12, "total": 40, "message": "12 files"},
                   {"id": "scan", "progress": 7}]),
        ),
        None,
    );
    let lines = screen.lines();
    assert_eq!(lines.len(), 4, "{lines:#?}\n{:?}", screen.raw());
    assert!(
        lines[0].ends_with(" · working: starting two jobs"),
        "{lines:#?}"
    );
    // 12/40 of a 30-wide bar: 9 filled, the head, then blanks.
    assert_eq!(
        screen.row("download"),
        format!(
            "download [{}>{}] 12/40  30%  12 files",
            "=".repeat(9),
            " ".repeat(20)
        )
    );
    // No total known: a spinner with the count, no bar.
    assert_eq!(screen.row("scan"), "scan     7");
    assert_eq!(
        screen.row("total"),
        format!("total    [{}>{}] 12/40  30%", "=".repeat(9), " ".repeat(20))
    );

    // Streamed text lands above the bars, a whole line at a time.
    out.event(&artifact_chunk("downloaded ", false, false), None);
    assert_eq!(screen.lines().len(), 4, "a half line is held back");
    out.event(&artifact_chunk("40 files", true, true), None);
    let lines = screen.lines();
    assert_eq!(lines[0], "  ▸ report: downloaded 40 files", "{lines:#?}");
    assert_eq!(lines.len(), 5, "{lines:#?}");
    assert!(lines[1].contains("working: starting"), "{lines:#?}");
    assert!(lines[2].contains("download"), "{lines:#?}");

    out.event(
        &progress_update(
            working,
            "done",
            json!([{"id": "download", "progress": 40, "total": 40, "status": "completed"},
                   {"id": "scan", "progress": 9, "status": "failed", "message": "disk full"}]),
        ),
        None,
    );
    out.event(
        &stream_item(json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED"}}})),
        None,
    );
    out.end_progress();
    out.summary("t", TaskState::Completed);

    let full = format!("[{}]", "=".repeat(30));
    let lines: Vec<String> = screen.lines().iter().map(|l| without_elapsed(l)).collect();
    assert_eq!(
        lines,
        [
            "  ▸ report: downloaded 40 files".to_string(),
            // The live line stays, its spinner stopped.
            "  Ns · working: starting two jobs".to_string(),
            format!("✓ download {full} 40/40 100%"),
            "✗ scan     9  failed (disk full)".to_string(),
            format!("✗ total    {full} 40/40 100%"),
            "task t [completed]".to_string(),
        ]
    );
}

/// A task that stops to ask leaves the live line saying so, not "working"
/// above bars frozen where they were.
#[test]
fn the_live_line_follows_the_task_into_input_required() {
    let screen = Screen::new(12, 100);
    let mut out = terminal_output(&screen);
    out.event(
        &progress_update(
            "TASK_STATE_WORKING",
            "walking",
            json!([{"id": "walk", "progress": 3, "total": 9}]),
        ),
        None,
    );
    out.event(
        &stream_item(json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED", "message": {"messageId": "m1",
                "role": "ROLE_AGENT", "parts": [{"text": "Delete 3 files?"}]}}}})),
        None,
    );
    out.end_progress();
    let lines: Vec<String> = screen.lines().iter().map(|l| without_elapsed(l)).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.ends_with("Ns · input-required: Delete 3 files?")),
        "{lines:#?}"
    );
    assert!(!lines.iter().any(|l| l.contains("· working")), "{lines:#?}");
}

#[test]
fn a_line_held_back_by_the_bars_is_printed_below_them_at_the_end() {
    let screen = Screen::new(12, 80);
    let mut out = terminal_output(&screen);
    out.event(
        &progress_update(
            "TASK_STATE_WORKING",
            "index 1/4",
            json!([{"id": "index", "progress": 1, "total": 4}]),
        ),
        None,
    );
    out.event(&artifact_chunk("partial", false, false), None);
    let bars_only = screen.lines();
    assert_eq!(bars_only.len(), 2, "{bars_only:#?}");
    // The stream broke off here: the bars stay as last drawn (`index` still
    // running), and the held-back text follows below them.
    out.end_progress();
    let lines = screen.lines();
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert_eq!(
        screen.row("index"),
        format!("index [{}>{}] 1/4  25%", "=".repeat(7), " ".repeat(22))
    );
    assert!(lines[1].contains("total"), "{lines:#?}");
    assert_eq!(lines[2], "  ▸ report: partial");
}
