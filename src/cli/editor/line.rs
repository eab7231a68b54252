//! The line being typed and its edits, shared by the REPL's line editor and the view's input
//! line: the keys of readline's emacs mode that a shell user's fingers know. The cursor
//! moves, and Backspace and Delete remove, by extended grapheme cluster (what a person sees
//! as one character: a letter with its combining marks, a flag, emoji joined by ZWJ), so it
//! never stands between a letter and its accent.
//!
//! What a kill takes (Ctrl-U, Ctrl-K, Ctrl-W, Alt-D, Alt-Backspace) is kept for Ctrl-Y, and
//! kills in a row add up, as in readline, so that Ctrl-W pressed three times yanks back the
//! three words. Ctrl-_ (Ctrl-/ on most keyboards) undoes the last edit; a run of typed
//! characters is one edit.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use super::keys::Key;

/// The most undo steps kept, and the most bytes they hold together (each holds the whole
/// line: a long paste keeps fewer).
const MAX_UNDO: usize = 200;
const MAX_UNDO_BYTES: usize = 4 << 20;

/// The text being typed and where the cursor is in it (a byte offset).
#[derive(Debug, Default, Clone)]
pub struct Line {
    pub text: String,
    pub cursor: usize,
    /// What the kills took, for Ctrl-Y.
    killed: String,
    /// The last edit was a kill: the next adds to `killed` rather than replacing it.
    killing: bool,
    /// The line as it was before each edit, the latest last.
    undo: Vec<(String, usize)>,
    /// The last edit typed a character: the next one is part of the same undo step.
    typing: bool,
    /// The column Up and Down keep to (display columns from the start of the cursor's line),
    /// set by the first of them in a row: passing a shorter line does not lose it.
    goal: Option<usize>,
}

/// Which end of `killed` a kill adds to: its text was before the cursor, or after it.
enum Side {
    Before,
    After,
}

impl Line {
    /// A line with `text`, the cursor at `cursor`.
    pub fn at(text: String, cursor: usize) -> Line {
        Line {
            text,
            cursor,
            ..Line::default()
        }
    }

    pub fn insert(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    /// Another text in the line (an entry of the history): what was killed stays, the undo
    /// steps go.
    pub fn set(&mut self, text: String) {
        self.cursor = text.len();
        self.text = text;
        self.undo.clear();
        (self.killing, self.typing) = (false, false);
        self.goal = None;
    }

    /// Takes `other`'s text and cursor (a search's match), keeping what was killed here.
    pub fn adopt(&mut self, other: Line) {
        self.set(other.text);
        self.cursor = other.cursor;
    }

    /// Back to `draft`, the line as it was before entries of the history were shown: its
    /// text, cursor and undo steps; what was killed meanwhile stays.
    pub fn restore(&mut self, draft: Line) {
        let killed = std::mem::take(&mut self.killed);
        *self = Line {
            killed,
            killing: false,
            typing: false,
            goal: None,
            ..draft
        };
    }

    /// Empties the line for the next entry, keeping what was killed; returns its text.
    pub fn take(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        self.set(String::new());
        text
    }

    /// Replaces `range` of the text with `with`, the cursor after it: an edit of its own (a
    /// completion, a line continued), undone by Ctrl-_.
    pub fn replace(&mut self, range: std::ops::Range<usize>, with: &str) {
        (self.killing, self.typing) = (false, false);
        self.goal = None;
        self.change(|l| {
            l.text.replace_range(range.clone(), with);
            l.cursor = range.start + with.len();
        });
    }

    /// Applies an editing key; false if it is not one.
    pub fn edit(&mut self, key: &Key) -> bool {
        let (killing, typing) = (self.killing, self.typing);
        (self.killing, self.typing) = (false, false);
        self.goal = None;
        let before = self.prev(self.cursor);
        let after = self.next(self.cursor);
        match key {
            Key::Char(c) => {
                if !typing {
                    self.remember();
                }
                self.typing = true;
                self.insert(c.encode_utf8(&mut [0; 4]));
            }
            Key::Paste(text) => self.change(|l| l.insert(text)),
            Key::Newline => self.change(|l| l.insert("\n")),
            Key::Backspace if self.cursor > 0 => self.change(|l| {
                l.text.replace_range(before..l.cursor, "");
                l.cursor = before;
            }),
            Key::Delete if self.cursor < self.text.len() => {
                self.change(|l| l.text.replace_range(l.cursor..after, ""));
            }
            Key::Left | Key::Ctrl('B') => self.cursor = before,
            Key::Right | Key::Ctrl('F') => self.cursor = after,
            // Pressed again at the line's edge, to the entry's.
            Key::Home | Key::Ctrl('A') => match self.line_start() {
                at if at == self.cursor => self.cursor = 0,
                at => self.cursor = at,
            },
            Key::End | Key::Ctrl('E') => match self.line_end() {
                at if at == self.cursor => self.cursor = self.text.len(),
                at => self.cursor = at,
            },
            Key::WordLeft => self.cursor = self.word_start(),
            Key::WordRight => self.cursor = self.word_end(),
            // At a line's edge they take the line break, as emacs' kill-line: pressed again,
            // they go on through an entry of several lines.
            Key::Ctrl('U') => {
                let start = match self.line_start() {
                    0 => 0,
                    at if at == self.cursor => at - 1,
                    at => at,
                };
                self.kill(start, killing, Side::Before);
            }
            Key::Ctrl('K') => {
                let end = match self.line_end() {
                    at if at == self.cursor && at < self.text.len() => at + 1,
                    at => at,
                };
                self.kill(end, killing, Side::After);
            }
            Key::Ctrl('W') => self.kill(self.word_start(), killing, Side::Before),
            Key::KillWordLeft => self.kill(self.alnum_start(), killing, Side::Before),
            Key::KillWordRight => self.kill(self.alnum_end(), killing, Side::After),
            Key::Ctrl('Y') if !self.killed.is_empty() => {
                let killed = self.killed.clone();
                self.change(|l| l.insert(&killed));
            }
            Key::Ctrl('T') => self.transpose(),
            Key::Ctrl('_') => {
                if let Some((text, cursor)) = self.undo.pop() {
                    (self.text, self.cursor) = (text, cursor);
                }
            }
            Key::Backspace | Key::Delete | Key::Ctrl('Y') => {}
            _ => return false,
        }
        true
    }

    /// Where the cursor's line starts and ends: Home, End and the kills act on the line of an
    /// entry of several, as in zsh and fish (one line: the whole entry).
    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        (self.text[self.cursor..].find('\n')).map_or(self.text.len(), |i| self.cursor + i)
    }

    /// Up (`up`) or Down within the text: the cursor to the line above (below), at the
    /// column it was on, counted in display columns (a wide character takes two), or at that
    /// line's end when it is shorter; false on the first (last) line, where it stays.
    /// Lines are those the text's newlines make, not the rows the screen wraps them into, as
    /// in zsh and fish.
    pub fn vertical(&mut self, up: bool) -> bool {
        let start = self.line_start();
        let target = match up {
            true if start == 0 => return false,
            true => self.text[..start - 1].rfind('\n').map_or(0, |i| i + 1),
            false => match self.text[self.cursor..].find('\n') {
                Some(i) => self.cursor + i + 1,
                None => return false,
            },
        };
        let goal = *self
            .goal
            .get_or_insert_with(|| self.text[start..self.cursor].width());
        let end = self.text[target..]
            .find('\n')
            .map_or(self.text.len(), |i| target + i);
        let mut at = target;
        let mut cols = 0;
        for (i, g) in self.text[target..end].grapheme_indices(true) {
            cols += g.width();
            if cols > goal {
                break;
            }
            at = target + i + g.len();
        }
        (self.killing, self.typing) = (false, false);
        self.cursor = at;
        true
    }

    /// Keeps the line as it is for Ctrl-_.
    fn remember(&mut self) {
        self.undo.push((self.text.clone(), self.cursor));
        let mut bytes: usize = self.undo.iter().map(|(text, _)| text.len()).sum();
        while self.undo.len() > 1 && (self.undo.len() > MAX_UNDO || bytes > MAX_UNDO_BYTES) {
            bytes -= self.undo.remove(0).0.len();
        }
    }

    /// An edit that is an undo step of its own.
    fn change(&mut self, edit: impl FnOnce(&mut Line)) {
        self.remember();
        edit(self);
    }

    /// Removes the text between the cursor and `to` into `killed`, added to what the last
    /// edit killed when it was a kill too.
    fn kill(&mut self, to: usize, killing: bool, side: Side) {
        let range = self.cursor.min(to)..self.cursor.max(to);
        self.killing = true;
        if range.is_empty() {
            return;
        }
        self.remember();
        let taken: String = self.text.drain(range.clone()).collect();
        self.cursor = range.start;
        match (killing, side) {
            (false, _) => self.killed = taken,
            (true, Side::After) => self.killed.push_str(&taken),
            (true, Side::Before) => self.killed.insert_str(0, &taken),
        }
    }

    /// Ctrl-T: the character before the cursor and the one at it change places (at the end
    /// of a line, the last two of it), and the cursor moves past them.
    fn transpose(&mut self) {
        let at_end = self.text[self.cursor..]
            .chars()
            .next()
            .is_none_or(|c| c == '\n');
        let end = match at_end {
            true => self.cursor,
            false => self.next(self.cursor),
        };
        let middle = self.prev(end);
        let start = self.prev(middle);
        if start == middle || self.text[start..end].contains('\n') {
            return;
        }
        self.change(|l| {
            let swapped = format!("{}{}", &l.text[middle..end], &l.text[start..middle]);
            l.text.replace_range(start..end, &swapped);
            l.cursor = end;
        });
    }

    /// Where the grapheme cluster before `at` starts; where the one at `at` ends.
    fn prev(&self, at: usize) -> usize {
        self.text[..at]
            .grapheme_indices(true)
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next(&self, at: usize) -> usize {
        self.text[at..]
            .graphemes(true)
            .next()
            .map_or(at, |g| at + g.len())
    }

    /// The start of the word before the cursor, words ending at white space (Ctrl-W, Alt-B).
    fn word_start(&self) -> usize {
        let head = self.text[..self.cursor].trim_end();
        head.char_indices()
            .rfind(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8())
    }

    fn word_end(&self) -> usize {
        let tail = &self.text[self.cursor..];
        let skipped = tail.len() - tail.trim_start().len();
        let word = tail[skipped..]
            .find(char::is_whitespace)
            .unwrap_or(tail.len() - skipped);
        self.cursor + skipped + word
    }

    /// The start of the word before the cursor, words of letters and digits
    /// (Alt-Backspace, as readline's `backward-kill-word`), by grapheme cluster: a letter's
    /// marks are part of its word.
    fn alnum_start(&self) -> usize {
        let mut start = self.cursor;
        let mut seen_word = false;
        for (i, g) in self.text[..self.cursor].grapheme_indices(true).rev() {
            match (word_char(g), seen_word) {
                (true, _) => seen_word = true,
                (false, true) => break,
                (false, false) => {}
            }
            start = i;
        }
        start
    }

    /// The end of the word at or after the cursor, words of letters and digits (Alt-D).
    fn alnum_end(&self) -> usize {
        let mut end = self.cursor;
        let mut seen_word = false;
        for (i, g) in self.text[self.cursor..].grapheme_indices(true) {
            match (word_char(g), seen_word) {
                (true, _) => seen_word = true,
                (false, true) => break,
                (false, false) => {}
            }
            end = self.cursor + i + g.len();
        }
        end
    }
}

/// A grapheme cluster of a word: one that starts with a letter or a digit.
fn word_char(grapheme: &str) -> bool {
    grapheme.chars().next().is_some_and(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> Line {
        let mut line = Line::default();
        for key in text.chars().map(Key::Char) {
            line.edit(&key);
        }
        line
    }

    #[test]
    fn editing_keys_move_and_delete_by_character_and_word() {
        let mut line = typed("héllo wörld");
        line.edit(&Key::WordLeft);
        line.edit(&Key::Backspace);
        assert_eq!(line.text, "héllowörld");
        line.edit(&Key::Ctrl('W'));
        assert_eq!((line.text.as_str(), line.cursor), ("wörld", 0));
        line.edit(&Key::End);
        line.edit(&Key::Left);
        line.edit(&Key::Ctrl('K'));
        assert_eq!(line.text, "wörl");
        line.edit(&Key::Home);
        line.edit(&Key::Delete);
        assert_eq!(line.text, "örl");
    }

    #[test]
    fn home_end_and_the_kills_act_on_the_cursors_line_of_an_entry_of_several() {
        let mut line = typed("one\ntwo three\nfour");
        line.vertical(true);
        line.edit(&Key::Home);
        line.edit(&Key::Ctrl('K'));
        assert_eq!(
            (line.text.as_str(), line.killed.as_str()),
            ("one\n\nfour", "two three")
        );
        // At the line's end, the line break goes: the lines join.
        line.edit(&Key::Ctrl('K'));
        assert_eq!(line.text, "one\nfour");
        line.edit(&Key::End);
        assert_eq!(line.cursor, line.text.len());
        line.edit(&Key::Ctrl('U'));
        assert_eq!(line.text, "one\n");
        line.edit(&Key::Ctrl('U'));
        assert_eq!(line.text, "one");
        line.edit(&Key::Ctrl('A'));
        assert_eq!(line.cursor, 0);
        line.edit(&Key::Ctrl('E'));
        assert_eq!(line.cursor, 3);
        // Again at a line's edge: the entry's.
        let mut line = typed("one\ntwo\nthree");
        line.vertical(true);
        line.edit(&Key::Home);
        assert_eq!(line.cursor, 4);
        line.edit(&Key::Home);
        assert_eq!(line.cursor, 0);
        line.edit(&Key::End);
        line.edit(&Key::End);
        assert_eq!(line.cursor, line.text.len());
    }

    #[test]
    fn the_cursor_steps_over_a_letter_with_its_marks_a_flag_and_joined_emoji_as_one() {
        // e + combining acute, the flag of France (two regional indicators), a family (ZWJ).
        let text = "ae\u{301}\u{1f1eb}\u{1f1f7}\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}z";
        let mut line = Line::default();
        line.insert(text);
        let mut stops = vec![line.cursor];
        while line.cursor > 0 {
            line.edit(&Key::Left);
            stops.push(line.cursor);
        }
        assert_eq!(stops, [text.len(), text.len() - 1, 12, 4, 1, 0]);
        line.edit(&Key::Right);
        line.edit(&Key::Delete);
        assert_eq!(line.text, format!("a{}", &text[4..]));
        line.edit(&Key::End);
        line.edit(&Key::Left);
        line.edit(&Key::Backspace);
        assert_eq!(line.text, "a\u{1f1eb}\u{1f1f7}z");
        line.edit(&Key::Ctrl('T'));
        assert_eq!(line.text, "az\u{1f1eb}\u{1f1f7}");
    }

    #[test]
    fn kills_in_a_row_add_up_and_ctrl_y_puts_them_back_anywhere() {
        let mut line = typed("git commit --amend now");
        line.edit(&Key::Ctrl('W'));
        line.edit(&Key::Ctrl('W'));
        assert_eq!(line.text, "git commit ");
        line.edit(&Key::Home);
        line.edit(&Key::Ctrl('Y'));
        assert_eq!(line.text, "--amend nowgit commit ");
        // A kill after another edit starts afresh; forward kills add at the end.
        let mut line = typed("one two-three four");
        line.edit(&Key::Home);
        line.edit(&Key::KillWordRight);
        line.edit(&Key::KillWordRight);
        assert_eq!(line.text, "-three four");
        line.edit(&Key::End);
        line.edit(&Key::KillWordLeft);
        assert_eq!(line.text, "-three ");
        line.edit(&Key::Ctrl('Y'));
        assert_eq!(line.text, "-three four");
        line.edit(&Key::Ctrl('U'));
        line.edit(&Key::Ctrl('Y'));
        line.edit(&Key::Ctrl('Y'));
        assert_eq!(line.text, "-three four-three four");
        // What was killed outlives the entry.
        assert_eq!(line.take(), "-three four-three four");
        line.edit(&Key::Ctrl('Y'));
        assert_eq!(line.text, "-three four");
    }

    #[test]
    fn word_kills_keep_a_letters_marks_and_ctrl_t_stays_in_its_line() {
        let mut line = Line::at("cafe\u{301} bar".into(), 0);
        line.edit(&Key::KillWordRight);
        assert_eq!(line.text, " bar");
        let mut line = typed("x cafe\u{301}s");
        line.edit(&Key::KillWordLeft);
        assert_eq!(line.text, "x ");
        let mut line = Line::at("1\u{fe0f}\u{20e3} x".into(), 0);
        line.edit(&Key::KillWordRight);
        assert_eq!(line.text, " x");
        let mut line = typed("ab");
        line.edit(&Key::Newline);
        line.insert("cd");
        line.cursor = 2;
        line.edit(&Key::Ctrl('T'));
        assert_eq!((line.text.as_str(), line.cursor), ("ba\ncd", 2));
        line.cursor = 3;
        line.edit(&Key::Ctrl('T'));
        assert_eq!(line.text, "ba\ncd", "nothing to swap at a line's start");
    }

    #[test]
    fn words_end_at_spaces_of_any_width() {
        // A no-break space (2 bytes) and an ideographic space (3 bytes).
        for space in ["\u{a0}", "\u{3000}"] {
            let mut line = Line::default();
            line.edit(&Key::Paste(format!("ab{space}cd")));
            line.edit(&Key::WordLeft);
            assert_eq!(line.cursor, 2 + space.len());
            line.edit(&Key::End);
            line.edit(&Key::Ctrl('W'));
            assert_eq!(line.text, format!("ab{space}"));
        }
    }

    #[test]
    fn a_replacement_is_an_undo_step_and_ends_a_run_of_kills() {
        let mut line = typed("/bac");
        line.replace(0..4, "/backend ");
        line.insert("demo");
        line.edit(&Key::Ctrl('_'));
        assert_eq!(line.text, "/bac");
        let mut line = typed("one two");
        line.edit(&Key::Ctrl('W'));
        line.replace(4..4, "\n");
        line.edit(&Key::Ctrl('W'));
        line.edit(&Key::Ctrl('Y'));
        // Not "one \ntwo": the second kill starts afresh.
        assert_eq!(line.text, "one \n");
        // Long pastes: the oldest steps go past the bound, the last one is kept.
        let mut line = Line::default();
        for _ in 0..3 {
            line.edit(&Key::Paste("x".repeat(3 << 20)));
        }
        assert_eq!(line.undo.len(), 1);
        line.edit(&Key::Ctrl('_'));
        assert_eq!(line.text.len(), 6 << 20);
    }

    #[test]
    fn ctrl_underscore_undoes_an_edit_at_a_time_a_typed_run_as_one() {
        let mut line = typed("hello");
        line.edit(&Key::Left);
        line.edit(&Key::Left);
        line.edit(&Key::Paste("big ".into()));
        line.edit(&Key::Ctrl('T'));
        line.edit(&Key::Ctrl('K'));
        assert_eq!(line.text, "helbigl ");
        for want in ["helbigl o", "helbig lo", "hello", ""] {
            line.edit(&Key::Ctrl('_'));
            assert_eq!(line.text, want);
        }
        line.edit(&Key::Ctrl('_'));
        assert_eq!((line.text.as_str(), line.cursor), ("", 0));
        line.set("from the history".into());
        line.edit(&Key::Ctrl('_'));
        assert_eq!(line.text, "from the history");
    }

    #[test]
    fn the_column_kept_is_in_display_columns() {
        // Column 4 (after "abcd") is after 日本 above it, and in the middle of 本 above that:
        // the cursor stays before it.
        let mut line = Line::at("x日本y\n日本\nabcdef".into(), 20);
        assert!(line.vertical(true));
        assert_eq!(line.cursor, 15, "after 日本");
        assert!(line.vertical(true));
        assert_eq!(line.cursor, 4, "x日: three columns, 本 would pass four");
        assert!(!line.vertical(true));
        let mut line = Line::at("日本\nabcde".into(), 12);
        assert!(line.vertical(true));
        assert!(line.vertical(false));
        assert_eq!(line.cursor, 12, "back to the goal column");
    }
}
