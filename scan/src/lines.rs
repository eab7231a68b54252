//! Editing a reply in place: cutting out byte ranges (the tool calls), then dropping lines,
//! trimming line ends and folding blank lines. Output can be megabytes, so the text is never
//! copied: what is kept moves down over what is not.

use std::ops::Range;

use crate::newlines::Newlines;

/// `text` without the byte ranges in `spans` (sorted, not overlapping): what follows each
/// range moves down over it.
///
/// # Panics
/// If a range is not on character boundaries of `text`, or the ranges are not sorted or
/// overlap.
#[inline(never)]
pub fn cut(text: String, spans: &[Range<usize>]) -> String {
    let Some(first) = spans.first() else {
        return text;
    };
    // What makes the result valid UTF-8 (see `whole_characters`); a test a range, not a byte.
    for span in spans {
        assert!(
            text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
            "cut: {span:?} splits a character"
        );
    }
    let mut bytes = text.into_bytes();
    let mut kept = first.start;
    let starts = spans.iter().skip(1).map(|s| s.start);
    for (span, next) in spans.iter().zip(starts.chain([bytes.len()])) {
        bytes.copy_within(span.end..next, kept);
        kept += next - span.end;
    }
    bytes.truncate(kept);
    whole_characters(bytes)
}

/// `text` without the lines that start at the offsets in `dropped` (sorted), each line's
/// end trimmed of white space, runs of blank lines folded to one, and the whole trimmed.
///
/// Most lines are kept as they are: those are moved a run at a time, up to the first line
/// that is dropped, blank or trimmed. A line ending in a visible ASCII character is neither
/// blank nor trimmed, so only the others are looked at closely.
#[inline(never)]
pub fn clean_lines(text: String, dropped: &[usize]) -> String {
    let mut dropped = dropped.iter().copied().peekable();
    let mut bytes = text.into_bytes();
    // Bytes kept so far, at the start of `bytes`.
    let mut kept = 0;
    // Where the run of lines kept as they are starts.
    let mut as_is = 0;
    let mut blank_run = 0;
    let mut start = 0;
    let mut newlines = Newlines::new(&bytes);
    loop {
        // Edits below only move bytes down to before `end`, as `Newlines` allows.
        let newline = newlines.next(&bytes);
        let end = newline.unwrap_or(bytes.len());
        while dropped.next_if(|&d| d < start).is_some() {}
        let is_dropped = dropped.next_if_eq(&start).is_some();
        // The last piece, with no newline, always takes the long way.
        let visible_end = bytes[start..end].last().is_some_and(u8::is_ascii_graphic);
        if visible_end && !is_dropped && newline.is_some() {
            blank_run = 0;
        } else {
            bytes.copy_within(as_is..start, kept);
            kept += start - as_is;
            as_is = end + 1;
            if !is_dropped {
                let line = std::str::from_utf8(&bytes[start..end]).expect("a line of a str");
                blank_run = if line.trim().is_empty() {
                    blank_run + 1
                } else {
                    0
                };
                if blank_run <= 1 {
                    let len = line.trim_end().len();
                    bytes.copy_within(start..start + len, kept);
                    kept += len;
                    // The last piece's newline would only be trimmed off below.
                    if newline.is_some() {
                        bytes[kept] = b'\n';
                        kept += 1;
                    }
                }
            }
        }
        match newline {
            Some(at) => start = at + 1,
            None => break,
        }
    }
    bytes.truncate(kept);
    let mut out = whole_characters(bytes);
    out.truncate(out.trim_end().len());
    out.drain(..out.len() - out.trim_start().len());
    out
}

/// The text again, from bytes that were a `str` with only whole characters removed (ranges
/// on character boundaries, white space trimmed by `str` methods) and newlines written.
fn whole_characters(bytes: Vec<u8>) -> String {
    debug_assert!(std::str::from_utf8(&bytes).is_ok());
    // SAFETY: the bytes were valid UTF-8, and every edit removed whole characters or wrote
    // an ASCII newline in the place of one, which keeps them valid. Checking again would be
    // another pass over output of up to megabytes, a tenth of the time of parsing it.
    unsafe { String::from_utf8_unchecked(bytes) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_cut_out() {
        assert_eq!(cut("a<x>b<y>c".into(), &[1..4, 5..8]), "abc");
        assert_eq!(cut("é<x>y".into(), &[2..5, 6..6]), "éy");
        assert_eq!(cut("same".into(), &[]), "same");
    }

    /// A range inside a character would leave a broken one: refused, not returned.
    #[test]
    #[should_panic(expected = "splits a character")]
    fn a_range_inside_a_character_is_refused() {
        let inside_e = Range { start: 0, end: 1 };
        cut("é".into(), &[inside_e]);
    }

    #[test]
    fn lines_are_dropped_trimmed_and_blank_runs_folded() {
        let text = "  banner\nkeep  \n\n\n\nlog line\n\tcode\t\nlast é  ";
        // "  banner" starts at 0, "log line" at 19.
        assert_eq!(clean_lines(text.into(), &[0, 19]), "keep\n\n\tcode\nlast é");
        assert_eq!(clean_lines("\n\n".into(), &[]), "");
        assert_eq!(clean_lines("only\n".into(), &[0]), "");
    }
}
