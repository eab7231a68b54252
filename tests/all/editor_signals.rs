//! What the terminal itself would do while the REPL's line editor has it in key-at-a-time
//! mode (no signals from keys), as a person at a vt100 screen on a pseudo-terminal sees it:
//! Ctrl-D typed while a turn runs, or as it ends, leaves once it is done; a resize redraws the entry at once
//! for the new width; Ctrl-Z (at the prompt and in the view) gives the terminal back to the
//! shell and stops, and `fg` finds the entry (or the whole view) drawn again and editing.

use crate::common::{command_line, poll, Pty, Workspace};
use crate::editor::{wait_cursor_row, PASTE_ON};
use crate::view::{is_status, nz, resize, rows, screen, wait_screen};

#[test]
fn ctrl_d_typed_while_a_turn_runs_leaves_once_it_is_done() {
    let ws = Workspace::new();
    ws.gated_backend();
    ws.reply(0, "the answer\n");
    let argv = ["--backend", "slow", "--display", "terminfo"];
    let env = [("TERM", "xterm-256color")];
    let mut pty = Pty::spawn_after(&ws, &env, "stty rows 24 cols 80", &argv);
    pty.wait_for("agent-loop with backend");
    pty.send("first\r");
    assert!(poll(|| ws.gate_reached().then_some(())).is_some());
    // The first key after the entry: the terminal is in its line mode again.
    pty.send("\x04");
    ws.open_gate();
    let (code, bytes) = pty.finish();
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("the answer"), "{text}");
    assert!(text.contains(": 1 turn,"), "{text}");
}

/// A Ctrl-D the terminal's line mode still holds when the prompt comes (typed as the turn
/// ended): made deterministic by typing it before agent-loop starts, behind a line the shell
/// reads. The switch to key-at-a-time mode would turn it into a NUL, and the REPL would stay.
#[test]
fn ctrl_d_the_line_mode_still_holds_at_the_prompt_ends_the_repl() {
    let ws = Workspace::new();
    let env = [("TERM", "xterm-256color")];
    let setup = "stty rows 24 cols 80; read -r typed";
    let mut pty = Pty::spawn_after(&ws, &env, setup, &["--backend", "demo"]);
    pty.send("go\n\x04");
    let code = pty.exit_code();
    let text = String::from_utf8_lossy(&pty.output()).into_owned();
    assert_eq!(code, Some(0), "the REPL did not leave:\n{text}");
    assert!(text.contains("agent-loop with backend"), "{text}");
}

#[test]
fn a_resize_at_the_prompt_redraws_the_entry_at_once() {
    let ws = Workspace::new();
    let env = [("TERM", "xterm-256color")];
    let argv = ["--backend", "demo"];
    let mut pty = Pty::spawn_after(&ws, &env, "stty rows 24 cols 80", &argv);
    pty.wait_for(PASTE_ON);
    let typed = "a".repeat(50);
    pty.send(&typed);
    wait_cursor_row(&pty, "the entry", |r| r == format!("You: {typed}"));
    // What was written before the resize is shown at 80 columns; the rest at 40, as a
    // terminal that does not rewrap its lines shows it.
    let before = pty.output().len();
    resize(&ws, 12, 40);
    let redrawn = poll(|| {
        let bytes = pty.output();
        let mut parser = vt100::Parser::new(nz(24), nz(80), 0);
        parser.process(&bytes[..before]);
        parser.screen_mut().set_size(nz(12), nz(40));
        parser.process(&bytes[before..]);
        let (row, col) = parser.screen().cursor_position();
        let rows = rows(&parser);
        let row = usize::from(row);
        (row > 0
            && rows[row - 1] == format!("You: {}", &typed[..35])
            && rows[row] == typed[..15]
            && col == 15)
            .then_some(())
    });
    assert!(
        redrawn.is_some(),
        "no redraw at 40 columns:\n{}",
        String::from_utf8_lossy(&pty.output()[before..])
    );
    pty.send("\x15exit\r");
    assert_eq!(pty.finish().0, 0);
}

/// agent-loop with `args` from a shell with job control on an 80x24 pty: when it stops, the
/// shell prints `[suspended CODE]`, then `[lines]` if the terminal is in its line mode again
/// (`[keys]` if not), then takes it up again with `fg` and prints `[ended CODE]`.
fn under_job_control(ws: &Workspace, args: &[&str]) -> Pty {
    let line = format!(
        "stty rows 24 cols 80; set -m; {}; echo \"[suspended $?]\"; \
         case $(stty) in *-icanon*) echo '[keys]';; *) echo '[lines]';; esac; \
         fg; echo \"[ended $?]\"",
        command_line(ws, args)
    );
    Pty::spawn_shell(ws, &[("TERM", "xterm-256color")], &line)
}

#[test]
fn ctrl_z_gives_the_terminal_back_and_fg_takes_up_the_entry_again() {
    let ws = Workspace::new();
    let mut pty = under_job_control(&ws, &["--backend", "demo"]);
    pty.wait_for(PASTE_ON);
    pty.send("half typed");
    wait_cursor_row(&pty, "the entry", |r| r == "You: half typed");
    pty.send("\x1a");
    // Stopped (128 + SIGTSTP), the terminal in its line mode again.
    pty.wait_for("[suspended 148]");
    pty.wait_for("[lines]");
    let given_back = String::from_utf8_lossy(&pty.output()).into_owned();
    let stop = given_back.find("[suspended").unwrap();
    assert!(
        given_back[..stop].ends_with("\x1b[?2004l"),
        "bracketed paste left on: {given_back:?}"
    );
    // `fg`: the entry drawn again below the shell's lines, and editing.
    let below = |rows: &[String], at: usize| rows[..at].iter().any(|r| r == "[lines]");
    assert!(
        poll(|| {
            let parser = screen(&pty);
            let at = usize::from(parser.screen().cursor_position().0);
            let rows = rows(&parser);
            (rows[at] == "You: half typed" && below(&rows, at)).then_some(())
        })
        .is_some(),
        "the entry was not drawn again:\n{}",
        rows(&screen(&pty)).join("\n")
    );
    finish_the_entry_and_exit(pty);
}

#[test]
fn ctrl_z_in_the_view_gives_the_terminal_back_and_fg_draws_the_view_again() {
    let ws = Workspace::new();
    let mut pty = under_job_control(&ws, &["--backend", "demo", "--display", "view"]);
    wait_screen(&pty, "the status line", |r| is_status(&r[22]));
    pty.send("half typed");
    wait_screen(&pty, "the entry", |r| r[23] == "You: half typed");
    pty.send("\x1a");
    // Stopped (128 + SIGTSTP), the terminal given back whole: its line mode, the main
    // screen, the scroll region over every row, the cursor shown, bracketed paste off.
    pty.wait_for("[suspended 148]");
    pty.wait_for("[lines]");
    let given_back = String::from_utf8_lossy(&pty.output()).into_owned();
    let stop = given_back.find("[suspended").unwrap();
    let reset = given_back[..stop]
        .rfind("\x1b[1;24r")
        .expect("the scroll region reset");
    for part in ["\x1b[?25h", "\x1b[?2004l", "\x1b[?1049l"] {
        assert!(
            given_back[reset..stop].contains(part),
            "{part:?} not sent on Ctrl-Z: {:?}",
            &given_back[reset..stop]
        );
    }
    // `fg`: the view drawn whole again (after the shell's lines, on the alternate screen
    // that smcup cleared), the entry as it was, and editing.
    wait_screen(&pty, "the view again", |r| {
        is_status(&r[22]) && r[23] == "You: half typed" && !r.iter().any(|l| l == "[lines]")
    });
    let output = String::from_utf8_lossy(&pty.output()).into_owned();
    let shell = output.find("[lines]").unwrap();
    assert!(
        output[shell..].contains("\x1b[?1049h"),
        "{:?}",
        &output[shell..]
    );
    assert!(
        output[shell..].contains("You: half typed"),
        "{:?}",
        &output[shell..]
    );
    finish_the_entry_and_exit(pty);
}

/// After `fg`: the entry, still editable, completed and sent; then `exit`, and the shell
/// saw agent-loop end with 0.
fn finish_the_entry_and_exit(mut pty: Pty) {
    pty.send(" and done\r");
    pty.wait_for("Your task was: \"half typed and done\"");
    // Typed maybe before the next entry is edited: a line, which the terminal's line mode
    // passes on whole.
    pty.send("exit\r");
    let (code, bytes) = pty.finish();
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("[ended 0]"), "{text}");
}
