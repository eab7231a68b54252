//! The view (`--display view`) as a person sees it: the REPL on a pseudo-terminal whose
//! bytes a vt100 screen shows, with the terminfo entries of xterm, tmux and screen, and
//! inside tmux itself (a real terminal, where many Termux users run agent-loop). Keys are
//! typed; what the screen shows after them is asserted: the three parts, PgUp reaching the
//! first turn of a long session, a resize keeping the input on the last row (on one or two
//! rows too, an approval's question with it), and after leaving a visible cursor, a whole
//! scroll region and the conversation in the scrollback.

use std::process::Command;

use crate::common::{poll, Pty, Workspace};
use crate::tmux::Tmux;

const COLS: u16 = 80;
const ROWS: u16 = 24;

/// The terminal of the pty: a vt100 screen fed everything written so far.
pub(crate) fn screen(pty: &Pty) -> vt100::Parser {
    let mut parser = vt100::Parser::new(nz(ROWS), nz(COLS), 0);
    parser.process(&pty.output());
    parser
}

pub(crate) fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap()
}

pub(crate) fn rows(parser: &vt100::Parser) -> Vec<String> {
    let screen = parser.screen();
    let cols = screen.size().1.get();
    screen
        .rows(0, cols)
        .map(|r| r.trim_end().to_string())
        .collect()
}

/// Waits until the screen's rows satisfy `check`; panics showing them if they never do.
pub(crate) fn wait_screen(pty: &Pty, what: &str, check: impl Fn(&[String]) -> bool) -> Vec<String> {
    poll(|| Some(rows(&screen(pty))).filter(|r| check(r)))
        .unwrap_or_else(|| panic!("never saw {what}:\n{}", rows(&screen(pty)).join("\n")))
}

/// The REPL in the view on an 80x24 pty with `TERM=term`.
pub(crate) fn spawn(ws: &Workspace, term: &str, args: &[&str]) -> Pty {
    let mut argv = vec!["--backend", "demo", "--display", "view"];
    argv.extend(args);
    Pty::spawn_after(
        ws,
        &[("TERM", term)],
        &format!("stty rows {ROWS} cols {COLS}"),
        &argv,
    )
}

/// A session `long` of `turns` turns with the demo agent, each answer a dozen lines.
fn long_session(ws: &Workspace, turns: usize) {
    for i in 1..=turns {
        ws.run(&[
            "--backend",
            "demo",
            "--session",
            "long",
            &format!("task {i}"),
        ])
        .expect_code(0);
    }
}

/// Resizes agent-loop's terminal to `rows` by `cols` (it gets SIGWINCH).
pub(crate) fn resize(ws: &Workspace, rows: u16, cols: u16) {
    let pid = ws.wait_for_process("agent-loop");
    let resized = ws
        .hermetic(&mut Command::new("stty"))
        .arg("-F")
        .arg(format!("/proc/{pid}/fd/0"))
        .args(["rows", &rows.to_string(), "cols", &cols.to_string()])
        .status()
        .expect("stty");
    assert!(resized.success());
}

pub(crate) fn is_status(row: &str) -> bool {
    row.starts_with("idle | demo") || row.starts_with("running ")
}

#[test]
fn the_view_draws_three_parts_and_gives_the_terminal_back_for_each_entry() {
    let csr = regex::bytes::Regex::new(r"\x1b\[\d+;\d+r").unwrap();
    for term in [
        "xterm-256color",
        "tmux-256color",
        "screen-256color",
        "screen",
    ] {
        let ws = Workspace::new();
        let mut pty = spawn(&ws, term, &[]);
        wait_screen(&pty, "the status line", |r| is_status(&r[22]));
        pty.send("hello there\r");
        let shown = wait_screen(&pty, "the answer", |r| {
            r.iter().any(|l| l.contains("cannot answer that")) && r[22].starts_with("idle")
        });
        assert!(
            shown.iter().any(|l| l == "You: hello there"),
            "{term}: {shown:?}"
        );
        assert_eq!(shown[23], "You:", "{term}");
        pty.send("\x04");
        let (code, bytes) = pty.finish();
        assert_eq!(code, 0, "{term}: {}", String::from_utf8_lossy(&bytes));
        let mut after = vt100::Parser::new(nz(ROWS), nz(COLS), 0);
        after.process(&bytes);
        let end = after.screen();
        assert!(!end.hide_cursor(), "{term}: cursor left hidden");
        assert!(!end.alternate_screen(), "{term}");
        let text = rows(&after).join("\n");
        assert!(text.contains("You: hello there"), "{term}: {text}");
        assert!(text.contains("[session "), "{term}: {text}");
        // The last scroll region set is the whole screen.
        let last = csr.find_iter(&bytes).last().expect("a scroll region");
        assert_eq!(
            last.as_bytes(),
            format!("\x1b[1;{ROWS}r").as_bytes(),
            "{term}"
        );
    }
}

#[test]
fn pgup_reaches_the_first_turn_of_a_resumed_session_and_end_returns() {
    let ws = Workspace::new();
    long_session(&ws, 6);
    let mut pty = spawn(&ws, "xterm-256color", &["--session", "long"]);
    let live = wait_screen(&pty, "the view", |r| is_status(&r[22]));
    assert!(!live.iter().any(|l| l == "You: task 1"), "{live:?}");
    for _ in 0..10 {
        pty.send("\x1b[5~");
    }
    let back = wait_screen(&pty, "the first turn", |r| {
        r.iter().any(|l| l == "You: task 1")
    });
    assert!(back[22].contains("below (End)"), "{back:?}");
    // The second pair, for keyboards without PgUp and PgDn.
    pty.send("\x06\x06\x06\x06\x06\x06\x06\x06\x06\x06");
    wait_screen(&pty, "the live end", |r| r[22].starts_with("idle | demo"));
    pty.send("\x02");
    wait_screen(&pty, "a page back", |r| r[22].contains("below (End)"));
    pty.send("\x1b[F");
    wait_screen(&pty, "the live end", |r| r[22].starts_with("idle | demo"));
    pty.send("exit\r");
    assert_eq!(pty.finish().0, 0);
}

#[test]
fn a_resize_keeps_the_input_on_the_last_row() {
    let ws = Workspace::new();
    let mut pty = spawn(&ws, "xterm-256color", &[]);
    wait_screen(&pty, "the view", |r| is_status(&r[22]));
    pty.send("half typed");
    wait_screen(&pty, "the typed text", |r| r[23] == "You: half typed");
    resize(&ws, 12, 40);
    let shown = poll(|| {
        let mut parser = vt100::Parser::new(nz(12), nz(40), 0);
        parser.process(&pty.output());
        let r = rows(&parser);
        (r[11] == "You: half typed" && is_status(&r[10])).then_some(r)
    });
    assert!(
        shown.is_some(),
        "{}",
        String::from_utf8_lossy(&pty.output())
    );
    pty.send("\x15exit\r");
    assert_eq!(pty.finish().0, 0);
}

/// On a screen of two rows the status line gives way (drawn over the input row, it hid an
/// approval's question until a key was typed), on one row the conversation too: the input
/// line, with the question, always stays.
#[test]
fn on_one_or_two_rows_the_input_line_and_its_question_stay() {
    for height in [2u16, 1] {
        let ws = Workspace::new();
        let args = ["--backend", "demo", "--display", "view"];
        let size = format!("stty rows {height} cols {COLS}");
        let mut pty = Pty::spawn_after(&ws, &[("TERM", "xterm-256color")], &size, &args);
        let wait = |pty: &Pty, what: &str, check: &dyn Fn(&[String]) -> bool| {
            let seen = || {
                let mut parser = vt100::Parser::new(nz(height), nz(COLS), 0);
                parser.process(&pty.output());
                rows(&parser)
            };
            poll(|| Some(seen()).filter(|r| check(r)))
                .unwrap_or_else(|| panic!("{height} rows: never saw {what}: {:?}", seen()))
        };
        wait(&pty, "the input line", &|r| {
            r.last().is_some_and(|l| l == "You:")
        });
        pty.send("run echo hi\r");
        let asked = wait(&pty, "the question", &|r| {
            r.last()
                .is_some_and(|l| l == "[y]es once, [a]lways for bash, [n]o:")
        });
        if height == 2 {
            assert_eq!(asked[0], "  | echo hi");
        }
        pty.send("y\r");
        let done = wait(&pty, "the input line again", &|r| {
            r.last().is_some_and(|l| l == "You:") && (height == 1 || r[0].starts_with("[context"))
        });
        assert!(!done.iter().any(|l| is_status(l)), "{done:?}");
        leave_with_the_answer(pty);
    }
}

/// Ctrl-D leaves, and leaving prints the conversation: the demo's answer to `run echo hi`,
/// which the screen may have had no room for, too.
fn leave_with_the_answer(mut pty: Pty) {
    pty.send("\x04");
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&bytes));
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("Done. For \"run echo hi\""), "{text}");
}

/// On a short, narrow screen (a phone with its keyboard open) the approval's answers do not
/// fit the one input row: they are shown short, where the row showed only the long line's
/// end or the cursor's empty row.
#[test]
fn on_a_short_narrow_screen_the_answers_are_shortened() {
    const NARROW: u16 = 30;
    for height in [2u16, 4] {
        let ws = Workspace::new();
        let args = ["--backend", "demo", "--display", "view"];
        let size = format!("stty rows {height} cols {NARROW}");
        let mut pty = Pty::spawn_after(&ws, &[("TERM", "xterm-256color")], &size, &args);
        let seen = |pty: &Pty| {
            let mut parser = vt100::Parser::new(nz(height), nz(NARROW), 0);
            parser.process(&pty.output());
            rows(&parser)
        };
        poll(|| seen(&pty).last().filter(|l| *l == "You:").cloned())
            .unwrap_or_else(|| panic!("{height} rows: no input line: {:?}", seen(&pty)));
        pty.send("run echo hi\r");
        poll(|| seen(&pty).last().filter(|l| *l == "[y/a/n]:").cloned())
            .unwrap_or_else(|| panic!("{height} rows: no short answers: {:?}", seen(&pty)));
        pty.send("y\r");
        poll(|| seen(&pty).last().filter(|l| *l == "You:").cloned())
            .unwrap_or_else(|| panic!("{height} rows: no input line after: {:?}", seen(&pty)));
        leave_with_the_answer(pty);
    }
}

/// Inside tmux, where the view is drawn with tmux's own entry.
#[test]
fn inside_tmux_pgup_resize_and_leaving() {
    if Command::new("tmux").arg("-V").output().is_err() {
        return;
    }
    let ws = Workspace::new();
    long_session(&ws, 6);
    let args = "--backend demo --display view --session long";
    let tmux = Tmux::start_then(&ws, "tmux-256color", args, "sleep 60");
    tmux.wait_for("the status line", |s| {
        s.lines().nth(22).is_some_and(is_status)
    });
    for _ in 0..10 {
        tmux.run(&["send-keys", "PPage"]);
    }
    tmux.wait_for("the first turn", |s| s.lines().any(|l| l == "You: task 1"));
    tmux.run(&["send-keys", "End"]);
    tmux.run(&["resize-window", "-x", "50", "-y", "14"]);
    let screen = tmux.wait_for("the input on the last row", |s| {
        let lines: Vec<&str> = s.lines().collect();
        lines.len() == 14 && lines[13] == "You:" && is_status(lines[12])
    });
    assert!(!screen.contains("You: task 1"), "{screen}");
    tmux.type_line("exit");
    assert_eq!(poll(|| tmux.exit_status()), Some(0), "{}", tmux.screen());
    let state = tmux.run(&[
        "display",
        "-p",
        "#{cursor_flag} #{scroll_region_upper} #{scroll_region_lower} #{alternate_on}",
    ]);
    assert_eq!(String::from_utf8_lossy(&state.stdout).trim(), "1 0 13 0");
    let history = tmux.run(&["capture-pane", "-p", "-S", "-"]);
    let history = String::from_utf8_lossy(&history.stdout);
    assert!(history.contains("You: exit"), "{history}");
    assert!(history.contains("[session long: 6 turns"), "{history}");
}
