//! Reading an answer off a terminal agent's screen: the rows that are new since the message
//! was typed (after its echo), minus the agent's chrome (`skip_lines`, borders, the spinner,
//! the done marker), with box-drawing borders and prompt markers trimmed and the common
//! indentation removed. With an answer pattern (`answer_regex`, the `✦ ` a TUI puts before
//! the model's text) only the rows it marks and the rows indented under them are the answer:
//! the tool rows, approval dialogs and notices around them are progress. Also the lines shown
//! as progress while the agent works.

use crate::parse::Pattern;

/// Markers TUIs put before a prompt or an answer (`> hi`, `✦ The answer`), taken off a row's
/// start when a space follows (after a variation selector, as qwen 0.24's `◆︎`).
const MARKERS: [char; 7] = ['>', '❯', '›', '✦', '◆', '⏺', '$'];

/// Whether `c` takes no column of its own: a variation selector after a marker (`◆︎`).
fn zero_width(c: char) -> bool {
    matches!(c, '\u{fe0e}' | '\u{fe0f}')
}

/// What is not part of an answer.
pub struct Chrome<'a> {
    pub skip: &'a [Pattern],
    /// The spinner and the done marker: shown while working and at the end, never answers.
    pub busy: Option<&'a Pattern>,
    pub done: Option<&'a Pattern>,
    /// Where the model's text starts; without it, every row that is not chrome is answer.
    pub answer: Option<&'a Pattern>,
}

impl Chrome<'_> {
    fn is_chrome(&self, row: &str) -> bool {
        self.skip.iter().any(|re| re.is_match(row))
            || self.busy.is_some_and(|re| re.is_match(row))
            || self.done.is_some_and(|re| re.is_match(row))
    }
}

/// Where the rows new since the message start in `after`: past the rows it shares with
/// `before` (the screen before the message was typed), and past the message's echo when it
/// is there.
pub fn region_start(before: &[String], after: &[String], message: &str) -> usize {
    let shared = shared(before, after);
    match needle(message) {
        Some(needle) => after[shared..]
            .iter()
            .position(|row| row.contains(needle))
            .map_or(shared, |at| shared + at + 1),
        None => shared,
    }
}

/// How many rows at the top `after` still shares with `before`.
pub fn shared(before: &[String], after: &[String]) -> usize {
    before.iter().zip(after).take_while(|(a, b)| a == b).count()
}

/// What identifies the message's echo on the screen: the end of its last line (a long line
/// wraps; its end is on one row unless the wrap falls inside the last 24 characters).
pub fn needle(message: &str) -> Option<&str> {
    let last = message
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())?;
    let start = last.char_indices().rev().nth(23).map_or(0, |(i, _)| i);
    Some(last[start..].trim())
}

/// Box-drawing characters and block elements, which TUIs draw their boxes and rules with
/// (a box with a coloured background is half blocks, `▀▀▀` above and `▄▄▄` below).
pub(super) fn is_box(c: char) -> bool {
    ('\u{2500}'..='\u{259f}').contains(&c)
}

/// A row drawn only with ASCII box characters (`+----+`, `|`, `====`).
fn is_ascii_border(row: &str) -> bool {
    let t = row.trim();
    t.len() >= 3 && t.chars().all(|c| matches!(c, '+' | '-' | '=' | '|' | ' '))
}

/// A row without its borders and prompt marker; `None` for a row that is only a border.
pub fn trim_row(row: &str) -> Option<String> {
    if is_ascii_border(row) {
        return None;
    }
    let mut inner = row.trim_end();
    // `|` is a border only at both ends of a row (`C++` and `a | b` keep theirs).
    let t = inner.trim_start();
    if t.len() >= 2 && t.starts_with('|') && t.ends_with('|') {
        inner = &t[1..t.len() - 1];
    }
    let inner = inner.trim_end().trim_end_matches(is_box).trim_end();
    // A box may be indented (qwen draws its tool boxes two columns in).
    let lead = inner.len() - inner.trim_start().len();
    let inner = format!(
        "{}{}",
        &inner[..lead],
        inner[lead..].trim_start_matches(is_box)
    );
    let inner = inner.as_str();
    if inner.trim().is_empty() && row.chars().any(is_box) {
        return None;
    }
    let start = inner.len() - inner.trim_start().len();
    let mut chars = inner[start..].chars();
    let first = chars.next();
    let mut len = first.map_or(0, char::len_utf8);
    let mut next = chars.next();
    if let Some(selector) = next.filter(|c| zero_width(*c)) {
        len += selector.len_utf8();
        next = chars.next();
    }
    let text = match (first, next) {
        (Some(c), Some(' ')) if MARKERS.contains(&c) => {
            // The marker's column becomes indentation, so an answer's later lines, indented
            // under the first, keep their place relative to it.
            format!("{}{}", " ".repeat(start + 2), &inner[start + len + 1..])
        }
        _ => inner.to_string(),
    };
    Some(text.trim_end().to_string())
}

/// The answer in `rows`: chrome and borders left out, runs of blank rows made one, the
/// common indentation removed, blank rows at either end dropped.
pub fn answer(rows: &[String], chrome: &Chrome) -> String {
    let lines = match chrome.answer {
        Some(marker) => clean(&model_rows(rows, marker), chrome),
        None => clean(rows, chrome),
    };
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = Vec::new();
    for line in &lines {
        let text = if line.trim().is_empty() {
            ""
        } else {
            &line[indent..]
        };
        if text.is_empty() && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(text);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

/// The rows of the model's text: each row `marker` matches, and the rows after it that are
/// blank or indented at least to where its text starts (a long or multi-line answer), up to
/// the first row that is not (a tool's box, a notice, the input box).
fn model_rows(rows: &[String], marker: &Pattern) -> Vec<String> {
    let mut out = Vec::new();
    let mut text_col: Option<usize> = None;
    for row in rows {
        if let Some(m) = marker.find(row) {
            // Where the text after the marker starts, in columns.
            let col = row[..m.end()].chars().filter(|c| !zero_width(*c)).count();
            text_col = Some(col);
            out.push(row.clone());
            continue;
        }
        let Some(col) = text_col else { continue };
        let indent = row.chars().take_while(|c| *c == ' ').count();
        if row.trim().is_empty() || indent >= col {
            out.push(row.clone());
        } else {
            text_col = None;
            // A blank row between the text and what ended it is not the answer's.
            while out.last().is_some_and(|r: &String| r.trim().is_empty()) {
                out.pop();
            }
            out.push(String::new());
        }
    }
    out
}

/// The rows that are not chrome, trimmed; blank rows kept.
fn clean(rows: &[String], chrome: &Chrome) -> Vec<String> {
    rows.iter()
        .filter(|row| !chrome.is_chrome(row))
        .filter_map(|row| trim_row(row))
        .collect()
}

/// The lines of the answer shown as progress while the agent works: each once, when a line
/// after it exists (the last one may still be being written), and the rest at the end.
#[derive(Default)]
pub struct Progress {
    shown: Vec<String>,
}

impl Progress {
    /// The lines of `rows` to show now; `done`: the answer is complete, show all.
    pub fn next(&mut self, rows: &[String], chrome: &Chrome, done: bool) -> Vec<String> {
        let lines: Vec<String> = clean(rows, chrome)
            .into_iter()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        let stable = if done {
            lines.len()
        } else {
            lines.len().saturating_sub(1)
        };
        // A redraw that changed a line already shown shows it again, changed.
        let same = self
            .shown
            .iter()
            .zip(&lines[..stable])
            .take_while(|(a, b)| a == b)
            .count();
        let new = lines[same..stable.max(same)].to_vec();
        self.shown.truncate(same);
        self.shown.extend(new.iter().cloned());
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn the_answer_is_what_follows_the_echo_without_chrome() {
        let before = rows("Fake TUI v1\n\n╭──────╮\n│ >    │\n╰──────╯\n status: ready");
        let after = rows(
            "Fake TUI v1\n\n> what is 6*7?\n✦ The answer is 42.\n    indented\n\n\n  tail\n✓ done\n╭──────╮\n│ >    │\n╰──────╯\n status: ready",
        );
        let start = region_start(&before, &after, "what is 6*7?");
        assert_eq!(start, 3);
        let skip = [
            Pattern::compile("status:", true).unwrap(),
            Pattern::compile(r"^│ >\s", true).unwrap(),
        ];
        let done = Pattern::compile("^✓ done", true).unwrap();
        let chrome = Chrome {
            skip: &skip,
            busy: None,
            done: Some(&done),
            answer: None,
        };
        assert_eq!(
            answer(&after[start..], &chrome),
            "The answer is 42.\n  indented\n\ntail"
        );
    }

    #[test]
    fn with_an_answer_marker_only_the_model_text_is_the_answer() {
        let after = rows(
            "╭────────────────────────╮\n│ ✓  Shell touch made.txt │\n╰────────────────────────╯\n\n  ✦ DONE touched,\n    and a second line.\n\n    - a list\n\n  ● Update successful! The new version will be used on your next run.\nℹ Request cancelled.\n  ✦ Two.\n",
        );
        let marker = Pattern::compile(r"^\s*✦ ", true).unwrap();
        let chrome = Chrome {
            skip: &[],
            busy: None,
            done: None,
            answer: Some(&marker),
        };
        assert_eq!(
            answer(&after, &chrome),
            "DONE touched,\nand a second line.\n\n- a list\n\nTwo."
        );
        let tool_only = rows("│ -  Shell touch made.txt │\n\nℹ Request cancelled.");
        assert_eq!(answer(&tool_only, &chrome), "");
        // qwen 0.24's marker has a variation selector, which takes no column.
        let after = rows("  ◆\u{fe0e} DONE touched,\n    and a second line.\n  ✓ Shell ls\n");
        let marker = Pattern::compile("^\\s*◆\\x{FE0E}? ", true).unwrap();
        let chrome = Chrome {
            answer: Some(&marker),
            ..chrome
        };
        assert_eq!(answer(&after, &chrome), "DONE touched,\nand a second line.");
    }

    #[test]
    fn rows_lose_borders_and_markers_but_tables_keep_theirs() {
        assert_eq!(trim_row("│ ✦ hello │").as_deref(), Some("   hello"));
        assert_eq!(
            trim_row("  │ ✓  Shell ls │").as_deref(),
            Some("   ✓  Shell ls")
        );
        assert_eq!(trim_row("╰────╯"), None);
        assert_eq!(trim_row("▀▀▀▀▀▀"), None);
        assert_eq!(trim_row("| a | b |").as_deref(), Some(" a | b"));
        assert_eq!(trim_row("+------+"), None);
        assert_eq!(trim_row("use C++").as_deref(), Some("use C++"));
        assert_eq!(trim_row("x | y").as_deref(), Some("x | y"));
        assert_eq!(trim_row("").as_deref(), Some(""));
    }

    #[test]
    fn the_needle_is_the_end_of_the_last_line() {
        assert_eq!(needle("one\ntwo  \n\n"), Some("two"));
        let long = "a".repeat(30) + "0123456789abcdefghijklmn";
        assert_eq!(needle(&long), Some("0123456789abcdefghijklmn"));
        assert_eq!(needle("  \n"), None);
    }

    #[test]
    fn progress_shows_each_settled_line_once() {
        let chrome = Chrome {
            skip: &[],
            busy: None,
            done: None,
            answer: None,
        };
        let mut p = Progress::default();
        assert!(p.next(&rows("one"), &chrome, false).is_empty());
        assert_eq!(p.next(&rows("one\ntw"), &chrome, false), ["one"]);
        assert_eq!(p.next(&rows("one\ntwo\nthree"), &chrome, false), ["two"]);
        assert_eq!(p.next(&rows("one\ntwo\nthree"), &chrome, true), ["three"]);
        assert!(p.next(&rows("one\ntwo\nthree"), &chrome, true).is_empty());
    }
}
