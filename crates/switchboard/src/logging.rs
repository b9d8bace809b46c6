//! `serve`'s logs: where they go, in what form, and what they never say.
//!
//! Logs go to stderr, filtered by `--log` / `SWITCHBOARD_LOG` (tracing's
//! `EnvFilter` syntax, default `info`). `--log-format` picks the form:
//!
//! - `text`: one human-readable line per event, with ANSI colours only when
//!   stderr is a terminal (a log file never gets escape codes);
//! - `json`: one JSON object per line, `{"timestamp", "level", "target",
//!   "message", …fields}`, for log shippers;
//! - `auto` (the default): text on a terminal, JSON otherwise.
//!
//! Every request gets one access line (see [`crate::access_log`]).
//! Secrets stay out by construction: no request headers or bodies are
//! logged, store URLs are logged with their password masked
//! ([`crate::config::mask_url_credentials`]), and push configs (their
//! tokens and credentials) are never logged, only task and config ids.
//! `tests/logs.rs` greps the logs of a run that used each kind of secret.

use std::fmt;
use std::io::IsTerminal;

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

use crate::serve::LogFormat;

/// `--log-format` and `--log`: how and what `serve` and `bridge` log (the
/// bridge reads them from its own `SWITCHBOARD_BRIDGE_*` variables).
#[derive(Debug, Clone, clap::Args)]
pub struct LogArgs {
    /// Log format on stderr: `text` (no colours unless stderr is a
    /// terminal) or `json` (one object per line); default: text on a
    /// terminal, JSON otherwise.
    #[arg(long, env = "SWITCHBOARD_LOG_FORMAT", value_enum, default_value_t = LogFormat::Auto)]
    pub log_format: LogFormat,
    /// Which log events to write, in tracing's filter syntax, e.g. `warn`
    /// or `info,switchboard_core=debug`.
    #[arg(
        long,
        env = "SWITCHBOARD_LOG",
        default_value = "info",
        value_name = "FILTER"
    )]
    pub log: String,
}

impl LogArgs {
    /// Installs the global subscriber these settings describe, with
    /// `extra` beside it (see [`init_with`]).
    pub fn init(&self, extra: Option<Box<dyn Layer<Registry> + Send + Sync>>) {
        init_with(self.log_format, &self.log, extra);
    }
}

/// Installs the global subscriber for `serve` (once; later calls do
/// nothing), writing the events `filter` selects (`--log`).
pub fn init(format: LogFormat, filter: &str) {
    init_with(format, filter, None);
}

/// [`init`], plus `extra` beside the log writer, with a filter of its own
/// (the OpenTelemetry layer of [`crate::otel`]): `--log` chooses what is
/// written, not what is traced.
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
    let writer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(terminal && !json);
    let writer = if json {
        writer.event_format(JsonLines).with_filter(filter).boxed()
    } else {
        writer.with_filter(filter).boxed()
    };
    let _ = tracing_subscriber::registry()
        .with(extra)
        .with(writer)
        .try_init();
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
        let meta = event.metadata();
        let mut fields = Fields(serde_json::Map::new());
        fields.0.insert(
            "timestamp".into(),
            chrono::Utc::now()
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
                .into(),
        );
        fields
            .0
            .insert("level".into(), meta.level().as_str().into());
        fields.0.insert("target".into(), meta.target().into());
        if let Some(scope) = ctx.event_scope() {
            let spans: Vec<serde_json::Value> =
                scope.from_root().map(|s| s.name().into()).collect();
            fields.0.insert("spans".into(), spans.into());
        }
        event.record(&mut fields);
        let line = serde_json::Value::Object(fields.0).to_string();
        writeln!(writer, "{line}")
    }
}

/// An event's fields as JSON values.
struct Fields(serde_json::Map<String, serde_json::Value>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0.insert(field.name().into(), value.to_string().into());
    }
}
