//! How a tool call the model wants to run is shown for approval. The text is untrusted: a
//! model can pad a command with 400 spaces or 60 newlines so that the part that matters falls
//! off the screen, or hide it behind escape sequences. So the whole of it is shown, wrapped
//! to the terminal's width and never cut: control characters as escapes (`\n`, `\t`, `\x1b`),
//! invisible and direction-changing characters as `\u{..}`, and runs of blanks as a count
//! (`␠×400`). Longer than a screen, it is shown with its line count, and `v` shows it all.
//! Both the plain and the terminfo display ask through [`prompt`]; the Telegram bot shows
//! its questions through [`shown_lines`] and [`fold`] too.

use agent_loop::event::ApprovalRequest;

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

/// The question without its answers: the tool, how long the call is and its lines (folded
/// unless `full`, `how` saying how to see the rest), each line ending in a newline; and
/// whether it is longer than a screen. The MCP server's elicitation asks with it too.
pub fn question(request: &ApprovalRequest, width: usize, full: bool, how: &str) -> (String, bool) {
    let tool = visible(&request.call.name).concat();
    let lines = shown_lines(&request.summary, width.saturating_sub(4).max(20));
    let mut out = format!(
        "Allow {tool}? It asks to run ({}):\n",
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

/// The pieces as lines of at most `width` characters; a line ends where a `"\n"` piece is.
fn wrap(pieces: &[String], width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut used = 0;
    for piece in pieces {
        if piece == "\n" {
            lines.push(String::new());
            used = 0;
            continue;
        }
        let len = piece.chars().count();
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
}
