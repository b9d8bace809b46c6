//! What one client may hold of the server's connections, and for how long.
//!
//! A server on the open internet meets clients that open connections and
//! then say nothing, send a request head one byte at a time (*slowloris*),
//! or claim a large body and trickle it. Each such connection costs a file
//! descriptor and a little memory while doing no work; without limits a few
//! thousand of them fill the descriptor table and every honest client is
//! refused. [`ConnectionLimits`] bounds each way of holding on:
//!
//! - **time**: the request head must arrive whole within
//!   [`header_read_timeout`](ConnectionLimits::header_read_timeout), a body
//!   must keep up a minimum rate after a grace period, and a connection with
//!   no request in flight is closed after
//!   [`idle_timeout`](ConnectionLimits::idle_timeout);
//! - **count**: at most [`max_connections`](ConnectionLimits::max_connections)
//!   open at once and [`max_connections_per_ip`](ConnectionLimits::max_connections_per_ip)
//!   from one address. When full, a new connection closes the connection
//!   that has been idle longest (a silent or trickling one is idle: it has
//!   no request in flight); only when none is idle does the server stop
//!   accepting until one closes (back-pressure: new clients wait in the
//!   kernel's listen queue instead of being refused).
//!
//! - **memory**: request bodies being read and answers not yet written
//!   together hold at most
//!   [`max_buffered_bytes`](ConnectionLimits::max_buffered_bytes) (the
//!   [memory budget](crate::budget)); a request that would need more is
//!   answered 503 with `Retry-After` (gRPC: UNAVAILABLE) instead of being
//!   buffered, and a client that stops reading its answer (an HTTP/2 window
//!   left at zero, a socket never read) has its stream reset or its
//!   connection closed after
//!   [`write_timeout`](ConnectionLimits::write_timeout), which frees what
//!   the answer held.
//!
//! A connection cut off while reading a body is answered `408 Request
//! Timeout` (and closed); one cut off before its head is complete, or while
//! idle, is closed without an answer, as there is no request to answer.

use std::time::Duration;

/// Limits on connections (see the [module docs](self)); set with
/// [`A2aServer::connection_limits`](crate::A2aServer::connection_limits).
///
/// The defaults suit a server on the open internet behind the usual
/// descriptor limit of a service (`ulimit -n` of 4096 or more): keep
/// `max_connections` well below the process's descriptor limit, which also
/// covers the store's files and outgoing connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a client may take to send a whole request head, from the
    /// moment the server starts waiting for it (default 10 s). On HTTP/1.1
    /// the wait for the next request of a kept-alive connection counts too,
    /// so an idle HTTP/1.1 connection is closed after the smaller of this
    /// and `idle_timeout`.
    pub header_read_timeout: Duration,
    /// The grace a request body gets before its minimum rate applies
    /// (default 10 s).
    pub body_read_timeout: Duration,
    /// The slowest a body may arrive, in bytes per second, averaged from its
    /// start (default 1024): by `t` seconds after the head, at least
    /// `(t - body_read_timeout) × body_min_rate` bytes must have come. A
    /// body claimed at 50 MB and sent at 1 byte/s is cut off after the
    /// grace period. 0 turns the check off: bodies may take any time.
    pub body_min_rate: u64,
    /// How long a connection with no request in flight is kept open
    /// (default 60 s).
    pub idle_timeout: Duration,
    /// The most connections open at once (default 1024).
    pub max_connections: usize,
    /// The most connections open at once from one IP address (default 256).
    pub max_connections_per_ip: usize,
    /// The most bytes all connections together may hold in request bodies
    /// being read and answers not yet written (default 128 MiB; see the
    /// [memory budget](crate::budget)). 0 turns the budget off.
    ///
    /// The budget counts those bytes, not everything they cost: the
    /// allocator's slack, answers being built and what handlers decode from
    /// bodies come on top. 128 MiB keeps the server's resident set within
    /// about 256 MiB of its idle size under the attacks of
    /// `bench/slow_readers.sh`.
    pub max_buffered_bytes: usize,
    /// How long an answer may make no progress while it has bytes to write
    /// (default 30 s): an HTTP/2 stream whose reader grants no window is
    /// reset (`CANCEL`), a connection whose socket takes no bytes is closed.
    /// Zero turns the check off.
    pub write_timeout: Duration,
}

/// The default [`ConnectionLimits::max_buffered_bytes`]: 128 MiB.
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 128 * 1024 * 1024;

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(10),
            body_min_rate: 1024,
            idle_timeout: Duration::from_secs(60),
            max_connections: 1024,
            max_connections_per_ip: 256,
            max_buffered_bytes: DEFAULT_MAX_BUFFERED_BYTES,
            write_timeout: Duration::from_secs(30),
        }
    }
}

impl ConnectionLimits {
    /// The latest a body that has delivered `received` bytes may deliver
    /// its next one, counted from the end of its request head; `None` when
    /// there is no minimum rate.
    pub(crate) fn body_deadline(&self, received: u64) -> Option<Duration> {
        if self.body_min_rate == 0 {
            return None;
        }
        let earned = Duration::from_secs_f64(received as f64 / self.body_min_rate as f64);
        Some(self.body_read_timeout.saturating_add(earned))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_earns_time_at_the_minimum_rate() {
        let limits = ConnectionLimits::default();
        assert_eq!(limits.body_deadline(0), Some(Duration::from_secs(10)));
        assert_eq!(limits.body_deadline(2048), Some(Duration::from_secs(12)));
        let off = ConnectionLimits {
            body_min_rate: 0,
            ..limits
        };
        assert_eq!(off.body_deadline(5), None);
    }
}
