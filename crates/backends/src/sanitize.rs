//! Makes any text safe for append-only output: no escape byte, no bare carriage return, no
//! other control character, whatever a backend or a tool printed.

use std::borrow::Cow;

/// Keeps newlines and tabs; turns carriage returns into newlines (a lone `\r` would redraw
/// the line) and drops every other C0/C1 control character and DEL.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            c if is_unsafe(c) => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn is_unsafe(c: char) -> bool {
    c != '\n' && c != '\t' && (c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_escape_or_bare_cr_survives() {
        let dirty = "a\x1b[31mred\x1b[0m\r\nb\rc\x07\u{9b}d\te\x7f";
        let clean = sanitize(dirty);
        assert_eq!(clean, "a[31mred[0m\nb\nc\u{0}d\te".replace('\u{0}', ""));
        assert!(!clean.contains('\x1b') && !clean.contains('\r'));
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(sanitize("plain\ttext\n"), Cow::Borrowed(_)));
    }
}
