//! `serve`'s limits: what one client may hold of the server (connections,
//! and how long it may take to send a request) and what one request may
//! ask of the engine (sizes and lengths, answered `InvalidParams`).
//!
//! Each limit is a flag, an environment variable (`SWITCHBOARD_` + the flag
//! name in capitals) and a key of the config file (the flag name with
//! underscores, at the top level beside the other keys):
//!
//! ```toml
//! header_read_timeout_ms = 10000   # the whole request head, and HTTP/1.1's wait between requests
//! body_read_timeout_ms = 10000     # grace before a body's minimum rate applies
//! body_min_rate = 1024             # bytes per second a body must average; 0 = no minimum
//! idle_timeout_ms = 60000          # a connection with no request in flight
//! max_connections = 1024           # open at once; when full the longest idle one is closed
//! max_connections_per_ip = 256     # open at once from one address
//! max_id_bytes = 256               # task, context, message, artifact, config ids
//! max_parts_per_message = 100
//! max_part_bytes = 4194304
//! max_message_bytes = 8388608
//! max_metadata_bytes = 65536
//! default_history_length = 100     # GetTask/ListTasks history without historyLength
//! ```
//!
//! Unset limits keep [`ConnectionLimits::default`]'s and
//! [`Limits::default`]'s values (documented there): safe for the open
//! internet under a descriptor limit of 4096.

use std::time::Duration;

use anyhow::Context as _;
use serde::Deserialize;
use switchboard_core::Limits;
use switchboard_server::ConnectionLimits;

/// The limit flags, flattened into `serve`'s (every one optional: a flag
/// beats the file, the file beats the default).
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsArgs {
    /// Milliseconds a client may take to send a whole request head (on
    /// HTTP/1.1 also the longest wait for the next request). Default 10000.
    #[arg(long, env = "SWITCHBOARD_HEADER_READ_TIMEOUT_MS")]
    pub header_read_timeout_ms: Option<u64>,
    /// Milliseconds a request body may take before its minimum rate applies.
    /// Default 10000.
    #[arg(long, env = "SWITCHBOARD_BODY_READ_TIMEOUT_MS")]
    pub body_read_timeout_ms: Option<u64>,
    /// Bytes per second a request body must average after that grace; a
    /// slower one is answered 408. 0: no minimum. Default 1024.
    #[arg(long, env = "SWITCHBOARD_BODY_MIN_RATE")]
    pub body_min_rate: Option<u64>,
    /// Milliseconds a connection with no request in flight is kept open.
    /// Default 60000.
    #[arg(long, env = "SWITCHBOARD_IDLE_TIMEOUT_MS")]
    pub idle_timeout_ms: Option<u64>,
    /// Most connections open at once; when full, the longest idle one is
    /// closed, else no more are accepted until one closes. Keep it well
    /// under the descriptor limit (`ulimit -n`). Default 1024.
    #[arg(long, env = "SWITCHBOARD_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Most connections open at once from one IP address. Default 256.
    #[arg(long, env = "SWITCHBOARD_MAX_CONNECTIONS_PER_IP")]
    pub max_connections_per_ip: Option<usize>,
    /// Longest id a caller may send, in bytes. Default 256.
    #[arg(long, env = "SWITCHBOARD_MAX_ID_BYTES")]
    pub max_id_bytes: Option<usize>,
    /// Most parts in one message. Default 100.
    #[arg(long, env = "SWITCHBOARD_MAX_PARTS_PER_MESSAGE")]
    pub max_parts_per_message: Option<usize>,
    /// Largest part of a message, in bytes. Default 4 MiB.
    #[arg(long, env = "SWITCHBOARD_MAX_PART_BYTES")]
    pub max_part_bytes: Option<usize>,
    /// Largest message (parts and metadata), in bytes. Default 8 MiB.
    #[arg(long, env = "SWITCHBOARD_MAX_MESSAGE_BYTES")]
    pub max_message_bytes: Option<usize>,
    /// Largest metadata object, as JSON, in bytes. Default 64 KiB.
    #[arg(long, env = "SWITCHBOARD_MAX_METADATA_BYTES")]
    pub max_metadata_bytes: Option<usize>,
    /// Messages of history GetTask and ListTasks return when the request
    /// sets no historyLength. Default 100.
    #[arg(long, env = "SWITCHBOARD_DEFAULT_HISTORY_LENGTH")]
    pub default_history_length: Option<u32>,
}

impl LimitsArgs {
    /// These limits, each unset one taken from `fallback`.
    pub fn or(self, fallback: LimitsArgs) -> LimitsArgs {
        LimitsArgs {
            header_read_timeout_ms: self
                .header_read_timeout_ms
                .or(fallback.header_read_timeout_ms),
            body_read_timeout_ms: self.body_read_timeout_ms.or(fallback.body_read_timeout_ms),
            body_min_rate: self.body_min_rate.or(fallback.body_min_rate),
            idle_timeout_ms: self.idle_timeout_ms.or(fallback.idle_timeout_ms),
            max_connections: self.max_connections.or(fallback.max_connections),
            max_connections_per_ip: self
                .max_connections_per_ip
                .or(fallback.max_connections_per_ip),
            max_id_bytes: self.max_id_bytes.or(fallback.max_id_bytes),
            max_parts_per_message: self
                .max_parts_per_message
                .or(fallback.max_parts_per_message),
            max_part_bytes: self.max_part_bytes.or(fallback.max_part_bytes),
            max_message_bytes: self.max_message_bytes.or(fallback.max_message_bytes),
            max_metadata_bytes: self.max_metadata_bytes.or(fallback.max_metadata_bytes),
            default_history_length: self
                .default_history_length
                .or(fallback.default_history_length),
        }
    }

    /// The engine's limits: the set ones over the defaults.
    pub fn engine_limits(&self) -> Limits {
        let d = Limits::default();
        Limits {
            max_id_bytes: self.max_id_bytes.unwrap_or(d.max_id_bytes),
            max_parts_per_message: self
                .max_parts_per_message
                .unwrap_or(d.max_parts_per_message),
            max_part_bytes: self.max_part_bytes.unwrap_or(d.max_part_bytes),
            max_message_bytes: self.max_message_bytes.unwrap_or(d.max_message_bytes),
            max_metadata_bytes: self.max_metadata_bytes.unwrap_or(d.max_metadata_bytes),
            default_history_length: self
                .default_history_length
                .unwrap_or(d.default_history_length),
        }
    }

    /// The server's connection limits: the set ones over the defaults.
    pub fn connection_limits(&self) -> ConnectionLimits {
        let d = ConnectionLimits::default();
        let ms = |v: Option<u64>, default: Duration| v.map_or(default, Duration::from_millis);
        ConnectionLimits {
            header_read_timeout: ms(self.header_read_timeout_ms, d.header_read_timeout),
            body_read_timeout: ms(self.body_read_timeout_ms, d.body_read_timeout),
            body_min_rate: self.body_min_rate.unwrap_or(d.body_min_rate),
            idle_timeout: ms(self.idle_timeout_ms, d.idle_timeout),
            max_connections: self.max_connections.unwrap_or(d.max_connections).max(1),
            max_connections_per_ip: self
                .max_connections_per_ip
                .unwrap_or(d.max_connections_per_ip)
                .max(1),
        }
    }

    /// Splits a config file into its limit keys and the rest: the rest is
    /// deserialized as `T` (which may refuse unknown keys), the limits kept
    /// beside it.
    pub fn split_config<T: for<'de> Deserialize<'de>>(
        text: &str,
    ) -> anyhow::Result<(T, LimitsArgs)> {
        let mut table: toml::Table = toml::from_str(text)?;
        let mut limits = toml::Table::new();
        for key in Self::keys() {
            if let Some(value) = table.remove(&key) {
                limits.insert(key, value);
            }
        }
        let rest = T::deserialize(table)?;
        let limits = LimitsArgs::deserialize(limits).context("the limit keys")?;
        Ok((rest, limits))
    }

    /// The config keys: the flags' ids, which are the field names.
    fn keys() -> Vec<String> {
        use clap::Args as _;
        LimitsArgs::augment_args(clap::Command::new("limits"))
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Other {
        listen: String,
    }

    #[test]
    fn limit_keys_are_taken_out_of_the_file() -> anyhow::Result<()> {
        let (other, limits) = LimitsArgs::split_config::<Other>(
            "listen = \"x\"\nmax_connections = 7\nheader_read_timeout_ms = 2000\n",
        )?;
        assert_eq!(other.listen, "x");
        assert_eq!(limits.max_connections, Some(7));
        let flags = LimitsArgs {
            max_connections: Some(9),
            ..LimitsArgs::default()
        };
        let merged = flags.or(limits).connection_limits();
        assert_eq!(merged.max_connections, 9, "a flag beats the file");
        assert_eq!(merged.header_read_timeout, Duration::from_secs(2));
        assert_eq!(
            merged.idle_timeout,
            ConnectionLimits::default().idle_timeout
        );
        assert!(LimitsArgs::split_config::<Other>("listen = \"x\"\nmax_conections = 7\n").is_err());
        Ok(())
    }
}
