//! How a terminal agent is closed once nothing more is needed of it (`exit_by_sigterm`, and
//! what it leaves behind): against the fake TUI's `--sigterm` and `--launcher` modes, whose
//! clean-up takes a moment and writes `tui.cleanup` when it is done. A close that killed the
//! group before the clean-up ended would leave that file missing.

use crate::pty::{messages, tui_closed_by};

/// One message through the fake TUI in `mode`, closed with `exit_by_sigterm`: the answer
/// came, nothing was typed to close it, its clean-up ran to its end, and nothing is left.
fn closed_by_sigterm(mode: &str) {
    let ws = tui_closed_by(
        "exit_by_sigterm = true",
        &format!("args = [\"{mode}\"]\ntimeout_s = 60"),
    );
    let run = ws.run(&["--backend", "tui", "hello there"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "You said: hello there\nThe answer is 42.\n");
    assert_eq!(messages(&ws), ["hello there"]);
    let cleanup = std::fs::read_to_string(ws.path("fake/tui.cleanup")).unwrap_or_default();
    assert_eq!(cleanup, "clean-up done\n");
    ws.assert_no_leftovers();
}

#[test]
fn an_agent_that_quits_at_sigterm_is_sent_it_instead_of_keys() {
    closed_by_sigterm("--sigterm");
}

#[test]
fn the_agent_a_launcher_left_behind_finishes_its_clean_up() {
    // The process agent-loop started dies at SIGTERM; the agent it started, which holds the
    // terminal, is waited for until it lets go of it.
    closed_by_sigterm("--launcher");
}

#[test]
fn exit_keys_and_exit_by_sigterm_together_are_refused() {
    let ws = tui_closed_by(
        "exit_by_sigterm = true\nexit_keys = \"/quit\\r\"",
        "timeout_s = 60",
    );
    let run = ws.run(&["--backend", "tui", "hello there"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("key `exit_keys`: is never typed with `exit_by_sigterm = true`"),
        "{}",
        run.stderr()
    );
}
