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

use super::sse::Event;
use futures::{StreamExt, stream};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::Value;
use serde_json::value::RawValue;
use switchboard_protocol::VERSION_HEADER;
use switchboard_protocol::jsonrpc::{JsonRpcRequestOut, JsonRpcResponseOwned, RequestId};

use super::{HttpBinding, HttpEndpoint, RawStream, http_error, null_raw, sse_stream};
use crate::error::ClientError;

/// JSON-RPC 2.0 over HTTP, A2A 1.0 dialect (or 0.3, see [`HttpEndpoint::v03`]).
#[derive(Debug)]
pub(crate) struct JsonRpcTransport {
    endpoint: HttpEndpoint,
    next_id: AtomicU64,
}

impl JsonRpcTransport {
    fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed).into())
    }
}

/// The 1.0 JSON of a result (a 0.3 result is translated).
fn to_v10(v03: bool, method: &str, raw: Box<RawValue>) -> Result<Box<RawValue>, ClientError> {
    if v03 {
        super::v03::result_to_v10(method, &raw)
    } else {
        Ok(raw)
    }
}

impl HttpBinding for JsonRpcTransport {
    type Call = RequestId;

    fn new(endpoint: HttpEndpoint) -> Result<Self, ClientError> {
        Ok(JsonRpcTransport {
            endpoint,
            next_id: AtomicU64::new(1),
        })
    }

    fn http_endpoint(&self) -> &HttpEndpoint {
        &self.endpoint
    }

    /// 0.3 JSON-RPC has no resume parameter.
    fn resumes(&self) -> bool {
        !self.endpoint.v03
    }

    /// The POST for one call.
    fn request(
        &self,
        method: &'static str,
        params: Value,
        accept: &'static str,
    ) -> Result<(reqwest::RequestBuilder, RequestId), ClientError> {
        let (method, params) = if self.endpoint.v03 {
            super::v03::to_v03(method, params)?
        } else {
            (method, params)
        };
        let id = self.next_id();
        let body = serde_json::to_vec(&JsonRpcRequestOut {
            jsonrpc: "2.0",
            id: &id,
            method,
            params: &params,
        })
        .map_err(|e| ClientError::Config(format!("cannot serialize {method} params: {e}")))?;
        let HttpEndpoint { url, http, .. } = &self.endpoint;
        let req = http
            .client
            .post(url.clone())
            .headers(http.request_headers())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(ACCEPT, HeaderValue::from_static(accept))
            .header(
                VERSION_HEADER,
                HeaderValue::from_static(self.endpoint.version()),
            )
            .body(body);
        Ok((req, id))
    }

    fn read_body(
        &self,
        method: &'static str,
        status: StatusCode,
        body: &[u8],
        id: &RequestId,
    ) -> Result<Box<RawValue>, ClientError> {
        to_v10(
            self.endpoint.v03,
            method,
            decode_response(status, body, id)?,
        )
    }

    async fn read_events(
        &self,
        method: &'static str,
        resp: reqwest::Response,
        id: RequestId,
    ) -> Result<RawStream, ClientError> {
        let v03 = self.endpoint.v03;
        error_up_front(sse_stream(resp, move |event| {
            to_v10(v03, method, interpret(event, &id)?)
        }))
        .await
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
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        let error = parsed.ok().and_then(|resp| resp.error);
        let protocol = error.as_ref().map(ClientError::from_rpc);
        return Err(ClientError::too_large(
            protocol.as_ref().and_then(ClientError::as_protocol),
            body,
        ));
    }
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

/// One SSE event's data: a JSON-RPC response to this request.
fn interpret(event: &Event, id: &RequestId) -> Result<Box<RawValue>, ClientError> {
    let is_error_frame = event.event.eq_ignore_ascii_case("error");
    let resp: JsonRpcResponseOwned = match serde_json::from_str(&event.data) {
        Ok(r) => r,
        Err(e) if is_error_frame => {
            return Err(ClientError::Protocol(
                switchboard_protocol::A2AError::Internal(format!(
                    "the agent sent an error event that is not JSON-RPC ({e}): {}",
                    event.data
                )),
            ));
        }
        Err(e) => {
            return Err(ClientError::Decode(format!(
                "stream event is not a JSON-RPC response: {e}"
            )));
        }
    };
    if let Some(err) = &resp.error {
        return Err(ClientError::from_rpc(err));
    }
    if is_error_frame {
        return Err(ClientError::Protocol(
            switchboard_protocol::A2AError::Internal(format!(
                "the agent sent an error event: {}",
                event.data
            )),
        ));
    }
    check_id(resp.id.as_ref(), id)?;
    resp.result
        .ok_or_else(|| ClientError::Decode("stream event has neither `result` nor `error`".into()))
}
