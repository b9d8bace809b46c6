//! What an operator needs besides the A2A bindings: probes, metrics, an
//! access log and request ids (feature `ops`, on by default).
//!
//! [`A2aServer::ops`] adds them all in one call, on the server's own port:
//!
//! - `GET /healthz` and `GET /readyz` ([`health`]): liveness, and readiness
//!   as the handler's store reports it;
//! - `GET /metrics` ([`observe`]): the Prometheus text of
//!   `switchboard_telemetry::metrics`, plus the push outbox depth when push
//!   notifications are on;
//! - the [`Observe`] layer around every request: its id (`X-Request-Id`), its
//!   access line ([`access_log`], target `switchboard::access` at `info`), its
//!   count and duration in the metrics and, when tracing is on, its span.
//!
//! None of these routes takes credentials: they reveal up/down and
//! aggregate counts whose labels come from closed sets, never ids, tenants
//! or principals. To keep `/metrics` off the public port, add the rest with
//! [`A2aServer::ops_without_metrics`] and serve the metrics elsewhere with
//! [`serve_metrics`].
//!
//! The access line is a `tracing` event: it is written wherever the
//! process's subscriber writes (an SDK user installs one, e.g.
//! `tracing_subscriber::fmt::init()`; `switchboard serve` installs its own).
//!
//! ```no_run
//! # async fn run(handler: switchboard_core::RequestHandler) -> std::io::Result<()> {
//! use switchboard_server::A2aServer;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! A2aServer::new(handler)
//!     .public_url("http://127.0.0.1:8080")
//!     .ops()
//!     .serve(listener, std::future::pending())
//!     .await
//! # }
//! ```

pub mod access_log;
pub mod health;
pub mod observe;

pub use observe::{METRICS_PATH, Observe, serve_metrics};

use crate::A2aServer;

impl A2aServer {
    /// Adds `/healthz`, `/readyz`, `/metrics` and the [`Observe`] layer
    /// (request ids, access log, metrics, spans); see the [module docs](self).
    pub fn ops(self) -> Self {
        observe::routes(self.ops_without_metrics())
    }

    /// [`A2aServer::ops`] without the `/metrics` route: for serving the
    /// metrics on another listener ([`serve_metrics`]).
    pub fn ops_without_metrics(self) -> Self {
        let store = self.handler.store().clone();
        health::routes(self, store).layer(Observe)
    }
}
