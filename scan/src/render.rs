//! The line model of terminal rendering: the lines of captured output as a terminal would
//! show them once the agent is done drawing. `\r` goes back to column 0 and what follows
//! overwrites; `\b` goes back a column; `ESC[K` (and `0K`, `1K`, `2K`) erases within the line;
//! `ESC[nG`, `ESC[nC` and `ESC[nD` move within it; `ESC[nA`, `ESC[nB`, `ESC[nE` and
//! `ESC[nF` move over the lines printed so far; a line feed goes to the start of the next
//! line (as a terminal shows a pipe's `\n`). Cells erased or skipped are blank: trimmed at
//! a line's end, spaces before text. Other sequences are dropped, as in stripping.
//!
//! It is a line model, not a screen: no width, no wrapping, no scrolling region. A column
//! is a character, wide or not: agents redraw whole lines (`\r` then erase), where widths
//! do not matter, and half-overwriting a wide character has no faithful answer in text
//! anyway; so no width table is carried. Moves right stop at column `MAX_MOVE` (or the
//! line's end, when longer), so a few bytes cannot ask for megabytes of blanks.
//!
//! Only lines with such controls come here (see `ansi.rs`), and not for a line just wiped
//! (`\r` then erase, a spinner's frame: `wipe_line`); they are parsed by vte and
//! drawn into the model, which hands back at the first line end where the parser is
//! between sequences and the cursor is on a fresh last line. Lines above the cursor are
//! written out at each line feed; moving up past them takes them back from the output.

use std::collections::VecDeque;

use vte::{Params, Parser, Perform};

use crate::fallback::{feed, is_dropped, Ground};

/// A cell that was erased or skipped over, never written.
const BLANK: char = '\0';

/// The column a move right stops at, unless the line's text is longer: a wide terminal's
/// width. (Blanks before text become spaces; this bounds them to about 32 per byte of
/// input.)
const MAX_MOVE: usize = 256;

/// Whether the sequence `seq` (a whole one, as the fast path read it) needs the line model:
/// a CSI that moves the cursor or erases part of a line. `ESC[K` and `ESC[0K` erase from
/// the cursor, which outside the model is always at the line's end: nothing to do.
pub fn needs_line_model(seq: &[u8]) -> bool {
    match seq {
        [0x1b, b'[', params @ .., last] => match last {
            b'A'..=b'G' => true,
            b'K' => !matches!(params, [] | [b'0']),
            _ => false,
        },
        _ => false,
    }
}

/// The usual way a spinner frame or a status line is wiped, `\r` then `ESC[2K` (or `ESC[K`,
/// `ESC[0K`), or `ESC[2K` then `\r`, at `bytes[at..]`: the line is then empty with the cursor
/// at its start, as outside the model, so the fast path takes the line being written off
/// `out` and goes on after them, without the model. The position after them, if they are
/// there.
pub fn wipe_line(bytes: &[u8], at: usize, out: &mut Vec<u8>) -> Option<usize> {
    const ERASES: [&[u8]; 3] = [b"\x1b[2K", b"\x1b[K", b"\x1b[0K"];
    let rest = &bytes[at..];
    let len = match rest.split_first()? {
        (b'\r', after) => 1 + ERASES.iter().find(|e| after.starts_with(e))?.len(),
        (_, _) if rest.starts_with(ERASES[0]) && rest.get(ERASES[0].len()) == Some(&b'\r') => {
            ERASES[0].len() + 1
        }
        _ => return None,
    };
    out.truncate(memchr::memrchr(b'\n', out).map_or(0, |p| p + 1));
    Some(at + len)
}

/// Draws `bytes[start..]` (valid UTF-8; `start` on a control, everything before it copied
/// to `out` as the fast path does) into the line model, taking back the line being written,
/// and writes the lines out: up to the line end after which the fast path can go on, whose
/// position is returned, or to the end.
pub fn line_model(bytes: &[u8], start: usize, out: &mut Vec<u8>) -> usize {
    let line_start = memchr::memrchr(b'\n', out).map_or(0, |p| p + 1);
    let current = std::str::from_utf8(&out[line_start..]).expect("whole characters");
    let line: Vec<char> = current.chars().collect();
    out.truncate(line_start);
    let mut screen = Screen {
        col: line.len(),
        lines: VecDeque::from([line]),
        row: 0,
        out,
        ground: true,
    };
    let mut parser = Parser::new();
    let mut i = start;
    while i < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p + 1);
        feed(&mut parser, &mut screen, &bytes[i..end]);
        i = end;
        if screen.ground && screen.lines.len() == 1 && screen.lines[0].is_empty() {
            return i;
        }
    }
    screen.finish();
    i
}

/// The lines being drawn and the cursor. `out` holds the lines above them, each ended by
/// `\n`; `lines` always has the cursor's line. (A deque: lines come back at its front.)
struct Screen<'a> {
    out: &'a mut Vec<u8>,
    lines: VecDeque<Vec<char>>,
    row: usize,
    col: usize,
    ground: bool,
}

impl Screen<'_> {
    fn put(&mut self, c: char) {
        let line = &mut self.lines[self.row];
        if self.col < line.len() {
            line[self.col] = c;
        } else {
            line.resize(self.col, BLANK);
            line.push(c);
        }
        self.col += 1;
    }

    /// To the start of the next line, a new one at the bottom; the lines above are done
    /// until a move up takes them back.
    fn line_feed(&mut self) {
        self.row += 1;
        self.col = 0;
        if self.row == self.lines.len() {
            self.lines.push_back(Vec::new());
        }
        for line in self.lines.drain(..self.row) {
            write_line(self.out, &line);
            self.out.push(b'\n');
        }
        self.row = 0;
    }

    /// Up `n` lines, taking lines back from the output past the first one here; as many
    /// steps as lines taken back, whatever `n`.
    fn up(&mut self, n: usize) {
        let here = n.min(self.row);
        self.row -= here;
        for _ in here..n {
            if !self.take_back() {
                break;
            }
        }
    }

    /// The last line written out, back to the top of `lines`; false at the first line.
    fn take_back(&mut self) -> bool {
        let Some((&b'\n', above)) = self.out.split_last() else {
            return false;
        };
        let start = memchr::memrchr(b'\n', above).map_or(0, |p| p + 1);
        let text = std::str::from_utf8(&above[start..]).expect("whole characters");
        let line = text.chars().collect();
        self.out.truncate(start);
        self.lines.push_front(line);
        true
    }

    /// A column the cursor may move to on its line.
    fn clamp(&self, col: usize) -> usize {
        col.min(self.lines[self.row].len().max(MAX_MOVE))
    }

    fn erase(&mut self, mode: u16) {
        let col = self.col;
        let line = &mut self.lines[self.row];
        match mode {
            0 => line.truncate(col),
            1 => {
                let end = (col + 1).min(line.len());
                line[..end].fill(BLANK);
            }
            2 => line.clear(),
            _ => {}
        }
    }

    /// The lines left, the last without a line end.
    fn finish(self) {
        for (n, line) in self.lines.iter().enumerate() {
            if n > 0 {
                self.out.push(b'\n');
            }
            write_line(self.out, line);
        }
    }
}

/// A line's text: blanks at the end trimmed, the others spaces.
fn write_line(out: &mut Vec<u8>, line: &[char]) {
    let len = line.iter().rposition(|c| *c != BLANK).map_or(0, |p| p + 1);
    for &c in &line[..len] {
        let c = if c == BLANK { ' ' } else { c };
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

impl Ground for Screen<'_> {
    fn set_ground(&mut self, ground: bool) {
        self.ground = ground;
    }
}

impl Perform for Screen<'_> {
    fn print(&mut self, c: char) {
        self.ground = true;
        if !is_dropped(c) {
            self.put(c);
        }
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' => self.line_feed(),
            b'\r' => self.col = 0,
            0x08 => self.col = self.col.saturating_sub(1),
            b'\t' => self.put('\t'),
            0x18 | 0x1a => self.ground = true,
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], _: bool, action: char) {
        self.ground = true;
        // `ESC[?...` and friends are other commands.
        if !intermediates.is_empty() {
            return;
        }
        let first = params.iter().next().and_then(|p| p.first().copied());
        let arg = first.unwrap_or(0);
        // A count of 0 or none means 1.
        let n = usize::from(arg.max(1));
        let last_row = self.lines.len() - 1;
        match action {
            'K' => self.erase(arg),
            'G' => self.col = self.clamp(n - 1),
            'C' => self.col = self.clamp(self.col.saturating_add(n)),
            'D' => self.col = self.col.saturating_sub(n),
            'A' => self.up(n),
            'F' => {
                self.up(n);
                self.col = 0;
            }
            'B' => self.row = (self.row + n).min(last_row),
            'E' => {
                self.row = (self.row + n).min(last_row);
                self.col = 0;
            }
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, _: &[u8], _: bool, _: u8) {
        self.ground = true;
    }

    fn osc_dispatch(&mut self, _: &[&[u8]], bell_terminated: bool) {
        self.ground = bell_terminated;
    }
}

/// All of `bytes` (valid UTF-8) through the line model, none through the fast path: what
/// `render_terminal` is tested against.
#[cfg(test)]
pub fn render_all(bytes: &[u8]) -> String {
    let mut out = Vec::new();
    let mut screen = Screen {
        out: &mut out,
        lines: VecDeque::from([Vec::new()]),
        row: 0,
        col: 0,
        ground: true,
    };
    feed(&mut Parser::new(), &mut screen, bytes);
    screen.finish();
    String::from_utf8(out).expect("whole characters")
}

#[cfg(test)]
mod tests {
    use crate::render_terminal;

    fn render(s: &str) -> String {
        render_terminal(s.as_bytes())
    }

    #[test]
    fn carriage_returns_overwrite() {
        assert_eq!(render("Loading 1\rLoading 2\rThe answer"), "The answer");
        assert_eq!(render("abcdef\rxy\n"), "xycdef\n");
        assert_eq!(render("tty line\r\nnext\r\n"), "tty line\nnext\n");
    }

    #[test]
    fn a_spinner_erased_and_redrawn_leaves_the_last_frame() {
        assert_eq!(
            render("⠋ Thinking\r\x1b[2K⠙ Thinking\r\x1b[2KDone."),
            "Done."
        );
        assert_eq!(
            render(
                "\x1b[36m⠋\x1b[0m Thinking\r\x1b[2K\x1b[36m⠙\x1b[0m Thinking\r\x1b[2KDone.\nnext\n"
            ),
            "Done.\nnext\n"
        );
    }

    #[test]
    fn a_line_erased_and_redrawn_from_below_shows_once() {
        let raw =
            "\x1b[97m⏺\x1b[0m Bash(echo hi)\n\x1b[1A\x1b[2K\r\x1b[92m⏺\x1b[0m Bash(echo hi)\nhi\n";
        assert_eq!(render(raw), "⏺ Bash(echo hi)\nhi\n");
        // Two lines up, the first rewritten, then back down with E.
        assert_eq!(
            render("one\ntwo\n\x1b[2FONE\x1b[2Ethree"),
            "ONE\ntwo\nthree"
        );
        // Up past the first line stops there.
        assert_eq!(render("a\n\x1b[5Ab"), "b\n");
    }

    /// coro's captures (`fixtures/coro/`): its tool line is drawn, then erased from the line
    /// below and drawn again; on a pipe (`pipe.out`) and on a terminal (`tty.raw`, `\r\n`).
    #[test]
    fn coro_redraws_show_the_redrawn_line_once() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/coro");
        for name in ["pipe.out", "tty.raw", "pipe-verbose.out"] {
            let text = render_terminal(&std::fs::read(dir.join(name)).unwrap());
            assert_eq!(
                text.matches("Bash(echo hello)").count(),
                1,
                "{name}: {text}"
            );
            assert!(
                text.contains("\n\u{23fa} Bash(echo hello)\nhello\n"),
                "{name}: {text}"
            );
            assert!(!text.contains('\r'), "{name}");
        }
        let multi = render_terminal(&std::fs::read(dir.join("scen-multi.out")).unwrap());
        assert!(
            multi.contains("\u{23fa} Bash(echo first)\nfirst\n\u{23fa} Bash(echo second)\n"),
            "{multi}"
        );
    }

    #[test]
    fn backspace_and_moves_within_the_line() {
        assert_eq!(render("abc\x08\x08X"), "aXc");
        assert_eq!(render("abc\x1b[2DX"), "aXc");
        assert_eq!(render("abc\x1b[1GX"), "Xbc");
        assert_eq!(render("a\x1b[3Cb"), "a   b");
        assert_eq!(render("\x08\x08a"), "a");
    }

    #[test]
    fn erasing_within_the_line_and_trimming_what_it_leaves() {
        assert_eq!(render("abcdef\x1b[3D\x1b[K\n"), "abc\n");
        assert_eq!(render("abcdef\x1b[3D\x1b[0K"), "abc");
        assert_eq!(render("abcdef\x1b[3D\x1b[1K"), "    ef");
        assert_eq!(render("abcdef\x1b[2Kxy"), "      xy");
        assert_eq!(render("abcdef\r\x1b[2Kxy"), "xy");
        // At the line's end, erasing to the end changes nothing.
        assert_eq!(render("ab \x1b[K\n"), "ab \n");
        // Moved past the end and erased: nothing left there.
        assert_eq!(render("ab\x1b[5C\x1b[K\n"), "ab\n");
    }

    #[test]
    fn other_sequences_and_controls_are_dropped_as_in_stripping() {
        let raw = "\x1b[1;32mok\x1b[0m\x1b]0;title\x07 \x1b[?25l\x1b[2J\x1b[Hdone\x07\t!\u{85}\n";
        assert_eq!(render(raw), crate::strip_ansi(raw.as_bytes()));
        assert_eq!(render(raw), "ok done\t!\n");
    }

    #[test]
    fn cursor_moves_are_bounded() {
        let far = render("a\x1b[65535Cb\x1b[65535Gc");
        assert_eq!(far, format!("a{}bc", " ".repeat(super::MAX_MOVE - 1)));
    }
}
