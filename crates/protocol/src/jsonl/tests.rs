//! The JSONL records against the schema: every kind's keys, the mapping from events.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::usage::Usage;
use crate::ToolCall;

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
            v: VERSION,
            level: "info".into(),
            actor: "assistant".into(),
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
        json!({"ts": TS, "v": VERSION, "level": "info", "event": "tool_call",
               "actor": "assistant", "session_id": "s1", "turn": 2,
               "backend": "fake", "model": null, "call_id": "call_1", "tool": "bash",
               "args": {"command": "ls"}})
    );
}

#[test]
fn every_kind_has_its_stable_keys() {
    let common = json!({"ts": TS, "v": VERSION, "session_id": "s1", "turn": 2,
                        "backend": "fake", "model": null});
    // `level` and `actor` are checked by the next test.
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
                   "total_tokens": null, "prompt_tokens": 10, "completion_tokens": 2,
                   "thinking_tokens": null, "cost_usd": null, "latency_ms": 1500}),
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

/// One of every kind of record, to check against [`SCHEMA`].
fn one_of_each() -> Vec<Body> {
    let s = String::new;
    vec![
        Body::SessionStart { session: s() },
        Body::SessionClear { session: s() },
        Body::UserMessage {
            text: s(),
            images: vec![],
        },
        Body::AssistantDelta { text: s() },
        Body::OwnTool { text: s() },
        Body::ThinkingDelta { text: s() },
        Body::Plan { entries: vec![] },
        Body::CutShort {
            reason: crate::event::CutReason::MaxTokens,
        },
        Body::AssistantMessage {
            text: s(),
            final_answer: true,
        },
        Body::ToolCall {
            call_id: s(),
            tool: s(),
            args: Value::Null,
        },
        Body::ToolResult {
            call_id: s(),
            tool: s(),
            ok: true,
            output: s(),
            exit_code: None,
        },
        Body::McpCall {
            call_id: s(),
            tool: s(),
            server: s(),
            args: Value::Null,
        },
        Body::McpResult {
            call_id: s(),
            tool: s(),
            server: s(),
            ok: false,
            output: s(),
        },
        Body::ToolProgress {
            call_id: s(),
            tool: s(),
            progress: 1.0,
            total: None,
            message: None,
        },
        Body::McpLog {
            call_id: s(),
            tool: s(),
            server: s(),
            mcp_level: "warning".into(),
            data: serde_json::json!({ "k": 1 }),
        },
        Body::Usage {
            input_tokens: None,
            output_tokens: None,
            total_tokens: None,
            prompt_tokens: None,
            completion_tokens: None,
            thinking_tokens: None,
            cost_usd: None,
            latency_ms: None,
        },
        Body::Error { error: s() },
        Body::TurnEnd {
            ok: true,
            iterations: 1,
        },
        Body::RateLimitWait {
            wait_ms: 1,
            limit: s(),
        },
        Body::BackendOutput { raw: Value::Null },
        Body::BackendOutputDropped {
            stdout_dropped_bytes: 1,
            stderr_dropped_bytes: 0,
            stdout_unlogged_bytes: 2,
            stderr_unlogged_bytes: 0,
        },
    ]
}

#[test]
fn every_kind_of_record_has_exactly_the_keys_of_the_schema() {
    let bodies = one_of_each();
    assert_eq!(
        bodies.len(),
        SCHEMA.len(),
        "a kind is missing from the schema"
    );
    for body in bodies {
        let event = body.event();
        let value = serde_json::to_value(meta().record(TS, body)).unwrap();
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
        assert_eq!(value["event"], event);
        assert_eq!(value["actor"], *actor, "{event}");
        assert!(["info", "warn", "error"].contains(&value["level"].as_str().unwrap()));
    }
}

#[test]
fn mcp_tools_are_mcp_records() {
    let event = Event::ToolCall {
        call: ToolCall {
            id: "c".into(),
            name: "mcp.fs.read_file".into(),
            args: json!({}),
        },
        summary: String::new(),
    };
    let value = one(event);
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

#[test]
fn output_only_left_out_of_the_log_is_no_warning() {
    let dropped = |stdout_dropped_bytes, stdout_unlogged_bytes| {
        let body = Body::BackendOutputDropped {
            stdout_dropped_bytes,
            stderr_dropped_bytes: 0,
            stdout_unlogged_bytes,
            stderr_unlogged_bytes: 0,
        };
        serde_json::to_value(meta().record(TS, body)).unwrap()["level"].clone()
    };
    assert_eq!(dropped(10, 0), "warn");
    assert_eq!(dropped(10, 5), "warn");
    assert_eq!(dropped(0, 5), "info");
}
