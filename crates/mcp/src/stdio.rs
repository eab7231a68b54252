//! A stdio server: the child process, in its own process group, speaking rmcp's line-delimited
//! transport on its stdin and stdout. agent-loop starts the child itself (rmcp's child-process
//! transport cannot reach into the output it reads) so that its stdout is read through
//! [`CappedLines`], and its stderr drained into a bounded tail for error messages.

use std::process::Stdio as Pipe;

use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::RoleClient;
use tokio::process::{Child, ChildStderr, ChildStdin, Command};

use super::caps::{self, Breach, CappedLines};

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

pub use agent_loop_tools::process::capped::{keep_tail, StderrTail};
