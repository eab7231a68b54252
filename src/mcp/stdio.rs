//! A stdio server: the child process, in its own process group, speaking rmcp's line-delimited
//! transport on its stdin and stdout. agent-loop starts the child itself (rmcp's child-process
//! transport cannot reach into the output it reads) so that its stdout is read through
//! [`CappedLines`], and its stderr drained into a bounded tail for error messages.

use std::collections::VecDeque;
use std::process::Stdio as Pipe;
use std::sync::{Arc, Mutex};

use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::RoleClient;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, ChildStdin, Command};

use super::caps::{self, Breach, CappedLines};
use super::lock;

/// Lines of a server's stderr kept for messages.
const STDERR_LINES: usize = 20;
/// Bytes kept of one stderr line: the rest of a longer one is dropped as it is read.
const STDERR_LINE: usize = 2048;

pub type Transport =
    AsyncRwTransport<RoleClient, CappedLines<tokio::process::ChildStdout>, ChildStdin>;

/// Starts `command` with piped stdin, stdout and stderr: the transport, the child (killed
/// when dropped, with `kill_on_drop`) and its stderr, the caller's to read.
pub fn start(
    mut command: Command,
    breach: Breach,
) -> std::io::Result<(Transport, Child, Option<ChildStderr>)> {
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
    let stdout = CappedLines::new(stdout, caps::LINE, breach);
    // CappedLines ends the output first; rmcp's own limit is only a backstop.
    let transport =
        AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(caps::LINE + 1);
    Ok((transport, child, stderr))
}

/// The last lines a server wrote on stderr, each cut to [`STDERR_LINE`] bytes: what it
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

/// Drains a server's stderr to its end into `tail`.
pub async fn keep_tail(mut stderr: ChildStderr, tail: Arc<Mutex<StderrTail>>) {
    let mut buf = vec![0; 8192];
    while let Ok(n @ 1..) = stderr.read(&mut buf).await {
        lock(&tail).feed(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
