//! A regex from `backends.toml` that is compiled when first used. Start-up then costs only
//! the patterns of the backend in use: the built-in file defines many presets, and compiling
//! all of their regexes took most of the time before the first backend call. Patterns from
//! the user's files are parsed at load, so a mistake is reported before anything runs, and
//! compiled while the backend runs (`warm`), off the path between start and first output.
//!
//! It also searches faster than the regex alone when every match must start with one literal
//! (`<tool_call>`): see `captures_all`.

use std::ops::Deref;
use std::sync::OnceLock;

use memchr::memmem::Finder;
use regex::{Captures, Match, Regex, RegexBuilder};
use regex_syntax::hir::literal::{ExtractKind, Extractor};

pub struct Pattern {
    source: String,
    multi_line: bool,
    /// The regex, or why it did not compile (past the regex crate's size limit, which only
    /// compiling can tell; a syntax error is caught by `checked`).
    compiled: OnceLock<Result<Regex, String>>,
    /// Where a user's pattern was written (`FILE:LINE: backend `x`: key `k``), for that error.
    origin: Option<String>,
    /// What every match starts with, read from the source when first searched for.
    prefix: OnceLock<Option<Finder<'static>>>,
}

impl Pattern {
    /// Compiled on first use. Only for patterns known to compile (the built-in file's, which
    /// a unit test compiles).
    pub fn lazy(source: &str, multi_line: bool) -> Self {
        Pattern {
            source: source.to_string(),
            multi_line,
            compiled: OnceLock::new(),
            origin: None,
            prefix: OnceLock::new(),
        }
    }

    /// Compiles now; the error is the regex crate's.
    pub fn compile(source: &str, multi_line: bool) -> Result<Self, regex::Error> {
        let pattern = Pattern::lazy(source, multi_line);
        let regex = build(source, multi_line)?;
        let _ = pattern.compiled.set(Ok(regex));
        Ok(pattern)
    }

    /// Parsed now, with the parser and flags the regex crate itself uses, so every syntax
    /// error is the one compiling would give (returned as its text); compiled when first used
    /// or warmed. Returns the pattern and the names of its groups.
    pub fn checked(
        source: &str,
        multi_line: bool,
        origin: String,
    ) -> Result<(Self, Vec<String>), String> {
        let hir = parser(multi_line)
            .parse(source)
            .map_err(|e| e.to_string())?;
        let mut names = Vec::new();
        group_names(&hir, &mut names);
        let mut pattern = Pattern::lazy(source, multi_line);
        pattern.origin = Some(origin);
        Ok((pattern, names))
    }

    /// Compiles it, and finds the literal its matches start with, now if not yet done;
    /// called while the backend runs, so that parsing its output starts at once.
    pub fn warm(&self) {
        self.regex();
        self.prefix();
    }

    /// Why it could not be compiled, with where it was written; `None` before it was tried.
    pub fn failure(&self) -> Option<String> {
        let e = self.compiled.get()?.as_ref().err()?;
        let origin = self.origin.as_deref().unwrap_or("built-in backends.toml");
        Some(format!("{origin}: invalid regex: {e}"))
    }

    /// The regex; one that never matches if it could not be compiled (see `failure`).
    fn regex(&self) -> &Regex {
        let compiled = self
            .compiled
            .get_or_init(|| build(&self.source, self.multi_line).map_err(|e| e.to_string()));
        compiled.as_ref().unwrap_or_else(|_| never())
    }

    /// Every match with its groups, exactly as `Regex::captures_iter` yields them.
    ///
    /// The regex engine finds a match by scanning forward to its end, then backwards from
    /// there to where the search began; for a pattern such as `<tool_call>.*?</tool_call>`
    /// that backward scan covers all the text since the previous match, and it is most of
    /// the cost. When every match must start with one literal, each search here begins at
    /// that literal's next occurrence (found with memchr's SIMD substring search) instead:
    /// no match can start before it, so the result is the same and the backward scan only
    /// covers the match.
    pub fn captures_all<'h>(
        &'h self,
        text: &'h str,
    ) -> Box<dyn Iterator<Item = Captures<'h>> + 'h> {
        match self.prefix() {
            Some(prefix) => Box::new(jumps(prefix, text, |at| {
                let caps = self.captures_at(text, at)?;
                let end = caps.get(0)?.end();
                Some((caps, end))
            })),
            None => Box::new(self.captures_iter(text)),
        }
    }

    /// Every match, exactly as `Regex::find_iter` yields them; see `captures_all`.
    pub fn find_all<'h>(&'h self, text: &'h str) -> Box<dyn Iterator<Item = Match<'h>> + 'h> {
        match self.prefix() {
            Some(prefix) => Box::new(jumps(prefix, text, |at| {
                let m = self.find_at(text, at)?;
                Some((m, m.end()))
            })),
            None => Box::new(self.find_iter(text)),
        }
    }

    fn prefix(&self) -> Option<&Finder<'static>> {
        self.prefix
            .get_or_init(|| {
                required_prefix(&self.source, self.multi_line).map(|p| Finder::new(&p).into_owned())
            })
            .as_ref()
    }
}

/// The matches `search(at)` finds, each search starting at the next occurrence of `prefix` at
/// or after the end of the previous match. `search` returns a match and its end; matches are
/// never empty (they start with `prefix`), so the search always moves on.
fn jumps<'h, T>(
    prefix: &'h Finder<'static>,
    text: &'h str,
    search: impl Fn(usize) -> Option<(T, usize)> + 'h,
) -> impl Iterator<Item = T> + 'h {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + prefix.find(text.as_bytes().get(from..)?)?;
        let (found, end) = search(at)?;
        from = end;
        Some(found)
    })
}

/// The bytes every match of `source` starts with: the longest common prefix of the literals
/// regex-syntax finds a match must begin with. `None` when there is no such prefix (the
/// pattern can start with a wide class, or match the empty string) or when the source does
/// not parse (then the regex does not compile either).
fn required_prefix(source: &str, multi_line: bool) -> Option<Vec<u8>> {
    let hir = parser(multi_line).parse(source).ok()?;
    let literals = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let prefix = literals.longest_common_prefix()?;
    (!prefix.is_empty()).then(|| prefix.to_vec())
}

fn build(source: &str, multi_line: bool) -> Result<Regex, regex::Error> {
    RegexBuilder::new(source).multi_line(multi_line).build()
}

/// The parser the regex crate uses, with its defaults and the flag `build` sets.
fn parser(multi_line: bool) -> regex_syntax::Parser {
    regex_syntax::ParserBuilder::new()
        .multi_line(multi_line)
        .build()
}

/// Appends the names of the named groups in `hir`.
fn group_names(hir: &regex_syntax::hir::Hir, names: &mut Vec<String>) {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Capture(capture) => {
            names.extend(capture.name.as_deref().map(str::to_string));
            group_names(&capture.sub, names);
        }
        HirKind::Repetition(repetition) => group_names(&repetition.sub, names),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => {
            for sub in subs {
                group_names(sub, names);
            }
        }
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => {}
    }
}

/// A regex that matches nothing, standing in for one that did not compile.
fn never() -> &'static Regex {
    static NEVER: OnceLock<Regex> = OnceLock::new();
    NEVER.get_or_init(|| Regex::new(r"[^\s\S]").expect("an empty class compiles"))
}

impl Deref for Pattern {
    type Target = Regex;

    fn deref(&self) -> &Regex {
        self.regex()
    }
}

/// For a regex built with the default flags (as `Regex::new` builds them): its source is read
/// again, with those flags, to find what every match starts with.
impl From<Regex> for Pattern {
    fn from(regex: Regex) -> Self {
        let pattern = Pattern::lazy(regex.as_str(), false);
        let _ = pattern.compiled.set(Ok(regex));
        pattern
    }
}

impl Clone for Pattern {
    fn clone(&self) -> Self {
        Pattern {
            source: self.source.clone(),
            multi_line: self.multi_line,
            compiled: self.compiled.clone(),
            origin: self.origin.clone(),
            prefix: self.prefix.clone(),
        }
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

    fn prefix(source: &str) -> Option<String> {
        required_prefix(source, false).map(|p| String::from_utf8(p).unwrap())
    }

    #[test]
    fn the_literal_every_match_starts_with() {
        let call = r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>";
        assert_eq!(prefix(call).as_deref(), Some("<tool_call>"));
        assert_eq!(
            prefix(r"(?m)^\u{23fa} (?P<name>\w+)").as_deref(),
            Some("\u{23fa} ")
        );
        // Alternatives and case-insensitive letters leave their common start.
        assert_eq!(prefix("<(?:tool|function)_call>").as_deref(), Some("<"));
        assert_eq!(prefix("(?i)<tool_call>").as_deref(), Some("<"));
    }

    #[test]
    fn checked_patterns_give_their_groups_and_compile_when_warmed() {
        let (p, names) = Pattern::checked(
            r"(?P<input>\d+) in(?:, (?P<output>\d+)|(x)*)",
            true,
            "f:1".into(),
        )
        .unwrap();
        assert_eq!(names, ["input", "output"]);
        assert!(p.compiled.get().is_none(), "compiled before use");
        p.warm();
        assert!(p.failure().is_none());
        assert_eq!(&p.captures("12 in, 3").unwrap()["output"], "3");
        let e = Pattern::checked("(?P<input>[", false, "f:1".into()).unwrap_err();
        assert!(e.to_string().contains("unclosed character class"), "{e}");
    }

    #[test]
    fn a_pattern_too_big_to_compile_matches_nothing_and_says_why() {
        let (p, _) = Pattern::checked(r"\w{1000}", false, "f:2: backend `x`".into()).unwrap();
        assert!(p.failure().is_none(), "not tried yet");
        assert!(!p.is_match("abc"));
        let failure = p.failure().unwrap();
        assert!(
            failure.starts_with("f:2: backend `x`: invalid regex: ")
                && failure.contains("size limit"),
            "{failure}"
        );
    }

    #[test]
    fn no_prefix_when_a_match_can_start_anywhere() {
        assert_eq!(prefix(r"\s*<tool_call>"), None);
        assert_eq!(prefix("(?i)tool"), None);
        assert_eq!(prefix("a|b"), None);
        assert_eq!(prefix("x*"), None);
        assert_eq!(prefix("(unclosed"), None);
    }

    #[test]
    fn unterminated_and_repeated_openings_are_searched_past() {
        let p = Pattern::compile(r"(?s)<tool_call>(?P<json>.*?)</tool_call>", false).unwrap();
        let text = "<tool_call><tool_call>a</tool_call> <tool_call>b";
        let found: Vec<&str> = p
            .captures_all(text)
            .map(|c| c.name("json").unwrap().as_str())
            .collect();
        assert_eq!(found, ["<tool_call>a"]);
        let spans: Vec<(usize, usize)> = p.find_all(text).map(|m| (m.start(), m.end())).collect();
        assert_eq!(spans, [(0, 35)]);
    }
}
