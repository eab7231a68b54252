//! The public JSONL schema: the records of `--output jsonl` and of every session's
//! `log.jsonl`. [`Record`] is kept apart from the internal [`Event`] so the loop can change
//! without breaking readers; [`record`] maps one to the other.
//!
//! Every record has `ts`, `event`, `session_id`, `turn`, `backend` and `model`, then the
//! fields of its kind (the README lists them).

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{Event, OutputStream};

/// One line of JSONL output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// When it happened: RFC 3339, UTC, milliseconds.
    pub ts: String,
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
    SessionStart {},
    /// The task of a turn.
    UserMessage {
        text: String,
    },
    /// Output of the model as it arrives, before parsing (a line of a CLI backend's stdout).
    AssistantDelta {
        text: String,
    },
    /// A tool the agent CLI ran itself (`tools = "own"`), as its output showed it.
    OwnTool {
        text: String,
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
    /// Token counts the backend reported, and how long its call took.
    Usage {
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        total_tokens: Option<u64>,
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
        Event::TurnStarted { input, .. } => Body::UserMessage {
            text: input.clone(),
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
        Event::Text { text, final_answer } => Body::AssistantMessage {
            text: text.clone(),
            final_answer: *final_answer,
        },
        Event::ToolCall { call, .. } => Body::ToolCall {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            args: call.args.clone(),
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
        Event::Usage { usage, .. } => Body::Usage {
            input_tokens: usage.input,
            output_tokens: usage.output,
            total_tokens: usage.total,
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

/// `2024-05-06T07:08:09.123Z`.
pub fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::context::ToolCall;
    use crate::parse::Usage;

    const TS: &str = "2024-01-02T03:04:05.006Z";

    fn meta() -> Meta {
        Meta {
            session_id: "s1".into(),
            turn: 2,
            backend: Some("fake".into()),
            model: None,
            latency_ms: Some(1500),
        }
    }

    fn one(event: Event) -> Value {
        serde_json::to_value(record(&event, &meta(), TS).expect("a record")).unwrap()
    }

    #[test]
    fn tool_call_maps_to_the_whole_record() {
        let event = Event::ToolCall {
            call: ToolCall {
                id: "call_1".into(),
                name: "bash".into(),
                args: json!({"command": "ls"}),
            },
            summary: "ls".into(),
        };
        assert_eq!(
            record(&event, &meta(), TS),
            Some(Record {
                ts: TS.into(),
                body: Body::ToolCall {
                    call_id: "call_1".into(),
                    tool: "bash".into(),
                    args: json!({"command": "ls"}),
                },
                session_id: "s1".into(),
                turn: 2,
                backend: Some("fake".into()),
                model: None,
            })
        );
        assert_eq!(
            one(event),
            json!({"ts": TS, "event": "tool_call", "session_id": "s1", "turn": 2,
                   "backend": "fake", "model": null, "call_id": "call_1", "tool": "bash",
                   "args": {"command": "ls"}})
        );
    }

    #[test]
    fn every_kind_has_its_stable_keys() {
        let common =
            json!({"ts": TS, "session_id": "s1", "turn": 2, "backend": "fake", "model": null});
        let with = |fields: Value| {
            let mut all = common.clone();
            all.as_object_mut()
                .unwrap()
                .extend(fields.as_object().unwrap().clone());
            all
        };
        let cases = [
            (
                Event::TurnStarted {
                    turn: 2,
                    input: "task".into(),
                },
                json!({"event": "user_message", "text": "task"}),
            ),
            (
                Event::BackendOutput {
                    backend: "fake".into(),
                    stream: OutputStream::Stdout,
                    line: "partial".into(),
                },
                json!({"event": "assistant_delta", "text": "partial\n"}),
            ),
            (
                Event::Text {
                    text: "done".into(),
                    final_answer: true,
                },
                json!({"event": "assistant_message", "text": "done", "final_answer": true}),
            ),
            (
                Event::ToolResult {
                    call_id: "call_1".into(),
                    tool: "bash".into(),
                    ok: false,
                    output: "exit 1".into(),
                    exit_code: Some(1),
                },
                json!({"event": "tool_result", "call_id": "call_1", "tool": "bash", "ok": false,
                       "output": "exit 1", "exit_code": 1}),
            ),
            (
                Event::Usage {
                    backend: "fake".into(),
                    usage: Usage {
                        input: Some(10),
                        output: Some(2),
                        total: None,
                        cost: None,
                        ..Default::default()
                    },
                },
                json!({"event": "usage", "input_tokens": 10, "output_tokens": 2,
                       "total_tokens": null, "cost_usd": null, "latency_ms": 1500}),
            ),
            (
                Event::Error {
                    message: "boom".into(),
                },
                json!({"event": "error", "error": "boom"}),
            ),
            (
                Event::TurnFinished {
                    turn: 2,
                    iterations: 3,
                    ok: false,
                },
                json!({"event": "turn_end", "ok": false, "iterations": 3}),
            ),
        ];
        for (event, fields) in cases {
            assert_eq!(one(event), with(fields));
        }
    }

    #[test]
    fn progress_and_stderr_have_no_record() {
        for event in [
            Event::Waiting {
                backend: "fake".into(),
                elapsed_s: 10,
            },
            Event::BackendOutput {
                backend: "fake".into(),
                stream: OutputStream::Stderr,
                line: "log".into(),
            },
        ] {
            assert_eq!(record(&event, &meta(), TS), None);
        }
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let at = |secs: u64, ms: u64| {
            rfc3339(std::time::UNIX_EPOCH + Duration::from_millis(secs * 1000 + ms))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.007Z");
        assert_eq!(at(1_709_251_199, 999), "2024-02-29T23:59:59.999Z");
        assert_eq!(at(4_102_444_800, 0), "2100-01-01T00:00:00.000Z");
    }
}
