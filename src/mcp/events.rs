//! The event streams of Streamable HTTP servers, read as the HTML standard's EventSource
//! reads them: lines end in CR LF, LF or CR; `data` lines are joined; `id` sets the last
//! event id when the event ends, even an event with no data (the points MCP's polling streams
//! are resumed from); `retry` sets the time to wait before resuming; a byte order mark at the
//! start of a stream, comments, unknown fields and the event type are ignored. One departure,
//! on purpose: a resumed stream starts from the last id received, not from none, so an event
//! without an id on it does not lose the point to resume from. A line and an event are
//! capped at 16 MiB, so a stream that never ends a line cannot take all memory. Hand-written
//! because neither SSE crate at hand reads all
//! of that: eventsource-stream (the HTTP backends') never reports an event that is only an id,
//! and sse-stream fails the whole stream on an unknown field or a line without a colon, which
//! the standard says to accept.

use std::time::Duration;

/// The most a line, or an event's data, may hold.
const MAX_EVENT: usize = 16 << 20;
const BOM: &[u8] = b"\xef\xbb\xbf";

/// The state of one server's event streams: what the current event has gathered, and what
/// outlives a stream (the last event id, the retry time).
#[derive(Default)]
pub struct Events {
    line: Vec<u8>,
    /// The last chunk ended in CR: a LF that opens the next one ends no second line.
    after_cr: bool,
    /// No line of this stream has ended yet (it may open with a byte order mark).
    started: bool,
    data: Option<String>,
    id: String,
    /// The id of the last event that ended: where a new stream resumes from.
    pub last_id: String,
    /// The time the server asked to wait before a stream is resumed.
    pub retry: Option<Duration>,
}

impl Events {
    /// Forgets what a stream that ended had begun of an event (its last id stays).
    pub fn new_stream(&mut self) {
        self.line.clear();
        self.after_cr = false;
        self.started = false;
        self.data = None;
        // Not the id of an event cut off with the stream before it ended.
        self.id.clone_from(&self.last_id);
    }

    /// The data of each event that `chunk` ends, or why the stream cannot be read on.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<String>, String> {
        let mut ended = Vec::new();
        for &byte in chunk {
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            if byte == b'\r' || byte == b'\n' {
                self.after_cr = byte == b'\r';
                let mut line = std::mem::take(&mut self.line);
                if !std::mem::replace(&mut self.started, true) && line.starts_with(BOM) {
                    line.drain(..BOM.len());
                }
                ended.extend(self.line_ended(&line));
            } else {
                self.line.push(byte);
            }
            let held = self.line.len() + self.data.as_ref().map_or(0, String::len);
            if held > MAX_EVENT {
                return Err(format!(
                    "an event of its stream is over {} MiB",
                    MAX_EVENT >> 20
                ));
            }
        }
        Ok(ended)
    }

    fn line_ended(&mut self, line: &[u8]) -> Option<String> {
        if line.is_empty() {
            self.last_id.clone_from(&self.id);
            let mut data = self.data.take()?;
            data.pop();
            return Some(data);
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return None,
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"data" => {
                let data = self.data.get_or_insert_with(String::new);
                data.push_str(&value);
                data.push('\n');
            }
            b"id" if !value.contains('\0') => self.id = value.into_owned(),
            b"retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                let ms = value.parse().unwrap_or(u64::MAX);
                self.retry = Some(Duration::from_millis(ms));
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_ids_and_retry_in_any_chunking() {
        let stream = b": hello\r\nid: e1\r\nretry: 10\r\n\r\nevent: message\nfoo: bar\ndata: {\"a\":\ndata: 1}\n\ndata\n\nid: e2\rdata: two\r\r";
        for size in [1, 2, 3, 7, stream.len()] {
            let mut events = Events::default();
            let mut got = Vec::new();
            let mut ids = Vec::new();
            for chunk in stream.chunks(size) {
                for data in events.feed(chunk).unwrap() {
                    ids.push(events.last_id.clone());
                    got.push(data);
                }
            }
            assert_eq!(got, ["{\"a\":\n1}", "", "two"], "chunks of {size}");
            if size == 1 {
                // An event that is only an id gives no data, but its id is the last one.
                assert_eq!(ids, ["e1", "e1", "e2"]);
            }
            assert_eq!(events.last_id, "e2");
            assert_eq!(events.retry, Some(Duration::from_millis(10)));
        }
    }

    #[test]
    fn an_event_cut_off_by_the_end_of_a_stream_is_dropped() {
        let mut events = Events::default();
        assert!(events
            .feed(b"id: a\n\nid: b\ndata: half")
            .unwrap()
            .is_empty());
        assert_eq!(events.last_id, "a");
        // The next stream opens with a byte order mark, and its event has no id: the point
        // to resume from stays a, not the cut-off event's b.
        events.new_stream();
        assert_eq!(
            events.feed(b"\xef\xbb\xbfdata: whole\n\n").unwrap(),
            ["whole"]
        );
        assert_eq!(events.last_id, "a");
    }

    #[test]
    fn a_retry_too_large_and_a_line_that_never_ends() {
        let mut events = Events::default();
        events.feed(b"retry: 99999999999999999999999\n").unwrap();
        assert_eq!(events.retry, Some(Duration::from_millis(u64::MAX)));
        let chunk = vec![b'x'; 1 << 20];
        let mut fed = Ok(Vec::new());
        for _ in 0..17 {
            fed = events.feed(&chunk);
        }
        assert_eq!(
            fed,
            Err("an event of its stream is over 16 MiB".to_string())
        );
    }
}
