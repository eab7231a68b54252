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
/// it was waiting for dies too, and so does what the backend started (a wrapper's native
/// program; here the fake agent's `sleep`): the watchdog kills its process group.
#[test]
fn a_backend_and_its_children_die_with_a_sigkilled_agent_loop() {
    let ws = Workspace::new();
    ws.fake_file("hang.1", "");
    let mut cmd = ws.cmd(&["--backend", "fake", "wait for me"]);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let child = cmd.spawn().unwrap();
    let pid_in = |file: &str| {
        crate::common::poll(|| {
            std::fs::read_to_string(ws.path(file))
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
        })
        .unwrap_or_else(|| panic!("the fake agent never wrote {file}"))
    };
    let sleep = pid_in("fake/child.pid");
    let agent = pid_in("fake/self.pid");
    sigkill_and_expect_gone(
        &ws,
        child,
        [(agent, "the backend"), (sleep, "the backend's child")],
    );
}

/// Kills agent-loop with SIGKILL and waits (bounded) until each process is gone; kills those
/// that are not, so that a failure leaves nothing behind.
fn sigkill_and_expect_gone(
    ws: &Workspace,
    mut agent_loop: std::process::Child,
    processes: [(i32, &str); 2],
) {
    send_signal(agent_loop.id(), libc::SIGKILL);
    agent_loop.wait().unwrap();
    let gone = processes.map(|(pid, _)| wait_gone(pid));
    for ((pid, what), gone) in processes.iter().zip(gone) {
        if !gone {
            send_signal(*pid as u32, libc::SIGKILL);
        }
        assert!(gone, "{what} {pid} outlived agent-loop");
    }
    ws.assert_no_leftovers();
}

/// The same for a bash command that left a `sleep` running: the shell is agent-loop's child,
/// the sleep is not, and both die.
#[test]
fn a_tools_commands_die_with_a_sigkilled_agent_loop() {
    let ws = Workspace::new();
    let pids = ws.path("tool.pids");
    let command = format!(
        "sleep 300 & echo \"$$ $!\" > {}.part && mv {0}.part {0}; wait",
        pids.display()
    );
    let call = serde_json::json!({"name": "bash", "arguments": {"command": command}});
    ws.reply(1, format!("<tool_call>{call}</tool_call>\n"));
    ws.reply(2, "done\n");
    let mut cmd = ws.cmd(&["--backend", "fake", "--yes", "go"]);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let child = cmd.spawn().unwrap();
    let (shell, sleep) = crate::common::poll(|| {
        let text = std::fs::read_to_string(&pids).ok()?;
        let mut words = text.split_whitespace().map(|w| w.parse::<i32>().ok());
        Some((words.next()??, words.next()??))
    })
    .expect("the bash command never wrote its pids");
    sigkill_and_expect_gone(
        &ws,
        child,
        [
            (shell, "the bash tool's shell"),
            (sleep, "the command's sleep"),
        ],
    );
}
