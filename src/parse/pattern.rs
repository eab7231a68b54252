//! A regex from `backends.toml` that is compiled when first used. Start-up then costs only
//! the patterns of the backend in use: the built-in file defines many presets, and compiling
//! all of their regexes took most of the time before the first backend call. Patterns from
//! the user's files are parsed at load, so a mistake is reported before anything runs, and
//! compiled while the backend runs (`warm`), off the path between start and first output.
//!
//! It also searches faster than the regex alone when every match must start with one literal
//! (`<tool_call>`), and reads the group of a delimited pattern such as the default tool-call
//! one without the regex's capture engine: see `captures_all`.

use std::ops::{Deref, Range};
use std::sync::OnceLock;

use memchr::memmem::Finder;
use regex::{Captures, Regex, RegexBuilder};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind};

pub struct Pattern {
    source: String,
    multi_line: bool,
    /// The regex, or why it did not compile (past the regex crate's size limit, which only
    /// compiling can tell; a syntax error is caught by `checked`).
    compiled: OnceLock<Result<Regex, String>>,
    /// Where a user's pattern was written (`FILE:LINE: backend `x`: key `k``), for that error.
    origin: Option<String>,
    /// How matches are searched for, read from the source when first searched for.
    shortcut: OnceLock<Shortcut>,
}

/// A faster way to the same matches than the regex's own iterators, where the source allows.
#[derive(Clone)]
enum Shortcut {
    /// A match can start with anything: the regex alone.
    None,
    /// Every match starts with this literal.
    Prefix(Box<Finder<'static>>),
    /// A delimited pattern: every match starts with its opening literal too.
    Delimited(Box<Delimited>),
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
            shortcut: OnceLock::new(),
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

    /// Compiles it, and reads how to search it faster, now if not yet done; called while the
    /// backend runs, so that parsing its output starts at once.
    ///
    /// It also searches a short text the pattern matches (see `sample`): that makes the
    /// regex's search cache for this thread and the states of its lazy DFAs along the way a
    /// match takes. Building those states on the first real search took most of the time of
    /// parsing a short reply (a `\d` is a class of dozens of UTF-8 sequences).
    ///
    /// A delimited pattern (see `Delimited`), such as the default tool-call one, is never
    /// compiled: it is searched without its regex. Compiling its `\s` and `.` (classes of
    /// many UTF-8 sequences) cost a CLI turn 0.65M instructions and 400 KB of fresh memory,
    /// about 100 page faults, for a regex no search used.
    pub fn warm(&self) {
        // Warmed already, or searched (`Parsers::failure` warms every pattern again, after
        // the run, to compile those not yet compiled).
        let fresh = self.shortcut.get().is_none();
        let hir = fresh
            .then(|| parser(self.multi_line).parse(&self.source).ok())
            .flatten();
        if fresh {
            let _ = self
                .shortcut
                .set(hir.as_ref().map_or(Shortcut::None, Shortcut::of));
        }
        if matches!(self.shortcut(), Shortcut::Delimited(_)) {
            return;
        }
        let regex = self.regex();
        let mut text = String::new();
        match hir.and_then(|hir| sample(&hir, &mut text)) {
            Some(()) => drop(regex.captures(&text)),
            None if fresh => drop(regex.is_match("")),
            None => {}
        }
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
    ///
    /// The groups are then found by a backtracking engine over the match, a few microseconds
    /// for a tool call of a hundred bytes: most of the cost of parsing a reply. A delimited
    /// pattern (see `Delimited`) skips it: its match ends at the first closing literal, and
    /// its group lies between the runs of its classes, which a substring search and two
    /// trims find.
    pub fn captures_all<'h>(&'h self, text: &'h str) -> Box<dyn Iterator<Item = Groups<'h>> + 'h> {
        match self.shortcut() {
            Shortcut::Delimited(d) => Box::new(jumps(&d.open, text, |at| {
                let (whole, group) = d.match_at(text, at)?;
                let end = whole.end;
                let found = Found::Delimited {
                    whole,
                    group,
                    name: d.name.as_deref(),
                };
                Some((Groups { text, found }, end))
            })),
            Shortcut::Prefix(prefix) => Box::new(jumps(prefix, text, |at| {
                let caps = self.captures_at(text, at)?;
                let end = caps.get(0)?.end();
                Some((Groups::regex(text, caps), end))
            })),
            Shortcut::None => Box::new(self.captures_iter(text).map(|c| Groups::regex(text, c))),
        }
    }

    /// Where every match is, exactly as `Regex::find_iter` finds them; see `captures_all`.
    pub fn find_all<'h>(&'h self, text: &'h str) -> Box<dyn Iterator<Item = Range<usize>> + 'h> {
        match self.shortcut() {
            Shortcut::Delimited(d) => Box::new(jumps(&d.open, text, |at| {
                let (whole, _) = d.match_at(text, at)?;
                let end = whole.end;
                Some((whole, end))
            })),
            Shortcut::Prefix(prefix) => Box::new(jumps(prefix, text, |at| {
                let m = self.find_at(text, at)?;
                Some((m.range(), m.end()))
            })),
            Shortcut::None => Box::new(self.find_iter(text).map(|m| m.range())),
        }
    }

    fn shortcut(&self) -> &Shortcut {
        self.shortcut.get_or_init(|| {
            // A source that does not parse does not compile either: it never matches.
            parser(self.multi_line)
                .parse(&self.source)
                .map_or(Shortcut::None, |hir| Shortcut::of(&hir))
        })
    }
}

impl Shortcut {
    fn of(hir: &Hir) -> Shortcut {
        if let Some(d) = Delimited::of(hir) {
            return Shortcut::Delimited(Box::new(d));
        }
        match required_prefix(hir) {
            Some(p) => Shortcut::Prefix(Box::new(Finder::new(&p).into_owned())),
            None => Shortcut::None,
        }
    }
}

/// Appends to `text` a short text that `hir` matches, unless it has look-around assertions
/// (which are skipped, so the text may not match): each repetition's least count (once for
/// `*` and `?`), each alternation's first branch, each class's first digit or letter, else
/// its first printable ASCII character, else its first character. `None` when that would
/// pass 256 bytes.
fn sample(hir: &Hir, text: &mut String) -> Option<()> {
    if text.len() > 256 {
        return None;
    }
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(literal) => text.push_str(std::str::from_utf8(&literal.0).ok()?),
        HirKind::Class(Class::Unicode(class)) => {
            let ranges = class.ranges();
            let within = |lo: char, hi: char| {
                ranges.iter().find_map(|r| {
                    let c = r.start().max(lo);
                    (c <= r.end().min(hi)).then_some(c)
                })
            };
            let c = within('0', '9')
                .or_else(|| within('a', 'z'))
                .or_else(|| within('A', 'Z'))
                .or_else(|| within(' ', '~'))
                .or_else(|| Some(ranges.first()?.start()))?;
            text.push(c);
        }
        HirKind::Class(Class::Bytes(class)) => {
            let b = class.ranges().first()?.start();
            text.push(b.is_ascii().then_some(char::from(b))?);
        }
        HirKind::Repetition(rep) => {
            for _ in 0..rep.min.max(1).min(rep.max.unwrap_or(u32::MAX)) {
                sample(&rep.sub, text)?;
            }
        }
        HirKind::Capture(capture) => sample(&capture.sub, text)?,
        HirKind::Concat(parts) => {
            for part in parts {
                sample(part, text)?;
            }
        }
        HirKind::Alternation(branches) => sample(branches.first()?, text)?,
    }
    Some(())
}

/// One match and its groups, from the regex or from a delimited pattern's shortcut.
pub struct Groups<'h> {
    text: &'h str,
    found: Found<'h>,
}

enum Found<'h> {
    Regex(Captures<'h>),
    /// The only group of a delimited pattern, and its name if it has one.
    Delimited {
        whole: Range<usize>,
        group: Range<usize>,
        name: Option<&'h str>,
    },
}

impl<'h> Groups<'h> {
    fn regex(text: &'h str, caps: Captures<'h>) -> Self {
        Groups {
            text,
            found: Found::Regex(caps),
        }
    }

    /// Where the whole match is.
    pub fn range(&self) -> Range<usize> {
        match &self.found {
            Found::Regex(caps) => caps.get(0).expect("group 0 is the whole match").range(),
            Found::Delimited { whole, .. } => whole.clone(),
        }
    }

    /// The whole match.
    pub fn as_str(&self) -> &'h str {
        &self.text[self.range()]
    }

    /// The text of the group called `name`, if it took part in the match.
    pub fn name(&self, name: &str) -> Option<&'h str> {
        match &self.found {
            Found::Regex(caps) => caps.name(name).map(|m| m.as_str()),
            Found::Delimited {
                group, name: its, ..
            } => (*its == Some(name)).then(|| &self.text[group.clone()]),
        }
    }

    /// Every group's range in order, the whole match first, as `Captures::iter` gives them.
    pub fn ranges(&self) -> Vec<Option<Range<usize>>> {
        match &self.found {
            Found::Regex(caps) => caps.iter().map(|m| m.map(|m| m.range())).collect(),
            Found::Delimited { whole, group, .. } => vec![Some(whole.clone()), Some(group.clone())],
        }
    }
}

/// A pattern `OPEN W1* (?<g>(?s:.)*?) W2* CLOSE`: two literals, a lazy group of any characters
/// between them, optionally a greedy run of a class (`\s*`) on either side, where neither
/// class holds the first character of CLOSE. The default tool-call pattern is one.
///
/// Such a pattern matches at an OPEN if and only if a CLOSE follows, and then, as the regex
/// engine's leftmost-first rules decide it: the leading run takes all the W1 characters
/// after OPEN (it cannot take any of CLOSE), the lazy group stops at the first CLOSE after
/// them, and gives up to the trailing run the W2 characters right before that CLOSE. Without
/// a CLOSE after an OPEN there is no later match either (a later OPEN would need a later
/// CLOSE), so the search ends there, as the regex's does.
#[derive(Clone)]
struct Delimited {
    open: Finder<'static>,
    leading: Option<ClassUnicode>,
    trailing: Option<ClassUnicode>,
    close: Finder<'static>,
    name: Option<String>,
}

impl Delimited {
    fn of(hir: &Hir) -> Option<Self> {
        let HirKind::Concat(parts) = hir.kind() else {
            return None;
        };
        let (open, middle) = parts.split_first()?;
        let (close, middle) = middle.split_last()?;
        let literal = |hir: &Hir| match hir.kind() {
            HirKind::Literal(lit) => std::str::from_utf8(&lit.0).ok().map(str::to_string),
            _ => None,
        };
        let (open, close) = (literal(open)?, literal(close)?);
        let (group, capture) = middle
            .iter()
            .enumerate()
            .find_map(|(i, h)| match h.kind() {
                HirKind::Capture(capture) => Some((i, capture)),
                _ => None,
            })?;
        let run = |hirs: &[Hir]| -> Option<Option<ClassUnicode>> {
            match hirs {
                [] => Some(None),
                [hir] => star(hir, true).cloned().map(Some),
                _ => None,
            }
        };
        let leading = run(&middle[..group])?;
        let trailing = run(&middle[group + 1..])?;
        let any = ClassUnicodeRange::new('\0', char::MAX);
        if star(&capture.sub, false)?.ranges() != [any] {
            return None;
        }
        let first = close.chars().next()?;
        if [&leading, &trailing]
            .into_iter()
            .flatten()
            .any(|c| holds(c, first))
        {
            return None;
        }
        Some(Delimited {
            open: Finder::new(open.as_bytes()).into_owned(),
            leading,
            trailing,
            close: Finder::new(close.as_bytes()).into_owned(),
            name: capture.name.as_deref().map(str::to_string),
        })
    }

    /// The match that starts with the OPEN at `at`, and its group, if a CLOSE follows.
    fn match_at(&self, text: &str, at: usize) -> Option<(Range<usize>, Range<usize>)> {
        let after_open = &text[at + self.open.needle().len()..];
        let inside =
            after_open.trim_start_matches(|c| self.leading.as_ref().is_some_and(|w| holds(w, c)));
        let start = text.len() - inside.len();
        let close = start + self.close.find(inside.as_bytes())?;
        let group = text[start..close]
            .trim_end_matches(|c| self.trailing.as_ref().is_some_and(|w| holds(w, c)));
        let end = close + self.close.needle().len();
        Some((at..end, start..start + group.len()))
    }
}

/// `C*` (greedy) or `C*?` (lazy) of a Unicode class `C`: that class.
fn star(hir: &Hir, greedy: bool) -> Option<&ClassUnicode> {
    let HirKind::Repetition(rep) = hir.kind() else {
        return None;
    };
    if (rep.min, rep.max, rep.greedy) != (0, None, greedy) {
        return None;
    }
    match rep.sub.kind() {
        HirKind::Class(Class::Unicode(class)) => Some(class),
        _ => None,
    }
}

fn holds(class: &ClassUnicode, c: char) -> bool {
    class
        .ranges()
        .binary_search_by(|r| {
            if r.end() < c {
                std::cmp::Ordering::Less
            } else if r.start() > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
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

/// The bytes every match of `hir` starts with: the longest common prefix of the literals
/// regex-syntax finds a match must begin with. `None` when there is no such prefix (the
/// pattern can start with a wide class, or match the empty string).
fn required_prefix(hir: &Hir) -> Option<Vec<u8>> {
    let literals = Extractor::new().kind(ExtractKind::Prefix).extract(hir);
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
            shortcut: self.shortcut.clone(),
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
        let hir = parser(false).parse(source).ok()?;
        required_prefix(&hir).map(|p| String::from_utf8(p).unwrap())
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

    fn sampled(source: &str) -> Option<String> {
        let hir = parser(true).parse(source).unwrap();
        let mut text = String::new();
        sample(&hir, &mut text).map(|()| text)
    }

    /// The text `warm` searches is one the pattern matches, whatever it is made of.
    #[test]
    fn samples_are_matched_by_their_patterns() {
        for source in [
            r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>",
            r"Tokens: (?P<input>[\d.,]+[kKmM]?) in, (?P<output>[\d.,]+[kKmM]?) out",
            r"(?m)^\u{23fa} (?P<name>\w+)\((?P<args>[^)]*)\)$",
            r"(?i)(?:error|fatal): (?P<message>.+)",
            r"x{3,5}y*z?(?:ab|cd)+[^a-z]\pL\p{Lu}\S",
            r"(?-u:[\x00-\x7f])\W",
        ] {
            let text = sampled(source).unwrap_or_else(|| panic!("no sample for {source}"));
            let regex = build(source, true).unwrap();
            assert!(regex.is_match(&text), "{source} does not match {text:?}");
        }
        assert_eq!(
            sampled(r"Tokens: (?P<input>[\d.,]+[kKmM]?) in").as_deref(),
            Some("Tokens: 0k in"),
            "digits first, then letters"
        );
        assert_eq!(sampled("a{300}"), None, "too long");
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

    /// The default tool-call pattern is searched without its regex, so warming it compiles
    /// nothing; its matches are still the regex's.
    #[test]
    fn a_delimited_pattern_is_never_compiled() {
        let source = r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>";
        let (p, _) = Pattern::checked(source, false, "f:3".into()).unwrap();
        p.warm();
        p.warm();
        assert!(p.compiled.get().is_none(), "compiled");
        assert!(p.failure().is_none());
        let text = "a <tool_call> {} </tool_call> b <tool_call>[]</tool_call>";
        let found: Vec<_> = p.captures_all(text).map(|g| g.name("json")).collect();
        let spans: Vec<_> = p.find_all(text).collect();
        assert!(p.compiled.get().is_none(), "compiled to search");
        assert_eq!(found, [Some("{}"), Some("[]")]);
        let regex = build(source, false).unwrap();
        let want: Vec<_> = regex.find_iter(text).map(|m| m.range()).collect();
        assert_eq!(spans, want);
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

    fn delimited(source: &str) -> bool {
        Delimited::of(&parser(false).parse(source).unwrap()).is_some()
    }

    #[test]
    fn delimited_patterns_are_recognised() {
        assert!(delimited(r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>"));
        assert!(delimited(r"(?s)<tool_call>(?P<json>.*?)</tool_call>"));
        assert!(delimited(r"(?s)<c>[ x]*(.*?)\s*</c>"));
        // Not any character, greedy, or a class that can take the closing literal's start.
        assert!(!delimited(r"<tool_call>\s*(?P<json>.*?)\s*</tool_call>"));
        assert!(!delimited(r"(?s)<tool_call>(?P<json>.*)</tool_call>"));
        assert!(!delimited(
            r"(?s)<tool_call>\s*(?P<json>.*?)[\s<]*</tool_call>"
        ));
        assert!(!delimited(r"(?is)<tool_call>(?P<json>.*?)</tool_call>"));
        assert!(!delimited(r"(?s)<a>(?P<json>.*?)\s*(?:</a>|\z)"));
    }

    #[test]
    fn a_delimited_group_leaves_the_white_space_around_it_out() {
        let p = Pattern::compile(r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>", false).unwrap();
        let text =
            "<tool_call>\u{3000} {}\n \u{a0}</tool_call> <tool_call> </tool_call><tool_call>";
        let found: Vec<(&str, Option<&str>)> = p
            .captures_all(text)
            .map(|c| (c.as_str(), c.name("json")))
            .collect();
        assert_eq!(
            found,
            [
                ("<tool_call>\u{3000} {}\n \u{a0}</tool_call>", Some("{}")),
                ("<tool_call> </tool_call>", Some(""))
            ]
        );
        assert_eq!(p.captures_all(text).next().unwrap().name("args"), None);
    }

    #[test]
    fn unterminated_and_repeated_openings_are_searched_past() {
        let p = Pattern::compile(r"(?s)<tool_call>(?P<json>.*?)</tool_call>", false).unwrap();
        let text = "<tool_call><tool_call>a</tool_call> <tool_call>b";
        let found: Vec<&str> = p
            .captures_all(text)
            .map(|c| c.name("json").unwrap())
            .collect();
        assert_eq!(found, ["<tool_call>a"]);
        let spans: Vec<(usize, usize)> = p.find_all(text).map(|m| (m.start, m.end)).collect();
        assert_eq!(spans, [(0, 35)]);
    }
}
