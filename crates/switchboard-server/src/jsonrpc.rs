//! The JSON-RPC 2.0 binding: one POST endpoint, SSE for the two streaming
//! methods.
//!
//! Order of checks, each with the error the spec names:
//! body size (-32600, HTTP 413) → content type (-32005) → JSON (-32700) →
//! envelope (-32600) → `A2A-Version` (-32009) → extensions (-32008) →
//! method (-32601) → params (-32602) → the operation itself.
//! The method name picks the dialect: 0.3 names (`message/send`, …) go to
//! [`crate::jsonrpc_v03`], 1.0 names are served here, with or without
//! `A2A-Version` (the rule is in [`crate::params`]).
//! Errors before a stream starts are plain JSON-RPC error bodies; errors in
//! the middle of a stream are an SSE `event: error`. One exception, for A2A
//! 0.3: an error answering `message/stream` or `tasks/resubscribe` (unknown
//! or terminal task, bad params, ...) is a `text/event-stream` holding one
//! JSON-RPC error event, because that is what the official 0.3 SDK servers
//! send and what their clients expect: they open every 0.3 stream as SSE and
//! fail on any other content type before reading the error. Every JSON-RPC
//! error is sent with HTTP 200 (except an oversize body, 413), as JSON-RPC
//! over HTTP usually does.

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use http::{HeaderValue, StatusCode, header};
use serde::Serialize;
use switchboard_core::{CallContext, EventStream};
use switchboard_protocol::jsonrpc::{
    JsonRpcRequest, RequestId, error_body, methods, parse_request, success_body,
};
use switchboard_protocol::{A2AError, EXTENSIONS_HEADER};

use crate::AppState;
use crate::params::{
    ProtocolVersion, explicit_version, is_json_content_type, last_event_id, requested_extensions,
};

/// Handles a POST to the JSON-RPC endpoint.
pub(crate) async fn handle(State(app): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, app.max_body_bytes).await {
        Ok(b) => b,
        Err(_) => {
            let err = A2AError::InvalidRequest(format!(
                "the request body exceeds {} bytes",
                app.max_body_bytes
            ));
            return json_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                error_body(&RequestId::Null, &err),
                &[],
            );
        }
    };
    if !is_json_content_type(&parts.headers) {
        let got = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none");
        let err = A2AError::ContentTypeNotSupported(format!(
            "Content-Type must be application/json or application/a2a+json, got {got}"
        ));
        // The id is still worth echoing if the body happens to be readable.
        let id = parse_request(&bytes)
            .map(|r| r.id)
            .unwrap_or(RequestId::Null);
        return json_response(StatusCode::OK, error_body(&id, &err), &[]);
    }
    let rpc = match parse_request(&bytes) {
        Ok(r) => r,
        Err((id, err)) => return json_response(StatusCode::OK, error_body(&id, &err), &[]),
    };
    let is_v03 = switchboard_protocol::v03::rpc::methods::is_v03(&rpc.method);
    let errors_as_sse = is_v03 && is_v03_stream(&rpc.method);
    let error = |err: &A2AError, extra: &[(&'static str, String)]| {
        if errors_as_sse {
            sse_error_response(&rpc.id, err, extra)
        } else {
            json_response(StatusCode::OK, error_body(&rpc.id, err), extra)
        }
    };
    match explicit_version(&parts.headers, parts.uri.query()) {
        Err(err) => return error(&err, &[]),
        Ok(Some(ProtocolVersion::V0_3)) if !is_v03 => {
            // The error's string is the method alone: it becomes
            // `ErrorInfo.metadata.method`.
            let err = A2AError::MethodNotFound(rpc.method.clone());
            return error(&err, &[]);
        }
        Ok(_) => {}
    }
    let mut call =
        CallContext::anonymous().with_extensions_header(&requested_extensions(&parts.headers));
    if let Err(err) = app.handler.activate_extensions(&mut call) {
        return error(&err, &[]);
    }
    let echo = call.activated_extensions.join(",");
    let extra: Vec<(&'static str, String)> = if echo.is_empty() {
        vec![]
    } else {
        vec![(EXTENSIONS_HEADER, echo)]
    };
    let last_event_id = match last_event_id(&parts.headers) {
        Ok(v) => v,
        Err(err) => return error(&err, &extra),
    };
    let result = if is_v03 {
        crate::jsonrpc_v03::dispatch(&app, call, &rpc, last_event_id).await
    } else {
        dispatch(&app, call, &rpc, last_event_id).await
    };
    match result {
        Ok(Reply::Json(body)) => json_response(StatusCode::OK, body, &extra),
        Ok(Reply::Stream(stream)) => {
            sse_response(rpc.id, stream, &extra, |id, ev| success_body(id, &ev))
        }
        Ok(Reply::Stream03(stream)) => sse_response(rpc.id, stream, &extra, |id, ev| {
            success_body(id, &switchboard_protocol::v03::rpc::Event::from(ev))
        }),
        Err(err) => error(&err, &extra),
    }
}

/// The 0.3 methods answered with a stream.
fn is_v03_stream(method: &str) -> bool {
    use switchboard_protocol::v03::rpc::methods;
    method == methods::STREAM || method == methods::RESUBSCRIBE
}

/// A 0.3 stream that failed before its first event: `text/event-stream`
/// with one `data:` event holding the JSON-RPC error, then the end. No
/// `event:` name and no `id:`, as the official 0.3 SDK servers send it.
fn sse_error_response(
    id: &RequestId,
    err: &A2AError,
    extra: &[(&'static str, String)],
) -> Response {
    let data = String::from_utf8(error_body(id, err)).unwrap_or_default();
    let frame = futures::stream::once(std::future::ready(Ok::<_, Infallible>(
        Event::default().data(data),
    )));
    with_headers(Sse::new(frame).into_response(), extra)
}

fn with_headers(mut resp: Response, extra: &[(&'static str, String)]) -> Response {
    for (name, value) in extra {
        if let Ok(v) = HeaderValue::from_str(value) {
            resp.headers_mut().insert(*name, v);
        }
    }
    resp
}

/// How often an idle stream sends an SSE comment. Under 5 s, because the
/// official Python client's default read timeout is 5 s.
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(4);

pub(crate) enum Reply {
    Json(Vec<u8>),
    Stream(EventStream),
    /// A stream whose items are sent as 0.3 `kind`-tagged objects.
    Stream03(EventStream),
}

pub(crate) fn ok<T: Serialize>(id: &RequestId, value: &T) -> Result<Reply, A2AError> {
    Ok(Reply::Json(success_body(id, value)))
}

/// Decodes params, fills the tenant into the call, and runs the operation.
async fn dispatch(
    app: &AppState,
    mut call: CallContext,
    rpc: &JsonRpcRequest,
    last_event_id: Option<u64>,
) -> Result<Reply, A2AError> {
    let h = &app.handler;
    let id = &rpc.id;
    macro_rules! params {
        ($ty:ty) => {{
            let p: $ty = rpc.params()?;
            if let Some(t) = &p.tenant {
                call.tenant = t.clone();
            }
            p
        }};
    }
    match rpc.method.as_str() {
        methods::SEND_MESSAGE => {
            let p = params!(switchboard_protocol::SendMessageRequest);
            ok(id, &h.send_message(&call, p).await?)
        }
        methods::SEND_STREAMING_MESSAGE => {
            let p = params!(switchboard_protocol::SendMessageRequest);
            Ok(Reply::Stream(h.send_streaming_message(&call, p).await?))
        }
        methods::GET_TASK => {
            let p = params!(switchboard_protocol::GetTaskRequest);
            ok(id, &h.get_task(&call, p).await?)
        }
        methods::LIST_TASKS => {
            let p = params!(switchboard_protocol::ListTasksRequest);
            ok(id, &h.list_tasks(&call, p).await?)
        }
        methods::CANCEL_TASK => {
            let p = params!(switchboard_protocol::CancelTaskRequest);
            ok(id, &h.cancel_task(&call, p).await?)
        }
        methods::SUBSCRIBE_TO_TASK => {
            let p = params!(switchboard_protocol::SubscribeToTaskRequest);
            let stream = match last_event_id {
                Some(after) => h.resubscribe_to_task(&call, p, after).await?,
                None => h.subscribe_to_task(&call, p).await?,
            };
            Ok(Reply::Stream(stream))
        }
        methods::CREATE_PUSH_CONFIG => {
            let p = params!(switchboard_protocol::TaskPushNotificationConfig);
            ok(id, &h.create_push_config(&call, p).await?)
        }
        methods::GET_PUSH_CONFIG => {
            let p = params!(switchboard_protocol::TaskPushNotificationConfigRef);
            ok(id, &h.get_push_config(&call, p).await?)
        }
        methods::LIST_PUSH_CONFIGS => {
            let p = params!(switchboard_protocol::ListTaskPushNotificationConfigsRequest);
            ok(id, &h.list_push_configs(&call, p).await?)
        }
        methods::DELETE_PUSH_CONFIG => {
            let p = params!(switchboard_protocol::TaskPushNotificationConfigRef);
            h.delete_push_config(&call, p).await?;
            ok(id, &serde_json::Value::Null)
        }
        methods::GET_EXTENDED_AGENT_CARD => {
            let p = params!(switchboard_protocol::GetExtendedAgentCardRequest);
            ok(id, &h.get_extended_agent_card(&call, p).await?)
        }
        other => Err(A2AError::MethodNotFound(other.to_string())),
    }
}

fn json_response(status: StatusCode, body: Vec<u8>, extra: &[(&'static str, String)]) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    with_headers(resp, extra)
}

/// Frames each item as `id: <seq>` + `data: <JSON-RPC response>`; an error
/// item becomes `event: error`.
fn sse_response(
    id: RequestId,
    stream: EventStream,
    extra: &[(&'static str, String)],
    encode: fn(&RequestId, switchboard_protocol::StreamResponse) -> Vec<u8>,
) -> Response {
    let frames = stream.map(move |item| {
        let event = match item {
            Ok(ev) => {
                let data = String::from_utf8(encode(&id, ev.event)).unwrap_or_default();
                let e = Event::default().data(data);
                if ev.seq > 0 {
                    e.id(ev.seq.to_string())
                } else {
                    e
                }
            }
            Err(err) => Event::default()
                .event("error")
                .data(String::from_utf8(error_body(&id, &err)).unwrap_or_default()),
        };
        Ok::<_, Infallible>(event)
    });
    let resp = Sse::new(frames)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    with_headers(resp, extra)
}
