//! A webhook receiver for switchboard push notifications, in ~80 lines.
//!
//! It verifies every notification with
//! `switchboard_client::push::PushVerifier` (signature by `kid` against the
//! agent's JWKS, audience, freshness, body hash, replay), answers 401 to
//! anything that fails, and prints each genuine event once: delivery is
//! at-least-once, so a retry of an event already seen (same task id and
//! sequence number) is acknowledged and skipped.
//!
//! ```text
//! cargo run -p push-receiver -- [LISTEN] [AGENT_URL]
//!   LISTEN     address to listen on (default 127.0.0.1:9000)
//!   AGENT_URL  the agent's base URL (default http://127.0.0.1:8080)
//! ```
//!
//! Then register `http://LISTEN/webhook` as a push config, e.g. with
//! `switchboard serve --push-allow-host 127.0.0.1` and a SendMessage whose
//! `configuration.taskPushNotificationConfig.url` is that URL.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use switchboard_client::push::PushVerifier;

struct App {
    verifier: PushVerifier,
    /// (task id, seq) already printed: retries are acknowledged, not repeated.
    seen: Mutex<HashSet<(String, u64)>>,
}

async fn webhook(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    match app.verifier.verify(&headers, &body).await {
        Ok(n) => {
            let key = (n.claims.task_id.clone(), n.claims.seq);
            let first = app.seen.lock().map(|mut s| s.insert(key)).unwrap_or(true);
            if first {
                let event = serde_json::to_string(&n.event).unwrap_or_default();
                println!(
                    "task {} event {} (kid {}): {event}",
                    n.claims.task_id, n.claims.seq, n.kid
                );
            }
            StatusCode::OK
        }
        Err(e) => {
            eprintln!("rejected a notification: {e}");
            StatusCode::UNAUTHORIZED
        }
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let listen = args.next().unwrap_or_else(|| "127.0.0.1:9000".into());
    let agent = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:8080".into());
    let agent = agent.trim_end_matches('/');
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    let webhook_url = format!("http://{}/webhook", listener.local_addr()?);
    let app = Arc::new(App {
        verifier: PushVerifier::from_jwks_url(
            format!("{agent}/.well-known/jwks.json"),
            &webhook_url,
        ),
        seen: Mutex::new(HashSet::new()),
    });
    println!("push-receiver: register {webhook_url} as a push config (agent keys from {agent})");
    let router = Router::new()
        .route("/webhook", post(webhook))
        .with_state(app);
    axum::serve(listener, router).await
}
