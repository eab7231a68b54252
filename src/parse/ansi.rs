//! ANSI stripping fast enough for any agent output (hundreds of MB/s): runs of ordinary bytes
//! are copied as they are, the escape sequences agent CLIs print (CSI colours and cursor
//! moves, OSC titles and links, two-byte escapes) are skipped in place, and only a line with
//! something unusual (DCS, a sequence cut short) goes through strip-ansi-escapes' full
//! terminal parser. Control bytes other than newline and tab are dropped, `\r` included.

/// Removes escape sequences and control bytes but `\n` and `\t`, and replaces invalid UTF-8,
/// never panicking on any input.
pub fn strip_ansi(bytes: &[u8]) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        i = plain_run_end(bytes, i);
        out.extend_from_slice(&bytes[start..i]);
        if i == bytes.len() {
            break;
        }
        if bytes[i] != 0x1b {
            i += 1;
            continue;
        }
        match escape_len(&bytes[i..]) {
            Some(len) => i += len,
            None => {
                let end = bytes[i..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(bytes.len(), |p| i + p);
                full_parser(&bytes[i..end], &mut out);
                i = end;
            }
        }
    }
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// A control byte that is not kept: everything below space but `\n` and `\t`, and DEL.
#[inline]
fn is_control(b: u8) -> bool {
    (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f
}

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);

/// Where the run of kept bytes starting at `from` ends: the next control byte, or the end.
/// Eight bytes are tested at a time (most of any output is such runs, and the crate is
/// built for size, so a byte-at-a-time loop is not vectorised). Inlined, as are the helpers
/// below: an agent's coloured line has an escape every dozen bytes, and at the size-first
/// `opt-level` each call would otherwise cost more than the bytes it looks at.
#[inline]
fn plain_run_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(word) = bytes.get(i..i + 8) {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let found = control_bytes(word);
        if found != 0 {
            // Little-endian: the lowest flag is the first byte.
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + bytes[i..]
        .iter()
        .position(|b| is_control(*b))
        .unwrap_or(bytes.len() - i)
}

/// The high bit of each byte of `word` that `is_control` holds for, and no other bit. Each
/// byte is tested on its own, no carry crossing into the next, so the flags are exact.
#[inline]
fn control_bytes(word: u64) -> u64 {
    let low = word & !HIGH;
    // High bit set where the byte is zero; (low + 0x7f) sets it for any other low bits.
    let zero = |w: u64| !(((w & !HIGH) + !HIGH) | w) & HIGH;
    // (low + 0x60) reaches 0x80 from 0x20 up, and stays below 0x100.
    let below_space = !((low + 0x60 * ONES) | word) & HIGH;
    let newline = zero(word ^ (ONES * u64::from(b'\n')));
    let tab = zero(word ^ (ONES * u64::from(b'\t')));
    let del = zero(word ^ (ONES * 0x7f));
    (below_space & !newline & !tab) | del
}

/// The length of the escape sequence at the start of `s` (which starts with ESC), for the
/// kinds this fast path knows; `None` sends the rest of the line to the full parser.
/// (`matches!` rather than `RangeInclusive::contains`, which the size-first build calls.)
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
fn full_parser(bytes: &[u8], out: &mut Vec<u8>) {
    for (n, piece) in bytes.split(|b| *b == b'\t').enumerate() {
        if n > 0 {
            out.push(b'\t');
        }
        out.extend_from_slice(&strip_ansi_escapes::strip(piece));
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

    #[test]
    fn control_bytes_are_found_at_any_place_in_a_word() {
        for b in 0..=255u8 {
            for at in 0..12 {
                let mut bytes = b"kept bytes, \xc3\xa9\t\n".to_vec();
                bytes.insert(at, b);
                let want = bytes.iter().position(|b| is_control(*b));
                assert_eq!(
                    plain_run_end(&bytes, 0),
                    want.unwrap_or(bytes.len()),
                    "{b:#x} at {at}"
                );
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
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/coro");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let mut slow = Vec::new();
            full_parser(&bytes, &mut slow);
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
