//! A regex from `backends.toml`, compiled when first used, while its backend runs: a run pays
//! only for the backend it uses, and not before the agent starts. A user's pattern is checked
//! when its file is loaded all the same ([`crate::check`]), so that every mistake (bad syntax,
//! or a pattern past the regex crate's size limit) is reported before anything runs; the
//! built-in presets' are compiled by a unit test.

use std::ops::{Deref, Range};
use std::sync::OnceLock;

use crate::check::{once_per_pattern, PerPattern};

use regex::{Captures, Regex, RegexBuilder};

#[derive(Clone)]
pub struct Pattern {
    source: String,
    multi_line: bool,
    compiled: OnceLock<Regex>,
}

impl Pattern {
    /// Compiled on first use. Only for patterns known to compile (the built-in file's, which
    /// a unit test compiles).
    pub fn lazy(source: &str, multi_line: bool) -> Self {
        Pattern {
            source: source.to_string(),
            multi_line,
            compiled: OnceLock::new(),
        }
    }

    /// Compiles now; the error is the regex crate's.
    pub fn compile(source: &str, multi_line: bool) -> Result<Self, regex::Error> {
        let pattern = Pattern::lazy(source, multi_line);
        let _ = pattern.compiled.set(build(source, multi_line)?);
        Ok(pattern)
    }

    /// For a pattern from the user's files: checks it now (its syntax; one that may be too
    /// big is compiled now) and returns it with the names of its groups, or the regex crate's
    /// error.
    pub fn checked(source: &str, multi_line: bool) -> Result<(Self, Vec<String>), regex::Error> {
        let checked = crate::check::check(source, multi_line)?;
        let pattern = match checked.compile_now {
            true => Pattern::compile(source, multi_line)?,
            false => Pattern::lazy(source, multi_line),
        };
        Ok((pattern, checked.names))
    }

    /// Compiles it now if not yet done; called while the backend runs, so that parsing its
    /// output starts at once.
    pub fn warm(&self) {
        self.regex();
    }

    fn regex(&self) -> &Regex {
        self.compiled.get_or_init(|| {
            build(&self.source, self.multi_line)
                .expect("built-in patterns are compiled by a test, a user's checked at load")
        })
    }

    /// Every match with its groups.
    pub fn captures_all<'h>(&'h self, text: &'h str) -> impl Iterator<Item = Groups<'h>> + 'h {
        self.regex().captures_iter(text).map(Groups)
    }

    /// Where every match is.
    pub fn find_all<'h>(&'h self, text: &'h str) -> impl Iterator<Item = Range<usize>> + 'h {
        self.regex().find_iter(text).map(|m| m.range())
    }
}

/// One match and its groups.
pub struct Groups<'h>(Captures<'h>);

impl<'h> Groups<'h> {
    /// Where the whole match is.
    pub fn range(&self) -> Range<usize> {
        self.whole().range()
    }

    /// The whole match.
    pub fn as_str(&self) -> &'h str {
        self.whole().as_str()
    }

    fn whole(&self) -> regex::Match<'h> {
        self.0.get(0).expect("group 0 is the whole match")
    }

    /// The text of the group called `name`, if it took part in the match.
    pub fn name(&self, name: &str) -> Option<&'h str> {
        self.0.name(name).map(|m| m.as_str())
    }

    /// Every group's range in order, the whole match first.
    pub fn ranges(&self) -> Vec<Option<Range<usize>>> {
        self.0.iter().map(|m| m.map(|m| m.range())).collect()
    }
}

/// Compiles, once per distinct pattern (see `check::once_per_pattern`).
fn build(source: &str, multi_line: bool) -> Result<Regex, regex::Error> {
    static CACHE: PerPattern<Regex> = OnceLock::new();
    once_per_pattern(&CACHE, source, multi_line, |source, multi_line| {
        RegexBuilder::new(source)
            .multi_line(multi_line)
            .size_limit(crate::check::SIZE_LIMIT)
            .build()
    })
}

impl Deref for Pattern {
    type Target = Regex;

    fn deref(&self) -> &Regex {
        self.regex()
    }
}

impl From<Regex> for Pattern {
    fn from(regex: Regex) -> Self {
        let pattern = Pattern::lazy(regex.as_str(), false);
        let _ = pattern.compiled.set(regex);
        pattern
    }
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pattern({:?})", self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_patterns_give_their_groups_and_compile_when_used() {
        let (p, names) =
            Pattern::checked(r"(?P<input>\d+) in(?:, (?P<output>\d+)|(x)*)", true).unwrap();
        assert_eq!(names, ["input", "output"]);
        assert!(p.compiled.get().is_none(), "not compiled at load");
        assert_eq!(&p.captures("12 in, 3").unwrap()["output"], "3");
        let e = Pattern::checked("(?P<input>[", false).unwrap_err();
        assert!(e.to_string().contains("unclosed character class"), "{e}");
    }

    /// Too big to compile is an error at load, like a syntax error.
    #[test]
    fn a_pattern_too_big_to_compile_is_refused_at_once() {
        let e = Pattern::checked(r"\w{1000}", false).unwrap_err();
        assert!(e.to_string().contains("size limit"), "{e}");
    }

    #[test]
    fn lazy_patterns_compile_when_first_searched() {
        let p = Pattern::lazy(r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>", false);
        assert!(p.compiled.get().is_none());
        let text = "a <tool_call> {} </tool_call> b <tool_call>[]</tool_call>";
        let found: Vec<_> = p.captures_all(text).map(|g| g.name("json")).collect();
        assert_eq!(found, [Some("{}"), Some("[]")]);
        let spans: Vec<_> = p.find_all(text).collect();
        assert_eq!(spans, [2..29, 32..57]);
        let first = p.captures_all(text).next().unwrap();
        assert_eq!(first.as_str(), "<tool_call> {} </tool_call>");
        assert_eq!(first.ranges(), [Some(2..29), Some(14..16)]);
    }
}
