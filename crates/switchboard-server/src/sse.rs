//! The one SSE writer: every server-sent event stream of the server (the
//! A2A streams of JSON-RPC and REST in both versions, and routes added from
//! outside) goes out through [`sse_response`], and so do the AG-UI answers
//! of those streams (`crate::agui`).
//!
//! A stream is a sequence of [`SseFrame`]s: `id:` (the event's sequence
//! number, which a reconnecting client sends back as `Last-Event-ID`), an
//! optional `event:` name, and the `data:` payload (one JSON document; a
//! payload with line breaks is split over several `data:` lines, as the
//! format requires). An idle stream sends a comment every
//! [`KEEP_ALIVE`] so proxies and clients with read timeouts keep it open.
//!
//! Each frame is encoded once, straight into the bytes that are sent
//! ([`SseFrame::encode`]). A stream that encodes its own frames (the AG-UI
//! answers: a batch of `id:`/`data:` frames per A2A event, serialized
//! straight into one buffer) goes out through [`sse_encoded_response`],
//! which [`sse_response`] also ends in: the same headers and keep-alive.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use http::{HeaderValue, header};
use tokio::time::{Instant, Sleep};

/// How often an idle stream sends a comment. Under 5 s, because the
/// official Python client's default read timeout is 5 s.
pub const KEEP_ALIVE: Duration = Duration::from_secs(4);

/// One server-sent event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseFrame {
    /// The `id:` line: what a reconnecting client sends as `Last-Event-ID`
    /// (an A2A event sequence number; `<seq>.<i>` on AG-UI streams).
    pub id: Option<String>,
    /// The `event:` line (absent means the default `message` event).
    pub event: Option<&'static str>,
    /// The payload.
    pub data: String,
}

impl SseFrame {
    /// A default (`message`) event with `data` and, when given, an id.
    pub fn data(id: Option<String>, data: String) -> Self {
        SseFrame {
            id,
            event: None,
            data,
        }
    }

    /// The frame in the SSE format: its `event:` and `id:` lines, the
    /// payload as one `data:` line per line it has (a CR, an LF or a CRLF
    /// ends one), and the blank line that ends the event. A line break in
    /// the name or the id, which would end the field early, is left out.
    pub fn encode(&self) -> Bytes {
        fn field(out: &mut Vec<u8>, name: &[u8], value: &str) {
            out.extend_from_slice(name);
            out.extend(value.bytes().filter(|b| !matches!(b, b'\r' | b'\n')));
            out.push(b'\n');
        }
        let mut out = Vec::with_capacity(self.data.len() + 32);
        if let Some(name) = self.event {
            field(&mut out, b"event: ", name);
        }
        if let Some(id) = &self.id {
            field(&mut out, b"id: ", id);
        }
        let data = self.data.as_bytes();
        if !data.iter().any(|b| matches!(b, b'\r' | b'\n')) {
            // Every A2A event: compact JSON has no raw line breaks.
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(data);
            out.push(b'\n');
        } else {
            let mut rest = data;
            loop {
                let end = rest.iter().position(|b| matches!(b, b'\r' | b'\n'));
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(&rest[..end.unwrap_or(rest.len())]);
                out.push(b'\n');
                let Some(end) = end else { break };
                let skip = if rest[end..].starts_with(b"\r\n") {
                    2
                } else {
                    1
                };
                rest = &rest[end + skip..];
            }
        }
        out.push(b'\n');
        Bytes::from(out)
    }

    /// A named event without an id (e.g. `error`).
    pub fn named(event: &'static str, data: String) -> Self {
        SseFrame {
            id: None,
            event: Some(event),
            data,
        }
    }
}

/// An SSE answer (`200`, `text/event-stream`) sending `frames`, with the
/// extra response headers `extra` (e.g. the activated `A2A-Extensions`).
pub fn sse_response<S>(frames: S, extra: &[(&'static str, String)]) -> Response
where
    S: Stream<Item = SseFrame> + Send + 'static,
{
    // Each frame encoded once, straight into the bytes that are sent.
    sse_encoded_response(frames.map(|frame| frame.encode()), extra)
}

/// An SSE answer (`200`, `text/event-stream`) sending `chunks`, each one
/// or more whole frames already encoded, with the same headers and
/// keep-alive as [`sse_response`].
pub fn sse_encoded_response<S>(chunks: S, extra: &[(&'static str, String)]) -> Response
where
    S: Stream<Item = Bytes> + Send + 'static,
{
    let body = KeepAliveChunks::new(Box::pin(chunks)).map(Ok::<_, Infallible>);
    let mut resp = Response::new(Body::from_stream(body));
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    add_headers(&mut resp, extra);
    resp
}

/// The keep-alive comment: what an idle stream sends every [`KEEP_ALIVE`].
const KEEP_ALIVE_COMMENT: &[u8] = b":\n\n";

/// `chunks`, with [`KEEP_ALIVE_COMMENT`] whenever none came for [`KEEP_ALIVE`].
struct KeepAliveChunks<S> {
    chunks: Pin<Box<S>>,
    idle: Pin<Box<Sleep>>,
}

impl<S: Stream<Item = Bytes>> KeepAliveChunks<S> {
    fn new(chunks: Pin<Box<S>>) -> Self {
        KeepAliveChunks {
            chunks,
            idle: Box::pin(tokio::time::sleep(KEEP_ALIVE)),
        }
    }
}

impl<S: Stream<Item = Bytes>> Stream for KeepAliveChunks<S> {
    type Item = Bytes;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let this = &mut *self;
        match this.chunks.as_mut().poll_next(cx) {
            Poll::Ready(chunk) => {
                this.idle.as_mut().reset(Instant::now() + KEEP_ALIVE);
                Poll::Ready(chunk)
            }
            Poll::Pending => {
                std::task::ready!(this.idle.as_mut().poll(cx));
                this.idle.as_mut().reset(Instant::now() + KEEP_ALIVE);
                Poll::Ready(Some(Bytes::from_static(KEEP_ALIVE_COMMENT)))
            }
        }
    }
}

/// Adds `extra` to an answer's headers (values that are not valid header
/// text are left out rather than failing the answer).
pub(crate) fn add_headers(resp: &mut Response, extra: &[(&'static str, String)]) {
    for (name, value) in extra {
        if let Ok(v) = HeaderValue::from_str(value) {
            resp.headers_mut().insert(*name, v);
        }
    }
}

/// The frames of an engine stream: each event as `id: <seq>` (when it has
/// one) + `data: encode(event)`, an error as `event: error` +
/// `data: encode_error(error)`. What the A2A bindings send.
pub(crate) fn event_frames(
    stream: switchboard_core::EventStream,
    encode: impl Fn(switchboard_protocol::StreamResponse) -> String + Send + 'static,
    encode_error: impl Fn(&switchboard_protocol::A2AError) -> String + Send + 'static,
) -> impl Stream<Item = SseFrame> + Send + 'static {
    stream.map(move |item| match item {
        Ok(ev) => SseFrame::data((ev.seq > 0).then(|| ev.seq.to_string()), encode(ev.event)),
        Err(err) => SseFrame::named("error", encode_error(&err)),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// An encoded stream that goes quiet gets the keep-alive comment after
    /// [`KEEP_ALIVE`] of silence, again and again, and its chunks as they come.
    #[test]
    fn frames_are_encoded_as_the_sse_format_wants() {
        let frame = SseFrame::data(Some("7".into()), r#"{"a":"b\nc"}"#.into());
        assert_eq!(&frame.encode()[..], b"id: 7\ndata: {\"a\":\"b\\nc\"}\n\n");
        let frame = SseFrame::named("error", "x".into());
        assert_eq!(&frame.encode()[..], b"event: error\ndata: x\n\n");
        // A payload's line breaks (LF, CR, CRLF) each start a data line;
        // an empty payload is one empty data line.
        let frame = SseFrame::data(None, "one\ntwo\r\nthree\rfour\n".into());
        assert_eq!(
            &frame.encode()[..],
            b"data: one\ndata: two\ndata: three\ndata: four\ndata: \n\n"
        );
        assert_eq!(
            &SseFrame::data(None, String::new()).encode()[..],
            b"data: \n\n"
        );
        // A line break cannot end the id or the name early.
        let frame = SseFrame::data(Some("1\r\nevent: x".into()), "y".into());
        assert_eq!(&frame.encode()[..], b"id: 1event: x\ndata: y\n\n");
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_encoded_stream_sends_keep_alive_comments() {
        let frame = Bytes::from_static(b"id: 1\ndata: {}\n\n");
        let chunks = futures::stream::iter([frame.clone()]).chain(futures::stream::pending());
        let mut stream = KeepAliveChunks::new(Box::pin(chunks));
        let start = Instant::now();
        assert_eq!(stream.next().await.unwrap(), frame);
        assert_eq!(Instant::now(), start, "a ready chunk does not wait");
        for n in 1..=2 {
            assert_eq!(&stream.next().await.unwrap()[..], KEEP_ALIVE_COMMENT);
            assert_eq!(Instant::now(), start + KEEP_ALIVE * n);
        }
    }
}
