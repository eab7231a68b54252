//! The view's screen, drawn with the capabilities of the terminfo entry alone: the
//! conversation in a scroll region (`csr`) over the whole screen but its last rows, the status
//! line under it, the input line at the bottom. What is drawn is what changed: a streamed
//! piece is written where the last row ends (`cup` only when the cursor is elsewhere), a new
//! row scrolls the region by one (`cr`, `ind`) instead of redrawing it, and the status line is
//! rewritten only when its text changes. While a turn runs and nothing is being typed, the
//! cursor is hidden and stays at the end of the conversation, so the next piece needs no
//! cursor motion, but where a word that does not fit is moved from the end of the last row
//! to a new one (`cup` to rub it out, `el`). A screen of three rows has no scroll region: its
//! one row of conversation is repainted. On two rows the status line gives way (it would
//! be drawn over the input, hiding an approval's question), on one the conversation too:
//! the input line always stays.

use std::io::Write;

use super::super::super::editor::keys;
use super::super::super::editor::line::Line;
use super::lines::{columns, Conversation, Row, Style};
use super::status::Status;
use crate::cli::display::caps::Caps;

/// The conversation's rows are at least this many, whatever the input takes.
const MIN_CONVERSATION: usize = 3;

pub struct Draw {
    pub caps: Caps,
    term: Box<dyn Write + Send>,
    /// The bytes of one update, written at once.
    buf: Vec<u8>,
    pub convo: Conversation,
    pub status: Status,
    /// The status line as drawn.
    drawn_status: String,
    /// What the input line shows before the text: `You: `, an approval's question.
    pub label: String,
    /// A shorter label for the one it names (`[y/a/n]: ` for an approval's answers), shown
    /// when that one would not fit the input rows: on a short, narrow screen (a phone with
    /// its keyboard open) the long one's last row, or only the cursor's, would be all of it.
    pub short_label: Option<(String, String)>,
    pub input: Line,
    pub cols: usize,
    pub rows: usize,
    input_rows: usize,
    /// Rows scrolled back from the live end: the rows below the view.
    pub back: usize,
    /// The cursor stands at the end of the conversation's last row.
    at_end: bool,
    /// The attribute in force.
    attr: Style,
    cursor_hidden: bool,
    /// Drawing: the view is on the screen (not before it starts, nor after it ends).
    pub on: bool,
}

impl Draw {
    pub fn new(caps: Caps, term: Box<dyn Write + Send>, cols: usize, rows: usize) -> Self {
        Draw {
            caps,
            term,
            buf: Vec::new(),
            convo: Conversation::new(cols),
            status: Status::default(),
            drawn_status: String::new(),
            label: String::new(),
            short_label: None,
            input: Line::default(),
            cols,
            rows,
            input_rows: 1,
            back: 0,
            at_end: false,
            attr: Style::Plain,
            cursor_hidden: false,
            on: false,
        }
    }

    /// Rows of the conversation's region: none on a screen of one row.
    pub(super) fn region(&self) -> usize {
        self.rows
            .saturating_sub(self.status_rows() + self.input_rows)
    }

    /// The status line's row, when the conversation keeps one beside it and the input.
    fn status_rows(&self) -> usize {
        usize::from(self.rows >= 2 + self.input_rows)
    }

    fn put(&mut self, cap: fn(&Caps) -> &Option<Vec<u8>>) {
        let bytes = cap(&self.caps).as_deref().unwrap_or_default();
        self.buf.extend_from_slice(bytes);
    }

    fn cup(&mut self, row: usize, col: usize) {
        Caps::expand2(&self.caps.cup, row, col, &mut self.buf);
        self.at_end = false;
    }

    fn attr(&mut self, style: Style) {
        if style == self.attr {
            return;
        }
        if self.attr != Style::Plain {
            self.put(|c| &c.sgr0);
        }
        let start = match style {
            Style::Plain => None,
            Style::Colour(colour) => self.caps.colour(colour),
            Style::Bold => self.caps.bold(),
        };
        self.buf.extend(start.iter().flatten());
        self.attr = style;
    }

    /// Writes what the update drew.
    pub fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let _ = self.term.write_all(&self.buf);
        let _ = self.term.flush();
        self.buf.clear();
    }

    /// Writes `bytes` as they are (before the view starts and after it ends).
    pub fn write_raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        self.flush();
    }

    /// Lays everything out again at `cols` by `rows` and draws it all.
    pub fn relayout(&mut self, cols: usize, rows: usize) {
        if cols != self.convo.width() {
            // Scrolled back, the view keeps its place as a share of the whole.
            let (old, back) = (self.convo.rows.len().max(1), self.back);
            self.convo.rewrap(cols);
            self.back = back * self.convo.rows.len() / old;
        }
        self.cols = cols;
        self.rows = rows;
        self.input_rows = self.input_layout().0.len().clamp(1, self.max_input());
        if !self.on {
            return;
        }
        let region = self.region();
        self.attr(Style::Plain);
        // A scroll region has two rows at least (a terminal ignores a smaller one): a
        // conversation of one row is repainted instead, under the whole screen's.
        let bottom = if region < 2 { self.rows } else { region };
        Caps::expand2(&self.caps.csr, 0, bottom.max(1) - 1, &mut self.buf);
        self.paint_conversation();
        self.drawn_status.clear();
        self.paint_status();
        self.paint_input();
        self.settle();
    }

    fn max_input(&self) -> usize {
        self.rows
            .saturating_sub(1 + MIN_CONVERSATION)
            .clamp(1, (self.rows / 3).max(1))
    }

    fn input_layout(&self) -> (Vec<String>, usize, usize) {
        let layout = |label| keys::layout(label, &self.input.text, self.input.cursor, self.cols);
        let full = layout(&self.label);
        match &self.short_label {
            Some((long, short)) if *long == self.label && full.0.len() > self.max_input() => {
                layout(short)
            }
            _ => full,
        }
    }

    /// The furthest the view can be scrolled back.
    fn max_back(&self) -> usize {
        self.convo.rows.len().saturating_sub(self.region())
    }

    /// Draws the region from the rows `back` rows up from the live end, newest at the
    /// bottom.
    pub fn paint_conversation(&mut self) {
        self.back = self.back.min(self.max_back());
        let region = self.region();
        let end = self.convo.rows.len() - self.back;
        let start = end.saturating_sub(region);
        let blank = region - (end - start);
        for screen_row in 0..region {
            self.cup(screen_row, 0);
            if screen_row >= blank {
                let row = self.convo.rows[start + screen_row - blank];
                self.row_text(&row, 0);
            }
            self.put(|c| &c.el);
        }
        self.at_end = self.back == 0 && end > 0 && region > 0;
    }

    /// Writes `row` from byte `from` on, in its style, and resets the style.
    fn row_text(&mut self, row: &Row, from: usize) {
        let style = self.convo.style(row);
        self.attr(style);
        let text = &self.convo.lines[row.line].text[row.start + from..row.end];
        self.buf.extend_from_slice(text.as_bytes());
        self.attr(Style::Plain);
    }

    /// Adds text to the conversation and draws what changed.
    pub fn push(&mut self, text: &str, style: Style) {
        let before = self.convo.rows.len();
        let old_end = self.convo.rows.last().map(|r| (r.end, r.cols));
        let first = self.convo.push(text, style);
        let added = self.convo.rows.len() - before;
        if !self.on {
            return;
        }
        if self.back > 0 {
            self.back += added;
            return self.paint_status();
        }
        let region = self.region();
        if self.convo.rows.len() - first > region || region < 2 {
            return self.paint_conversation();
        }
        for index in first..self.convo.rows.len() {
            let row = self.convo.rows[index];
            if index < before {
                let (end, cols) = old_end.expect("a row existed");
                if row.end < end {
                    // The last row gave its last word to the next: rub it out there.
                    self.cup(region - 1, row.cols);
                    self.put(|c| &c.el);
                } else if row.end > end {
                    // The last row grew: write its new end where it ended.
                    if !self.at_end {
                        self.cup(region - 1, cols);
                    }
                    self.row_text(&row, end - row.start);
                } else {
                    continue;
                }
            } else {
                match self.at_end {
                    true => self.put(|c| &c.cr),
                    false => self.cup(region - 1, 0),
                }
                self.put(|c| &c.ind);
                self.row_text(&row, 0);
            }
            self.at_end = true;
        }
    }

    /// Rewrites the status line if its text changed.
    pub fn paint_status(&mut self) {
        if !self.on || self.status_rows() == 0 {
            return;
        }
        let mut text = self.status.text(self.back);
        if text == self.drawn_status {
            return;
        }
        self.drawn_status.clone_from(&text);
        // Cut to the width, and padded to it so that reverse video makes a bar.
        let mut used = 0;
        text = text
            .chars()
            .take_while(|c| {
                used += columns(c.encode_utf8(&mut [0; 4]));
                used < self.cols
            })
            .collect();
        let pad = self.cols.saturating_sub(1 + columns(&text));
        text.extend(std::iter::repeat_n(' ', pad));
        let row = self.region();
        self.cup(row, 0);
        self.attr(Style::Plain);
        self.put(|c| &c.rev);
        self.buf.extend_from_slice(text.as_bytes());
        if self.caps.rev.is_some() {
            self.put(|c| &c.sgr0);
        }
        self.put(|c| &c.el);
    }

    /// Rewrites the input rows: the rows around the cursor when the text is taller than
    /// they are. A change in how many rows it needs lays the screen out again.
    pub fn paint_input(&mut self) {
        if !self.on {
            return;
        }
        let (lines, _, _) = self.input_layout();
        let wanted = lines.len().clamp(1, self.max_input());
        if wanted != self.input_rows {
            return self.relayout(self.cols, self.rows);
        }
        let (first, _) = self.input_window();
        let top = self.rows - self.input_rows;
        self.attr(Style::Plain);
        for i in 0..self.input_rows {
            self.cup(top + i, 0);
            if let Some(line) = lines.get(first + i) {
                self.buf.extend_from_slice(line.as_bytes());
            }
            self.put(|c| &c.el);
        }
    }

    /// The first input row shown, and the screen position of the cursor.
    fn input_window(&self) -> (usize, (usize, usize)) {
        let (_, row, col) = self.input_layout();
        let first = (row + 1).saturating_sub(self.input_rows);
        let top = self.rows - self.input_rows;
        (first, (top + row - first, col))
    }

    /// Puts the cursor where it belongs: at the input, shown, unless a turn runs and nothing
    /// is typed (hidden, where it is).
    pub fn settle(&mut self) {
        if !self.on {
            return;
        }
        let busy = self.status.running.is_some() && !self.status.approval;
        if busy && self.input.text.is_empty() && self.caps.civis.is_some() {
            if !self.cursor_hidden {
                self.put(|c| &c.civis);
                self.cursor_hidden = true;
            }
            return;
        }
        let (_, (row, col)) = self.input_window();
        self.cup(row, col);
        if self.cursor_hidden {
            self.put(|c| &c.cnorm);
            self.cursor_hidden = false;
        }
    }

    /// Scrolls back by `rows` (forward when negative); `None`: to the live end.
    pub fn scroll(&mut self, rows: Option<isize>) {
        let back = match rows {
            None => 0,
            Some(n) => self.back.saturating_add_signed(n).min(self.max_back()),
        };
        if back == self.back {
            return;
        }
        self.back = back;
        self.paint_conversation();
        self.paint_status();
        self.settle();
    }

    /// A page: the region less one row, kept for context.
    pub fn page(&self) -> isize {
        isize::try_from(self.region().saturating_sub(1).max(1)).unwrap_or(1)
    }

    /// The bytes that give the screen back: attributes off, scroll region whole, cursor
    /// shown, bracketed paste off, the main screen (else the screen cleared).
    pub fn reset_bytes(&self) -> Vec<u8> {
        let c = &self.caps;
        let mut out = Vec::new();
        out.extend(c.sgr0.iter().flatten());
        Caps::expand2(&c.csr, 0, self.rows.saturating_sub(1), &mut out);
        out.extend(c.cnorm.iter().flatten());
        out.extend(c.paste_off.iter().flatten());
        match &c.rmcup {
            Some(rmcup) if c.smcup.is_some() => out.extend(rmcup),
            _ => {
                Caps::expand2(&c.cup, 0, 0, &mut out);
                out.extend(c.ed.iter().flatten());
            }
        }
        out
    }

    /// The bytes that start the view: the alternate screen, bracketed paste.
    pub fn start_bytes(&self) -> Vec<u8> {
        let c = &self.caps;
        [&c.smcup, &c.paste_on]
            .into_iter()
            .flat_map(|cap| cap.iter().flatten())
            .copied()
            .collect()
    }

    /// The conversation from line `from` on, as lines to print once the view has ended.
    pub fn transcript(&mut self, from: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let sgr0 = self.caps.sgr0.clone().unwrap_or_default();
        for line in &self.convo.lines[from.min(self.convo.lines.len())..] {
            let start = match line.style {
                Style::Plain => None,
                Style::Colour(colour) => self.caps.colour(colour),
                Style::Bold => self.caps.bold(),
            };
            out.extend(start.iter().flatten());
            out.extend_from_slice(line.text.as_bytes());
            if start.is_some() {
                out.extend_from_slice(&sgr0);
            }
            out.push(b'\n');
        }
        out
    }
}
