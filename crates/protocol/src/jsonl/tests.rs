//! The JSONL records against the schema: every variant's kind, keys and actor, whole records.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::event::{CallPurpose, CutReason, OutputStream, PlanEntry};
use crate::metrics::ContextStats;
use crate::usage::Usage;
use crate::ToolCall;

const TS: &str = "2024-01-02T03:04:05.006Z";

fn meta() -> Meta {
    Meta {
        session_id: "s1".into(),
        turn: 2,
        backend: Some("fake".into()),
        model: None,
    }
}

fn one(event: Event) -> Value {
    meta().value(TS, &event).expect("a record")
}

fn call(name: &str) -> ToolCall {
    ToolCall {
        id: "call_1".into(),
        name: name.into(),
        args: json!({"command": "ls"}),
    }
}

fn result(tool: &str, ok: bool) -> Event {
    Event::ToolResult {
        call_id: "call_1".into(),
        tool: tool.into(),
        ok,
        output: "exit 1".into(),
        exit_code: Some(1),
    }
}

#[test]
fn tool_call_is_the_whole_record() {
    let event = Event::ToolCall {
        call: call("bash"),
        summary: "ls".into(),
    };
    assert_eq!(
        meta().line(TS, &event).unwrap(),
        "{\"ts\":\"2024-01-02T03:04:05.006Z\",\"v\":2,\"level\":\"info\",\"actor\":\"assistant\",\
         \"event\":\"tool_call\",\"call_id\":\"call_1\",\"tool\":\"bash\",\
         \"args\":{\"command\":\"ls\"},\"session_id\":\"s1\",\"turn\":2,\"backend\":\"fake\",\
         \"model\":null}"
    );
}

#[test]
fn every_kind_has_its_stable_keys() {
    let common = json!({"ts": TS, "v": VERSION, "session_id": "s1", "turn": 2,
                        "backend": "fake", "model": null});
    // `level` and `actor` are checked against the schema by the next test.
    let with = |fields: Value| {
        let mut all = common.clone();
        all.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        all
    };
    let one = |event| {
        let mut v = one(event);
        v.as_object_mut().unwrap().remove("level");
        v.as_object_mut().unwrap().remove("actor");
        v
    };
    let cases = [
        (
            Event::TurnStarted {
                turn: 2,
                input: "task".into(),
                images: vec![],
            },
            json!({"event": "user_message", "text": "task", "images": []}),
        ),
        (
            Event::TurnStarted {
                turn: 2,
                input: "look".into(),
                images: vec![crate::Attached {
                    name: Some("a.png".into()),
                    mime: "image/png".into(),
                    bytes: 70,
                }],
            },
            json!({"event": "user_message", "text": "look",
                   "images": [{"name": "a.png", "mime": "image/png", "bytes": 70}]}),
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
            result("bash", false),
            json!({"event": "tool_result", "call_id": "call_1", "tool": "bash", "ok": false,
                   "output": "exit 1", "exit_code": 1}),
        ),
        (
            result("mcp.fs.read", true),
            json!({"event": "mcp_result", "call_id": "call_1", "tool": "mcp.fs.read",
                   "server": "fs", "ok": true, "output": "exit 1"}),
        ),
        (
            Event::Usage {
                backend: "fake".into(),
                usage: Usage {
                    input: Some(10),
                    output: Some(2),
                    ..Default::default()
                },
                latency_ms: 1500,
                purpose: CallPurpose::Answer,
            },
            json!({"event": "usage", "input_tokens": 10, "output_tokens": 2,
                   "total_tokens": null, "prompt_tokens": 10, "completion_tokens": 2,
                   "thinking_tokens": null, "cache_read_tokens": null,
                   "cache_write_tokens": null, "cost_usd": null, "latency_ms": 1500,
                   "for": "answer"}),
        ),
        (
            Event::Usage {
                backend: "fake".into(),
                usage: Usage::default(),
                latency_ms: 20,
                purpose: CallPurpose::Summary,
            },
            json!({"event": "usage", "input_tokens": null, "output_tokens": null,
                   "total_tokens": null, "prompt_tokens": null, "completion_tokens": null,
                   "thinking_tokens": null, "cache_read_tokens": null,
                   "cache_write_tokens": null, "cost_usd": null, "latency_ms": 20,
                   "for": "summary"}),
        ),
        (
            Event::Error {
                message: "boom".into(),
                kind: crate::ErrorKind::Backend,
            },
            json!({"event": "error", "error": "boom", "error_kind": "backend"}),
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

/// Which variant `event` is. No arm is a wildcard: a new variant does not compile here until
/// it has an arm (the next number, and [`VARIANTS`] one more), and then [`every_event`] must
/// have an example of it for the schema test to pass.
fn variant(event: &Event) -> usize {
    match event {
        Event::TurnStarted { .. } => 0,
        Event::BackendStarted { .. } => 1,
        Event::BackendOutput { .. } => 2,
        Event::Waiting { .. } => 3,
        Event::BackendFinished { .. } => 4,
        Event::TextDelta { .. } => 5,
        Event::ThinkingDelta { .. } => 6,
        Event::Plan { .. } => 7,
        Event::CutShort { .. } => 8,
        Event::RateLimitWait { .. } => 9,
        Event::Retrying { .. } => 10,
        Event::Text { .. } => 11,
        Event::ApprovalNeeded { .. } => 12,
        Event::ToolProgress { .. } => 13,
        Event::ToolLog { .. } => 14,
        Event::Usage { .. } => 15,
        Event::OwnTool { .. } => 16,
        Event::Context { .. } => 17,
        Event::Summarized { .. } => 18,
        Event::ContextNotice { .. } => 19,
        Event::Notice { .. } => 20,
        Event::TurnFinished { .. } => 21,
        Event::Error { .. } => 22,
        Event::ToolCall { .. } => 23,
        Event::ToolResult { .. } => 24,
    }
}
const VARIANTS: usize = 25;

/// An example of every variant of [`Event`], and of each kind of record one makes.
fn every_event() -> Vec<Event> {
    let s = String::new;
    let b = || "fake".to_string();
    vec![
        Event::TurnStarted {
            turn: 1,
            input: s(),
            images: vec![],
        },
        Event::BackendStarted {
            backend: b(),
            iteration: 1,
        },
        Event::BackendOutput {
            backend: b(),
            stream: OutputStream::Stdout,
            line: s(),
        },
        Event::Waiting {
            backend: b(),
            elapsed_s: 1,
        },
        Event::BackendFinished {
            backend: b(),
            elapsed_ms: 1,
            raw: None,
        },
        Event::TextDelta {
            backend: b(),
            text: s(),
        },
        Event::ThinkingDelta {
            backend: b(),
            text: s(),
        },
        Event::Plan {
            backend: b(),
            entries: vec![PlanEntry {
                content: s(),
                priority: s(),
                status: s(),
            }],
        },
        Event::CutShort {
            backend: b(),
            reason: CutReason::MaxTokens,
        },
        Event::RateLimitWait {
            backend: b(),
            wait_ms: 1,
            limit: s(),
        },
        Event::Retrying {
            backend: b(),
            retry: 1,
            retries: 2,
            wait_ms: 1,
            reason: s(),
        },
        Event::Text {
            text: s(),
            final_answer: true,
        },
        Event::ApprovalNeeded {
            call: call("bash"),
            summary: s(),
        },
        Event::ToolProgress {
            call_id: s(),
            tool: s(),
            progress: 1.0,
            total: None,
            message: None,
        },
        Event::ToolLog {
            call_id: s(),
            tool: s(),
            server: s(),
            level: "warning".into(),
            data: json!({ "k": 1 }),
        },
        Event::Usage {
            backend: b(),
            usage: Usage::default(),
            latency_ms: 1,
            purpose: CallPurpose::Summary,
        },
        Event::OwnTool {
            backend: b(),
            activity: s(),
            call_id: Some(s()),
        },
        Event::Context {
            stats: ContextStats {
                messages: 1,
                history: 1,
                summary: false,
                tokens: 1,
                budget: 1,
            },
        },
        Event::Summarized {
            backend: b(),
            messages: 1,
        },
        Event::ContextNotice { message: s() },
        Event::Notice { message: s() },
        Event::TurnFinished {
            turn: 1,
            iterations: 1,
            ok: true,
        },
        Event::Error {
            message: s(),
            kind: crate::ErrorKind::Backend,
        },
        Event::ToolCall {
            call: call("bash"),
            summary: s(),
        },
        Event::ToolCall {
            call: call("mcp.fs.read"),
            summary: s(),
        },
        result("bash", true),
        result("mcp.fs.read", false),
    ]
}

/// An example of every record no event makes.
fn every_body() -> Vec<Body> {
    let s = String::new;
    vec![
        Body::SessionStart { session: s() },
        Body::SessionClear { session: s() },
        Body::BackendOutput { raw: Value::Null },
        Body::BackendOutputDropped {
            stdout_dropped_bytes: 1,
            stderr_dropped_bytes: 0,
            stdout_unlogged_bytes: 2,
            stderr_unlogged_bytes: 0,
        },
    ]
}

/// The kind of `value`'s record after checking its keys and actor against [`SCHEMA`].
fn checked(value: Value) -> String {
    let event = value["event"].as_str().expect("an event key").to_string();
    let (_, actor, own) = SCHEMA
        .iter()
        .find(|(e, ..)| *e == event)
        .unwrap_or_else(|| panic!("{event} is not in SCHEMA"));
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    let mut expected: Vec<&str> = COMMON.iter().chain(own.iter()).copied().collect();
    keys.sort_unstable();
    expected.sort_unstable();
    assert_eq!(keys, expected, "{event}");
    assert_eq!(value["actor"], *actor, "{event}");
    assert!(["info", "warn", "error"].contains(&value["level"].as_str().unwrap()));
    event
}

#[test]
fn every_kind_of_record_has_exactly_the_keys_of_the_schema() {
    let events = every_event();
    let seen: BTreeSet<usize> = events.iter().map(variant).collect();
    assert_eq!(seen.len(), VARIANTS, "every_event lacks a variant");
    let mut kinds: BTreeSet<String> = events
        .iter()
        .filter_map(|e| meta().value(TS, e))
        .map(checked)
        .collect();
    kinds.extend(
        every_body()
            .into_iter()
            .map(|b| checked(meta().value(TS, b).unwrap())),
    );
    let schema: BTreeSet<String> = SCHEMA.iter().map(|(e, ..)| e.to_string()).collect();
    assert_eq!(kinds, schema, "a kind of SCHEMA that no variant makes");
}

#[test]
fn mcp_tools_are_mcp_records() {
    let value = one(Event::ToolCall {
        call: call("mcp.fs.read_file"),
        summary: String::new(),
    });
    assert_eq!(
        (&value["event"], &value["server"]),
        (&json!("mcp_call"), &json!("fs"))
    );
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
        assert_eq!(meta().value(TS, &event), None);
        assert_eq!(meta().line(TS, &event), None);
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

#[test]
fn output_only_left_out_of_the_log_is_no_warning() {
    let dropped = |stdout_dropped_bytes, stdout_unlogged_bytes| {
        let body = Body::BackendOutputDropped {
            stdout_dropped_bytes,
            stderr_dropped_bytes: 0,
            stdout_unlogged_bytes,
            stderr_unlogged_bytes: 0,
        };
        meta().value(TS, body).unwrap()["level"].clone()
    };
    assert_eq!(dropped(10, 0), "warn");
    assert_eq!(dropped(10, 5), "warn");
    assert_eq!(dropped(0, 5), "info");
}

/// A record reads back as what was written, for a reader of the log in Rust.
#[test]
fn records_of_the_log_read_back() {
    let record = meta().record(
        TS,
        Body::SessionStart {
            session: "notes".into(),
        },
    );
    let line = serde_json::to_string(&record).unwrap();
    assert_eq!(serde_json::from_str::<Record<Body>>(&line).unwrap(), record);
}
