//! What the two HTTP bindings (JSON-RPC and REST) do alike before and after
//! their dialect: read the body under the server's size limit, check that
//! it is JSON, divert an opted-in stream to AG-UI, and write a JSON answer. Each binding only picks how an
//! error from here looks on its wire (a JSON-RPC error body or a
//! `google.rpc.Status`), so the checks and their messages cannot drift apart.

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};
use switchboard_core::{CallContext, EventStream};
use switchboard_protocol::A2AError;

use crate::AppState;
use crate::params::is_json_content_type;
use crate::sse::add_headers;

/// Reads the whole request body, up to `max_bytes`. A larger body is
/// InvalidRequest (the bindings send it with HTTP 413).
pub(crate) async fn read_body(body: Body, max_bytes: usize) -> Result<Bytes, A2AError> {
    axum::body::to_bytes(body, max_bytes).await.map_err(|_| {
        A2AError::InvalidRequest(format!("the request body exceeds {max_bytes} bytes"))
    })
}

/// ContentTypeNotSupported, naming what was sent, unless the request's
/// `Content-Type` is `application/json` or `application/a2a+json`.
pub(crate) fn require_json(headers: &http::HeaderMap) -> Result<(), A2AError> {
    if is_json_content_type(headers) {
        return Ok(());
    }
    let got = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none");
    Err(A2AError::ContentTypeNotSupported(format!(
        "Content-Type must be application/json or application/a2a+json, got {got}"
    )))
}

/// A JSON answer with `status` and the extra response headers `extra`.
pub(crate) fn json_response(
    status: StatusCode,
    body: Vec<u8>,
    extra: &[(&'static str, String)],
) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    add_headers(&mut resp, extra);
    resp
}

/// What a binding's dispatch answers: a JSON body, or a stream for the
/// binding's SSE writer.
pub(crate) enum Reply {
    Json(Vec<u8>),
    Stream(EventStream),
    /// A stream whose items are sent in the binding's 0.3 shapes.
    Stream03(EventStream),
}

/// The AG-UI answer when the request opted in (`agui`, with its call) and
/// the operation answered with a stream; otherwise `Err` gives the reply
/// back for the binding's own writer. Both HTTP bindings decide this here.
pub(crate) fn agui_or_reply(
    app: &AppState,
    reply: Reply,
    agui: Option<(crate::agui::AguiRequest, CallContext)>,
    extra: &[(&'static str, String)],
) -> Result<Response, Reply> {
    match (reply, agui) {
        (Reply::Stream(stream), Some((agui, call))) => Ok(crate::agui::response(
            app.handler.clone(),
            call,
            stream,
            agui,
            extra,
        )),
        (reply, _) => Err(reply),
    }
}
