//! The view's conversation: every line shown since the view began (and the turns of a resumed
//! session), kept whole so that a resize can wrap them again and nothing is lost, and the
//! rows they wrap into at the current width. Text is added at the end only, so a streamed
//! piece re-wraps the last row alone: the rows before it cannot change.
//!
//! Wrapping is at spaces, as readers expect of a narrow screen (a phone's): a word that does
//! not fit at the end of a row starts the next one, and the spaces before it are not shown.
//! A word wider than a row, or text without spaces (CJK), wraps by character, as the terminal
//! itself wraps, with the width of each character from Unicode's East Asian Width
//! (`unicode-width`, as vt100 and the terminals use it): a wide character that does not fit
//! at the end of a row starts the next one. The line's text stays whole, for a resize and the
//! transcript; only its rows skip the spaces they break at.

use unicode_width::UnicodeWidthChar;

use crate::cli::display::caps::Colour;

/// How a line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Colour(Colour),
    Bold,
}

/// One line of text, without its newline.
#[derive(Debug, Clone)]
pub struct Line {
    pub text: String,
    pub style: Style,
}

/// A piece of one line that fits a row: bytes `start..end` of line `line`, `cols` wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub line: usize,
    pub start: usize,
    pub end: usize,
    pub cols: usize,
}

/// Spaces a tab stands for: rows are drawn cell by cell, and a tab's width depends on where
/// it falls.
const TAB: &str = "    ";

#[derive(Debug)]
pub struct Conversation {
    pub lines: Vec<Line>,
    /// The last line is still open: text added next continues it.
    open: bool,
    pub rows: Vec<Row>,
    width: usize,
}

impl Conversation {
    pub fn new(width: usize) -> Self {
        Conversation {
            lines: Vec::new(),
            open: false,
            rows: Vec::new(),
            width: width.max(1),
        }
    }

    /// The text of `row`.
    #[cfg(test)]
    pub fn text(&self, row: &Row) -> &str {
        &self.lines[row.line].text[row.start..row.end]
    }

    pub fn style(&self, row: &Row) -> Style {
        self.lines[row.line].style
    }

    /// Adds `text` (sanitised: newlines and tabs are its only control characters) in
    /// `style`; a line it leaves open is continued by the next text. Returns the index of the
    /// first row that changed: the rows from there on are new, or longer, or (that first one)
    /// shorter, having given its last word to the next.
    pub fn push(&mut self, text: &str, style: Style) -> usize {
        let first = match self.open {
            true => self.rows.len().saturating_sub(1),
            false => self.rows.len(),
        };
        let mut pieces = text.split('\n').peekable();
        while let Some(piece) = pieces.next() {
            let last = pieces.peek().is_none();
            if last && piece.is_empty() {
                break;
            }
            if !self.open {
                self.start_line(style);
            }
            self.extend_last(piece);
            if !last {
                self.open = false;
            }
        }
        first
    }

    /// Starts a new, empty line with one empty row.
    fn start_line(&mut self, style: Style) {
        let line = self.lines.len();
        self.lines.push(Line {
            text: String::new(),
            style,
        });
        self.rows.push(Row {
            line,
            start: 0,
            end: 0,
            cols: 0,
        });
        self.open = true;
    }

    /// Appends to the open last line, wrapping into new rows. Only the last row changes: it
    /// grows, or gives its last word to a new row.
    fn extend_last(&mut self, piece: &str) {
        let line = self.lines.len() - 1;
        for c in piece.chars() {
            if c == '\t' {
                self.extend_last(TAB);
                continue;
            }
            let w = c.width().unwrap_or(0);
            let row = *self.rows.last().expect("an open line has a row");
            let end = self.lines[line].text.len();
            self.lines[line].text.push(c);
            let next = end + c.len_utf8();
            // Spaces past the end of a full row hang there unseen (the row ends before them).
            if row.end == end && (row.cols + w <= self.width || row.cols == 0) {
                let last = self.rows.last_mut().expect("an open line has a row");
                last.end = next;
                last.cols += w;
                continue;
            }
            if c == ' ' {
                continue;
            }
            // The row is full: the word `c` continues moves to the next row whole, if the row
            // holds something before the space it follows; else `c` starts the next row.
            let text = &self.lines[line].text;
            // (Only a word that fits the next row with `c`: what comes before the break may be
            // of no width, a zero-width space, and then leave the word as wide as a row.)
            let (keep, start) = match last_break(&text[row.start..end]) {
                Some((keep, start)) if columns(&text[row.start + start..end]) + w <= self.width => {
                    ((row.start + keep).min(row.end), row.start + start)
                }
                _ => (row.end, end),
            };
            if keep < row.end {
                let kept = columns(&text[row.start..keep]);
                let last = self.rows.last_mut().expect("an open line has a row");
                last.end = keep;
                last.cols = kept;
            }
            let cols = columns(&text[start..next]);
            self.rows.push(Row {
                line,
                start,
                end: next,
                cols,
            });
        }
    }

    /// Wraps every line again at `width`.
    pub fn rewrap(&mut self, width: usize) {
        let lines = std::mem::take(&mut self.lines);
        let open = self.open;
        self.width = width.max(1);
        self.rows.clear();
        self.open = false;
        for line in lines {
            self.start_line(line.style);
            self.extend_last(&line.text);
        }
        self.open = open;
    }

    pub fn width(&self) -> usize {
        self.width
    }
}

/// Where a full row's `text` may break, at its last spaces, if something other than spaces
/// comes before them (indentation is not a place to break): where the row's words end, and
/// where the next row starts.
fn last_break(text: &str) -> Option<(usize, usize)> {
    let space = text.rfind(' ')?;
    let words = text[..space].trim_end_matches(' ').len();
    (words > 0).then_some((words, space + 1))
}

/// Columns `text` takes (tabs as [`TAB`]).
pub fn columns(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '\t' => TAB.len(),
            c => c.width().unwrap_or(0),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(c: &Conversation) -> Vec<&str> {
        c.rows.iter().map(|r| c.text(r)).collect()
    }

    #[test]
    fn lines_wrap_at_spaces_and_streamed_text_continues_the_last_row() {
        let mut c = Conversation::new(5);
        assert_eq!(c.push("hello world\n", Style::Plain), 0);
        assert_eq!(shown(&c), ["hello", "world"]);
        assert_eq!(c.push("ab", Style::Plain), 2);
        assert_eq!(c.push("cdef", Style::Plain), 2);
        // No space to break at: by character, as the terminal wraps.
        assert_eq!(shown(&c), ["hello", "world", "abcde", "f"]);
        c.push("\n\nx\n", Style::Bold);
        assert_eq!(shown(&c), ["hello", "world", "abcde", "f", "", "x"]);
        c.rewrap(20);
        assert_eq!(shown(&c), ["hello world", "abcdef", "", "x"]);
        assert_eq!(c.lines[0].text, "hello world");
    }

    #[test]
    fn a_word_streamed_past_the_end_of_a_row_moves_to_the_next_whole() {
        let mut c = Conversation::new(10);
        for piece in ["The ans", "wer is forty-", "two, said the ", "computer."] {
            c.push(piece, Style::Plain);
        }
        let rows = ["The answer", "is", "forty-two,", "said the", "computer."];
        assert_eq!(shown(&c), rows);
        let cols: Vec<usize> = c.rows.iter().map(|r| r.cols).collect();
        assert_eq!(cols, [10, 2, 10, 8, 9]);
        // The same rows whether it came in pieces or whole, as after a resize.
        c.rewrap(10);
        assert_eq!(shown(&c), rows);
        // A space that does not fit is not shown, nor given a row of its own, however many.
        let mut c = Conversation::new(5);
        c.push("hello   \nabc de", Style::Plain);
        c.push("   f\u{301}g", Style::Plain);
        assert_eq!(shown(&c), ["hello", "abc", "de", "f\u{301}g"]);
        let cols: Vec<usize> = c.rows.iter().map(|r| r.cols).collect();
        assert_eq!(cols, [5, 3, 2, 2]);
        // Indentation is not a place to break: a word longer than the row after it wraps
        // by character.
        let mut c = Conversation::new(6);
        c.push("  abcdefgh\n", Style::Plain);
        assert_eq!(shown(&c), ["  abcd", "efgh"]);
    }

    #[test]
    fn rows_are_the_same_however_the_text_came_and_each_fits_its_width() {
        let texts = [
            "The answer is forty-two, said the computer, after a very long while.",
            "  indented  words   with\trunning   spaces and averyveryverylongword too ",
            "日本語の文 and mixed 日本 words, e\u{301}te\u{301} done",
            "\u{200b} abcdefghi中 end, \u{200b} e\u{301}xyz中",
        ];
        for text in texts {
            for width in 1..14 {
                let whole = {
                    let mut c = Conversation::new(width);
                    c.push(text, Style::Plain);
                    c
                };
                let mut streamed = Conversation::new(width);
                for ch in text.chars() {
                    streamed.push(&ch.to_string(), Style::Plain);
                }
                let mut resized = Conversation::new(width + 7);
                resized.push(text, Style::Plain);
                resized.rewrap(width);
                assert_eq!(shown(&streamed), shown(&whole), "{text:?} at {width}");
                assert_eq!(shown(&resized), shown(&whole), "{text:?} at {width}");
                for row in &whole.rows {
                    let shown = whole.text(row);
                    assert_eq!(row.cols, columns(shown), "{shown:?} at {width}");
                    assert!(row.cols <= width || shown.chars().count() == 1, "{shown:?}");
                }
            }
        }
    }

    #[test]
    fn wide_characters_never_straddle_a_row() {
        let mut c = Conversation::new(5);
        c.push("ab日本語\n", Style::Plain);
        assert_eq!(shown(&c), ["ab日", "本語"]);
        assert_eq!(c.rows[0].cols, 4);
        assert_eq!(columns("a\t日"), 7);
    }
}
