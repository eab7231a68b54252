//! Long answers in pieces Telegram takes: at most a message's limit of characters each, cut at
//! line ends where a line fits, inside a line (never inside a character) where one does not.
//! A code block that a cut falls in is closed at the end of one piece and opened again, with
//! its language, at the start of the next.

/// Telegram's limit on a message's text, in characters.
pub const MESSAGE_LIMIT: usize = 4096;

/// What closing a code block adds to a piece.
const CLOSE: &str = "\n```";

/// `text` in pieces of at most `limit` characters; joined with newlines (and without the
/// fences added at the cuts) they give `text` back, less empty lines at the cuts.
pub fn split(text: &str, limit: usize) -> Vec<String> {
    let mut out = Splitter {
        limit: limit.max(16),
        pieces: Vec::new(),
        current: String::new(),
        len: 0,
        fresh: true,
        fence: None,
    };
    for line in text.split('\n') {
        out.push_line(line);
        if line.trim_start().starts_with("```") {
            out.fence = match out.fence {
                Some(_) => None,
                // A fence too long to repeat is not reopened.
                None if line.chars().count() < limit / 4 => Some(line.to_string()),
                None => None,
            };
        }
    }
    out.flush();
    out.pieces
}

struct Splitter {
    limit: usize,
    pieces: Vec<String>,
    current: String,
    /// `current`'s length in characters.
    len: usize,
    /// `current` holds nothing but a reopened fence.
    fresh: bool,
    /// The opening line of the code block the text is in.
    fence: Option<String>,
}

impl Splitter {
    fn push_line(&mut self, line: &str) {
        let mut rest = line;
        loop {
            let separator = usize::from(self.len > 0);
            let room = self
                .limit
                .saturating_sub(CLOSE.len() + self.len + separator);
            let n = rest.chars().count();
            if n <= room {
                if separator == 1 {
                    self.current.push('\n');
                }
                self.current.push_str(rest);
                self.len += separator + n;
                self.fresh = false;
                return;
            }
            if !self.fresh {
                self.flush();
                continue;
            }
            // Even a piece of its own cannot hold the line: cut it at a character boundary.
            let room = room.max(1);
            let cut = rest.char_indices().nth(room).map_or(rest.len(), |(i, _)| i);
            if separator == 1 {
                self.current.push('\n');
            }
            self.current.push_str(&rest[..cut]);
            self.len += separator + room;
            rest = &rest[cut..];
            self.flush();
        }
    }

    /// Ends the current piece (closing an open code block) and starts the next (opening it
    /// again).
    fn flush(&mut self) {
        let done = std::mem::take(&mut self.current);
        if !done.trim().is_empty() {
            let mut done = done;
            if self.fence.is_some() {
                done.push_str(CLOSE);
            }
            self.pieces.push(done);
        }
        self.current = self.fence.clone().unwrap_or_default();
        self.len = self.current.chars().count();
        self.fresh = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_one_piece() {
        assert_eq!(split("hello\nworld", 100), vec!["hello\nworld"]);
    }

    #[test]
    fn cuts_at_line_ends_and_keeps_every_line() {
        let lines: Vec<String> = (0..500).map(|i| format!("line {i:04} ----")).collect();
        let text = lines.join("\n");
        let pieces = split(&text, 1000);
        assert!(pieces.len() > 5);
        for p in &pieces {
            assert!(p.chars().count() <= 1000, "{}", p.len());
        }
        assert_eq!(pieces.join("\n"), text);
    }

    #[test]
    fn never_cuts_a_character() {
        let text = "é".repeat(250) + &"😀".repeat(100);
        let pieces = split(&text, 64);
        for p in &pieces {
            assert!(p.chars().count() <= 64);
        }
        assert_eq!(pieces.concat(), text);
    }

    #[test]
    fn closes_and_reopens_a_code_block() {
        let body: Vec<String> = (0..40).map(|i| format!("let x{i} = {i};")).collect();
        let text = format!("Here:\n```rust\n{}\n```\ndone", body.join("\n"));
        let pieces = split(&text, 200);
        assert!(pieces.len() > 2);
        for p in &pieces {
            assert_eq!(p.matches("```").count() % 2, 0, "unbalanced: {p}");
            assert!(p.chars().count() <= 200);
        }
        assert!(pieces[1].starts_with("```rust\n"), "{}", pieces[1]);
        for line in text.lines() {
            assert!(
                pieces.iter().any(|p| p.lines().any(|l| l == line)),
                "{line}"
            );
        }
    }
}
