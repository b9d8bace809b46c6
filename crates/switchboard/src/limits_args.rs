//! `serve`'s limits: what one client may hold of the server (connections,
//! and how long it may take to send a request) and what one request may
//! ask of the engine (sizes and lengths, answered `InvalidParams`).
//! The connection limits ([`ConnectionArgs`]) are also `bridge`'s.
//!
//! Each limit is a flag, an environment variable (`SWITCHBOARD_` + the flag
//! name in capitals) and a key of the config file (the flag name with
//! underscores, at the top level beside the other keys). The flags become
//! [`switchboard_server::settings::LimitsSettings`], which documents each
//! key, what a caller past it gets, and turns them into the limits the
//! server, engine and store enforce.

use switchboard_server::ConnectionLimits;
use switchboard_server::settings::{ConnectionSettings, LimitsSettings};

/// The limit flags, flattened into `serve`'s (every one optional: a flag
/// beats the file, the file beats the default).
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct LimitsArgs {
    /// What one client may hold of the connections (also `bridge`'s).
    #[command(flatten)]
    pub connections: ConnectionArgs,
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
    /// Most tasks one caller may have worked on at once (runs of the agent
    /// in progress; a task waiting for input does not count). Default 100.
    #[arg(long, env = "SWITCHBOARD_MAX_ACTIVE_TASKS_PER_PRINCIPAL")]
    pub max_active_tasks_per_principal: Option<usize>,
    /// On PostgreSQL, count each caller's active tasks across every replica
    /// instead of per replica (two statements per run on one row per
    /// caller). Default off.
    #[arg(long, env = "SWITCHBOARD_SHARE_ACTIVE_TASKS")]
    pub share_active_tasks: bool,
    /// Most SubscribeToTask streams open at once on one task. Default 64.
    #[arg(long, env = "SWITCHBOARD_MAX_SUBSCRIBERS_PER_TASK")]
    pub max_subscribers_per_task: Option<usize>,
    /// Largest GetTask or ListTasks answer, as JSON, in bytes: pages end
    /// early, histories lose their oldest messages. Default 16 MiB.
    #[arg(long, env = "SWITCHBOARD_MAX_RESPONSE_BYTES")]
    pub max_response_bytes: Option<usize>,
    /// Bytes of tasks and event logs (as JSON) each caller may keep in the
    /// store; a write past it is refused (ResourceExhausted), except the
    /// one finishing a task. 0: no limit. Default 1 GiB.
    #[arg(long, env = "SWITCHBOARD_MAX_STORAGE_BYTES_PER_PRINCIPAL")]
    pub max_storage_bytes_per_principal: Option<u64>,
    /// Requests per second each caller may make (a token bucket; 429 /
    /// RESOURCE_EXHAUSTED past it): each authenticated principal, and each
    /// client address (IPv6: /64) of anonymous callers. 0: no limit. Default 50.
    #[arg(long, env = "SWITCHBOARD_RATE_PER_SECOND")]
    pub rate_per_second: Option<f64>,
    /// Requests a caller may make at once after a quiet period (the
    /// bucket's size). Default 200.
    #[arg(long, env = "SWITCHBOARD_RATE_BURST")]
    pub rate_burst: Option<u32>,
}

/// The connection limits: what one client may hold and how long it may
/// take to send a request. Flattened into `serve`'s flags (through
/// [`LimitsArgs`]) and into `bridge`'s, which faces the same callers.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct ConnectionArgs {
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
    /// Most bytes all connections together may hold in request bodies being
    /// read and answers not yet written; a request past it is answered 503
    /// with Retry-After (gRPC: UNAVAILABLE). 0: no budget. Default 128 MiB.
    #[arg(long, env = "SWITCHBOARD_MAX_BUFFERED_BYTES")]
    pub max_buffered_bytes: Option<usize>,
    /// Milliseconds an answer may wait for its reader to take a byte (an
    /// HTTP/2 window left at zero, a socket never read) before its stream is
    /// reset or its connection closed. 0: no limit. Default 30000.
    #[arg(long, env = "SWITCHBOARD_WRITE_TIMEOUT_MS")]
    pub write_timeout_ms: Option<u64>,
}

impl ConnectionArgs {
    /// The settings as the server crate takes them.
    pub fn settings(&self) -> ConnectionSettings {
        ConnectionSettings {
            header_read_timeout_ms: self.header_read_timeout_ms,
            body_read_timeout_ms: self.body_read_timeout_ms,
            body_min_rate: self.body_min_rate,
            idle_timeout_ms: self.idle_timeout_ms,
            max_connections: self.max_connections,
            max_connections_per_ip: self.max_connections_per_ip,
            max_buffered_bytes: self.max_buffered_bytes,
            write_timeout_ms: self.write_timeout_ms,
        }
    }

    /// The server's connection limits: the set ones over the defaults.
    pub fn connection_limits(&self) -> ConnectionLimits {
        self.settings().connection_limits()
    }
}

impl LimitsArgs {
    /// The settings as the server crate takes them.
    pub fn settings(&self) -> LimitsSettings {
        LimitsSettings {
            connections: self.connections.settings(),
            max_id_bytes: self.max_id_bytes,
            max_parts_per_message: self.max_parts_per_message,
            max_part_bytes: self.max_part_bytes,
            max_message_bytes: self.max_message_bytes,
            max_metadata_bytes: self.max_metadata_bytes,
            default_history_length: self.default_history_length,
            max_active_tasks_per_principal: self.max_active_tasks_per_principal,
            share_active_tasks: self.share_active_tasks,
            max_subscribers_per_task: self.max_subscribers_per_task,
            max_response_bytes: self.max_response_bytes,
            max_storage_bytes_per_principal: self.max_storage_bytes_per_principal,
            rate_per_second: self.rate_per_second,
            rate_burst: self.rate_burst,
        }
    }
}
