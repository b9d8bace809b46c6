//! Server-sent events, read in one pass.
//!
//! The WHATWG event-stream format: lines (ended by LF, CRLF or CR) of
//! `field: value`, an event dispatched at each blank line; `data` lines
//! join with LF, `id` sets the last event id (kept for later events), `event`
//! names the type, lines starting with `:` are comments, a leading BOM is
//! skipped. [`SseParser`] takes the body's chunks as they arrive and scans
//! every byte once: the search for a line's end resumes where the last
//! chunk's stopped, and a line is copied out only once it is complete.
//! (A parser that scans its whole buffer again on every chunk takes time
//! quadratic in an event's size: minutes for one 20 MB task snapshot.)

/// One event of the stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Event {
    /// Its `event:` type (empty: the default, `message`).
    pub event: String,
    /// Its `data:` lines, joined with LF.
    pub data: String,
    /// The last event id when it was dispatched.
    pub id: String,
}

/// Why a stream cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SseError {
    /// A line is not UTF-8.
    #[error("the event stream is not UTF-8")]
    Utf8,
}

/// The incremental parser (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// Bytes not yet consumed: the start of an unfinished line.
    buf: Vec<u8>,
    /// How far into `buf` the search for a line end has looked.
    scanned: usize,
    /// The last line ended with CR: a LF right after it ends nothing.
    after_cr: bool,
    /// The stream's start (a BOM there is skipped).
    started: bool,
    fields: Fields,
}

/// The event being read, and the last event id.
#[derive(Debug, Default)]
struct Fields {
    event: String,
    data: String,
    /// Whether `data` has a line (it may be empty text).
    has_data: bool,
    id: String,
}

impl SseParser {
    /// Feeds `chunk`, returning the events it completes.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<Vec<Event>, SseError> {
        let mut chunk = chunk;
        if !self.started && !chunk.is_empty() {
            self.started = true;
            chunk = chunk.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(chunk);
        }
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.buf[self.scanned..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            let end = self.scanned + offset;
            let terminator = self.buf[end];
            self.scanned = end + 1;
            if terminator == b'\n' && self.after_cr && end == start {
                // The LF of a CRLF whose CR ended the last line.
                self.after_cr = false;
                start = end + 1;
                continue;
            }
            self.after_cr = terminator == b'\r';
            let line = std::str::from_utf8(&self.buf[start..end]).map_err(|_| SseError::Utf8)?;
            if let Some(event) = self.fields.line(line) {
                out.push(event);
            }
            start = end + 1;
        }
        // What is left holds no line end: the next chunk's search starts after it.
        self.scanned = self.buf.len();
        if start > 0 {
            // Only whole lines are dropped: an unfinished one stays put
            // (a long line is never moved while it grows).
            self.buf.drain(..start);
            self.scanned -= start;
        }
        Ok(out)
    }
}

impl Fields {
    /// Takes one complete line; the event it dispatches, if any.
    fn line(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            return self.dispatch();
        }
        let (field, value) = match line.split_once(':') {
            Some(("", _)) => return None,
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => value.clone_into(&mut self.event),
            "id" if !value.contains('\0') => value.clone_into(&mut self.id),
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<Event> {
        let event = std::mem::take(&mut self.event);
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(Event {
            event,
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn parse_in(chunks: &[&[u8]]) -> Vec<Event> {
        let mut parser = SseParser::default();
        chunks
            .iter()
            .flat_map(|c| parser.push(c).unwrap())
            .collect()
    }

    fn ev(event: &str, data: &str, id: &str) -> Event {
        Event {
            event: event.into(),
            data: data.into(),
            id: id.into(),
        }
    }

    #[test]
    fn reads_the_format_however_it_is_cut() {
        let stream: &[u8] = b"\xEF\xBB\xBF: comment\r\nid: 1\r\ndata: a\r\ndata:b\r\n\r\n\
            event: error\rdata: {\"x\": 1}\r\rdata\n\nid: 3\nretry: 10\ndata:  two spaces\n\n\
            id\nevent: empty\n\ndata: unterminated";
        let expected = vec![
            ev("", "a\nb", "1"),
            ev("error", "{\"x\": 1}", "1"),
            ev("", "", "1"),
            ev("", " two spaces", "3"),
        ];
        assert_eq!(parse_in(&[stream]), expected);
        // Every cut point, and byte by byte: the same events.
        for cut in 0..stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(parse_in(&[a, b]), expected, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(parse_in(&bytes), expected);
    }

    #[test]
    fn a_huge_event_in_small_chunks_is_read_whole() {
        let data = "x".repeat(3 << 20);
        let frame = format!("id: 7\ndata: {data}\n\n");
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        for chunk in frame.as_bytes().chunks(8 << 10) {
            events.extend(parser.push(chunk).unwrap());
        }
        assert_eq!(events, vec![ev("", &data, "7")]);
        assert!(parser.buf.is_empty());
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error() {
        let mut parser = SseParser::default();
        assert_eq!(parser.push(b"data: \xff\n\n"), Err(SseError::Utf8));
    }
}
