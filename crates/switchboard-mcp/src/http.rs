//! The front over MCP's streamable HTTP, as an axum [`Router`].
//!
//! One path (`/mcp` by default) takes MCP's POSTs (JSON-RPC messages;
//! answers as JSON or an SSE stream carrying the call's progress), GETs
//! (the session's own stream) and DELETEs (end a session), served by
//! rmcp's `StreamableHttpService`. Around it:
//!
//! - **Callers.** The authentication layer the AG-UI bridge uses
//!   ([`switchboard_bridge::authenticated`]): a caller the authenticator
//!   refuses gets `401` (with the scheme's challenge) or `403` before its
//!   body is read. Its principal scopes its tasks ([`crate::call`]).
//! - **Sessions.** A legacy (pre-2026-07-28) MCP session is bound to the
//!   caller that opened it: a request naming a session another caller
//!   opened is answered `404`, exactly as a session that does not exist,
//!   so session ids cannot be used to ride on another caller's session
//!   (its elicitations, its progress).
//! - **Bodies.** A body over [`HttpOptions::max_body_bytes`] is refused
//!   with `413` while it is read (never buffered whole); a body that is not
//!   JSON gets `400` and JSON-RPC's parse error, JSON that is not a
//!   JSON-RPC message `400` and its invalid-request error; the `Host`
//!   header must name one of [`HttpOptions::allowed_hosts`] (DNS
//!   rebinding).
//!
//! [`McpFront::serve_http`] serves the router on a port of its own (a
//! [`Front`]: until Ctrl-C or SIGTERM, then drained), accepting the address
//! it is bound on as a `Host` besides the configured ones.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderName, Method, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use switchboard_bridge::Caller;
use switchboard_server::{Authenticator, ConnectionLimits, Front};

use crate::McpFront;

/// The header that names an MCP session.
const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");

/// How many session bindings are kept before the closed sessions' are
/// dropped.
const PRUNE_AT: usize = 1024;

/// Settings of the HTTP endpoint.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The path MCP is served at.
    pub path: String,
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// The `Host` values (with or without port) requests may carry.
    pub allowed_hosts: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            path: "/mcp".to_owned(),
            max_body_bytes: 1 << 20,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
        }
    }
}

impl HttpOptions {
    /// Sets [`HttpOptions::path`].
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Sets [`HttpOptions::max_body_bytes`].
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Adds hosts to [`HttpOptions::allowed_hosts`].
    pub fn allow_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts.extend(hosts.into_iter().map(Into::into));
        self
    }
}

/// Which caller opened each live session.
#[derive(Debug)]
struct Sessions {
    owners: Mutex<HashMap<String, String>>,
    manager: Arc<LocalSessionManager>,
}

impl Sessions {
    fn owner(&self, id: &str) -> Option<String> {
        self.owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    async fn bind(&self, id: String, caller: String) {
        let prune = {
            let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
            owners.entry(id).or_insert(caller);
            owners.len() > PRUNE_AT
        };
        if prune {
            // Sessions rmcp closed (idle, deleted) leave their binding
            // behind: keep only the live ones.
            let live: Vec<String> = self
                .manager
                .sessions
                .read()
                .await
                .keys()
                .map(|k| k.to_string())
                .collect();
            self.owners
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|id, _| live.contains(id));
        }
    }

    fn unbind(&self, id: &str) {
        self.owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }
}

impl McpFront {
    /// Serves [`router`](Self::router) on `front` under `limits` until
    /// Ctrl-C or SIGTERM ([`Front::serve`]); requests may name the bound
    /// address (with and without its port) as their `Host`.
    pub async fn serve_http(
        &self,
        front: Front,
        options: HttpOptions,
        authenticator: Arc<dyn Authenticator>,
        limits: ConnectionLimits,
    ) -> std::io::Result<()> {
        let addr = front.local_addr();
        let options = options.allow_hosts([addr.to_string(), addr.ip().to_string()]);
        front
            .serve(self.router(options, authenticator), limits)
            .await
    }

    /// The streamable HTTP endpoint (see the module docs), letting in the
    /// callers `authenticator` accepts.
    pub fn router(&self, options: HttpOptions, authenticator: Arc<dyn Authenticator>) -> Router {
        let manager = Arc::new(LocalSessionManager::default());
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(options.allowed_hosts.clone())
            .with_max_request_body_bytes(options.max_body_bytes);
        let front = self.clone();
        let service =
            StreamableHttpService::new(move || Ok(front.clone()), manager.clone(), config);
        let sessions = Arc::new(Sessions {
            owners: Mutex::new(HashMap::new()),
            manager,
        });
        let limit = options.max_body_bytes;
        let routes = Router::new()
            .route_service(&options.path, service)
            .layer(axum::middleware::from_fn(
                move |request: Request, next: Next| {
                    let sessions = sessions.clone();
                    async move { bind_sessions(&sessions, request, next).await }
                },
            ))
            .layer(axum::middleware::from_fn(
                move |request: Request, next: Next| check_body(limit, request, next),
            ));
        switchboard_bridge::authenticated(routes, authenticator)
    }
}

/// Refuses a session of another caller; records who opens one.
async fn bind_sessions(sessions: &Sessions, request: Request, next: Next) -> Response {
    let caller = request
        .extensions()
        .get::<Caller>()
        .map(|c| c.0.clone())
        .unwrap_or_default();
    let named = request
        .headers()
        .get(&SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(id) = &named
        && sessions.owner(id).as_deref() != Some(caller.as_str())
    {
        return no_session();
    }
    let deleting = request.method() == Method::DELETE;
    let response = next.run(request).await;
    match (&named, deleting) {
        (Some(id), true) if response.status().is_success() => sessions.unbind(id),
        (None, _) => {
            if let Some(id) = response
                .headers()
                .get(&SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                sessions.bind(id.to_owned(), caller).await;
            }
        }
        _ => {}
    }
    response
}

/// Reads a POST's body (at most `limit` bytes) and lets through only a
/// JSON-RPC message (or batch): a body over the limit is `413`, one that is
/// not JSON `400` with JSON-RPC's parse error, JSON that is no JSON-RPC
/// message `400` with its invalid-request error; each a JSON-RPC error
/// object that says what was wrong, where the transport would answer
/// `415` with a line of text.
async fn check_body(limit: usize, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (head, body) = request.into_parts();
    // As the A2A bindings read theirs: an oversized body is read on (and
    // dropped) for a while, so that its client reads the 413, not a reset.
    let bytes = match switchboard_server::read_body(body, limit).await {
        Ok(bytes) => bytes,
        Err(error) => {
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                INVALID_REQUEST,
                &error.to_string(),
            );
        }
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Err(error) => rpc_error(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            &format!("Parse error: the body is not JSON: {error}"),
        ),
        Ok(Value::Object(message)) if message.get("jsonrpc") == Some(&Value::from("2.0")) => {
            next.run(Request::from_parts(head, Body::from(bytes))).await
        }
        Ok(Value::Array(batch)) if !batch.is_empty() => {
            next.run(Request::from_parts(head, Body::from(bytes))).await
        }
        Ok(_) => rpc_error(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "Invalid Request: the body is not a JSON-RPC 2.0 message",
        ),
    }
}

/// JSON-RPC's parse error.
const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's invalid-request error.
const INVALID_REQUEST: i32 = -32600;

/// An HTTP answer holding one JSON-RPC error (with no id: the request's
/// could not be read).
fn rpc_error(status: StatusCode, code: i32, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(body.to_string()),
    )
        .into_response()
}

/// What a request naming a session that is not the caller's gets: what
/// rmcp answers for a session it does not know.
fn no_session() -> Response {
    rpc_error(StatusCode::NOT_FOUND, -32001, "Session not found")
}
