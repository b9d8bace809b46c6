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
//! A stream that encodes its own frames (the AG-UI answers: a batch of
//! `id:`/`data:` frames per A2A event, serialized straight into one buffer)
//! goes out through [`sse_encoded_response`] instead: the same headers and
//! keep-alive, without a `String` and an `Event` buffer per frame.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
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
    let events = frames.map(|frame| {
        // Field lines in the usual order: event, id, then the data.
        let mut event = Event::default();
        if let Some(name) = frame.event {
            event = event.event(name);
        }
        if let Some(id) = frame.id {
            event = event.id(id);
        }
        Ok::<_, Infallible>(event.data(frame.data))
    });
    let mut resp = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    add_headers(&mut resp, extra);
    resp
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
