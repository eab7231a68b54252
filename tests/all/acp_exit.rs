//! How an ACP agent's process ends. An agent that exits while something it started still
//! holds its output ends the turn (or the handshake) at its exit, with the exit named, not
//! at the turn's time limit. An agent that does not exit at the end of its input (as
//! claude-agent-acp and codex-acp) is sent SIGTERM as soon as agent-loop is done with it,
//! after an answer and after Ctrl-C, not left to a wait and SIGKILL. Against the scripted
//! fake agent.

use crate::acp::acp;
use crate::common::Pty;

#[test]
fn an_agent_that_exits_while_its_child_holds_its_output_ends_the_turn() {
    let ws = acp("");
    // It starts `sleep`, which keeps its stdout open, and exits 5; the turn's limit is 60 s.
    let run = ws.run(&["--backend", "acp", "orphan"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(
        err.contains("the agent stopped mid-turn: it exited (exit status: 5)"),
        "{err}"
    );
    assert!(err.contains("fake orphan: gone"), "{err}");
    // `sleep` went with the agent's group.
    ws.assert_no_leftovers();
}

#[test]
fn an_agent_that_exits_so_during_the_handshake_is_noticed_too() {
    // `session/new` has no time limit of its own: only the exit can end the wait.
    let ws = acp("env = { FAKE_ACP_ORPHAN = \"1\" }");
    let run = ws.run(&["--backend", "acp", "hello"]);
    run.expect_code(1);
    assert!(
        run.stderr()
            .contains("the agent stopped during `session/new`: it exited (exit status: 6)"),
        "{}",
        run.stderr()
    );
    ws.assert_no_leftovers();
}

/// What the fake agent recorded of SIGTERM.
fn terms(ws: &crate::common::Workspace) -> String {
    std::fs::read_to_string(ws.path("fake/acp.log.term")).unwrap_or_default()
}

#[test]
fn an_agent_that_stays_after_its_input_ends_is_sent_sigterm() {
    let ws = acp("env = { FAKE_ACP_STAY = \"1\" }");
    let run = ws.run(&["--backend", "acp", "hello"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "You said: hello\n");
    // SIGTERM, which it handles, not the SIGKILL that follows a wait.
    assert_eq!(terms(&ws), "SIGTERM\n");
    ws.assert_no_leftovers();
    // Also when the turn was cancelled with Ctrl-C.
    std::fs::remove_file(ws.path("fake/acp.log.term")).unwrap();
    let mut pty = Pty::spawn(&ws, &[], &["--backend", "acp", "cancel me"]);
    pty.wait_for("partial answer");
    pty.send("\x03");
    let (code, bytes) = pty.finish();
    let screen = String::from_utf8_lossy(&bytes);
    assert_eq!(code, 130, "{screen}");
    assert_eq!(terms(&ws), "SIGTERM\n", "{screen}");
    ws.assert_no_leftovers();
}
