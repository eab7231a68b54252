//! Text wrapped at spaces to a width, for what agent-loop lays out in columns of its own (the
//! REPL's `/help`): left to the terminal, a long line is cut mid-word and its continuation
//! starts under the command names, not under its column. An answer is never wrapped so: its
//! lines stay whole, so that a command copied from the scrollback is one line.

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
}
