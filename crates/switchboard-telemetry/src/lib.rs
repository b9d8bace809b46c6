//! What operators watch: metrics and trace context, at no cost when unused.
//!
//! - [`metrics`]: the process's counters, gauges and histograms on plain
//!   atomics in one static ([`metrics::METRICS`]), written out as Prometheus
//!   text by [`metrics::render`]. Recording is a few relaxed atomic adds: no
//!   lock, no allocation, nothing to configure.
//! - [`probe`]: a per-request slot (a tokio task-local) in which the engine
//!   notes which operation a request ran and the bindings note the error it
//!   was answered with, so a layer around the whole server can count
//!   requests by operation without decoding bodies.
//! - [`trace`]: W3C Trace Context (`traceparent`) parsing and formatting,
//!   and the hook through which an OpenTelemetry pipeline, when one is
//!   installed (feature `otel`), links spans to remote parents and reads the
//!   context to send on. Without one, no span is created and no header is
//!   read or written.
//! - `logging` (feature `logging`): the process's subscriber — text or JSON
//!   lines on stderr from a writer thread that never blocks a request.
//! - `otel` (feature `otel`): OpenTelemetry traces over OTLP, configured by
//!   the standard `OTEL_*` variables.
//!
//! Without features this crate depends on `tracing`, `tokio` and the
//! protocol vocabulary only, so every switchboard crate can record into it,
//! hello-agent's dependency tree included, without pulling a subscriber or
//! OpenTelemetry.

#[cfg(feature = "logging")]
pub mod logging;
pub mod metrics;
#[cfg(feature = "otel")]
pub mod otel;
pub mod probe;
pub mod trace;

#[cfg(test)]
mod tests;
