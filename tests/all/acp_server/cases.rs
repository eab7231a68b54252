//! The cases of issue 45, one test each.

use serde_json::{json, Value};

use super::{call, drive, drive_with, open};
use crate::common::Workspace;
use crate::http::{setup, streamed, Format};

fn steps(ws: &Workspace, more: Vec<Value>) -> Value {
    let mut all = open(ws);
    all.extend(more);
    json!({ "steps": all })
}

#[test]
fn a_streamed_reply_arrives_as_message_chunks_with_usage() {
    let (ws, _server) = setup(Format::OpenAi, vec![streamed(Format::OpenAi, "text")], "");
    let script = steps(
        &ws,
        vec![json!({"op": "prompt", "session": 0, "text": "hello"})],
    );
    let seen = drive_with(
        &ws,
        script,
        &["--backend", "api", "--no-save"],
        &[("AGENT_LOOP_TEST_API_KEY", "test-key")],
    );
    let init = &seen.result(0)["result"];
    assert_eq!(init["protocolVersion"], 1);
    // With --no-save there is nothing to load.
    assert_eq!(init["agentCapabilities"]["loadSession"], false);
    assert_eq!(init["authMethods"], json!([]));
    let answer = seen.result(2);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(
        answer["result"]["_meta"]["usage"]["inputTokens"]
            .as_u64()
            .is_some(),
        "{answer}"
    );
    let chunks = seen.of_kind("agent_message_chunk");
    assert!(chunks.len() > 1, "streamed in pieces: {chunks:?}");
    assert_eq!(seen.message(), "The notes say hello.");
    assert!(!seen.of_kind("available_commands_update").is_empty());
}

#[test]
fn a_missing_key_is_an_auth_method_that_names_the_variable() {
    let (ws, _server) = setup(Format::OpenAi, vec![], "");
    let seen = drive(
        &ws,
        json!({"steps": [{"op": "initialize"}]}),
        &["--backend", "api"],
    );
    let methods = &seen.result(0)["result"]["authMethods"];
    assert_eq!(methods[0]["id"], "env:AGENT_LOOP_TEST_API_KEY", "{methods}");
}

/// A session on the fake agent whose first reply is one bash call that makes `made.txt`,
/// answered with `permission`.
fn bash_call(permission: &str) -> (Workspace, super::Seen) {
    let ws = Workspace::new();
    ws.reply(1, call("bash", json!({"command": "echo made > made.txt"})));
    ws.reply(2, "Done.\n");
    let mut script = steps(
        &ws,
        vec![json!({"op": "prompt", "session": 0, "text": "make it"})],
    );
    script["permission"] = json!(permission);
    let seen = drive(&ws, script, &["--backend", "fake"]);
    (ws, seen)
}

#[test]
fn an_allowed_tool_call_is_announced_asked_run_and_finished() {
    let (ws, seen) = bash_call("allow-once");
    assert_eq!(seen.result(2)["result"]["stopReason"], "end_turn");
    assert_eq!(
        std::fs::read_to_string(ws.work().join("made.txt")).unwrap(),
        "made\n"
    );
    let updates = seen.updates();
    let kinds: Vec<&str> = updates
        .iter()
        .filter_map(|u| u["sessionUpdate"].as_str())
        .collect();
    let announced = kinds
        .iter()
        .position(|k| *k == "tool_call")
        .expect("a tool_call");
    let finished = kinds
        .iter()
        .rposition(|k| *k == "tool_call_update")
        .unwrap();
    assert!(announced < finished, "{kinds:?}");
    let call = &updates[announced];
    assert_eq!(call["kind"], "execute");
    // Pending, the default, goes without saying.
    assert!(call.get("status").is_none_or(|s| s == "pending"), "{call}");
    assert_eq!(call["rawInput"]["command"], "echo made > made.txt");
    assert_eq!(updates[finished]["status"], "completed");
    let asked = &seen.all["permissions"][0];
    assert_eq!(asked["toolCall"]["toolCallId"], call["toolCallId"]);
    let options: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        options,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    assert!(seen.message().contains("Done."));
}

#[test]
fn a_rejected_tool_call_does_not_run() {
    let (ws, seen) = bash_call("reject-once");
    assert_eq!(seen.result(2)["result"]["stopReason"], "end_turn");
    assert!(!ws.work().join("made.txt").exists());
    let finished = seen.of_kind("tool_call_update");
    assert_eq!(finished.last().unwrap()["status"], "failed", "{finished:?}");
    assert!(ws.prompt(2).contains("rejected"), "the model hears of it");
}

#[test]
fn yes_runs_the_call_without_asking() {
    let ws = Workspace::new();
    ws.reply(1, call("bash", json!({"command": "echo made > made.txt"})));
    ws.reply(2, "Done.\n");
    let script = steps(
        &ws,
        vec![json!({"op": "prompt", "session": 0, "text": "make it"})],
    );
    let seen = drive(&ws, script, &["--backend", "fake", "--yes"]);
    assert!(ws.work().join("made.txt").exists());
    assert_eq!(seen.all["permissions"], json!([]));
}

#[test]
fn the_never_mode_runs_the_call_without_asking() {
    let ws = Workspace::new();
    ws.reply(1, call("bash", json!({"command": "echo made > made.txt"})));
    ws.reply(2, "Done.\n");
    let script = steps(
        &ws,
        vec![
            json!({"op": "request", "method": "session/set_mode", "params": {"sessionId": "unsaved-1", "modeId": "never"}}),
            json!({"op": "prompt", "session": 0, "text": "make it"}),
        ],
    );
    let seen = drive(&ws, script, &["--backend", "fake", "--no-save"]);
    assert!(seen.result(2)["result"].is_object(), "{}", seen.result(2));
    assert!(ws.work().join("made.txt").exists());
    assert_eq!(seen.all["permissions"], json!([]));
    assert_eq!(
        seen.of_kind("current_mode_update")[0]["currentModeId"],
        "never"
    );
}

#[test]
fn an_edit_is_finished_with_a_diff() {
    let (_ws, seen) = super::editor::edit_with_fs(json!(false));
    let finished = seen.of_kind("tool_call_update");
    let content = &finished.last().unwrap()["content"];
    let diff = content
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("no diff: {finished:?}"));
    assert_eq!(diff["oldText"], "old line\n");
    assert_eq!(diff["newText"], "new line\n");
    assert_eq!(seen.of_kind("tool_call")[0]["kind"], "edit");
}

/// Past a size the diff is left out: both of its texts go whole in one update.
#[test]
fn an_edit_of_a_big_file_is_finished_without_a_diff() {
    let ws = Workspace::new();
    let big = format!("old line\n{}", "padding line\n".repeat(200_000));
    std::fs::write(ws.work().join("big.txt"), &big).unwrap();
    ws.reply(
        1,
        call(
            "edit",
            json!({"path": "big.txt", "old_string": "old", "new_string": "new"}),
        ),
    );
    ws.reply(2, "Edited.\n");
    let script = steps(
        &ws,
        vec![json!({"op": "prompt", "session": 0, "text": "edit"})],
    );
    let seen = drive(&ws, script, &["--backend", "fake", "--yes"]);
    let finished = seen.of_kind("tool_call_update");
    let content = finished.last().unwrap()["content"].to_string();
    assert!(
        !content.contains("\"diff\""),
        "{}",
        &content[..content.len().min(300)]
    );
    assert!(std::fs::read_to_string(ws.work().join("big.txt"))
        .unwrap()
        .starts_with("new line"));
}

#[test]
fn cancel_stops_the_turn_and_its_backend_within_a_second() {
    let ws = Workspace::new();
    ws.fake_file("hang.1", "");
    let child = ws.path("fake/self.pid");
    let script = steps(
        &ws,
        vec![
            json!({"op": "prompt", "session": 0, "text": "wait", "wait": false}),
            json!({"op": "waitFile", "path": child}),
            json!({"op": "cancel", "session": 0}),
            json!({"op": "await", "session": 0}),
        ],
    );
    let seen = drive(&ws, script, &["--backend", "fake"]);
    let answer = seen.result(5);
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    let took =
        answer["answeredAt"].as_i64().unwrap() - seen.result(4)["cancelledAt"].as_i64().unwrap();
    assert!(took < 1000, "answered {took} ms after the cancel");
    super::assert_gone(&child, "the fake agent");
}

#[test]
fn an_mcp_server_from_session_new_joins_the_tools() {
    let ws = Workspace::new();
    let everything = crate::mcp::npm_server("mcp-server-everything");
    ws.reply(
        1,
        call(
            "mcp.everything.echo",
            json!({"message": "from the editor's server"}),
        ),
    );
    ws.reply(2, "Echoed.\n");
    let script = json!({"steps": [
        {"op": "initialize"},
        {"op": "new", "cwd": ws.work(), "mcpServers": [
            {"name": "everything", "command": everything, "args": [], "env": []}
        ]},
        {"op": "prompt", "session": 0, "text": "echo"},
    ]});
    let seen = drive(&ws, script, &["--backend", "fake", "--yes"]);
    let finished = seen.of_kind("tool_call_update");
    let last = finished
        .last()
        .unwrap_or_else(|| panic!("no tool call: {:?}", seen.updates()));
    assert_eq!(last["status"], "completed", "{last}");
    assert!(
        last["content"]
            .to_string()
            .contains("from the editor's server"),
        "{last}"
    );
}

#[test]
fn two_sessions_run_at_once_and_a_second_prompt_is_refused() {
    let ws = Workspace::new();
    ws.fake_file("hang.1", "");
    ws.reply(2, "The other session answers.\n");
    let script = json!({"steps": [
        {"op": "initialize"},
        {"op": "new", "cwd": ws.work()},
        {"op": "new", "cwd": ws.work()},
        {"op": "prompt", "session": 0, "text": "wait", "wait": false},
        {"op": "waitFile", "path": ws.path("fake/self.pid")},
        {"op": "prompt", "session": 0, "text": "again"},
        {"op": "prompt", "session": 1, "text": "meanwhile"},
        {"op": "cancel", "session": 0},
        {"op": "await", "session": 0},
    ]});
    let seen = drive(&ws, script, &["--backend", "fake", "--no-save"]);
    let sessions = &seen.all["sessions"];
    assert_ne!(sessions[0], sessions[1]);
    let refused = &seen.result(5)["error"];
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("already running"),
        "{refused}"
    );
    assert_eq!(seen.result(6)["result"]["stopReason"], "end_turn");
    assert_eq!(seen.result(8)["result"]["stopReason"], "cancelled");
    let other: Vec<Value> = seen
        .of_kind("agent_message_chunk")
        .into_iter()
        .filter(|u| u["sessionId"] == sessions[1])
        .collect();
    assert!(other[0]["content"]["text"]
        .as_str()
        .unwrap()
        .contains("other session"));
}

#[test]
fn bad_input_gets_errors_and_the_agent_goes_on() {
    let ws = Workspace::new();
    ws.reply(0, "Still here.\n");
    let script = steps(
        &ws,
        vec![
            json!({"op": "raw", "line": "{this is not json"}),
            json!({"op": "request", "method": "session/nothing"}),
            json!({"op": "request", "method": "session/prompt", "params": {"sessionId": "nope", "prompt": []}}),
            json!({"op": "prompt", "session": 0, "text": "hello"}),
        ],
    );
    let seen = drive(&ws, script, &["--backend", "fake"]);
    let lines = seen.all["agentLines"].to_string();
    assert!(lines.contains("-32700"), "a parse error: {lines}");
    assert_eq!(seen.result(3)["error"]["code"], -32601);
    let unknown = &seen.result(4)["error"];
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .contains("no session `nope`"),
        "{unknown}"
    );
    assert_eq!(seen.result(5)["result"]["stopReason"], "end_turn");
    assert!(seen.message().contains("Still here."));
}

#[test]
fn slash_commands_are_advertised_and_run() {
    let ws = Workspace::new();
    let script = steps(
        &ws,
        vec![
            json!({"op": "prompt", "session": 0, "text": "/backend"}),
            json!({"op": "prompt", "session": 0, "text": "/yes on"}),
        ],
    );
    let seen = drive(&ws, script, &["--backend", "fake", "--no-save"]);
    // After the session/new answer: an editor drops updates of a session it does not know yet.
    let lines: Vec<&str> = seen.all["agentLines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let at = |what: &str| lines.iter().position(|l| l.contains(what)).unwrap();
    assert!(
        at("\"sessionId\":\"unsaved-1\",\"modes\"") < at("available_commands_update"),
        "{lines:#?}"
    );
    let advertised = &seen.of_kind("available_commands_update")[0]["availableCommands"];
    let names: Vec<&str> = advertised
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in ["clear", "model", "compact", "undo", "retry", "context"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(!names.contains(&"load"), "{names:?}");
    assert!(
        seen.message().contains("[backend fake"),
        "{}",
        seen.message()
    );
    assert_eq!(
        seen.of_kind("current_mode_update")[0]["currentModeId"],
        "never"
    );
    assert_eq!(ws.runs(), 0, "a command is no prompt");
}

#[test]
fn the_backend_option_brings_the_new_backends_budget() {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[backends.small]\ncommand = \"{}\"\nmax_context_tokens = 1100\n",
        crate::common::fixture("agents/scripted.sh").display()
    ));
    let big = "word ".repeat(1_000);
    let script = steps(
        &ws,
        vec![
            json!({"op": "request", "method": "session/set_config_option", "params": {"sessionId": "unsaved-1", "configId": "backend", "value": "small"}}),
            json!({"op": "prompt", "session": 0, "text": big}),
        ],
    );
    let seen = drive(&ws, script, &["--backend", "fake", "--no-save"]);
    assert!(seen.result(2)["result"].is_object(), "{}", seen.result(2));
    let refused = &seen.result(3)["error"];
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("does not fit in max_context_tokens (1100)"),
        "{refused}"
    );
    assert_eq!(ws.runs(), 0);
}

/// A turn that cannot go on ends with ACP's stop for it, the reason as the agent's message:
/// the same call a third time is `max_turn_requests`, as the iteration cap is.
#[test]
fn a_repeated_call_ends_the_prompt_as_max_turn_requests() {
    let ws = Workspace::new();
    ws.reply(0, call("ls", json!({"path": "."})));
    let script = steps(
        &ws,
        vec![json!({"op": "prompt", "session": 0, "text": "look"})],
    );
    let seen = drive(&ws, script, &["--backend", "fake"]);
    let answer = seen.result(2);
    assert_eq!(
        answer["result"]["stopReason"], "max_turn_requests",
        "{answer}"
    );
    assert!(
        seen.message().contains("same tool call 3 times"),
        "{}",
        seen.message()
    );
}

/// `_meta.usage` is the prompt's own calls: a `/clear` after a turn (a new session, its totals
/// from zero) reports none, where it used to underflow and panic, leaving the session refusing
/// every later prompt; a backend that reports no tokens gives nulls, not zeros.
#[test]
fn usage_is_the_prompts_own_and_unknown_is_null() {
    let ws = Workspace::new();
    ws.reply(1, "First.\nTokens: 10 in, 2 out\n");
    ws.reply(2, "Second, uncounted.\n");
    let script = steps(
        &ws,
        vec![
            json!({"op": "prompt", "session": 0, "text": "one"}),
            json!({"op": "prompt", "session": 0, "text": "/clear"}),
            json!({"op": "prompt", "session": 0, "text": "two"}),
        ],
    );
    let seen = drive(&ws, script, &["--backend", "fake"]);
    let usage = |step: usize| seen.result(step)["result"]["_meta"]["usage"].clone();
    assert_eq!(usage(2)["inputTokens"], 10, "{}", seen.result(2));
    assert_eq!(usage(2)["outputTokens"], 2, "{}", seen.result(2));
    for step in [3, 4] {
        let answer = seen.result(step);
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        assert!(usage(step)["inputTokens"].is_null(), "{answer}");
        assert!(usage(step)["totalTokens"].is_null(), "{answer}");
    }
}

/// An empty prompt is refused as the CLI refuses an empty task; a command kept from editors
/// says why it is.
#[test]
fn an_empty_prompt_is_refused_and_kept_commands_say_why() {
    let ws = Workspace::new();
    ws.reply(0, "Answered.\n");
    let script = steps(
        &ws,
        vec![
            json!({"op": "prompt", "session": 0, "text": "   "}),
            json!({"op": "prompt", "session": 0, "text": "/compare a,b x"}),
        ],
    );
    let seen = drive(&ws, script, &["--backend", "fake"]);
    assert_eq!(
        seen.result(2)["error"]["code"],
        -32602,
        "{}",
        seen.result(2)
    );
    assert_eq!(ws.runs(), 0);
    assert!(
        seen.message()
            .contains("/compare is not offered in an editor's session: answers of several"),
        "{}",
        seen.message()
    );
}

/// An editor's session works in its own folder, which need not be agent-loop's: `/export`
/// with a relative name writes there, beside the files its tools see.
#[test]
fn an_export_in_an_editors_session_lands_in_the_sessions_folder() {
    let ws = Workspace::new();
    ws.reply(1, "Hello there.\n");
    let project = ws.work().join("project");
    std::fs::create_dir(&project).unwrap();
    let script = json!({"steps": [
        {"op": "initialize"},
        {"op": "new", "cwd": project},
        {"op": "prompt", "session": 0, "text": "hello"},
        {"op": "prompt", "session": 0, "text": "/export notes.md"},
    ]});
    let seen = drive(&ws, script, &["--backend", "fake", "--no-save"]);
    assert!(
        seen.message().contains("[wrote 2 messages to notes.md]"),
        "{}",
        seen.message()
    );
    assert!(project.join("notes.md").is_file());
    assert!(!ws.work().join("notes.md").exists());
}
