//! Naming a spec's positional regex groups the way agent-loop's parsers read them.

use std::fmt::Write as _;

/// `pattern` with its unnamed capturing groups named `names[0]`, `names[1]`, ... in order;
/// groups past the names, and groups already named, are left alone.
pub fn name_groups(pattern: &str, names: &[&str]) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut names = names.iter();
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '[' if !in_class => {
                in_class = true;
                // `]` right after `[` or `[^` is a literal.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                if chars.peek() == Some(&']') {
                    out.push(chars.next().unwrap_or(']'));
                }
            }
            ']' if in_class => in_class = false,
            '(' if !in_class && chars.peek() != Some(&'?') => {
                if let Some(name) = names.next() {
                    let _ = write!(out, "?P<{name}>");
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positional_groups_are_named_in_order() {
        assert_eq!(
            name_groups(r"Tokens: (\d+) input \+ (\d+) output", &["input", "output"]),
            r"Tokens: (?P<input>\d+) input \+ (?P<output>\d+) output"
        );
        assert_eq!(
            name_groups(r"\((?:x)[(](\w+)(?P<k>.)(a)(b)", &["name", "args"]),
            r"\((?:x)[(](?P<name>\w+)(?P<k>.)(?P<args>a)(b)"
        );
    }
}
