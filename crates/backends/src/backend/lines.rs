//! Splits a backend's output chunks into whole lines before stripping, so an escape sequence
//! cut in two by a read is never shown as text. Also frames Ollama's NDJSON stream.

pub struct LineSplitter {
    pending: Vec<u8>,
    /// A partial line longer than this is passed on anyway, so memory stays bounded.
    max_pending: usize,
}

/// The bound for a backend's output lines.
const MAX_PENDING: usize = 64 * 1024;

impl Default for LineSplitter {
    fn default() -> Self {
        Self::with_limit(MAX_PENDING)
    }
}

impl LineSplitter {
    /// A splitter that passes on partial lines longer than `max_pending` bytes.
    pub fn with_limit(max_pending: usize) -> Self {
        LineSplitter {
            pending: Vec::new(),
            max_pending,
        }
    }

    /// Feeds a chunk; calls `line` for each complete line (without its newline).
    pub fn push(&mut self, chunk: &[u8], line: &mut dyn FnMut(&[u8])) {
        self.push_ends(chunk, &mut |l, _| line(l));
    }

    /// As `push`, saying of each line whether it ended with a newline (a part of a line past
    /// `max_pending` did not): what puts the bytes back together needs it.
    pub fn push_ends(&mut self, chunk: &[u8], line: &mut dyn FnMut(&[u8], bool)) {
        self.pending.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(pos) = self.pending[start..].iter().position(|b| *b == b'\n') {
            line(&self.pending[start..start + pos], true);
            start += pos + 1;
        }
        self.pending.drain(..start);
        if self.pending.len() > self.max_pending {
            line(&self.pending, false);
            self.pending.clear();
        }
    }

    /// Flushes an unterminated last line.
    pub fn finish(&mut self, line: &mut dyn FnMut(&[u8])) {
        if !self.pending.is_empty() {
            line(&self.pending);
            self.pending.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_lines_split_across_chunks() {
        let mut s = LineSplitter::default();
        let mut got = Vec::new();
        s.push(b"ab\x1b[3", &mut |l| got.push(l.to_vec()));
        s.push(b"1mc\nd\n\ne", &mut |l| got.push(l.to_vec()));
        s.finish(&mut |l| got.push(l.to_vec()));
        assert_eq!(
            got,
            vec![
                b"ab\x1b[31mc".to_vec(),
                b"d".to_vec(),
                b"".to_vec(),
                b"e".to_vec()
            ]
        );
    }

    #[test]
    fn a_part_of_a_long_line_says_it_did_not_end() {
        let mut s = LineSplitter::with_limit(4);
        let mut got = Vec::new();
        s.push_ends(b"abcdefg\nhi\n", &mut |l, ended| {
            got.push((l.to_vec(), ended))
        });
        s.push_ends(b"jklmnop", &mut |l, ended| got.push((l.to_vec(), ended)));
        assert_eq!(
            got,
            vec![
                (b"abcdefg".to_vec(), true),
                (b"hi".to_vec(), true),
                (b"jklmnop".to_vec(), false)
            ]
        );
    }
}
