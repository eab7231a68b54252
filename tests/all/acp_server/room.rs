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

/// A session with the tiny MCP server (its pids in `pids`), prompted once: "remember this".
fn prompted_with_server(ws: &Workspace, pids: &std::path::Path) -> Vec<Value> {
    ws.reply(0, "ok\n");
    vec![
        json!({"op": "initialize"}),
        json!({"op": "new", "cwd": ws.work(), "mcpServers": tiny(pids)}),
        json!({"op": "prompt", "session": 0, "text": "remember this"}),
    ]
}

#[test]
fn a_closed_session_stops_its_servers_and_lets_its_session_go() {
    let ws = Workspace::new();
    let pids = ws.path("pids");
    let mut steps = prompted_with_server(&ws, &pids);
    steps.extend([
        json!({"op": "close", "session": 0}),
        json!({"op": "waitGone", "pidFile": pids}),
        json!({"op": "prompt", "session": 0, "text": "still there?"}),
        json!({"op": "close", "session": 0}),
        // Closed, it can be loaded again: its lock was let go.
        json!({"op": "load", "session": 0, "cwd": ws.work()}),
    ]);
    let seen = drive(&ws, json!({ "steps": steps }), &["--backend", "fake"]);
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
fn a_load_sent_while_its_session_closes_waits_for_the_close() {
    // An editor may reopen a thread it has just closed without waiting for the close's
    // answer: the load waits for the closing (its MCP server stopped, its lock let go).
    // Without that wait the load raced the close, and lost it in some runs ("in use").
    let ws = Workspace::new();
    let mut steps = prompted_with_server(&ws, &ws.path("pids"));
    steps.extend([
        json!({"op": "close", "session": 0, "wait": false, "key": "close"}),
        json!({"op": "load", "session": 0, "cwd": ws.work()}),
        json!({"op": "await", "key": "close"}),
    ]);
    let seen = drive(&ws, json!({ "steps": steps }), &["--backend", "fake"]);
    let loaded = seen.result(4);
    assert!(loaded["result"]["modes"].is_object(), "{loaded}");
    assert_eq!(seen.result(5)["result"], json!({}), "{}", seen.result(5));
    let session = &seen.all["sessions"][1];
    assert!(text_of(&seen, session).contains("remember this"));
}

/// The saved session file of the session opened at `index`.
fn saved(ws: &Workspace, seen: &super::Seen, index: usize) -> Value {
    let name = seen.all["sessions"][index].as_str().unwrap();
    let file = ws.path(&format!("data/agent-loop/sessions/{name}/session.json"));
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// `count` more sessions, never prompted (so none of them can be closed to make room).
fn more_sessions(ws: &Workspace, steps: &mut Vec<Value>, count: usize) {
    for _ in 0..count {
        steps.push(json!({"op": "new", "cwd": ws.work()}));
    }
}

#[test]
fn past_the_cap_the_session_unused_longest_closes_and_reopens_when_prompted() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    // The reopened session's turn runs bash: in the mode it was given, without asking.
    ws.reply(4, super::call("bash", json!({"command": "touch made.txt"})));
    let (pids0, pids1) = (ws.path("pids0"), ws.path("pids1"));
    let mut steps = vec![
        json!({"op": "initialize"}),
        json!({"op": "new", "cwd": ws.work(), "mcpServers": tiny(&pids0)}),
        json!({"op": "prompt", "session": 0, "text": "the first words"}),
        json!({"op": "new", "cwd": ws.work(), "mcpServers": tiny(&pids1)}),
        json!({"op": "prompt", "session": 1, "text": "the first words of 1"}),
        json!({"op": "setMode", "session": 1, "mode": "never"}),
        // Session 0 used again: 1 is now the one unused longest.
        json!({"op": "prompt", "session": 0, "text": "more for 0"}),
    ];
    // Fifteen more: one past the cap, so session 1 is closed.
    more_sessions(&ws, &mut steps, 15);
    steps.push(json!({"op": "waitGone", "pidFile": pids1}));
    steps.push(json!({"op": "alive", "pidFile": pids0}));
    steps.push(json!({"op": "prompt", "session": 1, "text": "the second words"}));
    let seen = drive(&ws, json!({ "steps": steps }), &["--backend", "fake"]);
    let gone = seen.result(22)["pids"].clone();
    assert_eq!(seen.result(23)["alive"], true, "{}", seen.result(23));
    let answer = seen.result(24);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(ws.work().join("made.txt").exists());
    assert_eq!(seen.all["permissions"], json!([]));
    // Reopened with the MCP server it was opened with: a new one runs.
    let again: Vec<i64> = std::fs::read_to_string(&pids1)
        .unwrap()
        .split_whitespace()
        .map(|pid| pid.parse().unwrap())
        .collect();
    assert!(gone.as_array().is_some_and(|g| g.len() == 2), "{gone}");
    assert_ne!(json!(again), gone);
    // And with its conversation: the session file holds both turns.
    let saved = saved(&ws, &seen, 1);
    assert_eq!(saved["turns"], 2, "{saved}");
    let messages = saved["conversation"].to_string();
    assert!(
        messages.contains("the first words of 1") && messages.contains("the second words"),
        "{messages}"
    );
}

#[test]
fn what_comes_while_a_session_reopens_waits_for_it_and_its_backend_is_kept() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let pids = ws.path("pids");
    let mut steps = vec![
        json!({"op": "initialize"}),
        json!({"op": "new", "cwd": ws.work(), "mcpServers": tiny(&pids)}),
        json!({"op": "prompt", "session": 0, "text": "first"}),
        json!({"op": "setConfig", "session": 0, "value": "demo"}),
    ];
    more_sessions(&ws, &mut steps, 16);
    steps.extend([
        json!({"op": "waitGone", "pidFile": pids}),
        // The prompt starts the reopening (its MCP server takes a while to start); a second
        // prompt and the mode come meanwhile, and wait for it, in their order.
        json!({"op": "prompt", "session": 0, "text": "what can you do", "wait": false}),
        json!({"op": "prompt", "session": 0, "text": "at once"}),
        json!({"op": "setMode", "session": 0, "mode": "never"}),
        json!({"op": "await", "session": 0}),
        json!({"op": "close", "session": 0}),
        json!({"op": "prompt", "session": 0, "text": "after the close"}),
    ]);
    let seen = drive(&ws, json!({ "steps": steps }), &["--backend", "fake"]);
    // One prompt at a time: the second one came while the first ran (or waited to).
    let second = seen.result(22)["error"]["message"].to_string();
    assert!(second.contains("already running"), "{second}");
    assert_eq!(seen.result(23)["result"], json!({}), "{}", seen.result(23));
    let first = seen.result(24);
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
    assert_eq!(seen.result(25)["result"], json!({}), "{}", seen.result(25));
    let after = seen.result(26)["error"]["message"].to_string();
    assert!(after.contains("no session"), "{after}");
    // The reopened turn ran on the backend chosen before the closing, not the run's flag.
    assert_eq!(ws.runs(), 1);
    let saved = saved(&ws, &seen, 0);
    assert_eq!(
        (saved["backend"].as_str(), &saved["turns"]),
        (Some("demo"), &json!(2))
    );
}

#[test]
fn a_session_never_prompted_is_closed_too_and_its_id_kept_for_it() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    // Closing it loses nothing: it holds nothing yet. Its MCP server is stopped.
    let mut steps = closed_session(&ws, &ws.path("pids"), &[]);
    // Its name is free of lock and folder now, but a new session does not take it.
    steps.push(json!({"op": "new", "cwd": ws.work()}));
    steps.push(json!({"op": "prompt", "session": 0, "text": "still here?"}));
    let seen = drive(&ws, json!({ "steps": steps }), &["--backend", "fake"]);
    let sessions = seen.all["sessions"].as_array().unwrap();
    assert!(!sessions[1..].contains(&sessions[0]), "{sessions:?}");
    let answer = seen.result(20);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(saved(&ws, &seen, 0)["turns"], 1);
}

/// A session opened with the tiny MCP server (its pids to `pids`) and prompted once, then
/// sixteen more: it is closed to make room (the steps wait for its server to exit).
fn closed_session(ws: &Workspace, pids: &std::path::Path, turns: &[&str]) -> Vec<Value> {
    let mut steps = vec![
        json!({"op": "initialize"}),
        json!({"op": "new", "cwd": ws.work(), "mcpServers": tiny(pids)}),
    ];
    for text in turns {
        steps.push(json!({"op": "prompt", "session": 0, "text": text}));
    }
    more_sessions(ws, &mut steps, 16);
    steps.push(json!({"op": "waitGone", "pidFile": pids}));
    steps
}

#[test]
fn a_cancel_sent_while_a_session_reopens_cancels_its_prompt() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let mut steps = closed_session(&ws, &ws.path("pids"), &["first"]);
    steps.extend([
        json!({"op": "prompt", "session": 0, "text": "never mind", "wait": false}),
        json!({"op": "cancel", "session": 0}),
        json!({"op": "await", "session": 0}),
    ]);
    let seen = drive(&ws, json!({ "steps": steps }), &["--backend", "fake"]);
    let answer = seen.result(22);
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
}

/// A session cleared (`/clear`) and then closed to make room, reopened by `then`: its next
/// turn, the fake agent's third run, is on the conversation after the clear.
fn cleared_and_reopened(then: impl FnOnce(&Workspace) -> Vec<Value>) -> super::Seen {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let turns = ["before ALPHA", "/clear", "after BETA"];
    let mut steps = closed_session(&ws, &ws.path("pids"), &turns);
    steps.extend(then(&ws));
    let seen = drive(&ws, json!({ "steps": steps }), &["--backend", "fake"]);
    let last = seen.all["results"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["result"]["stopReason"], "end_turn", "{last}");
    let prompt = ws.prompt(3);
    assert!(
        prompt.contains("after BETA") && !prompt.contains("before ALPHA"),
        "{prompt}"
    );
    seen
}

#[test]
fn a_session_cleared_then_closed_to_make_room_reopens_on_its_new_conversation() {
    cleared_and_reopened(|_| vec![json!({"op": "prompt", "session": 0, "text": "reopened GAMMA"})]);
}

#[test]
fn a_load_of_a_session_closed_to_make_room_opens_the_one_it_was_on() {
    let seen = cleared_and_reopened(|ws| {
        vec![
            json!({"op": "load", "session": 0, "cwd": ws.work()}),
            json!({"op": "prompt", "session": 0, "text": "loaded GAMMA"}),
        ]
    });
    let load = seen.result(22);
    assert!(load["result"]["modes"].is_object(), "{load}");
}

#[test]
fn a_new_session_never_takes_the_id_of_a_thread_cleared_before_its_first_save() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let script = json!({"steps": [
        {"op": "initialize"},
        {"op": "new", "cwd": ws.work()},
        // Its first session, never saved, is left: no file or lock holds its name.
        {"op": "prompt", "session": 0, "text": "/clear"},
        {"op": "new", "cwd": ws.work()},
        {"op": "prompt", "session": 0, "text": "to the first ALPHA"},
        {"op": "prompt", "session": 1, "text": "to the second BETA"},
    ]});
    let seen = drive(&ws, script, &["--backend", "fake"]);
    let sessions = &seen.all["sessions"];
    assert_ne!(sessions[0], sessions[1]);
    assert!(!ws.prompt(2).contains("ALPHA"), "{}", ws.prompt(2));
}

#[test]
fn a_new_session_renamed_past_a_thread_never_takes_another_runs_folder() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    // What a second run started in the same second leaves: `NAME-2` holding a log (and no
    // lock), for every second of the next minute, so whichever second the sessions get.
    let sessions = ws.path("data/agent-loop/sessions");
    let now = std::time::SystemTime::now();
    for s in 0..60 {
        let at = now + std::time::Duration::from_secs(s);
        let name = humantime::format_rfc3339_seconds(at).to_string()[..19].replace(':', "-");
        let folder = sessions.join(format!("{name}-2"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("log.jsonl"), "{\"planted\":1}\n").unwrap();
    }
    let script = json!({"steps": [
        {"op": "initialize"},
        {"op": "new", "cwd": ws.work()},
        {"op": "prompt", "session": 0, "text": "/clear"},
        {"op": "new", "cwd": ws.work()},
        {"op": "prompt", "session": 1, "text": "hello from B"},
    ]});
    let seen = drive(&ws, script, &["--backend", "fake"]);
    assert_eq!(seen.result(4)["result"]["stopReason"], "end_turn");
    for entry in std::fs::read_dir(&sessions).unwrap() {
        let log = entry.unwrap().path().join("log.jsonl");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            !text.contains("planted") || text == "{\"planted\":1}\n",
            "{}: {text}",
            log.display()
        );
    }
}

/// A load of session 0 sent right after its close (not waited for), once it was closed to make
/// room: with `reopening`, a prompt first starts to reopen it. The load waits for the close.
fn closed_then_loaded(reopening: bool) {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let mut steps = closed_session(&ws, &ws.path("pids"), &["first"]);
    let first = steps.len();
    if reopening {
        steps.push(json!({"op": "prompt", "session": 0, "text": "second", "wait": false}));
    }
    steps.extend([
        json!({"op": "close", "session": 0, "wait": false, "key": "close"}),
        json!({"op": "load", "session": 0, "cwd": ws.work()}),
        json!({"op": "await", "key": "close"}),
    ]);
    let seen = drive(&ws, json!({ "steps": steps }), &["--backend", "fake"]);
    let (load, close) = (
        first + usize::from(reopening) + 1,
        first + usize::from(reopening) + 2,
    );
    let loaded = seen.result(load);
    assert!(loaded["result"]["modes"].is_object(), "{loaded}");
    assert_eq!(
        seen.result(close)["result"],
        json!({}),
        "{}",
        seen.result(close)
    );
}

#[test]
fn a_load_sent_while_a_session_closed_to_make_room_is_closed_waits_for_the_close() {
    closed_then_loaded(false);
}

#[test]
fn a_load_sent_while_a_reopening_session_is_closed_waits_for_the_close() {
    closed_then_loaded(true);
}
