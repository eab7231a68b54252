//! The typed events the loop emits, and the observer that receives them. Front ends (the
//! append-only display, later terminfo, JSONL and chat bots) implement [`Observer`].

use serde::{Deserialize, Serialize};

use crate::metrics::ContextStats;
use crate::usage::Usage;
use crate::BoxFuture;
use crate::ToolCall;
// What an approval question shows of a file tool's call, with the request.
pub use crate::tool_call::Change;

mod wire;

/// Which output stream of a backend a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    Stdout,
    Stderr,
    /// A settled line of a terminal agent's screen (a `pty` backend): its progress, shown
    /// without `--verbose`.
    Screen,
    /// A line of stdout of a CLI whose answer comes in pieces (`json_text_delta`): shown with
    /// `--verbose` and `--tail`, but no record of its own, as the pieces are the answer's.
    StreamedStdout,
}

/// What a CLI backend printed, byte for byte (kept up to its `max_output_bytes`), for logs.
/// Serialised (and shown by `--debug`) as text with invalid UTF-8 replaced.
#[derive(Clone, PartialEq, Default)]
pub struct RawOutput {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Bytes past `max_output_bytes`, drained and counted but not kept (not serialised: the
    /// log notes them in a record of their own).
    pub stdout_dropped: u64,
    pub stderr_dropped: u64,
    /// Bytes kept (and parsed) but left out of the log's raw record by [`RawOutput::share_cap`],
    /// as the answer holds the call's output already (not serialised: noted like the dropped).
    pub stdout_unlogged: u64,
    pub stderr_unlogged: u64,
}

impl RawOutput {
    /// Leaves in the raw record only what `cap` has room for beside an answer of `answer`
    /// bytes, so that one call puts at most `cap` bytes of output in the log, not the answer
    /// and the raw output each up to `cap` (a flood's answer *is* its stdout). Stderr keeps its
    /// room first, as the answer never holds it; each stream's head is kept.
    pub fn share_cap(&mut self, answer: usize, cap: usize) {
        let mut room = cap.saturating_sub(answer);
        for (bytes, unlogged) in [
            (&mut self.stderr, &mut self.stderr_unlogged),
            (&mut self.stdout, &mut self.stdout_unlogged),
        ] {
            let keep = bytes.len().min(room);
            *unlogged += (bytes.len() - keep) as u64;
            bytes.truncate(keep);
            bytes.shrink_to_fit();
            room -= keep;
        }
    }
}

impl std::fmt::Debug for RawOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawOutput")
            .field("stdout", &String::from_utf8_lossy(&self.stdout))
            .field("stderr", &String::from_utf8_lossy(&self.stderr))
            .field("stdout_dropped", &self.stdout_dropped)
            .field("stderr_dropped", &self.stderr_dropped)
            .field("stdout_unlogged", &self.stdout_unlogged)
            .field("stderr_unlogged", &self.stderr_unlogged)
            .finish()
    }
}

impl Serialize for RawOutput {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("RawOutput", 2)?;
        st.serialize_field("stdout", &String::from_utf8_lossy(&self.stdout))?;
        st.serialize_field("stderr", &String::from_utf8_lossy(&self.stderr))?;
        st.end()
    }
}

/// What the log and the display say of an image attached to a prompt: where it came from,
/// its type and its size, never its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attached {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub mime: String,
    pub bytes: u64,
}

/// What a backend call was for: the `for` of its `usage` record, so that a program adding up
/// a turn's calls can tell the summary call (`summarize` mode, `/compact`), which is no step
/// of the answer, from the model steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallPurpose {
    /// A model step of the turn: an answer, or tool calls on the way to one.
    #[default]
    Answer,
    /// The summary of older messages that replaces them in the context.
    Summary,
}

/// Everything the loop does, in the order it happens.
///
/// Serialised, an event is the body of its record in the public JSON lines schema
/// ([`crate::jsonl`]: `event` names its kind, the common keys come from the record around
/// it): the serde attributes here are that schema. Fields the record has in common (the
/// backend, the turn) are skipped; a variant marked `skip` has no record, and serialising it
/// fails. A new kind of record is a new variant (and its row in [`crate::jsonl::SCHEMA`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    #[serde(rename = "user_message")]
    TurnStarted {
        #[serde(skip)]
        turn: u32,
        #[serde(rename = "text")]
        input: String,
        /// The images attached to the input, described (not their bytes); `[]` in the record
        /// when none, so every record of a kind has the same keys.
        images: Vec<Attached>,
    },
    #[serde(skip)]
    BackendStarted { backend: String, iteration: u32 },
    /// One line the backend printed, ANSI-stripped, as it arrives. Only a line of stdout has
    /// a record: the model's output before parsing, with its newline.
    #[serde(rename = "assistant_delta", serialize_with = "wire::stdout_line")]
    BackendOutput {
        backend: String,
        stream: OutputStream,
        line: String,
    },
    /// The backend is still running after `elapsed_s` seconds.
    #[serde(skip)]
    Waiting { backend: String, elapsed_s: u64 },
    /// No record of its own: the session's log writes the raw output in records of its own
    /// ([`crate::jsonl::Body::BackendOutput`]).
    #[serde(skip)]
    BackendFinished {
        backend: String,
        elapsed_ms: u64,
        /// The raw output (escape codes kept), for logs; displays ignore it.
        #[serde(skip_serializing_if = "Option::is_none")]
        raw: Option<RawOutput>,
    },
    /// A piece of the model's text as it streams in (HTTP backends). The whole text follows
    /// as one [`Event::Text`], which a display that showed the pieces need not repeat.
    #[serde(rename = "assistant_delta")]
    TextDelta {
        #[serde(skip)]
        backend: String,
        text: String,
    },
    /// A piece of the model's thinking (reasoning) as it streams in: Anthropic's
    /// `thinking_delta`, the `reasoning_content` or `reasoning` of OpenAI-compatible APIs
    /// (DeepSeek, Qwen, Ollama), an ACP agent's `agent_thought_chunk`. Shown where thinking is
    /// shown (`--verbose`); never part of the answer or the conversation.
    ThinkingDelta {
        #[serde(skip)]
        backend: String,
        text: String,
    },
    /// The agent's plan, whole, each time it changes (an ACP agent's `plan`).
    Plan {
        #[serde(skip)]
        backend: String,
        entries: Vec<PlanEntry>,
    },
    /// The model stopped before its answer was done: it reached its output limit, or it
    /// declined. The reply so far is kept as the answer.
    CutShort {
        #[serde(skip)]
        backend: String,
        reason: CutReason,
    },
    /// The backend's rate limit (`requests_per_minute`, `tokens_per_minute`) holds the
    /// request back for `wait_ms` before it is sent; `limit` is `30k tokens/min`.
    RateLimitWait {
        #[serde(skip)]
        backend: String,
        wait_ms: u64,
        limit: String,
    },
    /// A request failed in a way worth another try (rate limit, overload, server error,
    /// connection reset); the backend waits `wait_ms`, then sends it again.
    #[serde(skip)]
    Retrying {
        backend: String,
        /// The try about to start after the wait: 1 for the first retry.
        retry: u32,
        retries: u32,
        wait_ms: u64,
        /// `HTTP 429`, `connection reset`, ...
        reason: String,
    },
    /// Text from the model. `final_answer` is true for the reply that ends the turn; other
    /// text came with tool calls.
    #[serde(rename = "assistant_message")]
    Text { text: String, final_answer: bool },
    #[serde(skip)]
    ApprovalNeeded { call: ToolCall, summary: String },
    /// How far a running tool has come (an MCP server's `notifications/progress`): `progress`
    /// so far, of `total` when known. A tool that reports faster than the observer takes them
    /// has its latest report shown, not every one.
    ToolProgress {
        call_id: String,
        tool: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// A log message of a running tool's MCP server (`notifications/message`): its `level`
    /// (`debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`) and
    /// `data`, any JSON.
    #[serde(rename = "mcp_log")]
    ToolLog {
        call_id: String,
        tool: String,
        server: String,
        #[serde(rename = "mcp_level")]
        level: String,
        data: serde_json::Value,
    },
    /// The tokens of one backend call, how long the call took (`elapsed_ms` of the
    /// [`Event::BackendFinished`] before it), and what the call was for (the record's `for`).
    #[serde(serialize_with = "wire::usage")]
    Usage {
        backend: String,
        usage: Usage,
        latency_ms: u64,
        purpose: CallPurpose,
    },
    /// An agent ran a tool of its own (`Bash(ls)`), as its output showed (an agent CLI with
    /// `tools = "own"`, a terminal agent), or reported a call of its own (an ACP agent's
    /// `tool_call`, which may wait for approval yet); agent-loop only reports it.
    OwnTool {
        #[serde(skip)]
        backend: String,
        #[serde(rename = "text")]
        activity: String,
        /// The agent's id of the call (an ACP agent's `toolCallId`), which its approval
        /// question names too, so a front end can show both on one line; `None` where the
        /// output names no call.
        #[serde(skip)]
        call_id: Option<String>,
    },
    /// What the turn's last backend call carried of the conversation (once per turn).
    #[serde(skip)]
    Context { stats: ContextStats },
    /// The backend summarised older messages into one (`summarize` mode).
    #[serde(skip)]
    Summarized { backend: String, messages: usize },
    /// Something about the context the user should know: a summary that failed and was
    /// replaced by trimming, a memory file that cannot be read.
    #[serde(skip)]
    ContextNotice { message: String },
    /// Something the user should know that is no error of the turn: the session's log cannot
    /// be written (the conversation goes on); a stream's output dropped past
    /// `max_output_bytes`, its answer whole.
    #[serde(rename = "notice")]
    Notice {
        #[serde(rename = "text")]
        message: String,
    },
    #[serde(rename = "turn_end")]
    TurnFinished {
        #[serde(skip)]
        turn: u32,
        ok: bool,
        iterations: u32,
    },
    Error {
        #[serde(rename = "error")]
        message: String,
        /// What kind of failure it is, from which the CLI's exit code follows.
        #[serde(rename = "error_kind")]
        kind: crate::ErrorKind,
    },
    // The two variants whose kind of record depends on the tool, last as serde wants its
    // untagged variants: their functions write `event` themselves.
    /// Its record is a `tool_call`, or an `mcp_call` for an MCP server's tool.
    #[serde(untagged, serialize_with = "wire::tool_call")]
    ToolCall {
        call: ToolCall,
        /// The call in a few words: the main argument (`ls -la`) or the arguments as JSON.
        summary: String,
    },
    /// Its record is a `tool_result`, or an `mcp_result` (without `exit_code`) for an MCP
    /// server's tool.
    #[serde(untagged, serialize_with = "wire::tool_result")]
    ToolResult {
        call_id: String,
        tool: String,
        ok: bool,
        output: String,
        exit_code: Option<i32>,
    },
}

/// Why the model stopped early ([`Event::CutShort`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutReason {
    /// The output limit: Anthropic's `max_tokens`, OpenAI's and Ollama's `length`.
    MaxTokens,
    /// The model or the provider declined: Anthropic's `refusal`, OpenAI's `content_filter`.
    Refusal,
}

impl std::fmt::Display for CutReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CutReason::MaxTokens => "max_tokens",
            CutReason::Refusal => "refusal",
        })
    }
}

/// One step of a [`Event::Plan`]: its text, `priority` (`high`, `medium`, `low`) and
/// `status` (`pending`, `in_progress`, `completed`), as the agent gave them.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PlanEntry {
    pub content: String,
    pub priority: String,
    pub status: String,
}

/// A tool call waiting for the user's decision.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub call: ToolCall,
    pub summary: String,
    /// What a file tool's call puts into the file named by `summary`, shown with it.
    pub change: Option<Change>,
}

impl ApprovalRequest {
    /// The same request with `f` applied to its text: the summary and the call's arguments
    /// (to redact secrets before the question is shown, wherever it goes).
    pub fn map_text(&self, f: &dyn Fn(&str) -> String) -> ApprovalRequest {
        ApprovalRequest {
            call: self.call.map_text(f),
            summary: f(&self.summary),
            change: self.change.as_ref().map(|c| c.map_text(f)),
        }
    }
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

impl Event {
    /// Who acts in the event's record: `user`, `assistant`, `tool` or `system`
    /// ([`crate::jsonl::SCHEMA`] lists them, and a test checks the two agree).
    pub fn actor(&self) -> &'static str {
        match self {
            Event::TurnStarted { .. } => "user",
            Event::ToolResult { .. } | Event::ToolProgress { .. } | Event::ToolLog { .. } => "tool",
            Event::Error { .. }
            | Event::TurnFinished { .. }
            | Event::RateLimitWait { .. }
            | Event::Notice { .. } => "system",
            _ => "assistant",
        }
    }

    /// The `level` of the event's record: `info`, `warn` (a failed tool or turn, an answer cut
    /// short, an MCP server's warning) or `error`.
    pub fn level(&self) -> &'static str {
        match self {
            Event::Error { .. } => "error",
            Event::TurnFinished { ok: false, .. }
            | Event::ToolResult { ok: false, .. }
            | Event::CutShort { .. }
            | Event::Notice { .. } => "warn",
            Event::ToolLog { level, .. } => match level.as_str() {
                "warning" => "warn",
                "error" | "critical" | "alert" | "emergency" => "error",
                _ => "info",
            },
            _ => "info",
        }
    }

    /// The same event with `f` applied to every piece of text in it (to redact secrets before
    /// anything is shown or written). The match names every variant, so a new event says
    /// here what of it is text. Not done on the serialised form: a record leaves out what the
    /// displays need (the backend, a call's summary, the stream), so it cannot give the event
    /// back, and a streamed delta would be serialised and parsed once more.
    pub fn map_text(&self, f: &dyn Fn(&str) -> String) -> Event {
        let call = |c: &ToolCall| c.map_text(f);
        match self {
            Event::TurnStarted {
                turn,
                input,
                images,
            } => Event::TurnStarted {
                turn: *turn,
                input: f(input),
                images: images.clone(),
            },
            Event::BackendOutput {
                backend,
                stream,
                line,
            } => Event::BackendOutput {
                backend: backend.clone(),
                stream: *stream,
                line: f(line),
            },
            Event::BackendFinished {
                backend,
                elapsed_ms,
                raw,
            } => Event::BackendFinished {
                backend: backend.clone(),
                elapsed_ms: *elapsed_ms,
                raw: raw.as_ref().map(|r| RawOutput {
                    stdout: f(&String::from_utf8_lossy(&r.stdout)).into_bytes(),
                    stderr: f(&String::from_utf8_lossy(&r.stderr)).into_bytes(),
                    ..*r
                }),
            },
            Event::Text { text, final_answer } => Event::Text {
                text: f(text),
                final_answer: *final_answer,
            },
            Event::ToolCall { call: c, summary } => Event::ToolCall {
                call: call(c),
                summary: f(summary),
            },
            Event::ApprovalNeeded { call: c, summary } => Event::ApprovalNeeded {
                call: call(c),
                summary: f(summary),
            },
            Event::ToolResult {
                call_id,
                tool,
                ok,
                output,
                exit_code,
            } => Event::ToolResult {
                call_id: call_id.clone(),
                tool: tool.clone(),
                ok: *ok,
                output: f(output),
                exit_code: *exit_code,
            },
            Event::ToolProgress {
                call_id,
                tool,
                progress,
                total,
                message,
            } => Event::ToolProgress {
                call_id: call_id.clone(),
                tool: tool.clone(),
                progress: *progress,
                total: *total,
                message: message.as_deref().map(f),
            },
            Event::ToolLog {
                call_id,
                tool,
                server,
                level,
                data,
            } => {
                // The text of the JSON mapped, kept as JSON when it still is.
                let text = f(&data.to_string());
                Event::ToolLog {
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    server: server.clone(),
                    level: level.clone(),
                    data: serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
                }
            }
            Event::Error { message, kind } => Event::Error {
                message: f(message),
                kind: *kind,
            },
            Event::OwnTool {
                backend,
                activity,
                call_id,
            } => Event::OwnTool {
                backend: backend.clone(),
                activity: f(activity),
                call_id: call_id.clone(),
            },
            Event::ThinkingDelta { backend, text } => Event::ThinkingDelta {
                backend: backend.clone(),
                text: f(text),
            },
            Event::Plan { backend, entries } => Event::Plan {
                backend: backend.clone(),
                entries: entries
                    .iter()
                    .map(|e| PlanEntry {
                        content: f(&e.content),
                        ..e.clone()
                    })
                    .collect(),
            },
            Event::TextDelta { backend, text } => Event::TextDelta {
                backend: backend.clone(),
                text: f(text),
            },
            Event::ContextNotice { message } => Event::ContextNotice {
                message: f(message),
            },
            Event::Notice { message } => Event::Notice {
                message: f(message),
            },
            Event::Retrying {
                backend,
                retry,
                retries,
                wait_ms,
                reason,
            } => Event::Retrying {
                backend: backend.clone(),
                retry: *retry,
                retries: *retries,
                wait_ms: *wait_ms,
                reason: f(reason),
            },
            // Names, numbers and counts: nothing a model or a server wrote.
            Event::BackendStarted { .. }
            | Event::Waiting { .. }
            | Event::CutShort { .. }
            | Event::RateLimitWait { .. }
            | Event::Usage { .. }
            | Event::Context { .. }
            | Event::Summarized { .. }
            | Event::TurnFinished { .. } => self.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Streamed text and notices are text too: a secret in them is redacted like one in the
    /// whole answer.
    #[test]
    fn map_text_reaches_streamed_text_and_notices() {
        let f = |t: &str| t.replace("sk-secret", "[redacted]");
        let delta = Event::TextDelta {
            backend: "b".into(),
            text: "key sk-secret".into(),
        };
        let notice = Event::Notice {
            message: "sk-secret".into(),
        };
        assert_eq!(
            delta.map_text(&f),
            Event::TextDelta {
                backend: "b".into(),
                text: "key [redacted]".into()
            }
        );
        assert_eq!(
            notice.map_text(&f),
            Event::Notice {
                message: "[redacted]".into()
            }
        );
    }
}
