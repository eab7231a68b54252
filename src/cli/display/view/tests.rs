//! The view's screen as a terminal shows it: its bytes fed to a vt100 screen of the same
//! size, with an xterm-like entry built here (so the tests do not depend on the machine's
//! terminfo database).

use std::sync::{Arc, Mutex};

use super::*;
use crate::cli::display::shared::Captured;
use agent_loop::event::Event;

const XTERM: &[(&str, &str)] = &[
    ("cr", "\r"),
    ("ind", "\n"),
    ("el", "\x1b[K"),
    ("ed", "\x1b[J"),
    ("cup", "\x1b[%i%p1%d;%p2%dH"),
    ("csr", "\x1b[%i%p1%d;%p2%dr"),
    ("civis", "\x1b[?25l"),
    ("cnorm", "\x1b[?25h"),
    ("sgr0", "\x1b[m"),
    ("bold", "\x1b[1m"),
    ("rev", "\x1b[7m"),
    ("setaf", "\x1b[3%p1%dm"),
    ("smcup", "\x1b[?1049h"),
    ("rmcup", "\x1b[?1049l"),
];

fn nz(n: usize) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n as u16).unwrap()
}

pub fn caps(entries: &[(&str, &str)]) -> Caps {
    Caps::of_entry(entries, 8)
}

/// A view of `cols` by `rows`, whose size a test can change, and what it wrote.
struct Term {
    view: ViewDisplay,
    out: Captured,
    size: Arc<Mutex<(usize, usize)>>,
    /// Bytes already fed to `screen`.
    fed: usize,
    screen: vt100::Parser,
}

impl Term {
    fn new(cols: usize, rows: usize) -> Term {
        let out = Captured::default();
        let size = Arc::new(Mutex::new((cols, rows)));
        let asked = size.clone();
        let view = ViewDisplay::new(
            caps(XTERM),
            out.boxed(),
            false,
            Box::new(move || Some(*asked.lock().unwrap())),
        );
        let screen = vt100::Parser::new(nz(rows), nz(cols), 0);
        Term {
            view,
            out,
            size,
            fed: 0,
            screen,
        }
    }

    /// The screen's rows now, trailing blanks dropped.
    fn rows(&mut self) -> Vec<String> {
        let bytes = self.out.bytes();
        // The terminal's output processing (`onlcr`) starts a line at a newline.
        let translated = String::from_utf8_lossy(&bytes[self.fed..]).replace('\n', "\r\n");
        self.screen.process(translated.as_bytes());
        self.fed = bytes.len();
        let cols = self.screen.screen().size().1;
        self.screen
            .screen()
            .rows(0, cols.get())
            .map(|r| r.trim_end().to_string())
            .collect()
    }

    fn resize(&mut self, cols: usize, rows: usize) {
        *self.size.lock().unwrap() = (cols, rows);
        self.rows();
        self.screen.set_size(nz(rows), nz(cols));
        self.view.resize();
    }

    fn text(&mut self, text: &str) {
        self.view.render(&Event::TextDelta {
            backend: "b".into(),
            text: text.into(),
        });
    }
}

fn started(t: &mut Term) {
    t.view.session_start("id", "s1", "demo", None, 0);
    t.view.prompt("You: ");
}

#[test]
fn three_parts_newest_at_the_bottom_and_a_streamed_answer_in_place() {
    let mut t = Term::new(20, 6);
    started(&mut t);
    // One column is left free: writing the last one would leave the cursor waiting to wrap.
    assert_eq!(t.rows()[4], "idle | demo | token");
    assert_eq!(t.rows()[5], "You:");
    t.view.key(&Key::Char('h'));
    t.view.key(&Key::Char('i'));
    assert_eq!(t.view.key(&Key::Enter), Some("hi".into()));
    t.view.render(&Event::TurnStarted {
        turn: 1,
        input: "hi".into(),
        images: Vec::new(),
    });
    for piece in ["Hello", " there, ", "a long answer", "\nthat ends."] {
        t.text(piece);
    }
    let rows = t.rows();
    assert_eq!(
        rows[..4],
        ["You: hi", "Hello there, a long", "answer", "that ends."]
    );
    assert!(rows[4].starts_with("running 0s"), "{rows:?}");
    assert!(t.screen.screen().hide_cursor());
    t.view.render(&Event::TurnFinished {
        turn: 1,
        iterations: 1,
        ok: true,
    });
    t.view.prompt("You: ");
    let rows = t.rows();
    assert!(rows[4].starts_with("idle |"), "{rows:?}");
    assert!(!t.screen.screen().hide_cursor());
    assert_eq!(t.screen.screen().cursor_position(), (5, 5));
}

#[test]
fn a_streamed_chunk_costs_little_more_than_its_bytes() {
    let mut t = Term::new(80, 24);
    started(&mut t);
    t.view.render(&Event::TurnStarted {
        turn: 1,
        input: "go".into(),
        images: Vec::new(),
    });
    let before = t.out.bytes().len();
    let chunk = "word and ";
    for _ in 0..2000 {
        t.text(chunk);
    }
    let written = t.out.bytes().len() - before;
    let ratio = written as f64 / (2000 * chunk.len()) as f64;
    assert!(ratio < 1.1, "{ratio}");
    // Rows of whole words, 80 columns each; the last the rest of the answer.
    let rows = t.rows();
    assert_eq!(rows[20], chunk.repeat(9).trim_end(), "{rows:?}");
    assert_eq!(rows[21], "word and word and", "{rows:?}");
}

#[test]
fn pgup_shows_older_rows_new_output_keeps_them_and_end_returns() {
    let mut t = Term::new(30, 8);
    started(&mut t);
    for i in 1..=20 {
        t.view.notice(&format!("line {i}"));
    }
    assert_eq!(t.rows()[5], "line 20");
    t.view.key(&Key::PageUp);
    assert_eq!(
        t.rows()[..6],
        ["line 10", "line 11", "line 12", "line 13", "line 14", "line 15"]
    );
    for _ in 0..5 {
        t.view.key(&Key::PageUp);
    }
    assert_eq!(t.rows()[0], "line 1");
    t.view.notice("line 21");
    let rows = t.rows();
    assert_eq!(rows[0], "line 1");
    assert!(
        rows[6].starts_with("idle | 15 lines below (End)"),
        "{rows:?}"
    );
    t.view.key(&Key::End);
    let rows = t.rows();
    assert_eq!(rows[5], "line 21");
    assert!(rows[6].starts_with("idle | demo"), "{rows:?}");
}

#[test]
fn a_word_streamed_past_the_end_of_a_row_is_moved_whole_to_the_next() {
    let mut t = Term::new(12, 6);
    started(&mut t);
    t.view.render(&Event::TurnStarted {
        turn: 1,
        input: "go".into(),
        images: Vec::new(),
    });
    // A character at a time, as a slow stream comes: the `i` that began the third word was
    // written at the end of the second row before it was known not to fit.
    for c in "the answer is forty-two".chars() {
        t.text(&c.to_string());
    }
    let rows = t.rows();
    assert_eq!(rows[2..4], ["the answer", "is forty-two"]);
    // Whatever came, in pieces of every size, the screen is what a whole repaint draws.
    let text =
        "Then it said: the  answer is\tforty-two, 日本語 with e\u{301} and averyverylongword. ";
    for size in 1..6 {
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(size) {
            t.text(&piece.iter().collect::<String>());
        }
        let streamed = t.rows();
        t.view.key(&Key::Ctrl('L'));
        assert_eq!(t.rows(), streamed, "pieces of {size}");
    }
}

#[test]
fn a_resize_wraps_again_and_keeps_the_input_on_the_last_row() {
    let mut t = Term::new(30, 8);
    started(&mut t);
    t.view.notice("a line of thirty characters...");
    t.view.key(&Key::Char('x'));
    t.resize(12, 6);
    let rows = t.rows();
    // At spaces; a word wider than the row by character.
    assert_eq!(rows[..4], ["a line of", "thirty", "characters..", "."]);
    assert_eq!(rows[5], "You: x");
    t.resize(40, 10);
    let rows = t.rows();
    assert_eq!(rows[7], "a line of thirty characters...");
    assert_eq!(rows[9], "You: x");
}

#[test]
fn an_approval_is_asked_at_the_input_line() {
    let mut t = Term::new(40, 8);
    started(&mut t);
    let request = ApprovalRequest {
        call: agent_loop::chat::ToolCall {
            id: "c".into(),
            name: "bash".into(),
            args: serde_json::json!({"command": "ls"}),
        },
        summary: "ls".into(),
        change: None,
    };
    t.view.approval_prompt(&request, false);
    let rows = t.rows();
    assert_eq!(
        rows[4..6],
        ["Allow bash? It asks to run (1 line):", "  | ls"]
    );
    assert!(rows[6].contains("waiting for approval"), "{rows:?}");
    assert_eq!(rows[7], "[y]es once, [a]lways for bash, [n]o:");
    t.view.key(&Key::Char('y'));
    assert_eq!(t.view.key(&Key::Enter), Some("y".into()));
    assert_eq!(t.rows()[5], "[y]es once, [a]lways for bash, [n]o: y");
}

#[test]
fn leaving_gives_the_terminal_back_and_prints_the_conversation() {
    let mut t = Term::new(30, 8);
    t.view.notice("banner");
    started(&mut t);
    t.rows();
    assert!(t.screen.screen().alternate_screen());
    t.view.notice("said in the view");
    t.view.leave();
    let rows = t.rows();
    assert!(!t.screen.screen().alternate_screen());
    assert!(!t.screen.screen().hide_cursor());
    assert_eq!(rows[..2], ["banner", "said in the view"]);
    // Later lines are plain ones.
    t.view.notice("after");
    assert_eq!(t.rows()[2], "after");
}

#[test]
fn an_entry_without_what_the_view_needs_is_named() {
    let without_csr: Vec<_> = XTERM.iter().copied().filter(|(n, _)| *n != "csr").collect();
    assert_eq!(caps(&without_csr).view_missing(), Some("csr"));
    assert_eq!(caps(XTERM).view_missing(), None);
}

mod props;
