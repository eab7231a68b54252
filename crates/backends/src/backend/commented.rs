//! JSON with comments, as agents' settings files are written (qwen and gemini read theirs
//! through `strip-json-comments`: `//` and `/* */` outside strings). A guard merged over such
//! a file must read it as the agent does, or the agent could not start. No crate in the
//! lock file reads it, and this much does not earn a dependency.

/// `text` with its comments blanked out (newlines kept, so a JSON error's line and column
/// still point into the file); strings are left alone, escapes included.
pub fn uncommented(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                while let Some(&next) = chars.peek() {
                    if next == '\n' {
                        break;
                    }
                    out.push(' ');
                    chars.next();
                }
                out.push(' ');
            }
            ('/', Some('*')) => {
                chars.next();
                out.push_str("  ");
                let mut last = ' ';
                for next in chars.by_ref() {
                    out.push(if next == '\n' { '\n' } else { ' ' });
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::uncommented;
    use serde_json::{json, Value};

    #[test]
    fn comments_go_and_strings_stay() {
        let text = "// head\n{\n  \"a\": \"x // not a comment /* nor this */\", /* gone */\n  \
                    \"b\": \"q\\\"//\", // tail\n  /* many\n lines */ \"c\": 1\n}\n";
        let value: Value = serde_json::from_str(&uncommented(text)).unwrap();
        assert_eq!(
            value,
            json!({ "a": "x // not a comment /* nor this */", "b": "q\"//", "c": 1 })
        );
        // Lines are kept: an error still says where.
        assert_eq!(uncommented(text).lines().count(), text.lines().count());
        let e = serde_json::from_str::<Value>(&uncommented("// one\n{ oops }")).unwrap_err();
        assert_eq!(e.line(), 2);
    }
}
