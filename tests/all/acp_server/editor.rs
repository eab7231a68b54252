//! What goes through the editor: bash in its terminal when it offers `terminal` (approved,
//! in the session's folder, timed out and cancelled as local bash), the file tools only when
//! it offers both reading and writing.

use serde_json::{json, Value};

use super::{call, drive, Seen};
use crate::common::Workspace;

/// A session with the editor's terminal offered, whose first reply is one bash call.
fn bash_in_terminal(args: Value, more: Vec<Value>, flags: &[&str]) -> (Workspace, Seen) {
    let ws = Workspace::new();
    ws.reply(1, call("bash", args));
    ws.reply(2, "Done.\n");
    let mut steps = vec![
        json!({"op": "initialize", "terminal": true}),
        json!({"op": "new", "cwd": ws.work()}),
    ];
    steps.extend(more);
    let seen = drive(&ws, json!({ "steps": steps }), flags);
    (ws, seen)
}

fn terminal_calls(seen: &Seen) -> Vec<String> {
    seen.all["terminalCalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["method"].as_str().unwrap().to_string())
        .collect()
}

fn prompt() -> Value {
    json!({"op": "prompt", "session": 0, "text": "run it"})
}

#[test]
fn bash_runs_in_the_editors_terminal_when_it_offers_one() {
    let (ws, seen) = bash_in_terminal(
        json!({"command": "echo made > made.txt; echo from the terminal"}),
        vec![prompt()],
        &["--backend", "fake"],
    );
    assert_eq!(seen.result(2)["result"]["stopReason"], "end_turn");
    // Asked first, as local bash is.
    assert_eq!(seen.all["permissions"].as_array().unwrap().len(), 1);
    assert_eq!(
        terminal_calls(&seen),
        ["create", "wait_for_exit", "output", "release"]
    );
    let create = &seen.all["terminalCalls"][0];
    assert!(
        create["command"].as_str().unwrap().ends_with("sh"),
        "{create}"
    );
    assert_eq!(
        create["args"],
        json!(["-c", "echo made > made.txt; echo from the terminal"])
    );
    assert_eq!(create["cwd"], ws.work().to_str().unwrap());
    assert_eq!(create["outputByteLimit"], 200 * 1024);
    assert!(ws.work().join("made.txt").exists());
    // The editor shows the terminal in the tool call, while it runs and when done.
    let updates = seen.of_kind("tool_call_update");
    let shown: Vec<&Value> = updates
        .iter()
        .filter(|u| u["content"][0]["type"] == "terminal")
        .collect();
    assert_eq!(shown.len(), 2, "{updates:?}");
    assert!(shown
        .iter()
        .all(|u| u["content"][0]["terminalId"] == "term-1"));
    assert_eq!(shown[1]["status"], "completed");
    // The model reads what the terminal printed.
    let next = ws.prompt(2);
    assert!(next.contains("exit code: 0"), "{next}");
    assert!(next.contains("from the terminal"), "{next}");
}

#[test]
fn a_rejected_command_never_reaches_the_terminal() {
    let ws = Workspace::new();
    ws.reply(1, call("bash", json!({"command": "echo made > made.txt"})));
    ws.reply(2, "Done.\n");
    let script = json!({
        "permission": "reject-once",
        "steps": [
            {"op": "initialize", "terminal": true},
            {"op": "new", "cwd": ws.work()},
            prompt(),
        ],
    });
    let seen = drive(&ws, script, &["--backend", "fake"]);
    assert_eq!(seen.all["terminalCalls"], json!([]));
    assert!(!ws.work().join("made.txt").exists());
}

#[test]
fn bash_runs_locally_when_the_editor_offers_no_terminal() {
    let ws = Workspace::new();
    ws.reply(1, call("bash", json!({"command": "echo made > made.txt"})));
    ws.reply(2, "Done.\n");
    let script = json!({"steps": [
        {"op": "initialize", "fs": true},
        {"op": "new", "cwd": ws.work()},
        prompt(),
    ]});
    let seen = drive(&ws, script, &["--backend", "fake", "--yes"]);
    assert_eq!(seen.all["terminalCalls"], json!([]));
    assert!(ws.work().join("made.txt").exists());
    assert!(ws.prompt(2).contains("exit code: 0"));
}

#[test]
fn a_command_past_its_timeout_is_killed_in_the_terminal() {
    let (ws, seen) = bash_in_terminal(
        json!({"command": "echo started; exec sleep 30", "timeout_s": 1}),
        vec![prompt()],
        &["--backend", "fake", "--yes"],
    );
    assert_eq!(seen.result(2)["result"]["stopReason"], "end_turn");
    assert_eq!(
        terminal_calls(&seen),
        ["create", "wait_for_exit", "kill", "output", "release"]
    );
    let next = ws.prompt(2);
    assert!(next.contains("exit code: 124"), "{next}");
    assert!(next.contains("timed out after 1s"), "{next}");
    assert!(next.contains("started"), "{next}");
}

#[test]
fn cancel_kills_the_command_in_the_terminal() {
    let ws = Workspace::new();
    let pid_file = ws.work().join("sleeper.pid");
    let command = format!(
        "echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 30",
        pid_file.display()
    );
    ws.reply(1, call("bash", json!({ "command": command })));
    let script = json!({"steps": [
        {"op": "initialize", "terminal": true},
        {"op": "new", "cwd": ws.work()},
        {"op": "prompt", "session": 0, "text": "wait", "wait": false},
        {"op": "waitFile", "path": pid_file},
        {"op": "cancel", "session": 0},
        {"op": "await", "session": 0},
        // The release may come after the answer: the run is dropped as the turn ends.
        {"op": "waitTerminalCall", "method": "release"},
    ]});
    let seen = drive(&ws, script, &["--backend", "fake", "--yes"]);
    assert_eq!(seen.result(5)["result"]["stopReason"], "cancelled");
    assert!(terminal_calls(&seen).contains(&"release".to_string()));
    super::assert_gone(&pid_file, "the command");
}

#[test]
fn a_command_the_editor_starts_after_the_cancel_is_released() {
    let ws = Workspace::new();
    ws.reply(1, call("bash", json!({"command": "exec sleep 30"})));
    let script = json!({
        "holdTerminal": true,
        "steps": [
            {"op": "initialize", "terminal": true},
            {"op": "new", "cwd": ws.work()},
            {"op": "prompt", "session": 0, "text": "wait", "wait": false},
            {"op": "waitTerminalCall", "method": "create"},
            {"op": "cancel", "session": 0},
            {"op": "await", "session": 0},
            {"op": "waitTerminalCall", "method": "release"},
        ],
    });
    let seen = drive(&ws, script, &["--backend", "fake", "--yes"]);
    assert_eq!(seen.result(5)["result"]["stopReason"], "cancelled");
    let pid = seen.all["terminalCalls"][0]["pid"].as_i64().unwrap() as i32;
    assert!(
        crate::common::wait_gone(pid) || crate::common::process_gone(pid),
        "the command still runs"
    );
}

/// An edit of notes.txt with the editor offering `fs` (`true`, `"read"`, `"write"` or
/// `false`).
pub fn edit_with_fs(fs: Value) -> (Workspace, Seen) {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("notes.txt"), "old line\n").unwrap();
    ws.reply(
        1,
        call(
            "edit",
            json!({"path": "notes.txt", "old_string": "old", "new_string": "new"}),
        ),
    );
    ws.reply(2, "Edited.\n");
    let script = json!({"steps": [
        {"op": "initialize", "fs": fs},
        {"op": "new", "cwd": ws.work()},
        {"op": "prompt", "session": 0, "text": "edit"},
    ]});
    let seen = drive(&ws, script, &["--backend", "fake", "--yes"]);
    assert_eq!(
        std::fs::read_to_string(ws.work().join("notes.txt")).unwrap(),
        "new line\n"
    );
    (ws, seen)
}

#[test]
fn the_file_tools_go_through_the_editor_when_it_offers_fs() {
    let (ws, seen) = edit_with_fs(json!(true));
    let calls = seen.all["fsCalls"].as_array().unwrap();
    let path = ws.work().join("notes.txt").canonicalize().unwrap();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0]["method"], "read");
    assert_eq!(calls[0]["path"], path.to_str().unwrap());
    assert_eq!(calls[1]["method"], "write");
    assert_eq!(calls[1]["content"], "new line\n");
}

#[test]
fn the_file_tools_use_their_own_access_unless_the_editor_offers_both_halves_of_fs() {
    // An edit reads, then writes: never the editor's buffer read and the disk written.
    for offered in [json!(false), json!("read"), json!("write")] {
        let (_ws, seen) = edit_with_fs(offered.clone());
        assert_eq!(seen.all["fsCalls"], json!([]), "offering {offered}");
    }
}

/// A file too big for one message of the connection is not asked of the editor (its answer
/// would end the connection, every session with it): it is read from disk, as without one.
#[test]
fn a_file_too_big_for_one_message_is_read_from_disk_not_the_editor() {
    let ws = Workspace::new();
    let lines: String = (1..=1_200_000).map(|i| format!("line {i}\n")).collect();
    assert!(lines.len() > 8 * 1024 * 1024);
    std::fs::write(ws.work().join("big.log"), &lines).unwrap();
    ws.reply(1, call("read", json!({"path": "big.log", "limit": 2})));
    ws.reply(2, "Done.\n");
    let script = json!({"steps": [
        {"op": "initialize", "fs": true},
        {"op": "new", "cwd": ws.work()},
        prompt(),
    ]});
    let seen = drive(&ws, script, &["--backend", "fake"]);
    assert_eq!(seen.result(2)["result"]["stopReason"], "end_turn");
    assert_eq!(seen.all["fsCalls"], json!([]), "{}", seen.all["fsCalls"]);
    let next = ws.prompt(2);
    assert!(next.contains("     1\tline 1\n     2\tline 2\n"), "{next}");
}
