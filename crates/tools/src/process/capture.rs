//! A byte buffer that keeps at most a fixed number of bytes and counts the rest, so a child
//! that prints gigabytes costs a bounded amount of memory while it is still drained.

#[derive(Debug, Default, Clone)]
pub struct Capture {
    bytes: Vec<u8>,
    cap: usize,
    dropped: u64,
}

impl Capture {
    pub fn new(cap: usize) -> Self {
        Capture {
            bytes: Vec::new(),
            cap,
            dropped: 0,
        }
    }

    /// Bytes kept elsewhere, with how many were dropped (a streaming CLI's stdout, kept by
    /// the line).
    pub fn kept(bytes: Vec<u8>, dropped: u64) -> Self {
        Capture {
            cap: bytes.len(),
            bytes,
            dropped,
        }
    }

    /// Keeps what fits under the cap and counts the rest; returns how many bytes of the
    /// chunk were kept (they are its start).
    pub fn push(&mut self, chunk: &[u8]) -> usize {
        let room = self.cap.saturating_sub(self.bytes.len());
        let take = room.min(chunk.len());
        self.bytes.extend_from_slice(&chunk[..take]);
        self.dropped += (chunk.len() - take) as u64;
        take
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The kept bytes, taken rather than copied: they can be megabytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// How many bytes past the cap were dropped.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The kept bytes as text (invalid UTF-8 replaced), with a note when some were dropped.
    pub fn text_with_note(&self, what: &str) -> String {
        let mut text = String::from_utf8_lossy(&self.bytes).into_owned();
        if self.dropped > 0 {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[{what} cut: {} dropped after the first {}]",
                crate::plural::count(self.dropped, "more byte was", "more bytes were"),
                self.bytes.len()
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_bytes_and_counts_the_rest() {
        let mut c = Capture::new(5);
        c.push(b"abc");
        c.push(b"defgh");
        assert_eq!(c.bytes(), b"abcde");
        assert_eq!(c.dropped(), 3);
        assert_eq!(
            c.text_with_note("stdout"),
            "abcde\n[stdout cut: 3 more bytes were dropped after the first 5]"
        );
    }
}
