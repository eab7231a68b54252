//! The public JSONL schema: the records of `--output jsonl` and of every session's
//! `log.jsonl`. A record is an [`Event`] serialised as it is (the event's serde attributes
//! say its kind and keys, so a new kind of record is a new variant, and nothing maps one type
//! onto another), or one of the few records no event makes ([`Body`]: a session's start and
//! end, the log's raw output), inside a [`Record`] that adds the keys every record has.
//!
//! Every record has the keys of [`COMMON`] (`ts`, `v`, `level`, `event`, `actor`,
//! `session_id`, `turn`, `backend`, `model`), then those [`SCHEMA`] lists for its kind.
//! [`SCHEMA`] is the documented contract: a unit test serialises every variant of [`Event`]
//! and [`Body`] and checks its kind, keys and actor against it (and fails for a variant it
//! has no example of), and an integration test checks the table of docs/sessions-and-logs.md
//! against it.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::Event;

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
pub const SCHEMA: [(&str, &str, &[&str]); 22] = [
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
            "cache_read_tokens",
            "cache_write_tokens",
            "cost_usd",
            "latency_ms",
            "for",
        ],
    ),
    ("error", "system", &["error", "error_kind"]),
    ("notice", "system", &["text"]),
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

/// One line of JSONL output: a [`Body`] or an [`Event`] (`&Event`), with the keys every
/// record has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record<B> {
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
    pub body: B,
    pub session_id: String,
    /// The turn it belongs to: 1 for the first task, 0 before any.
    pub turn: u32,
    pub backend: Option<String>,
    pub model: Option<String>,
}

/// What a record's body says of itself beside its keys: who acts in it, and its level.
pub trait Kind {
    fn actor(&self) -> &'static str;
    fn level(&self) -> &'static str;
}

impl Kind for Event {
    fn actor(&self) -> &'static str {
        Event::actor(self)
    }

    fn level(&self) -> &'static str {
        Event::level(self)
    }
}

impl<T: Kind + ?Sized> Kind for &T {
    fn actor(&self) -> &'static str {
        T::actor(self)
    }

    fn level(&self) -> &'static str {
        T::level(self)
    }
}

/// The records no [`Event`] makes: the front end's and the log's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Body {
    /// A session begins (a run, or `/clear`); `session` is its name.
    SessionStart { session: String },
    /// `/clear`: this session ends here; the next records belong to a new one.
    SessionClear { session: String },
    /// What a CLI backend printed, raw (in the session's log only).
    BackendOutput { raw: Value },
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

impl Kind for Body {
    fn actor(&self) -> &'static str {
        match self {
            Body::SessionClear { .. } => "user",
            _ => "system",
        }
    }

    fn level(&self) -> &'static str {
        match self {
            // Output no one will see again is worth a warning; output only left out of the
            // log (the answer holds it) is not.
            Body::BackendOutputDropped {
                stdout_dropped_bytes,
                stderr_dropped_bytes,
                ..
            } if stdout_dropped_bytes + stderr_dropped_bytes > 0 => "warn",
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
}

impl Meta {
    pub fn record<B: Kind>(&self, ts: &str, body: B) -> Record<B> {
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

    /// The record of `body` as a line (no newline); `None` for an event that has no record
    /// (its variant is `#[serde(skip)]`, or a line of stderr).
    pub fn line<B: Kind + Serialize>(&self, ts: &str, body: B) -> Option<String> {
        serde_json::to_string(&self.record(ts, body)).ok()
    }

    /// The record of `body` as a JSON value, `None` as for [`Meta::line`].
    pub fn value<B: Kind + Serialize>(&self, ts: &str, body: B) -> Option<Value> {
        serde_json::to_value(self.record(ts, body)).ok()
    }
}

/// `2024-05-06T07:08:09.123Z`.
pub fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

#[cfg(test)]
mod tests;
