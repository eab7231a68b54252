//! ANSI stripping fast enough for any agent output (hundreds of MB/s): runs of ordinary bytes
//! are copied as they are, the escape sequences agent CLIs print (CSI colours and cursor
//! moves, OSC titles and links, two-byte escapes) are skipped in place, and only a line with
//! something unusual (DCS, a sequence cut short) goes through strip-ansi-escapes' full
//! terminal parser. Control bytes other than newline and tab are dropped, `\r` included.

use crate::control::{first_control, BLOCK};

/// Removes escape sequences and control bytes but `\n` and `\t`, and replaces invalid UTF-8,
/// never panicking on any input.
///
/// Bytes are copied a block at a time, whole, and the part after the first control byte is
/// then taken off again: copying each run between two escapes on its own cost more than
/// finding it (a coloured line has an escape every dozen bytes). The buffer is allocated
/// once, with room for a block past the end, and not zeroed first (that would be one more
/// pass over output of up to megabytes).
#[inline(never)]
pub fn strip_ansi(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len() + BLOCK);
    let mut i = 0;
    while i < bytes.len() {
        // Whole blocks of ordinary bytes, then the part of a block before its first control
        // byte. (The loop adds a constant for an ordinary block, rather than the position
        // found in it, so the next load does not wait for this block's test.)
        let k = loop {
            let Some(chunk) = bytes.get(i..i + BLOCK) else {
                // The last bytes, tested padded with ordinary ones.
                let rest = &bytes[i..];
                let mut block = [b' '; BLOCK];
                block[..rest.len()].copy_from_slice(rest);
                let k = first_control(&block).map_or(rest.len(), |k| k.min(rest.len()));
                out.extend_from_slice(&rest[..k]);
                break k;
            };
            let block: &[u8; BLOCK] = chunk.try_into().expect("a block");
            out.extend_from_slice(block);
            match first_control(block) {
                Some(k) => {
                    out.truncate(out.len() - (BLOCK - k));
                    break k;
                }
                None => i += BLOCK,
            }
        };
        i += k;
        if i == bytes.len() {
            break;
        }
        // At a control byte.
        if bytes[i] != 0x1b {
            i += 1;
            continue;
        }
        match escape_len(&bytes[i..]) {
            Some(len) => i += len,
            None => {
                let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p);
                out.extend(full_parser(&bytes[i..end]));
                i = end;
            }
        }
    }
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// The length of the escape sequence at the start of `s` (which starts with ESC), for the
/// kinds this fast path knows; `None` sends the rest of the line to the full parser.
#[inline]
fn escape_len(s: &[u8]) -> Option<usize> {
    match *s.get(1)? {
        // CSI: parameters, intermediates, one final byte.
        b'[' => {
            let mut j = 2;
            while matches!(s.get(j), Some(0x30..=0x3f)) {
                j += 1;
            }
            while matches!(s.get(j), Some(0x20..=0x2f)) {
                j += 1;
            }
            matches!(s.get(j), Some(0x40..=0x7e)).then_some(j + 1)
        }
        // OSC: ends at BEL or ST (ESC \).
        b']' => {
            let body = &s[2..];
            let end = body.iter().position(|b| *b == 0x07 || *b == 0x1b)?;
            match body[end] {
                0x07 => Some(2 + end + 1),
                _ if body.get(end + 1) == Some(&b'\\') => Some(2 + end + 2),
                _ => None,
            }
        }
        // DCS, SOS, PM, APC: strings with their own rules; rare in agent output.
        b'P' | b'X' | b'^' | b'_' => None,
        // Character set designations: ESC ( B and friends.
        b'(' | b')' | b'*' | b'+' => matches!(s.get(2), Some(0x30..=0x7e)).then_some(3),
        // Two-byte escapes: ESC 7, ESC 8, ESC =, ESC M, ...
        0x30..=0x7e => Some(2),
        _ => None,
    }
}

/// Strips with strip-ansi-escapes, which drops every control byte but `\n`, tabs included:
/// the pieces between tabs are stripped apart and joined again.
fn full_parser(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for (n, piece) in bytes.split(|b| *b == b'\t').enumerate() {
        if n > 0 {
            out.push(b'\t');
        }
        out.extend_from_slice(&strip_ansi_escapes::strip(piece));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::is_control;

    #[test]
    fn strips_colour_and_redraws_from_a_real_coro_capture() {
        let raw = b"\x1b[97m\xe2\x8f\xba\x1b[0m Bash(echo hi)\r\n\x1b[1A\x1b[2K\r\x1b[92m\xe2\x8f\xba\x1b[0m Bash(echo hi)\r\n";
        assert_eq!(
            strip_ansi(raw),
            "\u{23fa} Bash(echo hi)\n\u{23fa} Bash(echo hi)\n"
        );
    }

    /// The same stripping a byte at a time, to check the block-wise copy against.
    fn a_byte_at_a_time(bytes: &[u8]) -> String {
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                0x1b => match escape_len(&bytes[i..]) {
                    Some(len) => i += len,
                    None => {
                        let end = bytes[i..].iter().position(|b| *b == b'\n');
                        let end = end.map_or(bytes.len(), |p| i + p);
                        out.extend(full_parser(&bytes[i..end]));
                        i = end;
                    }
                },
                b if is_control(b) => i += 1,
                b => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn escapes_and_control_bytes_are_handled_at_any_place_of_a_block() {
        let pieces: [&[u8]; 7] = [
            b"\x1b[1;32m",
            b"\x1b]0;title\x07",
            b"\r",
            b"\x1b(B",
            b"\x1bPq\x1b\\",
            b"\xff",
            b"\x1b[38;5",
        ];
        for piece in pieces {
            for at in 0..40 {
                for len in [at, at + 1, 40, 57] {
                    let mut bytes = b"line one\twith text\nand \xc3\xa9 line two, longer".repeat(2);
                    bytes.truncate(len.max(at));
                    bytes.splice(at..at, piece.iter().copied());
                    assert_eq!(
                        strip_ansi(&bytes),
                        a_byte_at_a_time(&bytes),
                        "{:?}",
                        String::from_utf8_lossy(&bytes)
                    );
                }
            }
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_not_a_panic() {
        assert_eq!(strip_ansi(b"ok \xff\xfe done"), "ok \u{fffd}\u{fffd} done");
    }

    #[test]
    fn tabs_survive() {
        assert_eq!(
            strip_ansi(b"\x1b[1mmake\x1b[0m:\n\tcc -o x\tx.c\n"),
            "make:\n\tcc -o x\tx.c\n"
        );
    }

    #[test]
    fn osc_charset_and_two_byte_escapes() {
        let raw = b"\x1b]0;title\x07a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b\x1b(Bc\x1b7d\x1b8e\x1b[?25l\x1b[38;5;208mf";
        assert_eq!(strip_ansi(raw), "alinkbcdef");
    }

    #[test]
    fn unusual_and_cut_sequences_go_to_the_full_parser() {
        assert_eq!(strip_ansi(b"a\x1bPq#0;2;0;0;0\x1b\\b\nc"), "ab\nc");
        assert_eq!(strip_ansi(b"cut \x1b[38;5"), "cut ");
        assert_eq!(
            strip_ansi(b"bell\x07 del\x7f nul\x00 cr\r."),
            "bell del nul cr."
        );
    }

    #[test]
    fn agrees_with_the_full_parser_on_real_captures() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/coro");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let slow = full_parser(&bytes);
            assert_eq!(
                strip_ansi(&bytes),
                String::from_utf8_lossy(&slow),
                "{}",
                path.display()
            );
            seen += 1;
        }
        assert!(seen > 10);
    }
}
