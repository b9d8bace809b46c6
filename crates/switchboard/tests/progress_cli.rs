#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `switchboard stream/get --watch` showing task progress, run as a user
//! would: in a pseudo-terminal (live progress bars drawn by indicatif) and
//! through a pipe (plain `progress …` lines), against the real binary
//! serving the demo agent.
//!
//! The pseudo-terminal comes from util-linux `script`: `script -qfec CMD
//! /dev/null` runs CMD with a pty as its stdin/stdout/stderr and copies
//! everything it writes to our pipe as it happens (`-f`), returning CMD's
//! exit code (`-e`). The captured bytes are fed, chunk by chunk, into a
//! `vt100` terminal emulator of the same size; each chunk leaves a "frame",
//! the screen as a person would have seen it at that moment.

mod proc;

use std::collections::HashMap;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use proc::Serve;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
/// The pseudo-terminal's size.
const ROWS: u16 = 40;
const COLS: u16 = 120;

/// `switchboard serve` with the demo agent on the memory store, on a port
/// of its choosing; killed on drop.
fn serve_demo() -> Serve {
    Serve::start_with("memory", &["--agent", "demo"])
}

/// A child process that is killed if the test gives up on it.
struct Running {
    child: Child,
    /// Chunks of stdout as they arrive; closed at EOF.
    chunks: mpsc::Receiver<Vec<u8>>,
    stderr: mpsc::Receiver<String>,
}

impl Running {
    fn spawn(cmd: &mut Command) -> Running {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        let mut stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let (tx, chunks) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                match stdout.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let (etx, erx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            let _ = etx.send(s);
        });
        Running {
            child,
            chunks,
            stderr: erx,
        }
    }

    /// Passes every stdout chunk to `each` until EOF, then waits for the
    /// exit; all within `limit`. Returns the exit status and stderr.
    fn run(mut self, limit: Duration, mut each: impl FnMut(&[u8])) -> (ExitStatus, String) {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => each(&chunk),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("no end of output within {limit:?}")
                }
            }
        }
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "no exit within {limit:?}");
            std::thread::sleep(Duration::from_millis(20));
        };
        let err = self
            .stderr
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_default();
        (status, err)
    }

    /// Runs to the end; returns (exit status, stdout, stderr).
    fn output(self, limit: Duration) -> (ExitStatus, String, String) {
        let mut out = Vec::new();
        let (status, err) = self.run(limit, |c| out.extend_from_slice(c));
        (status, String::from_utf8_lossy(&out).into_owned(), err)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Quotes for `sh`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `switchboard ARGS` in a pseudo-terminal of ROWS×COLS, with this `TERM`.
fn in_pty(args: &[&str], term: &str) -> Running {
    let mut line = format!("stty rows {ROWS} cols {COLS}; exec {}", sh_quote(BIN));
    for a in args {
        line.push(' ');
        line.push_str(&sh_quote(a));
    }
    Running::spawn(
        Command::new("script")
            .args(["-qfec", &line, "/dev/null"])
            .env("TERM", term)
            .env("SHELL", "/bin/sh")
            .env_remove("NO_COLOR")
            .env_remove("SWITCHBOARD_URL"),
    )
}

/// `switchboard ARGS` with stdout a pipe.
fn piped(args: &[&str]) -> Running {
    Running::spawn(
        Command::new(BIN)
            .args(args)
            .env("TERM", "xterm-256color")
            .env_remove("SWITCHBOARD_URL"),
    )
}

/// The screen's rows, without trailing blanks (a row as wide as the
/// screen stays one row: `contents()` would join it with the next).
fn screen_lines(parser: &vt100::Parser) -> Vec<String> {
    parser
        .screen()
        .rows(0, COLS)
        .map(|l| l.trim_end().to_string())
        .collect()
}

/// The row of tracker `id` on a screen: the line whose second word is `id`
/// (rows are `MARK ID [bar] AMOUNT …`).
fn row<'a>(lines: &'a [String], id: &str) -> Option<&'a str> {
    lines
        .iter()
        .map(String::as_str)
        .find(|l| l.split_whitespace().nth(1) == Some(id))
}

/// `12` from a row showing `12/40`.
fn count_of(row: &str, total: &str) -> Option<u32> {
    let suffix = format!("/{total}");
    row.split_whitespace()
        .find_map(|w| w.strip_suffix(suffix.as_str()))
        .and_then(|n| n.parse().ok())
}

#[test]
fn stream_draws_live_progress_bars_in_a_terminal() {
    let server = serve_demo();
    let child = in_pty(
        &["stream", "--url", &server.base(), "/progress 3"],
        "xterm-256color",
    );
    let size = |n: u16| std::num::NonZeroU16::new(n).unwrap();
    let mut parser = vt100::Parser::new(size(ROWS), size(COLS), 0);
    let mut raw = Vec::new();
    let mut downloads: Vec<u32> = Vec::new();
    let mut frames = 0;
    let mut running_frames = 0;
    let (status, err) = child.run(Duration::from_secs(60), |chunk| {
        raw.extend_from_slice(chunk);
        parser.process(chunk);
        frames += 1;
        let lines = screen_lines(&parser);
        if let Some(d) = row(&lines, "download").and_then(|r| count_of(r, "40")) {
            if downloads.last() != Some(&d) {
                downloads.push(d);
            }
            if d < 40 && row(&lines, "index").is_some() && row(&lines, "scan").is_some() {
                running_frames += 1;
            }
        }
    });
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let last = screen_lines(&parser);
    let screen = last.join("\n");
    assert!(status.success(), "exit {status:?}\n{screen}\nstderr: {err}");

    // Drawn in place (cursor movements), not printed as plain lines.
    assert!(
        raw.contains("\x1b["),
        "no terminal control sequences: {raw:?}"
    );
    assert!(!raw.contains("progress download"), "plain lines on a TTY");
    // The bars advanced: several distinct positions, increasing, ending full.
    assert!(
        downloads.len() >= 3,
        "download positions seen: {downloads:?} in {frames} frames"
    );
    assert!(
        downloads.windows(2).all(|w| w[0] < w[1]),
        "download went back: {downloads:?}"
    );
    assert_eq!(downloads.last(), Some(&40), "{downloads:?}");
    assert!(
        running_frames >= 2,
        "{running_frames} frames with all three running"
    );

    // The final screen: every tracker completed and still shown.
    let download = row(&last, "download").unwrap_or_else(|| panic!("{screen}"));
    assert!(download.starts_with('✓'), "{download}");
    assert!(
        download.contains("40/40") && download.contains("100%"),
        "{download}"
    );
    assert!(
        download.contains("[=====") && download.contains("=]"),
        "{download}"
    );
    let index = row(&last, "index").unwrap_or_else(|| panic!("{screen}"));
    assert!(index.starts_with('✓') && index.contains("25/25"), "{index}");
    let scan = row(&last, "scan").unwrap_or_else(|| panic!("{screen}"));
    assert!(scan.starts_with('✓') && scan.contains("30"), "{scan}");
    let total = row(&last, "total").unwrap_or_else(|| panic!("{screen}"));
    assert!(total.starts_with('✓') && total.contains("65/65"), "{total}");
    // Output printed above the bars; the summary below them.
    let pos = |needle: &str| {
        last.iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in\n{screen}"))
    };
    assert!(pos("· working: starting three jobs") < pos("✓ download"));
    assert!(pos("▸ report: downloaded 40 files") < pos("✓ download"));
    let summary = last.iter().rposition(|l| !l.is_empty()).unwrap();
    assert!(
        last[summary].starts_with("task ") && last[summary].ends_with("[completed]"),
        "{screen}"
    );
    assert!(pos("✓ total") < summary);
    // Status updates that only restate the progress are not printed.
    assert!(!screen.contains("· working: download"), "{screen}");
    eprintln!("final screen:\n{screen}");
}

#[test]
fn a_dumb_terminal_gets_plain_lines() {
    let server = serve_demo();
    let (status, out, err) = in_pty(&["stream", "--url", &server.base(), "/progress 1"], "dumb")
        .output(Duration::from_secs(60));
    assert!(status.success(), "exit {status:?}\n{out}\n{err}");
    assert!(out.contains("progress ✓ download 40/40 completed"), "{out}");
    assert!(!out.contains("\x1b["), "control sequences: {out:?}");
}

/// Parses a running line: `progress download 12/40 (30%) · scan 7 — total …`
/// into (id, amount done).
fn parse_running(line: &str) -> Option<Vec<(String, f64)>> {
    let body = line.strip_prefix("progress ")?;
    let first = body.split_whitespace().next()?;
    if ["✓", "✗", "·"].contains(&first) {
        return None; // a final line
    }
    let trackers = body.split(" — total ").next()?;
    Some(
        trackers
            .split(" · ")
            .map(|t| {
                let mut words = t.split_whitespace();
                let id = words.next().unwrap().to_string();
                let amount = words.next().unwrap_or_else(|| panic!("{line}"));
                let done = amount.split('/').next().unwrap().parse().unwrap();
                (id, done)
            })
            .collect(),
    )
}

#[test]
fn a_pipe_gets_plain_progress_lines() {
    let server = serve_demo();
    let (status, out, err) =
        piped(&["stream", "--url", &server.base(), "/progress 2"]).output(Duration::from_secs(60));
    assert!(status.success(), "exit {status:?}\n{out}\n{err}");
    assert!(
        !out.contains('\x1b'),
        "control sequences in a pipe: {out:?}"
    );
    let lines: Vec<&str> = out.lines().collect();

    let running: Vec<Vec<(String, f64)>> = lines.iter().filter_map(|l| parse_running(l)).collect();
    assert!(running.len() >= 4, "{out}");
    // At most once per change.
    assert!(
        lines.windows(2).all(|w| w[0] != w[1]),
        "a line repeated: {out}"
    );
    // Monotonic per tracker, and every tracker advanced.
    let mut seen: HashMap<String, Vec<f64>> = HashMap::new();
    for snapshot in &running {
        for (id, done) in snapshot {
            seen.entry(id.clone()).or_default().push(*done);
        }
    }
    for (id, counts) in &seen {
        proc::assert_advances(id, counts);
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    // One final line per tracker.
    proc::assert_one_final_progress_line_per_tracker(&out);
    assert!(lines[0].starts_with("task ") && lines[0].contains("[submitted]"));
    assert!(out.contains("  ▸ report: downloaded 40 files"), "{out}");
    assert!(!out.contains("· working: download"), "{out}");
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("task ") && last.ends_with("[completed]"),
        "{out}"
    );
}

#[test]
fn no_progress_and_json_keep_the_old_output() {
    let server = serve_demo();
    let base = server.base();
    let url = base.as_str();

    // --no-progress: the extension is not requested; status lines as before.
    let (status, out, err) = piped(&["stream", "--url", url, "--no-progress", "/progress 1"])
        .output(Duration::from_secs(60));
    assert!(status.success(), "{out}\n{err}");
    assert!(!out.contains("progress "), "{out}");
    assert!(out.contains("  · working: download"), "{out}");
    assert!(out.trim_end().ends_with("[completed]"), "{out}");

    // --json: the normal event lines, with the progress inside them.
    let (status, out, err) =
        piped(&["stream", "--url", url, "--json", "/progress 1"]).output(Duration::from_secs(60));
    assert!(status.success(), "{out}\n{err}");
    let events: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let uri = switchboard_protocol::progress::TASK_PROGRESS_URI;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "statusUpdate" && e["data"]["metadata"][uri].is_object()),
        "{out}"
    );
    let last = events.last().unwrap();
    assert_eq!(last["data"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[test]
fn get_watch_polls_until_the_task_ends() {
    let server = serve_demo();
    let base = server.base();
    let url = base.as_str();
    let (status, out, err) = piped(&[
        "send",
        "--url",
        url,
        "--json",
        "--return-immediately",
        "/progress 2",
    ])
    .output(Duration::from_secs(30));
    assert!(status.success(), "{out}\n{err}");
    let task: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let id = task["data"]["id"].as_str().unwrap();

    let (status, out, err) = piped(&["get", "--url", url, "--watch", "--interval", "0.2", id])
        .output(Duration::from_secs(60));
    assert!(status.success(), "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with(&format!("task {id} [")), "{out}");
    let running = lines.iter().filter_map(|l| parse_running(l)).count();
    assert!(running >= 2, "{out}");
    assert!(out.contains("  ▸ report: downloaded 40 files"), "{out}");
    assert_eq!(
        lines.last(),
        Some(&format!("task {id} [completed]").as_str())
    );

    // Usage: --interval needs --watch, and must be positive.
    let (status, _, err) =
        piped(&["get", "--url", url, "--interval", "1", id]).output(Duration::from_secs(30));
    assert_eq!(status.code(), Some(2), "{err}");
    let (status, _, err) = piped(&["get", "--url", url, "--watch", "--interval", "0", id])
        .output(Duration::from_secs(30));
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("--interval"), "{err}");
}

/// The frames of the live status line's spinner.
const SPINNER: &str = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";

/// The live status line on a screen, split into (spinner, elapsed, text):
/// a row `⠹ 3s · working: …` whose first character is a spinner frame.
fn live_line(lines: &[String]) -> Option<(char, String, String)> {
    lines.iter().find_map(|l| {
        let spinner = l.chars().next().filter(|c| SPINNER.contains(*c))?;
        let rest = l[spinner.len_utf8()..].trim_start();
        let (elapsed, text) = rest.split_once(" · ")?;
        let elapsed = elapsed.trim();
        elapsed
            .strip_suffix('s')
            .filter(|n| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())?;
        Some((spinner, elapsed.to_string(), text.to_string()))
    })
}

/// Terminal control sequences that a terminal did not swallow, seen as
/// text on the screen (`[2K`, `[1A`, `[?25l`, a stray ESC).
fn assert_no_escape_garbage(screen: &str) {
    assert!(!screen.contains('\x1b'), "ESC on screen:\n{screen}");
    for seq in ["[?25", "[2K", "[1A", "[0m", "[1G", "[K"] {
        assert!(!screen.contains(seq), "{seq:?} on screen:\n{screen}");
    }
}

/// Runs `switchboard ARGS` in the pty to its end, feeding a vt100 screen;
/// `each` sees the screen after every chunk. Returns the final screen.
fn run_on_screen(args: &[&str], mut each: impl FnMut(&[String])) -> Vec<String> {
    let size = |n: u16| std::num::NonZeroU16::new(n).unwrap();
    let mut parser = vt100::Parser::new(size(ROWS), size(COLS), 0);
    let (status, err) = in_pty(args, "xterm-256color").run(Duration::from_secs(60), |chunk| {
        parser.process(chunk);
        each(&screen_lines(&parser));
    });
    let last = screen_lines(&parser);
    assert!(
        status.success(),
        "exit {status:?}\n{}\nstderr: {err}",
        last.join("\n")
    );
    last
}

#[test]
fn a_task_without_trackers_gets_one_live_status_line() {
    let server = serve_demo();
    // `/long 2`: a `working` status every half second, four in all.
    let mut shown: Vec<String> = Vec::new();
    let mut most_rows = 0;
    let last = run_on_screen(&["stream", "--url", &server.base(), "/long 2"], |lines| {
        let rows = lines.iter().filter(|l| l.contains("half-seconds")).count();
        most_rows = most_rows.max(rows);
        if let Some((_, _, text)) = live_line(lines)
            && shown.last() != Some(&text)
        {
            shown.push(text);
        }
    });
    let screen = last.join("\n");
    // One line, redrawn in place: never two status rows on screen.
    assert_eq!(most_rows, 1, "{screen}");
    assert!(
        shown.len() >= 2,
        "the live line showed too few states: {shown:?}"
    );
    for text in &shown {
        assert!(
            text.starts_with("working: working: ") && text.ends_with(" half-seconds"),
            "{text}"
        );
    }
    // The end: the spinner stopped, the line kept with its elapsed time and
    // the last status; the artifact and the summary below.
    assert!(live_line(&last).is_none(), "spinner still on:\n{screen}");
    let frozen = last
        .iter()
        .find(|l| l.contains("half-seconds"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        frozen.ends_with("· working: working: 4/4 half-seconds") && frozen.contains("s · "),
        "{frozen}"
    );
    assert!(screen.contains("▸ result: worked for 2 s"), "{screen}");
    let summary = last.iter().rposition(|l| !l.is_empty()).unwrap();
    assert!(
        last[summary].starts_with("task ") && last[summary].ends_with("[completed]"),
        "{screen}"
    );
    assert_no_escape_garbage(&screen);
}

#[test]
fn steps_show_on_the_live_line_and_progress_as_bars() {
    let server = serve_demo();
    let mut seen_steps = Vec::new();
    let last = run_on_screen(&["stream", "--url", &server.base(), "/steps 3"], |lines| {
        if let Some((_, _, text)) = live_line(lines)
            && seen_steps.last() != Some(&text)
        {
            seen_steps.push(text);
        }
    });
    let screen = last.join("\n");
    assert!(
        !seen_steps.is_empty()
            && seen_steps
                .iter()
                .all(|t| t.starts_with("working: step ") && t.ends_with(" of 3")),
        "{seen_steps:?}"
    );
    assert_eq!(
        last.iter().filter(|l| l.contains(" of 3")).count(),
        1,
        "one status row:\n{screen}"
    );
    assert!(screen.contains("▸ summary: finished 3 steps"), "{screen}");
    assert_no_escape_garbage(&screen);

    // Trackers: bars, with the status line above them.
    let mut both = false;
    let last = run_on_screen(
        &["stream", "--url", &server.base(), "/progress 2"],
        |lines| {
            both |= live_line(lines).is_some() && row(lines, "download").is_some();
        },
    );
    let screen = last.join("\n");
    assert!(both, "no frame with the live line and the bars:\n{screen}");
    let pos = |needle: &str| last.iter().position(|l| l.contains(needle));
    assert!(
        pos("· working: starting three jobs") < pos("✓ download"),
        "{screen}"
    );
    assert!(
        row(&last, "total").is_some_and(|r| r.starts_with('✓')),
        "{screen}"
    );
    assert_no_escape_garbage(&screen);
}

/// Splits a hinted command line into words (single quotes as a shell
/// reads them; the hint quotes nothing else).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.trim().chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    words.push(cur);
    words
}

#[test]
fn input_required_prints_the_command_that_answers() {
    let server = serve_demo();
    let base = server.base();
    let (status, out, err) =
        piped(&["send", "--url", &base, "/ask"]).output(Duration::from_secs(30));
    assert!(status.success(), "{out}\n{err}");
    assert!(out.contains("[input-required]"), "{out}");
    let mut lines = err.lines();
    assert_eq!(
        lines.next(),
        Some("hint: the agent needs your input; answer with:"),
        "{err}"
    );
    let command = lines.next().unwrap_or_else(|| panic!("{err}"));
    let words = shell_words(command);
    assert_eq!(
        &words[..4],
        ["switchboard", "send", "--url", base.as_str()],
        "{command}"
    );
    assert_eq!(words.last().map(String::as_str), Some("<answer>"));
    // The hint is a command that works: run it with an answer.
    let mut args: Vec<&str> = words[1..words.len() - 1]
        .iter()
        .map(String::as_str)
        .collect();
    args.push("Ada");
    let (status, out, err) = piped(&args).output(Duration::from_secs(30));
    assert!(status.success(), "{out}\n{err}");
    assert!(out.contains("Hello, Ada!"), "{out}");
    assert!(
        out.starts_with("task ") && out.contains(" [completed] "),
        "{out}"
    );
    assert!(!err.contains("hint:"), "no hint once done: {err}");

    // --json: stdout stays one JSON document per line; the hint is on stderr.
    let (status, out, err) =
        piped(&["send", "--url", &base, "--json", "/ask"]).output(Duration::from_secs(30));
    assert!(status.success(), "{err}");
    for l in out.lines() {
        serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("{l}: {e}"));
    }
    assert!(!out.contains("hint"), "{out}");
    assert!(err.starts_with("hint: the agent needs your input"), "{err}");

    // auth-required: likewise, saying to authenticate first.
    let (status, out, err) = piped(&["send", "--url", &base, "--binding", "rest", "/auth"])
        .output(Duration::from_secs(30));
    assert!(status.success(), "{out}\n{err}");
    assert!(out.contains("[auth-required]"), "{out}");
    assert!(
        err.starts_with("hint: the agent needs you to authenticate first"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "switchboard send --url {base} --binding rest --task-id "
        )),
        "{err}"
    );
}

#[test]
fn send_shows_that_it_waits_then_only_the_answer() {
    let server = serve_demo();
    let mut waiting = false;
    let last = run_on_screen(&["send", "--url", &server.base(), "/long 1"], |lines| {
        waiting |= live_line(lines).is_some_and(|(_, _, t)| t == "waiting for the agent's answer");
    });
    let screen = last.join("\n");
    assert!(waiting, "no live line while send waited:\n{screen}");
    assert!(
        !screen.contains("waiting for"),
        "the line stayed:\n{screen}"
    );
    assert!(
        last[0].starts_with("task ") && last[0].contains(" [completed] "),
        "{screen}"
    );
    assert!(screen.contains("▸ result: worked for 1 s"), "{screen}");
    assert_no_escape_garbage(&screen);
}
