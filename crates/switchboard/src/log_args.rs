//! `--log` and `--log-format`: the command line of
//! `switchboard_telemetry::logging` (where the logs go, in what form, and
//! what they never say).

use switchboard_telemetry::logging::{self, LogFormat};
use tracing_subscriber::{Layer, Registry};

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
    /// `extra` beside it (see `logging::init_with`).
    pub fn init(&self, extra: Option<Box<dyn Layer<Registry> + Send + Sync>>) {
        logging::init_with(self.log_format, &self.log, extra);
    }
}
