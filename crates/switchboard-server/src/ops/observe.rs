//! `/metrics` and the layer that measures every request.
//!
//! [`Observe`] is a tower layer given to `A2aServer::layer`, so it sees
//! every request: all bindings and versions (gRPC included), the card, the
//! added routes. Around each it
//!
//! - gives the request its id and, when the access log is on, writes its
//!   access line ([`access_log`] says what both are);
//! - runs the request inside a [`switchboard_telemetry::probe`], in
//!   which the engine notes the operation and the bindings' error table
//!   the A2A error it was answered with, then counts the request in
//!   `switchboard_requests_total{operation,binding,code}` and its time to
//!   the response head in `switchboard_request_duration_seconds`;
//! - when tracing is on (an OpenTelemetry layer installed, see
//!   `switchboard_telemetry::trace`), opens the request's span,
//!   child of the caller's `traceparent` header (gRPC metadata are headers
//!   too), and names it after the operation. The span ends with the
//!   response head; an agent run it started is its child and goes on.
//!
//! `/metrics` answers the Prometheus text exposition
//! ([`switchboard_telemetry::metrics`] lists the metrics) plus
//! `switchboard_push_outbox_depth`, the notifications waiting in the
//! store's outbox, read when scraped.
//!
//! **Who may read it.** `/metrics` takes no credentials, like `/healthz`:
//! its series are aggregate counts whose labels come from closed sets
//! (operation, binding, error reason, task state), never ids, tenants,
//! principals or URLs. Operators who still want it off the public port set
//! `metrics_listen` (e.g. `127.0.0.1:9464`; in the SDK:
//! [`A2aServer::ops_without_metrics`](crate::A2aServer::ops_without_metrics)
//! and [`serve_metrics`]): it is then served only there.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use switchboard_core::PushStore;
use switchboard_telemetry::metrics::{METRICS, Outcome};
use switchboard_telemetry::{probe, trace};
use tracing::Instrument;

use super::access_log;

/// The path metrics are served at.
pub const METRICS_PATH: &str = "/metrics";

/// How long a scrape waits for the store's outbox count.
const OUTBOX_TIMEOUT: Duration = Duration::from_secs(2);

/// The layer: wraps a service in [`ObserveService`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Observe;

impl<S> tower::Layer<S> for Observe {
    type Service = ObserveService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        ObserveService { inner }
    }
}

/// See the [module docs](self).
#[derive(Debug, Clone)]
pub struct ObserveService<S> {
    inner: S,
}

impl<S> tower::Service<Request> for ObserveService<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let started = Instant::now();
        let binding = if req.uri().path() == METRICS_PATH {
            "metrics"
        } else {
            access_log::binding(&req)
        };
        let id = access_log::request_id(&mut req);
        let line = access_log::Line::of(&req, binding);
        let span = trace::server_span(binding, || {
            req.headers()
                .get(trace::TRACEPARENT)
                .and_then(|v| v.to_str().ok())
        });
        let future = self.inner.call(req);
        // One box per request for all of it: the access line, the metrics
        // and the span share the timing and the look at the answer.
        Box::pin(async move {
            // With tracing off (or the request not sampled) the span is
            // none: no wrapper entering it on every poll.
            let (Ok(mut resp), noted) = if span.is_none() {
                probe::observe(future).await
            } else {
                probe::observe(future.instrument(span.clone())).await
            };
            let elapsed = started.elapsed();
            let status = resp.status().as_u16();
            METRICS.request(
                noted.operation,
                binding,
                Outcome::of(status, noted.error),
                elapsed,
            );
            if let Some(line) = line {
                // In the request's span, as the handlers' events are.
                span.in_scope(|| line.write(&resp, &id, elapsed));
            }
            trace::name_server_span(
                &span,
                noted.operation.map(|op| op.name()),
                status,
                noted.error,
            );
            access_log::answer_id(&mut resp, id);
            Ok(resp)
        })
    }
}

/// The `/metrics` answer: the process's metrics and, with `push`, the
/// outbox depth.
pub async fn metrics(push: Option<Arc<dyn PushStore>>) -> Response {
    let mut text = switchboard_telemetry::metrics::render();
    if let Some(push) = push {
        match tokio::time::timeout(OUTBOX_TIMEOUT, push.pending_count()).await {
            Ok(Ok(n)) => switchboard_telemetry::metrics::write_gauge(
                &mut text,
                "switchboard_push_outbox_depth",
                "Push notifications waiting in the outbox (due or scheduled for retry).",
                i64::try_from(n).unwrap_or(i64::MAX),
            ),
            // The rest of the metrics are still worth a scrape.
            Ok(Err(e)) => tracing::warn!(error = %e, "metrics: counting the push outbox failed"),
            Err(_) => tracing::warn!("metrics: counting the push outbox timed out"),
        }
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// `server` with `/metrics` beside its other routes; the outbox depth is
/// that of the handler's push store, if push is on when scraped.
pub(crate) fn routes(server: crate::A2aServer) -> crate::A2aServer {
    let handler = server.handler.clone();
    server.route(
        METRICS_PATH,
        axum::routing::get(move || metrics(handler.push_store().cloned())),
    )
}

/// Serves `/metrics` alone on `listener` until `shutdown` is cancelled,
/// with the outbox depth of `push` (e.g. `handler.push_store().cloned()`).
pub async fn serve_metrics(
    listener: tokio::net::TcpListener,
    push: Option<Arc<dyn PushStore>>,
    shutdown: tokio_util::sync::CancellationToken,
) -> std::io::Result<()> {
    let app = axum::Router::new().route(
        METRICS_PATH,
        axum::routing::get(move || metrics(push.clone())),
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}
