//! The bridge's HTTP face: `POST /agui`, a `RunAgentInput` in, AG-UI
//! events out.
//!
//! [`router`] is an axum [`Router`] with one route ([`EndpointConfig::path`],
//! `/agui` by default) over any [`BackendFactory`]: a `RemoteBackend`
//! for `switchboard bridge`, a [`HostedAgent`] for `serve`. Mount it
//! as it is (`Router::merge`) or nest it under a prefix.
//!
//! A request is handled in this order:
//! 1. `Content-Type` must be JSON (`application/json`, or a `+json` type):
//!    else `415`.
//! 2. The body is read up to [`EndpointConfig::body_limit`] (1 MiB by
//!    default): past it, `413`.
//! 3. From here on the answer is `200` and a stream of events, whatever
//!    happens: the official AG-UI client shows a run's failures only when
//!    they arrive as events. A body that is not a `RunAgentInput` (not
//!    JSON, a missing field, a wrong type) is a run of its own:
//!    `RUN_STARTED` when its `threadId` and `runId` can be read, then
//!    `RUN_ERROR` (`bridge:invalid_input`) with serde's message and the
//!    path of the field it is about. A valid
//!    one goes to [`crate::run::run`] with the backend the factory makes
//!    for this request (a factory that refuses the caller ends the run
//!    with `RUN_ERROR` as well).
//!
//! Every event carries `timestamp` (when it went out). The events are SSE
//! (`text/event-stream`, one `data:` frame each, LF line ends) unless the request's `Accept` names
//! `application/vnd.ag-ui.event+proto` explicitly: then length-prefixed
//! protobuf ([`switchboard_agui::Encoding::negotiate`]). An SSE stream that
//! has been quiet for [`EndpointConfig::keep_alive`] gets a `: keep-alive`
//! comment, which clients ignore and proxies take as traffic; protobuf has
//! no such frame. Responses are `Cache-Control: no-cache`.
//!
//! A client that goes away drops the run (see [`crate::run`](mod@crate::run)): the A2A task
//! keeps running, unless the bridge cancels on disconnect.
//!
//! [`HostedAgent`]: crate::backend::HostedAgent

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt, stream};
use http::{HeaderValue, StatusCode, header};
use serde_json::Value;
use switchboard_agui::events::{Event, RunAgentInput, RunError, RunStarted};
use switchboard_agui::proto::write_frame;
use switchboard_agui::sse::write_sse_frame;
use switchboard_agui::{Encoding, PROTOCOL_VERSION};

use crate::BridgeError;
use crate::backend::BackendFactory;
use crate::run::{RunConfig, run};

/// How the endpoint is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointConfig {
    /// The route (`/agui`).
    pub path: String,
    /// The largest request body read, in bytes (1 MiB).
    pub body_limit: usize,
    /// How long an SSE stream may stay quiet before a keep-alive comment
    /// (15 s).
    pub keep_alive: Duration,
    /// How runs talk to the agent.
    pub run: RunConfig,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            path: "/agui".into(),
            body_limit: 1 << 20,
            keep_alive: Duration::from_secs(15),
            run: RunConfig::default(),
        }
    }
}

struct Shared {
    factory: Box<dyn BackendFactory>,
    config: EndpointConfig,
}

/// The endpoint as a router: `POST <config.path>` over `factory`.
pub fn router(factory: impl BackendFactory, config: EndpointConfig) -> Router {
    let path = config.path.clone();
    let shared = Arc::new(Shared {
        factory: Box::new(factory),
        config,
    });
    Router::new().route(&path, post(handle)).with_state(shared)
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (head, body) = request.into_parts();
    let bytes = match read_json_body(&head, body, shared.config.body_limit).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal,
    };
    let encoding = accepted_encoding(&head);
    let events = match parse_input(&bytes) {
        Err(events) => events,
        Ok(input) => match shared.factory.backend(&head).await {
            Ok(backend) => run(backend, shared.config.run.clone(), input).boxed(),
            Err(e) => stream::iter(refused(input, &e)).boxed(),
        },
    };
    respond(events, encoding, shared.config.keep_alive)
}

/// The body of a request that must be JSON, read up to `limit` bytes: a
/// `415` for another `Content-Type`, a `413` past the limit.
pub(crate) async fn read_json_body(
    head: &http::request::Parts,
    body: Body,
    limit: usize,
) -> Result<Bytes, Response> {
    let content_type = head
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if !content_type.is_some_and(is_json) {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be a RunAgentInput as JSON (Content-Type: application/json)",
        )
            .into_response());
    }
    axum::body::to_bytes(body, limit).await.map_err(|_| {
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body could not be read within {limit} bytes"),
        )
            .into_response()
    })
}

/// The encoding the request's `Accept` asks for.
pub(crate) fn accepted_encoding(head: &http::request::Parts) -> Encoding {
    let accept = head
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    Encoding::negotiate(accept)
}

/// The `RunAgentInput` of `body`, or the run that reports why it is not one.
pub(crate) fn parse_input(body: &[u8]) -> Result<RunAgentInput, BoxStream<'static, Event>> {
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(body))
        .map_err(|e| stream::iter(invalid_input(body, &e)).boxed())
}

/// `application/json` or `<type>/<subtype>+json`, parameters ignored.
fn is_json(content_type: &str) -> bool {
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    media == "application/json" || (media.starts_with("application/") && media.ends_with("+json"))
}

/// The run of a body that is not a `RunAgentInput`; the error names the
/// field (`messages[0].role: …`).
fn invalid_input(body: &[u8], error: &serde_path_to_error::Error<serde_json::Error>) -> Vec<Event> {
    let mut events = Vec::new();
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        let id = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        if let (Some(thread_id), Some(run_id)) = (id("threadId"), id("runId")) {
            events.push(Event::new(RunStarted {
                thread_id,
                run_id,
                parent_run_id: None,
                input: None,
                protocol_version: Some(PROTOCOL_VERSION.to_owned()),
            }));
        }
    }
    events.push(error_event(&BridgeError::InvalidInput(error.to_string())));
    events
}

/// The run of a request the factory gave no backend.
pub(crate) fn refused(input: RunAgentInput, error: &BridgeError) -> Vec<Event> {
    vec![
        Event::new(RunStarted {
            thread_id: input.thread_id.clone(),
            run_id: input.run_id.clone(),
            parent_run_id: input.parent_run_id.clone(),
            input: Some(Box::new(input)),
            protocol_version: Some(PROTOCOL_VERSION.to_owned()),
        }),
        error_event(error),
    ]
}

fn error_event(error: &BridgeError) -> Event {
    Event::new(RunError {
        message: error.to_string(),
        code: Some(error.code().to_owned()),
        usage: None,
    })
}

/// The `200` answer carrying `events` in `encoding`, each stamped with the
/// time it goes out (`timestamp`, milliseconds since the Unix epoch) unless
/// it has one.
pub(crate) fn respond(
    events: impl Stream<Item = Event> + Send + 'static,
    encoding: Encoding,
    keep_alive: Duration,
) -> Response {
    let events = events.map(|mut event| {
        if event.timestamp.is_none() {
            event.timestamp = Some(now_millis());
        }
        event
    });
    let body = match encoding {
        Encoding::Sse => Body::from_stream(with_keep_alive(
            events.map(|event| {
                let mut out = Vec::with_capacity(256);
                write_sse_frame(&mut out, None, &event);
                Bytes::from(out)
            }),
            keep_alive,
        )),
        Encoding::Protobuf => Body::from_stream(events.filter_map(|event| async move {
            let mut out = Vec::with_capacity(256);
            match write_frame(&mut out, &event) {
                Ok(()) => Some(Ok::<_, Infallible>(Bytes::from(out))),
                Err(e) => {
                    tracing::warn!(error = %e, "an AG-UI event has no protobuf form; left out");
                    None
                }
            }
        })),
    };
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(encoding.content_type()),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `frames`, with a keep-alive comment whenever none came for `every`.
fn with_keep_alive(
    frames: impl Stream<Item = Bytes> + Send + 'static,
    every: Duration,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    async_stream::stream! {
        let mut frames = std::pin::pin!(frames);
        loop {
            tokio::select! {
                frame = frames.next() => match frame {
                    Some(frame) => yield Ok(frame),
                    None => break,
                },
                () = tokio::time::sleep(every) => yield Ok(Bytes::from_static(b": keep-alive\n\n")),
            }
        }
    }
}
