//! The event stream of a streamed chat completion, read line by line with
//! bounds: `data: {json}` lines carry chunks, `data: [DONE]` ends the
//! answer, everything else (comments, `event:`, `id:`, blank lines) is
//! skipped. Lines longer than the limit and streams larger than the limit
//! are errors, never buffered.

use super::LlmError;

/// One meaningful line.
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    /// A `data:` payload other than `[DONE]`.
    Data(String),
    /// `data: [DONE]`.
    Done,
}

/// Splits the bytes of a stream into [`Line`]s.
#[derive(Debug)]
pub(crate) struct Lines {
    buf: Vec<u8>,
    total: usize,
    max_line: usize,
    max_total: usize,
}

impl Lines {
    pub(crate) fn new(max_line: usize, max_total: usize) -> Self {
        Lines {
            buf: Vec::new(),
            total: 0,
            max_line,
            max_total,
        }
    }

    /// Feeds one network chunk; returns the complete lines it finished.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Line>, LlmError> {
        self.total += chunk.len();
        if self.total > self.max_total {
            return Err(LlmError::TooLarge(self.max_total));
        }
        let mut out = Vec::new();
        let mut rest = chunk;
        while let Some(at) = rest.iter().position(|b| *b == b'\n') {
            self.push(&rest[..at])?;
            let line = std::mem::take(&mut self.buf);
            if let Some(line) = parse(&line) {
                out.push(line);
            }
            rest = &rest[at + 1..];
        }
        self.push(rest)?;
        Ok(out)
    }

    /// What is left when the stream ends (a last line without `\n`).
    pub(crate) fn finish(&mut self) -> Option<Line> {
        let line = std::mem::take(&mut self.buf);
        parse(&line)
    }

    fn push(&mut self, bytes: &[u8]) -> Result<(), LlmError> {
        if self.buf.len() + bytes.len() > self.max_line {
            return Err(LlmError::LineTooLong(self.max_line));
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }
}

fn parse(line: &[u8]) -> Option<Line> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let payload = line.strip_prefix(b"data:")?;
    let payload = payload.strip_prefix(b" ").unwrap_or(payload);
    let text = String::from_utf8_lossy(payload);
    let text = text.trim();
    if text == "[DONE]" {
        Some(Line::Done)
    } else if text.is_empty() {
        None
    } else {
        Some(Line::Data(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lines_split_across_chunks_and_bounded() {
        let mut lines = Lines::new(64, 1024);
        assert_eq!(lines.feed(b": ping\r\n\r\ndata: {\"a\"").unwrap(), vec![]);
        assert_eq!(
            lines.feed(b":1}\r\n\r\ndata: [DONE]\n").unwrap(),
            vec![Line::Data("{\"a\":1}".into()), Line::Done]
        );
        assert!(matches!(
            Lines::new(8, 1024).feed(b"data: 0123456789"),
            Err(LlmError::LineTooLong(8))
        ));
        assert!(matches!(
            Lines::new(8, 4).feed(b"data:\n"),
            Err(LlmError::TooLarge(4))
        ));
    }
}
