//! Logs: where they go, in what form, and what they never say (feature
//! `logging`).
//!
//! [`init`] installs the process's `tracing` subscriber: events go to
//! stderr, filtered by a directive in tracing's `EnvFilter` syntax
//! (`switchboard serve`: `--log` / `SWITCHBOARD_LOG`, default `info`), in
//! the form [`LogFormat`] picks (`--log-format`):
//!
//! - `text`: one human-readable line per event, with ANSI colours only when
//!   stderr is a terminal (a log file never gets escape codes);
//! - `json`: one JSON object per line, `{"timestamp", "level", "target",
//!   "message", …fields}`, for log shippers;
//! - `auto` (the default): text on a terminal, JSON otherwise.
//!
//! Every request gets one access line (see `switchboard_server::ops::access_log`).
//!
//! **Nothing waits for stderr.** A line is formatted where it happens (into
//! a buffer its thread keeps) and appended to one bounded queue of bytes
//! (4 MiB, [`BackgroundWriter`]), which one writer thread takes whole and
//! writes in one go; while lines keep coming it lets them gather for 10 ms
//! between writes, so a busy server does not wake it for every line. A
//! request thus never blocks on a pipe whose reader is slow (a log shipper,
//! a terminal), a line costs a copy under a lock (no allocation, none freed
//! on another thread), and a burst costs one `write` per batch rather than
//! one per line. When the queue is full the line is dropped, never waited
//! for, and the writer reports how many were lost as soon as it catches
//! up. [`flush`] writes out what is queued (commands call it before they
//! exit).
//! Secrets stay out by construction: no request headers or bodies are
//! logged, `switchboard serve` logs store URLs with their password masked,
//! and push configs (their tokens and credentials) are never logged, only
//! task and config ids. The binary's `tests/logs.rs` greps the logs of a
//! run that used each kind of secret.

use std::fmt;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

/// How logs are written: text or JSON lines (see the [module docs](self)).
/// With the `clap` feature it is a command-line value (`auto`, `text`,
/// `json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum LogFormat {
    /// Text on a terminal, JSON otherwise.
    #[default]
    Auto,
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber (once; later calls do nothing), writing
/// the events `filter` selects in `format`.
pub fn init(format: LogFormat, filter: &str) {
    init_with(format, filter, None);
}

/// [`init`], plus `extra` beside the log writer, with a filter of its own
/// (e.g. the OpenTelemetry layer of `otel::init`, feature `otel`): `filter`
/// chooses what is written, not what is traced.
pub fn init_with(
    format: LogFormat,
    filter: &str,
    extra: Option<Box<dyn Layer<Registry> + Send + Sync>>,
) {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let terminal = std::io::stderr().is_terminal();
    let json = match format {
        LogFormat::Json => true,
        LogFormat::Text => false,
        LogFormat::Auto => !terminal,
    };
    // Without `extra`, no `Option` layer in the stack: a `None` one is
    // interested in every callsite, which turns the callsites the writer's
    // filter disables into "sometimes" ones; a `tracing::enabled!` check of
    // such a callsite (the access log's, per request) then leaves the
    // per-layer filter's state set on its thread, and the next event there
    // that the filter enables (an audit line) was dropped.
    let _ = match extra {
        Some(extra) => tracing_subscriber::registry()
            .with(extra)
            .with(writer_layer(json, terminal, filter))
            .try_init(),
        None => tracing_subscriber::registry()
            .with(writer_layer(json, terminal, filter))
            .try_init(),
    };
}

/// The log writer, `filter` its own, for a subscriber stack `S`.
fn writer_layer<S>(
    json: bool,
    terminal: bool,
    filter: tracing_subscriber::EnvFilter,
) -> Box<dyn Layer<S> + Send + Sync>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    if json {
        JsonLayer(BackgroundWriter::stderr())
            .with_filter(filter)
            .boxed()
    } else {
        tracing_subscriber::fmt::layer()
            .with_writer(BackgroundWriter::stderr())
            .with_ansi(terminal)
            .with_filter(filter)
            .boxed()
    }
}

/// Formats each event as one JSON object on one line.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonLines;

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let spans = ctx.event_scope().map(|scope| scope.from_root());
        writer.write_str(&json_line(
            event,
            spans.into_iter().flatten().map(|s| s.name()),
        ))
    }
}

/// The [`JsonLines`] form as a layer of its own, handing each line to the
/// [`BackgroundWriter`] as it is: what [`init`] installs for JSON. (The
/// formatting layer would copy the line into a buffer of its own, and the
/// writer copy it again.)
struct JsonLayer(BackgroundWriter);

impl<S> Layer<S> for JsonLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_event(&self, event: &Event<'_>, ctx: tracing_subscriber::layer::Context<'_, S>) {
        thread_local! {
            /// The line being written on this thread, kept for the next one:
            /// a line costs no allocation once the buffer has grown.
            static LINE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        let spans = ctx.event_scope(event).map(|scope| scope.from_root());
        let spans = spans.into_iter().flatten().map(|s| s.name());
        LINE.with(|cell| match cell.try_borrow_mut() {
            Ok(mut buf) => {
                let mut line = JsonLine(std::mem::take(&mut *buf));
                line.0.clear();
                write_json_line(&mut line, event, spans);
                self.0.send(line.0.as_bytes());
                // A rare huge line does not keep its buffer on the thread.
                if line.0.capacity() <= KEPT_LINE_BYTES {
                    *buf = line.0;
                }
            }
            // An event logged while a line is being written on this thread
            // (from a value's `Debug`, say) gets a buffer of its own.
            Err(_) => {
                let mut line = JsonLine(String::new());
                write_json_line(&mut line, event, spans);
                self.0.send(line.0.as_bytes());
            }
        });
    }
}

/// One event as a JSON object on one line (newline included): written
/// straight into one string, since every request logs a line and building a
/// JSON map of owned strings first cost more than the request's own work.
fn json_line<'a>(event: &Event<'_>, spans: impl Iterator<Item = &'a str>) -> String {
    let mut line = JsonLine(String::with_capacity(320));
    write_json_line(&mut line, event, spans);
    line.0
}

/// Appends [`json_line`]'s line to `line`.
fn write_json_line<'a>(
    line: &mut JsonLine,
    event: &Event<'_>,
    spans: impl Iterator<Item = &'a str>,
) {
    let meta = event.metadata();
    line.0.push_str("{\"timestamp\":\"");
    push_timestamp(&mut line.0, chrono::Utc::now());
    line.0.push('"');
    line.str_field("level", meta.level().as_str());
    line.str_field("target", meta.target());
    let mut spans = spans.peekable();
    if spans.peek().is_some() {
        line.key("spans");
        line.0.push('[');
        for (i, span) in spans.enumerate() {
            if i > 0 {
                line.0.push(',');
            }
            line.string(span);
        }
        line.0.push(']');
    }
    event.record(line);
    line.0.push_str("}\n");
}

/// Appends `now` as `YYYY-MM-DDTHH:MM:SS.ffffffZ`. Every request logs a
/// line, and chrono's `format` parses its pattern on each call, which cost
/// more than the rest of the line; this writes the digits. A year outside
/// 0–9999 or a leap second (not a fixed-width form) is left to chrono.
fn push_timestamp(out: &mut String, now: chrono::DateTime<chrono::Utc>) {
    match switchboard_protocol::serde_util::fixed_width_utc::<27>(&now) {
        Some(digits) => out.push_str(std::str::from_utf8(&digits).unwrap_or_default()),
        None => {
            let _ = write!(out, "{}", now.format("%Y-%m-%dT%H:%M:%S%.6fZ"));
        }
    }
}

/// One JSON object being written, its opening brace and first member
/// already in: each further member starts with a comma.
struct JsonLine(String);

/// The members [`JsonLines`] writes itself; an event's field of the same
/// name is left out rather than written twice.
const OWN_KEYS: [&str; 4] = ["timestamp", "level", "target", "spans"];

/// The bytes a JSON string holds as they are (not a control character, a
/// quote or a backslash).
static PLAIN_IN_STRING: [bool; 256] = {
    let mut t = [true; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = false;
        b += 1;
    }
    t[b'"' as usize] = false;
    t[b'\\' as usize] = false;
    t
};

/// The bytes of a field name written without a look for escapes: ASCII
/// letters, digits, `_` and `.` (a dotted name).
static PLAIN_IN_KEY: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'.';
        b += 1;
    }
    t
};

/// Appends what it is given as the inside of a JSON string.
struct Escaped<'a>(&'a mut String);

impl fmt::Write for Escaped<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // Most values have nothing to escape (a table look-up per byte).
        let clean = s
            .bytes()
            .fold(true, |clean, b| clean & PLAIN_IN_STRING[usize::from(b)]);
        if clean {
            self.0.push_str(s);
            return Ok(());
        }
        for c in s.chars() {
            match c {
                '"' => self.0.push_str("\\\""),
                '\\' => self.0.push_str("\\\\"),
                '\n' => self.0.push_str("\\n"),
                '\r' => self.0.push_str("\\r"),
                '\t' => self.0.push_str("\\t"),
                c if u32::from(c) < 0x20 => {
                    let _ = write!(self.0, "\\u{:04x}", u32::from(c));
                }
                c => self.0.push(c),
            }
        }
        Ok(())
    }
}

impl JsonLine {
    fn key(&mut self, key: &str) {
        // Field names are nearly always identifiers: no escaping to look
        // for (a table look-up per byte).
        let plain = key
            .bytes()
            .fold(true, |plain, b| plain & PLAIN_IN_KEY[usize::from(b)]);
        if plain {
            self.0.push_str(",\"");
            self.0.push_str(key);
            self.0.push_str("\":");
        } else {
            self.0.push(',');
            self.string(key);
            self.0.push(':');
        }
    }

    fn string(&mut self, value: &str) {
        self.0.push('"');
        let _ = Escaped(&mut self.0).write_str(value);
        self.0.push('"');
    }

    fn str_field(&mut self, key: &str, value: &str) {
        self.key(key);
        self.string(value);
    }

    fn field(&mut self, field: &Field) -> bool {
        if OWN_KEYS.contains(&field.name()) {
            return false;
        }
        self.key(field.name());
        true
    }
}

impl Visit for JsonLine {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.field(field) {
            self.0.push('"');
            let _ = write!(Escaped(&mut self.0), "{value:?}");
            self.0.push('"');
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if self.field(field) {
            self.string(value);
        }
    }
    // Integers by itoa, as serde_json writes them: `Display` goes through a
    // formatter (every access line has a status).
    fn record_i64(&mut self, field: &Field, value: i64) {
        if self.field(field) {
            self.0.push_str(itoa::Buffer::new().format(value));
        }
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.field(field) {
            self.0.push_str(itoa::Buffer::new().format(value));
        }
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        if self.field(field) {
            self.0.push_str(if value { "true" } else { "false" });
        }
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        if self.field(field) {
            // JSON has no NaN or infinity: null, as serde_json writes them.
            if value.is_finite() {
                // ryu, as serde_json writes numbers: a few times quicker
                // than `Display` (every access line has a duration).
                self.0.push_str(ryu::Buffer::new().format_finite(value));
            } else {
                self.0.push_str("null");
            }
        }
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        if self.field(field) {
            self.0.push('"');
            let _ = write!(Escaped(&mut self.0), "{value}");
            self.0.push('"');
        }
    }
}

/// Bytes of lines waiting for the writer thread before new lines are
/// dropped: a few seconds of a busy server's access lines (a line is a few
/// hundred bytes).
const QUEUE_BYTES: usize = 4 << 20;

/// The most a thread keeps of the buffer it wrote its last line in.
const KEPT_LINE_BYTES: usize = 64 * 1024;

/// How long the writer thread lets lines gather while they keep coming
/// (the most a line waits before it is written).
const GATHER: std::time::Duration = std::time::Duration::from_millis(10);

/// How long [`flush`] waits for the writer thread.
const FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The lines waiting for the writer thread, appended to one buffer: a line
/// costs a copy under a lock, not an allocation that another thread frees.
#[derive(Debug, Default)]
struct Queue {
    /// Whole lines, in the order they came.
    bytes: Vec<u8>,
    /// Lines dropped since the thread last reported it.
    dropped: u64,
    /// Flushes asked for so far, and done so far; the thread writes out
    /// and answers when they differ.
    flushes_asked: u64,
    flushes_done: u64,
    /// The thread is parked on `wake` (only then is it worth waking).
    idle: bool,
    /// There is no thread (it could not start): lines are written in place.
    orphaned: bool,
}

#[derive(Debug)]
struct Shared {
    queue: std::sync::Mutex<Queue>,
    /// The thread waits on it for lines or a flush; a flush waits on it for
    /// `flushes_done`.
    wake: std::sync::Condvar,
    done: std::sync::Condvar,
    capacity: usize,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // A thread that panicked while holding it left whole lines behind.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The tracing writer of `serve` and `bridge`: lines are appended to a
/// bounded buffer that one thread writes to stderr (see the module docs).
#[derive(Debug, Clone)]
pub struct BackgroundWriter {
    shared: std::sync::Arc<Shared>,
}

/// The process's writer, once started.
static WRITER: std::sync::OnceLock<BackgroundWriter> = std::sync::OnceLock::new();

impl BackgroundWriter {
    /// The process's stderr writer (its thread starts on first use).
    pub fn stderr() -> BackgroundWriter {
        WRITER
            .get_or_init(|| BackgroundWriter::spawn(QUEUE_BYTES, std::io::stderr))
            .clone()
    }

    /// A writer thread writing to what `open` gives, behind a buffer of
    /// `capacity` bytes (one line is always taken into an empty buffer,
    /// however long).
    fn spawn<W, F>(capacity: usize, open: F) -> BackgroundWriter
    where
        W: std::io::Write,
        F: FnOnce() -> W + Send + 'static,
    {
        let shared = std::sync::Arc::new(Shared {
            queue: std::sync::Mutex::new(Queue::default()),
            wake: std::sync::Condvar::new(),
            done: std::sync::Condvar::new(),
            capacity,
        });
        let theirs = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("switchboard-log".into())
            .spawn(move || write_out(&theirs, open()));
        if let Err(e) = spawned {
            eprintln!("switchboard: cannot start the log writer thread: {e}");
            shared.lock().orphaned = true;
        }
        BackgroundWriter { shared }
    }

    /// Queues one whole line (dropped, and counted, when the buffer is
    /// full; written in place when there is no thread).
    fn send(&self, line: &[u8]) {
        let mut q = self.shared.lock();
        if q.orphaned {
            drop(q);
            // Errors writing stderr have nowhere to be reported.
            let _ = std::io::stderr().write_all(line);
            return;
        }
        if !q.bytes.is_empty() && q.bytes.len() + line.len() > self.shared.capacity {
            q.dropped += 1;
            return;
        }
        q.bytes.extend_from_slice(line);
        if q.idle {
            q.idle = false;
            self.shared.wake.notify_one();
        }
    }

    /// Writes out everything queued before this call, waiting at most
    /// `within`.
    fn flush(&self, within: std::time::Duration) {
        let mut q = self.shared.lock();
        if q.orphaned {
            return;
        }
        q.flushes_asked += 1;
        let asked = q.flushes_asked;
        q.idle = false;
        self.shared.wake.notify_one();
        let _ = self
            .shared
            .done
            .wait_timeout_while(q, within, |q| q.flushes_done < asked);
    }
}

/// The writer thread: waits for lines or a flush; once lines came, lets the
/// next ones gather for `GATHER` (a busy server thus wakes it about once per
/// `GATHER`, not once per line: a wake-up cost more than a line), then
/// takes the whole buffer and writes it in one go, then says how many lines
/// were dropped meanwhile. A flush skips the gathering and is answered once
/// what was queued before it is written out.
fn write_out<W: std::io::Write>(shared: &Shared, out: W) {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
    // The buffer the thread writes from; swapped with the queue's so that
    // neither is reallocated once grown.
    let mut taken = Vec::new();
    loop {
        let flushing = {
            let mut q = shared.lock();
            while q.bytes.is_empty() && q.flushes_asked == q.flushes_done {
                q.idle = true;
                q = shared.wake.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            q.flushes_asked > q.flushes_done
        };
        if !flushing {
            // Right after a line came, the next ones are still on their way.
            std::thread::sleep(GATHER);
        }
        let (dropped, answered) = {
            let mut q = shared.lock();
            std::mem::swap(&mut q.bytes, &mut taken);
            (std::mem::take(&mut q.dropped), q.flushes_asked)
        };
        // Errors writing stderr have nowhere to be reported.
        let _ = out.write_all(&taken);
        taken.clear();
        if dropped > 0 {
            let _ = writeln!(
                out,
                "switchboard: {dropped} log lines dropped: stderr was not read fast enough"
            );
        }
        let _ = out.flush();
        let mut q = shared.lock();
        if q.flushes_done < answered {
            q.flushes_done = answered;
            shared.done.notify_all();
        }
    }
}

/// Writes out the log lines still queued (waiting at most two seconds).
/// Commands that log call it before they exit.
pub fn flush() {
    if let Some(writer) = WRITER.get() {
        writer.flush(FLUSH_WAIT);
    }
}

/// One event's writer: the formatter hands it the whole line.
#[derive(Debug)]
pub struct LineWriter<'a>(&'a BackgroundWriter);

impl std::io::Write for LineWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.send(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for BackgroundWriter {
    type Writer = LineWriter<'a>;
    fn make_writer(&'a self) -> Self::Writer {
        LineWriter(self)
    }
}

#[cfg(test)]
mod writer_tests {
    use super::*;
    use crate::tests::Sink;

    #[test]
    fn timestamps_are_written_as_chrono_formats_them() {
        // Instants spread over years 0..=9999 and beyond, every sub-second
        // digit, and a leap second (which chrono formats itself).
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut instants = Vec::new();
        for _ in 0..5000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let secs = (seed >> 11) as i64 % 320_000_000_000 - 62_200_000_000;
            let nanos = (seed >> 3) as u32 % 1_000_000_000;
            instants.extend(chrono::DateTime::from_timestamp(secs, nanos));
        }
        instants.extend(chrono::DateTime::from_timestamp(
            1_483_228_799,
            1_500_000_000,
        ));
        instants.extend(chrono::DateTime::from_timestamp(0, 0));
        for at in instants {
            let mut mine = String::new();
            push_timestamp(&mut mine, at);
            assert_eq!(mine, at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string());
        }
    }

    #[test]
    fn the_json_layer_writes_one_object_per_event() {
        use tracing_subscriber::layer::SubscriberExt as _;
        let sink = Sink::default();
        let s = sink.clone();
        let writer = BackgroundWriter::spawn(64 * 1024, move || s);
        let subscriber = tracing_subscriber::registry().with(JsonLayer(writer.clone()));
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("outer");
            let _entered = span.enter();
            tracing::info!(target: "switchboard::access", path = "/a\"b", status = 200_u64, "request");
            tracing::warn!("plain");
        });
        writer.flush(std::time::Duration::from_secs(10));
        let out = sink.text();
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_default())
            .collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert_eq!(lines[0]["target"], "switchboard::access");
        assert_eq!(lines[0]["spans"], serde_json::json!(["outer"]));
        assert_eq!(lines[0]["path"], "/a\"b");
        assert_eq!(lines[0]["status"], 200);
        assert_eq!(lines[0]["message"], "request");
        assert_eq!(lines[1]["level"], "WARN");
        assert_eq!(lines[1]["message"], "plain");
    }

    #[test]
    fn lines_arrive_in_order_and_flush_waits_for_them() {
        let sink = Sink::default();
        let s = sink.clone();
        let writer = BackgroundWriter::spawn(1 << 20, move || s);
        for i in 0..500 {
            let mut w = LineWriter(&writer);
            assert!(w.write(format!("line {i}\n").as_bytes()).is_ok());
        }
        writer.flush(std::time::Duration::from_secs(10));
        let expected: String = (0..500).map(|i| format!("line {i}\n")).collect();
        assert_eq!(sink.text(), expected);
    }

    #[test]
    fn a_stalled_reader_drops_lines_instead_of_blocking_and_says_so() {
        let sink = Sink::default();
        let stalled = sink.gate.lock().unwrap_or_else(|e| e.into_inner());
        let s = sink.clone();
        let writer = BackgroundWriter::spawn(40, move || s);
        // A first line larger than the thread's buffer goes straight to
        // the stalled sink once the thread takes it, so the thread blocks
        // on it; then the queue (40 bytes) fills, and every further line
        // returns at once, dropped.
        let big = format!("{}\n", "x".repeat(70 * 1024));
        assert!(LineWriter(&writer).write(big.as_bytes()).is_ok());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !writer.shared.lock().bytes.is_empty() {
            assert!(
                std::time::Instant::now() < deadline,
                "the thread takes the line"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        for i in 1..100 {
            let mut w = LineWriter(&writer);
            assert!(w.write(format!("line {i}\n").as_bytes()).is_ok());
        }
        let dropped = writer.shared.lock().dropped;
        assert!(dropped >= 90, "lines past the queue are dropped: {dropped}");
        drop(stalled);
        writer.flush(std::time::Duration::from_secs(10));
        let out = sink.text();
        assert!(out.starts_with(&big), "the first line is whole");
        assert!(out.contains("line 1\n"), "queued lines follow");
        assert!(!out.contains("line 99\n"), "dropped lines are not written");
        assert!(
            out.contains(&format!("{dropped} log lines dropped")),
            "{out}"
        );
    }
}
