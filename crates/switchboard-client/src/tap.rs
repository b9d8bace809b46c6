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

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
}

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
}

impl FrameKind {
    /// `request`, `response`, `event` or `error`.
    pub fn label(self) -> &'static str {
        match self {
            FrameKind::Request => "request",
            FrameKind::Response => "response",
            FrameKind::Event => "event",
            FrameKind::Error => "error",
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
    /// [`FrameKind::Error`]).
    pub body: String,
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
            let answer = self.inner.call(request).await;
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
            match self.inner.stream(request, after).await {
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
