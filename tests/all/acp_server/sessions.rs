//! Sessions across connections: `session/load` replays a saved conversation as it was shown
//! live and goes on; a session another run holds is refused with what an editor's user can do;
//! a prompt too big to read is refused, and its session goes on.

use serde_json::json;

use super::{call, drive, open};
use crate::common::Workspace;

fn steps(ws: &Workspace, more: Vec<serde_json::Value>) -> serde_json::Value {
    let mut all = open(ws);
    all.extend(more);
    json!({ "steps": all })
}

#[test]
fn a_loaded_session_replays_its_history_and_goes_on() {
    let ws = Workspace::new();
    ws.reply(1, "The first answer.\n");
    ws.reply(2, "The second answer.\n");
    let first = drive(
        &ws,
        steps(
            &ws,
            vec![json!({"op": "prompt", "session": 0, "text": "first question"})],
        ),
        &["--backend", "fake"],
    );
    let id = first.result(1)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!id.is_empty() && !id.starts_with("unsaved"), "{id}");
    assert_eq!(
        first.result(0)["result"]["agentCapabilities"]["loadSession"],
        true
    );
    let second = drive(
        &ws,
        json!({"steps": [
            {"op": "initialize"},
            {"op": "load", "sessionId": id, "cwd": ws.work()},
            {"op": "prompt", "session": 0, "text": "second question"},
        ]}),
        &["--backend", "fake"],
    );
    assert!(
        second.result(1)["result"].is_object(),
        "{}",
        second.result(1)
    );
    let users = second.of_kind("user_message_chunk");
    assert_eq!(users[0]["content"]["text"], "first question");
    assert!(
        second.message().starts_with("The first answer."),
        "{}",
        second.message()
    );
    assert!(second.message().contains("The second answer."));
    assert!(
        ws.prompt(2).contains("first question"),
        "the history is sent again"
    );
    let missing = drive(
        &ws,
        json!({"steps": [{"op": "initialize"}, {"op": "load", "sessionId": "session-nope", "cwd": ws.work()}]}),
        &["--backend", "fake"],
    );
    let error = &missing.result(1)["error"];
    assert!(
        error["message"].as_str().unwrap().contains("session-nope"),
        "{error}"
    );
}

/// A tool call replayed by `session/load` is titled and located as the live one was.
#[test]
fn a_replayed_tool_call_looks_as_it_did_live() {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("a.txt"), "hello\n").unwrap();
    ws.reply(1, call("read", json!({"path": "a.txt"})));
    ws.reply(2, "Read.\n");
    let live = drive(
        &ws,
        steps(
            &ws,
            vec![json!({"op": "prompt", "session": 0, "text": "read it"})],
        ),
        &["--backend", "fake"],
    );
    let id = live.result(1)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let loaded = drive(
        &ws,
        json!({"steps": [{"op": "initialize"}, {"op": "load", "sessionId": id, "cwd": ws.work()}]}),
        &["--backend", "fake"],
    );
    let (live, replayed) = (
        &live.of_kind("tool_call")[0],
        &loaded.of_kind("tool_call")[0],
    );
    assert_eq!(replayed["title"], live["title"], "{replayed}");
    assert_eq!(replayed["locations"], live["locations"], "{replayed}");
    assert_eq!(replayed["title"], "read: a.txt", "{replayed}");
}

/// A session another run holds is refused with what an editor's user can do: no CLI flag.
#[test]
fn a_session_in_use_is_refused_without_a_cli_flag() {
    let ws = Workspace::new();
    ws.reply(1, "Saved.\n");
    ws.run(&["--backend", "fake", "--session", "held", "first"])
        .expect_code(0);
    ws.gated_backend();
    let mut holder = ws
        .cmd(&["--backend", "slow", "--session", "held", "second"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(crate::common::poll(|| ws.gate_reached().then_some(())).is_some());
    let seen = drive(
        &ws,
        json!({"steps": [{"op": "initialize"}, {"op": "load", "sessionId": "held", "cwd": ws.work()}]}),
        &["--backend", "fake"],
    );
    ws.open_gate();
    holder.wait().unwrap();
    let message = seen.result(1)["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("session held is in use by process"),
        "{}",
        seen.result(1)
    );
    assert!(!message.contains("--wait-session"), "{message}");
}

/// A session whose file cannot be read is not loaded as another, empty one the editor never
/// hears of: the load is refused with why.
#[test]
fn a_session_whose_file_is_broken_is_refused_with_why() {
    let ws = Workspace::new();
    ws.reply(1, "Saved.\n");
    ws.run(&["--backend", "fake", "--session", "broken", "first"])
        .expect_code(0);
    let file = ws.path("data/agent-loop/sessions/broken/session.json");
    std::fs::write(&file, "{not json").unwrap();
    let seen = drive(
        &ws,
        json!({"steps": [{"op": "initialize"}, {"op": "load", "sessionId": "broken", "cwd": ws.work()}]}),
        &["--backend", "fake"],
    );
    let error = &seen.result(1)["error"];
    assert_eq!(error["code"], -32602, "{}", seen.result(1));
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("session file")
            && message.contains("broken/session.json is not valid")
            && message.contains("It is left untouched: to start session broken afresh"),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{not json");
}

/// An editor stops its agent with SIGTERM: the running turn is cancelled and saved as the
/// CLI saves one, its backend stopped, and the agent ends as a signal ends the CLI (143).
#[test]
fn sigterm_cancels_and_saves_the_running_turn() {
    let ws = Workspace::new();
    ws.fake_file("hang.1", "");
    let mut script = steps(
        &ws,
        vec![
            json!({"op": "prompt", "session": 0, "text": "wait for me", "wait": false}),
            json!({"op": "waitFile", "path": ws.path("fake/self.pid")}),
            json!({"op": "signal", "signal": "SIGTERM"}),
            json!({"op": "await", "session": 0}),
            json!({"op": "waitGone", "pidFile": ws.path("fake/child.pid")}),
        ],
    );
    script["exit"] = json!(143);
    let seen = drive(&ws, script, &["--backend", "fake"]);
    assert_eq!(
        seen.result(5)["result"]["stopReason"],
        "cancelled",
        "{}",
        seen.result(5)
    );
    let id = seen.result(1)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let saved =
        std::fs::read_to_string(ws.path(&format!("data/agent-loop/sessions/{id}/session.json")))
            .unwrap();
    assert!(
        saved.contains("wait for me") && saved.contains("cancelled"),
        "{saved}"
    );
}

/// A prompt past the cap on one message (16 MiB: something huge pasted in) is answered with
/// an error that says how big it was and by how much, and stderr says so; the connection and
/// the session go on, and the next prompt is answered in it.
#[test]
fn a_prompt_past_the_cap_is_refused_and_the_session_goes_on() {
    let ws = Workspace::new();
    ws.reply(1, "After the big one.\n");
    let seen = drive(
        &ws,
        steps(
            &ws,
            vec![
                json!({"op": "prompt", "session": 0, "text": "x", "repeat": 17 * 1024 * 1024}),
                json!({"op": "prompt", "session": 0, "text": "a small question"}),
            ],
        ),
        &["--backend", "fake"],
    );
    let refused = seen.result(2)["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        refused.starts_with("the prompt is too big: 17.0 MiB (")
            && refused
                .contains(" bytes), 1.0 MiB more than the 16 MiB agent-loop takes in one message"),
        "{}",
        seen.result(2)
    );
    assert_eq!(
        seen.result(3)["result"]["stopReason"],
        "end_turn",
        "{}",
        seen.result(3)
    );
    assert_eq!(seen.message(), "After the big one.");
    assert_eq!(ws.runs(), 1);
    assert!(ws.prompt(1).contains("a small question") && !ws.prompt(1).contains("xxxx"));
    assert!(
        seen.stderr.contains(
            "the editor sent a session/prompt request of 17.0 MiB: it was answered with an error"
        ),
        "{}",
        seen.stderr
    );
}
