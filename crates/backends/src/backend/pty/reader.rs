//! The virtual screen of one terminal agent with what a turn reads from it: the screen as it
//! was before the message was typed, the rows new since, and the answer in them. Public, so
//! that recorded sessions can be replayed through exactly what a live turn uses (tests and
//! the `pty_screen` benchmark).

use super::extract::{self, Chrome};
use super::screen::Screen;
use crate::config::PtyDef;
use crate::parse::Pattern;

pub struct ScreenReader {
    screen: Screen,
    skip: Vec<Pattern>,
    busy: Option<Pattern>,
    done: Option<Pattern>,
    answer: Option<Pattern>,
    /// Every row before the message was typed.
    before: Vec<String>,
    message: String,
    /// The alternate screen as it was when the agent last left it (a TUI that quits or
    /// crashes takes its screen with it): for error messages.
    left_alternate: Option<Vec<String>>,
}

/// The ways a TUI leaves the alternate screen.
const LEAVE_ALTERNATE: [&[u8]; 3] = [b"\x1b[?1049l", b"\x1b[?1047l", b"\x1b[?47l"];

impl ScreenReader {
    /// A screen of the backend's size, reading with its patterns.
    pub fn new(def: &PtyDef) -> Self {
        ScreenReader {
            screen: Screen::new(def.rows, def.cols),
            skip: def.skip_lines.clone(),
            busy: def.busy.clone(),
            done: def.done.clone(),
            answer: def.answer.clone(),
            before: Vec::new(),
            message: String::new(),
            left_alternate: None,
        }
    }

    /// Feeds bytes the agent printed.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some((at, len)) = LEAVE_ALTERNATE
            .iter()
            .filter_map(|seq| memchr::memmem::find(bytes, seq).map(|at| (at, seq.len())))
            .min()
        {
            self.screen.process(&bytes[..at]);
            if self.screen.alternate() {
                self.left_alternate = Some(self.screen.visible());
            }
            self.screen.process(&bytes[at..at + len]);
            bytes = &bytes[at + len..];
        }
        self.screen.process(bytes);
    }

    /// The visible rows, or when the screen is blank because the agent left its alternate
    /// screen, that screen as it was then.
    pub fn last_drawn(&self) -> Vec<String> {
        let rows = self.screen.visible();
        match &self.left_alternate {
            Some(old) if rows.iter().all(|r| r.trim().is_empty()) => old.clone(),
            _ => rows,
        }
    }

    /// What the terminal owes the agent in answer to its queries.
    pub fn take_replies(&mut self) -> Vec<u8> {
        self.screen.take_replies()
    }

    /// Whether the agent turned bracketed paste on.
    pub fn bracketed_paste(&self) -> bool {
        self.screen.bracketed_paste()
    }

    /// The visible screen as text.
    pub fn visible_text(&self) -> String {
        self.screen.visible_text()
    }

    /// The visible rows.
    pub fn visible(&self) -> Vec<String> {
        self.screen.visible()
    }

    /// Remembers the screen as it is before `message` is typed.
    pub fn start_message(&mut self, message: &str) {
        self.before = self.screen.all_rows();
        self.message = message.to_string();
    }

    /// The rows new since the message, after its echo.
    pub fn new_rows(&mut self) -> Vec<String> {
        let mut rows = self.screen.all_rows();
        let start = extract::region_start(&self.before, &rows, &self.message);
        rows.drain(..start);
        rows
    }

    /// Whether the message shows past the rows the screen had before it was typed: in the
    /// input box while typed, in the agent's history once taken.
    pub fn echoed(&mut self) -> bool {
        let rows = self.screen.all_rows();
        let shared = extract::shared(&self.before, &rows);
        extract::needle(&self.message)
            .is_none_or(|needle| rows[shared..].iter().any(|r| r.contains(needle)))
    }

    /// Every row, scrollback too, as text.
    pub fn all_text(&mut self) -> String {
        self.screen.all_rows().join("\n")
    }

    /// What is not part of an answer.
    pub fn chrome(&self) -> Chrome<'_> {
        Chrome {
            skip: &self.skip,
            busy: self.busy.as_ref(),
            done: self.done.as_ref(),
            answer: self.answer.as_ref(),
        }
    }

    /// The answer on the screen now: the new rows without chrome.
    pub fn answer(&mut self) -> String {
        let rows = self.new_rows();
        extract::answer(&rows, &self.chrome())
    }
}
