//! W3C Trace Context and the hook an OpenTelemetry pipeline plugs into.
//!
//! A trace crosses processes in one header, `traceparent` (W3C Trace
//! Context, level 1): `00-<trace id: 32 hex>-<parent span id: 16 hex>-<flags:
//! 2 hex>`. gRPC carries it as metadata of the same name. [`TraceParent`]
//! parses and formats it.
//!
//! The spans themselves are `tracing` spans. What turns them into
//! OpenTelemetry spans, links a span to a remote parent and reads a span's
//! context back is the OpenTelemetry pipeline, which lives in the
//! `switchboard` binary (feature `otel`) and is plugged in here with
//! [`install`]. Until then [`enabled`] is false, the span helpers return
//! [`tracing::Span::none`] and [`current`] is `None`: no header is parsed or
//! sent, no span is made. Where spans are made:
//!
//! - [`server_span`]: one per incoming request (every binding), named after
//!   the operation once it is known, child of the caller's `traceparent`;
//! - [`agent_span`]: one per agent run, child of the request that started it;
//! - [`client_span`]: one per outgoing call of `switchboard-client`, whose
//!   context is the `traceparent` the call sends;
//! - [`push_span`]: one per push delivery attempt, likewise; its parent is
//!   the agent run that committed the event when this process ran it
//!   ([`remember_origin`], a bounded in-memory map: the outbox does not
//!   store trace context, so a delivery made by another replica or after
//!   a restart starts a trace of its own).
//!
//! **Head sampling.** Which traces are recorded is decided once, where a
//! trace enters the process, *before* any span is made ([`Sampler`], read
//! from the standard `OTEL_TRACES_SAMPLER` variables by the binary): an
//! incoming request, a push delivery, or an outgoing call made outside any
//! span. An unsampled request gets no span at all (it costs what tracing
//! off costs), and nothing inside it makes one: an agent run's span is only
//! ever the child of a recorded request span, and a call made from an
//! unsampled run decides afresh as a new trace. So the OpenTelemetry side
//! records every span it is given (its own sampler is "always on").

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use tracing::Span;

/// The header (and gRPC metadata key) carrying the trace context.
pub const TRACEPARENT: &str = "traceparent";

/// A parsed `traceparent`: the trace, the caller's span, the sampled flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    /// The trace id (not all zero).
    pub trace_id: [u8; 16],
    /// The caller's span id (not all zero).
    pub span_id: [u8; 8],
    /// Trace flags; bit 0 is "sampled".
    pub flags: u8,
}

impl TraceParent {
    /// Parses a `traceparent` value. Version `00` must be exactly four
    /// fields; a higher version may carry more after a `-` (the spec's
    /// forward compatibility). `ff`, uppercase hex and all-zero ids are
    /// refused, as the spec says.
    pub fn parse(value: &str) -> Option<TraceParent> {
        let value = value.trim();
        let mut fields = value.splitn(5, '-');
        let version = fields.next()?;
        let trace = fields.next()?;
        let span = fields.next()?;
        let flags = fields.next()?;
        let rest = fields.next();
        if version.len() != 2 || version == "ff" || !lower_hex(version) {
            return None;
        }
        if version == "00" && rest.is_some() {
            return None;
        }
        if flags.len() != 2 {
            return None;
        }
        let tp = TraceParent {
            trace_id: hex_array(trace)?,
            span_id: hex_array(span)?,
            flags: hex_array::<1>(flags)?[0],
        };
        (tp.trace_id != [0; 16] && tp.span_id != [0; 8]).then_some(tp)
    }

    /// Whether the caller sampled this trace.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The trace id as 32 lowercase hex digits.
    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }
}

impl fmt::Display for TraceParent {
    /// The header value, version `00`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            hex(&self.trace_id),
            hex(&self.span_id),
            self.flags
        )
    }
}

fn lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn hex_array<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != 2 * N || !lower_hex(s) {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What an OpenTelemetry pipeline does for switchboard's spans.
pub trait Propagator: Send + Sync + fmt::Debug + 'static {
    /// Makes `span` a child of the remote span `parent`.
    fn set_parent(&self, span: &Span, parent: &TraceParent);
    /// The context of `span` as a `traceparent` to send on; `None` when the
    /// span is not recorded.
    fn context(&self, span: &Span) -> Option<TraceParent>;
    /// Renames `span` (its OpenTelemetry name), also after it started.
    fn rename(&self, span: &Span, name: String);
}

/// Which traces are recorded: the OpenTelemetry samplers a process picks
/// with `OTEL_TRACES_SAMPLER` (and `OTEL_TRACES_SAMPLER_ARG`), applied
/// before spans are made (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    /// What becomes of a new trace (and, when not `parent_based`, of every
    /// trace).
    pub root: Root,
    /// Whether a caller's `traceparent` decides instead: recorded when its
    /// sampled flag is set, not otherwise.
    pub parent_based: bool,
}

/// The decision for a trace no caller decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Root {
    /// Every trace.
    AlwaysOn,
    /// None.
    AlwaysOff,
    /// This fraction of traces (0.0 to 1.0).
    Ratio(f64),
}

impl Default for Sampler {
    /// `parentbased_always_on`, OpenTelemetry's default.
    fn default() -> Self {
        Sampler {
            root: Root::AlwaysOn,
            parent_based: true,
        }
    }
}

impl Sampler {
    /// The sampler an `OTEL_TRACES_SAMPLER` value and its argument name:
    /// `always_on`, `always_off`, `traceidratio`, and the `parentbased_`
    /// forms of each. `Err` says what is wrong (an unknown name, a ratio
    /// that is not a number from 0 to 1).
    pub fn from_env_values(name: &str, arg: Option<&str>) -> Result<Sampler, String> {
        let name = name.trim().to_ascii_lowercase();
        let (parent_based, root) = match name.strip_prefix("parentbased_") {
            Some(root) => (true, root),
            None => (false, name.as_str()),
        };
        let root = match root {
            "always_on" => Root::AlwaysOn,
            "always_off" => Root::AlwaysOff,
            "traceidratio" => {
                // The specification's default ratio is 1.0.
                let ratio = match arg.map(str::trim).filter(|a| !a.is_empty()) {
                    None => 1.0,
                    Some(a) => a
                        .parse::<f64>()
                        .ok()
                        .filter(|r| (0.0..=1.0).contains(r))
                        .ok_or_else(|| {
                            format!("OTEL_TRACES_SAMPLER_ARG={a}: expected a ratio from 0 to 1")
                        })?,
                };
                Root::Ratio(ratio)
            }
            _ => {
                return Err(format!(
                    "OTEL_TRACES_SAMPLER={name}: expected always_on, always_off, traceidratio or a parentbased_ form of one"
                ));
            }
        };
        Ok(Sampler { root, parent_based })
    }

    /// Whether to record a trace arriving with `parent` (or starting here).
    pub fn sample(&self, parent: Option<&TraceParent>) -> bool {
        match (parent, self.parent_based) {
            (Some(parent), true) => parent.sampled(),
            (parent, _) => match self.root {
                Root::AlwaysOn => true,
                Root::AlwaysOff => false,
                Root::Ratio(ratio) => {
                    // A known trace id decides the same way in every process
                    // (its low 64 bits are random by the W3C spec); a new
                    // trace draws.
                    let draw = match parent {
                        Some(p) => u64::from_be_bytes(low_half(&p.trace_id)),
                        None => next_draw(),
                    };
                    below(draw, ratio)
                }
            },
        }
    }
}

fn low_half(id: &[u8; 16]) -> [u8; 8] {
    let mut low = [0u8; 8];
    low.copy_from_slice(&id[8..]);
    low
}

/// Whether `draw`, uniform over `u64`, falls in the lowest `ratio` of it.
fn below(draw: u64, ratio: f64) -> bool {
    if ratio >= 1.0 {
        return true;
    }
    // `as` saturates, and ratio < 1 keeps the product under 2^64.
    draw < (ratio * 18_446_744_073_709_551_616.0) as u64
}

/// The next draw of a Weyl sequence (a process-random start plus the
/// golden-ratio step): one atomic add per decision, no lock, no RNG state,
/// and evenly spread, so a 1 % sampler records one trace in every ~100.
fn next_draw() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static START: OnceLock<u64> = OnceLock::new();
    let start = *START.get_or_init(|| RandomState::new().hash_one(0u8));
    const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;
    start.wrapping_add(NEXT.fetch_add(GOLDEN, Ordering::Relaxed))
}

/// The installed pipeline and its sampler.
struct Pipeline {
    propagator: Box<dyn Propagator>,
    sampler: Sampler,
}

static PIPELINE: OnceLock<Pipeline> = OnceLock::new();

/// Plugs in the OpenTelemetry pipeline with the sampler that decides
/// which traces it records (once per process; a second call returns
/// `false` and changes nothing).
pub fn install(propagator: Box<dyn Propagator>, sampler: Sampler) -> bool {
    PIPELINE
        .set(Pipeline {
            propagator,
            sampler,
        })
        .is_ok()
}

/// Whether a pipeline is installed, i.e. whether spans are made at all.
pub fn enabled() -> bool {
    PIPELINE.get().is_some()
}

/// The installed propagator, if any.
fn propagator() -> Option<&'static dyn Propagator> {
    PIPELINE.get().map(|p| &*p.propagator)
}

/// The `traceparent` to send with an outgoing request made now: the
/// current span's context (`None` without a pipeline).
pub fn current() -> Option<TraceParent> {
    let propagator = propagator()?;
    let span = Span::current();
    // Outside any span (an unsampled request: the engine asks for every
    // commit) there is nothing to send; the pipeline need not be asked.
    if span.is_none() {
        return None;
    }
    propagator.context(&span)
}

/// The span of one incoming request on `binding`, child of the caller's
/// `traceparent` when it sent a valid one; [`Span::none`] when the sampler
/// does not record this trace. Its name (`a2a.server OPERATION`) is given
/// with [`name_server_span`] once that is known.
///
/// `traceparent` looks the caller's header up; it is called only when a
/// pipeline is installed, so a server without tracing does not search
/// every request's headers for it.
pub fn server_span<'a>(
    binding: &'static str,
    traceparent: impl FnOnce() -> Option<&'a str>,
) -> Span {
    let Some(pipeline) = PIPELINE.get() else {
        return Span::none();
    };
    let parent = traceparent().and_then(TraceParent::parse);
    if !pipeline.sampler.sample(parent.as_ref()) {
        return Span::none();
    }
    let span = tracing::info_span!(
        target: "switchboard::trace",
        "a2a.request",
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        rpc.system = "a2a",
        rpc.method = tracing::field::Empty,
        a2a.binding = binding,
        a2a.error = tracing::field::Empty,
        http.response.status_code = tracing::field::Empty,
    );
    if let Some(parent) = &parent {
        pipeline.propagator.set_parent(&span, parent);
    }
    span
}

/// Names a [`server_span`] after what the request turned out to be.
pub fn name_server_span(
    span: &Span,
    operation: Option<&'static str>,
    status: u16,
    error: Option<&'static str>,
) {
    if span.is_none() {
        return;
    }
    let Some(p) = propagator() else {
        return;
    };
    // The OpenTelemetry span may already exist (a child was made, a
    // context read), so it is renamed through the pipeline, not a field.
    match operation {
        Some(op) => {
            p.rename(span, format!("a2a.server {op}"));
            span.record("rpc.method", op);
        }
        None => p.rename(span, "a2a.server".to_string()),
    }
    span.record("http.response.status_code", status);
    if let Some(reason) = error {
        span.record("a2a.error", reason);
        span.record("otel.status_code", "ERROR");
    }
}

/// The span of one agent run on task `task_id`, child of the current span
/// (the request that started the run); none outside a recorded span (an
/// unsampled request).
pub fn agent_span(task_id: &str, context_id: &str) -> Span {
    if !enabled() || Span::current().is_none() {
        return Span::none();
    }
    tracing::info_span!(
        target: "switchboard::trace",
        "a2a.agent",
        otel.name = "a2a.agent run",
        otel.kind = "internal",
        a2a.task_id = task_id,
        a2a.context_id = context_id,
    )
}

/// The span of one outgoing call of `operation` by our client, child of
/// the current span; the call sends [`current`] from inside it. Made
/// outside any span, the call starts a trace, which the sampler decides.
pub fn client_span(operation: &'static str) -> Span {
    let Some(pipeline) = PIPELINE.get() else {
        return Span::none();
    };
    if Span::current().is_none() && !pipeline.sampler.sample(None) {
        return Span::none();
    }
    tracing::info_span!(
        target: "switchboard::trace",
        "a2a.client",
        otel.name = format!("a2a.client {operation}"),
        otel.kind = "client",
        rpc.system = "a2a",
        rpc.method = operation,
    )
}

/// The span of one push delivery attempt of task `task_id`'s event `seq`,
/// child of `parent` when the delivery knows the trace its event came from.
pub fn push_span(task_id: &str, seq: u64, parent: Option<&TraceParent>) -> Span {
    let Some(pipeline) = PIPELINE.get() else {
        return Span::none();
    };
    // A known origin was recorded, so it was sampled; otherwise the
    // delivery starts a trace of its own.
    if parent.is_none() && !pipeline.sampler.sample(None) {
        return Span::none();
    }
    let span = tracing::info_span!(
        target: "switchboard::trace",
        "a2a.push",
        otel.name = "a2a.push deliver",
        otel.kind = "client",
        a2a.task_id = task_id,
        a2a.seq = seq,
    );
    if let Some(parent) = parent {
        pipeline.propagator.set_parent(&span, parent);
    }
    span
}

/// How many tasks' origins [`remember_origin`] keeps; past that it starts
/// over (a delivery that finds none starts its own trace).
const MAX_ORIGINS: usize = 4096;

static ORIGINS: Mutex<Option<HashMap<String, TraceParent>>> = Mutex::new(None);

/// Records the current span (an agent run committing task `task_id`'s
/// events) as the origin of that task's push deliveries in this process.
/// Without a pipeline, does nothing.
pub fn remember_origin(task_id: &str) {
    let Some(tp) = current() else {
        return;
    };
    if let Ok(mut map) = ORIGINS.lock() {
        let map = map.get_or_insert_with(HashMap::new);
        if map.len() >= MAX_ORIGINS && !map.contains_key(task_id) {
            map.clear();
        }
        map.insert(task_id.to_string(), tp);
    }
}

/// The span that last committed task `task_id`'s events in this process,
/// if [`remember_origin`] recorded one.
pub fn origin(task_id: &str) -> Option<TraceParent> {
    if !enabled() {
        return None;
    }
    ORIGINS.lock().ok()?.as_ref()?.get(task_id).copied()
}
