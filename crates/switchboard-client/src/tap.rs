//! Watching what a client says to an agent: a [`WireTap`] records every
//! call's request, its answer (or error) and each event of a stream.
//!
//! A tap is for tools that show a conversation to a person (the console's
//! Debug view, a recorder in a test): set one with
//! [`ClientBuilder::tap`](crate::ClientBuilder::tap) and each operation the
//! client runs reports [`WireFrame`]s to it as they pass, numbered per call.
//! Frames carry the A2A 1.0 JSON of each object (`params` of a request,
//! `result` of an answer or of a stream event), whatever binding carries
//! it: JSON-RPC, HTTP+JSON and gRPC, 1.0 or 0.3, look the same, so a frame
//! can be replayed over any of them. Stream events keep the `id:` (or gRPC
//! event number) the server gave them.
//!
//! A client without a tap has no wrapper around its transport: nothing is
//! encoded, copied or counted for taps that are not there. With one, every
//! object is serialized once more, for the tap.
//!
//! ## The bytes on the wire
//! A tap whose [`WireTap::wire_bytes`] is `true` also gets what the HTTP
//! bindings (JSON-RPC and HTTP+JSON, 1.0 and 0.3) actually sent and
//! received, in the same call: the request ([`FrameKind::WireRequest`]: the
//! method, URL and headers, then the body as sent), the answer's status and
//! headers with its body ([`FrameKind::WireResponse`]; a stream's body
//! follows as [`FrameKind::WireChunk`]s, the `text/event-stream` bytes as
//! they arrived, piece by piece). Header values that can hold a secret are
//! masked: every header but a fixed list of protocol headers shows as
//! `•••• (N bytes)`, an `Authorization` keeps its scheme (`Bearer ••••`). A
//! body is cut after [`WIRE_FRAME_BYTES`], and a call's bodies after
//! [`WIRE_CALL_BYTES`] in all, each cut ending in `… N bytes more`. gRPC
//! frames protobuf, which is not text: a gRPC call has no wire frames, only
//! its messages decoded, as the JSON frames above.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use futures::StreamExt;
use switchboard_protocol::{A2aRequest, A2aResponse};

use crate::client::EventStream;
use crate::transport::{ClientFuture, Transport};

/// Receives the frames of a client's calls. Called on the task that runs
/// the call, so an implementation must not block (push to a channel or a
/// bounded buffer).
pub trait WireTap: Send + Sync + fmt::Debug {
    /// One frame of a call.
    fn record(&self, frame: WireFrame);

    /// Whether to record the bytes on the wire too (see the module docs);
    /// `false` by default.
    fn wire_bytes(&self) -> bool {
        false
    }
}

/// The most bytes of one body a wire frame shows.
pub const WIRE_FRAME_BYTES: usize = 64 * 1024;
/// The most bytes of bodies the wire frames of one call show in all.
pub const WIRE_CALL_BYTES: usize = 1024 * 1024;

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameKind {
    /// The request's params, as sent.
    Request,
    /// A unary call's result.
    Response,
    /// One event of a stream.
    Event,
    /// The call (or the stream) ended with an error; `body` is its message.
    Error,
    /// The HTTP request as sent: method, URL, headers (masked), body.
    WireRequest,
    /// The HTTP answer as received: status, headers (masked), and the body
    /// unless it is a stream.
    WireResponse,
    /// A piece of a streamed answer's body, as it arrived.
    WireChunk,
}

impl FrameKind {
    /// `request`, `response`, `event`, `error`, `wire-request`,
    /// `wire-response` or `wire-chunk`.
    pub fn label(self) -> &'static str {
        match self {
            FrameKind::Request => "request",
            FrameKind::Response => "response",
            FrameKind::Event => "event",
            FrameKind::Error => "error",
            FrameKind::WireRequest => "wire-request",
            FrameKind::WireResponse => "wire-response",
            FrameKind::WireChunk => "wire-chunk",
        }
    }
}

/// One object on its way to or from the agent (see the module docs).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WireFrame {
    /// The call it belongs to: numbered from 1 per client, in the order
    /// calls start (a stream's reconnection is a call of its own).
    pub call: u64,
    /// The A2A operation (`SendStreamingMessage`, `GetTask`, …).
    pub operation: &'static str,
    /// What the frame is.
    pub kind: FrameKind,
    /// A stream event's number, when the server gave one.
    pub seq: Option<u64>,
    /// The 1.0 JSON of the object (an error's message for
    /// [`FrameKind::Error`]; the bytes as text for the wire frames).
    pub body: String,
}

tokio::task_local! {
    /// The call whose HTTP exchange is under way, for a tap that wants the
    /// bytes: set by [`Tapped`] around the transport's future, read by the
    /// HTTP plumbing (`transport::Http`) and the SSE reader.
    static WIRE: WireRecorder;
}

/// Records one call's bytes on the wire to its tap (see the module docs).
#[derive(Clone)]
pub(crate) struct WireRecorder {
    tap: Arc<dyn WireTap>,
    call: u64,
    operation: &'static str,
    /// Body bytes the call's frames may still show.
    left: Arc<AtomicUsize>,
}

impl WireRecorder {
    /// The recorder of the call under way, if its tap wants the bytes.
    pub(crate) fn current() -> Option<WireRecorder> {
        WIRE.try_with(WireRecorder::clone).ok()
    }

    /// The request as it goes out.
    pub(crate) fn request(&self, request: &reqwest::Request) {
        let mut head = format!("{} {}\n", request.method(), request.url());
        write_headers(&mut head, request.headers());
        let body = request
            .body()
            .and_then(reqwest::Body::as_bytes)
            .unwrap_or_default();
        self.record(FrameKind::WireRequest, head, body);
    }

    /// The answer's status and headers, and its body when it is not a
    /// stream (`body` empty).
    pub(crate) fn response(
        &self,
        status: reqwest::StatusCode,
        headers: &reqwest::header::HeaderMap,
        body: &[u8],
    ) {
        let mut head = format!("HTTP {status}\n");
        write_headers(&mut head, headers);
        self.record(FrameKind::WireResponse, head, body);
    }

    /// One piece of a streamed body.
    pub(crate) fn chunk(&self, bytes: &[u8]) {
        self.record(FrameKind::WireChunk, String::new(), bytes);
    }

    fn record(&self, kind: FrameKind, mut text: String, body: &[u8]) {
        let room = self.take(body.len().min(WIRE_FRAME_BYTES));
        text.push_str(&bounded_text(body, room));
        self.tap.record(WireFrame {
            call: self.call,
            operation: self.operation,
            kind,
            seq: None,
            body: text,
        });
    }

    /// Takes up to `want` bytes of the call's budget.
    fn take(&self, want: usize) -> usize {
        let mut taken = 0;
        let _ = self
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                taken = want.min(left);
                Some(left - taken)
            });
        taken
    }
}

/// `body` as text: its first `room` bytes (cut back to a character
/// boundary), then `… N bytes more` when anything was left out.
fn bounded_text(body: &[u8], room: usize) -> String {
    let text = String::from_utf8_lossy(body);
    if text.len() <= room {
        return text.into_owned();
    }
    let mut cut = room;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… {} bytes more", &text[..cut], text.len() - cut)
}

/// Headers whose values are protocol, never a secret: shown as they are.
const PLAIN_HEADERS: &[&str] = &[
    "accept",
    "a2a-extensions",
    "a2a-version",
    "allow",
    "cache-control",
    "connection",
    "content-encoding",
    "content-length",
    "content-type",
    "date",
    "last-event-id",
    "retry-after",
    "server",
    "traceparent",
    "transfer-encoding",
    "vary",
    "www-authenticate",
    "x-request-id",
];

/// Writes `name: value` lines, secrets masked, then the blank line.
fn write_headers(out: &mut String, headers: &reqwest::header::HeaderMap) {
    for (name, value) in headers {
        let value = if PLAIN_HEADERS.contains(&name.as_str()) && !value.is_sensitive() {
            String::from_utf8_lossy(value.as_bytes()).into_owned()
        } else {
            masked(name, value)
        };
        out.push_str(&format!("{name}: {value}\n"));
    }
    out.push('\n');
}

/// A header value that may be a secret: its length only, and for an
/// `Authorization` its scheme.
fn masked(name: &reqwest::header::HeaderName, value: &reqwest::header::HeaderValue) -> String {
    let bytes = value.as_bytes();
    if *name == reqwest::header::AUTHORIZATION || *name == reqwest::header::PROXY_AUTHORIZATION {
        let text = String::from_utf8_lossy(bytes);
        if let Some((scheme, _)) = text.split_once(' ')
            && !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            return format!("{scheme} ••••");
        }
    }
    format!("•••• ({} bytes)", bytes.len())
}

/// A transport that reports what passes through it to a tap.
#[derive(Debug)]
pub(crate) struct Tapped {
    inner: Box<dyn Transport>,
    tap: Arc<dyn WireTap>,
    calls: AtomicU64,
}

impl Tapped {
    pub(crate) fn wrap(
        inner: Box<dyn Transport>,
        tap: Option<Arc<dyn WireTap>>,
    ) -> Box<dyn Transport> {
        match tap {
            None => inner,
            Some(tap) => Box::new(Tapped {
                inner,
                tap,
                calls: AtomicU64::new(0),
            }),
        }
    }

    /// Numbers a new call and records its request.
    fn start(&self, request: &A2aRequest) -> (u64, &'static str) {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let operation = request.operation().name();
        self.tap.record(WireFrame {
            call,
            operation,
            kind: FrameKind::Request,
            seq: None,
            body: json(request),
        });
        (call, operation)
    }

    /// `future` (the call's exchange) with the call's wire recorder set,
    /// when the tap wants the bytes.
    async fn on_the_wire<T>(
        &self,
        call: u64,
        operation: &'static str,
        future: impl std::future::Future<Output = T>,
    ) -> T {
        if !self.tap.wire_bytes() {
            return future.await;
        }
        let recorder = WireRecorder {
            tap: self.tap.clone(),
            call,
            operation,
            left: Arc::new(AtomicUsize::new(WIRE_CALL_BYTES)),
        };
        WIRE.scope(recorder, future).await
    }
}

fn json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("\"unserializable: {e}\""))
}

impl Transport for Tapped {
    fn endpoint(&self) -> &str {
        self.inner.endpoint()
    }

    fn call(&self, request: A2aRequest) -> ClientFuture<'_, A2aResponse> {
        Box::pin(async move {
            let (call, operation) = self.start(&request);
            let answer = self
                .on_the_wire(call, operation, self.inner.call(request))
                .await;
            let (kind, body) = match &answer {
                Ok(response) => (FrameKind::Response, json(response)),
                Err(e) => (FrameKind::Error, e.to_string()),
            };
            self.tap.record(WireFrame {
                call,
                operation,
                kind,
                seq: None,
                body,
            });
            answer
        })
    }

    fn stream(&self, request: A2aRequest, after: Option<u64>) -> ClientFuture<'_, EventStream> {
        Box::pin(async move {
            let (call, operation) = self.start(&request);
            let tap = self.tap.clone();
            let frame = move |kind, seq, body| WireFrame {
                call,
                operation,
                kind,
                seq,
                body,
            };
            let opened = self
                .on_the_wire(call, operation, self.inner.stream(request, after))
                .await;
            match opened {
                Ok(stream) => Ok(stream
                    .inspect(move |item| {
                        tap.record(match item {
                            Ok(event) => frame(FrameKind::Event, event.seq, json(&event.event)),
                            Err(e) => frame(FrameKind::Error, None, e.to_string()),
                        })
                    })
                    .boxed()),
                Err(e) => {
                    tap.record(frame(FrameKind::Error, None, e.to_string()));
                    Err(e)
                }
            }
        })
    }

    #[cfg(feature = "agui")]
    fn open_agui(
        &self,
        request: A2aRequest,
        last_event_id: Option<String>,
    ) -> ClientFuture<'_, reqwest::Response> {
        self.inner.open_agui(request, last_event_id)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn bodies_are_cut_with_what_is_left_out() {
        assert_eq!(bounded_text(b"hello", 10), "hello");
        assert_eq!(bounded_text(b"hello world", 5), "hello… 6 bytes more");
        // Never inside a character.
        assert_eq!(bounded_text("ééé".as_bytes(), 3), "é… 4 bytes more");
        assert_eq!(bounded_text(b"abc", 0), "… 3 bytes more");
    }

    #[test]
    fn secrets_in_headers_are_masked() {
        use reqwest::header::{HeaderMap, HeaderValue};
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            HeaderValue::from_static("Bearer s3cr3t-token"),
        );
        headers.insert("x-api-key", HeaderValue::from_static("sb_secret"));
        headers.insert("x-custom", HeaderValue::from_static("anything"));
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        let mut out = String::new();
        write_headers(&mut out, &headers);
        for secret in ["s3cr3t", "sb_secret", "anything"] {
            assert!(!out.contains(secret), "{out}");
        }
        assert!(out.contains("authorization: Bearer ••••\n"), "{out}");
        assert!(out.contains("x-api-key: •••• (9 bytes)\n"), "{out}");
        assert!(out.contains("content-type: application/json\n"), "{out}");
        assert!(out.ends_with("\n\n"), "{out}");
    }

    #[test]
    fn a_call_shares_one_budget() {
        #[derive(Debug, Default)]
        struct Keep(std::sync::Mutex<Vec<WireFrame>>);
        impl WireTap for Keep {
            fn record(&self, frame: WireFrame) {
                self.0.lock().unwrap().push(frame);
            }
        }
        let tap = Arc::new(Keep::default());
        let recorder = WireRecorder {
            tap: tap.clone(),
            call: 1,
            operation: "SendMessage",
            left: Arc::new(AtomicUsize::new(WIRE_FRAME_BYTES + 10)),
        };
        let big = vec![b'x'; WIRE_FRAME_BYTES + 5];
        recorder.chunk(&big);
        recorder.chunk(&big);
        recorder.chunk(b"y");
        let frames = tap.0.lock().unwrap();
        assert!(frames[0].body.ends_with("… 5 bytes more"), "per frame");
        assert_eq!(
            frames[1].body,
            format!("xxxxxxxxxx… {} bytes more", WIRE_FRAME_BYTES - 5),
            "the call's last 10 bytes"
        );
        assert_eq!(frames[2].body, "… 1 bytes more", "nothing left");
        assert!(
            frames
                .iter()
                .all(|f| f.kind == FrameKind::WireChunk && f.call == 1)
        );
    }
}
