//! The typed events the loop emits, and the observer that receives them. Front ends (the
//! append-only display, later terminfo, JSONL and chat bots) implement [`Observer`].

use serde::Serialize;

use crate::context::{ContextStats, ToolCall};
use crate::parse::Usage;
use crate::BoxFuture;

/// Which output stream of a backend a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// Everything the loop does, in the order it happens.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    TurnStarted {
        turn: u32,
        input: String,
    },
    BackendStarted {
        backend: String,
        iteration: u32,
    },
    /// One line the backend printed, ANSI-stripped, as it arrives.
    BackendOutput {
        backend: String,
        stream: OutputStream,
        line: String,
    },
    /// The backend is still running after `elapsed_s` seconds.
    Waiting {
        backend: String,
        elapsed_s: u64,
    },
    BackendFinished {
        backend: String,
        elapsed_ms: u64,
    },
    /// Text from the model. `final_answer` is true for the reply that ends the turn; other
    /// text came with tool calls.
    Text {
        text: String,
        final_answer: bool,
    },
    ToolCall {
        call: ToolCall,
        /// The call in a few words: the main argument (`ls -la`) or the arguments as JSON.
        summary: String,
    },
    ApprovalNeeded {
        call: ToolCall,
        summary: String,
    },
    ToolResult {
        call_id: String,
        tool: String,
        ok: bool,
        output: String,
        exit_code: Option<i32>,
    },
    Usage {
        backend: String,
        usage: Usage,
    },
    /// What the turn's last backend call carried of the conversation (once per turn).
    Context {
        stats: ContextStats,
    },
    /// The backend summarised older messages into one (`summarize` mode).
    Summarized {
        backend: String,
        messages: usize,
    },
    /// Something about the context the user should know: a summary that failed and was
    /// replaced by trimming, a memory file that cannot be read.
    ContextNotice {
        message: String,
    },
    TurnFinished {
        turn: u32,
        iterations: u32,
        ok: bool,
    },
    Error {
        message: String,
    },
}

/// A tool call waiting for the user's decision.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub call: ToolCall,
    pub summary: String,
}

/// The user's answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it this once.
    Once,
    /// Run it, and every later call of the same tool in this session.
    Always,
    /// Do not run it; the reason goes back to the model.
    Deny(String),
}

/// Receives the loop's events; answers approval requests.
pub trait Observer: Send {
    fn event(&mut self, event: &Event);
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision>;
}
