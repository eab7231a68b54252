//! The terminfo display's own tests: the bytes of the live region, drawn from a made-up entry
//! whose capabilities print as their names (`{el}`, `{up}`), so a test reads what was drawn.

use super::*;
use crate::cli::display::shared::Captured;
use agent_loop::event::OutputStream;

const FULL: &[(&str, &str)] = &[
    ("cr", "{cr}"),
    ("el", "{el}"),
    ("cuu1", "{up}"),
    ("civis", "{hide}"),
    ("cnorm", "{show}"),
    ("bold", "{bold}"),
    ("sgr0", "{sgr0}"),
    ("setaf", "{fg%p1%d}"),
];

fn caps(entries: &[(&str, &str)]) -> Caps {
    Caps::of_entry(entries, 8)
}

fn display(caps: Caps, tail: usize) -> (TerminfoDisplay, Captured, Captured) {
    let (out, err) = (Captured::default(), Captured::default());
    let d =
        TerminfoDisplay::new(caps, out.boxed(), err.boxed(), false, tail).with_width(|| Some(20));
    (d, out, err)
}

fn output(line: &str) -> Event {
    Event::BackendOutput {
        backend: "fake".into(),
        stream: OutputStream::Stdout,
        line: line.into(),
    }
}

fn started() -> Event {
    Event::BackendStarted {
        backend: "fake".into(),
        iteration: 1,
    }
}

fn finished() -> Event {
    Event::BackendFinished {
        backend: "fake".into(),
        elapsed_ms: 5,
        raw: None,
    }
}

/// What a terminal shows of these bytes, for the test's capabilities: `{cr}` goes to the
/// line's start, `{el}` erases to its end, `{up}` goes a line up; the others show nothing.
fn screen(bytes: &str) -> Vec<String> {
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let (mut row, mut col, mut rest) = (0, 0, bytes);
    while let Some(c) = rest.chars().next() {
        if let Some((cap, after)) = rest.strip_prefix('{').and_then(|r| r.split_once('}')) {
            match cap {
                "cr" => col = 0,
                "el" => lines[row].truncate(col),
                "up" => row -= 1,
                _ => {}
            }
            rest = after;
            continue;
        }
        rest = &rest[c.len_utf8()..];
        if c == '\n' {
            (row, col) = (row + 1, 0);
            if lines.len() == row {
                lines.push(Vec::new());
            }
            continue;
        }
        let line = &mut lines[row];
        line.resize(line.len().max(col), ' ');
        match line.get_mut(col) {
            Some(at) => *at = c,
            None => line.push(c),
        }
        col += 1;
    }
    lines.into_iter().map(|l| l.into_iter().collect()).collect()
}

#[test]
fn a_streamed_answer_is_never_drawn_over_nor_erased_with_the_spinner() {
    // stdout and stderr on one terminal, in the order written.
    let term = Captured::default();
    let mut d = TerminfoDisplay::new(caps(FULL), term.boxed(), term.boxed(), false, 0)
        .with_width(|| Some(40));
    d.render(&started());
    for piece in ["The ans", "wer is", " 42.\n", "Second", " line."] {
        d.render(&Event::TextDelta {
            backend: "fake".into(),
            text: piece.into(),
        });
        d.tick();
    }
    d.render(&finished());
    d.render(&Event::Text {
        text: "The answer is 42.\nSecond line.".into(),
        final_answer: true,
    });
    assert_eq!(
        screen(&term.text()),
        ["The answer is 42.", "Second line.", ""],
        "{:?}",
        term.text()
    );
}

#[test]
fn spinner_is_drawn_in_place_and_cleared_with_the_cursor_shown() {
    let (mut d, out, err) = display(caps(FULL), 0);
    d.render(&started());
    d.tick();
    d.render(&output("hidden without --tail"));
    d.render(&finished());
    d.render(&Event::Text {
        text: "the answer".into(),
        final_answer: true,
    });
    assert_eq!(out.text(), "the answer\n");
    assert_eq!(
        err.text(),
        "{hide}{fg6}| fake 0s{sgr0}{cr}{el}{fg6}/ fake 0s{sgr0}{cr}{el}{show}"
    );
}

#[test]
fn a_panic_while_the_spinner_runs_clears_its_line_and_shows_the_cursor() {
    let (mut d, _, err) = display(caps(FULL), 0);
    d.render(&started());
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _display = d;
        panic!("in the middle of a turn");
    }));
    assert!(unwound.is_err());
    assert_eq!(err.text(), "{hide}{fg6}| fake 0s{sgr0}{cr}{el}{show}");
}

#[test]
fn lines_are_printed_above_the_spinner_in_their_colour() {
    let (mut d, _, err) = display(caps(FULL), 0);
    d.render(&started());
    d.render(&Event::Error {
        message: "boom".into(),
        kind: agent_loop::ErrorKind::Backend,
    });
    assert_eq!(
        err.text(),
        "{hide}{fg6}| fake 0s{sgr0}{cr}{el}{show}{fg1}error: boom\n{sgr0}"
    );
}

#[test]
fn tail_shows_the_last_lines_then_prints_everything() {
    let (mut d, _, err) = display(caps(FULL), 2);
    d.render(&started());
    for line in ["one", "two", "a line longer than the width"] {
        d.render(&output(line));
    }
    let live = err.text();
    assert!(
        live.ends_with("{cr}{el}{up}{el}{up}{el}two\na line longer than \n{fg6}| fake 0s{sgr0}"),
        "{live}"
    );
    d.render(&finished());
    assert!(
        err.text()
            .ends_with("{cr}{el}{up}{el}{up}{el}{show}[fake] one\n[fake] two\n[fake] a line longer than the width\n"),
        "{}",
        err.text()
    );
}

#[test]
fn without_el_or_civis_nothing_is_redrawn() {
    let (mut d, _, err) = display(caps(&[("cr", "{cr}"), ("cuu1", "{up}")]), 3);
    assert_eq!(d.tick_every(), None);
    d.render(&started());
    d.render(&output("line"));
    d.render(&Event::Waiting {
        backend: "fake".into(),
        elapsed_s: 10,
    });
    d.render(&finished());
    // On the test's 20 columns the waiting line breaks at a space; the output stays whole.
    assert_eq!(err.text(), "[waiting for fake\n  ... 10s]\n[fake] line\n");
}

#[test]
fn a_tools_progress_is_redrawn_in_place_and_ends_with_its_result() {
    let progress = |n: f64| Event::ToolProgress {
        call_id: "c1".into(),
        tool: "t".into(),
        progress: n,
        total: Some(4.0),
        message: Some("go".into()),
    };
    let (mut d, _, err) = display(caps(FULL), 0);
    d.render(&progress(1.0));
    d.render(&progress(2.0));
    d.render(&Event::ToolResult {
        call_id: "c1".into(),
        tool: "t".into(),
        ok: true,
        output: "copied".into(),
        exit_code: None,
    });
    assert_eq!(
        err.text(),
        "{hide}{fg6}| t 0s{sgr0}{cr}{el}{fg6}| t 0s 1/4 (25%) go{sgr0}\
         {cr}{el}{fg6}| t 0s 2/4 (50%) go{sgr0}{cr}{el}{show}  copied\n"
    );
    // At 20 columns a long name gives way to the time and the progress.
    let (mut d, _, err) = display(caps(FULL), 0);
    d.render(&Event::ToolProgress {
        call_id: "c2".into(),
        tool: "mcp.ev.trigger-long-running".into(),
        progress: 3.0,
        total: Some(4.0),
        message: None,
    });
    assert!(
        err.text().contains("| mc… 0s 3/4 (75%){sgr0}"),
        "{}",
        err.text()
    );
}

#[test]
fn live_lines_never_wrap() {
    assert_eq!(fit("a\tb\x1bc", 10), "a bc");
    assert_eq!(fit("abcdef", 4), "abcd");
    assert_eq!(fit("日本語", 5), "日本");
}

#[test]
fn a_notice_or_drop_ends_the_live_region() {
    let (mut d, _, err) = display(caps(FULL), 0);
    d.render(&started());
    d.notice("interrupted");
    assert!(err.text().ends_with("{cr}{el}{show}interrupted\n"));
    d.render(&started());
    drop(d);
    assert!(err.text().ends_with("{cr}{el}{show}"), "{}", err.text());
}
