//! The output of a child that speaks one message a line (an MCP stdio server, an ACP agent),
//! read with caps: a line longer than the cap ends the output with an error naming it, and
//! stderr is drained into a bounded tail for error messages, so agent-loop's memory stays
//! bounded however much the child writes.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::process::ChildStderr;

const MIB: usize = 1024 * 1024;
/// One line of a child's output: one JSON-RPC message.
pub const LINE: usize = 16 * MIB;

/// `16 MiB`, for messages.
pub fn size(bytes: usize) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// Why the connection to a child broke down, set by the reader that found it: rmcp's
/// transport sees only that its input ended.
pub type Breach = Arc<Mutex<Option<String>>>;

pub fn note(breach: &Breach, why: String) {
    lock(breach).get_or_insert(why);
}

/// A child's output, ending with an error (and `breach` set) at a line longer than
/// [`LINE`]: a transport's own line limit
/// may drop the line and wait on, leaving its request to run out of time.
///
/// Bytes that are not UTF-8 are read as `?`, one for one: a reader of lines as text would
/// end the whole connection at one such line, and lose the answer so far with it.
pub struct CappedLines<R> {
    inner: R,
    /// Bytes of the current line so far.
    line: usize,
    cap: usize,
    breach: Breach,
    /// The start of a character the last read cut in two, given with the next read.
    held: Vec<u8>,
    /// The most JSON values one line may hold ([`CappedLines::values`]), and where the
    /// current line is: values so far, inside a string, after a backslash in one.
    max_values: Option<usize>,
    values: usize,
    quoted: bool,
    escaped: bool,
}

impl<R> CappedLines<R> {
    pub fn new(inner: R, cap: usize, breach: Breach) -> Self {
        CappedLines {
            inner,
            line: 0,
            cap,
            breach,
            held: Vec::new(),
            max_values: None,
            values: 0,
            quoted: false,
            escaped: false,
        }
    }

    /// Also caps the JSON values (elements and members, counted by their separators and
    /// brackets) on one line: a line of `[0,0,0,...]` within the cap on bytes is parsed into
    /// a value per two bytes, each far bigger in memory than its text.
    pub fn values(mut self, max: usize) -> Self {
        self.max_values = Some(max);
        self
    }

    /// Counts the JSON values of a line, one byte at a time; `false`: past the cap.
    fn count(&mut self, byte: u8) -> bool {
        let Some(max) = self.max_values else {
            return true;
        };
        if byte == b'\n' {
            (self.values, self.quoted, self.escaped) = (0, false, false);
        } else if self.escaped {
            self.escaped = false;
        } else if self.quoted {
            match byte {
                b'\\' => self.escaped = true,
                b'"' => self.quoted = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => self.quoted = true,
                b',' | b'[' | b'{' => self.values += 1,
                _ => {}
            }
        }
        self.values <= max
    }
}

/// Turns each byte of `bytes` that is not part of a UTF-8 character into `?`; returns the
/// start of a character cut off at the end (taken off `bytes`), which the next read finishes.
fn mend(bytes: &mut Vec<u8>) -> Vec<u8> {
    let mut at = 0;
    loop {
        match std::str::from_utf8(&bytes[at..]) {
            Ok(_) => return Vec::new(),
            Err(e) => {
                let bad = at + e.valid_up_to();
                match e.error_len() {
                    Some(n) => {
                        bytes[bad..bad + n].fill(b'?');
                        at = bad + n;
                    }
                    None => return bytes.split_off(bad),
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for CappedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        // Again while all that came was the start of a character: no bytes means the end.
        while buf.filled().len() == before {
            std::task::ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
            let read = &buf.filled()[before..];
            let ended = read.is_empty();
            if self.held.is_empty() && read.is_ascii() {
                break;
            }
            let mut bytes = std::mem::take(&mut self.held);
            bytes.extend_from_slice(read);
            let mut held = if ended { Vec::new() } else { mend(&mut bytes) };
            if ended {
                bytes.fill(b'?');
            }
            // What does not fit waits for the next read (at most a character's start more).
            let room = buf.filled().len() - before + buf.remaining();
            if bytes.len() > room {
                let mut rest = bytes.split_off(room);
                rest.extend_from_slice(&held);
                held = rest;
            }
            buf.set_filled(before);
            buf.put_slice(&bytes);
            self.held = held;
            if ended {
                break;
            }
        }
        let mut line = self.line;
        let this = &mut *self;
        for &byte in &buf.filled()[before..] {
            line = if byte == b'\n' { 0 } else { line + 1 };
            let counted = this.count(byte);
            if line > this.cap || !counted {
                let why = match counted {
                    true => format!(
                        "it sent a line longer than {}, the cap on one message",
                        size(this.cap)
                    ),
                    false => format!(
                        "it sent a message of more than {} JSON values, the cap on one message",
                        this.max_values.unwrap_or_default()
                    ),
                };
                note(&this.breach, why.clone());
                buf.set_filled(before);
                return Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    why,
                )));
            }
        }
        self.line = line;
        Poll::Ready(Ok(()))
    }
}

/// Lines of a child's stderr kept for messages.
const STDERR_LINES: usize = 20;
/// Bytes kept of one stderr line: the rest of a longer one is dropped as it is read.
const STDERR_LINE: usize = 2048;

/// The last lines a child wrote on stderr, each cut to `STDERR_LINE` bytes: what it
/// writes costs agent-loop a bounded amount of memory however much that is.
#[derive(Default)]
pub struct StderrTail {
    lines: VecDeque<Vec<u8>>,
    /// The line being read is longer than what is kept of it.
    cut: bool,
    /// The last line is still being written (no newline yet).
    open: bool,
}

impl StderrTail {
    fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            if !self.open {
                if self.lines.len() == STDERR_LINES {
                    self.lines.pop_front();
                }
                self.lines.push_back(Vec::new());
                self.open = true;
                self.cut = false;
            }
            let end = memchr::memchr(b'\n', chunk);
            let piece = &chunk[..end.unwrap_or(chunk.len())];
            let line = self.lines.back_mut().expect("a line is open");
            let room = STDERR_LINE.saturating_sub(line.len());
            line.extend_from_slice(&piece[..piece.len().min(room)]);
            if piece.len() > room && !self.cut {
                self.cut = true;
                line.extend_from_slice("…".as_bytes());
            }
            match end {
                Some(i) => {
                    self.open = false;
                    chunk = &chunk[i + 1..];
                }
                None => chunk = &[],
            }
        }
    }

    pub fn render(&self) -> String {
        let lines: Vec<String> = self
            .lines
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        lines.join("\n")
    }
}

/// Drains a child's stderr to its end into `tail`.
pub async fn keep_tail(mut stderr: ChildStderr, tail: Arc<Mutex<StderrTail>>) {
    let mut buf = vec![0; 8192];
    while let Ok(n @ 1..) = stderr.read(&mut buf).await {
        lock(&tail).feed(&buf[..n]);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn bytes_that_are_not_utf8_read_as_question_marks() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let breach = Breach::default();
        let mut lines = CappedLines::new(rx, LINE, breach);
        use tokio::io::AsyncWriteExt;
        // "é" cut in two across writes stays whole; stray bytes become `?`.
        tx.write_all(b"ok \xff\xfe \xc3").await.unwrap();
        tx.flush().await.unwrap();
        let mut got = vec![0u8; 64];
        let n = lines.read(&mut got).await.unwrap();
        assert_eq!(&got[..n], b"ok ?? ");
        tx.write_all(b"\xa9!\n").await.unwrap();
        let n = lines.read(&mut got).await.unwrap();
        assert_eq!(&got[..n], "é!\n".as_bytes());
        // A read that brings only a character's start waits for the rest, it is no end.
        tx.write_all(b"\xe2").await.unwrap();
        tx.flush().await.unwrap();
        let mut one = [0u8; 8];
        let (n, ()) = tokio::join!(lines.read(&mut one), async {
            tokio::task::yield_now().await;
            tx.write_all(b"\x82\xac").await.unwrap();
        });
        let n = n.unwrap();
        assert_eq!(&one[..n], "€".as_bytes());
        tx.write_all(b"\xe2").await.unwrap();
        drop(tx);
        let mut rest = Vec::new();
        lines.read_to_end(&mut rest).await.unwrap();
        assert_eq!(String::from_utf8(rest).unwrap(), "?");
    }

    #[test]
    fn the_tail_keeps_the_last_lines_each_cut() {
        let mut tail = StderrTail::default();
        for i in 0..30 {
            tail.feed(format!("line {i}\n").as_bytes());
        }
        let text = tail.render();
        assert!(text.starts_with("line 10\n"), "{text}");
        assert!(text.ends_with("line 29"), "{text}");
        let mut tail = StderrTail::default();
        tail.feed(b"start ");
        for _ in 0..1000 {
            tail.feed(&[b'x'; 1000]);
        }
        tail.feed(b" end\nlast");
        let text = tail.render();
        assert_eq!(
            text.len(),
            STDERR_LINE + "…".len() + "\nlast".len(),
            "{text}"
        );
        assert!(text.starts_with("start xxx") && text.ends_with("…\nlast"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_line_over_the_cap_ends_the_output() {
        use tokio::io::AsyncReadExt;
        let breach = Breach::default();
        let mut fine = CappedLines::new(&b"12345\n12345\n"[..], 5, breach.clone());
        let mut all = Vec::new();
        fine.read_to_end(&mut all).await.unwrap();
        assert_eq!(all.len(), 12);
        let mut long = CappedLines::new(&b"12\n123456\n"[..], 5, breach.clone());
        let err = long.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert!(err.to_string().contains("longer than 5 bytes"), "{err}");
        assert!(lock(&breach)
            .as_deref()
            .unwrap()
            .contains("cap on one message"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_line_of_too_many_values_ends_the_output() {
        use tokio::io::AsyncReadExt;
        let read = |text: &'static str| async move {
            let breach = Breach::default();
            let mut lines = CappedLines::new(text.as_bytes(), 100, breach).values(3);
            lines.read_to_end(&mut Vec::new()).await
        };
        // Three on each line; separators and brackets in strings (escaped quotes too) count
        // for nothing.
        read("[1,2]\n{\"a\":\"[,{\\\"[\"}\n[1,2]\n").await.unwrap();
        let err = read("[1,2]\n[[1,2],[3]]\n").await.unwrap_err();
        assert!(err.to_string().contains("more than 3 JSON values"), "{err}");
    }
}
