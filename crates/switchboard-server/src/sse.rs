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

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use http::HeaderValue;

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
