//! AG-UI on the A2A streaming endpoints (feature `agui`, on by default).
//!
//! UIs built on AG-UI want typed events, not A2A frames. Any
//! `SendStreamingMessage` or `SubscribeToTask` of A2A 1.0, on JSON-RPC and
//! on REST, answers with AG-UI events instead when the request opts in:
//!
//! | Request | Answer |
//! |---|---|
//! | `Accept: application/x-agui-events` or `?format=agui` | AG-UI 1.0, SSE (`data: <json>`) |
//! | `Accept: application/vnd.ag-ui.event+proto` (named, `q` > 0) | AG-UI 1.0, length-prefixed protobuf |
//! | `?format=agui-hector` | Hector's vocabulary (`event: message_start`, …), SSE; see [`switchboard_agui::hector`] |
//!
//! A plain `Accept: text/event-stream` (or `*/*`) keeps the A2A frames:
//! A2A clients never see AG-UI unless they ask for it.
//!
//! The binding negotiates once, in its preamble ([`opt_in`]); everything
//! up to the first event is the binding's ordinary A2A error handling.
//! Then [`response`] maps the engine's stream through the one converter
//! ([`switchboard_agui::convert`]) and the server's SSE writer
//! ([`crate::sse::sse_encoded_response`]: the frames of each A2A event are
//! serialized straight into one buffer; Hector's through
//! [`crate::sse::sse_response`]).
//!
//! ## One task, one story
//! An AG-UI stream of a task is always the conversion of the task's whole
//! log, from event 1: on `SendStreamingMessage` and `SubscribeToTask` the
//! engine's stream is used as it is when it starts at event 1 (a new task),
//! else it only tells which task it is, and the log is replayed from the
//! start and followed live (`RequestHandler::resubscribe_to_task` after 0),
//! with no gap and no duplicate. So a UI that subscribes to a
//! task half-way still gets the run from `RUN_STARTED` on, and the same
//! task converts to the same events every time.
//!
//! ## Resuming
//! Each frame's SSE `id:` is `<seq>.<i>` (event `i` of those converted from
//! the A2A event `seq`), or `<seq>` for the last one of them. A client that
//! reconnects to `SubscribeToTask` with `Last-Event-ID: <seq>.<i>` gets
//! exactly what followed event `i`; with `<seq>`, what followed all of
//! them. Since the converter's ids and state come from the log alone, the
//! pieces of an interrupted stream put together are the uninterrupted
//! stream. A `Last-Event-ID` that is neither form is the binding's
//! invalid-params error. A resumed stream (AG-UI 1.0, SSE or protobuf)
//! that would start after the run's `RUN_STARTED` starts with that event
//! again, id-less, so an AG-UI client can consume it as a run; put
//! together with what came before, it is the one duplicate to drop.

use std::convert::Infallible;
use std::future::ready;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures::{Stream, StreamExt, stream};
use http::{HeaderMap, HeaderValue, header};
use switchboard_agui::proto::write_frame;
use switchboard_agui::sse::{PROTO_MEDIA_TYPE, write_sse_event};
use switchboard_agui::{
    Converter, ConverterOptions, Encoding, Event, EventKind, HectorTranslator, ResumePoint,
};
use switchboard_core::{CallContext, EventStream, RequestHandler};
use switchboard_protocol::{A2AError, Operation, SubscribeToTaskRequest};

use crate::sse::{SseFrame, add_headers, sse_encoded_response, sse_response};

/// Hector's media type for its opt-in; switchboard answers it with AG-UI 1.0.
pub const AGUI_MEDIA_TYPE: &str = "application/x-agui-events";

/// The `format` query value of AG-UI 1.0.
const FORMAT_AGUI: &str = "agui";
/// The `format` query value of Hector's vocabulary.
const FORMAT_HECTOR: &str = "agui-hector";

/// What the client gets instead of A2A frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vocabulary {
    /// AG-UI 1.0 in the encoding negotiated from `Accept`.
    Official(Encoding),
    /// Hector's named events, as SSE.
    Hector,
}

/// A request that opted in to AG-UI.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AguiRequest {
    vocabulary: Vocabulary,
    resume: Option<ResumePoint>,
}

impl AguiRequest {
    /// The A2A event the engine's resume starts after (and checks exists).
    /// A client that has only some of event `seq`'s AG-UI events still
    /// needs the rest, so that resumes after `seq - 1`: the engine answers
    /// a resume after the last event of a finished task with nothing.
    pub(crate) fn resume_after(&self) -> Option<u64> {
        self.resume.map(|p| match p.index {
            Some(_) => p.seq.saturating_sub(1),
            None => p.seq,
        })
    }
}

/// Reads the opt-in from a request head: `None` when it did not ask for
/// AG-UI (or `op` is not one of the two streaming operations of 1.0);
/// invalid params when it did and its `Last-Event-ID` is not ours.
pub(crate) fn opt_in(
    headers: &HeaderMap,
    query: Option<&str>,
    op: Option<Operation>,
) -> Result<Option<AguiRequest>, A2AError> {
    if !matches!(
        op,
        Some(Operation::SendStreamingMessage | Operation::SubscribeToTask)
    ) {
        return Ok(None);
    }
    let Some(vocabulary) = vocabulary(headers, query) else {
        return Ok(None);
    };
    let resume = match headers.get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| ResumePoint::parse(s).ok())
                .ok_or_else(|| {
                    A2AError::invalid_field(
                        "Last-Event-ID",
                        "must be an AG-UI event id this server sent (<seq> or <seq>.<index>)",
                    )
                })?,
        ),
    };
    Ok(Some(AguiRequest { vocabulary, resume }))
}

fn vocabulary(headers: &HeaderMap, query: Option<&str>) -> Option<Vocabulary> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let format = query.and_then(|q| {
        // The last `format` wins, as in most query parsers.
        q.rsplit('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == "format")
            .map(|(_, v)| v)
    });
    match format {
        Some(FORMAT_HECTOR) => return Some(Vocabulary::Hector),
        Some(FORMAT_AGUI) => return Some(Vocabulary::Official(Encoding::negotiate(accept))),
        _ => {}
    }
    let accept = accept?;
    let encoding = Encoding::negotiate(Some(accept));
    let names_agui = accept.split(',').any(|range| {
        range
            .split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case(AGUI_MEDIA_TYPE))
    });
    (names_agui || encoding == Encoding::Protobuf).then_some(Vocabulary::Official(encoding))
}

/// The answer to an opted-in stream: `stream` (the engine's answer to the
/// request) names the task; its whole log goes out as AG-UI.
pub(crate) fn response(
    handler: RequestHandler,
    call: CallContext,
    stream: EventStream,
    agui: AguiRequest,
    extra: &[(&'static str, String)],
) -> Response {
    let items = stream::once(whole_log(handler, call, stream)).flatten();
    let batches = until_run_ends(converted(items, agui.resume));
    match agui.vocabulary {
        Vocabulary::Official(Encoding::Sse) => {
            // One buffer per A2A event, every frame serialized straight into it.
            let chunks = batches.filter_map(|batch| {
                let mut out = Vec::with_capacity(batch.unsent_count() * FRAME_SIZE_GUESS);
                if let Some(started) = &batch.preface {
                    write_sse_event(&mut out, None, started);
                }
                for (id, event) in batch.unsent() {
                    write_sse_event(&mut out, id, event);
                }
                ready((!out.is_empty()).then(|| Bytes::from(out)))
            });
            sse_encoded_response(chunks, extra)
        }
        Vocabulary::Official(Encoding::Protobuf) => {
            let bytes = batches.filter_map(|batch| {
                let mut out = Vec::with_capacity(batch.unsent_count() * FRAME_SIZE_GUESS);
                for event in batch.preface.iter().chain(batch.unsent().map(|(_, e)| e)) {
                    if let Err(e) = write_frame(&mut out, event) {
                        tracing::warn!(error = %e, "an AG-UI event has no protobuf form; left out");
                    }
                }
                ready((!out.is_empty()).then(|| Ok::<_, Infallible>(Bytes::from(out))))
            });
            let mut resp = Response::new(Body::from_stream(bytes));
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(PROTO_MEDIA_TYPE),
            );
            add_headers(&mut resp, extra);
            resp
        }
        Vocabulary::Hector => {
            let mut translator = HectorTranslator::new();
            let frames = batches
                .flat_map(|batch| {
                    let ids: Vec<_> = (0..batch.events.len()).map(|i| batch.id(i)).collect();
                    let delivered = batch.delivered;
                    let events = batch.events.into_iter().zip(ids).enumerate();
                    stream::iter(events.map(move |(i, (event, id))| (event, id, i < delivered)))
                })
                .flat_map(move |(event, id, seen)| {
                    // The translator sees every event, delivered before or not:
                    // it keeps tool calls' arguments across them.
                    let events = translator.translate(&event);
                    let n = events.len();
                    let out: Vec<SseFrame> = if seen {
                        Vec::new()
                    } else {
                        events
                            .into_iter()
                            .enumerate()
                            .map(|(i, e)| SseFrame {
                                // Resuming is by AG-UI event: the id goes on the
                                // last Hector event made from it.
                                id: id.filter(|_| i + 1 == n).map(|id| id.to_string()),
                                event: Some(e.name),
                                data: e.data.to_string(),
                            })
                            .collect()
                    };
                    stream::iter(out)
                });
            sse_response(frames, extra)
        }
    }
}

/// The task's log from event 1, followed live; a direct message reply (no
/// task, no log) as it is.
///
/// A stream whose first item is event 1 already is that: a new task's
/// `SendStreamingMessage` (and a subscription to a task that has only its
/// first event) starts with the task snapshot taken at event 1, which is
/// what event 1 logged (the task as created; only its history may be
/// trimmed, and the converter does not read the history), then follows the
/// log live; a resume after 0 replays the log from event 1. Only a stream
/// that starts later is replaced by a replay from the start, which costs a
/// second subscription and a read of the log.
async fn whole_log(
    handler: RequestHandler,
    call: CallContext,
    mut stream: EventStream,
) -> EventStream {
    let first = match stream.next().await {
        None => return Box::pin(stream::empty()),
        Some(first) => first,
    };
    let task_id = match &first {
        Ok(ev) if ev.seq > 1 => ev.event.task_id().map(str::to_owned),
        _ => None,
    };
    let Some(id) = task_id else {
        return Box::pin(stream::once(ready(first)).chain(stream));
    };
    drop(stream);
    let tenant = (!call.tenant.is_empty()).then(|| call.tenant.clone());
    let request = SubscribeToTaskRequest { tenant, id };
    match handler.resubscribe_to_task(&call, request, 0).await {
        Ok(log) => log,
        Err(e) => Box::pin(stream::once(ready(Err(e)))),
    }
}

/// What one frame of a batch takes, roughly (most AG-UI frames here are
/// 100-200 bytes): a buffer this size per frame rarely grows.
const FRAME_SIZE_GUESS: usize = 192;

/// The AG-UI events converted from one A2A event, each one frame.
struct Batch {
    /// The A2A event's log position; `None` for what has none (a direct
    /// message reply, the `RUN_ERROR` of a broken stream): no frame ids.
    seq: Option<u64>,
    events: Vec<Event>,
    /// How many events the A2A event converted to: the frame ids number
    /// them among all, also when the run's end cut the batch short.
    converted: usize,
    /// How many of the first frames the client had before it resumed: a
    /// resume point covers a prefix of each A2A event's frames.
    delivered: usize,
    /// The run's `RUN_STARTED` again, before the first frame of a resumed
    /// stream that does not start with it (see [`converted`]); no id.
    preface: Option<Event>,
}

impl Batch {
    /// The SSE id of frame `i`.
    fn id(&self, i: usize) -> Option<ResumePoint> {
        self.seq
            .map(|seq| ResumePoint::of_event(seq, i, self.converted))
    }

    /// How many frames the client has yet to get.
    fn unsent_count(&self) -> usize {
        self.events.len().saturating_sub(self.delivered)
    }

    /// The frames the client has yet to get: id and event.
    fn unsent(&self) -> impl Iterator<Item = (Option<ResumePoint>, &Event)> {
        let events = self.events.iter().enumerate().skip(self.delivered);
        events.map(|(i, event)| (self.id(i), event))
    }
}

/// `batches` up to and including the frame that ends the run (RUN_FINISHED,
/// also with an interrupt outcome, or RUN_ERROR). The task's log goes on
/// after an interrupt (input-required is not terminal), but this run is
/// over: the client answers with a new run, so the stream must end here
/// instead of waiting for events that belong to the next one.
fn until_run_ends(
    batches: impl Stream<Item = Batch> + Send + 'static,
) -> impl Stream<Item = Batch> + Send + 'static {
    stream::unfold(
        (Box::pin(batches), false),
        |(mut batches, over)| async move {
            if over {
                return None;
            }
            let mut batch = batches.next().await?;
            let end = batch.events.iter().position(|event| {
                matches!(
                    event.kind,
                    EventKind::RunFinished(_) | EventKind::RunError(_)
                )
            });
            if let Some(i) = end {
                batch.events.truncate(i + 1);
            }
            Some((batch, (batches, end.is_some())))
        },
    )
}

/// Every converted event, one batch per A2A event. An error in the stream
/// ends the run with `RUN_ERROR`; a stream that just stops (the server
/// shutting down) ends without one, so the client can resume.
///
/// A resumed stream opens with the run's `RUN_STARTED` once more, without
/// an id (it is no new event of the log, and a `Last-Event-ID` taken from
/// what follows is unaffected): AG-UI clients take every stream for a run
/// and refuse one whose first event is not `RUN_STARTED`. A client that
/// puts the pieces of a stream together drops it.
fn converted(
    items: impl Stream<Item = Result<switchboard_core::LoggedEvent, A2AError>> + Send + 'static,
    resume: Option<ResumePoint>,
) -> impl Stream<Item = Batch> + Send + 'static {
    let mut converter = Converter::new(ConverterOptions::default());
    // While resuming: the run's RUN_STARTED, until the first frame goes out.
    let mut started: Option<Event> = None;
    let mut resuming = resume.is_some();
    items.map(move |item| match item {
        Ok(ev) => {
            // The converter's events straight: their ids are written as they go out.
            let events = converter.convert_logged_events(&ev);
            let seq = (ev.seq > 0).then_some(ev.seq);
            let delivered = match (resume, seq) {
                (Some(r), Some(seq)) => (0..events.len())
                    .take_while(|&i| r.covers(seq, i as u32))
                    .count(),
                _ => 0,
            };
            let mut preface = None;
            if resuming {
                if let Some(event) = events[..delivered]
                    .iter()
                    .find(|e| matches!(e.kind, EventKind::RunStarted(_)))
                {
                    started = Some(event.clone());
                }
                if delivered < events.len() {
                    resuming = false;
                    preface = started.take();
                }
            }
            Batch {
                seq,
                converted: events.len(),
                events,
                delivered,
                preface,
            }
        }
        Err(e) => {
            let frames = converter.fail(&e.to_string(), &format!("a2a:{}", e.reason()));
            let events: Vec<Event> = frames.into_iter().map(|frame| frame.event).collect();
            Batch {
                seq: None,
                converted: events.len(),
                events,
                delivered: 0,
                preface: None,
            }
        }
    })
}
