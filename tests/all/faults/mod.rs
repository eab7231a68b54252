//! The fault suite: what agent-loop does when a backend crashes, hangs, floods or garbles its
//! output, when an HTTP server misbehaves, on Ctrl-C during a backend call or a tool, and when
//! the session cannot be written. Each case checks the message, the exit code, the session
//! file and that no process is left running. The holes of issue 30 (security) are here too:
//! approval that cannot be fooled (approval.rs), children kept from the terminal and tied to
//! agent-loop's life (isolation.rs), confinement without races (confinement.rs), secrets kept
//! from tools (secrets.rs) and private session data (privacy.rs). Faults covered by older modules (a hanging CLI
//! backend, invalid UTF-8, malformed and unknown tool calls, a cut stream, path escapes) are
//! checked the same way where they live: cli_backend.rs, http/failures.rs, policy.rs.

mod approval;
mod backend;
mod confinement;
mod http;
mod interrupt;
mod isolation;
mod privacy;
mod secrets;
mod storage;

use crate::common::Workspace;

/// The session file is whole and holds the task of the turn that failed.
fn assert_task_saved(ws: &Workspace, task: &str) {
    let messages = ws.saved_messages();
    assert!(messages.contains(task), "{messages}");
}
