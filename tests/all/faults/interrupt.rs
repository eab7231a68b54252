//! Ctrl-C during a tool in a one-shot run (exit 130), and during a backend call or a tool in
//! the REPL on a pseudo-terminal (the turn is cancelled, the prompt comes back, the session is
//! saved). Ctrl-C during a CLI or HTTP backend call in one-shot is in cli_backend.rs and
//! http/failures.rs.

use std::io::Write;
use std::process::Stdio;

use crate::common::{interrupt, wait_gone, Workspace};
use crate::repl::{screen, spawn_repl};

const SLEEP_CALL: &str =
    "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"sleep 300\"}}</tool_call>\n";

#[test]
fn ctrl_c_during_a_tool_kills_it_and_exits_130() {
    let ws = Workspace::new();
    ws.reply(1, SLEEP_CALL);
    let mut cmd = ws.cmd(&["--backend", "fake", "--yes", "sleep please"]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let sleep = ws.wait_for_process("sleep");
    interrupt(child.id());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("[turn cancelled: the backend and any running tool were stopped]"),
        "{err}"
    );
    assert!(wait_gone(sleep), "the tool survived Ctrl-C");
    let saved = ws.saved_messages();
    assert!(
        saved.contains("sleep please") && saved.contains("[turn cancelled by the user]"),
        "{saved}"
    );
    ws.assert_no_leftovers();
}

/// In the REPL: `first task` starts something that sleeps, Ctrl-C stops it, `second task`
/// then runs at the prompt that came back.
fn ctrl_c_in_the_repl(ws: &Workspace, args: &str) {
    ws.reply(2, "back again\n");
    let mut child = spawn_repl(ws, args);
    let mut keys = child.stdin.take().unwrap();
    keys.write_all(b"first task\n").unwrap();
    let sleep = ws.wait_for_process("sleep");
    keys.write_all(b"\x03").unwrap();
    assert!(wait_gone(sleep), "Ctrl-C did not stop the turn");
    keys.write_all(b"second task\nexit\n").unwrap();
    drop(keys);
    let (code, screen) = screen(child);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("[turn cancelled: the backend and any running tool were stopped]"),
        "{screen}"
    );
    assert!(screen.contains("back again"), "{screen}");
    // The second turn's prompt has the first, cancelled one.
    let second = ws.prompt(2);
    assert!(
        second.contains("User: first task") && second.contains("User: second task"),
        "{second}"
    );
    let saved = ws.saved_session();
    assert_eq!(saved["turns"], 2, "{saved}");
    let messages = saved["conversation"].to_string();
    assert!(
        messages.contains("[turn cancelled by the user]") && messages.contains("back again"),
        "{messages}"
    );
    ws.assert_no_leftovers();
}

#[test]
fn ctrl_c_during_a_backend_call_in_the_repl_returns_to_the_prompt() {
    let ws = Workspace::new();
    ws.fake_file("hang.1", "");
    ctrl_c_in_the_repl(&ws, "--backend fake");
}

#[test]
fn ctrl_c_during_a_tool_in_the_repl_returns_to_the_prompt() {
    let ws = Workspace::new();
    ws.reply(1, SLEEP_CALL);
    ctrl_c_in_the_repl(&ws, "--backend fake --yes");
}
