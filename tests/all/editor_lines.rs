//! The REPL's entries of several lines and what is listed under them, as a person sees them
//! on a vt100 screen fed the pty's bytes: Up and Down move between an entry's lines before
//! they reach the history, in the line editor and the view's input line alike, and Up after a
//! prefix shows only the entries that start with it, and Home, End and the kills act on the
//! cursor's line; Tab's list is broken at spaces on a
//! phone's 40 columns; Ctrl-C at an approval question starts its notice on a line of its own.

use crate::common::{poll, Pty, Workspace};
use crate::editor::wait_prompt;
use crate::view::{is_status, nz, rows, spawn as spawn_view, wait_screen};

/// The history before the run, oldest first (a block of three lines among them).
const KEPT: &str = "read a.txt\nrun echo hi\nread b.txt\nfirst\\nsecond\\nthird\nrun echo third\n";

/// Three lines typed with Alt-Enter between them.
const TYPED: &str = "aaa\x1b\rbbbbbbb\x1b\rcc";

/// A vt100 screen of `rows` by `cols` fed everything the pty showed.
fn screen_of(pty: &Pty, rows: u16, cols: u16) -> vt100::Parser {
    let mut parser = vt100::Parser::new(nz(rows), nz(cols), 0);
    parser.process(&pty.output());
    parser
}

/// Waits until the 80x24 screen shows `lines` on rows one under the other, the cursor on the
/// `line`th of them at column `col`.
fn wait_lines(pty: &Pty, what: &str, lines: &[&str], (line, col): (usize, u16)) {
    let shown = poll(|| {
        let parser = screen_of(pty, 24, 80);
        let rows = rows(&parser);
        let at = rows.windows(lines.len()).position(|w| w == lines)?;
        let cursor = parser.screen().cursor_position();
        (cursor == ((at + line) as u16, col)).then_some(())
    });
    let parser = screen_of(pty, 24, 80);
    assert!(
        shown.is_some(),
        "never saw {what}: cursor at {:?} on\n{}",
        parser.screen().cursor_position(),
        rows(&parser).join("\n")
    );
}

/// The keys of the test below and what each leaves: the lines shown and where the cursor is
/// (the line of them, the column).
fn up_and_down(pty: &mut Pty) {
    let draft = ["You: aaa", "bbbbbbb", "cc"];
    pty.send(TYPED);
    wait_lines(pty, "three lines", &draft, (2, 2));
    // Up keeps the column: on the middle line, then on the first (after the label).
    pty.send("\x1b[A");
    wait_lines(pty, "Up: the middle line", &draft, (1, 2));
    pty.send("\x1b[A");
    wait_lines(pty, "Up: the first line", &draft, (0, 7));
    // From the first line, the history (every entry: a draft of several lines is no prefix).
    pty.send("\x1b[A");
    wait_lines(
        pty,
        "Up: the newest entry",
        &["You: run echo third"],
        (0, 19),
    );
    pty.send("\x1b[A");
    wait_lines(
        pty,
        "Up: a block",
        &["You: first", "second", "third"],
        (2, 5),
    );
    pty.send("\x1b[A");
    wait_lines(
        pty,
        "Up within it",
        &["You: first", "second", "third"],
        (1, 5),
    );
    pty.send("\x1b[B\x1b[B\x1b[B");
    wait_lines(pty, "Down to the draft", &draft, (0, 7));
    pty.send("\x1b[B");
    wait_lines(pty, "Down: the middle line", &draft, (1, 2));
    // Ctrl-E, Ctrl-A and Ctrl-K act on that line, not on the whole entry.
    pty.send("\x05");
    wait_lines(pty, "Ctrl-E: the line's end", &draft, (1, 7));
    pty.send("\x01\x0b");
    wait_lines(pty, "Ctrl-K: the line", &["You: aaa", "", "cc"], (1, 0));
    // A prefix: only the entries that start with it, then Down back to it.
    pty.send("\x03re\x1b[A");
    wait_lines(pty, "Up after `re`", &["You: read b.txt"], (0, 15));
    pty.send("\x1b[A");
    wait_lines(pty, "Up again", &["You: read a.txt"], (0, 15));
    pty.send("\x1b[B\x1b[B");
    wait_lines(pty, "Down to the prefix", &["You: re"], (0, 7));
    pty.send("\x15\x04");
}

#[test]
fn up_and_down_move_between_an_entrys_lines_then_recall_by_prefix_in_the_editor_and_the_view() {
    for view in [false, true] {
        let ws = Workspace::new();
        let file = ws.path("state/agent-loop/history");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, KEPT).unwrap();
        let mut pty = match view {
            false => {
                let env = [("TERM", "xterm-256color")];
                let pty =
                    Pty::spawn_after(&ws, &env, "stty rows 24 cols 80", &["--backend", "demo"]);
                wait_prompt(&pty);
                pty
            }
            true => {
                let pty = spawn_view(&ws, "xterm-256color", &[]);
                wait_screen(&pty, "the status line", |r| is_status(&r[22]));
                pty
            }
        };
        up_and_down(&mut pty);
        let (code, bytes) = pty.finish();
        assert_eq!(code, 0, "view {view}: {}", String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn tabs_list_is_broken_at_spaces_on_forty_columns() {
    let ws = Workspace::new();
    let env = [("TERM", "xterm-256color")];
    let mut pty = Pty::spawn_after(&ws, &env, "stty rows 12 cols 40", &["--backend", "demo"]);
    pty.wait_for(crate::editor::PASTE_ON);
    pty.send("/\t\t");
    let list = poll(|| {
        let rows = rows(&screen_of(&pty, 12, 40));
        let first = rows.iter().position(|r| r.starts_with("/backend"))?;
        let last = rows.iter().rposition(|r| r == "You: /")?;
        (last > first).then(|| rows[first..last].to_vec())
    });
    let list = list.unwrap_or_else(|| panic!("{}", rows(&screen_of(&pty, 12, 40)).join("\n")));
    let names: Vec<&str> = list.iter().flat_map(|r| r.split_whitespace()).collect();
    // Cut by the terminal, `/compare` would be `/co` and `mpare` on the next row.
    assert!(names.iter().all(|n| n.starts_with('/')), "{list:#?}");
    for whole in ["/compare", "/skills", "/load"] {
        assert!(names.contains(&whole), "{whole}: {list:#?}");
    }
    assert!(list.iter().all(|r| r.chars().count() < 40), "{list:#?}");
    pty.send("\x15\x04");
    assert_eq!(pty.finish().0, 0);
}

#[test]
fn ctrl_c_at_an_approval_question_starts_the_notice_on_a_line_of_its_own() {
    let ws = Workspace::new();
    let env = [("TERM", "xterm-256color")];
    let mut pty = Pty::spawn_after(&ws, &env, "stty rows 24 cols 80", &["--backend", "demo"]);
    wait_prompt(&pty);
    pty.send("run echo hi\r");
    pty.wait_for("[n]o: ");
    pty.send("\x03");
    pty.wait_for("[turn cancelled");
    wait_prompt(&pty);
    let rows = rows(&screen_of(&pty, 24, 80));
    let notice = rows.iter().position(|r| r.contains("[turn cancelled"));
    let notice = notice.expect("the notice");
    assert!(rows[notice].starts_with("[turn cancelled: "), "{rows:#?}");
    assert!(rows[notice - 1].contains("[n]o: "), "{rows:#?}");
    pty.send("\x04");
    assert_eq!(pty.finish().0, 0);

    // The view's question is its input line: after Ctrl-C it is idle again, and the next
    // entry is an entry (kept in the history), not an answer.
    let ws = Workspace::new();
    let mut pty = spawn_view(&ws, "xterm-256color", &[]);
    wait_screen(&pty, "the status line", |r| is_status(&r[22]));
    pty.send("run echo hi\r");
    wait_screen(&pty, "the question", |r| {
        r[23].ends_with("[y/a/n]:") || r[23].contains("[n]o:")
    });
    pty.send("\x03");
    wait_screen(&pty, "idle after Ctrl-C", |r| {
        r.iter().any(|l| l.starts_with("[turn cancelled")) && r[22].starts_with("idle")
    });
    pty.send("next task\r");
    pty.wait_for("Your task was: \"next task\"");
    wait_screen(&pty, "idle", |r| r[22].starts_with("idle"));
    pty.send("\x1b[A");
    wait_screen(&pty, "Up: the entry", |r| r[23] == "You: next task");
    pty.send("\x15\x04");
    assert_eq!(pty.finish().0, 0);
}
