//! How many sessions `agent-loop acp` holds open: `session/close` ends one (its MCP servers
//! stopped, its lock let go), and past the cap the session unused longest is closed and then
//! reopened, its conversation kept, when the editor prompts it again.

use serde_json::{json, Value};

use super::drive;
use crate::common::{fixture, Workspace};

/// The tiny MCP server, as `session/new` gives it, writing its pid and its child's to `pids`.
fn tiny(pids: &std::path::Path) -> Value {
    json!([{
        "name": "tiny",
        "command": fixture("mcp/tiny-server.js"),
        "args": [],
        "env": [{"name": "TINY_PID_FILE", "value": pids}],
    }])
}

fn text_of(seen: &super::Seen, session: &Value) -> String {
    seen.of_kind("user_message_chunk")
        .into_iter()
        .chain(seen.of_kind("agent_message_chunk"))
        .filter(|u| &u["sessionId"] == session)
        .map(|u| u["content"]["text"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_closed_session_stops_its_servers_and_lets_its_session_go() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let pids = ws.path("pids");
    let script = json!({"steps": [
        {"op": "initialize"},
        {"op": "new", "cwd": ws.work(), "mcpServers": tiny(&pids)},
        {"op": "prompt", "session": 0, "text": "remember this"},
        {"op": "close", "session": 0},
        {"op": "waitGone", "pidFile": pids},
        {"op": "prompt", "session": 0, "text": "still there?"},
        {"op": "close", "session": 0},
        // Closed, it can be loaded again: its lock was let go.
        {"op": "load", "session": 0, "cwd": ws.work()},
    ]});
    let seen = drive(&ws, script, &["--backend", "fake"]);
    let init = &seen.result(0)["result"]["agentCapabilities"];
    assert_eq!(init["sessionCapabilities"]["close"], json!({}), "{init}");
    assert_eq!(seen.result(2)["result"]["stopReason"], "end_turn");
    assert_eq!(seen.result(3)["result"], json!({}), "{}", seen.result(3));
    assert_eq!(seen.result(4)["ok"], true);
    for step in [5, 6] {
        let error = seen.result(step)["error"]["message"].to_string();
        assert!(error.contains("no session"), "{error}");
    }
    assert!(
        seen.result(7)["result"]["modes"].is_object(),
        "{}",
        seen.result(7)
    );
    let loaded = &seen.all["sessions"][1];
    assert!(text_of(&seen, loaded).contains("remember this"));
}

#[test]
fn past_the_cap_the_session_unused_longest_closes_and_reopens_when_prompted() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    // The reopened session's turn runs bash: in the mode it was given, without asking.
    ws.reply(2, super::call("bash", json!({"command": "touch made.txt"})));
    let pids = ws.path("pids");
    let mut steps = vec![
        json!({"op": "initialize"}),
        json!({"op": "new", "cwd": ws.work(), "mcpServers": tiny(&pids)}),
        json!({"op": "prompt", "session": 0, "text": "the first words"}),
        json!({"op": "setMode", "session": 0, "mode": "never"}),
    ];
    // Sixteen more: one past the cap, so session 0, unused longest, is closed.
    for _ in 0..16 {
        steps.push(json!({"op": "new", "cwd": ws.work()}));
    }
    steps.push(json!({"op": "waitGone", "pidFile": pids}));
    steps.push(json!({"op": "prompt", "session": 0, "text": "the second words"}));
    let seen = drive(&ws, json!({ "steps": steps }), &["--backend", "fake"]);
    let gone = seen.result(20)["pids"].clone();
    let answer = seen.result(21);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(ws.work().join("made.txt").exists());
    assert_eq!(seen.all["permissions"], json!([]));
    // Reopened with the MCP server it was opened with: a new one runs.
    let again: Vec<i64> = std::fs::read_to_string(&pids)
        .unwrap()
        .split_whitespace()
        .map(|pid| pid.parse().unwrap())
        .collect();
    assert!(gone.as_array().is_some_and(|g| g.len() == 2), "{gone}");
    assert_ne!(json!(again), gone);
    // And with its conversation: the session file holds both turns.
    let name = seen.all["sessions"][0].as_str().unwrap();
    let file = ws.path(&format!("data/agent-loop/sessions/{name}/session.json"));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(saved["turns"], 2, "{saved}");
    let messages = saved["conversation"].to_string();
    assert!(
        messages.contains("the first words") && messages.contains("the second words"),
        "{messages}"
    );
}
