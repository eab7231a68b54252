//! The name a tool goes by in an HTTP API's request (`^[a-zA-Z0-9_-]{1,64}$`), which an MCP
//! tool's `mcp.<server>.<tool>` does not fit. It is here, below the backends, so that the
//! [`Registry`](crate::Registry) can keep those names unique: two tools under one API name
//! would make the request invalid, and the model's call would run the first of them.

use std::borrow::Cow;

/// `name` as the APIs accept it: `.` becomes `__`, anything else outside the set `_`, and
/// the result is cut at 64 characters.
pub fn api_name(name: &str) -> Cow<'_, str> {
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.len() <= 64 && name.chars().all(ok) {
        return name.into();
    }
    let mapped: String = name
        .chars()
        .map(|c| match c {
            '.' => "__".to_string(),
            c if ok(c) => c.to_string(),
            _ => "_".to_string(),
        })
        .collect();
    mapped.chars().take(64).collect::<String>().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_become_double_underscores_and_long_names_are_cut() {
        assert_eq!(api_name("bash"), "bash");
        assert_eq!(api_name("mcp.files.read_file"), "mcp__files__read_file");
        assert_eq!(api_name("mcp.a b.c"), "mcp__a_b__c");
        // Different names can meet: the registry refuses the second.
        assert_eq!(api_name("mcp.s.a.b"), api_name("mcp.s.a__b"));
        let long = format!("mcp.s.{}", "x".repeat(100));
        assert_eq!(api_name(&long).len(), 64);
        assert_eq!(api_name(&long), api_name(&format!("{long}y")));
    }
}
