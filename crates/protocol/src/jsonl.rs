//! The public JSONL schema: the records of `--output jsonl` and of every session's
//! `log.jsonl`. [`Record`] is kept apart from the internal [`Event`] so the loop can change
//! without breaking readers; [`record`] maps one to the other.
//!
//! Every record has the keys of [`COMMON`] (`ts`, `v`, `level`, `event`, `actor`,
//! `session_id`, `turn`, `backend`, `model`), then those [`SCHEMA`] lists for its kind.
//! [`SCHEMA`] is the one source of truth: a unit test checks every kind of record against it,
//! and an integration test checks the table of docs/sessions-and-logs.md against it.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{CutReason, Event, OutputStream, PlanEntry};

/// The version of this schema, the `v` of every record: raised when a key changes meaning or
/// goes away (new keys and kinds do not raise it).
pub const VERSION: u32 = 2;

/// The keys every record has.
pub const COMMON: [&str; 9] = [
    "ts",
    "v",
    "level",
    "event",
    "actor",
    "session_id",
    "turn",
    "backend",
    "model",
];

/// Every kind of record (`event`), who acts in it (`actor`), and its own keys.
pub const SCHEMA: [(&str, &str, &[&str]); 21] = [
    ("session_start", "system", &["session"]),
    ("session_clear", "user", &["session"]),
    ("user_message", "user", &["text", "images"]),
    ("assistant_delta", "assistant", &["text"]),
    ("own_tool", "assistant", &["text"]),
    ("thinking_delta", "assistant", &["text"]),
    ("plan", "assistant", &["entries"]),
    ("cut_short", "assistant", &["reason"]),
    ("assistant_message", "assistant", &["text", "final_answer"]),
    ("tool_call", "assistant", &["call_id", "tool", "args"]),
    (
        "tool_result",
        "tool",
        &["call_id", "tool", "ok", "output", "exit_code"],
    ),
    (
        "mcp_call",
        "assistant",
        &["call_id", "tool", "server", "args"],
    ),
    (
        "mcp_result",
        "tool",
        &["call_id", "tool", "server", "ok", "output"],
    ),
    (
        "tool_progress",
        "tool",
        &["call_id", "tool", "progress", "total", "message"],
    ),
    (
        "mcp_log",
        "tool",
        &["call_id", "tool", "server", "mcp_level", "data"],
    ),
    (
        "usage",
        "assistant",
        &[
            "input_tokens",
            "output_tokens",
            "total_tokens",
            "prompt_tokens",
            "completion_tokens",
            "thinking_tokens",
            "cost_usd",
            "latency_ms",
        ],
    ),
    ("error", "system", &["error"]),
    ("turn_end", "system", &["ok", "iterations"]),
    ("rate_limit_wait", "system", &["wait_ms", "limit"]),
    ("backend_output", "system", &["raw"]),
    (
        "backend_output_dropped",
        "system",
        &[
            "stdout_dropped_bytes",
            "stderr_dropped_bytes",
            "stdout_unlogged_bytes",
            "stderr_unlogged_bytes",
        ],
    ),
];

/// One line of JSONL output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// When it happened: RFC 3339, UTC, milliseconds.
    pub ts: String,
    /// [`VERSION`].
    pub v: u32,
    /// `info`, `warn` or `error`.
    pub level: String,
    /// Who acted: `user`, `assistant`, `tool` or `system` ([`SCHEMA`]).
    pub actor: String,
    /// `event` and the fields of this kind of record.
    #[serde(flatten)]
    pub body: Body,
    pub session_id: String,
    /// The turn it belongs to: 1 for the first task, 0 before any.
    pub turn: u32,
    pub backend: Option<String>,
    pub model: Option<String>,
}

/// The kinds of record, by their `event` key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Body {
    /// A session begins (a run, or `/clear`); `session` is its name.
    SessionStart {
        session: String,
    },
    /// `/clear`: this session ends here; the next records belong to a new one.
    SessionClear {
        session: String,
    },
    /// The task of a turn, with the images attached to it (name, type, size; `[]` when
    /// none, so every record of a kind has the same keys).
    UserMessage {
        text: String,
        #[serde(default)]
        images: Vec<crate::event::Attached>,
    },
    /// Output of the model as it arrives, before parsing (a line of a CLI backend's stdout).
    AssistantDelta {
        text: String,
    },
    /// A tool the agent CLI ran itself (`tools = "own"`), as its output showed it.
    OwnTool {
        text: String,
    },
    /// A piece of the model's thinking as it streams in; never part of the answer.
    ThinkingDelta {
        text: String,
    },
    /// The agent's plan, whole, each time it changes: `content`, `priority`, `status` each.
    Plan {
        entries: Vec<PlanEntry>,
    },
    /// The model stopped before its answer was done: `max_tokens` (its output limit) or
    /// `refusal`; the reply so far is the answer.
    CutShort {
        reason: CutReason,
    },
    /// The model's reply, parsed; `final_answer` marks the one that ends the turn.
    AssistantMessage {
        text: String,
        final_answer: bool,
    },
    ToolCall {
        call_id: String,
        tool: String,
        args: Value,
    },
    ToolResult {
        call_id: String,
        tool: String,
        ok: bool,
        output: String,
        exit_code: Option<i32>,
    },
    /// A call of an MCP server's tool (`tool` is `mcp.SERVER.TOOL`).
    McpCall {
        call_id: String,
        tool: String,
        server: String,
        args: Value,
    },
    McpResult {
        call_id: String,
        tool: String,
        server: String,
        ok: bool,
        output: String,
    },
    /// How far a running tool has come (an MCP server's progress notifications; the latest
    /// when they come faster than they are written).
    ToolProgress {
        call_id: String,
        tool: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// A log message of a running tool's MCP server, at its `mcp_level` (the record's `level`
    /// is `warn` from `warning` up, `error` from `error` up).
    McpLog {
        call_id: String,
        tool: String,
        server: String,
        mcp_level: String,
        data: serde_json::Value,
    },
    /// Token counts the backend reported, and how long its call took. `prompt_tokens` and
    /// `completion_tokens` repeat the input and output counts under the names log pipelines
    /// expect; `thinking_tokens` counts reasoning tokens where the backend reports them.
    Usage {
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        total_tokens: Option<u64>,
        prompt_tokens: Option<u64>,
        completion_tokens: Option<u64>,
        thinking_tokens: Option<u64>,
        cost_usd: Option<f64>,
        latency_ms: Option<u64>,
    },
    Error {
        error: String,
    },
    TurnEnd {
        ok: bool,
        iterations: u32,
    },
    /// The backend's rate limit holds a request back before it is sent.
    RateLimitWait {
        wait_ms: u64,
        limit: String,
    },
    /// What a CLI backend printed, raw (in the session's log only).
    BackendOutput {
        raw: Value,
    },
    /// Bytes past `max_output_bytes`, drained and dropped, and bytes kept but left out of the
    /// `backend_output` record, which shares the cap with the answer (in the session's log
    /// only).
    BackendOutputDropped {
        stdout_dropped_bytes: u64,
        stderr_dropped_bytes: u64,
        stdout_unlogged_bytes: u64,
        stderr_unlogged_bytes: u64,
    },
}

impl Body {
    /// The `event` key of this kind of record.
    pub fn event(&self) -> &'static str {
        match self {
            Body::SessionStart { .. } => "session_start",
            Body::SessionClear { .. } => "session_clear",
            Body::UserMessage { .. } => "user_message",
            Body::AssistantDelta { .. } => "assistant_delta",
            Body::OwnTool { .. } => "own_tool",
            Body::ThinkingDelta { .. } => "thinking_delta",
            Body::Plan { .. } => "plan",
            Body::CutShort { .. } => "cut_short",
            Body::AssistantMessage { .. } => "assistant_message",
            Body::ToolCall { .. } => "tool_call",
            Body::ToolResult { .. } => "tool_result",
            Body::McpCall { .. } => "mcp_call",
            Body::McpResult { .. } => "mcp_result",
            Body::ToolProgress { .. } => "tool_progress",
            Body::McpLog { .. } => "mcp_log",
            Body::Usage { .. } => "usage",
            Body::Error { .. } => "error",
            Body::TurnEnd { .. } => "turn_end",
            Body::RateLimitWait { .. } => "rate_limit_wait",
            Body::BackendOutput { .. } => "backend_output",
            Body::BackendOutputDropped { .. } => "backend_output_dropped",
        }
    }

    fn actor(&self) -> &'static str {
        let event = self.event();
        SCHEMA
            .iter()
            .find(|(e, ..)| *e == event)
            .map_or("system", |(_, actor, _)| actor)
    }

    fn level(&self) -> &'static str {
        match self {
            Body::Error { .. } => "error",
            Body::TurnEnd { ok: false, .. } => "warn",
            // Output no one will see again is worth a warning; output only left out of the
            // log (the answer holds it) is not.
            Body::BackendOutputDropped {
                stdout_dropped_bytes,
                stderr_dropped_bytes,
                ..
            } if stdout_dropped_bytes + stderr_dropped_bytes > 0 => "warn",
            Body::ToolResult { ok: false, .. } | Body::McpResult { ok: false, .. } => "warn",
            Body::CutShort { .. } => "warn",
            Body::McpLog { mcp_level, .. } => match mcp_level.as_str() {
                "warning" => "warn",
                "error" | "critical" | "alert" | "emergency" => "error",
                _ => "info",
            },
            _ => "info",
        }
    }
}

/// What every record repeats, tracked from the events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    pub session_id: String,
    pub turn: u32,
    pub backend: Option<String>,
    pub model: Option<String>,
    /// Duration of the last backend call, for the usage record that follows it.
    pub latency_ms: Option<u64>,
}

impl Meta {
    pub fn record(&self, ts: &str, body: Body) -> Record {
        Record {
            ts: ts.to_string(),
            v: VERSION,
            level: body.level().to_string(),
            actor: body.actor().to_string(),
            body,
            session_id: self.session_id.clone(),
            turn: self.turn,
            backend: self.backend.clone(),
            model: self.model.clone(),
        }
    }
}

/// The record for `event`, if it has one (progress and approval events have none).
pub fn record(event: &Event, meta: &Meta, ts: &str) -> Option<Record> {
    let body = match event {
        Event::TurnStarted { input, images, .. } => Body::UserMessage {
            text: input.clone(),
            images: images.clone(),
        },
        Event::BackendOutput {
            stream: OutputStream::Stdout,
            line,
            ..
        } => Body::AssistantDelta {
            text: format!("{line}\n"),
        },
        Event::TextDelta { text, .. } => Body::AssistantDelta { text: text.clone() },
        Event::OwnTool { activity, .. } => Body::OwnTool {
            text: activity.clone(),
        },
        Event::ThinkingDelta { text, .. } => Body::ThinkingDelta { text: text.clone() },
        Event::Plan { entries, .. } => Body::Plan {
            entries: entries.clone(),
        },
        Event::CutShort { reason, .. } => Body::CutShort { reason: *reason },
        Event::Text { text, final_answer } => Body::AssistantMessage {
            text: text.clone(),
            final_answer: *final_answer,
        },
        Event::ToolCall { call, .. } => match mcp_server(&call.name) {
            Some(server) => Body::McpCall {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                server,
                args: call.args.clone(),
            },
            None => Body::ToolCall {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                args: call.args.clone(),
            },
        },
        Event::ToolResult {
            call_id,
            tool,
            ok,
            output,
            ..
        } if mcp_server(tool).is_some() => Body::McpResult {
            call_id: call_id.clone(),
            tool: tool.clone(),
            server: mcp_server(tool).unwrap_or_default(),
            ok: *ok,
            output: output.clone(),
        },
        Event::ToolResult {
            call_id,
            tool,
            ok,
            output,
            exit_code,
        } => Body::ToolResult {
            call_id: call_id.clone(),
            tool: tool.clone(),
            ok: *ok,
            output: output.clone(),
            exit_code: *exit_code,
        },
        Event::ToolProgress {
            call_id,
            tool,
            progress,
            total,
            message,
        } => Body::ToolProgress {
            call_id: call_id.clone(),
            tool: tool.clone(),
            progress: *progress,
            total: *total,
            message: message.clone(),
        },
        Event::ToolLog {
            call_id,
            tool,
            server,
            level,
            data,
        } => Body::McpLog {
            call_id: call_id.clone(),
            tool: tool.clone(),
            server: server.clone(),
            mcp_level: level.clone(),
            data: data.clone(),
        },
        Event::Usage { usage, .. } => Body::Usage {
            input_tokens: usage.input,
            output_tokens: usage.output,
            total_tokens: usage.total,
            prompt_tokens: usage.input,
            completion_tokens: usage.output,
            thinking_tokens: usage.thinking,
            cost_usd: usage.cost,
            latency_ms: meta.latency_ms,
        },
        Event::Error { message } => Body::Error {
            error: message.clone(),
        },
        Event::TurnFinished { ok, iterations, .. } => Body::TurnEnd {
            ok: *ok,
            iterations: *iterations,
        },
        Event::RateLimitWait { wait_ms, limit, .. } => Body::RateLimitWait {
            wait_ms: *wait_ms,
            limit: limit.clone(),
        },
        Event::BackendStarted { .. }
        | Event::BackendOutput { .. }
        | Event::Waiting { .. }
        | Event::BackendFinished { .. }
        | Event::ApprovalNeeded { .. }
        | Event::Retrying { .. }
        | Event::Context { .. }
        | Event::Summarized { .. }
        | Event::ContextNotice { .. }
        | Event::Notice { .. } => return None,
    };
    Some(meta.record(ts, body))
}

/// The server of an MCP tool's name, `mcp.SERVER.TOOL`.
fn mcp_server(tool: &str) -> Option<String> {
    let rest = tool.strip_prefix("mcp.")?;
    rest.split_once('.').map(|(server, _)| server.to_string())
}

/// `2024-05-06T07:08:09.123Z`.
pub fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

#[cfg(test)]
mod tests;
