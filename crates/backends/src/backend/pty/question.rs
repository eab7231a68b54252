//! An approval question's detail read off the screen whole. A command longer than the agent's
//! box (or its screen) is wrapped over several rows, and the person approving must see all of
//! what runs: the rows `approval_regex`'s `detail` group covers are joined as the agent wrapped
//! them, with their box borders and padding left out. A detail the screen does not show whole
//! (rows the agent clipped, `approval_clips`, a row it cut short with `…`, a `cut` group) is
//! marked cut, never shown as if whole; a question whose start is off the screen
//! (`approval_end_regex`) cannot be read at all.

use std::ops::Range;

use super::extract::is_box;
use crate::config::PtyDef;

/// Marks the place of text the agent's screen does not show.
pub const CUT: char = '…';

/// What an approval question asks about, as read off the screen.
#[derive(Debug, PartialEq)]
pub struct Detail {
    pub text: String,
    /// Part of it is not on the screen (`CUT` marks where rows were clipped).
    pub cut: bool,
}

/// An approval question on the screen.
pub struct Question {
    /// Where `approval_regex` matched.
    pub range: Range<usize>,
    /// Its `tool` group, trimmed.
    pub tool: Option<String>,
    /// Its `whole` group if that matched, else its `detail` group; read whole.
    pub detail: Option<Detail>,
    /// Only `approval_end_regex` matched: the question is taller than the screen, and nothing
    /// of what it asks can be read.
    pub start_cut: bool,
}

/// The approval question `def`'s `approval_regex` finds on `screen`, else the end of one
/// its `approval_end_regex` finds.
pub fn question(def: &PtyDef, screen: &str) -> Option<Question> {
    let Some(caps) = def.approval.as_ref()?.captures(screen) else {
        let end = def.approval_end.as_ref()?.find(screen)?;
        return Some(Question {
            range: end.range(),
            tool: None,
            detail: None,
            start_cut: true,
        });
    };
    Some(Question {
        range: caps.get(0).expect("a match has group 0").range(),
        tool: caps.name("tool").map(|m| m.as_str().trim().to_string()),
        // A pattern may take the detail from a row that cuts it short (a title), and the
        // whole of it from the rows where the agent shows it all, when they are there.
        // A `cut` group marks what says part of it is hidden (`... first 34 lines hidden ...`).
        detail: caps
            .name("whole")
            .or_else(|| caps.name("detail"))
            .map(|m| detail(screen, m.range(), def.cols.into(), def.approval_clips))
            .map(|d| Detail {
                cut: d.cut || caps.name("cut").is_some(),
                ..d
            }),
        start_cut: false,
    })
}

/// One row of the detail: its text, and in columns where the text ends and where the row's
/// text area ends (the agent wraps there).
struct Row {
    text: String,
    end: usize,
    edge: usize,
}

/// The detail `span` (a byte range of `screen`, its rows joined with `\n`) covers, on a screen
/// `cols` wide; `clips`: a row that reaches its box's edge may have lost characters past it.
pub fn detail(screen: &str, span: Range<usize>, cols: usize, clips: bool) -> Detail {
    let first_row = screen[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let mut rows = Vec::new();
    let mut at = first_row;
    while at <= span.end && at < screen.len().max(1) {
        let row_end = screen[at..].find('\n').map_or(screen.len(), |i| at + i);
        let (from, to) = (span.start.max(at), span.end.min(row_end));
        if from < to || (from == to && at == first_row) {
            rows.push(read_row(&screen[at..row_end], from - at..to - at, cols));
        }
        at = row_end + 1;
    }
    join(&rows, clips)
}

/// The text of `row` within `part` (byte offsets in the row), without borders and padding.
fn read_row(row: &str, part: Range<usize>, cols: usize) -> Row {
    let col = |byte: usize| row[..byte].chars().count();
    let seg = &row[part.clone()];
    let inner_start = part.start + (seg.len() - seg.trim_start_matches(is_frame).len());
    let inner_end = part.start + seg.trim_end_matches(is_frame).len();
    let inner_end = inner_end.max(inner_start);
    let (start, end) = (col(inner_start), col(inner_end));
    let chars: Vec<char> = row.chars().collect();
    // The box's padding is the same on both sides: the text area ends as far before the
    // right border as it starts after the left one. Without a box, the screen's edge.
    let left = chars[..start].iter().rposition(|c| is_box(*c));
    let right = chars[end..]
        .iter()
        .position(|c| is_box(*c))
        .map(|i| end + i);
    let edge = match (left, right) {
        (Some(l), Some(r)) => r.saturating_sub(start - l - 1),
        (None, Some(r)) => r.saturating_sub(1),
        _ => cols,
    };
    Row {
        text: row[inner_start..inner_end].to_string(),
        end,
        edge,
    }
}

/// Borders and padding around a row's text.
fn is_frame(c: char) -> bool {
    c.is_whitespace() || is_box(c)
}

/// The rows joined as the agent wrapped them. A row that reaches the edge of its text area
/// went on in the next row without a break (a word longer than the row, or a terminal's
/// wrap), unless the agent clips there. A row that ends short of it was broken at a space, if
/// the next row's first word would not have fit after it (the agent wraps words greedily);
/// if it would have, the agent broke the line there itself, and so does the detail.
fn join(rows: &[Row], clips: bool) -> Detail {
    let mut text = String::new();
    let mut cut = false;
    for (i, row) in rows.iter().enumerate() {
        text.push_str(&row.text);
        let Some(next) = rows.get(i + 1) else { break };
        if row.end >= row.edge && !row.text.is_empty() {
            if clips {
                text.push(CUT);
                cut = true;
            }
            continue;
        }
        let word = next
            .text
            .split_whitespace()
            .next()
            .map_or(0, |w| w.chars().count());
        let fits = row.end + 1 + word <= row.edge;
        text.push(if fits || row.text.is_empty() {
            '\n'
        } else {
            ' '
        });
    }
    let text = text.trim_matches(is_frame).to_string();
    // TUIs end a row they cut short with `…` (a title row that truncates the command).
    cut |= text.ends_with(CUT);
    Detail { text, cut }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The detail of `screen` from `from` (a text the span starts with) to the end, on a
    /// screen 40 columns wide.
    fn read(screen: &str, from: &str, clips: bool) -> Detail {
        let start = screen.find(from).unwrap();
        detail(screen, start..screen.len(), 40, clips)
    }

    fn whole(text: &str) -> Detail {
        Detail {
            text: text.into(),
            cut: false,
        }
    }

    #[test]
    fn rows_in_a_box_are_joined_at_the_spaces_the_agent_wrapped_at() {
        let screen = "\
╭──────────────────────╮
│ touch a.txt && echo  │
│ one two three        │
╰──────────────────────╯";
        assert_eq!(
            read(screen, "│ touch", false),
            whole("touch a.txt && echo one two three")
        );
        // Nested boxes, indented: the inner box's borders and padding.
        let nested = "  │ │ rm -rf build &&  │ │\n  │ │ make all         │ │";
        assert_eq!(
            read(nested, "│ │ rm", false),
            whole("rm -rf build && make all")
        );
    }

    #[test]
    fn a_full_row_goes_on_without_a_space_and_a_short_one_that_had_room_is_a_line_break() {
        // A word longer than the box is broken at its edge.
        let screen = "\
│ mkdir -p a-very-long-fo │
│ lder-name/b             │
│ echo done               │";
        assert_eq!(
            read(screen, "│ mkdir", false),
            whole("mkdir -p a-very-long-folder-name/b\necho done")
        );
        // Without a box, the screen's edge (40 columns).
        let bare = format!("{}\nefgh then", "abcd".repeat(10));
        assert_eq!(
            read(&bare, "abcd", false),
            whole(&format!("{}efgh then", "abcd".repeat(10)))
        );
    }

    #[test]
    fn a_clipped_row_is_marked_cut() {
        // qwen 0.15.10 wraps wider than its box shows: `mike` lost its `ke`.
        let screen = "  │   printf alpha lima mi   │\n  │   november oscar         │";
        assert_eq!(
            read(screen, "│   printf", true),
            Detail {
                text: "printf alpha lima mi…november oscar".into(),
                cut: true
            }
        );
    }

    #[test]
    fn a_detail_the_agent_cut_short_is_marked_cut() {
        let screen = "│ ?  Shell touch made.txt && printf alpha brav… ← │";
        let start = screen.find("touch").unwrap();
        let end = screen.find(" ←").unwrap();
        assert_eq!(
            detail(screen, start..end, 80, false),
            Detail {
                text: "touch made.txt && printf alpha brav…".into(),
                cut: true
            }
        );
        // One row, as the span gives it.
        assert_eq!(
            detail(screen, start..start + 14, 80, false),
            whole("touch made.txt")
        );
    }
}
