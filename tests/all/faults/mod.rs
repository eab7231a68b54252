//! The fault suite: what agent-loop does when a backend crashes, hangs, floods or garbles its
//! output, when an HTTP server misbehaves, on Ctrl-C during a backend call or a tool, and when
//! the session cannot be written. Each case checks the message, the exit code, the session
//! file and that no process is left running. Faults covered by older modules (a hanging CLI
//! backend, invalid UTF-8, malformed and unknown tool calls, a cut stream, path escapes) are
//! checked the same way where they live: cli_backend.rs, http/failures.rs, policy.rs.

mod backend;
mod http;
mod interrupt;
mod storage;

use crate::common::Workspace;

/// The session file is whole and holds the task of the turn that failed.
fn assert_task_saved(ws: &Workspace, task: &str) {
    let messages = ws.saved_messages();
    assert!(messages.contains(task), "{messages}");
}
