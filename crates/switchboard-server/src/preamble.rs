//! What the two HTTP bindings (JSON-RPC and REST) do alike before and after
//! their dialect: read the body under the server's size limit, check that
//! it is JSON, divert an opted-in stream to AG-UI, and write a JSON answer. Each binding only picks how an
//! error from here looks on its wire (a JSON-RPC error body or a
//! `google.rpc.Status`), so the checks and their messages cannot drift apart.

use axum::body::{Body, Bytes};
use axum::response::Response;
use bytes::BytesMut;
use futures::StreamExt;
use http::{HeaderValue, StatusCode, header};
use http_body::Body as _;
use switchboard_core::{CallContext, EventStream};
use switchboard_protocol::A2AError;

use crate::AppState;
use crate::params::is_json_content_type;
use crate::sse::add_headers;

/// Reads the whole request body, up to `max_bytes`. A larger body is
/// InvalidRequest (the bindings send it with HTTP 413).
///
/// A body that comes in one piece is kept as it is. One in pieces is copied
/// into one buffer as they come, sized by its `Content-Length` when it
/// declares one, so a large body is held once: not as its pieces plus their
/// joined copy, nor in a buffer grown by doubling to twice its size.
///
/// A body found too large is then read on and dropped, up to
/// 8 MiB past the limit, before the caller answers
/// 413: a connection closed with request bytes still unread is *reset*
/// (TCP sends RST, not FIN, when unread data is discarded), and the reset
/// throws away the 413 the client has not read yet, so the client would
/// see only "connection reset". Read to its end, the body costs nothing
/// more than its bytes (each chunk is dropped as it comes, its memory
/// budget charge with it), and the client reads why it was refused. A
/// body that declares more than that, or sends more, is not waited for.
pub async fn read_body(body: Body, max_bytes: usize) -> Result<Bytes, A2AError> {
    read_limited(body, max_bytes, true).await
}

/// How far past the limit an oversized body is read (and dropped) so that
/// its client can read the 413 ([`read_body`]).
pub(crate) const OVERSIZE_DRAIN_BYTES: usize = 8 * 1024 * 1024;

/// [`read_body`] for a caller that is refused anyway (the gate said no):
/// what does not fit is not read on.
pub(crate) async fn read_body_prefix(body: Body, max_bytes: usize) -> Result<Bytes, A2AError> {
    read_limited(body, max_bytes, false).await
}

async fn read_limited(body: Body, max_bytes: usize, drain: bool) -> Result<Bytes, A2AError> {
    let too_large =
        || A2AError::InvalidRequest(format!("the request body exceeds {max_bytes} bytes"));
    let drain_to = if drain {
        max_bytes.saturating_add(OVERSIZE_DRAIN_BYTES)
    } else {
        0
    };
    let claimed = body.size_hint().exact();
    // What the body declares, as far as it may be believed: a larger
    // claim is read (and paced) until it passes the limit, as any body.
    let declared = body
        .size_hint()
        .exact()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= max_bytes);
    let mut stream = body.into_data_stream();
    let mut first: Option<Bytes> = None;
    let mut joined: Option<BytesMut> = None;
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| A2AError::InvalidRequest(format!("reading the body: {e}")))?;
        let len = first.as_ref().map_or(0, Bytes::len) + joined.as_ref().map_or(0, BytesMut::len);
        if len + chunk.len() > max_bytes {
            let mut read = len + chunk.len();
            let believable = claimed.is_none_or(|n| n <= drain_to as u64);
            drop((first, joined, chunk));
            while believable && read <= drain_to {
                match stream.next().await {
                    Some(Ok(more)) => read += more.len(),
                    _ => break,
                }
            }
            return Err(too_large());
        }
        match (&mut joined, first.take()) {
            (Some(joined), _) => joined.extend_from_slice(&chunk),
            (None, None) => first = Some(chunk),
            (None, Some(head)) => {
                let size = declared.unwrap_or(0).max(head.len() + chunk.len());
                let mut buf = BytesMut::with_capacity(size);
                buf.extend_from_slice(&head);
                buf.extend_from_slice(&chunk);
                joined = Some(buf);
            }
        }
    }
    Ok(match joined {
        Some(joined) => joined.freeze(),
        None => first.unwrap_or_default(),
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

/// The most unused capacity a JSON answer's buffer may keep.
const SPARE_ANSWER_BYTES: usize = 64 * 1024;

/// A JSON answer with `status` and the extra response headers `extra`.
pub(crate) fn json_response(
    status: StatusCode,
    mut body: Vec<u8>,
    extra: &[(&'static str, String)],
) -> Response {
    // Serializing grows the buffer by doubling, so a large answer's buffer
    // can be nearly twice its length; the answer is held (and charged to the
    // memory budget) at its length, so the spare part is given back first.
    if body.capacity() - body.len() > SPARE_ANSWER_BYTES {
        body.shrink_to_fit();
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A body of `chunks` chunks of `size` bytes, sent as a stream (no
    /// declared length), and a count of the chunks taken from it.
    fn counted(chunks: usize, size: usize) -> (Body, Arc<AtomicUsize>) {
        let taken = Arc::new(AtomicUsize::new(0));
        let count = taken.clone();
        let stream = futures::stream::iter(0..chunks).map(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>(Bytes::from(vec![b'x'; size]))
        });
        (Body::from_stream(stream), taken)
    }

    #[tokio::test]
    async fn an_oversized_body_is_read_to_its_end_within_the_drain_bound() {
        // 64 KiB against a 4 KiB limit: refused, and read to the end so
        // the connection closes cleanly behind the 413.
        let (body, taken) = counted(64, 1024);
        let err = read_body(body, 4096).await.unwrap_err();
        assert!(err.to_string().contains("exceeds 4096 bytes"), "{err}");
        assert_eq!(taken.load(Ordering::SeqCst), 64);
        // Past the bound, reading stops.
        let chunk = 1024 * 1024;
        let (body, taken) = counted(64, chunk);
        read_body(body, 4096).await.unwrap_err();
        let read = taken.load(Ordering::SeqCst) * chunk;
        assert!(read <= 4096 + OVERSIZE_DRAIN_BYTES + chunk, "{read}");
        assert!(read < 64 * chunk);
        // A refused caller's body is not read past its limit.
        let (body, taken) = counted(64, 1024);
        read_body_prefix(body, 4096).await.unwrap_err();
        assert_eq!(taken.load(Ordering::SeqCst), 5);
    }
}
