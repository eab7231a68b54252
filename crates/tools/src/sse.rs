//! Server-sent events, read one way wherever agent-loop reads them: the HTTP backends'
//! streamed replies and MCP's Streamable HTTP. The parser is sse-stream, the one rmcp reads
//! MCP's streams with, so the binary holds one. It fails a whole stream on lines the SSE
//! specification says to pass over, so [`EventLines`] hands it whole lines without those,
//! and caps each event's size on the way: a server that never ends an event costs a bounded
//! amount of memory.

use futures_util::{Stream, StreamExt, TryStreamExt};
pub use sse_stream::Sse;

/// An event stream's lines on their way to sse-stream: whole lines, each event within its cap,
/// and only what that parser takes. It fails a whole stream on a line the SSE specification
/// says to pass over (an unknown field, a non-numeric `retry`) and on a second `event`, `id` or
/// `retry` line in one event, so those lines, and comments, are passed over here (of repeated
/// fields the first is kept, where the specification keeps the last: no server seen sends
/// two); a field without a colon (`data`) gets one.
#[derive(Default)]
pub struct EventLines {
    /// The line so far.
    line: Vec<u8>,
    /// Bytes of the event so far.
    event: usize,
    /// The last byte was a `\r` (a `\r\n` is one line end).
    after_cr: bool,
    /// A line has ended (a byte order mark can only start the first).
    started: bool,
    /// The event so far has an `event`, an `id`, a `retry` line.
    seen: [bool; 3],
}

impl EventLines {
    /// Takes `chunk`, adding the whole lines it ends to `out`; false once an event has passed
    /// `cap`.
    pub fn feed(&mut self, chunk: &[u8], cap: usize, out: &mut Vec<u8>) -> bool {
        for &byte in chunk {
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            if byte == b'\n' || byte == b'\r' {
                self.after_cr = byte == b'\r';
                self.end_line(out);
                continue;
            }
            self.line.push(byte);
            self.event += 1;
            if self.event > cap {
                return false;
            }
        }
        true
    }

    fn end_line(&mut self, out: &mut Vec<u8>) {
        let mut line = &self.line[..];
        if !std::mem::replace(&mut self.started, true) {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            // The end of an event.
            self.event = 0;
            self.seen = [false; 3];
            out.push(b'\n');
        } else {
            let colon = memchr::memchr(b':', line);
            let name = &line[..colon.unwrap_or(line.len())];
            let value = colon.map_or(&b""[..], |c| &line[c + 1..]);
            let value = value.strip_prefix(b" ").unwrap_or(value);
            let once = |seen: &mut bool| !std::mem::replace(seen, true);
            let kept = match name {
                b"data" => true,
                b"event" => once(&mut self.seen[0]),
                b"id" => once(&mut self.seen[1]),
                b"retry" => {
                    !value.is_empty()
                        && value.iter().all(u8::is_ascii_digit)
                        && once(&mut self.seen[2])
                }
                _ => false,
            };
            if kept {
                out.extend_from_slice(name);
                out.extend_from_slice(b": ");
                out.extend_from_slice(value);
                out.push(b'\n');
            }
        }
        self.line.clear();
    }
}

/// Why an event stream ended before its end.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// The body broke off (the connection, the HTTP client): its error.
    #[error("{0}")]
    Body(Box<dyn std::error::Error + Send + Sync>),
    /// One event passed `cap` bytes.
    #[error("an event passed {cap} bytes, the cap on one event")]
    TooLong { cap: usize },
    /// A line the parser cannot read (not UTF-8).
    #[error("the event stream is malformed: {0}")]
    Malformed(sse_stream::Error),
}

/// The events of `body` with data (the specification dispatches no other), as `(type, data)`
/// with the type `message` when the event names none; an event longer than `cap` bytes, a
/// broken body or a line that is not UTF-8 ends the stream with an error saying which.
pub fn events<B, E>(
    body: impl Stream<Item = Result<B, E>>,
    cap: usize,
) -> impl Stream<Item = Result<(String, String), SseError>>
where
    B: AsRef<[u8]>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut lines = EventLines::default();
    let filtered = body.map(move |chunk| {
        let chunk = chunk.map_err(|e| SseError::Body(e.into()))?;
        let mut out = Vec::new();
        if !lines.feed(chunk.as_ref(), cap, &mut out) {
            return Err(SseError::TooLong { cap });
        }
        Ok(bytes::Bytes::from(out))
    });
    sse_stream::SseStream::from_bytes_stream(filtered)
        .map_err(|e| match e {
            // The errors of `filtered`, above, come back boxed.
            sse_stream::Error::Body(e) => match e.downcast::<SseError>() {
                Ok(own) => *own,
                Err(other) => SseError::Body(other),
            },
            other => SseError::Malformed(other),
        })
        .try_filter_map(|sse| async move {
            Ok(sse.data.map(|data| {
                let kind = sse.event.unwrap_or_else(|| "message".to_string());
                (kind, data)
            }))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    #[test]
    fn events_are_measured_between_blank_lines() {
        let mut lines = EventLines::default();
        let mut out = Vec::new();
        assert!(lines.feed(b"data: 1234\n\n", 12, &mut out));
        assert!(lines.feed(b"data: 123", 12, &mut out));
        assert!(lines.feed(b"4\r\n\r\ndata: ", 12, &mut out));
        assert!(!lines.feed(b"1234567", 12, &mut out));
        assert_eq!(out, b"data: 1234\n\ndata: 1234\n\n");
        // A line end split across chunks is one line end, not a blank line.
        let mut lines = EventLines::default();
        assert!(lines.feed(b"data: 12\r", 12, &mut out));
        assert!(lines.feed(b"\ndata", 12, &mut out));
        assert!(!lines.feed(b": 12", 12, &mut out));
    }

    #[test]
    fn lines_the_parser_would_refuse_are_passed_over() {
        let mut lines = EventLines::default();
        let mut out = Vec::new();
        let stream =
            b"\xEF\xBB\xBF: hello\nfoo: bar\ndata\nretry: soon\nretry: 10\nid:e1\nid: e2\nretry: 5\n\n";
        assert!(lines.feed(stream, 100, &mut out));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "data: \nretry: 10\nid: e1\n\n"
        );
    }

    fn all(body: &[&[u8]], cap: usize) -> Vec<Result<(String, String), SseError>> {
        let chunks = body.iter().map(|c| Ok::<_, std::io::Error>(c.to_vec()));
        events(futures_util::stream::iter(chunks), cap)
            .collect::<Vec<_>>()
            .now_or_never()
            .expect("every chunk is ready")
    }

    #[test]
    fn events_with_data_come_out_named() {
        let got = all(
            &[
                b"event: a\nevent: b\ndata: 1\n",
                b"data: 2\n\nid: 7\n\ndata: x\n\n",
            ],
            100,
        );
        let got: Vec<(String, String)> = got.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            got,
            [
                ("a".to_string(), "1\n2".to_string()),
                ("message".to_string(), "x".to_string())
            ]
        );
        let over = all(&[b"data: 0123456789\n\n"], 8);
        assert!(
            matches!(over[..], [Err(SseError::TooLong { cap: 8 })]),
            "{over:?}"
        );
        assert_eq!(
            over[0].as_ref().unwrap_err().to_string(),
            "an event passed 8 bytes, the cap on one event"
        );
    }
}
