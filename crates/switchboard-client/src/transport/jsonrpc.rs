//! The JSON-RPC 2.0 binding of A2A 1.0.
//!
//! Every operation is an HTTP `POST` of a JSON-RPC request to the interface
//! URL, with `Content-Type: application/json` and `A2A-Version: 1.0`:
//!
//! ```text
//! {"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"task-1"}}
//! ```
//!
//! A unary answer is one JSON-RPC response: `{"result": ...}` or
//! `{"error": {"code": -32001, "message": ...}}`, normally with HTTP 200
//! (the JS SDK server uses HTTP 500 for internal faults, so a JSON-RPC error
//! body is honoured whatever the status).
//!
//! A streaming answer (`SendStreamingMessage`, `SubscribeToTask`) is
//! `text/event-stream`; every event's `data:` is one JSON-RPC response with
//! the request's id whose `result` is a `StreamResponse`. An `error` member
//! or an `event: error` frame is the stream's last item. If the server
//! fails before the stream starts it answers with plain JSON instead of SSE
//! (or, as A2A 0.3 servers do, with a stream whose first event is the
//! error), and that error is returned from the call itself.
//!
//! Ids are numbers from a per-client counter; the response must echo the
//! same id (a `null` id is tolerated, as servers use it when they could not
//! read the request).

use std::sync::atomic::{AtomicU64, Ordering};

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, stream};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::Value;
use serde_json::value::RawValue;
use switchboard_protocol::Operation;
use switchboard_protocol::card::BINDING_JSONRPC;
use switchboard_protocol::jsonrpc::{JsonRpcRequestOut, JsonRpcResponseOwned, RequestId};
use switchboard_protocol::{AgentInterface, VERSION_HEADER};

use super::{
    Http, JsonTransport, LAST_EVENT_ID, RawEvent, RawStream, Transport, TransportFactory, is_v1,
};
use crate::error::ClientError;

/// The protocol version this transport sends in `A2A-Version`.
const VERSION: &str = "1.0";

/// At most this much of an unexpected HTTP body is kept in an error.
const MAX_ERROR_BODY: usize = 4096;

/// Registers this transport for `JSONRPC` interfaces of version 1.x.
pub(crate) const FACTORY: TransportFactory = TransportFactory {
    binding: BINDING_JSONRPC,
    supports_version: is_v1,
    build,
};

fn build(iface: &AgentInterface, http: &Http) -> Result<Box<dyn Transport>, ClientError> {
    Ok(Box::new(JsonRpcTransport::new(&iface.url, http.clone())?))
}

/// JSON-RPC 2.0 over HTTP, A2A 1.0 dialect.
#[derive(Debug)]
pub(crate) struct JsonRpcTransport {
    url: reqwest::Url,
    http: Http,
    next_id: AtomicU64,
    /// Sent as `A2A-Version` (the 0.3 transport reuses this one with "0.3").
    version: &'static str,
}

impl JsonRpcTransport {
    /// A transport posting to `url`.
    pub(crate) fn new(url: &str, http: Http) -> Result<Self, ClientError> {
        let url = reqwest::Url::parse(url)
            .map_err(|e| ClientError::Config(format!("invalid endpoint URL {url:?}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ClientError::Config(format!(
                "endpoint URL {url} is not http(s)"
            )));
        }
        Ok(JsonRpcTransport {
            url,
            http,
            next_id: AtomicU64::new(1),
            version: VERSION,
        })
    }

    /// The same transport announcing another `A2A-Version`.
    pub(crate) fn with_version(mut self, version: &'static str) -> Self {
        self.version = version;
        self
    }

    fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed).into())
    }

    /// Builds the POST for one call.
    fn post(
        &self,
        id: &RequestId,
        method: &str,
        params: &Value,
        accept: &'static str,
    ) -> Result<reqwest::RequestBuilder, ClientError> {
        let body = serde_json::to_vec(&JsonRpcRequestOut {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })
        .map_err(|e| ClientError::Config(format!("cannot serialize {method} params: {e}")))?;
        Ok(self
            .http
            .client
            .post(self.url.clone())
            .headers(self.http.headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(ACCEPT, HeaderValue::from_static(accept))
            .header(VERSION_HEADER, HeaderValue::from_static(self.version))
            .body(body))
    }

    pub(crate) async fn call_inner(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<Box<RawValue>, ClientError> {
        let id = self.next_id();
        let mut req = self.post(&id, method, &params, "application/json")?;
        if let Some(t) = self.http.timeout {
            req = req.timeout(t);
        }
        let resp = req.send().await.map_err(|e| ClientError::transport(&e))?;
        let status = resp.status();
        let body = resp.bytes().await.map_err(|e| ClientError::transport(&e))?;
        decode_response(status, &body, &id)
    }

    pub(crate) async fn stream_inner(
        &self,
        method: &'static str,
        params: Value,
        last_event_id: Option<u64>,
    ) -> Result<RawStream, ClientError> {
        let id = self.next_id();
        let mut req = self.post(&id, method, &params, "text/event-stream")?;
        if let Some(after) = last_event_id {
            req = req.header(LAST_EVENT_ID, after);
        }
        // A total timeout would cut long streams, so the limit only covers
        // the wait for the response headers.
        let resp = match self.http.timeout {
            Some(t) => tokio::time::timeout(t, req.send())
                .await
                .map_err(|_| ClientError::timeout(method, t))?,
            None => req.send().await,
        }
        .map_err(|e| ClientError::transport(&e))?;
        let status = resp.status();
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| {
                ct.trim_start()
                    .to_ascii_lowercase()
                    .starts_with("text/event-stream")
            });
        if status.is_success() && is_sse {
            return error_up_front(sse_stream(resp, id)).await;
        }
        // Not a stream: an error before the stream started (or a server
        // that answered a streaming call with one unary result).
        let body = self.http.read_body(resp, method).await?;
        let result = decode_response(status, &body, &id)?;
        Ok(stream::iter([Ok(RawEvent { seq: None, result })]).boxed())
    }
}

impl JsonRpcTransport {
    /// An AG-UI stream's answer (see `Transport::open_agui`); only the 1.0
    /// dialect has one.
    #[cfg(feature = "agui")]
    async fn open_agui_inner(
        &self,
        method: &'static str,
        params: Value,
        last_event_id: Option<String>,
    ) -> Result<reqwest::Response, ClientError> {
        if self.version != VERSION {
            return Err(ClientError::Config(
                "AG-UI streams need an A2A 1.0 interface".into(),
            ));
        }
        let id = self.next_id();
        let mut req = self.post(&id, method, &params, super::AGUI_ACCEPT)?;
        if let Some(after) = last_event_id {
            req = req.header(LAST_EVENT_ID, after);
        }
        let resp = req.send().await.map_err(|e| ClientError::transport(&e))?;
        let status = resp.status();
        if status.is_success() && super::is_sse(&resp) {
            return Ok(resp);
        }
        let body = self.http.read_body(resp, method).await?;
        decode_response(status, &body, &id)?;
        Err(ClientError::Decode(format!(
            "{method} answered with one result, not an AG-UI stream"
        )))
    }
}

impl JsonTransport for JsonRpcTransport {
    #[cfg(feature = "agui")]
    fn open_agui_json(
        &self,
        op: Operation,
        params: Value,
        last_event_id: Option<String>,
    ) -> BoxFuture<'_, Result<reqwest::Response, ClientError>> {
        self.open_agui_inner(op.name(), params, last_event_id)
            .boxed()
    }

    fn url(&self) -> &str {
        self.url.as_str()
    }

    fn call_json(
        &self,
        op: Operation,
        params: Value,
    ) -> BoxFuture<'_, Result<Box<RawValue>, ClientError>> {
        self.call_inner(op.name(), params).boxed()
    }

    fn stream_json(
        &self,
        op: Operation,
        params: Value,
        after: Option<u64>,
    ) -> BoxFuture<'_, Result<RawStream, ClientError>> {
        self.stream_inner(op.name(), params, after).boxed()
    }
}

/// Interprets one JSON-RPC response body (unary answer, or the non-SSE
/// answer to a streaming call).
fn decode_response(
    status: StatusCode,
    body: &[u8],
    id: &RequestId,
) -> Result<Box<RawValue>, ClientError> {
    let parsed: Result<JsonRpcResponseOwned, _> = serde_json::from_slice(body);
    match parsed {
        Ok(resp) => {
            // A JSON-RPC error wins over the HTTP status: the JS SDK sends
            // its internal errors with HTTP 500.
            if let Some(err) = &resp.error {
                return Err(ClientError::from_rpc(err));
            }
            if !status.is_success() {
                return Err(http_error(status, body));
            }
            check_id(resp.id.as_ref(), id)?;
            Ok(resp.result.unwrap_or_else(null_raw))
        }
        Err(e) => {
            if status.is_success() {
                Err(ClientError::Decode(format!(
                    "the body is not a JSON-RPC response: {e}"
                )))
            } else {
                Err(http_error(status, body))
            }
        }
    }
}

fn http_error(status: StatusCode, body: &[u8]) -> ClientError {
    let mut text = String::from_utf8_lossy(body).into_owned();
    if text.len() > MAX_ERROR_BODY {
        let mut cut = MAX_ERROR_BODY;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    ClientError::Http {
        status: status.as_u16(),
        body: text,
    }
}

/// The response id must be the request's id (or `null`).
fn check_id(got: Option<&Value>, want: &RequestId) -> Result<(), ClientError> {
    let want_value = match want {
        RequestId::String(s) => Value::String(s.clone()),
        RequestId::Number(n) => Value::Number(n.clone()),
        RequestId::Null => Value::Null,
    };
    match got {
        None | Some(Value::Null) => Ok(()),
        Some(v) if *v == want_value => Ok(()),
        Some(v) => Err(ClientError::Decode(format!(
            "response id {v} does not match request id {want_value}"
        ))),
    }
}

fn null_raw() -> Box<RawValue> {
    RawValue::NULL.to_owned()
}

/// What one SSE event turns into.
enum Step {
    /// Nothing to report (e.g. an event with an empty body).
    Skip,
    /// A stream item.
    Item(RawEvent),
    /// The stream's final error.
    Fail(ClientError),
}

/// A stream whose first event is a JSON-RPC error failed before it began:
/// that error is the call's answer, as if it had come as a plain error body.
/// A2A 0.3 servers answer a refused `message/stream` or `tasks/resubscribe`
/// this way (an SSE response holding one error event).
async fn error_up_front(mut events: RawStream) -> Result<RawStream, ClientError> {
    match events.next().await {
        Some(Err(e @ ClientError::Protocol(_))) => Err(e),
        Some(first) => Ok(stream::once(std::future::ready(first))
            .chain(events)
            .boxed()),
        None => Ok(events),
    }
}

fn sse_stream(resp: reqwest::Response, id: RequestId) -> RawStream {
    let events = resp.bytes_stream().eventsource();
    stream::unfold((events, id, false), |(mut events, id, done)| async move {
        if done {
            return None;
        }
        loop {
            match events.next().await {
                None => return None,
                Some(Err(e)) => return Some((Err(sse_error(e)), (events, id, true))),
                Some(Ok(event)) => match interpret(&event, &id) {
                    Step::Skip => continue,
                    Step::Item(item) => return Some((Ok(item), (events, id, false))),
                    Step::Fail(err) => return Some((Err(err), (events, id, true))),
                },
            }
        }
    })
    .boxed()
}

fn sse_error(e: EventStreamError<reqwest::Error>) -> ClientError {
    match e {
        EventStreamError::Transport(e) => ClientError::transport(&e),
        EventStreamError::Utf8(e) => {
            ClientError::Decode(format!("the event stream is not UTF-8: {e}"))
        }
        EventStreamError::Parser(e) => {
            ClientError::Decode(format!("the event stream is malformed: {e:?}"))
        }
    }
}

fn interpret(event: &Event, id: &RequestId) -> Step {
    if event.data.trim().is_empty() {
        return Step::Skip;
    }
    let is_error_frame = event.event.eq_ignore_ascii_case("error");
    let resp: JsonRpcResponseOwned = match serde_json::from_str(&event.data) {
        Ok(r) => r,
        Err(e) if is_error_frame => {
            return Step::Fail(ClientError::Protocol(
                switchboard_protocol::A2AError::Internal(format!(
                    "the agent sent an error event that is not JSON-RPC ({e}): {}",
                    event.data
                )),
            ));
        }
        Err(e) => {
            return Step::Fail(ClientError::Decode(format!(
                "stream event is not a JSON-RPC response: {e}"
            )));
        }
    };
    if let Some(err) = &resp.error {
        return Step::Fail(ClientError::from_rpc(err));
    }
    if is_error_frame {
        return Step::Fail(ClientError::Protocol(
            switchboard_protocol::A2AError::Internal(format!(
                "the agent sent an error event: {}",
                event.data
            )),
        ));
    }
    if let Err(e) = check_id(resp.id.as_ref(), id) {
        return Step::Fail(e);
    }
    match resp.result {
        Some(result) => Step::Item(RawEvent {
            seq: event.id.trim().parse().ok(),
            result,
        }),
        None => Step::Fail(ClientError::Decode(
            "stream event has neither `result` nor `error`".into(),
        )),
    }
}
