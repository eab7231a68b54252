//! Text wrapped at spaces to a width, for what agent-loop lays out in columns of its own (the
//! REPL's `/help`) and for its own lines on a terminal (token counts, the context, notices):
//! left to the terminal, a long line is cut mid-word (on a phone's 40 columns, nearly every
//! such line) and a column's continuation starts under the command names. An answer, a tool
//! call and its output are never wrapped so: their lines stay whole, so that a command copied
//! from the scrollback is one line (a terminal joins the rows it wrapped itself).

use std::borrow::Cow;

use unicode_width::UnicodeWidthStr;

/// The lines of `text` (one paragraph) at most `width` columns wide, broken at spaces; a
/// word wider than `width` has a line of its own.
pub fn at_spaces(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !line.is_empty() && line.width() + 1 + word.width() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Rows of a name and its description as lines `width` columns wide at most: the
/// descriptions in one column, wrapped in it, or under their names, indented, where the
/// column would be too narrow. A full last column would leave the cursor past the edge,
/// where some terminals wrap, so the lines stop one short of `width`.
pub fn columns(rows: &[(String, &str)], width: usize) -> Vec<String> {
    let width = width.saturating_sub(1).max(2);
    let name = rows.iter().map(|(n, _)| n.width()).max().unwrap_or(0);
    let column = 2 + name + 1;
    let mut lines = Vec::new();
    for (first, help) in rows {
        if width >= column + 24 {
            for (i, part) in at_spaces(help, width - column).into_iter().enumerate() {
                let shown = if i == 0 { first.as_str() } else { "" };
                let pad = name - shown.width();
                lines.push(format!("  {shown}{} {part}", " ".repeat(pad)));
            }
        } else {
            lines.push(format!("  {first}"));
            let indented = at_spaces(help, width.saturating_sub(6).max(1));
            lines.extend(indented.into_iter().map(|part| format!("      {part}")));
        }
    }
    lines
}

/// `text` with each line wider than `width` broken at spaces, its continuations indented two
/// columns past the line's own indentation (at most half the width). A line that fits is
/// left as it is, runs of spaces included (aligned columns), and so is a word wider than the
/// room: the terminal cuts it, as it would have. A tab becomes the spaces to the next multiple
/// of 8, as a terminal shows it, so that widths are counted as they appear.
pub fn break_long(text: &str, width: usize) -> Cow<'_, str> {
    let text = expand_tabs(text);
    if text.split('\n').all(|line| line.width() <= width) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let hang = (indent + 2).min(width / 2);
        let (row, mut rest) = first_row(line, width);
        out.push_str(row);
        while let Some(more) = rest {
            let (row, next) = first_row(more, width - hang);
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', hang));
            out.push_str(row);
            rest = next;
        }
    }
    Cow::Owned(out)
}

/// `text` with every tab replaced by the spaces to its line's next multiple of 8 columns.
fn expand_tabs(text: &str) -> Cow<'_, str> {
    if !text.contains('\t') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 32);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let line_start = out.len();
        for (j, piece) in line.split('\t').enumerate() {
            if j > 0 {
                let cols = out[line_start..].width();
                out.extend(std::iter::repeat_n(' ', 8 - cols % 8));
            }
            out.push_str(piece);
        }
    }
    Cow::Owned(out)
}

/// The first row of `text` at most `room` columns wide, broken at the last space that fits
/// (after a word wider than `room`, at the first space), and the rest, if any, without the
/// spaces at the break. Leading spaces (an indentation) are not a place to break. Widths are
/// those of the words between spaces, as `str::width` counts them (an emoji's sequence whole).
fn first_row(text: &str, room: usize) -> (&str, Option<&str>) {
    if text.width() <= room {
        return (text, None);
    }
    let start = text.len() - text.trim_start_matches(' ').len();
    let (mut cols, mut word, mut cut) = (start, start, None);
    for (i, c) in text.char_indices().skip(start) {
        if c != ' ' {
            continue;
        }
        // The columns before this space: the words so far and the spaces between them.
        cols += text[word..i].width();
        word = i + 1;
        if cols > room && cut.is_some() {
            break;
        }
        cut = Some(i);
        if cols > room {
            break;
        }
        cols += 1;
    }
    let Some(i) = cut else {
        return (text, None);
    };
    let rest = text[i..].trim_start_matches(' ');
    (
        text[..i].trim_end_matches(' '),
        (!rest.is_empty()).then_some(rest),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_break_at_spaces_and_a_long_word_stands_alone() {
        assert_eq!(
            at_spaces("show the model, or set it", 12),
            ["show the", "model, or", "set it"]
        );
        assert_eq!(
            at_spaces("a https://example.com/long b", 8),
            ["a", "https://example.com/long", "b"]
        );
        assert_eq!(at_spaces("", 8), [""]);
        assert_eq!(at_spaces("été à l'eau", 6), ["été à", "l'eau"]);
    }

    #[test]
    fn long_lines_break_at_spaces_with_a_hanging_indent_and_the_rest_stay() {
        assert_eq!(
            break_long("[context 3 messages, 954 tokens, 1% of 80k]", 39),
            "[context 3 messages, 954 tokens, 1% of\n  80k]"
        );
        // Lines that fit keep their runs of spaces; an indented line hangs under itself.
        let table = "  a.txt  (6 bytes)\n    one two three four five six";
        assert_eq!(
            break_long(table, 20),
            "  a.txt  (6 bytes)\n    one two three\n      four five six"
        );
        assert!(matches!(break_long(table, 40), Cow::Borrowed(_)));
        // A word wider than the room stands on its row, for the terminal to cut.
        assert_eq!(
            break_long("see /a/very/long/path/to/a/file now", 10),
            "see\n  /a/very/long/path/to/a/file\n  now"
        );
        // Wide characters count two columns; spaces at a break are dropped.
        assert_eq!(
            break_long("日本語 の  テキスト", 10),
            "日本語 の\n  テキスト"
        );
        // No room at all still ends, a word a row.
        assert_eq!(break_long("a b c", 0), "a\nb\nc");
        // Tabs count as a terminal shows them; an emoji's sequence counts whole (❤ + U+FE0F
        // is two columns, as each of its characters alone is not).
        assert_eq!(break_long("a\tb c\td e", 12), "a       b c\n  d e");
        assert_eq!(
            break_long("\t\t\t\tword and more", 40),
            format!("{}word and\n{}more", " ".repeat(32), " ".repeat(20))
        );
        assert_eq!(
            break_long("\u{2764}\u{fe0f}\u{2764}\u{fe0f}\u{2764}\u{fe0f} ab cd", 9),
            "\u{2764}\u{fe0f}\u{2764}\u{fe0f}\u{2764}\u{fe0f} ab\n  cd"
        );
        // A deep indentation hangs by half the width at most.
        assert_eq!(break_long("      abc def", 4), "      abc\n  def");
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 2000,
            failure_persistence: None,
            ..Default::default()
        })]
        /// Any text at any width: the words come back in order, and every row fits but one
        /// that holds a single word (with its indentation) or only spaces.
        #[test]
        fn rows_fit_and_keep_every_word(
            text in "[ a日\t\n]{0,60}",
            width in 0usize..30,
        ) {
            let shown = break_long(&text, width);
            let words = |t: &str| t.split([' ', '\n', '\t']).filter(|w| !w.is_empty())
                .map(str::to_owned).collect::<Vec<_>>();
            proptest::prop_assert_eq!(words(&shown), words(&text));
            for row in shown.split('\n') {
                proptest::prop_assert!(
                    row.width() <= width || words(row).len() <= 1,
                    "row {:?} of {:?} at {}", row, shown, width
                );
            }
        }
    }
}
