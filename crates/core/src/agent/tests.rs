//! The loop without a terminal or a process: an in-memory backend and an observer that
//! records events, to pin down the order and content of what the core reports.

use std::path::Path;
use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::backend::{Backend, Emit, Reply, Request};
use crate::builtins;
use crate::context::{Conversation, Message};
use crate::parse::{RawArgs, RawCall, Usage};
use crate::{BoxFuture, Error};

/// Answers with the scripted replies in order and remembers how long each conversation was.
struct Scripted {
    replies: Mutex<Vec<Reply>>,
    seen: Mutex<Vec<usize>>,
}

impl Backend for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn call<'a>(
        &'a self,
        request: Request<'a>,
        _emit: &'a mut Emit<'_>,
    ) -> BoxFuture<'a, Result<Reply, Error>> {
        self.seen
            .lock()
            .unwrap()
            .push(request.window.messages.len());
        let next = self.replies.lock().unwrap().remove(0);
        Box::pin(async move { Ok(next) })
    }
}

#[derive(Default)]
struct Recorder {
    events: Vec<Event>,
    answer: Option<Decision>,
}

impl Observer for Recorder {
    fn event(&mut self, event: &Event) {
        self.events.push(event.clone());
    }

    fn approve<'a>(&'a mut self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        let answer = self
            .answer
            .clone()
            .unwrap_or(Decision::Deny("test says no".into()));
        Box::pin(async move { answer })
    }
}

fn agent(replies: Vec<Reply>, dir: &Path) -> Agent {
    let backend = Scripted {
        replies: Mutex::new(replies),
        seen: Mutex::new(Vec::new()),
    };
    Agent::new(
        Box::new(backend),
        builtins::registry(None).unwrap(),
        AgentOptions {
            max_iterations: 4,
            max_tool_calls: 64,
            policy: Policy::default(),
            cwd: dir.to_path_buf(),
            root: crate::tools::Root::new(dir).unwrap(),
            context: Default::default(),
            artifacts: crate::context::Artifacts::new(dir.join("artifacts")),
            env: Default::default(),
            web: Default::default(),
        },
    )
}

fn call(name: &str, args: serde_json::Value) -> RawCall {
    RawCall {
        id: None,
        name: name.into(),
        args: RawArgs::Json(args),
        raw: String::new(),
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn a_tool_round_trip_emits_events_in_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x").unwrap();
    let usage = Usage {
        input: Some(10),
        output: Some(2),
        ..Default::default()
    };
    let replies = vec![
        Reply {
            text: "looking".into(),
            calls: vec![call("ls", json!({}))],
            usage: Some(usage),
            ..Default::default()
        },
        Reply {
            text: "one file".into(),
            ..Default::default()
        },
    ];
    let mut agent = agent(replies, dir.path());
    let mut rec = Recorder::default();
    let answer = block_on(agent.run_turn("what is here?", &mut rec)).unwrap();
    assert_eq!(answer, "one file");
    let kinds: Vec<&str> = rec
        .events
        .iter()
        .map(|e| match e {
            Event::TurnStarted { .. } => "turn_started",
            Event::BackendStarted { .. } => "backend_started",
            Event::BackendFinished { .. } => "backend_finished",
            Event::Text {
                final_answer: false,
                ..
            } => "text",
            Event::Text {
                final_answer: true, ..
            } => "final_text",
            Event::Usage { .. } => "usage",
            Event::ToolCall { .. } => "tool_call",
            Event::ToolResult { .. } => "tool_result",
            Event::TurnFinished { .. } => "turn_finished",
            Event::Context { .. } => "context",
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "turn_started",
            "backend_started",
            "backend_finished",
            "text",
            "usage",
            "tool_call",
            "tool_result",
            "backend_started",
            "backend_finished",
            "final_text",
            "context",
            "turn_finished"
        ]
    );
    assert!(rec.events.contains(&Event::ToolResult {
        call_id: "call_1".into(),
        tool: "ls".into(),
        ok: true,
        output: "a.txt  (1 byte)".into(),
        exit_code: None,
    }));
    // user, assistant with the call, its result, final assistant.
    assert_eq!(agent.conversation.messages.len(), 4);
    assert!(
        matches!(&agent.conversation.messages[2], Message::ToolResult { call_id, ok: true, .. } if call_id == "call_1")
    );
}

#[test]
fn denial_goes_back_to_the_model_and_always_is_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let write = |n: u32| {
        call(
            "write",
            json!({"path": format!("f{n}.txt"), "content": "x"}),
        )
    };
    let replies = vec![
        Reply {
            calls: vec![write(1)],
            ..Default::default()
        },
        Reply {
            calls: vec![write(2)],
            ..Default::default()
        },
        Reply {
            calls: vec![write(3)],
            ..Default::default()
        },
        Reply {
            text: "done".into(),
            ..Default::default()
        },
    ];
    let mut agent = agent(replies, dir.path());
    let mut rec = Recorder {
        answer: Some(Decision::Deny("not now".into())),
        ..Default::default()
    };
    assert_eq!(
        block_on(agent.run_turn("write files", &mut rec)).unwrap(),
        "done"
    );
    assert!(!dir.path().join("f1.txt").exists());
    let denials = rec
        .events
        .iter()
        .filter(|e| matches!(e, Event::ToolResult { ok: false, output, .. } if output == "not run: not now"))
        .count();
    assert_eq!(denials, 3);
    assert_eq!(
        rec.events
            .iter()
            .filter(|e| matches!(e, Event::ApprovalNeeded { .. }))
            .count(),
        3
    );

    let replies = vec![
        Reply {
            calls: vec![write(4)],
            ..Default::default()
        },
        Reply {
            calls: vec![write(5)],
            ..Default::default()
        },
        Reply {
            text: "done".into(),
            ..Default::default()
        },
    ];
    let mut agent = self::agent(replies, dir.path());
    let mut rec = Recorder {
        answer: Some(Decision::Always),
        ..Default::default()
    };
    block_on(agent.run_turn("write more", &mut rec)).unwrap();
    assert!(dir.path().join("f4.txt").exists() && dir.path().join("f5.txt").exists());
    // Asked once: "always" covers the second write.
    assert_eq!(
        rec.events
            .iter()
            .filter(|e| matches!(e, Event::ApprovalNeeded { .. }))
            .count(),
        1
    );
}

#[test]
fn the_iteration_cap_is_an_error_not_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let replies = (0..4)
        .map(|n| Reply {
            calls: vec![call("ls", json!({ "path": format!("{n}") }))],
            ..Default::default()
        })
        .collect();
    let mut agent = agent(replies, dir.path());
    let mut rec = Recorder::default();
    let err = block_on(agent.run_turn("loop", &mut rec)).unwrap_err();
    assert_eq!(err.kind, crate::ErrorKind::IterationCap);
    assert!(matches!(
        rec.events.last(),
        Some(Event::TurnFinished {
            iterations: 4,
            ok: false,
            ..
        })
    ));
}

#[test]
fn the_same_call_three_times_stops_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let replies = (0..4)
        .map(|_| Reply {
            calls: vec![call("ls", json!({}))],
            ..Default::default()
        })
        .collect();
    let mut agent = agent(replies, dir.path());
    let mut rec = Recorder::default();
    let err = block_on(agent.run_turn("loop", &mut rec)).unwrap_err();
    assert_eq!(err.kind, crate::ErrorKind::Repeated);
    assert_eq!(err.message, "stopped: the model asked for the same tool call 3 times in this turn (ls {}); it is not making progress");
    // Two calls ran; the third was answered without running, so no call lacks its result.
    let results = rec
        .events
        .iter()
        .filter(|e| matches!(e, Event::ToolResult { .. }))
        .count();
    assert_eq!(results, 3);
    assert!(matches!(
        agent.conversation.messages.last(),
        Some(Message::ToolResult { ok: false, .. })
    ));
}

#[test]
fn calls_past_the_cap_are_answered_and_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let replies = vec![
        Reply {
            calls: (0..66)
                .map(|n| call("ls", json!({ "path": format!("{n}") })))
                .collect(),
            ..Default::default()
        },
        Reply {
            text: "done".into(),
            ..Default::default()
        },
    ];
    let mut agent = agent(replies, dir.path());
    let mut rec = Recorder::default();
    block_on(agent.run_turn("many", &mut rec)).unwrap();
    let count = |f: fn(&Event) -> bool| rec.events.iter().filter(|e| f(e)).count();
    assert_eq!(count(|e| matches!(e, Event::ToolCall { .. })), 64);
    assert_eq!(count(|e| matches!(e, Event::ToolResult { .. })), 64);
    assert_eq!(count(|e| matches!(e, Event::Notice { .. })), 1);
    // Every call has its result in the conversation, the last two saying why they did not run.
    let results: Vec<&str> = agent
        .conversation
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult { output, .. } => Some(output.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 66);
    assert!(results[65].starts_with("not run: a reply may ask for at most 64 tool calls"));
    assert!(!results[63].starts_with("not run"), "{}", results[63]);
}

/// The point where a long history was trimmed is not applied to another history: after
/// `restore` (a loaded session, `/clear`), a short conversation is sent whole.
#[test]
fn a_restored_conversation_is_not_trimmed_at_the_old_point() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Scripted {
        replies: Mutex::new(vec![
            Reply {
                text: "ok".into(),
                ..Default::default()
            },
            Reply {
                text: "ok".into(),
                ..Default::default()
            },
        ]),
        seen: Mutex::new(Vec::new()),
    };
    let mut agent = Agent::new(
        Box::new(backend),
        builtins::registry(None).unwrap(),
        AgentOptions {
            max_iterations: 4,
            max_tool_calls: 64,
            policy: Policy::default(),
            cwd: dir.path().to_path_buf(),
            root: crate::tools::Root::new(dir.path()).unwrap(),
            context: crate::context::ContextSettings {
                max_tokens: 4_000,
                ..Default::default()
            },
            artifacts: crate::context::Artifacts::new(dir.path().join("artifacts")),
            env: Default::default(),
            web: Default::default(),
        },
    );
    let mut long = Conversation::new();
    for n in 0..40 {
        long.push(Message::user(format!("{n} {}", "x".repeat(2_000))));
        long.push(Message::Assistant {
            text: "noted".into(),
            tool_calls: vec![],
        });
    }
    agent.restore(long, 40, Default::default(), Default::default());
    block_on(agent.run_turn("and now?", &mut Recorder::default())).unwrap();
    let trimmed = agent.context_stats().unwrap();
    assert!(trimmed.messages < trimmed.history, "{trimmed:?}");

    let mut short = Conversation::new();
    short.push(Message::user("hi"));
    short.push(Message::Assistant {
        text: "hello".into(),
        tool_calls: vec![],
    });
    agent.restore(short, 1, Default::default(), Default::default());
    let mut rec = Recorder::default();
    block_on(agent.run_turn("more", &mut rec)).unwrap();
    // The request carried the whole short history and the new message.
    let sent = rec.events.iter().find_map(|e| match e {
        Event::Context { stats } => Some(*stats),
        _ => None,
    });
    let sent = sent.expect("a context event");
    assert_eq!((sent.messages, sent.history), (3, 3), "{sent:?}");
}
