//! The JSON-RPC 2.0 binding: one POST endpoint, SSE for the two streaming
//! methods.
//!
//! Order of checks, each with the error the spec names:
//! authentication (the server's [`crate::Authenticator`]: HTTP 401 / 403
//! with a custom JSON-RPC code, see [`crate::gate`]) → body size (-32600, HTTP 413) → content type (-32005) → JSON (-32700) →
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
//! error is sent with HTTP 200 (except an oversize body, 413, and the gate's
//! 401/403), as JSON-RPC over HTTP usually does.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use http::StatusCode;
use serde::Serialize;
use switchboard_core::{Answer, CallContext, EventStream};
use switchboard_protocol::jsonrpc::{
    JsonRpcRequest, RequestId, error_body, parse_request, success_body,
};
use switchboard_protocol::{A2AError, A2aRequest, Operation};

use crate::AppState;
use crate::gate::Gate;
use crate::params::{ProtocolVersion, explicit_version, last_event_id};
pub(crate) use crate::preamble::Reply;
use crate::preamble::{agui_or_reply, json_response, read_body, read_body_prefix, require_json};
use crate::sse::{SseFrame, event_frames, sse_response};

/// Handles a POST to the JSON-RPC endpoint.
pub(crate) async fn handle(State(app): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    // Who is calling, before anything of the body is read.
    let identity = match app.gate.authenticate(&parts).await {
        Ok(identity) => identity,
        Err(err) => return refused_response(&app, body, &err).await,
    };
    let bytes = match read_body(body, app.max_body_bytes).await {
        Ok(b) => b,
        Err(err) => return too_large_response(&err),
    };
    if let Err(err) = require_json(&parts.headers) {
        return not_json_response(&app, &bytes, &err);
    }
    let rpc = match parse_request(&bytes) {
        Ok(r) => r,
        Err((id, err)) => return error_response(&app, &id, &err, &[]),
    };
    let v03_operation = Operation::from_v03_name(&rpc.method);
    let is_v03 = v03_operation.is_some();
    // 0.3 clients open `message/stream` and `tasks/resubscribe` as SSE
    // whatever happens, so their errors are one SSE event (as the official
    // 0.3 SDK servers send them); 1.0 errors are plain JSON-RPC answers.
    let errors_as_sse = v03_operation.is_some_and(Operation::is_streaming);
    let error = |err: &A2AError, extra: &[(&'static str, String)]| {
        if errors_as_sse {
            sse_error_response(&rpc.id, err, extra)
        } else {
            error_response(&app, &rpc.id, err, extra)
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
    let mut call = match app.gate.call_context(&identity, &parts.headers) {
        Ok(call) => call,
        Err(err) => return error(&err, &[]),
    };
    let extra = Gate::echo_headers(&call);
    // AG-UI instead of A2A frames, if asked for (1.0 streams only; its
    // `Last-Event-ID` is an AG-UI event id).
    let agui = match crate::agui::opt_in(
        &parts.headers,
        parts.uri.query(),
        Operation::from_name(&rpc.method),
    ) {
        Ok(agui) => agui,
        Err(err) => return error(&err, &extra),
    };
    match agui.map_or_else(|| last_event_id(&parts.headers), |a| Ok(a.resume_after())) {
        Ok(after) => call.resume_after = after,
        Err(err) => return error(&err, &extra),
    }
    let agui = agui.map(|a| (a, call.clone()));
    // The operation's future (the engine's, the agent's) is boxed: it is
    // many kilobytes, and held inline it would make this handler's future
    // as big, which axum and every layer around it then move by value
    // several times per request (a memcpy each). It is built in its box
    // (see `pin_in_place!`), not copied there.
    let result = if is_v03 {
        crate::pin_in_place!(crate::jsonrpc_v03::dispatch(&app, call, &rpc)).await
    } else {
        crate::pin_in_place!(dispatch(&app, call, &rpc)).await
    };
    match result {
        Ok(Reply::Json(body)) => json_response(StatusCode::OK, body, &extra),
        Ok(stream) => stream_response(&app, rpc.id, stream, agui, &extra),
        Err(err) => error(&err, &extra),
    }
}

/// The answer of an operation that answered a stream: AG-UI if the request
/// opted in, else the binding's SSE in the dialect's shapes.
///
/// Not inlined, as the error answers below are cold: `handle`'s unary
/// path, the common one, then spans fewer instruction-cache lines.
#[inline(never)]
fn stream_response(
    app: &AppState,
    id: RequestId,
    reply: Reply,
    agui: Option<(crate::agui::AguiRequest, CallContext)>,
    extra: &[(&'static str, String)],
) -> Response {
    let reply = match agui_or_reply(app, reply, agui, extra) {
        Ok(agui_stream) => return agui_stream,
        Err(reply) => reply,
    };
    match reply {
        Reply::Json(body) => json_response(StatusCode::OK, body, extra),
        Reply::Stream(stream) => sse(id, stream, extra, |id, ev| success_body(id, &ev)),
        Reply::Stream03(stream) => sse(id, stream, extra, |id, ev| {
            success_body(id, &switchboard_protocol::v03::rpc::Event::from(ev))
        }),
    }
}

/// How much of a refused caller's body is read to find the request id: a
/// JSON-RPC request that names no large params fits, and a refused caller
/// gets no more of the server's memory or time than that.
const REFUSED_BODY_BYTES: usize = 64 * 1024;

/// The gate refused the caller (no or bad credentials, over its rate): the
/// error with the request's id when the body, read no further than
/// [`REFUSED_BODY_BYTES`], holds one; a null id otherwise.
#[cold]
async fn refused_response(app: &AppState, body: Body, err: &A2AError) -> Response {
    let id = match read_body_prefix(body, REFUSED_BODY_BYTES.min(app.max_body_bytes)).await {
        Ok(bytes) => parse_request(&bytes).map_or_else(|(id, _)| id, |rpc| rpc.id),
        Err(_) => RequestId::Null,
    };
    error_response(app, &id, err, &[])
}

/// A body over the server's size limit: HTTP 413 with the JSON-RPC error.
#[cold]
fn too_large_response(err: &A2AError) -> Response {
    switchboard_telemetry::probe::note_error(err.reason());
    let body = error_body(&RequestId::Null, err);
    json_response(StatusCode::PAYLOAD_TOO_LARGE, body, &[])
}

/// A body sent with a content type other than JSON: the error, echoing the
/// request's id if the body happens to be readable.
#[cold]
fn not_json_response(app: &AppState, bytes: &[u8], err: &A2AError) -> Response {
    let id = parse_request(bytes)
        .map(|r| r.id)
        .unwrap_or(RequestId::Null);
    error_response(app, &id, err, &[])
}

/// A 0.3 stream that failed before its first event: `text/event-stream`
/// with one `data:` event holding the JSON-RPC error, then the end. No
/// `event:` name and no `id:`, as the official 0.3 SDK servers send it.
#[cold]
fn sse_error_response(
    id: &RequestId,
    err: &A2AError,
    extra: &[(&'static str, String)],
) -> Response {
    switchboard_telemetry::probe::note_error(err.reason());
    let data = String::from_utf8(error_body(id, err)).unwrap_or_default();
    let frame = futures::stream::once(std::future::ready(SseFrame::data(None, data)));
    sse_response(frame, extra)
}

/// A JSON-RPC error answer: HTTP 200, as JSON-RPC over HTTP usually does,
/// except authentication failures, which keep their transport status (401
/// with the authenticator's challenge, 403) and quota refusals (429 with
/// `Retry-After`), so HTTP clients and proxies see them for what they are.
///
/// Cold, as is [`sse_error_response`]: `handle` calls them from a dozen
/// places, and marked so their call sites are laid out away from the
/// success path, which then spans fewer cache lines.
#[cold]
fn error_response(
    app: &AppState,
    id: &RequestId,
    err: &A2AError,
    extra: &[(&'static str, String)],
) -> Response {
    switchboard_telemetry::probe::note_error(err.reason());
    let status = match err {
        A2AError::Unauthenticated(_)
        | A2AError::PermissionDenied(_)
        | A2AError::ResourceExhausted(_) => app.error_table.status(err).http,
        _ => StatusCode::OK,
    };
    let mut headers = extra.to_vec();
    headers.extend(app.gate.error_headers(err));
    json_response(status, error_body(id, err), &headers)
}

pub(crate) fn ok<T: Serialize>(id: &RequestId, value: &T) -> Result<Reply, A2AError> {
    Ok(Reply::Json(success_body(id, value)))
}

/// Decodes params, applies the tenant they name, and runs the operation.
async fn dispatch(
    app: &AppState,
    mut call: CallContext,
    rpc: &JsonRpcRequest,
) -> Result<Reply, A2AError> {
    let op = Operation::from_name(&rpc.method)
        .ok_or_else(|| A2AError::MethodNotFound(rpc.method.clone()))?;
    let params = rpc.params.as_ref().map_or("{}", |p| p.get());
    let request = A2aRequest::from_params(op, params)?;
    call.use_tenant(request.tenant())?;
    match app.handler.handle(&call, request).await? {
        Answer::Unary(answer) => ok(&rpc.id, &answer),
        Answer::Stream(stream) => Ok(Reply::Stream(stream)),
    }
}

/// The SSE answer of a stream: each event a JSON-RPC response carrying the
/// request's id, an error `event: error` with a JSON-RPC error body.
fn sse(
    id: RequestId,
    stream: EventStream,
    extra: &[(&'static str, String)],
    encode: fn(&RequestId, switchboard_protocol::StreamResponse) -> Vec<u8>,
) -> Response {
    let err_id = id.clone();
    let frames = event_frames(
        stream,
        move |ev| String::from_utf8(encode(&id, ev)).unwrap_or_default(),
        move |err| String::from_utf8(error_body(&err_id, err)).unwrap_or_default(),
    );
    sse_response(frames, extra)
}
