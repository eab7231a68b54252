//! A CLI backend's answer shown as the CLI prints it (`json_text_delta`), not when it exits:
//! a long answer of `claude -p` otherwise shows nothing for as long as it takes. Each piece
//! is passed on as it comes, but for a tool call's markup: from where the call's opening (the
//! literal start of `tool_call_format`, `<tool_call>`) appears, nothing more is shown, and a
//! tail that may be the start of it waits for the next piece. What the parsed answer holds
//! past what was shown (text after a call, a note that output was cut) follows at the end.
//! A stream that never says its answer whole (Gemini CLI's) has no `json_text`: its pieces
//! are then kept, all of them, and make the answer.
//!
//! How the output stays bounded: a stream line says far more than the piece it carries
//! (Claude Code's stream-json: a line of about 250 bytes per piece, against the mock's
//! one-word pieces some 50 bytes of stdout per byte of answer), so counting those lines
//! against `max_output_bytes` would fail an honest long answer, and raising the cap for
//! every stream would cost a phone that much memory for nothing. A line taken as a piece is
//! therefore shown and not kept (the answer's final line, `json_text`, says it all again):
//! what is kept is the other lines (the answer's last message and final line, each about
//! the answer's size, and tool results: see kept.rs) and the text taken from pieces, each
//! bounded by `max_output_bytes`. Past that much text, pieces are no longer taken: their
//! lines are kept as any other, so a flood of them fills the cap, in flat memory, and the
//! answer (its line is kept past the cap) comes with a note that output was cut.

use std::borrow::Cow;

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
    /// Bytes of pieces still taken (`max_output_bytes` at first).
    room: usize,
    /// Every piece taken, when they are the answer (no `json_text`: Gemini CLI's stream
    /// never says its answer whole); within the room, as the pieces are.
    pieces: Option<String>,
    /// A line dropped past the cap may have held some of the answer (`json_text`).
    lost_text: bool,
}

impl Streamed {
    /// For a backend of this style, taking up to `room` bytes of pieces; `None` when a
    /// call's markup could not be told from the text (a `tool_call_format` that starts with
    /// its placeholder), so nothing is streamed.
    pub fn new(style: &PromptStyle, room: usize) -> Option<Streamed> {
        let opening = match style.own_tools {
            true => String::new(),
            false => style.call_opening()?.to_string(),
        };
        Some(Streamed {
            opening,
            shown: String::new(),
            held: String::new(),
            stopped: false,
            room,
            pieces: None,
            lost_text: false,
        })
    }

    /// Keeps every piece taken, the markup of a call too: the answer is made of them.
    pub fn keeping_pieces(mut self) -> Streamed {
        self.pieces = Some(String::new());
        self
    }

    /// The pieces taken, when they are kept.
    pub fn take_pieces(&mut self) -> Option<String> {
        self.pieces.take()
    }

    /// Whether any piece may still be taken.
    pub fn has_room(&self) -> bool {
        self.room > 0
    }

    /// A line dropped past the cap may have held some of the answer.
    pub fn text_dropped(&mut self) {
        self.lost_text = true;
    }

    /// Whether a line dropped past the cap may have held some of the answer: if not, an
    /// answer read from the lines kept is whole.
    pub fn lost_text(&self) -> bool {
        self.lost_text
    }

    /// Whether `piece` is taken (given to `push`, its line not kept): while the pieces'
    /// text stays within the room. Once one is not, none after it is either, so that the
    /// pieces left in the kept lines follow those taken (kept as the answer, they stay in
    /// order).
    pub fn room_for(&mut self, piece: &str) -> bool {
        if piece.len() > self.room {
            self.room = 0;
        }
        piece.len() <= self.room
    }

    /// What of `piece` (with what was held) can be shown now, if anything.
    pub fn push(&mut self, piece: &str) -> Option<String> {
        self.room = self.room.saturating_sub(piece.len());
        if let Some(pieces) = &mut self.pieces {
            pieces.push_str(piece);
        }
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

    /// Whether any piece was shown.
    pub fn shown_any(&self) -> bool {
        !self.shown.is_empty()
    }

    /// What is left to show of the parsed `answer` once the run has ended: the part past
    /// what was shown, when the answer goes on from it as `clean` (the parser's cleaning:
    /// line ends trimmed, blank lines folded, skipped lines dropped) makes it (a note that
    /// output was cut included). A stream never stopped at an opening whose answer is already
    /// within what it showed (tools of the CLI's own: the last message's text alone; several
    /// texts joined) adds only a tail held as a possible opening. Else, rather than lose any
    /// of it, the whole answer again on a line of its own. Blank space already shown is not
    /// repeated. `None` when nothing was shown (the answer is then shown whole, as without
    /// streaming) or nothing is left.
    pub fn rest<'a>(
        &self,
        answer: &'a str,
        clean: &dyn Fn(&str) -> String,
    ) -> Option<Cow<'a, str>> {
        if self.shown.trim().is_empty() {
            return None;
        }
        let shown = clean(&self.shown);
        if let Some(rest) = answer.trim_start().strip_prefix(shown.trim()) {
            let shown_blank = &self.shown[self.shown.trim_end().len()..];
            let rest = rest.strip_prefix(shown_blank).unwrap_or(rest);
            return (!rest.trim().is_empty()).then_some(Cow::Borrowed(rest));
        }
        let squash = |t: &str| t.split_whitespace().collect::<String>();
        if !self.stopped && squash(&shown).contains(&squash(answer)) {
            return (!self.held.is_empty()).then(|| Cow::Owned(self.held.clone()));
        }
        Some(Cow::Owned(format!("\n{answer}")))
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

    fn open(format: &str, own_tools: bool) -> Streamed {
        Streamed::new(&style(format, own_tools), 1 << 20).unwrap()
    }

    fn shown(streamed: &mut Streamed, pieces: &[&str]) -> Vec<String> {
        pieces.iter().filter_map(|p| streamed.push(p)).collect()
    }

    #[test]
    fn pieces_pass_until_a_calls_opening_and_a_maybe_opening_waits() {
        let mut s = open("<tool_call>{json}</tool_call>", false);
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
        let same = |t: &str| t.to_string();
        let rest = |s: &Streamed, answer| s.rest(answer, &same).map(Cow::into_owned);
        let after = rest(&s, "I will look <today>. Now.\n\nafter");
        assert_eq!(after.as_deref(), Some("\n\nafter"));
        assert_eq!(rest(&s, "I will look <today>. Now."), None);
        // An answer that does not go on from what was shown comes again whole: nothing lost.
        let other = rest(&s, "something else");
        assert_eq!(other.as_deref(), Some("\nsomething else"));
        // Compared as the parser cleans it (here: blank lines folded).
        let mut s = open("<tool_call>{json}</tool_call>", false);
        s.push("a\n\n\nb <tool_call>{}");
        let fold = |t: &str| t.replace("\n\n\n", "\n\n");
        let after = s.rest("a\n\nb\n\nafter", &fold).map(Cow::into_owned);
        assert_eq!(after.as_deref(), Some("\n\nafter"));
    }

    #[test]
    fn own_tools_stream_everything_and_a_bare_format_streams_nothing() {
        let mut s = open("<tool_call>{json}</tool_call>", true);
        assert_eq!(shown(&mut s, &["<tool_", "call>"]), ["<tool_", "call>"]);
        assert!(Streamed::new(&style("{json}", false), 100).is_none());
        let mut s = open("CALL {name} {args}", false);
        assert_eq!(shown(&mut s, &["a CA", "LL ls"]), ["a "]);
    }

    #[test]
    fn blank_space_shown_is_not_repeated_and_wide_characters_split_nowhere() {
        let mut s = open("«call»{json}", false);
        assert_eq!(shown(&mut s, &["été ", "«ca"]), ["été "]);
        assert_eq!(s.push("ll»{}"), None);
        let same = |t: &str| t.to_string();
        assert_eq!(
            s.rest("été \n[output cut]", &same).as_deref(),
            Some("\n[output cut]")
        );
    }

    #[test]
    fn a_stream_never_stopped_was_shown_whole_but_a_held_tail() {
        let same = |t: &str| t.to_string();
        // Own tools: the answer is the last message's text alone, and all was shown.
        let mut s = open("<tool_call>{json}</tool_call>", true);
        shown(&mut s, &["I will read it.", "It has 3 lines."]);
        assert_eq!(s.rest("It has 3 lines.", &same), None);
        // A tail held as a possible opening that never became one comes at the end.
        let mut s = open("<tool_call>{json}</tool_call>", false);
        assert_eq!(shown(&mut s, &["a <to"]), ["a "]);
        assert_eq!(s.rest("a <to", &same).as_deref(), Some("<to"));
        // Several texts joined with a newline, shown without one: nothing to add.
        let mut s = open("<tool_call>{json}</tool_call>", false);
        shown(&mut s, &["First.", "Second."]);
        assert_eq!(s.rest("First.\nSecond.", &same), None);
        // What the pieces did not carry comes: the answer's end, a note that output was cut,
        // or a last message never streamed (whole, on a line of its own).
        let mut s = open("<tool_call>{json}</tool_call>", false);
        shown(&mut s, &["The ans"]);
        let rest = |answer| s.rest(answer, &same).map(Cow::into_owned);
        assert_eq!(rest("The answer is 42.").as_deref(), Some("wer is 42."));
        assert_eq!(
            rest("The ans\n[output cut]").as_deref(),
            Some("\n[output cut]")
        );
        assert_eq!(
            rest("It has 3 lines.").as_deref(),
            Some("\nIt has 3 lines.")
        );
    }

    #[test]
    fn pieces_are_taken_while_their_text_fits_the_room() {
        let mut s = Streamed::new(&style("<tool_call>{json}</tool_call>", false), 20).unwrap();
        assert_eq!(s.push("abc").as_deref(), Some("abc"));
        // Taken after a call's opening too: not shown, yet its line is not kept either.
        assert_eq!(s.push("<tool_call>"), None);
        assert!(s.room_for("123456") && !s.room_for("1234567"));
        // A smaller piece after one refused is refused too: the rest stays in order.
        assert!(!s.room_for("1"));
    }

    #[test]
    fn pieces_kept_as_the_answer_hold_a_calls_markup_too() {
        let mut s = open("<tool_call>{json}</tool_call>", false).keeping_pieces();
        let pieces = ["Run it.", " <tool_call>{}", "</tool_call>"];
        assert_eq!(shown(&mut s, &pieces), ["Run it.", " "]);
        assert_eq!(
            s.take_pieces().as_deref(),
            Some("Run it. <tool_call>{}</tool_call>")
        );
        assert_eq!(
            open("<tool_call>{json}</tool_call>", false).take_pieces(),
            None
        );
    }
}
