//! Children kept apart from the user's terminal and tied to agent-loop's life (issue 30):
//! a tool finds no controlling terminal to push keystrokes into, and a backend dies with
//! agent-loop even when agent-loop is killed with SIGKILL.

use std::process::Stdio;

use crate::common::{send_signal, wait_gone, Pty, Workspace};

/// Run on a pseudo-terminal, bash still cannot open `/dev/tty`: it is in a session of its
/// own, with no controlling terminal (so no TIOCSTI, no escape sequences behind the display).
#[test]
fn tools_have_no_controlling_terminal() {
    let ws = Workspace::new();
    let call = serde_json::json!({"name": "bash", "arguments": {
        "command": "if (: </dev/tty) 2>/dev/null; then t=yes; else t=no; fi; \
            echo \"tty:$t sid:$(ps -o sid= -p $$ | tr -d ' ') of:$(ps -o sid= -p $PPID | tr -d ' ')\""
    }});
    ws.reply(1, format!("<tool_call>{call}</tool_call>\n"));
    ws.reply(2, "done\n");
    let pty = Pty::spawn(
        &ws,
        &[],
        &["--display", "plain", "--backend", "fake", "--yes", "go"],
    );
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&bytes));
    let result = ws.prompt(2);
    let line = result
        .lines()
        .find(|l| l.starts_with("tty:"))
        .unwrap_or_else(|| panic!("no result line in {result}"));
    let words: Vec<&str> = line.split([' ', ':']).collect();
    // [tty, no, sid, N, of, M]: no terminal, and a session that is not agent-loop's.
    assert_eq!(words[1], "no", "{line}");
    assert_ne!(words[3], words[5], "{line}");
}

/// agent-loop killed with SIGKILL mid-turn (no Drop, no signal handler runs): the backend
/// it was waiting for dies too.
#[test]
fn a_backend_dies_with_a_sigkilled_agent_loop() {
    let ws = Workspace::new();
    ws.fake_file("hang.1", "");
    let mut cmd = ws.cmd(&["--backend", "fake", "wait for me"]);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let sleep = ws.wait_for_process("sleep");
    let agent = crate::common::poll(|| {
        std::fs::read_to_string(ws.path("fake/self.pid"))
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
    })
    .expect("the fake agent never wrote its pid");
    send_signal(child.id(), libc::SIGKILL);
    child.wait().unwrap();
    let gone = wait_gone(agent);
    // The agent's own child is no concern of agent-loop's; the test cleans it up.
    send_signal(sleep as u32, libc::SIGKILL);
    assert!(gone, "the backend {agent} outlived agent-loop");
    ws.assert_no_leftovers();
}
