//! The caps on what an MCP server sends, and the readers that hold them: a line of a stdio
//! server's output, an HTTP body, one event of an event stream, a tool list. A server that
//! passes one fails with a message naming the cap, and agent-loop's memory stays bounded
//! however much it sends (tests/all/mcp/caps.rs floods each one).

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures_util::{Stream, StreamExt};
use tokio::io::{AsyncRead, ReadBuf};

use super::lock;
use crate::sse::EventLines;

const MIB: usize = 1024 * 1024;
/// One line of a stdio server's output: one JSON-RPC message.
pub const LINE: usize = 16 * MIB;
/// One HTTP body read whole (a JSON answer).
pub const BODY: usize = 16 * MIB;
/// One event of an event stream.
pub const EVENT: usize = 16 * MIB;
/// The start of a refusal's body kept for its message.
pub const ERROR_BODY: usize = 4096;
/// Tools one server may offer.
pub const TOOLS: usize = 1000;
/// The JSON of all of one server's tools together.
pub const TOOL_LIST: usize = 4 * MIB;

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

/// Why the connection to a server broke down, set by the reader that found it: rmcp's
/// transport sees only that its input ended.
pub type Breach = Arc<Mutex<Option<String>>>;

pub fn note(breach: &Breach, why: String) {
    lock(breach).get_or_insert(why);
}

/// A stdio server's output, ending with an error (and `breach` set) at a line longer than
/// [`LINE`]: rmcp's own line limit would drop the line and wait on, leaving its request to
/// run out of time.
pub struct CappedLines<R> {
    inner: R,
    /// Bytes of the current line so far.
    line: usize,
    cap: usize,
    breach: Breach,
}

impl<R> CappedLines<R> {
    pub fn new(inner: R, cap: usize, breach: Breach) -> Self {
        CappedLines {
            inner,
            line: 0,
            cap,
            breach,
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
        std::task::ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let mut line = self.line;
        for &byte in &buf.filled()[before..] {
            line = if byte == b'\n' { 0 } else { line + 1 };
            if line > self.cap {
                let why = format!(
                    "it sent a line longer than {}, the cap on one message",
                    size(self.cap)
                );
                note(&self.breach, why.clone());
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

/// A body read whole, failing once it passes `cap` bytes (at once if its length says so).
pub async fn read_body<E: std::fmt::Display>(
    body: impl Stream<Item = Result<bytes::Bytes, E>>,
    length: Option<u64>,
    cap: usize,
) -> Result<Vec<u8>, String> {
    let too_long = || format!("its reply passed {}, the cap on one body", size(cap));
    if length.is_some_and(|n| n > cap as u64) {
        return Err(too_long());
    }
    futures_util::pin_mut!(body);
    let mut all = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        if chunk.len() > cap - all.len() {
            return Err(too_long());
        }
        all.extend_from_slice(&chunk);
    }
    Ok(all)
}

/// The first `cap` bytes of a body, for a message; the rest is not read.
pub async fn body_start<E>(
    body: impl Stream<Item = Result<bytes::Bytes, E>>,
    cap: usize,
) -> String {
    futures_util::pin_mut!(body);
    let mut start = Vec::new();
    while start.len() < cap {
        match body.next().await {
            Some(Ok(chunk)) => {
                start.extend_from_slice(&chunk[..chunk.len().min(cap - start.len())])
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&start).into_owned()
}

/// A body's chunks as [`EventLines`] gives them, ending with an error once one event passes
/// `cap`.
pub fn capped_events<E: std::fmt::Display>(
    body: impl Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
    cap: usize,
    breach: Breach,
) -> impl Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + 'static {
    let mut lines = EventLines::default();
    let mut over = false;
    body.map(move |chunk| {
        let chunk = chunk.map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut out = Vec::new();
        if over || !lines.feed(&chunk, cap, &mut out) {
            over = true;
            let why = format!(
                "it sent an event longer than {}, the cap on one event",
                size(cap)
            );
            note(&breach, why.clone());
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
        }
        Ok(bytes::Bytes::from(out))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_units() {
        assert_eq!(size(16 * MIB), "16 MiB");
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(100), "100 bytes");
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
}
