//! Drawing the entry being edited at the REPL's prompt, on stderr: back to the entry's first
//! row (`cuu1`, `cr`), clear to the end of the screen (`ed`), the label in bold and the text
//! wrapped as the terminal wraps it (wide characters take two columns, combining marks
//! none), then the cursor put back on its row and column. Only the entry's rows are
//! touched: what the conversation printed above them stays.
//!
//! An entry taller than the screen (a long paste) is shown as a window of the screen's height
//! less one row, moved as little as needed to keep the cursor in it: rows above the window
//! are out of the cursor's reach once written, so drawing them all would leave copies on
//! the screen at each key. When the entry is sent, it is written whole, once, so the
//! scrollback holds all of it.

use std::io::Write;

use unicode_width::UnicodeWidthChar;

use super::super::text::wrap::break_long;
use super::keys::layout;
use super::line::Line;
use super::Editor;

/// Writes `bytes` to the terminal (stderr) at once.
pub fn write(bytes: &[u8]) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(bytes);
    let _ = err.flush();
}

/// What was drawn last: label, text, cursor, the terminal's width and the window's height.
pub(super) type Shown = (String, String, usize, usize, usize);

impl Editor {
    /// Redraws the entry, `line` after `label`, in the window that fits the screen. What is
    /// on the screen already is not drawn again.
    pub(super) fn draw(&mut self, label: &str, line: &Line) {
        let rows = super::term::size()
            .map(|(_, rows)| rows)
            .or(self.caps.lines)
            .unwrap_or(24);
        self.draw_in(label, line, rows.saturating_sub(1).max(1));
    }

    /// Draws the entry whole, however tall: it has been sent.
    pub(super) fn draw_whole(&mut self, label: &str, line: &Line) {
        self.draw_in(label, line, usize::MAX);
    }

    /// After a resize: the entry drawn again for the new size. A terminal that does not
    /// rewrap its lines (xterm) left the cursor on the row of the entry it was on; one that
    /// does (tmux, VTE) put it where the entry wrapped at the new width puts it. Going up the
    /// fewer of the two rows never clears what the conversation printed above the entry; at
    /// worst a stale row of it stays above.
    pub(super) fn redraw(&mut self) {
        let Some((label, text, cursor, ..)) = self.shown.take() else {
            return;
        };
        let line = Line::at(text, cursor);
        let (_, row, _) = layout(&label, &line.text, line.cursor, self.cols());
        self.cursor_row = self.cursor_row.min(row);
        self.draw(&label, &line);
    }

    fn cols(&self) -> usize {
        super::term::size()
            .map(|(cols, _)| cols)
            .or(self.caps.cols)
            .unwrap_or(80)
    }

    /// Draws rows of the entry, at most `height` of them around the cursor.
    fn draw_in(&mut self, label: &str, line: &Line, height: usize) {
        let cols = self.cols();
        let shown = (
            label.to_string(),
            line.text.clone(),
            line.cursor,
            cols,
            height,
        );
        if self.shown.as_ref() == Some(&shown) {
            return;
        }
        self.shown = Some(shown);
        let (label, text, cursor) = (label, &line.text, line.cursor);
        let (rows, row, col) = layout(label, text, cursor, cols);
        let top = window(self.top, rows.len(), row, height);
        let end = rows.len().min(top.saturating_add(height));
        let mut out = Vec::new();
        for _ in 0..self.cursor_row {
            out.extend_from_slice(self.caps.cuu1.as_deref().unwrap_or_default());
        }
        out.extend_from_slice(self.caps.cr.as_deref().unwrap_or_default());
        out.extend_from_slice(self.caps.ed.as_deref().unwrap_or_default());
        for (i, text) in rows.iter().enumerate().take(end).skip(top) {
            if i > top {
                out.extend_from_slice(b"\r\n");
            }
            self.row(&mut out, label, i, text, usize::MAX);
        }
        for _ in row..end - 1 {
            out.extend_from_slice(self.caps.cuu1.as_deref().unwrap_or_default());
        }
        if row + 1 < end || col < text_width(&rows[row]) {
            out.extend_from_slice(self.caps.cr.as_deref().unwrap_or_default());
            self.row(&mut out, label, row, &rows[row], col);
        }
        self.top = top;
        self.cursor_row = row - top;
        write(&out);
    }

    /// Row `i` of the entry up to column `upto`, the label (on the first row) in bold.
    fn row(&self, out: &mut Vec<u8>, label: &str, i: usize, text: &str, upto: usize) {
        let mut cols = 0;
        let mut at = 0;
        for (n, c) in text.char_indices() {
            let w = c.width().unwrap_or(0);
            if cols + w > upto {
                break;
            }
            cols += w;
            at = n + c.len_utf8();
        }
        let shown = &text[..at];
        match (i, self.caps.bold(), shown.strip_prefix(label)) {
            (0, Some(bold), Some(rest)) if !label.is_empty() => {
                out.extend_from_slice(&bold);
                out.extend_from_slice(label.as_bytes());
                out.extend_from_slice(self.caps.sgr0.as_deref().unwrap_or_default());
                out.extend_from_slice(rest.as_bytes());
            }
            _ => out.extend_from_slice(shown.as_bytes()),
        }
    }

    /// Lists Tab's candidates below the entry, then draws it again under them. The list is
    /// broken at spaces as agent-loop's own lines are (one column short of the width), so
    /// that no name is cut in two.
    pub(super) fn list(&mut self, label: &str, line: &Line, choices: &[String]) {
        let mut end = line.clone();
        end.cursor = end.text.len();
        self.draw(label, &end);
        let list =
            break_long(&choices.join("  "), self.cols().saturating_sub(1)).replace('\n', "\r\n");
        write(format!("\r\n{list}\r\n").as_bytes());
        self.cursor_row = 0;
        self.shown = None;
    }

    /// Ctrl-L: the screen cleared, the entry at its top (with `cup`; else only redrawn).
    pub(super) fn clear_screen(&mut self) {
        if self.caps.cup.is_some() {
            let mut out = Vec::new();
            super::super::display::Caps::expand2(&self.caps.cup, 0, 0, &mut out);
            out.extend_from_slice(self.caps.ed.as_deref().unwrap_or_default());
            write(&out);
            self.cursor_row = 0;
            self.shown = None;
        }
    }
}

/// The first of `n` rows shown in a window of `height` rows that holds row `row`, moved as
/// little as it can be from `top`, the first row shown before.
fn window(top: usize, n: usize, row: usize, height: usize) -> usize {
    if n <= height {
        return 0;
    }
    top.min(row)
        .max(row + 1 - height.min(row + 1))
        .min(n - height)
}

fn text_width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

#[cfg(test)]
mod tests {
    use super::window;

    #[test]
    fn the_window_holds_the_cursor_and_moves_as_little_as_it_can() {
        // Fits: all rows from the first.
        assert_eq!(window(5, 10, 9, 10), 0);
        // The cursor at the end of 40 rows, 23 shown: the last 23.
        assert_eq!(window(0, 40, 39, 23), 17);
        // Up a row: the window stays; up to above it: it follows.
        assert_eq!(window(17, 40, 20, 23), 17);
        assert_eq!(window(17, 40, 3, 23), 3);
        // Down past its end: it follows; rows deleted from the end: it keeps to the last.
        assert_eq!(window(3, 40, 30, 23), 8);
        assert_eq!(window(17, 30, 29, 23), 7);
    }
}
