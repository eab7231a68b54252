//! The terminal bridge (`type = "pty"`) against a fake TUI agent (fixtures/agents/fake-tui.py:
//! the alternate screen, a bordered input box, a spinner, redraws, a status bar, an approval
//! question). Every outcome is decided by the screen (`ready_regex`, `done_regex`), never by
//! timing, except the two that are about quiet itself: a message never taken, and a screen
//! that never settles. Every run's output is checked free of escape bytes and carriage
//! returns (`Workspace::run`, and the REPL helper).

use crate::common::{fixture, poll, Pty, Workspace};
use crate::repl::repl;

/// The fake TUI as a pty backend named `tui`, with `extra` lines (a mode's `args`, a shorter
/// `timeout_s`) added to its entry; closed with `/quit`.
pub(crate) fn tui(extra: &str) -> Workspace {
    tui_closed_by(r#"exit_keys = "/quit\r""#, extra)
}

/// [`tui`], closed as `exit` says (`exit_keys = ...`, `exit_by_sigterm = true`).
pub(crate) fn tui_closed_by(exit: &str, extra: &str) -> Workspace {
    let ws = Workspace::new();
    ws.add_config(&format!(
        r#"
[backends.tui]
type = "pty"
command = "{}"
size = "80x24"
ready_regex = 'Type your message'
done_regex = '^✓ done'
busy_regex = 'esc to cancel'
skip_lines = ['fake-tui \|', '^Fake TUI v1', 'Type your message']
approval_regex = 'Allow (?P<tool>shell) command: ?(?P<detail>(?s:.+?)) ?\[y/n\]'
approval_end_regex = '^\[y/n\]$'
tool_activity_regex = '✓ ran: (?P<activity>.+)'
idle_ms = 1000
{exit}
{extra}
"#,
        fixture("agents/fake-tui.py").display()
    ));
    ws
}

/// What the fake TUI was sent, message by message.
pub(crate) fn messages(ws: &Workspace) -> Vec<String> {
    let text = std::fs::read_to_string(ws.path("fake/tui.messages")).unwrap_or_default();
    text.split("\n---\n")
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect()
}

/// How many times the fake TUI was started.
fn starts(ws: &Workspace) -> usize {
    std::fs::read_to_string(ws.path("fake/tui.pids"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// The last message before `/quit` was the conversation so far (holding each of `parts`),
/// and the screen said so, counting `earlier` messages.
fn assert_caught_up(ws: &Workspace, screen: &str, parts: &[&str], earlier: &str) {
    let sent = messages(ws);
    let caught_up = &sent[sent.len() - 2];
    for part in parts {
        assert!(caught_up.contains(part), "{part:?} in {sent:?}");
    }
    let line = format!("(the agent's new session is given the conversation so far: {earlier})");
    assert!(screen.contains(&line), "{screen}");
}

#[test]
fn a_turn_reads_the_answer_off_the_screen() {
    let ws = tui("timeout_s = 60");
    let run = ws.run(&["--backend", "tui", "hello there"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "You said: hello there\nThe answer is 42.\n");
    let err = run.stderr();
    // The settled lines, as progress, append-only.
    assert!(
        err.contains("[tui] You said: hello there\n[tui] The answer is 42.\n"),
        "{err}"
    );
    assert!(!err.contains("Thinking"), "the spinner is chrome: {err}");
    // It was closed with its exit keys.
    assert_eq!(messages(&ws), ["hello there", "/quit"]);
    ws.assert_no_leftovers();
}

#[test]
fn a_multi_line_message_is_pasted_as_one() {
    let ws = tui("timeout_s = 60");
    let run = ws.run(&["--backend", "tui", "first line\nsecond line"]);
    run.expect_code(0);
    assert_eq!(
        run.stdout(),
        "You said: first line / second line\nThe answer is 42.\n"
    );
    assert_eq!(messages(&ws)[0], "first line\nsecond line");
}

#[test]
fn two_turns_keep_the_agents_own_context() {
    let ws = tui("timeout_s = 60");
    let (code, screen) = repl(
        &ws,
        "--backend tui",
        "remember banana\nwhat did I ask you to remember?\n//stats\nexit\n",
    );
    assert_eq!(code, 0, "{screen}");
    // `//stats` is the agent's own slash command, typed through.
    assert!(screen.contains("Messages so far: 3"), "{screen}");
    assert!(screen.contains("OK, I will remember banana."), "{screen}");
    assert!(
        screen.contains("You asked me to remember banana."),
        "{screen}"
    );
    assert_eq!(starts(&ws), 1, "one agent for the session");
    assert_eq!(messages(&ws).last().map(String::as_str), Some("/quit"));
    ws.assert_no_leftovers();
}

#[test]
fn approvals_go_through_agent_loops_approval_flow() {
    // --yes: approved without asking.
    let ws = tui("timeout_s = 60");
    let run = ws.run(&["--backend", "tui", "--yes", "run touch made.txt"]);
    run.expect_code(0);
    assert!(ws.work().join("made.txt").exists());
    assert!(
        run.stdout().contains("Done: created made.txt."),
        "{}",
        run.stdout()
    );
    assert!(
        run.stderr().contains("[tui ran] touch made.txt"),
        "{}",
        run.stderr()
    );
    // In a pipe nobody can be asked: denied, and the agent is told so.
    let run = ws.run(&["--backend", "tui", "run touch piped.txt"]);
    run.expect_code(4);
    assert!(!ws.work().join("piped.txt").exists());
    assert!(
        run.stdout()
            .contains("Cancelled: the user denied touch piped.txt."),
        "{}",
        run.stdout()
    );
    assert!(
        run.stderr()
            .contains("(approval of touch piped.txt: denied"),
        "{}",
        run.stderr()
    );
    // On a terminal the user is asked, and the answer typed back.
    // Each answer is typed once its question shows: an approval discards earlier typeahead.
    let steps = [
        ("agent-loop with backend", 1, "run touch asked.txt\n"),
        ("[y]es once, [a]lways for shell", 1, "y\n"),
        ("Done: created asked.txt.", 1, "exit\n"),
    ];
    let (code, screen) = crate::repl::dialogue_in(&ws, "plain", "--backend tui", &steps);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("Allow shell? It asks to run (1 line):\n  | touch asked.txt"),
        "{screen}"
    );
    assert!(screen.contains("Done: created asked.txt."), "{screen}");
    assert!(ws.work().join("asked.txt").exists());
    ws.assert_no_leftovers();
}

/// A command longer than a row of the fake's box: wrapped at its spaces, and inside a word
/// longer than a row.
const LONG: &str = "touch made.txt && echo alpha bravo charlie delta echo foxtrot golf hotel \
    india juliett kilo lima mike november oscar papa && mkdir -p \
    a-folder-name-so-long-that-the-fake-agents-box-breaks-it-inside-the-word-itself/below";

#[test]
fn a_question_wrapped_over_rows_is_asked_whole_and_the_turn_goes_on() {
    let ws = tui("timeout_s = 60");
    // In a pipe: denied, and the note quotes what was denied, whole.
    let run = ws.run(&["--backend", "tui", &format!("run {LONG}")]);
    run.expect_code(4);
    let denied = format!("[tui] (approval of {LONG}: denied");
    assert!(run.stderr().contains(&denied), "{}", run.stderr());
    assert!(!ws.work().join("made.txt").exists());
    // Without a box: the one-line question wraps at the screen's edge inside the name.
    let name = format!("{}.txt", "n".repeat(100));
    let run = ws.run(&["--backend", "tui", "--yes", &format!("run touch {name}")]);
    run.expect_code(0);
    let allowed = format!("[tui] (approval of touch {name}: allowed)");
    assert!(run.stderr().contains(&allowed), "{}", run.stderr());
    assert!(ws.work().join(&name).exists());
    // On a terminal: asked, and the turn goes on after the answer.
    let message = format!("run {LONG}\n");
    let steps = [
        ("agent-loop with backend", 1, message.as_str()),
        ("[y]es once, [a]lways for shell", 1, "y\n"),
        ("Done: created made.txt.", 1, "exit\n"),
    ];
    let (code, screen) = crate::repl::dialogue_in(&ws, "plain", "--backend tui", &steps);
    assert_eq!(code, 0, "{screen}");
    // The question's rows, as the front end folds them at its width.
    let asked: String = screen
        .lines()
        .skip_while(|l| !l.starts_with("Allow shell? It asks to run"))
        .skip(1)
        .map_while(|l| l.strip_prefix("  | "))
        .collect();
    assert_eq!(asked, LONG, "{screen}");
    assert!(screen.contains("Done: created made.txt."), "{screen}");
    assert!(ws.work().join("made.txt").exists());
    ws.assert_no_leftovers();
}

#[test]
fn a_question_taller_than_the_screen_is_denied_unread() {
    let ws = tui("timeout_s = 60");
    // Its box has more rows than the fake's screen shows: its start scrolls off.
    let message = format!("run touch made.txt && echo{}", " word".repeat(400));
    let run = ws.run(&["--backend", "tui", &message]);
    run.expect_code(0);
    let note = "[tui] (approval of [cut: the question's start is off the agent's screen]: \
                denied: its start is off the agent's screen";
    assert!(run.stderr().contains(note), "{}", run.stderr());
    assert!(!ws.work().join("made.txt").exists());
    // --yes allows everything, this too.
    let run = ws.run(&["--backend", "tui", "--yes", &message]);
    run.expect_code(0);
    assert!(ws.work().join("made.txt").exists());
    ws.assert_no_leftovers();
}

#[test]
fn an_agent_that_dies_is_reported_and_started_again() {
    let ws = tui("timeout_s = 60");
    let run = ws.run(&["--backend", "tui", "die"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(err.contains("the agent exited with status 3"), "{err}");
    // Its last screen, though it left the alternate screen as it went.
    assert!(err.contains("fatal: crashing on purpose"), "{err}");
    let ws = tui("timeout_s = 60");
    let (code, screen) = repl(&ws, "--backend tui", "die\nhello again\nexit\n");
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("exited with status 3"), "{screen}");
    assert!(screen.contains("agent started again"), "{screen}");
    // The new agent is given the conversation so far, the turn it did not finish too.
    assert_caught_up(
        &ws,
        &screen,
        &["User: die", "User: hello again"],
        "1 earlier message",
    );
    assert_eq!(starts(&ws), 2);
    ws.assert_no_leftovers();
}

#[test]
fn a_message_never_taken_is_an_error_after_a_second_submit() {
    let ws = tui("args = [\"--deaf\"]\ntimeout_s = 60");
    let run = ws.run(&["--backend", "tui", "hello"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(
        err.contains("the agent did not take the message: it was still in its input box"),
        "{err}"
    );
    assert!(err.contains("│ > hello"), "the screen is quoted: {err}");
    ws.assert_no_leftovers();
}

#[test]
fn a_screen_that_never_settles_times_out() {
    let ws = tui("args = [\"--busy\"]\ntimeout_s = 2");
    let run = ws.run(&["--backend", "tui", "hello"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(
        err.contains("backend `tui`: no answer after 2s (timeout_s in "),
        "{err}"
    );
    assert!(
        err.contains("still waiting for the answer to be complete"),
        "{err}"
    );
    assert!(err.contains("esc to cancel"), "the screen is quoted: {err}");
    ws.assert_no_leftovers();
}

#[test]
fn doctor_shows_the_screen_and_what_decided() {
    let ws = tui("timeout_s = 60");
    let run = ws.run(&["doctor", "tui"]);
    run.expect_code(0);
    let out = run.stdout();
    // Each phase's time and rule, in order.
    let phases: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once(':').map(|(p, _)| p))
        .filter(|p| ["start", "ready", "taken", "done"].contains(p))
        .collect();
    assert_eq!(phases, ["start", "ready", "taken", "done"], "{out}");
    for part in [
        "a terminal agent (type = \"pty\"), 80x24 xterm-256color",
        "  started ",
        " s  ready_regex `Type your message` matched `Type your message`",
        " s  the message left the input box",
        " s  done_regex `^✓ done` matched `✓ done`",
        "--- final screen",
        "> This is a connection test.",
        "--- answer",
        "The answer is 42.",
    ] {
        assert!(out.contains(part), "{part:?} in:\n{out}");
    }
    ws.assert_no_leftovers();
}

#[test]
fn a_cancelled_turn_leaves_an_agent_that_is_started_again() {
    let ws = tui("timeout_s = 60");
    let mut pty = Pty::spawn(&ws, &[], &["--display", "plain", "--backend", "tui"]);
    pty.wait_for("agent-loop with backend");
    pty.send("spin\n");
    // The agent has the message and spins: Ctrl-C cancels the turn.
    assert!(
        poll(|| messages(&ws).iter().any(|m| m == "spin").then_some(())).is_some(),
        "the agent never got the message"
    );
    pty.send("\x03");
    pty.wait_for("[turn cancelled");
    pty.send("hello after\nexit\n");
    let (code, bytes) = pty.finish();
    let screen = String::from_utf8_lossy(&bytes);
    crate::common::assert_append_only("the plain REPL", &bytes);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("(agent started again: its last turn did not finish"),
        "{screen}"
    );
    // The new agent is given the conversation so far, the turn it did not finish too.
    assert_caught_up(
        &ws,
        &screen,
        &["User: spin", "User: hello after"],
        "2 earlier messages",
    );
    assert_eq!(starts(&ws), 2);
    ws.assert_no_leftovers();
}

#[test]
fn doctor_warns_about_a_row_matching_update_regex() {
    // The fake TUI's banner stands in for an update banner here.
    let ws = tui("timeout_s = 60\nupdate_regex = '^Fake TUI v\\d'");
    let run = ws.run(&["doctor", "tui"]);
    run.expect_code(0);
    let out = run.stdout();
    assert!(
        out.contains("warning: the agent shows an update banner (update_regex): Fake TUI v1"),
        "{out}"
    );
    let quiet = tui("timeout_s = 60");
    let out = quiet.run(&["doctor", "tui"]).stdout();
    assert!(!out.contains("warning:"), "{out}");
    ws.assert_no_leftovers();
}

#[test]
fn an_agent_switched_to_mid_conversation_is_given_it_once() {
    let ws = tui("timeout_s = 60");
    ws.reply(1, "Paris, of course.\n");
    let keys = "where is the louvre?\n/backend tui\nand its river?\nhow old is it?\nexit\n";
    let (code, screen) = repl(&ws, "--backend fake", keys);
    assert_eq!(code, 0, "{screen}");
    let sent = messages(&ws);
    assert_eq!(sent.len(), 3, "{sent:?}");
    // The new TUI's first message: the conversation, pasted as one.
    let first = &sent[0];
    for part in [
        "User: where is the louvre?",
        "Assistant: Paris, of course.",
        "User: and its river?",
    ] {
        assert!(first.contains(part), "{part:?} in {first}");
    }
    assert!(first.lines().count() > 3, "{first}");
    assert!(
        screen.contains(
            "(the agent's new session is given the conversation so far: 2 earlier messages)"
        ),
        "{screen}"
    );
    // Then only the newest message, to the same TUI.
    assert_eq!(sent[1..], ["how old is it?", "/quit"]);
    assert_eq!(starts(&ws), 1);
    ws.assert_no_leftovers();
}

#[test]
fn undo_starts_the_agent_again_without_the_removed_turn() {
    let ws = tui("timeout_s = 60");
    let keys = "remember banana\nremember cherry\n/undo\nwhat did I ask you to remember?\nexit\n";
    let (code, screen) = repl(&ws, "--backend tui", keys);
    assert_eq!(code, 0, "{screen}");
    let sent = messages(&ws);
    assert_eq!(sent.len(), 5, "{sent:?}");
    assert_eq!(sent[..3], ["remember banana", "remember cherry", "/quit"]);
    assert!(
        screen.contains("(agent started again: the conversation changed"),
        "{screen}"
    );
    let caught_up = &sent[3];
    assert!(
        caught_up.contains("User: remember banana")
            && caught_up.contains("User: what did I ask you to remember?"),
        "{caught_up}"
    );
    assert!(!caught_up.contains("cherry"), "{caught_up}");
    assert_eq!(sent[4], "/quit");
    assert_eq!(starts(&ws), 2);
    ws.assert_no_leftovers();
}
