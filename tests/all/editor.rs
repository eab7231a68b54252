//! The REPL's line editor and the view's input line as a person uses them: keys typed on a
//! pseudo-terminal whose bytes a vt100 screen shows (with the terminfo entries of xterm, tmux
//! and screen), and inside tmux itself when it is installed. Up recalls the last task, Ctrl-R
//! finds an older one, a three-line bracketed paste is one entry, Tab completes `/backend`'s
//! names, and the history is kept, private, for the next run; a line wider than the screen,
//! wide characters and a combining mark in it, edits in place (the cursor never between a
//! letter and its mark), an entry taller than the screen is edited in a window around the
//! cursor and written whole when sent, Ctrl-C clears the line before twice leaving, and
//! readline's kill, yank, transpose and undo keys do as in a shell. The
//! view also gives the terminal back when SIGTERM, SIGHUP or a panic ends it, and says which
//! capability it lacks when it cannot be drawn.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::common::{poll, send_signal, Pty, Workspace};
use crate::tmux::Tmux;
use crate::view::{is_status, nz, rows, screen, spawn as spawn_view, wait_screen};

/// Three lines pasted (a terminal sends a pasted newline as a carriage return).
const PASTE: &str = "\x1b[200~line one\rline two\rline three\x1b[201~";

/// Bracketed paste turned on: the editor has the terminal, so what is typed is keys, not
/// the line mode's (whose erase character would take Backspace, whose echo would show it).
pub(crate) const PASTE_ON: &str = "\x1b[?2004h";

/// What the history file holds after the keys of the tests below.
const KEPT: &str =
    "first task\nsecond task\nfirst task\nline one\\nline two\\nline three\n/backend demo\n";

/// The REPL with the terminfo display on an 80x24 pty with `TERM=term`.
fn spawn_repl(ws: &Workspace, term: &str) -> Pty {
    Pty::spawn_after(
        ws,
        &[("TERM", term)],
        "stty rows 24 cols 80",
        &["--backend", "demo"],
    )
}

/// Waits until the editor shows its empty prompt: it is drawn once the terminal is in
/// key-at-a-time mode, so keys typed after it are the editor's, never the line mode's (which
/// would echo them, or take Ctrl-U and Ctrl-R as its own).
pub(crate) fn wait_prompt(pty: &Pty) {
    wait_cursor_row(pty, "the prompt", |r| r == "You:");
}

/// Waits until the row the cursor is on satisfies `check`.
pub(crate) fn wait_cursor_row(pty: &Pty, what: &str, check: impl Fn(&str) -> bool) {
    let row = || {
        let parser = screen(pty);
        let at = usize::from(parser.screen().cursor_position().0);
        rows(&parser)[at].clone()
    };
    assert!(
        poll(|| check(&row()).then_some(())).is_some(),
        "never saw {what} on the cursor's row:\n{}",
        rows(&screen(pty)).join("\n")
    );
}

/// The history kept, checked private.
fn history(ws: &Workspace) -> String {
    let file = ws.path("state/agent-loop/history");
    let mode = std::fs::metadata(&file)
        .expect("the history file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    std::fs::read_to_string(file).unwrap()
}

/// The screen after the program ended: the cursor shown, bracketed paste off.
fn assert_given_back(what: &str, bytes: &[u8]) {
    let mut after = vt100::Parser::new(nz(24), nz(80), 0);
    after.process(bytes);
    assert!(!after.screen().hide_cursor(), "{what}: cursor left hidden");
    assert!(!after.screen().alternate_screen(), "{what}");
    let text = String::from_utf8_lossy(bytes);
    if let Some(at) = text.rfind("\x1b[?2004") {
        assert!(
            text[at..].starts_with("\x1b[?2004l"),
            "{what}: paste left on"
        );
    }
}

/// The run ended with Ctrl-D after the keys of the tests below: four turns, one of them the
/// paste whole, the terminal given back and the history kept.
fn assert_the_end(what: &str, ws: &Workspace, pty: Pty) {
    let (code, bytes) = pty.finish();
    let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
    assert_eq!(code, 0, "{what}: {text}");
    assert_four_turns_one_pasted(what, &text);
    assert_given_back(what, &bytes);
    assert_eq!(history(ws), KEPT, "{what}");
}

fn assert_four_turns_one_pasted(what: &str, text: &str) {
    let pasted = "Your task was: \"line one\nline two\nline three\"";
    assert!(text.contains(pasted), "{what}: {text}");
    assert!(text.contains(": 4 turns"), "{what}: {text}");
}

#[test]
fn the_repl_editor_recalls_searches_takes_a_paste_whole_and_completes() {
    for term in ["xterm-256color", "tmux-256color", "screen-256color"] {
        let ws = Workspace::new();
        let mut pty = spawn_repl(&ws, term);
        wait_prompt(&pty);
        pty.send("first task\r");
        pty.wait_for_nth("Your task was", 1);
        wait_prompt(&pty);
        pty.send("second task\r");
        pty.wait_for_nth("Your task was", 2);
        wait_prompt(&pty);
        pty.send("\x1b[A");
        wait_cursor_row(&pty, "Up: the last task", |r| r == "You: second task");
        pty.send("\x1bOA");
        wait_cursor_row(&pty, "Up again", |r| r == "You: first task");
        pty.send("\x15\x12fir");
        wait_cursor_row(&pty, "Ctrl-R", |r| r == "(search) fir: first task");
        pty.send("\r");
        pty.wait_for_nth("Your task was: \"first task\"", 2);
        wait_prompt(&pty);
        pty.send(PASTE);
        pty.send("\r");
        pty.wait_for_nth("Your task was", 4);
        wait_prompt(&pty);
        pty.send("/back\tdem\t");
        wait_cursor_row(&pty, "Tab", |r| r == "You: /backend demo");
        pty.send("\r\x04");
        assert_the_end(term, &ws, pty);
    }
}

#[test]
fn a_wrapped_line_with_wide_characters_edits_in_place_and_ctrl_c_clears_it_then_leaves() {
    let ws = Workspace::new();
    let mut pty = spawn_repl(&ws, "xterm-256color");
    wait_prompt(&pty);
    // 5 + 6 + 1 + 78 columns: the entry wraps after 80.
    let typed = format!("日本語e\u{301}{}", "a".repeat(78));
    pty.send(&typed);
    pty.send("\x1b[H\x1b[C\x1b[CX");
    let first = format!("You: 日本X語e\u{301}{}", "a".repeat(67));
    let shown = poll(|| {
        let parser = screen(&pty);
        let rows = rows(&parser);
        let at = rows.iter().position(|r| *r == first)?;
        let cursor = parser.screen().cursor_position();
        (rows[at + 1] == "a".repeat(11) && cursor == (at as u16, 10)).then_some(())
    });
    assert!(shown.is_some(), "{}", rows(&screen(&pty)).join("\n"));
    pty.send("\x03");
    wait_cursor_row(&pty, "Ctrl-C: the line cleared", |r| r == "You:");
    assert!(!rows(&screen(&pty))
        .iter()
        .any(|r| r.starts_with("aaaaaaaaaaa")));
    pty.send("\x03");
    pty.wait_for("(Ctrl-C again to leave, or type exit)");
    pty.send("\x03");
    let (code, bytes) = pty.finish();
    assert_eq!(code, 130, "{}", String::from_utf8_lossy(&bytes));
    assert_given_back("Ctrl-C twice", &bytes);
}

/// Taller than the screen, an entry (a paste) is edited in a window of 23 rows that keeps the
/// cursor in it; sent, it is written whole into the scrollback, once.
#[test]
fn an_entry_taller_than_the_screen_is_edited_in_a_window_around_the_cursor() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let argv = ["--backend", "fake", "--display", "terminfo"];
    let mut pty = Pty::spawn_after(&ws, &[], "stty rows 24 cols 80", &argv);
    pty.wait_for(PASTE_ON);
    let lines: Vec<String> = (1..=40).map(|i| format!("pasted line {i}")).collect();
    pty.send(&format!("\x1b[200~{}\x1b[201~", lines.join("\r")));
    // The window: the rows `first..=last` of the entry, the cursor on row `at`, each once.
    let window = |first: usize, last: usize, at: usize, col: u16| {
        let lines = &lines;
        move |parser: &vt100::Parser| {
            let rows = rows(parser);
            let (row, column) = parser.screen().cursor_position();
            let top = usize::from(row).checked_sub(at - first)?;
            let shown = rows.get(top..=top + last - first)?;
            let once = lines
                .iter()
                .all(|l| rows.iter().filter(|r| r.ends_with(l.as_str())).count() <= 1);
            let labelled = |i: usize, l: &String| match i {
                0 => format!("You: {l}"),
                _ => l.clone(),
            };
            let expected: Vec<String> = (first..=last).map(|i| labelled(i, &lines[i])).collect();
            (shown == expected && column == col && once).then_some(())
        }
    };
    wait_parser(&pty, "the last 23 rows", &window(17, 39, 39, 14));
    // Ctrl-A to the last line's start, then again to the entry's.
    pty.send("\x01\x01");
    wait_parser(&pty, "the first 23 rows", &window(0, 22, 0, 5));
    pty.send("X");
    let mut marked = lines.clone();
    marked[0].insert(0, 'X');
    wait_parser(&pty, "the X", &|p: &vt100::Parser| {
        rows(p)
            .iter()
            .any(|r| r == "You: Xpasted line 1")
            .then_some(())
    });
    pty.send("\x05\r");
    pty.wait_for_nth(PASTE_ON, 2);
    pty.send("\x04");
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&bytes));
    assert!(
        ws.prompt(1).contains(&marked.join("\n")),
        "{}",
        ws.prompt(1)
    );
    let mut parser = vt100::Parser::new(nz(24), nz(80), 1000);
    parser.process(&bytes);
    let all = transcript(&mut parser);
    let start = all.iter().position(|r| r == "You: Xpasted line 1");
    let start = start.expect("the entry in the scrollback");
    marked[0].insert_str(0, "You: ");
    assert_eq!(all[start..start + 40], marked);
    // Once: what was drawn while editing left no copies.
    let copies = all.iter().filter(|r| r.ends_with("pasted line 7")).count();
    assert_eq!(copies, 1, "{all:#?}");
}

/// Waits until the screen satisfies `check`.
fn wait_parser(pty: &Pty, what: &str, check: &dyn Fn(&vt100::Parser) -> Option<()>) {
    assert!(
        poll(|| check(&screen(pty))).is_some(),
        "never saw {what}:\n{}",
        rows(&screen(pty)).join("\n")
    );
}

/// Every row the terminal showed, the scrollback's first.
fn transcript(parser: &mut vt100::Parser) -> Vec<String> {
    parser.screen_mut().set_scrollback(usize::MAX);
    let back = parser.screen().scrollback();
    let mut all = Vec::new();
    for off in (1..=back).rev() {
        parser.screen_mut().set_scrollback(off);
        all.push(rows(parser)[0].clone());
    }
    parser.screen_mut().set_scrollback(0);
    all.extend(rows(parser));
    all
}

#[test]
fn the_cursor_never_stands_between_a_letter_and_its_combining_mark() {
    let ws = Workspace::new();
    let mut pty = spawn_repl(&ws, "xterm-256color");
    pty.wait_for(PASTE_ON);
    // Left, then Ctrl-B (as in the shells), from the end: before é whole; Backspace takes
    // the a, Ctrl-F steps over é.
    pty.send("ae\u{301}z\x1b[D\x02\x7f\x06X");
    let shown = poll(|| {
        let parser = screen(&pty);
        let (row, col) = parser.screen().cursor_position();
        (rows(&parser)[usize::from(row)] == "You: e\u{301}Xz" && col == 7).then_some(())
    });
    assert!(shown.is_some(), "{}", rows(&screen(&pty)).join("\n"));
    pty.send("\x01\x1b[3~\r");
    pty.wait_for("Your task was: \"Xz\"");
    // Ctrl-D at the next prompt (editor_signals tests one typed as the turn ends).
    pty.wait_for_nth(PASTE_ON, 2);
    pty.send("\x04");
    assert_eq!(pty.finish().0, 0);
}

#[test]
fn the_view_recalls_searches_takes_a_paste_whole_and_completes() {
    let ws = Workspace::new();
    let mut pty = spawn_view(&ws, "xterm-256color", &[]);
    wait_screen(&pty, "the status line", |r| is_status(&r[22]));
    for (i, task) in ["first task", "second task"].iter().enumerate() {
        pty.send(&format!("{task}\r"));
        pty.wait_for_nth("Your task was", i + 1);
    }
    wait_screen(&pty, "idle", |r| r[22].starts_with("idle"));
    pty.send("\x1b[A");
    wait_screen(&pty, "Up", |r| r[23] == "You: second task");
    pty.send("\x1b[A\x15\x12fir");
    wait_screen(&pty, "Ctrl-R", |r| r[23] == "(search) fir: first task");
    pty.send("\r");
    pty.wait_for_nth("Your task was", 3);
    wait_screen(&pty, "idle", |r| r[22].starts_with("idle"));
    pty.send(PASTE);
    pty.send("\r");
    pty.wait_for_nth("Your task was", 4);
    wait_screen(&pty, "idle", |r| r[22].starts_with("idle"));
    pty.send("/back\tdem\t");
    wait_screen(&pty, "Tab", |r| r[23] == "You: /backend demo");
    pty.send("\r\x04");
    assert_the_end("the view", &ws, pty);
}

/// In tmux, a real terminal: its own keys, and a paste tmux brackets itself.
#[test]
fn inside_tmux_up_ctrl_r_a_paste_and_tab() {
    if Command::new("tmux").arg("-V").output().is_err() {
        return;
    }
    let ws = Workspace::new();
    let tmux = Tmux::start_then(&ws, "tmux-256color", "--backend demo", "sleep 60");
    let last = |s: &str| s.lines().last().unwrap_or_default().to_string();
    let answers = |n: usize| move |s: &str| s.matches("Your task was").count() >= n;
    tmux.wait_for("the prompt", |s| last(s) == "You:");
    tmux.type_line("first task");
    tmux.wait_for("an answer", answers(1));
    tmux.type_line("second task");
    tmux.wait_for("a second answer", |s| {
        s.contains("\"second task\"") && last(s) == "You:"
    });
    tmux.run(&["send-keys", "Up", "Up"]);
    tmux.wait_for("Up, Up", |s| last(s) == "You: first task");
    tmux.run(&["send-keys", "C-u", "C-r"]);
    tmux.run(&["send-keys", "-l", "sec"]);
    tmux.wait_for("Ctrl-R", |s| last(s) == "(search) sec: second task");
    tmux.run(&["send-keys", "Enter"]);
    tmux.wait_for("its answer", |s| {
        s.contains("[context 5 messages") && last(s) == "You:"
    });
    tmux.run(&[
        "set-buffer",
        "-b",
        "three",
        "line one\nline two\nline three",
    ]);
    tmux.run(&["paste-buffer", "-p", "-b", "three"]);
    tmux.run(&["send-keys", "Enter"]);
    tmux.wait_for("the paste's answer", |s| {
        s.contains("[context 7 messages") && last(s) == "You:"
    });
    tmux.run(&["send-keys", "-l", "/back"]);
    tmux.run(&["send-keys", "Tab"]);
    tmux.run(&["send-keys", "-l", "dem"]);
    tmux.run(&["send-keys", "Tab"]);
    tmux.wait_for("Tab", |s| last(s) == "You: /backend demo");
    tmux.run(&["send-keys", "Enter", "C-d"]);
    assert_eq!(poll(|| tmux.exit_status()), Some(0), "{}", tmux.screen());
    let all = tmux.run(&["capture-pane", "-p", "-S", "-"]);
    assert_four_turns_one_pasted("tmux", &String::from_utf8_lossy(&all.stdout));
}

#[test]
fn sigterm_sighup_and_a_panic_give_the_terminal_back_from_the_view() {
    let csr = regex::bytes::Regex::new(r"\x1b\[\d+;\d+r").unwrap();
    for (how, code) in [("SIGTERM", 143), ("SIGHUP", 129), ("a panic", 101)] {
        let ws = Workspace::new();
        let mut env = vec![("TERM", "xterm-256color")];
        if how == "a panic" {
            env.push(("AGENT_LOOP_TEST_PANIC", "1"));
        }
        let argv = ["--backend", "demo", "--display", "view"];
        let pty = Pty::spawn_after(&ws, &env, "stty rows 24 cols 80", &argv);
        if how != "a panic" {
            wait_screen(&pty, "the status line", |r| is_status(&r[22]));
            let pid = ws.wait_for_process("agent-loop");
            let signal = if how == "SIGTERM" {
                libc::SIGTERM
            } else {
                libc::SIGHUP
            };
            send_signal(pid as u32, signal);
        }
        let (exit, bytes) = pty.finish();
        assert_eq!(exit, code, "{how}: {}", String::from_utf8_lossy(&bytes));
        assert_given_back(how, &bytes);
        let last = csr.find_iter(&bytes).last().expect("a scroll region");
        assert_eq!(last.as_bytes(), b"\x1b[1;24r", "{how}");
        if how == "a panic" {
            let text = String::from_utf8_lossy(&bytes);
            assert!(text.contains("AGENT_LOOP_TEST_PANIC is set"), "{text}");
        }
    }
}

#[test]
fn an_entry_without_a_capability_the_view_needs_gets_the_terminfo_display_and_says_so() {
    let ws = Workspace::new();
    let mut pty = spawn_view(&ws, "ansi", &[]);
    pty.wait_for(
        "agent-loop: the view needs the terminfo capability `csr`, which TERM=ansi lacks; \
         using the terminfo display",
    );
    pty.wait_for("agent-loop with backend");
    pty.send("exit\r");
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&bytes));
    assert!(!String::from_utf8_lossy(&bytes).contains("\x1b[?1049h"));
}

#[test]
fn with_no_save_nothing_typed_is_written_to_the_history() {
    let ws = Workspace::new();
    let mut pty = Pty::spawn_after(
        &ws,
        &[("TERM", "xterm-256color")],
        "stty rows 24 cols 80",
        &["--backend", "demo", "--no-save"],
    );
    wait_prompt(&pty);
    pty.send("private task\r");
    pty.wait_for("Your task was: \"private task\"");
    wait_prompt(&pty);
    // Recalled within the run all the same.
    pty.send("\x1b[A");
    wait_cursor_row(&pty, "Up: the entry of this run", |r| {
        r == "You: private task"
    });
    pty.send("\x15exit\r");
    let (code, _) = pty.finish();
    assert_eq!(code, 0);
    assert!(!ws.path("state/agent-loop/history").exists());
}

/// Readline's keys, typed in turn, and the line each leaves: Ctrl-W kills a word, Ctrl-Y
/// yanks it back elsewhere, Ctrl-_ undoes that, Alt-Backspace kills a word, Ctrl-T swaps the
/// last two characters.
const READLINE: [(&str, &str); 6] = [
    ("world hello", "You: world hello"),
    ("\x17", "You: world"),
    ("\x01\x19", "You: helloworld"),
    ("\x1f", "You: world"),
    ("\x05\x1b\x7f", "You:"),
    ("hi\x14", "You: ih"),
];

/// The keys of `READLINE` in the REPL's editor and in the view's input line, then in the next
/// entry Ctrl-Y: what was killed last outlives the entry it was killed in.
#[test]
fn readline_keys_kill_yank_swap_and_undo_in_the_repl_and_the_view() {
    let ws = Workspace::new();
    let mut pty = spawn_repl(&ws, "xterm-256color");
    wait_prompt(&pty);
    for (keys, want) in READLINE {
        pty.send(keys);
        wait_cursor_row(&pty, &format!("{keys:?}"), |r| r == want);
    }
    pty.send("\r");
    pty.wait_for("Your task was: \"ih\"");
    wait_prompt(&pty);
    pty.send("\x19");
    wait_cursor_row(&pty, "Ctrl-Y in the next entry", |r| r == "You: world");
    // Killed again, then Ctrl-C on the empty line: what was killed outlives that too.
    pty.send("\x15\x03");
    pty.wait_for("Ctrl-C again");
    wait_prompt(&pty);
    pty.send("\x19");
    wait_cursor_row(&pty, "Ctrl-Y after Ctrl-C", |r| r == "You: world");
    pty.send("\x15\x04");
    assert_eq!(pty.finish().0, 0);

    let ws = Workspace::new();
    let mut pty = spawn_view(&ws, "xterm-256color", &[]);
    wait_screen(&pty, "the status line", |r| is_status(&r[22]));
    for (keys, want) in READLINE {
        pty.send(keys);
        wait_screen(&pty, &format!("{keys:?}"), |r| r[23] == want);
    }
    pty.send("\r");
    pty.wait_for("Your task was: \"ih\"");
    wait_screen(&pty, "idle", |r| r[22].starts_with("idle"));
    pty.send("\x19");
    wait_screen(&pty, "Ctrl-Y in the next entry", |r| r[23] == "You: world");
    pty.send("\x15\x04");
    assert_eq!(pty.finish().0, 0);
}
