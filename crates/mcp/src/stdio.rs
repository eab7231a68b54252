//! A stdio server: the child process, in its own process group, speaking rmcp's line-delimited
//! transport on its stdin and stdout. agent-loop starts the child itself (rmcp's child-process
//! transport cannot reach into the output it reads) so that its stdout is read through
//! [`CappedLines`], and its stderr drained into a bounded tail for error messages. rmcp
//! passes over a line that is not a JSON-RPC message: the first such line's start is kept
//! ([`Stray`]), so a server that printed a banner or a log line on stdout and then never
//! answered is told as that.

use std::pin::Pin;
use std::process::Stdio as Pipe;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::RoleClient;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStderr, ChildStdin, Command};

use super::caps::{self, Breach, CappedLines};
use super::lock;

pub type Transport =
    AsyncRwTransport<RoleClient, Watched<CappedLines<tokio::process::ChildStdout>>, ChildStdin>;

/// The bytes kept of the first line on stdout that is not JSON-RPC: enough to know it by.
const STRAY_START: usize = 80;

/// The start of a line that is not JSON-RPC, and whether it went on beyond that start.
#[derive(Debug, Clone)]
struct Line {
    start: Vec<u8>,
    cut: bool,
}

/// The first line a server wrote on stdout that is not a JSON-RPC message, as far as it was
/// read.
#[derive(Debug, Clone, Default)]
pub struct Stray(Arc<Mutex<Option<Line>>>);

impl Stray {
    /// The line as a message shows it: quoted, its escapes shown, `…` when cut short.
    pub fn shown(&self) -> Option<String> {
        let stray = lock(&self.0);
        let Line { start, cut } = stray.as_ref()?;
        let text = String::from_utf8_lossy(start);
        // A character cut in two at the end is left out, not shown as `�`.
        let text = text.trim_end_matches('\u{fffd}');
        Some(format!("{text:?}{}", if *cut { "…" } else { "" }))
    }
}

/// What marks a line as JSON-RPC: the key every message has. A log line that is JSON
/// (pino's `{"level":30,"msg":"started"}`) lacks it; one that quotes it in a string has it
/// escaped (`\"jsonrpc\"`), so not as this.
const RPC_KEY: &[u8] = b"\"jsonrpc\"";

/// Where a line of the output being watched is.
enum Place {
    /// Only blanks so far.
    Start,
    /// A JSON-RPC line (or one after the first stray line was kept): passed over.
    Skipped,
    /// A line that starts as JSON does, not yet known to be JSON-RPC: its start, and how much
    /// of [`RPC_KEY`] its last bytes match.
    Json(Line, usize),
    /// The first stray line so far.
    Stray(Line),
}

impl Line {
    fn new(byte: u8) -> Line {
        Line {
            start: vec![byte],
            cut: false,
        }
    }

    fn push(&mut self, byte: u8) {
        match self.start.len() < STRAY_START {
            true => self.start.push(byte),
            false => self.cut = true,
        }
    }
}

/// A server's stdout, read through unchanged, watched for the first line that is not a
/// JSON-RPC message: one that does not start with `{` or `[`, or that does but has no
/// `"jsonrpc"` key (a JSON log line). Only a line's start is kept: the watch is bounded
/// however long the lines.
pub struct Watched<R> {
    inner: R,
    stray: Stray,
    place: Place,
    /// The first stray line has ended: nothing more to watch.
    done: bool,
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        std::task::ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let this = &mut *self;
        if this.done {
            return Poll::Ready(Ok(()));
        }
        for &byte in &buf.filled()[before..] {
            this.place = match (std::mem::replace(&mut this.place, Place::Skipped), byte) {
                (Place::Stray(mut line) | Place::Json(mut line, _), b'\n') => {
                    if line.start.last() == Some(&b'\r') {
                        line.start.pop();
                    }
                    *lock(&this.stray.0) = Some(line);
                    this.done = true;
                    return Poll::Ready(Ok(()));
                }
                (_, b'\n') => Place::Start,
                (Place::Start, b' ' | b'\t' | b'\r') => Place::Start,
                (Place::Skipped, _) => Place::Skipped,
                (Place::Start, b'{' | b'[') => Place::Json(Line::new(byte), 0),
                (Place::Start, byte) => Place::Stray(Line::new(byte)),
                (Place::Json(mut line, matched), byte) => {
                    line.push(byte);
                    // A mismatch goes back to the start of the key: its `"` is its only
                    // repeated byte, and only at either end.
                    let matched = match (RPC_KEY[matched] == byte, byte == b'"') {
                        (true, _) => matched + 1,
                        (false, true) => 1,
                        (false, false) => 0,
                    };
                    match matched == RPC_KEY.len() {
                        true => Place::Skipped,
                        false => Place::Json(line, matched),
                    }
                }
                (Place::Stray(mut line), byte) => {
                    line.push(byte);
                    Place::Stray(line)
                }
            };
        }
        // A stray line that has not ended (a prompt without its newline) is known so far; a
        // line that starts as JSON is judged once it ends.
        if let Place::Stray(line) = &this.place {
            *lock(&this.stray.0) = Some(line.clone());
        }
        Poll::Ready(Ok(()))
    }
}

/// Starts `command` with piped stdin, stdout and stderr: the transport, the child (killed
/// when dropped, with `kill_on_drop`), its stderr (the caller's to read) and what it wrote
/// on stdout that is not JSON-RPC.
pub fn start(
    mut command: Command,
    breach: Breach,
) -> std::io::Result<(Transport, Child, Option<ChildStderr>, Stray)> {
    command
        .stdin(Pipe::piped())
        .stdout(Pipe::piped())
        .stderr(Pipe::piped());
    let mut child = command.spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::Error::other(
            "its stdin and stdout could not be piped",
        ));
    };
    let stderr = child.stderr.take();
    let stray = Stray::default();
    let stdout = Watched {
        inner: CappedLines::new(stdout, caps::LINE, breach),
        stray: stray.clone(),
        place: Place::Start,
        done: false,
    };
    // CappedLines ends the output first; rmcp's own limit is only a backstop.
    let transport =
        AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(caps::LINE + 1);
    Ok((transport, child, stderr, stray))
}

pub use agent_loop_tools::process::capped::{keep_tail, StderrTail};
