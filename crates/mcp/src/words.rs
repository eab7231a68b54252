//! What of a server's own words agent-loop takes: they reach every prompt, the display and
//! the `--allow` rules. Tool names only as MCP allows them (a line break or an escape in one
//! would be a line or a sequence of the server's choosing), descriptions as plain text.

use serde_json::Value;

/// Whether MCP allows `name` for a tool: 1 to 128 of `A-Z a-z 0-9 _ - .` (the specification's
/// tool names).
pub fn allowed_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// A name MCP does not allow, for a note: quoted with its escapes, its start only when long.
pub fn shown_name(name: &str) -> String {
    const SHOWN: usize = 40;
    match name.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{:?}… ({} characters)", &name[..end], name.chars().count()),
        None => format!("{name:?}"),
    }
}

/// A server's text as plain text for a prompt: line breaks and tabs kept (a lone carriage
/// return dropped), odd spaces made spaces, and every other character that hides or redraws
/// text left out (escape sequences' ESC, bidirectional overrides, zero-width characters).
pub fn plain(text: &str) -> String {
    use agent_loop_protocol::shown::hides;
    text.chars()
        .filter_map(|c| match c {
            '\n' | '\t' => Some(c),
            '\r' => None,
            c if !hides(c) => Some(c),
            c if c.is_whitespace() => Some(' '),
            _ => None,
        })
        .collect()
}

/// [`plain`] on every `description` and `title` of a schema, which the prompt shows too;
/// names and values the server reads back are left as they are.
pub fn plain_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(text) if key == "description" || key == "title" => {
                        *text = plain(text);
                    }
                    other => plain_descriptions(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(plain_descriptions),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_outside_mcps_are_refused_and_shown_escaped() {
        for good in ["ok", "a.b-c_D9", &"x".repeat(128)] {
            assert!(allowed_name(good), "{good}");
        }
        let long = "y".repeat(300);
        for bad in [
            "",
            "new\nline",
            "esc\x1b[31m",
            "a\u{202e}b",
            "star*",
            "safe:x",
            "é",
            &long,
        ] {
            assert!(!allowed_name(bad), "{bad:?}");
        }
        assert_eq!(shown_name("a\u{202e}b\x1b"), "\"a\\u{202e}b\\u{1b}\"");
        assert_eq!(
            shown_name(&long),
            format!("\"{}\"… (300 characters)", "y".repeat(40))
        );
    }

    #[test]
    fn descriptions_are_plain_text() {
        assert_eq!(
            plain("Tool \x1b[2J\u{202e}red\u{200b}\r\nnext\u{a0}line\tend\u{7}"),
            "Tool [2Jred\nnext line\tend"
        );
        let mut schema =
            json!({"properties": {"p": {"description": "a\u{202e}b", "enum": ["x\u{202e}"]}}});
        plain_descriptions(&mut schema);
        assert_eq!(
            schema,
            json!({"properties": {"p": {"description": "ab", "enum": ["x\u{202e}"]}}})
        );
    }
}
