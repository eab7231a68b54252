//! A CLI backend's answer shown as the CLI prints it (`json_text_delta`), not when it exits:
//! a long answer of `claude -p` otherwise shows nothing for as long as it takes. Each piece
//! is passed on as it comes, but for a tool call's markup: from where the call's opening (the
//! literal start of `tool_call_format`, `<tool_call>`) appears, nothing more is shown, and a
//! tail that may be the start of it waits for the next piece. What the parsed answer holds
//! past what was shown (text after a call, a note that output was cut) follows at the end.

use crate::context::PromptStyle;

pub struct Streamed {
    /// The text a tool call starts with; empty when the CLI runs its own tools.
    opening: String,
    /// Everything shown so far.
    shown: String,
    /// A tail that may be the start of `opening`, not shown yet.
    held: String,
    /// The opening was seen: the rest of the run is not shown piece by piece.
    stopped: bool,
}

impl Streamed {
    /// For a backend of this style; `None` when a call's markup could not be told from the
    /// text (a `tool_call_format` that starts with its placeholder), so nothing is streamed.
    pub fn new(style: &PromptStyle) -> Option<Streamed> {
        let opening = if style.own_tools {
            String::new()
        } else {
            let format = &style.tool_call_format;
            let at = ["{json}", "{name}"]
                .iter()
                .filter_map(|p| format.find(p))
                .min()
                .unwrap_or(format.len());
            let opening = format[..at].trim();
            if opening.is_empty() {
                return None;
            }
            opening.to_string()
        };
        Some(Streamed {
            opening,
            shown: String::new(),
            held: String::new(),
            stopped: false,
        })
    }

    /// What of `piece` (with what was held) can be shown now, if anything.
    pub fn push(&mut self, piece: &str) -> Option<String> {
        if self.stopped {
            return None;
        }
        self.held.push_str(piece);
        let show = if self.opening.is_empty() {
            std::mem::take(&mut self.held)
        } else if let Some(at) = self.held.find(&self.opening) {
            self.stopped = true;
            let show = self.held[..at].to_string();
            self.held.clear();
            show
        } else {
            let keep = opening_started(&self.held, &self.opening);
            self.held.drain(..self.held.len() - keep).collect()
        };
        if show.is_empty() {
            return None;
        }
        self.shown.push_str(&show);
        Some(show)
    }

    /// What the parsed `answer` holds past what was shown, when it goes on from it; `None`
    /// when nothing was shown (the whole answer is then shown as without streaming) or
    /// nothing is left. Blank space at the join is not repeated.
    pub fn rest<'a>(&self, answer: &'a str) -> Option<&'a str> {
        let shown = self.shown.trim();
        if shown.is_empty() {
            return None;
        }
        let rest = answer.trim_start().strip_prefix(shown)?;
        let rest = match self.shown.ends_with(char::is_whitespace) {
            true => rest.trim_start(),
            false => rest,
        };
        (!rest.trim().is_empty()).then_some(rest)
    }
}

/// The length of the longest end of `text` that is a start of `opening` but not all of it.
fn opening_started(text: &str, opening: &str) -> usize {
    (1..opening.len().min(text.len() + 1))
        .rev()
        .find(|&n| opening.is_char_boundary(n) && text.ends_with(&opening[..n]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style(format: &str, own_tools: bool) -> PromptStyle {
        PromptStyle {
            tool_call_format: format.into(),
            format: crate::context::ContextFormat::default(),
            own_tools,
        }
    }

    fn shown(streamed: &mut Streamed, pieces: &[&str]) -> Vec<String> {
        pieces.iter().filter_map(|p| streamed.push(p)).collect()
    }

    #[test]
    fn pieces_pass_until_a_calls_opening_and_a_maybe_opening_waits() {
        let mut s = Streamed::new(&style("<tool_call>{json}</tool_call>", false)).unwrap();
        let out = shown(
            &mut s,
            &[
                "I will ",
                "look <to",
                "day>. ",
                "Now.<tool_",
                "call>{\"name\"",
                "}</tool_call>",
            ],
        );
        assert_eq!(out, ["I will ", "look ", "<today>. ", "Now."]);
        assert_eq!(s.shown, "I will look <today>. Now.");
        // After the call, nothing more comes piece by piece; the parsed text's rest does.
        assert_eq!(s.push("after"), None);
        assert_eq!(
            s.rest("I will look <today>. Now.\n\nafter"),
            Some("\n\nafter")
        );
        assert_eq!(s.rest("I will look <today>. Now."), None);
        // An answer that does not go on from what was shown adds nothing.
        assert_eq!(s.rest("something else"), None);
    }

    #[test]
    fn own_tools_stream_everything_and_a_bare_format_streams_nothing() {
        let mut s = Streamed::new(&style("<tool_call>{json}</tool_call>", true)).unwrap();
        assert_eq!(shown(&mut s, &["<tool_", "call>"]), ["<tool_", "call>"]);
        assert!(Streamed::new(&style("{json}", false)).is_none());
        let mut s = Streamed::new(&style("CALL {name} {args}", false)).unwrap();
        assert_eq!(shown(&mut s, &["a CA", "LL ls"]), ["a "]);
    }

    #[test]
    fn blank_space_at_the_join_is_not_repeated_and_wide_characters_split_nowhere() {
        let mut s = Streamed::new(&style("«call»{json}", false)).unwrap();
        assert_eq!(shown(&mut s, &["été ", "«ca"]), ["été "]);
        assert_eq!(s.push("ll»{}"), None);
        assert_eq!(s.rest("été\n[output cut]"), Some("[output cut]"));
    }
}
