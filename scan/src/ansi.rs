//! ANSI stripping and terminal rendering fast enough for any agent output (hundreds of MB/s):
//! runs of ordinary bytes are copied as they are, the escape sequences agent CLIs print (CSI
//! colours and cursor moves, OSC titles and links, two-byte escapes) are skipped in place,
//! and only a line with something unusual (DCS, a sequence cut short, a control byte inside
//! a sequence) goes through vte's full terminal parser (`fallback.rs`). Control bytes other
//! than newline and tab are dropped, DEL and the C1 controls too. Rendering differs only at
//! `\r`, `\b` and the cursor moves and erases of `render.rs`, where the line is handed to
//! its line model; everything else takes the same path as stripping.

use std::borrow::Cow;

use crate::control::{first_control, BLOCK, C1_LEAD};
use crate::{fallback, render};

/// Removes escape sequences and control bytes but `\n` and `\t`, and replaces invalid UTF-8,
/// never panicking on any input. `\r` is dropped, so a redrawn line shows every frame.
#[inline(never)]
pub fn strip_ansi(bytes: &[u8]) -> String {
    scan::<false>(bytes)
}

/// The text a terminal would show for `bytes`, line by line (see `render.rs`): `\r`, `\b`,
/// erasing within a line and moving the cursor over the lines printed so far are carried
/// out; everything else as `strip_ansi`. Invalid UTF-8 is replaced; never panics.
#[inline(never)]
pub fn render_terminal(bytes: &[u8]) -> String {
    scan::<true>(bytes)
}

/// `bytes` as valid UTF-8: as they are (the usual case, checked in one fast pass), or with
/// each bad sequence replaced by U+FFFD first, so the fast path and the parser see the
/// same characters and a bad byte is replaced wherever it is.
pub fn valid_utf8(bytes: &[u8]) -> Cow<'_, [u8]> {
    match std::str::from_utf8(bytes) {
        Ok(_) => Cow::Borrowed(bytes),
        Err(_) => Cow::Owned(String::from_utf8_lossy(bytes).into_owned().into_bytes()),
    }
}

/// Stripping (`RENDER` false) or rendering.
///
/// Bytes are copied a block at a time, whole, and the part after the first control byte is
/// then taken off again: copying each run between two escapes on its own cost more than
/// finding it (a coloured line has an escape every dozen bytes). The buffer is allocated
/// once, with room for a block past the end, and not zeroed first (that would be one more
/// pass over output of up to megabytes).
#[inline(always)]
fn scan<const RENDER: bool>(bytes: &[u8]) -> String {
    let bytes = valid_utf8(bytes);
    let bytes = &*bytes;
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
        // At a control byte, or the lead byte of a two-byte character.
        i = match bytes[i] {
            0x1b => match escape_len(&bytes[i..]) {
                Some(len) if !(RENDER && render::needs_line_model(&bytes[i..i + len])) => i + len,
                Some(_) => render::wipe_line(bytes, i, &mut out)
                    .unwrap_or_else(|| render::line_model(bytes, i, &mut out)),
                None if RENDER => render::line_model(bytes, i, &mut out),
                None => fallback::strip(bytes, i, &mut out),
            },
            C1_LEAD => {
                // Valid UTF-8: a continuation byte follows. U+0080 to U+009F are C1 controls.
                if !matches!(bytes[i + 1], 0x80..=0x9f) {
                    out.extend_from_slice(&bytes[i..i + 2]);
                }
                i + 2
            }
            // Going back to column 0 just before a line feed changes nothing.
            b'\r' if RENDER && bytes.get(i + 1) != Some(&b'\n') => {
                render::wipe_line(bytes, i, &mut out)
                    .unwrap_or_else(|| render::line_model(bytes, i, &mut out))
            }
            0x08 if RENDER => render::line_model(bytes, i, &mut out),
            _ => i + 1,
        };
    }
    String::from_utf8(out).expect("whole characters of valid UTF-8 were copied")
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
            // CAN and SUB end it too (ECMA-48); the parser shows what follows them.
            let end = body
                .iter()
                .position(|b| matches!(*b, 0x07 | 0x1b | 0x18 | 0x1a))?;
            match body[end] {
                0x07 => Some(2 + end + 1),
                0x18 | 0x1a => None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colour_and_redraws_from_a_real_coro_capture() {
        let raw = b"\x1b[97m\xe2\x8f\xba\x1b[0m Bash(echo hi)\r\n\x1b[1A\x1b[2K\r\x1b[92m\xe2\x8f\xba\x1b[0m Bash(echo hi)\r\n";
        assert_eq!(
            strip_ansi(raw),
            "\u{23fa} Bash(echo hi)\n\u{23fa} Bash(echo hi)\n"
        );
    }

    /// All of it through the full parser, what the fast path must agree with.
    fn a_byte_at_a_time(bytes: &[u8]) -> String {
        fallback::strip_all(&valid_utf8(bytes))
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

    /// C1 controls (U+0080 to U+009F, `C2 80` to `C2 9F` in UTF-8) are removed by the fast
    /// path, and by the fallback (a DCS puts the line there).
    #[test]
    fn c1_controls_are_removed_on_both_paths() {
        assert_eq!(strip_ansi("a\u{85}b\u{9b}c\u{a9}".as_bytes()), "abc\u{a9}");
        assert_eq!(strip_ansi("\x1bPq\x1b\\a\u{85}b\u{9f}c".as_bytes()), "abc");
    }

    #[test]
    fn del_is_removed_on_both_paths() {
        assert_eq!(strip_ansi(b"a\x7fb"), "ab");
        assert_eq!(strip_ansi(b"\x1bPq\x1b\\a\x7fb"), "ab");
    }

    /// A terminal executes a line feed met inside a CSI and goes on with the sequence.
    #[test]
    fn a_line_feed_inside_a_csi_does_not_leak_its_tail() {
        assert_eq!(strip_ansi(b"a\x1b[3\n1mb\nc"), "a\nb\nc");
    }

    /// ECMA-48: CAN and SUB end any sequence, an OSC string included.
    #[test]
    fn can_and_sub_end_a_sequence() {
        assert_eq!(strip_ansi(b"a\x1b]0;t\x18b\x07c"), "abc");
        assert_eq!(strip_ansi(b"a\x1b]0;t\x1ab\x1b\\c"), "abc");
        assert_eq!(strip_ansi(b"a\x1b[3\x18b\x1b[1\x1a2m"), "ab2m");
    }

    #[test]
    fn a_bad_byte_before_a_line_feed_on_a_fallback_line_is_replaced() {
        assert_eq!(strip_ansi(b"\x1bPq\x1b\\a\xc3\nb"), "a\u{fffd}\nb");
        assert_eq!(strip_ansi(b"\x1bPq\x1b\\a\xff\nb"), "a\u{fffd}\nb");
    }

    #[test]
    fn agrees_with_the_full_parser_on_real_captures() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/coro");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(
                strip_ansi(&bytes),
                fallback::strip_all(&bytes),
                "{}",
                path.display()
            );
            seen += 1;
        }
        assert!(seen > 10);
    }
}
