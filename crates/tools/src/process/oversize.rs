//! A JSON-RPC peer's input (one message a line) where a line longer than the cap on one
//! message is replaced rather than read: [`super::capped::CappedLines`] ends the whole
//! connection at such a line, which for a server's input (`agent-loop acp`) means every
//! session of the editor that sent one huge prompt. Here the line's bytes are dropped as they
//! come, its top-level `id` and `method` are picked out on the way (in any order: a client
//! may write `id` after `params`), and what the caller makes of them, an answer to that
//! request or a message the handlers can answer, takes the line's place. Lines within the cap
//! pass whole and untouched; memory stays bounded by the cap.
//!
//! The scanner is written here rather than taken from a JSON crate because of that bound:
//! `serde_json::from_slice` needs the whole line in memory (16 MiB and more, per line), and
//! its streaming reader pulls from a blocking `std::io::Read`, while this input is async and
//! arrives in chunks; it would need a thread and a pipe per connection, and it stops at the
//! first malformed byte where the scanner still finds an `id` written before it. Finding two
//! top-level keys needs only the nesting depth, strings and their escapes.
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

/// A line that was past the cap: what it said of itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Oversize {
    /// Its length in bytes, without the newline.
    pub bytes: usize,
    /// Its top-level `id`, if it had one that is a string or a number: its JSON text exactly
    /// as written (`1e1`, `"a\u0062"`), to be echoed so that the client can match the answer
    /// to its request (parsed, `1e1` would become the float `10.0`).
    pub id: Option<String>,
    /// Its top-level `method`: a request or a notification; none, a response. It is empty
    /// when the line had a `method` too long to keep or not a string: still not a response.
    pub method: Option<String>,
}

/// What takes the place of a line past the cap (a whole line, newline included), or nothing.
pub type Replace = Box<dyn FnMut(&Oversize) -> Option<Vec<u8>> + Send>;

/// Reads lines from `inner`, each at most `cap` bytes; a longer one is replaced by what
/// `replace` makes of it.
pub struct OversizeLines<R> {
    inner: R,
    cap: usize,
    replace: Replace,
    /// The current line, while it is within the cap.
    line: Vec<u8>,
    /// The current line is past the cap: its length so far, and what was found in it.
    over: Option<(usize, Scan)>,
    /// Bytes ready to be read, from `ready_at` on.
    ready: Vec<u8>,
    ready_at: usize,
    ended: bool,
}

impl<R> OversizeLines<R> {
    pub fn new(inner: R, cap: usize, replace: Replace) -> Self {
        OversizeLines {
            inner,
            cap,
            replace,
            line: Vec::new(),
            over: None,
            ready: Vec::new(),
            ready_at: 0,
            ended: false,
        }
    }

    fn take(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            let end = memchr::memchr(b'\n', chunk);
            let piece = &chunk[..end.unwrap_or(chunk.len())];
            match &mut self.over {
                Some((bytes, scan)) => {
                    *bytes += piece.len();
                    scan.feed_all(piece);
                }
                None if self.line.len() + piece.len() > self.cap => {
                    let mut scan = Scan::default();
                    scan.feed_all(&self.line);
                    scan.feed_all(piece);
                    self.over = Some((self.line.len() + piece.len(), scan));
                    self.line = Vec::new();
                }
                None => self.line.extend_from_slice(piece),
            }
            let Some(end) = end else { break };
            match self.over.take() {
                Some((bytes, scan)) => self.replace(bytes, scan),
                None => {
                    self.ready.append(&mut self.line);
                    self.ready.push(b'\n');
                }
            }
            chunk = &chunk[end + 1..];
        }
    }

    /// What takes the place of a line of `bytes` past the cap, in `ready`.
    fn replace(&mut self, bytes: usize, mut scan: Scan) {
        if let Some(line) = (self.replace)(&scan.found(bytes)) {
            self.ready.extend_from_slice(&line);
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for OversizeLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        while this.ready_at == this.ready.len() {
            this.ready.clear();
            this.ready_at = 0;
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                // The last line, unended, goes as it is, or is replaced.
                this.ended = true;
                match this.over.take() {
                    Some((bytes, scan)) => this.replace(bytes, scan),
                    None => this.ready.append(&mut this.line),
                }
            } else {
                this.take(&chunk[..n]);
            }
        }
        let n = buf.remaining().min(this.ready.len() - this.ready_at);
        buf.put_slice(&this.ready[this.ready_at..this.ready_at + n]);
        this.ready_at += n;
        Poll::Ready(Ok(()))
    }
}

/// The most bytes kept of an `id` or a `method`: a longer one is not used.
const KEPT: usize = 256;

/// Picks the top-level `id` and `method` out of a JSON object read one byte at a time,
/// keeping at most [`KEPT`] bytes of each.
#[derive(Default)]
struct Scan {
    depth: usize,
    quoted: bool,
    escaped: bool,
    /// At depth 1, a key is read (or awaited), not a value.
    in_key: bool,
    key: Vec<u8>,
    /// The raw value of `id` or `method`, while it is read.
    value: Option<Vec<u8>>,
    id: Option<Vec<u8>>,
    method: Option<Vec<u8>>,
    /// A top-level `method` key was seen, whatever became of its value.
    has_method: bool,
}

impl Scan {
    /// [`Scan::feed`] for each byte, passing over at once the long runs that change nothing:
    /// the inside of a string that is neither a key nor kept, what comes before the object.
    fn feed_all(&mut self, mut bytes: &[u8]) {
        while let Some(&first) = bytes.first() {
            let inert = self.quoted
                && !self.escaped
                && self.value.is_none()
                && !(self.depth == 1 && self.in_key);
            let skip = if inert {
                memchr::memchr2(b'"', b'\\', bytes).unwrap_or(bytes.len())
            } else if self.depth == 0 && !self.quoted {
                memchr::memchr(b'{', bytes).unwrap_or(bytes.len())
            } else {
                0
            };
            if skip > 0 {
                bytes = &bytes[skip..];
                continue;
            }
            self.feed(first);
            bytes = &bytes[1..];
        }
    }

    fn feed(&mut self, byte: u8) {
        if self.quoted {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.quoted = false;
            }
            if self.depth == 1 && self.in_key {
                if self.quoted && self.key.len() <= KEPT {
                    self.key.push(byte);
                }
            } else {
                self.keep(byte);
            }
            return;
        }
        match byte {
            b'"' if self.depth == 1 && self.in_key => {
                self.quoted = true;
                self.key.clear();
            }
            b'"' => {
                self.quoted = true;
                self.keep(byte);
            }
            b'{' if self.depth == 0 => {
                self.depth = 1;
                self.in_key = true;
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.keep(byte);
            }
            b'}' | b']' if self.depth == 1 => {
                self.end_value();
                self.depth = 0;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                self.keep(byte);
            }
            b':' if self.depth == 1 && self.in_key => {
                self.in_key = false;
                self.unescape_key();
                let wanted = matches!(self.key.as_slice(), b"id" | b"method");
                self.has_method |= self.key == b"method";
                self.value = wanted.then(Vec::new);
            }
            b',' if self.depth == 1 => {
                self.end_value();
                self.in_key = true;
            }
            _ => self.keep(byte),
        }
    }

    /// A byte of the value being kept; one too long is dropped.
    fn keep(&mut self, byte: u8) {
        if let Some(value) = &mut self.value {
            value.push(byte);
            if value.len() > KEPT {
                self.value = None;
                self.key.clear();
            }
        }
    }

    /// A key written with escapes (`"\u0069d"`) is the key it decodes to, as for any JSON
    /// reader. The key is at most [`KEPT`] + 1 bytes, so this is bounded; one cut short does not
    /// decode, and it could not have been `id` or `method` anyway (an escape is at most 6 bytes
    /// a character).
    fn unescape_key(&mut self) {
        if self.key.len() > KEPT || !self.key.contains(&b'\\') {
            return;
        }
        let mut quoted = Vec::with_capacity(self.key.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(&self.key);
        quoted.push(b'"');
        self.key = serde_json::from_slice::<String>(&quoted)
            .map(String::into_bytes)
            .unwrap_or_default();
    }

    /// The first `id` or `method` of the line is kept. serde_json's `Value` would keep the last
    /// of a key written twice; it does not matter, as a client that writes its request's `id`
    /// twice cannot expect either one back, and no JSON-RPC peer writes one.
    fn end_value(&mut self) {
        let Some(value) = self.value.take() else {
            return;
        };
        let slot = match self.key.as_slice() {
            b"id" => &mut self.id,
            _ => &mut self.method,
        };
        slot.get_or_insert(value);
    }

    fn found(&mut self, bytes: usize) -> Oversize {
        self.end_value();
        fn parse(raw: &Option<Vec<u8>>) -> Option<(&[u8], Value)> {
            let raw = raw.as_deref()?.trim_ascii();
            Some((raw, serde_json::from_slice::<Value>(raw).ok()?))
        }
        let id = parse(&self.id)
            .filter(|(_, id)| id.is_string() || id.is_number())
            .and_then(|(raw, _)| String::from_utf8(raw.to_vec()).ok());
        let method = parse(&self.method).and_then(|(_, m)| m.as_str().map(str::to_string));
        Oversize {
            bytes,
            id,
            method: method.or_else(|| self.has_method.then(String::new)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tokio::io::AsyncReadExt;

    /// Reads `input` through a reader of cap `cap` that replaces a long line by `<N>` and
    /// records what it found.
    async fn read(input: Vec<u8>, cap: usize) -> (String, Vec<Oversize>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&seen);
        let replace: Replace = Box::new(move |o: &Oversize| {
            kept.lock().unwrap().push(o.clone());
            Some(format!("<{}>\n", o.bytes).into_bytes())
        });
        let mut lines = OversizeLines::new(&input[..], cap, replace);
        let mut out = String::new();
        lines.read_to_string(&mut out).await.unwrap();
        let seen = seen.lock().unwrap().clone();
        (out, seen)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn lines_within_the_cap_pass_and_a_longer_one_is_replaced() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"session/prompt\",\"params\":{{\"id\":9,\"text\":\"{}\",\"x\":[1,{{\"method\":\"no\"}}]}},\"id\":\"a,\\\"b\"}}",
            "y".repeat(20_000)
        );
        let input = format!("{{\"id\":1}}\n{big}\n{{\"id\":2}}\nlast");
        let (out, seen) = read(input.into_bytes(), 100).await;
        assert_eq!(
            out,
            format!("{{\"id\":1}}\n<{}>\n{{\"id\":2}}\nlast", big.len())
        );
        assert_eq!(
            seen,
            [Oversize {
                bytes: big.len(),
                id: Some(r#""a,\"b""#.into()),
                method: Some("session/prompt".into()),
            }]
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_response_or_a_line_of_no_json_says_so() {
        let response = format!("{{\"id\": 7 ,\"result\":\"{}\"}}\n", "r".repeat(500));
        let junk = format!("{}\n", "j".repeat(500));
        let at_the_cap = format!("{}\n", "k".repeat(100));
        let input = format!("{response}{junk}{at_the_cap}");
        let (out, seen) = read(input.into_bytes(), 100).await;
        let response_bytes = response.len() - 1;
        assert_eq!(out, format!("<{response_bytes}>\n<500>\n{at_the_cap}"));
        assert_eq!(seen[0].id.as_deref(), Some("7"));
        assert_eq!(seen[0].method, None);
        assert_eq!((seen[1].id.clone(), seen[1].method.clone()), (None, None));
        // A last line past the cap with no newline is replaced too.
        let (out, seen) = read(
            b"{\"id\":3}\n{\"id\":4,\"method\":\"m\",\"p\":\"0123456789\"".to_vec(),
            20,
        )
        .await;
        assert_eq!(out, "{\"id\":3}\n<37>\n");
        assert_eq!(seen[0].id.as_deref(), Some("4"));
    }

    /// Each line is padded past the cap of 100 and scanned alone.
    async fn found(line: &str) -> Oversize {
        let line = format!("{line:<200}\n");
        let (_, mut seen) = read(line.into_bytes(), 100).await;
        assert_eq!(seen.len(), 1);
        seen.remove(0)
    }

    /// A `method` too long to keep, or not a string, still makes the line a request, not an
    /// answer: the request is answered.
    #[tokio::test(flavor = "current_thread")]
    async fn a_method_too_long_to_keep_is_still_a_method() {
        let long = format!(r#"{{"id":5,"method":"{}","params":{{}}}}"#, "m".repeat(300));
        let found = found(&long).await;
        assert_eq!(
            (found.id.as_deref(), found.method.as_deref()),
            (Some("5"), Some(""))
        );
        let found = self::found(r#"{"method":{"a":1},"id":"x"}"#).await;
        assert_eq!(
            (found.id.as_deref(), found.method.as_deref()),
            (Some(r#""x""#), Some(""))
        );
        // A nested one is not the line's.
        let found = self::found(r#"{"id":6,"result":{"method":"m"}}"#).await;
        assert_eq!(found.method, None);
    }

    /// A numeric id comes back as written, so the client can match it to its request.
    #[tokio::test(flavor = "current_thread")]
    async fn a_numeric_id_is_kept_as_written() {
        for id in ["1e1", "-1.50E+3", "12345678901234567890123", "0"] {
            let found = found(&format!(r#"{{"id": {id} ,"method":"m"}}"#)).await;
            assert_eq!(found.id.as_deref(), Some(id));
        }
        // What is not a string or a number is no id.
        for id in ["null", "[1]", "{}", "tru"] {
            let found = found(&format!(r#"{{"id":{id},"method":"m"}}"#)).await;
            assert_eq!(found.id, None, "{id}");
        }
    }

    /// Keys are read as any JSON reader reads them, escapes decoded.
    #[tokio::test(flavor = "current_thread")]
    async fn a_key_written_with_escapes_is_the_key_it_decodes_to() {
        let found =
            found(r#"{"\u0069d":5,"m\u0065th\u006fd":"session/\u0070rompt","\"id\"":7}"#).await;
        assert_eq!(
            (found.id.as_deref(), found.method.as_deref()),
            (Some("5"), Some("session/prompt"))
        );
        // A broken escape decodes to no key.
        let found = self::found(r#"{"\u00zzid":5,"method":"m"}"#).await;
        assert_eq!(found.id, None);
    }

    /// Of a key written twice, the first is kept (see [`Scan::end_value`]).
    #[tokio::test(flavor = "current_thread")]
    async fn of_a_key_written_twice_the_first_is_kept() {
        let found = found(r#"{"id":1,"method":"a","id":2,"method":"b"}"#).await;
        assert_eq!(
            (found.id.as_deref(), found.method.as_deref()),
            (Some("1"), Some("a"))
        );
    }
}
