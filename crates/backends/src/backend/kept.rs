//! What a streaming CLI's stdout keeps (`json_text_delta`): the lines not taken as pieces of
//! its answer, the first of them up to `max_output_bytes`, and past that its last line, also
//! up to `max_output_bytes`. A stream's answer is in its last line (Claude Code's `result`),
//! while what passes the cap is the middle: tool results with `tools = "own"` (each up to
//! about 40 KB in Claude Code's stream), or a flood. Keeping the head alone would drop the
//! answer with the rest and fail the whole run; keeping the last line too, an honest run gets
//! its answer (with a note of what was dropped) and memory stays within twice the cap.

use crate::process::Capture;

pub struct Kept {
    /// Whole lines from the start, within `cap`.
    head: Vec<u8>,
    /// Where the line being read starts in `head`, while it is read into it.
    line_start: usize,
    /// A line did not fit in `head`: from it on, lines go to `tail`.
    full: bool,
    /// Once `head` is full: the line being read, within `cap`, the last one at the end.
    tail: Vec<u8>,
    /// The line in `tail` is too long to keep: the rest of it is dropped too.
    tail_over: bool,
    /// The last part pushed ended its line.
    ended: bool,
    cap: usize,
    dropped: u64,
    /// A line dropped may have held some of the answer (`reaches_text` said so).
    text_dropped: bool,
}

impl Kept {
    pub fn new(cap: usize) -> Kept {
        Kept {
            head: Vec::new(),
            line_start: 0,
            full: false,
            tail: Vec::new(),
            tail_over: false,
            ended: true,
            cap,
            dropped: 0,
            text_dropped: false,
        }
    }

    /// Keeps a line, or a part of one when `ended` is false (a line past the splitter's
    /// bound comes in parts). Whether it went into the head: past it a line is only kept,
    /// not reported, as `process::run` does past its cap. `reaches_text`: whether a whole
    /// line may hold some of the answer, asked of each line dropped (a part of one too long to
    /// keep is asked of its start).
    pub fn push(&mut self, part: &[u8], ended: bool, reaches_text: &dyn Fn(&[u8]) -> bool) -> bool {
        let starts = std::mem::replace(&mut self.ended, ended);
        let newline = usize::from(ended);
        if !self.full {
            if starts {
                self.line_start = self.head.len();
            }
            if self.head.len() + part.len() + newline <= self.cap {
                self.head.extend_from_slice(part);
                self.head.extend_from_slice(&b"\n"[..newline]);
                return true;
            }
            // The head ends with the last whole line: the parts of this one move on.
            self.full = true;
            self.tail = self.head.split_off(self.line_start);
        }
        if starts {
            self.dropped += self.tail.len() as u64;
            self.text_dropped |= !self.tail.is_empty() && reaches_text(&self.tail);
            self.tail.clear();
            self.tail_over = false;
        }
        if self.tail_over || self.tail.len() + part.len() + newline > self.cap {
            if !self.tail_over {
                let start = if self.tail.is_empty() {
                    part
                } else {
                    &self.tail
                };
                self.text_dropped |= reaches_text(start);
            }
            self.dropped += (self.tail.len() + part.len() + newline) as u64;
            self.tail.clear();
            self.tail_over = true;
            return false;
        }
        self.tail.extend_from_slice(part);
        self.tail.extend_from_slice(&b"\n"[..newline]);
        false
    }

    /// Whether a line dropped may have held some of the answer.
    pub fn text_dropped(&self) -> bool {
        self.text_dropped
    }

    /// What was kept, the last line after the head, and how many bytes were dropped.
    pub fn into_capture(mut self) -> Capture {
        self.head.append(&mut self.tail);
        Capture::kept(self.head, self.dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(cap: usize, parts: &[(&str, bool)]) -> (String, u64) {
        let mut k = Kept::new(cap);
        for (part, ended) in parts {
            k.push(part.as_bytes(), *ended, &|_| false);
        }
        let c = k.into_capture();
        (String::from_utf8(c.bytes().to_vec()).unwrap(), c.dropped())
    }

    #[test]
    fn the_head_and_the_last_line_are_kept() {
        let lines = [("aaa", true), ("bbb", true), ("ccc", true), ("last", true)];
        assert_eq!(kept(8, &lines), ("aaa\nbbb\nlast\n".into(), 4));
        // Within the cap, everything.
        assert_eq!(kept(100, &lines).0, "aaa\nbbb\nccc\nlast\n");
        // An unterminated last line is kept as it is.
        assert_eq!(
            kept(4, &[("aaa", true), ("b", true), ("end", false)]).0,
            "aaa\nend"
        );
    }

    #[test]
    fn a_line_in_parts_is_never_cut() {
        // The line that passes the head's room moves whole to the tail.
        let parts = [("aa", true), ("bb", false), ("bb", false), ("bb", true)];
        assert_eq!(kept(8, &parts), ("aa\nbbbbbb\n".into(), 0));
        // A last line longer than the cap is dropped whole: nothing of it is kept.
        let parts = [("aa", true), ("xxxxx", false), ("xxxxx", true)];
        assert_eq!(kept(4, &parts), ("aa\n".into(), 11));
    }
}
