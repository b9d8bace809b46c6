//! `/healthz` and `/readyz`: what an orchestrator probes.
//!
//! - `GET /healthz` (liveness) answers 200 while the process serves HTTP at
//!   all; it touches nothing else, so a slow database never gets a healthy
//!   process restarted.
//! - `GET /readyz` (readiness) answers 200 when the store answers
//!   [`TaskStore::health`] (reachable, migrations applied, on PostgreSQL
//!   replicas the task lease renewed) within [`READY_TIMEOUT`], else 503
//!   with the reason: a load balancer then sends new work elsewhere.
//!
//! Both are added by [`A2aServer::ops`] beside the A2A bindings on the
//! same port, and pass no authentication: they reveal nothing but up/down.

use std::sync::Arc;
use std::time::Duration;

use crate::A2aServer;
use axum::Json;
use axum::http::StatusCode;
use axum::routing::get;
use serde_json::json;
use switchboard_core::TaskStore;

/// How long `/readyz` waits for the store before calling it unavailable.
pub const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// `server` with `/healthz` and `/readyz` (the latter asking `store`).
pub fn routes(server: A2aServer, store: Arc<dyn TaskStore>) -> A2aServer {
    server
        .route("/healthz", get(|| async { Json(json!({"status": "ok"})) }))
        .route(
            "/readyz",
            get(move || {
                let store = store.clone();
                async move { ready(store.as_ref()).await }
            }),
        )
}

async fn ready(store: &dyn TaskStore) -> (StatusCode, Json<serde_json::Value>) {
    let outcome = match tokio::time::timeout(READY_TIMEOUT, store.health()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "the store did not answer within {} ms",
            READY_TIMEOUT.as_millis()
        )),
    };
    match outcome {
        Ok(()) => (StatusCode::OK, Json(json!({"status": "ok"}))),
        Err(reason) => {
            tracing::warn!(%reason, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"status": "unavailable", "reason": reason})),
            )
        }
    }
}
