//! Which characters can hide text from the person reading it: control characters (an escape
//! sequence redraws the screen, a newline fakes a line), and the ones that show nothing or
//! change how what follows is shown (zero-width and odd spaces, bidirectional overrides, the
//! byte-order mark). Every place that shows untrusted text as it will be used (the approval
//! question on a terminal and on Telegram, import-spec's comments and messages) escapes the
//! same set, defined here once.

/// Whether `c` must be shown as an escape, not as itself.
pub fn hides(c: char) -> bool {
    c.is_control() || invisible(c)
}

/// Characters that show nothing, or change how what follows is shown: C1 controls, odd
/// spaces, zero-width characters, bidirectional overrides and isolates (U+202A-202E,
/// U+2066-2069), the byte-order mark.
pub fn invisible(c: char) -> bool {
    matches!(c as u32,
        0x80..=0x9f | 0xa0 | 0xad | 0x115f | 0x1160 | 0x180e | 0x2000..=0x200f
        | 0x2028..=0x202f | 0x205f..=0x206f | 0x3000 | 0x3164 | 0xfe00..=0xfe0f | 0xfeff
        | 0xfff9..=0xfffb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_zero_widths_and_controls_hide() {
        for c in [
            '\u{202e}', '\u{2066}', '\u{2069}', '\u{200b}', '\u{feff}', '\x1b', '\n',
        ] {
            assert!(hides(c), "{c:?}");
        }
        for c in ['a', ' ', 'é', '中', '\u{2420}'] {
            assert!(!hides(c), "{c:?}");
        }
    }
}
