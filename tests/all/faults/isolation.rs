//! Children kept apart from the user's terminal and tied to agent-loop's life (issue 30):
//! a tool finds no controlling terminal to push keystrokes into, and a backend dies with
//! agent-loop even when agent-loop is killed with SIGKILL.

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use crate::common::{poll, send_signal, wait_gone, Pty, Workspace};

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

/// The first child is an ACP agent (spawned, as pty agents and MCP servers are, outside
/// `process::run`, its group recorded through `GroupGuard::new`): the watchdog was forked
/// before it, so there is no moment in which a SIGKILL of agent-loop would leave what it
/// starts running; and it kills the agent's `sleep` with agent-loop.
#[test]
fn the_watchdog_is_forked_before_the_first_child_and_kills_its_children() {
    let ws = Workspace::new();
    let script = ws.path("agent.sh");
    // The watchdog's pid (agent-loop's child of that name), then a child of the agent's own,
    // and no ACP answer: agent-loop waits for it until killed.
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         wd=$(ps -o pid=,comm= --ppid $PPID | awk '$2 == \"agent-loop-wd\" { print $1 }')\n\
         sleep 300 &\n\
         echo \"${wd:-0} $$ $!\" > \"$FAKE_DIR/start.part\" && mv \"$FAKE_DIR/start.part\" \"$FAKE_DIR/start\"\n\
         wait\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    ws.config(&format!(
        "[backends.acp]\ntype = \"acp\"\ncommand = \"{}\"\ntimeout_s = 60\n",
        script.display()
    ));
    let mut cmd = ws.cmd(&["--backend", "acp", "go"]);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let child = cmd.spawn().unwrap();
    let start = poll(|| std::fs::read_to_string(ws.path("fake/start")).ok())
        .expect("the agent never started");
    let pids: Vec<i32> = start
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    let [watchdog, agent, sleep] = pids[..] else {
        panic!("the agent wrote {start}")
    };
    sigkill_and_expect_gone(
        &ws,
        child,
        [(agent, "the agent"), (sleep, "the agent's child")],
    );
    // Pids are handed out in increasing order: a lower one was forked first. (Only a wrap
    // at pid_max between the two forks, microseconds apart, would fail this falsely.)
    assert!(watchdog > 0, "no watchdog");
    assert!(
        watchdog < agent,
        "the watchdog {watchdog} was forked after the agent {agent}"
    );
}

/// The watchdog is forked just before the first child: a run that has started nothing yet
/// (the REPL waiting for its first prompt) has none, and has one once the backend has run.
#[test]
fn a_run_that_has_started_nothing_forks_no_watchdog() {
    let ws = Workspace::new();
    ws.reply(1, "the answer\n");
    let mut pty = Pty::spawn(&ws, &[], &["--display", "plain", "--backend", "fake"]);
    pty.wait_for("agent-loop with backend");
    let watchdogs = || {
        ws.processes()
            .into_iter()
            .filter(|(_, comm)| comm == "agent-loop-wd")
            .count()
    };
    assert_eq!(watchdogs(), 0, "a watchdog before any child");
    pty.send("hello\r");
    pty.wait_for("the answer");
    assert_eq!(watchdogs(), 1);
    pty.send("\x04");
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&bytes));
}
