//! Drawing the entry being edited at the REPL's prompt, on stderr: back to the entry's first
//! row (`cuu1`, `cr`), clear to the end of the screen (`ed`), the label in bold and the text
//! wrapped as the terminal wraps it (wide characters take two columns, combining marks
//! none), then the cursor put back on its row and column. Only the entry's rows are
//! touched: what the conversation printed above them stays.

use std::io::Write;

use unicode_width::UnicodeWidthChar;

use super::keys::{layout, Line};
use super::Editor;

/// Writes `bytes` to the terminal (stderr) at once.
pub fn write(bytes: &[u8]) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(bytes);
    let _ = err.flush();
}

/// Columns of the terminal on stderr.
fn width() -> Option<usize> {
    super::term::size().map(|(cols, _)| cols)
}

impl Editor {
    /// Redraws the entry: `line` after `label`. What is on the screen already is not drawn
    /// again: an entry taller than the screen (a long paste) cannot be redrawn whole, its
    /// first rows being out of the cursor's reach, and Enter after it changes nothing.
    pub(super) fn draw(&mut self, label: &str, line: &Line) {
        let cols = width().or(self.caps.cols).unwrap_or(80);
        let shown = (label.to_string(), line.text.clone(), line.cursor, cols);
        if self.shown.as_ref() == Some(&shown) {
            return;
        }
        self.shown = Some(shown);
        let (label, text, cursor) = (label, &line.text, line.cursor);
        let (rows, row, col) = layout(label, text, cursor, cols);
        let mut out = Vec::new();
        for _ in 0..self.cursor_row {
            out.extend_from_slice(self.caps.cuu1.as_deref().unwrap_or_default());
        }
        out.extend_from_slice(self.caps.cr.as_deref().unwrap_or_default());
        out.extend_from_slice(self.caps.ed.as_deref().unwrap_or_default());
        for (i, text) in rows.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b"\r\n");
            }
            self.row(&mut out, label, i, text, usize::MAX);
        }
        for _ in row..rows.len() - 1 {
            out.extend_from_slice(self.caps.cuu1.as_deref().unwrap_or_default());
        }
        if row + 1 < rows.len() || col < text_width(&rows[row]) {
            out.extend_from_slice(self.caps.cr.as_deref().unwrap_or_default());
            self.row(&mut out, label, row, &rows[row], col);
        }
        self.cursor_row = row;
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

    /// Lists Tab's candidates below the entry, then draws it again under them.
    pub(super) fn list(&mut self, label: &str, line: &Line, choices: &[String]) {
        let mut end = line.clone();
        end.cursor = end.text.len();
        self.draw(label, &end);
        write(format!("\r\n{}\r\n", choices.join("  ")).as_bytes());
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

fn text_width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}
