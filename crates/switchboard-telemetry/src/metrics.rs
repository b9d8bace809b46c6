//! The process's metrics and their Prometheus text exposition.
//!
//! Every metric is a fixed slot of atomics in one static, [`METRICS`]:
//! labels are small closed sets (the eleven operations, the bindings, the
//! outcome codes, the task states), so a labelled series is an array index
//! and recording takes no lock and allocates nothing. Series that never
//! moved are left out of the exposition.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `switchboard_requests_total` | counter | `operation`, `binding`, `code` |
//! | `switchboard_request_duration_seconds` | histogram | `operation`, `binding` |
//! | `switchboard_task_transitions_total` | counter | `state` (tasks entering it) |
//! | `switchboard_agent_runs_total` | counter | |
//! | `switchboard_running_agents` | gauge | |
//! | `switchboard_stream_subscribers` | gauge | |
//! | `switchboard_store_commit_duration_seconds` | histogram | |
//! | `switchboard_push_deliveries_total` | counter | `outcome` (`delivered`, `retried`, `dead_lettered`) |
//! | `switchboard_open_connections` | gauge | |
//! | `switchboard_connections_total` | counter | |
//!
//! `operation` is the 1.0 name (`SendMessage`, …; 0.3 calls count under
//! the operation they map to) or `none` for requests that ran none (the
//! card, health, `/metrics`, a request refused before decoding). `code` is
//! `OK`, the `google.rpc.ErrorInfo` reason of the A2A error the request was
//! answered with (`TASK_NOT_FOUND`, …), or `HTTP_4XX` / `HTTP_5XX` for an
//! HTTP refusal that carried no A2A error. A request's duration is measured
//! to its response head: a stream runs on after it. Values read at scrape
//! time (the push outbox depth) are added by whoever serves `/metrics`,
//! with [`write_gauge`].
//!
//! The metrics are per process: several servers in one process add up.

use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use switchboard_protocol::{A2AError, Operation, TaskState};

/// Upper bounds (seconds) of the latency histograms' buckets.
pub const LATENCY_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// A monotonically increasing count.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// A counter at zero.
    pub const fn new() -> Self {
        Counter(AtomicU64::new(0))
    }
    /// Adds one.
    pub fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }
    /// The count.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A value that goes up and down.
#[derive(Debug, Default)]
pub struct Gauge(AtomicI64);

impl Gauge {
    /// A gauge at zero.
    pub const fn new() -> Self {
        Gauge(AtomicI64::new(0))
    }
    /// Adds one.
    pub fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    /// Subtracts one.
    pub fn dec(&self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
    /// The value.
    pub fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
    /// Adds one now and subtracts it when the guard drops, so a gauge of
    /// things in progress stays right on every exit path (errors, panics,
    /// dropped futures).
    pub fn track(&'static self) -> GaugeGuard {
        self.inc();
        GaugeGuard(self)
    }
}

/// Holds one unit of a [`Gauge`]; see [`Gauge::track`].
#[derive(Debug)]
#[must_use = "the gauge goes down again when the guard drops"]
pub struct GaugeGuard(&'static Gauge);

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// A distribution of durations over [`LATENCY_BUCKETS`].
#[derive(Debug)]
pub struct Histogram {
    /// Observations per bucket (not cumulative; the last is `+Inf` only).
    buckets: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram.
    pub const fn new() -> Self {
        Histogram {
            buckets: [const { AtomicU64::new(0) }; LATENCY_BUCKETS.len() + 1],
            count: AtomicU64::new(0),
            sum_nanos: AtomicU64::new(0),
        }
    }

    /// Records one duration.
    pub fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let slot = LATENCY_BUCKETS
            .iter()
            .position(|&le| secs <= le)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.buckets[slot].fetch_add(1, Ordering::Relaxed);
        self.sum_nanos.fetch_add(
            u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// How many durations were recorded.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

/// The bindings a request can arrive on (the `binding` label).
pub const BINDINGS: [&str; 7] = [
    "jsonrpc", "rest", "grpc", "card", "health", "metrics", "other",
];

/// The outcome codes besides the A2A error reasons (the `code` label).
const HTTP_4XX: &str = "HTTP_4XX";
const HTTP_5XX: &str = "HTTP_5XX";

/// `OK`, then every A2A error reason, then the plain HTTP classes.
const CODES: [&str; A2AError::REASONS.len() + 3] = codes();

/// [`CODES`], built from the protocol's list so that a new error reason
/// has its own label (not the last one's).
const fn codes() -> [&'static str; A2AError::REASONS.len() + 3] {
    let mut out = ["OK"; A2AError::REASONS.len() + 3];
    let mut i = 0;
    while i < A2AError::REASONS.len() {
        out[i + 1] = A2AError::REASONS[i];
        i += 1;
    }
    out[A2AError::REASONS.len() + 1] = HTTP_4XX;
    out[A2AError::REASONS.len() + 2] = HTTP_5XX;
    out
}

/// Room for every operation plus `none` (checked by a test against
/// `Operation::ALL`).
const OPS: usize = 16;
const STATES: usize = TaskState::ALL.len();
const NO_OPERATION: usize = OPS - 1;

/// What a request's outcome was, for [`Metrics::request`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered without an error.
    Ok,
    /// Answered with this A2A error (its `ErrorInfo` reason).
    A2a(&'static str),
    /// Refused at the HTTP level with this status, no A2A error involved.
    Http(u16),
}

impl Outcome {
    /// The outcome of an answer with HTTP status `status` and, when the
    /// request hit one, the A2A error it was answered with.
    pub fn of(status: u16, error: Option<&'static str>) -> Outcome {
        match error {
            Some(reason) => Outcome::A2a(reason),
            None if status >= 400 => Outcome::Http(status),
            None => Outcome::Ok,
        }
    }

    fn index(self) -> usize {
        let label = match self {
            Outcome::Ok => "OK",
            Outcome::A2a(reason) => reason,
            Outcome::Http(s) if s >= 500 => HTTP_5XX,
            Outcome::Http(_) => HTTP_4XX,
        };
        CODES
            .iter()
            .position(|c| *c == label)
            .unwrap_or(CODES.len() - 1)
    }
}

/// The outcome label of an A2A error.
pub fn error_outcome(e: &A2AError) -> Outcome {
    Outcome::A2a(e.reason())
}

/// The binding label's index; unknown names count as `other`.
fn binding_index(binding: &str) -> usize {
    BINDINGS
        .iter()
        .position(|b| *b == binding)
        .unwrap_or(BINDINGS.len() - 1)
}

fn operation_index(op: Option<Operation>) -> usize {
    op.and_then(|op| Operation::ALL.iter().position(|o| *o == op))
        .filter(|i| *i < NO_OPERATION)
        .unwrap_or(NO_OPERATION)
}

fn operation_label(i: usize) -> &'static str {
    Operation::ALL.get(i).map_or("none", |op| op.name())
}

/// Every metric of the process. Use the one instance, [`METRICS`].
#[derive(Debug)]
pub struct Metrics {
    requests: [[[Counter; CODES.len()]; BINDINGS.len()]; OPS],
    request_duration: [[Histogram; BINDINGS.len()]; OPS],
    task_transitions: [Counter; STATES],
    /// Agent runs started.
    pub agent_runs: Counter,
    /// Agent runs in progress.
    pub running_agents: Gauge,
    /// Open A2A event streams (SSE and gRPC streams, blocking callers
    /// waiting on a task).
    pub stream_subscribers: Gauge,
    /// How long the store takes to commit a task's change.
    pub store_commit: Histogram,
    /// Push notifications delivered (2xx).
    pub push_delivered: Counter,
    /// Push delivery attempts that failed and were scheduled again.
    pub push_retried: Counter,
    /// Push notifications given up after their last attempt.
    pub push_dead_lettered: Counter,
    /// Client connections open now.
    pub open_connections: Gauge,
    /// Client connections accepted.
    pub connections: Counter,
    /// Prompt (input) tokens that hosted LLM agents' models reported using.
    pub llm_prompt_tokens: Counter,
    /// Completion (output) tokens that hosted LLM agents' models reported.
    pub llm_completion_tokens: Counter,
}

/// The process's metrics.
pub static METRICS: Metrics = Metrics::new();

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every metric at zero.
    pub const fn new() -> Self {
        Metrics {
            requests: [const { [const { [const { Counter::new() }; CODES.len()] }; BINDINGS.len()] };
                OPS],
            request_duration: [const { [const { Histogram::new() }; BINDINGS.len()] }; OPS],
            task_transitions: [const { Counter::new() }; STATES],
            agent_runs: Counter::new(),
            running_agents: Gauge::new(),
            stream_subscribers: Gauge::new(),
            store_commit: Histogram::new(),
            push_delivered: Counter::new(),
            push_retried: Counter::new(),
            push_dead_lettered: Counter::new(),
            open_connections: Gauge::new(),
            connections: Counter::new(),
            llm_prompt_tokens: Counter::new(),
            llm_completion_tokens: Counter::new(),
        }
    }

    /// Records one answered request.
    pub fn request(
        &self,
        op: Option<Operation>,
        binding: &str,
        outcome: Outcome,
        duration: Duration,
    ) {
        let (o, b) = (operation_index(op), binding_index(binding));
        self.requests[o][b][outcome.index()].inc();
        self.request_duration[o][b].observe(duration);
    }

    /// How many requests of `op` on `binding` were answered with `outcome`.
    pub fn requests(&self, op: Option<Operation>, binding: &str, outcome: Outcome) -> u64 {
        self.requests[operation_index(op)][binding_index(binding)][outcome.index()].get()
    }

    /// Records a task entering `state` (created in it or changed to it).
    pub fn task_entered(&self, state: TaskState) {
        if let Some(i) = TaskState::ALL.iter().position(|s| *s == state) {
            self.task_transitions[i].inc();
        }
    }

    /// How many times tasks entered `state`.
    pub fn tasks_entered(&self, state: TaskState) -> u64 {
        TaskState::ALL
            .iter()
            .position(|s| *s == state)
            .map_or(0, |i| self.task_transitions[i].get())
    }
}

/// The Prometheus text exposition (format 0.0.4) of [`METRICS`].
pub fn render() -> String {
    render_metrics(&METRICS)
}

/// The Prometheus text exposition of `m`.
pub fn render_metrics(m: &Metrics) -> String {
    let mut out = String::with_capacity(4096);
    header(
        &mut out,
        "switchboard_requests_total",
        "A2A requests answered, by operation, binding and outcome code.",
        "counter",
    );
    for (o, bindings) in m.requests.iter().enumerate() {
        for (b, codes) in bindings.iter().enumerate() {
            for (c, counter) in codes.iter().enumerate() {
                let n = counter.get();
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "switchboard_requests_total{{operation=\"{}\",binding=\"{}\",code=\"{}\"}} {n}",
                        operation_label(o),
                        BINDINGS[b],
                        CODES[c]
                    );
                }
            }
        }
    }
    header(
        &mut out,
        "switchboard_request_duration_seconds",
        "Time to the response head, by operation and binding.",
        "histogram",
    );
    for (o, bindings) in m.request_duration.iter().enumerate() {
        for (b, h) in bindings.iter().enumerate() {
            if h.count() > 0 {
                let labels = format!(
                    "operation=\"{}\",binding=\"{}\"",
                    operation_label(o),
                    BINDINGS[b]
                );
                histogram(&mut out, "switchboard_request_duration_seconds", &labels, h);
            }
        }
    }
    header(
        &mut out,
        "switchboard_task_transitions_total",
        "Tasks entering each state (created in it or changed to it).",
        "counter",
    );
    for (i, state) in TaskState::ALL.iter().enumerate() {
        let n = m.task_transitions[i].get();
        if n > 0 {
            let _ = writeln!(
                out,
                "switchboard_task_transitions_total{{state=\"{}\"}} {n}",
                state_label(*state)
            );
        }
    }
    counter(
        &mut out,
        "switchboard_agent_runs_total",
        "Agent runs started.",
        &m.agent_runs,
    );
    write_gauge(
        &mut out,
        "switchboard_running_agents",
        "Agent runs in progress.",
        m.running_agents.get(),
    );
    write_gauge(
        &mut out,
        "switchboard_stream_subscribers",
        "Open event streams and blocking callers waiting on a task.",
        m.stream_subscribers.get(),
    );
    header(
        &mut out,
        "switchboard_store_commit_duration_seconds",
        "Time the store takes to commit a change to a task.",
        "histogram",
    );
    histogram(
        &mut out,
        "switchboard_store_commit_duration_seconds",
        "",
        &m.store_commit,
    );
    labelled_counters(
        &mut out,
        "switchboard_push_deliveries_total",
        "Push notification attempts, by outcome.",
        "outcome",
        &[
            ("delivered", &m.push_delivered),
            ("retried", &m.push_retried),
            ("dead_lettered", &m.push_dead_lettered),
        ],
    );
    write_gauge(
        &mut out,
        "switchboard_open_connections",
        "Client connections open now.",
        m.open_connections.get(),
    );
    counter(
        &mut out,
        "switchboard_connections_total",
        "Client connections accepted.",
        &m.connections,
    );
    labelled_counters(
        &mut out,
        "switchboard_llm_tokens_total",
        "Tokens the models of hosted LLM agents reported (their usage), by kind.",
        "kind",
        &[
            ("prompt", &m.llm_prompt_tokens),
            ("completion", &m.llm_completion_tokens),
        ],
    );
    out
}

/// The `state` label: the lowercase 0.3-style name (`input-required`).
fn state_label(s: TaskState) -> &'static str {
    match s {
        TaskState::Unspecified => "unspecified",
        TaskState::Submitted => "submitted",
        TaskState::Working => "working",
        TaskState::Completed => "completed",
        TaskState::Failed => "failed",
        TaskState::Canceled => "canceled",
        TaskState::InputRequired => "input-required",
        TaskState::Rejected => "rejected",
        TaskState::AuthRequired => "auth-required",
        _ => "unspecified",
    }
}

fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn counter(out: &mut String, name: &str, help: &str, c: &Counter) {
    header(out, name, help, "counter");
    let _ = writeln!(out, "{name} {}", c.get());
}

/// One counter family with a sample per value of `label`, zeros included.
fn labelled_counters(
    out: &mut String,
    name: &str,
    help: &str,
    label: &str,
    samples: &[(&str, &Counter)],
) {
    header(out, name, help, "counter");
    for (value, c) in samples {
        let _ = writeln!(out, "{name}{{{label}=\"{value}\"}} {}", c.get());
    }
}

/// Writes one unlabelled gauge (`# HELP`, `# TYPE` and its sample), for
/// values read at scrape time by whoever serves `/metrics`.
pub fn write_gauge(out: &mut String, name: &str, help: &str, value: i64) {
    header(out, name, help, "gauge");
    let _ = writeln!(out, "{name} {value}");
}

fn histogram(out: &mut String, name: &str, labels: &str, h: &Histogram) {
    let sep = if labels.is_empty() { "" } else { "," };
    let mut cumulative = 0;
    for (i, le) in LATENCY_BUCKETS.iter().enumerate() {
        cumulative += h.buckets[i].load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"{le}\"}} {cumulative}"
        );
    }
    cumulative += h.buckets[LATENCY_BUCKETS.len()].load(Ordering::Relaxed);
    let _ = writeln!(
        out,
        "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {cumulative}"
    );
    let sum = h.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
    let braces = |s: &str| {
        if s.is_empty() {
            String::new()
        } else {
            format!("{{{s}}}")
        }
    };
    let _ = writeln!(out, "{name}_sum{} {sum}", braces(labels));
    // The count is the buckets' total, so the exposition is consistent even
    // while observations land between the reads.
    let _ = writeln!(out, "{name}_count{} {cumulative}", braces(labels));
}
