//! The SSE encoding of AG-UI events, and the choice between it and protobuf.
//!
//! Each event is one frame, `data: <json>\n\n`, with LF line ends only: the
//! official client splits frames on `\n\n` and nothing else, so a CRLF
//! framed stream fails there. An optional `id:` line before the data line
//! lets a stream be resumed (`Last-Event-ID`); the official client ignores
//! it, which is harmless.
//!
//! Which encoding a response uses comes from the request's `Accept` header
//! ([`Encoding::negotiate`]): protobuf only when
//! `application/vnd.ag-ui.event+proto` is named explicitly with a non-zero
//! quality. The official encoder also picks protobuf for `*/*`, but curl and
//! browsers send that, and they want text.

use crate::convert::ResumePoint;
use crate::events::Event;

/// The media type of the SSE encoding.
pub const SSE_MEDIA_TYPE: &str = "text/event-stream";
/// The media type of the protobuf encoding.
pub const PROTO_MEDIA_TYPE: &str = "application/vnd.ag-ui.event+proto";

/// How a response encodes its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `text/event-stream`, one JSON event per frame.
    Sse,
    /// `application/vnd.ag-ui.event+proto`, length-prefixed protobuf frames.
    Protobuf,
}

impl Encoding {
    /// Picks the encoding for an `Accept` header: protobuf only when its
    /// media type is listed by name with `q` above 0, SSE otherwise.
    pub fn negotiate(accept: Option<&str>) -> Encoding {
        let Some(accept) = accept else {
            return Encoding::Sse;
        };
        let wants_proto = accept.split(',').any(|range| {
            let mut params = range.split(';');
            let media = params.next().unwrap_or("").trim();
            if !media.eq_ignore_ascii_case(PROTO_MEDIA_TYPE) {
                return false;
            }
            let q = params
                .filter_map(|p| p.trim().strip_prefix("q="))
                .filter_map(|q| q.trim().parse::<f32>().ok())
                .next()
                .unwrap_or(1.0);
            q > 0.0
        });
        if wants_proto {
            Encoding::Protobuf
        } else {
            Encoding::Sse
        }
    }

    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Sse => SSE_MEDIA_TYPE,
            Encoding::Protobuf => PROTO_MEDIA_TYPE,
        }
    }
}

/// Appends one SSE frame for `event` to `out`: an `id:` line when `id` is
/// given, then `data: <json>` and a blank line.
pub fn write_sse_frame(out: &mut Vec<u8>, id: Option<&str>, event: &Event) {
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        // An id with a line break would end the field early; ours never have one.
        out.extend(id.bytes().filter(|b| *b != b'\n' && *b != b'\r'));
        out.push(b'\n');
    }
    write_data(out, event);
}

/// [`write_sse_frame`] for an event of the converter's
/// ([`crate::Converter::convert_logged_events`]): its id is written
/// straight from the numbers, never formatted into a string first.
pub fn write_sse_event(out: &mut Vec<u8>, id: Option<ResumePoint>, event: &Event) {
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        push_decimal(out, id.seq);
        if let Some(i) = id.index {
            out.push(b'.');
            push_decimal(out, i.into());
        }
        out.push(b'\n');
    }
    write_data(out, event);
}

/// The `data:` line of `event` and the blank line that ends its frame.
fn write_data(out: &mut Vec<u8>, event: &Event) {
    out.extend_from_slice(b"data: ");
    // Serializing our own types into a Vec cannot fail: every map key is a string.
    if serde_json::to_writer(&mut *out, event).is_err() {
        out.extend_from_slice(b"{}");
    }
    out.extend_from_slice(b"\n\n");
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// One SSE frame for `event`, as text.
pub fn sse_frame(id: Option<&str>, event: &Event) -> String {
    let mut out = Vec::with_capacity(128);
    write_sse_frame(&mut out, id, event);
    String::from_utf8_lossy(&out).into_owned()
}

/// Why an SSE frame could not be read as an AG-UI event.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// The frame's data is not an AG-UI event.
    #[error("invalid AG-UI event in SSE frame: {0}")]
    InvalidEvent(#[from] serde_json::Error),
    /// The stream is not UTF-8.
    #[error("the SSE stream is not UTF-8")]
    NotUtf8,
    /// A frame grew past the limit without ending.
    #[error("an SSE frame exceeds {0} bytes")]
    FrameTooLarge(usize),
}

/// A frame read back: its `id:` (if any) and its event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// The frame's `id:` field.
    pub id: Option<String>,
    /// The event.
    pub event: Event,
}

/// Reads AG-UI events out of an SSE byte stream, the way the official
/// client does: frames end at a blank line, `data:` lines are joined with
/// `\n`, comments and other fields are ignored, and a frame with no data
/// yields nothing (keep-alives).
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    /// How far into `buf` the search for a frame's end has looked: each
    /// byte is scanned once, however many chunks a frame comes in.
    scanned: usize,
}

/// The largest frame the decoder buffers (the official client's limit).
pub const MAX_SSE_FRAME: usize = 10 * 1024 * 1024;

impl SseDecoder {
    /// An empty decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events of every frame they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        // A blank line may straddle chunks: look again from the byte before.
        let mut from = self.scanned.saturating_sub(1).max(start);
        while let Some(at) = find_blank_line(&self.buf[from..]) {
            let end = from + at;
            if let Some(ev) = parse_frame(&self.buf[start..end])? {
                out.push(ev);
            }
            start = end + 2;
            from = start;
        }
        self.scanned = self.buf.len();
        if start > 0 {
            // Whole frames only: an unfinished one is not moved while it grows.
            self.buf.drain(..start);
            self.scanned -= start;
        }
        if self.buf.len() > MAX_SSE_FRAME {
            return Err(SseError::FrameTooLarge(MAX_SSE_FRAME));
        }
        Ok(out)
    }

    /// `true` when no partial frame is buffered (a clean end of stream).
    pub fn is_idle(&self) -> bool {
        self.buf.iter().all(|b| b.is_ascii_whitespace())
    }
}

fn find_blank_line(buf: &[u8]) -> Option<usize> {
    buf.windows(2).position(|w| w == b"\n\n")
}

fn parse_frame(frame: &[u8]) -> Result<Option<SseEvent>, SseError> {
    let text = std::str::from_utf8(frame).map_err(|_| SseError::NotUtf8)?;
    let mut data: Option<String> = None;
    let mut id = None;
    for line in text.split('\n') {
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_owned()),
            },
            "id" => id = Some(value.to_owned()),
            _ => {}
        }
    }
    match data {
        None => Ok(None),
        Some(d) => Ok(Some(SseEvent {
            id,
            event: serde_json::from_str(&d)?,
        })),
    }
}
