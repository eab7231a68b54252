//! Ctrl-C during a tool in a one-shot run (exit 130), and during a backend call or a tool in
//! the REPL on a pseudo-terminal (the turn is cancelled, the prompt comes back, the session is
//! saved). SIGTERM and SIGHUP cancel the turn the same way and end the run (143, 129). Ctrl-C
//! during a CLI or HTTP backend call in one-shot is in cli_backend.rs and http/failures.rs.

use std::io::Write;
use std::process::Stdio;

use crate::common::{interrupt, send_signal, wait_gone, Workspace};
use crate::repl::{screen, spawn_repl};

const SLEEP_CALL: &str =
    "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"sleep 300\"}}</tool_call>\n";

/// SIGTERM (as `kill` sends) during a backend call: the backend's process group is killed,
/// the turn is recorded as cancelled and the run ends with 128 + 15.
#[test]
fn sigterm_during_a_backend_call_kills_it_and_exits_143() {
    let ws = Workspace::new();
    ws.fake_file("hang.1", "");
    let mut cmd = ws.cmd(&["--backend", "fake", "wait for me"]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let sleep = ws.wait_for_process("sleep");
    send_signal(child.id(), libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(
        err.contains("[turn cancelled by SIGTERM: the backend and any running tool were stopped]"),
        "{err}"
    );
    assert!(wait_gone(sleep), "the backend survived SIGTERM");
    let saved = ws.saved_messages();
    assert!(saved.contains("[turn cancelled by SIGTERM]"), "{saved}");
    ws.assert_no_leftovers();
}

/// A cancelled turn ends in the records as a failed one does, `--output jsonl` and the
/// session's log alike: an `error` of kind `cancelled`, the result its running tool call
/// got, then `turn_end` not ok, so a reader tells it from a stream cut short.
#[test]
fn a_cancelled_turn_ends_its_records() {
    // Cancelled while the backend runs, then while a tool runs.
    for tool in [false, true] {
        let ws = Workspace::new();
        match tool {
            false => ws.fake_file("hang.1", ""),
            true => ws.reply(1, SLEEP_CALL),
        }
        let args = [
            "--backend",
            "fake",
            "--yes",
            "-s",
            "cut",
            "--output",
            "jsonl",
            "go",
        ];
        let mut cmd = ws.cmd(&args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let child = cmd.spawn().unwrap();
        ws.wait_for_process("sleep");
        send_signal(child.id(), libc::SIGTERM);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(143));
        let stdout: Vec<serde_json::Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        for records in [stdout, ws.session_log("cut")] {
            let (error, end) = match &records[..] {
                [.., error, result, end] if tool => {
                    assert_eq!(result["event"], "tool_result", "{records:?}");
                    let not_run = "not run: the turn was cancelled by SIGTERM";
                    let got = (&result["ok"], &result["output"]);
                    assert_eq!(got, (&false.into(), &not_run.into()));
                    (error, end)
                }
                [.., error, end] => (error, end),
                _ => panic!("{records:?}"),
            };
            assert_eq!(error["event"], "error", "{records:?}");
            assert_eq!(error["error_kind"], "cancelled", "{records:?}");
            assert_eq!(error["error"], "the turn was cancelled by SIGTERM");
            assert_eq!(end["event"], "turn_end", "{records:?}");
            assert_eq!((&end["ok"], &end["iterations"]), (&false.into(), &1.into()));
        }
    }
}

/// SIGHUP (the terminal closed) during a tool in the REPL: the tool is killed, the session
/// saved, and the REPL ends with 128 + 1 instead of waiting for input that cannot come.
#[test]
fn sighup_during_a_tool_in_the_repl_ends_it_with_129() {
    let ws = Workspace::new();
    ws.reply(1, SLEEP_CALL);
    let mut child = spawn_repl(&ws, "--backend fake --yes");
    let mut keys = child.stdin.take().unwrap();
    keys.write_all(b"first task\n").unwrap();
    let sleep = ws.wait_for_process("sleep");
    let agent_loop = ws.wait_for_process("agent-loop");
    send_signal(agent_loop as u32, libc::SIGHUP);
    let (code, screen) = screen(child);
    drop(keys);
    assert_eq!(code, 129, "{screen}");
    assert!(
        screen
            .contains("[turn cancelled by SIGHUP: the backend and any running tool were stopped]"),
        "{screen}"
    );
    assert!(wait_gone(sleep), "the tool survived SIGHUP");
    let saved = ws.saved_session();
    assert_eq!(saved["turns"], 1, "{saved}");
    assert!(
        saved["conversation"]
            .to_string()
            .contains("[turn cancelled by SIGHUP]"),
        "{saved}"
    );
    ws.assert_no_leftovers();
}

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
