//! The virtual screen a terminal agent draws on: the `vt100` crate's parser (a VT100/xterm
//! screen with scrollback and the alternate screen), plus the few answers a real terminal
//! gives to its queries (cursor position, device attributes, colours), which TUIs wait for
//! before they draw. Reads the screen back as plain text lines.

use std::num::NonZeroU16;

/// Rows kept above the screen: the part of a long answer that scrolled off.
const SCROLLBACK_ROWS: usize = 10_000;

/// Collects what the terminal must answer to the agent's queries.
#[derive(Default)]
struct Replies {
    pending: Vec<u8>,
}

impl vt100::Callbacks for Replies {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let first = params.first().and_then(|p| p.first()).copied();
        match (i1, c, first) {
            // Device status report: the cursor position, 1-based.
            (None, 'n', Some(6)) => {
                let (row, col) = screen.cursor_position();
                self.pending
                    .extend_from_slice(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
            }
            (None, 'n', Some(5)) => self.pending.extend_from_slice(b"\x1b[0n"),
            // Primary device attributes: a VT220 with colour. Also how a TUI that asked for
            // a protocol this terminal lacks (kitty keys) learns the answer is no.
            (None, 'c', None | Some(0)) => self.pending.extend_from_slice(b"\x1b[?62;22c"),
            (Some(b'>'), 'c', _) => self.pending.extend_from_slice(b"\x1b[>1;10;0c"),
            _ => {}
        }
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        // Foreground and background colour queries: light grey on black.
        match params {
            [b"10", b"?"] => self
                .pending
                .extend_from_slice(b"\x1b]10;rgb:c0c0/c0c0/c0c0\x1b\\"),
            [b"11", b"?"] => self
                .pending
                .extend_from_slice(b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
            _ => {}
        }
    }
}

/// A terminal of a fixed size, fed what the agent prints.
pub struct Screen {
    parser: vt100::Parser<Replies>,
}

impl Screen {
    pub fn new(rows: u16, cols: u16) -> Self {
        let size = |n: u16| NonZeroU16::new(n.max(1)).expect("at least 1");
        Screen {
            parser: vt100::Parser::new_with_callbacks(
                size(rows),
                size(cols),
                SCROLLBACK_ROWS,
                Replies::default(),
            ),
        }
    }

    /// Feeds bytes the agent printed.
    pub fn process(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    /// What the terminal owes the agent in answer to its queries, taken.
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().pending)
    }

    /// Whether the agent turned bracketed paste on.
    pub fn bracketed_paste(&self) -> bool {
        self.parser.screen().bracketed_paste()
    }

    /// Whether the agent is drawing on the alternate screen.
    pub fn alternate(&self) -> bool {
        self.parser.screen().alternate_screen()
    }

    /// The visible rows, trailing blanks trimmed.
    pub fn visible(&self) -> Vec<String> {
        let screen = self.parser.screen();
        let (_, cols) = screen.size();
        screen
            .rows(0, cols.get())
            .map(|r| r.trim_end().to_string())
            .collect()
    }

    /// The visible rows as one text, a line each.
    pub fn visible_text(&self) -> String {
        self.visible().join("\n")
    }

    /// Every row: the scrollback, oldest first, then the visible screen; trailing blanks
    /// trimmed. (The alternate screen has no scrollback.)
    pub fn all_rows(&mut self) -> Vec<String> {
        let screen = self.parser.screen_mut();
        let (rows, cols) = screen.size();
        let (rows, cols) = (usize::from(rows.get()), cols.get());
        let len = screen.scrollback_len();
        let mut out = Vec::with_capacity(len + rows);
        // Scrolled back by `len - taken`, the screen shows rows `taken..` of the whole.
        let mut taken = 0;
        while taken < len {
            screen.set_scrollback(len - taken);
            let n = (len - taken).min(rows);
            out.extend(
                screen
                    .rows(0, cols)
                    .take(n)
                    .map(|r| r.trim_end().to_string()),
            );
            taken += n;
        }
        screen.set_scrollback(0);
        out.extend(screen.rows(0, cols).map(|r| r.trim_end().to_string()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_include_the_scrollback_in_order() {
        let mut screen = Screen::new(3, 20);
        for i in 1..=7 {
            screen.process(format!("line {i}\r\n").as_bytes());
        }
        let all = screen.all_rows();
        assert_eq!(
            all[..7],
            ["line 1", "line 2", "line 3", "line 4", "line 5", "line 6", "line 7"]
        );
        assert_eq!(screen.visible(), ["line 6", "line 7", ""]);
    }

    #[test]
    fn queries_are_answered() {
        let mut screen = Screen::new(10, 40);
        screen.process(b"ab\x1b[6n\x1b[c\x1b]11;?\x07");
        assert_eq!(
            screen.take_replies(),
            b"\x1b[1;3R\x1b[?62;22c\x1b]11;rgb:0000/0000/0000\x1b\\"
        );
        assert!(screen.take_replies().is_empty());
    }
}
