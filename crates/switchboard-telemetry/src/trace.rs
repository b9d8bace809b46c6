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

use std::collections::HashMap;
use std::fmt;
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

static PROPAGATOR: OnceLock<Box<dyn Propagator>> = OnceLock::new();

/// Plugs in the OpenTelemetry pipeline (once per process; a second call
/// returns `false` and changes nothing).
pub fn install(propagator: Box<dyn Propagator>) -> bool {
    PROPAGATOR.set(propagator).is_ok()
}

/// Whether a pipeline is installed, i.e. whether spans are made at all.
pub fn enabled() -> bool {
    PROPAGATOR.get().is_some()
}

/// The `traceparent` to send with an outgoing request made now: the
/// current span's context (`None` without a pipeline).
pub fn current() -> Option<TraceParent> {
    let p = PROPAGATOR.get()?;
    p.context(&Span::current())
}

/// The span of one incoming request on `binding`, child of the caller's
/// `traceparent` when it sent a valid one. Its name (`otel.name`) is set
/// (`a2a.server OPERATION`) is given with [`name_server_span`] once that is
/// known.
pub fn server_span(binding: &'static str, traceparent: Option<&str>) -> Span {
    let Some(p) = PROPAGATOR.get() else {
        return Span::none();
    };
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
    if let Some(parent) = traceparent.and_then(TraceParent::parse) {
        p.set_parent(&span, &parent);
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
    let Some(p) = PROPAGATOR.get() else {
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
/// (the request that started the run).
pub fn agent_span(task_id: &str, context_id: &str) -> Span {
    if !enabled() {
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
/// the current span; the call sends [`current`] from inside it.
pub fn client_span(operation: &'static str) -> Span {
    if !enabled() {
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
    let Some(p) = PROPAGATOR.get() else {
        return Span::none();
    };
    let span = tracing::info_span!(
        target: "switchboard::trace",
        "a2a.push",
        otel.name = "a2a.push deliver",
        otel.kind = "client",
        a2a.task_id = task_id,
        a2a.seq = seq,
    );
    if let Some(parent) = parent {
        p.set_parent(&span, parent);
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
