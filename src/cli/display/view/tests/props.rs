//! Random streams against the screen: pieces of text (spaces, newlines, tabs, wide and
//! zero-width characters, words longer than a row), scrolling back and forth, resizes and
//! typing, in any order. After each, every row fits its width and is as wide as its text, the
//! rows are those the whole lines give (as after a resize), and the terminal's screen shows
//! exactly those rows: the word wrap's moves leave nothing behind. `PROPTEST_CASES` sets the
//! number of streams (1,000 here by default, a second; scripts/proptest-long.sh runs more).

use proptest::prelude::*;
use unicode_width::UnicodeWidthChar;

use super::*;

const PIECES: &[&str] = &[
    "a",
    "b",
    "cd",
    " ",
    "  ",
    "\n",
    "\t",
    "中",
    "😀",
    "e\u{301}",
    "é",
    "xyz",
    "x.",
    " x",
    "abcdefghijklmno",
    "\n  ",
    "中文字",
    "\u{200b}",
];

#[derive(Debug, Clone)]
enum Act {
    Text(String),
    PageUp,
    End,
    Resize(usize, usize),
    Type,
    Backspace,
}

fn act() -> impl Strategy<Value = Act> {
    let text = prop::collection::vec(0..PIECES.len(), 1..12)
        .prop_map(|picked| picked.into_iter().map(|i| PIECES[i]).collect::<String>());
    prop_oneof![
        12 => text.prop_map(Act::Text),
        1 => Just(Act::PageUp),
        1 => Just(Act::End),
        1 => (2usize..14, 1usize..9).prop_map(|(cols, rows)| Act::Resize(cols, rows)),
        2 => Just(Act::Type),
        1 => Just(Act::Backspace),
    ]
}

/// What vt100 cannot be compared on: it drops a combining mark at a row's start.
fn comparable(text: &str) -> String {
    text.replace(['\u{301}', '\u{200b}'], "")
        .trim_end()
        .to_string()
}

fn check(t: &mut Term) -> Result<(), TestCaseError> {
    let screen = t.rows();
    let draw = &t.view.draw;
    let convo = &draw.convo;
    let width = convo.width();
    for row in &convo.rows {
        let text = &convo.lines[row.line].text[row.start..row.end];
        prop_assert_eq!(row.cols, lines::columns(text), "{:?}", text);
        let visible = text.chars().filter(|c| c.width().unwrap_or(0) > 0).count();
        prop_assert!(
            row.cols <= width || visible <= 1,
            "{:?} wider than {}",
            text,
            width
        );
    }
    let mut whole = lines::Conversation::new(width);
    for line in &convo.lines {
        whole.push(&format!("{}\n", line.text), line.style);
    }
    let spans = |c: &lines::Conversation| -> Vec<_> {
        c.rows
            .iter()
            .map(|r| (r.line, r.start, r.end, r.cols))
            .collect()
    };
    prop_assert_eq!(spans(&whole), spans(convo));
    let region = draw.region();
    let end = convo.rows.len() - draw.back;
    let start = end.saturating_sub(region);
    let blank = region - (end - start);
    for at in 0..region {
        let want = match at < blank {
            true => String::new(),
            false => {
                let row = convo.rows[start + at - blank];
                comparable(&convo.lines[row.line].text[row.start..row.end])
            }
        };
        prop_assert_eq!(comparable(&screen[at]), want, "row {} of {:?}", at, screen);
    }
    Ok(())
}

/// 1,000 cases unless `PROPTEST_CASES` says otherwise; no regression files in the tree.
fn config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 1000;
    }
    config.failure_persistence = None;
    config
}

proptest! {
    #![proptest_config(config())]
    #[test]
    fn what_streams_leaves_the_screen_showing_the_rows(
        cols in 2usize..14,
        rows in 1usize..9,
        acts in prop::collection::vec(act(), 1..30),
    ) {
        let mut t = Term::new(cols, rows);
        started(&mut t);
        t.view.render(&Event::TurnStarted { turn: 1, input: "go".into(), images: Vec::new() });
        for act in &acts {
            match act {
                Act::Text(text) => t.text(text),
                Act::PageUp => drop(t.view.key(&Key::PageUp)),
                Act::End => drop(t.view.key(&Key::End)),
                Act::Resize(cols, rows) => t.resize(*cols, *rows),
                Act::Type => drop(t.view.key(&Key::Char('x'))),
                Act::Backspace => drop(t.view.key(&Key::Backspace)),
            }
            check(&mut t)?;
        }
    }
}
