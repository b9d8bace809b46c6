//! The HTTP+JSON (REST) binding of A2A 1.0.
//!
//! Each operation is its own HTTP request against a path relative to the
//! interface URL, with `A2A-Version: 1.0`:
//!
//! | operation | request |
//! |---|---|
//! | SendMessage | `POST /message:send`, body = SendMessageRequest |
//! | SendStreamingMessage | `POST /message:stream` (SSE answer) |
//! | GetTask | `GET /tasks/{id}?historyLength=N` |
//! | ListTasks | `GET /tasks?contextId=..&status=TASK_STATE_WORKING&pageSize=..` |
//! | CancelTask | `POST /tasks/{id}:cancel`, body = the rest (`{}` or `{"metadata":..}`) |
//! | SubscribeToTask | `GET /tasks/{id}:subscribe` (SSE answer; the proto's verb) |
//! | push configs | `POST`/`GET /tasks/{taskId}/pushNotificationConfigs`, `GET`/`DELETE .../{id}` |
//! | GetExtendedAgentCard | `GET /extendedAgentCard` |
//!
//! The client above hands over the same 1.0 JSON params it would send over
//! JSON-RPC; this module moves the ids (and the `tenant`, as a first path
//! segment `/{tenant}/...`) into the path and the remaining fields into the
//! body or, for GET, the query string (numbers in decimal, booleans
//! `true`/`false`, enums by name — exactly their JSON form). Path segments
//! are percent-encoded like `encodeURIComponent`, so a `:` inside an id is
//! sent as `%3A` and never read as a `:verb`. A tenant spelled like a
//! top-level route (`tasks`, `message:send`, `message:stream`,
//! `extendedAgentCard`) cannot be expressed in a REST path, so such a call is
//! refused with [`ClientError::Config`] rather than sent to the wrong place.
//!
//! Answers: a success is the bare 1.0 JSON result (`{}` for delete). An
//! error is the Google API error format
//! `{"error":{"code":404,"status":"NOT_FOUND","message":..,"details":[ErrorInfo..]}}`;
//! it becomes [`ClientError::Protocol`] with the A2A error named by the
//! `ErrorInfo.reason` (`TASK_NOT_FOUND`, ...). A Google-shaped body without a
//! known reason falls back to the HTTP status (400 invalid params,
//! 404 method not found, 409 not cancelable, 413 invalid request, 415
//! content type, 500 internal, 501 unsupported, 502 invalid agent response);
//! anything else is [`ClientError::Http`]. Streams are SSE whose `data:` is a
//! `StreamResponse` and whose `id:` is the event sequence; an `event: error`
//! frame carries a Google error body and ends the stream.

use super::sse::Event;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use reqwest::{Method, StatusCode};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use switchboard_protocol::Operation;
use switchboard_protocol::error::ERROR_INFO_TYPE;
use switchboard_protocol::jsonrpc::methods;
use switchboard_protocol::{A2AError, VERSION_HEADER};

use super::{HttpBinding, HttpEndpoint, RawStream, http_error, null_raw, sse_stream};
use crate::error::ClientError;

/// First path segments a server reads as routes, never as a tenant.
const RESERVED_TENANTS: [&str; 5] = [
    "message:send",
    "message:stream",
    "tasks",
    "extendedAgentCard",
    // The A2A 0.3 REST routes live under `/v1`.
    "v1",
];

/// HTTP+JSON, A2A 1.0 dialect (or 0.3, see [`HttpEndpoint::v03`]: `/v1`
/// routes, 0.3 bodies; see `super::v03`).
#[derive(Debug)]
pub(crate) struct RestTransport {
    endpoint: HttpEndpoint,
    /// The interface URL without a trailing `/`; paths are appended to it.
    base: String,
}

/// One operation as an HTTP request.
#[derive(Debug)]
struct Plan {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    body: Option<Value>,
}

impl HttpBinding for RestTransport {
    type Call = ();

    /// Routes live under the endpoint URL, which therefore must not have a
    /// query or fragment.
    fn new(endpoint: HttpEndpoint) -> Result<Self, ClientError> {
        let url = &endpoint.url;
        if url.query().is_some() || url.fragment().is_some() {
            return Err(ClientError::Config(format!(
                "HTTP+JSON endpoint URL {url} must not have a query or fragment"
            )));
        }
        let base = url.as_str().trim_end_matches('/').to_string();
        Ok(RestTransport { endpoint, base })
    }

    fn http_endpoint(&self) -> &HttpEndpoint {
        &self.endpoint
    }

    /// The HTTP request for a 1.0 `method` and its params (0.3 params are
    /// translated first).
    fn request(
        &self,
        method: &'static str,
        params: Value,
        accept: &'static str,
    ) -> Result<(reqwest::RequestBuilder, ()), ClientError> {
        let HttpEndpoint { http, v03, .. } = &self.endpoint;
        let plan = if *v03 {
            plan_with(method, super::v03::rest_params(method, params)?, true)?
        } else {
            plan_with(method, params, false)?
        };
        let full = format!("{}{}", self.base, plan.path);
        let mut url = reqwest::Url::parse(&full)
            .map_err(|e| ClientError::Config(format!("invalid request URL {full:?}: {e}")))?;
        if !plan.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&plan.query);
        }
        let mut req = http
            .client
            .request(plan.method.clone(), url)
            .headers(http.request_headers())
            .header(ACCEPT, HeaderValue::from_static(accept))
            .header(
                VERSION_HEADER,
                HeaderValue::from_static(self.endpoint.version()),
            );
        if let Some(body) = &plan.body {
            let bytes = serde_json::to_vec(body)
                .map_err(|e| ClientError::Config(format!("cannot serialize the body: {e}")))?;
            req = req
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(bytes);
        }
        Ok((req, ()))
    }

    fn read_body(
        &self,
        method: &'static str,
        status: StatusCode,
        body: &[u8],
        _: &(),
    ) -> Result<Box<RawValue>, ClientError> {
        if !status.is_success() {
            return Err(error_from_http(status, body));
        }
        if method == methods::DELETE_PUSH_CONFIG || body.iter().all(u8::is_ascii_whitespace) {
            return Ok(null_raw());
        }
        let raw = serde_json::from_slice(body)
            .map_err(|e| ClientError::Decode(format!("the {method} answer is not JSON: {e}")))?;
        to_v10(self.endpoint.v03, method, raw)
    }

    async fn read_events(
        &self,
        method: &'static str,
        resp: reqwest::Response,
        _: (),
    ) -> Result<RawStream, ClientError> {
        let v03 = self.endpoint.v03;
        Ok(sse_stream(resp, move |event| {
            to_v10(v03, method, interpret(event)?)
        }))
    }
}

/// The 1.0 JSON of a result (a 0.3 result is translated).
fn to_v10(v03: bool, method: &str, raw: Box<RawValue>) -> Result<Box<RawValue>, ClientError> {
    if v03 {
        super::v03::rest_result_to_v10(method, &raw)
    } else {
        Ok(raw)
    }
}

/// Turns one operation's 1.0 params into method, path, query and body.
#[cfg(test)]
fn plan(method: &'static str, params: Value) -> Result<Plan, ClientError> {
    plan_with(method, params, false)
}

/// [`plan`] for either dialect: 0.3 routes live under `/v1` (after the
/// tenant) and the extended card is `/v1/card`.
fn plan_with(method: &'static str, params: Value, v03: bool) -> Result<Plan, ClientError> {
    let mut map = match params {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => {
            return Err(ClientError::Config(format!(
                "{method} params must be a JSON object, got {other}"
            )));
        }
    };
    let prefix = match map.remove("tenant") {
        Some(Value::String(t)) if !t.is_empty() => {
            if RESERVED_TENANTS.contains(&t.as_str()) {
                return Err(ClientError::Config(format!(
                    "tenant {t:?} cannot be used over HTTP+JSON: a first path segment named like a route is not read as a tenant"
                )));
            }
            format!("/{}", encode_segment(&t))
        }
        _ => String::new(),
    };
    let op = Operation::from_name(method)
        .filter(|op| !v03 || op.v03_name().is_some())
        .ok_or_else(|| ClientError::Config(format!("{method} has no HTTP+JSON route")))?;
    let route = op.rest();
    // The one 0.3 route whose path differs from its 1.0 twin.
    let template = match op {
        Operation::GetExtendedAgentCard if v03 => "/card",
        _ => route.template,
    };
    // `{field}` segments take the field's value out of the params.
    let mut path = String::new();
    for segment in template.trim_start_matches('/').split('/') {
        path.push('/');
        match segment.strip_prefix('{').and_then(|s| s.split_once('}')) {
            Some((field, verb)) => {
                path.push_str(&take_id(&mut map, method, field)?);
                path.push_str(verb);
            }
            None => path.push_str(segment),
        }
    }
    let verb = route
        .verbs
        .first()
        .and_then(|v| Method::from_bytes(v.as_bytes()).ok())
        .unwrap_or(Method::GET);
    // GET and DELETE carry the rest of the request in the query, POST in the body.
    let in_query = verb != Method::POST;
    let (query, body) = if in_query {
        (to_query(&map), None)
    } else {
        (Vec::new(), Some(Value::Object(map)))
    };
    let version = if v03 { "/v1" } else { "" };
    Ok(Plan {
        method: verb,
        path: format!("{prefix}{version}{path}"),
        query,
        body,
    })
}

/// Removes `key` (or its snake_case form) from the params and returns it
/// percent-encoded for the path.
fn take_id(map: &mut Map<String, Value>, method: &str, key: &str) -> Result<String, ClientError> {
    let snake: String = key
        .chars()
        .flat_map(|c| {
            let lower = c.to_ascii_lowercase();
            (c.is_ascii_uppercase().then_some('_').into_iter()).chain(std::iter::once(lower))
        })
        .collect();
    let snake = snake.as_str();
    let value = map.remove(key).or_else(|| map.remove(snake));
    match value {
        Some(Value::String(s)) if !s.is_empty() => Ok(encode_segment(&s)),
        _ => Err(ClientError::Config(format!(
            "{method} needs a non-empty `{key}`"
        ))),
    }
}

/// The remaining params as query pairs: scalars as their JSON text
/// (strings unquoted), arrays as a repeated name, nulls and objects skipped.
fn to_query(map: &Map<String, Value>) -> Vec<(String, String)> {
    fn scalar(v: &Value) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }
    let mut out = Vec::new();
    for (k, v) in map {
        match v {
            Value::Array(items) => {
                out.extend(items.iter().filter_map(scalar).map(|s| (k.clone(), s)));
            }
            other => {
                if let Some(s) = scalar(other) {
                    out.push((k.clone(), s));
                }
            }
        }
    }
    out
}

/// Percent-encodes everything but RFC 3986 unreserved characters (like
/// `encodeURIComponent`, plus `!*'()`), so `:` and `/` stay data.
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The A2A error an HTTP status stands for when the body names no reason.
fn code_for_status(status: u16) -> Option<i32> {
    Some(match status {
        400 => -32602,
        401 => switchboard_protocol::error::UNAUTHENTICATED_CODE,
        403 => switchboard_protocol::error::PERMISSION_DENIED_CODE,
        429 => switchboard_protocol::error::RESOURCE_EXHAUSTED_CODE,
        404 => -32601,
        409 => -32002,
        413 => -32600,
        415 => -32005,
        500 => -32603,
        501 => -32004,
        502 => -32006,
        _ => return None,
    })
}

/// Reads a Google API error body (`{"error": {...}}`); `None` if the body
/// is not one.
fn google_error(status: u16, body: &[u8]) -> Option<A2AError> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let err = v.get("error")?.as_object()?;
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let details = err.get("details").filter(|d| d.is_array());
    let reason = details
        .and_then(Value::as_array)
        .and_then(|d| d.iter().find(|x| x["@type"] == ERROR_INFO_TYPE))
        .and_then(|info| info["reason"].as_str());
    let code = reason
        .and_then(A2AError::code_for_reason)
        .or_else(|| code_for_status(status))?;
    Some(A2AError::from_wire(code, message, details))
}

/// The error for a non-2xx answer.
fn error_from_http(status: StatusCode, body: &[u8]) -> ClientError {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return ClientError::too_large(google_error(413, body).as_ref(), body);
    }
    if let Some(e) = google_error(status.as_u16(), body) {
        return ClientError::Protocol(e);
    }
    http_error(status, body)
}

/// One SSE event's data: a result, or (`event: error`) a Google API error.
fn interpret(event: &Event) -> Result<Box<RawValue>, ClientError> {
    if event.event.eq_ignore_ascii_case("error") {
        // The HTTP status was 200 when the stream started; the body's own
        // `code` is the error's status.
        let status = serde_json::from_str::<Value>(&event.data)
            .ok()
            .and_then(|v| v["error"]["code"].as_u64())
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(500);
        return Err(match google_error(status, event.data.as_bytes()) {
            Some(e) => ClientError::Protocol(e),
            None => ClientError::Protocol(A2AError::Internal(format!(
                "the agent sent an error event: {}",
                event.data
            ))),
        });
    }
    serde_json::from_str::<Box<RawValue>>(&event.data)
        .map_err(|e| ClientError::Decode(format!("stream event is not JSON: {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_queries_and_bodies() {
        let p = plan(
            methods::GET_TASK,
            json!({"id": "a:b/c", "historyLength": 2}),
        )
        .unwrap();
        assert_eq!(p.method, Method::GET);
        assert_eq!(p.path, "/tasks/a%3Ab%2Fc");
        assert_eq!(p.query, vec![("historyLength".into(), "2".into())]);
        assert!(p.body.is_none());

        let p = plan(
            methods::LIST_TASKS,
            json!({"tenant": "acme", "status": "TASK_STATE_WORKING", "includeArtifacts": true}),
        )
        .unwrap();
        assert_eq!(p.path, "/acme/tasks");
        assert!(
            p.query
                .contains(&("includeArtifacts".into(), "true".into()))
        );
        assert!(
            p.query
                .contains(&("status".into(), "TASK_STATE_WORKING".into()))
        );

        let p = plan(methods::CANCEL_TASK, json!({"id": "t1"})).unwrap();
        assert_eq!(
            (p.method.clone(), p.path.as_str()),
            (Method::POST, "/tasks/t1:cancel")
        );
        assert_eq!(p.body, Some(json!({})));

        let p = plan(
            methods::SUBSCRIBE_TO_TASK,
            json!({"id": "t1", "tenant": ""}),
        )
        .unwrap();
        assert_eq!(
            (p.method.clone(), p.path.as_str()),
            (Method::GET, "/tasks/t1:subscribe")
        );

        let p = plan(
            methods::DELETE_PUSH_CONFIG,
            json!({"taskId": "t1", "id": "c 1"}),
        )
        .unwrap();
        assert_eq!(p.method, Method::DELETE);
        assert_eq!(p.path, "/tasks/t1/pushNotificationConfigs/c%201");

        let p = plan(
            methods::CREATE_PUSH_CONFIG,
            json!({"taskId": "t1", "url": "https://x/hook"}),
        )
        .unwrap();
        assert_eq!(p.path, "/tasks/t1/pushNotificationConfigs");
        assert_eq!(p.body, Some(json!({"url": "https://x/hook"})));

        let p = plan(
            methods::SEND_MESSAGE,
            json!({"tenant": "a:b", "message": {}}),
        )
        .unwrap();
        assert_eq!(p.path, "/a%3Ab/message:send");
        assert_eq!(p.body, Some(json!({"message": {}})));
    }

    #[test]
    fn refusals() {
        for t in RESERVED_TENANTS {
            let err = plan(methods::LIST_TASKS, json!({"tenant": t})).unwrap_err();
            assert!(matches!(err, ClientError::Config(_)), "{err:?}");
        }
        assert!(matches!(
            plan(methods::GET_TASK, json!({"id": ""})),
            Err(ClientError::Config(_))
        ));
        assert!(matches!(
            plan("Nope", json!({})),
            Err(ClientError::Config(_))
        ));
    }

    #[test]
    fn google_errors_map_by_reason_then_status() {
        let body = json!({"error": {"code": 409, "status": "FAILED_PRECONDITION",
            "message": "Task cannot be canceled: task t1 is TASK_STATE_COMPLETED",
            "details": [{"@type": ERROR_INFO_TYPE, "reason": "TASK_NOT_CANCELABLE",
                "domain": "a2a-protocol.org", "metadata": {"taskId": "t1", "state": "TASK_STATE_COMPLETED"}}]}});
        let e = error_from_http(StatusCode::CONFLICT, body.to_string().as_bytes());
        assert_eq!(
            e.as_protocol(),
            Some(&A2AError::TaskNotCancelable {
                task_id: "t1".into(),
                state: "TASK_STATE_COMPLETED".into()
            })
        );
        // No ErrorInfo: the status decides.
        let body = json!({"error": {"code": 415, "message": "nope"}});
        let e = error_from_http(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            body.to_string().as_bytes(),
        );
        assert_eq!(e.code(), Some(-32005));
        // Not a Google error: plain HTTP error.
        let e = error_from_http(StatusCode::BAD_GATEWAY, b"<html>bad gateway</html>");
        assert!(matches!(e, ClientError::Http { status: 502, .. }), "{e:?}");
        // A Google error without a reason: the status names the error.
        let e = error_from_http(StatusCode::UNAUTHORIZED, br#"{"error":{"code":401}}"#);
        assert!(
            matches!(e, ClientError::Protocol(A2AError::Unauthenticated(_))),
            "{e:?}"
        );
    }

    #[test]
    fn a_413_is_too_large_with_the_agents_reason() {
        let body = json!({"error": {"code": 400, "status": "INVALID_ARGUMENT",
            "message": "the request body exceeds 4096 bytes"}});
        let e = error_from_http(StatusCode::PAYLOAD_TOO_LARGE, body.to_string().as_bytes());
        let ClientError::TooLarge { message } = &e else {
            panic!("{e:?}")
        };
        assert!(
            message.contains("the request body exceeds 4096 bytes"),
            "{message}"
        );
        // A proxy's plain-text 413.
        let e = error_from_http(StatusCode::PAYLOAD_TOO_LARGE, b"Request Entity Too Large");
        assert_eq!(
            e,
            ClientError::TooLarge {
                message: "Request Entity Too Large".into()
            }
        );
    }
}
