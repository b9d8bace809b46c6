//! The limits as plain settings: what one client may hold of the server
//! (connections, how long it may take to send a request) and what one
//! request may ask of the engine, each an optional number in a serde
//! struct (a config file's top-level keys, or anything else that
//! deserializes), turned into the types that enforce them:
//! [`ConnectionLimits`], [`RequestRate`], the engine's [`Limits`] and
//! [`Quotas`], and the store's [`StorageQuota`].
//!
//! ```toml
//! header_read_timeout_ms = 10000   # the whole request head, and HTTP/1.1's wait between requests
//! body_read_timeout_ms = 10000     # grace before a body's minimum rate applies
//! body_min_rate = 1024             # bytes per second a body must average; 0 = no minimum
//! idle_timeout_ms = 60000          # a connection with no request in flight
//! max_connections = 1024           # open at once; when full the longest idle one is closed
//! max_connections_per_ip = 256     # open at once from one address
//! max_buffered_bytes = 134217728   # request bodies and unsent answers of all connections; 0 = no budget
//! write_timeout_ms = 30000         # an answer whose reader takes nothing is reset / closed; 0 = none
//! max_id_bytes = 256               # task, context, message, artifact, config ids
//! max_parts_per_message = 100
//! max_part_bytes = 4194304
//! max_message_bytes = 8388608
//! max_metadata_bytes = 65536
//! default_history_length = 100     # GetTask/ListTasks history without historyLength
//! max_active_tasks_per_principal = 100  # tasks being worked on at once per caller
//! share_active_tasks = false            # PostgreSQL: count them across replicas
//! max_subscribers_per_task = 64     # SubscribeToTask streams open on one task
//! max_response_bytes = 16777216     # GetTask/ListTasks answer size (pages end early, history trimmed)
//! max_storage_bytes_per_principal = 1073741824  # tasks and event logs one caller keeps in the store; 0 = no limit
//! rate_per_second = 50              # requests per second per caller (anonymous: per address); 0 = no limit
//! rate_burst = 200                  # requests at once after a quiet period
//! ```
//!
//! The quotas are answered ResourceExhausted: HTTP 429 (with `Retry-After`
//! for the request rate) on JSON-RPC and REST, RESOURCE_EXHAUSTED on gRPC.
//! A request the memory budget (`max_buffered_bytes`) has no room for is
//! answered HTTP 503 with `Retry-After` (gRPC: UNAVAILABLE).
//!
//! Unset limits keep [`ConnectionLimits::default`]'s and
//! [`Limits::default`]'s values (documented there): safe for the open
//! internet under a descriptor limit of 4096.
//!
//! ```
//! use switchboard_server::settings::LimitsSettings;
//! let settings: LimitsSettings =
//!     serde_json::from_str(r#"{"max_connections": 64, "rate_per_second": 0}"#).unwrap();
//! assert_eq!(settings.connection_limits().max_connections, 64);
//! assert!(settings.request_rate().is_none(), "0: no limit");
//! ```

use std::time::Duration;

use serde::{Deserialize, Serialize};
use switchboard_core::store::quota::StorageQuota;
use switchboard_core::{Limits, Quotas};

use crate::{ConnectionLimits, RequestRate};

/// What each caller may keep in the store unless configured: 1 GiB.
pub const DEFAULT_STORAGE_BYTES_PER_PRINCIPAL: u64 = 1 << 30;

/// Every limit, each optional: a set one replaces the default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LimitsSettings {
    /// What one client may hold of the connections.
    #[serde(flatten)]
    pub connections: ConnectionSettings,
    /// Longest id a caller may send, in bytes. Default 256.
    pub max_id_bytes: Option<usize>,
    /// Most parts in one message. Default 100.
    pub max_parts_per_message: Option<usize>,
    /// Largest part of a message, in bytes. Default 4 MiB.
    pub max_part_bytes: Option<usize>,
    /// Largest message (parts and metadata), in bytes. Default 8 MiB.
    pub max_message_bytes: Option<usize>,
    /// Largest metadata object, as JSON, in bytes. Default 64 KiB.
    pub max_metadata_bytes: Option<usize>,
    /// Messages of history GetTask and ListTasks return when the request
    /// sets no historyLength. Default 100.
    pub default_history_length: Option<u32>,
    /// Most tasks one caller may have worked on at once. Default 100.
    pub max_active_tasks_per_principal: Option<usize>,
    /// On PostgreSQL, count each caller's active tasks across every replica.
    pub share_active_tasks: bool,
    /// Most SubscribeToTask streams open at once on one task. Default 64.
    pub max_subscribers_per_task: Option<usize>,
    /// Largest GetTask or ListTasks answer, as JSON, in bytes. Default 16 MiB.
    pub max_response_bytes: Option<usize>,
    /// Bytes of tasks and event logs each caller may keep in the store.
    /// 0: no limit. Default 1 GiB.
    pub max_storage_bytes_per_principal: Option<u64>,
    /// Requests per second each caller may make. 0: no limit. Default 50.
    pub rate_per_second: Option<f64>,
    /// Requests a caller may make at once after a quiet period. Default 200.
    pub rate_burst: Option<u32>,
}

/// The connection limits: what one client may hold and how long it may
/// take to send a request (also all a front without the engine needs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConnectionSettings {
    /// Milliseconds a client may take to send a whole request head.
    pub header_read_timeout_ms: Option<u64>,
    /// Milliseconds a request body may take before its minimum rate applies.
    pub body_read_timeout_ms: Option<u64>,
    /// Bytes per second a request body must average after that grace.
    pub body_min_rate: Option<u64>,
    /// Milliseconds a connection with no request in flight is kept open.
    pub idle_timeout_ms: Option<u64>,
    /// Most connections open at once (at least 1).
    pub max_connections: Option<usize>,
    /// Most connections open at once from one IP address (at least 1).
    pub max_connections_per_ip: Option<usize>,
    /// Most bytes all connections together may hold. 0: no budget.
    pub max_buffered_bytes: Option<usize>,
    /// Milliseconds an answer may wait for its reader. 0: no limit.
    pub write_timeout_ms: Option<u64>,
}

impl ConnectionSettings {
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
            max_buffered_bytes: self.max_buffered_bytes.unwrap_or(d.max_buffered_bytes),
            write_timeout: ms(self.write_timeout_ms, d.write_timeout),
        }
    }
}

impl LimitsSettings {
    /// The engine's quotas: the set ones over the defaults.
    pub fn quotas(&self) -> Quotas {
        let d = Quotas::default();
        Quotas {
            max_active_tasks_per_principal: self
                .max_active_tasks_per_principal
                .unwrap_or(d.max_active_tasks_per_principal),
            share_active_tasks: self.share_active_tasks,
            max_subscribers_per_task: self
                .max_subscribers_per_task
                .unwrap_or(d.max_subscribers_per_task),
            max_response_bytes: self.max_response_bytes.unwrap_or(d.max_response_bytes),
        }
    }

    /// The store's quota per caller: the set one over 1 GiB; 0 is none.
    pub fn storage_quota(&self) -> StorageQuota {
        match self
            .max_storage_bytes_per_principal
            .unwrap_or(DEFAULT_STORAGE_BYTES_PER_PRINCIPAL)
        {
            0 => StorageQuota::default(),
            bytes => StorageQuota::per_owner(bytes),
        }
    }

    /// The request rate per caller; `None` when `rate_per_second` is 0.
    pub fn request_rate(&self) -> Option<RequestRate> {
        let d = RequestRate::default();
        let per_second = self.rate_per_second.unwrap_or(d.per_second);
        (per_second > 0.0).then(|| RequestRate {
            per_second,
            burst: self.rate_burst.unwrap_or(d.burst).max(1),
        })
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

    /// The server's connection limits (see [`ConnectionSettings`]).
    pub fn connection_limits(&self) -> ConnectionLimits {
        self.connections.connection_limits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_limits_replace_the_defaults_and_unset_ones_keep_them() {
        let limits = LimitsSettings {
            connections: ConnectionSettings {
                max_connections: Some(9),
                header_read_timeout_ms: Some(2000),
                max_buffered_bytes: Some(1 << 20),
                write_timeout_ms: Some(500),
                ..ConnectionSettings::default()
            },
            ..LimitsSettings::default()
        }
        .connection_limits();
        assert_eq!(limits.max_connections, 9);
        assert_eq!(limits.header_read_timeout, Duration::from_secs(2));
        assert_eq!(limits.max_buffered_bytes, 1 << 20);
        assert_eq!(limits.write_timeout, Duration::from_millis(500));
        assert_eq!(
            limits.idle_timeout,
            ConnectionLimits::default().idle_timeout
        );
    }
}
