//! Reading a text file line by line in bounded memory: read and grep must not hold a whole
//! file (a 10 GB log in the folder would take the process down), so each line is kept only up
//! to what the caller asks for and the rest of it is counted, not stored. The text check is
//! the one [`crate::fs::as_text`] makes of a whole file, made as the bytes go by: no NUL byte
//! in the first 8 KiB, and UTF-8 throughout.

use std::io::{BufRead, BufReader, Read};

/// The first bytes of a file searched for a NUL byte, the mark of a binary file.
const NUL_WINDOW: u64 = 8192;

/// Why a file could not be read as text.
#[derive(Debug)]
pub enum TextError {
    Io(std::io::Error),
    /// A NUL byte near the start, or bytes that are not UTF-8.
    Binary,
}

impl From<std::io::Error> for TextError {
    fn from(e: std::io::Error) -> Self {
        TextError::Io(e)
    }
}

/// One line, without its `\n` or `\r\n`.
#[derive(Debug, PartialEq)]
pub struct Line<'a> {
    /// Counting from 1.
    pub number: usize,
    /// Its start, as much as was asked for, cut on a character boundary.
    pub text: &'a str,
    /// The bytes of it past `text`, read and checked but not kept.
    pub dropped: usize,
}

/// The lines of a reader, as `str::lines` splits them.
pub struct Lines<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// Bytes read so far, for the NUL window.
    consumed: u64,
    number: usize,
}

impl<R: Read> Lines<R> {
    pub fn new(reader: R) -> Self {
        Lines {
            reader: BufReader::with_capacity(64 * 1024, reader),
            line: Vec::new(),
            consumed: 0,
            number: 0,
        }
    }

    /// The next line with at most `keep` bytes of it kept (0: only counted and checked);
    /// `None` at the end.
    pub fn next_line(&mut self, keep: usize) -> Result<Option<Line<'_>>, TextError> {
        self.line.clear();
        let mut utf8 = Utf8::default();
        let mut dropped = 0;
        let mut any = false;
        let mut ended = false;
        let mut last = 0u8;
        while !ended {
            let chunk = self.reader.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (part, used) = match memchr::memchr(b'\n', chunk) {
                Some(at) => {
                    ended = true;
                    (&chunk[..at], at + 1)
                }
                None => (chunk, chunk.len()),
            };
            if self.consumed < NUL_WINDOW {
                let window = (NUL_WINDOW - self.consumed) as usize;
                if memchr::memchr(0, &part[..part.len().min(window)]).is_some() {
                    return Err(TextError::Binary);
                }
            }
            if !utf8.feed(part) {
                return Err(TextError::Binary);
            }
            let room = keep.saturating_sub(self.line.len()).min(part.len());
            self.line.extend_from_slice(&part[..room]);
            dropped += part.len() - room;
            if let Some(&byte) = part.last() {
                last = byte;
            }
            self.consumed += used as u64;
            self.reader.consume(used);
        }
        if !any {
            return Ok(None);
        }
        if !utf8.pending.is_empty() {
            return Err(TextError::Binary);
        }
        // `\r\n` ends a line as `\n` does, as for `str::lines`.
        if ended && last == b'\r' {
            match dropped {
                0 => {
                    self.line.pop();
                }
                _ => dropped -= 1,
            }
        }
        // The cut may fall inside a character: the part of it kept goes with the dropped.
        let text = match std::str::from_utf8(&self.line) {
            Ok(text) => text,
            Err(e) if e.error_len().is_none() => {
                dropped += self.line.len() - e.valid_up_to();
                std::str::from_utf8(&self.line[..e.valid_up_to()]).map_err(|_| TextError::Binary)?
            }
            Err(_) => return Err(TextError::Binary),
        };
        self.number += 1;
        Ok(Some(Line {
            number: self.number,
            text,
            dropped,
        }))
    }
}

/// UTF-8 checked piece by piece: a character may be split between two reads.
#[derive(Default)]
struct Utf8 {
    /// The start of a character whose other bytes are still to come.
    pending: Vec<u8>,
}

impl Utf8 {
    /// Whether `bytes`, after those fed before, are still UTF-8.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        while !self.pending.is_empty() {
            let Some((&byte, rest)) = bytes.split_first() else {
                return true;
            };
            self.pending.push(byte);
            bytes = rest;
            match std::str::from_utf8(&self.pending) {
                Ok(_) => self.pending.clear(),
                Err(e) if e.error_len().is_some() => return false,
                Err(_) => {}
            }
        }
        match std::str::from_utf8(bytes) {
            Ok(_) => true,
            Err(e) if e.error_len().is_some() => false,
            Err(e) => {
                self.pending.extend_from_slice(&bytes[e.valid_up_to()..]);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line as (text kept, bytes dropped), reading through a reader that hands out
    /// `step` bytes at a time, so characters and `\r\n` fall across reads.
    fn all(bytes: &[u8], keep: usize, step: usize) -> Result<Vec<(String, usize)>, TextError> {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.1.min(buf.len()).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut lines = Lines::new(Trickle(bytes, step));
        let mut out = Vec::new();
        while let Some(line) = lines.next_line(keep)? {
            assert_eq!(line.number, out.len() + 1);
            out.push((line.text.to_string(), line.dropped));
        }
        Ok(out)
    }

    #[test]
    fn lines_split_as_str_lines_does() {
        let text = "one\r\ntwo\n\nthré\rx\nlast";
        for step in [1, 2, 3, 64 * 1024] {
            let got: Vec<String> = all(text.as_bytes(), usize::MAX, step)
                .unwrap()
                .into_iter()
                .map(|(line, dropped)| {
                    assert_eq!(dropped, 0);
                    line
                })
                .collect();
            assert_eq!(got, text.lines().collect::<Vec<_>>(), "step {step}");
        }
        assert!(all(b"", 10, 1).unwrap().is_empty());
        assert_eq!(all(b"\n", 10, 1).unwrap(), [(String::new(), 0)]);
    }

    #[test]
    fn a_line_is_kept_up_to_what_was_asked_on_a_character_boundary() {
        for step in [1, 5, 1024] {
            // `é` is two bytes: a cut at 4 falls inside the second one.
            let got = all("aéébc\r\nxy\n".as_bytes(), 4, step).unwrap();
            assert_eq!(got, [("aé".to_string(), 4), ("xy".to_string(), 0)]);
            let got = all(b"abcd\r\n", 4, step).unwrap();
            assert_eq!(got, [("abcd".to_string(), 0)]);
            let got = all(b"abcdef", 0, step).unwrap();
            assert_eq!(got, [(String::new(), 6)]);
        }
    }

    #[test]
    fn binary_is_found_wherever_it_is_not_kept() {
        for step in [1, 3, 1024] {
            // Not UTF-8, in a dropped part, split between reads, or cut off at the end.
            for bytes in [&b"ok\nab\xffcd\n"[..], b"abc\xc3", b"x\xe2\x82"] {
                assert!(matches!(all(bytes, 1, step), Err(TextError::Binary)));
            }
            assert!(matches!(all(b"a\nb\0c", 0, step), Err(TextError::Binary)));
        }
        // A NUL past the first 8 KiB is text, as for a whole file.
        let mut late = vec![b'a'; 9000];
        late.push(0);
        assert_eq!(all(&late, 0, 4096).unwrap(), [(String::new(), 9001)]);
    }
}
