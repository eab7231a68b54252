//! Checking a user's pattern without compiling it. Compiling was the costliest step of a
//! start (a pattern's first Unicode class, `\d` is one, makes the regex crate fill a table of
//! a third of a megabyte), and a pattern of `backends.toml` is needed only once its backend's
//! output is parsed. But a mistake in it should be reported when the file is loaded, with its
//! file and line, before anything runs. Both are kept: the pattern is parsed here by the
//! regex crate's own parser (every syntax error, in the regex crate's words, and the names of
//! its groups), and [`compiled_size_bound`] bounds what compiling it would take; a pattern
//! whose bound reaches the regex crate's size limit is compiled at once, so that one too
//! big is refused at load as before.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex_syntax::hir::{Class, Hir, HirKind};

/// The regex crate's default limit on a compiled pattern's size (`RegexBuilder::size_limit`),
/// which `pattern::build` keeps.
pub(crate) const SIZE_LIMIT: usize = 10 * (1 << 20);

/// What a pattern checked without compiling gave: its groups' names, and whether it must be
/// compiled now (its size bound reaches [`SIZE_LIMIT`]).
#[derive(Clone)]
pub(crate) struct Checked {
    pub names: Vec<String>,
    pub compile_now: bool,
}

/// Parses `source` as the regex crate does (`multi_line` as `RegexBuilder::multi_line`); a
/// syntax error is the regex crate's error, word for word. Once per distinct pattern, as
/// compiling is.
pub(crate) fn check(source: &str, multi_line: bool) -> Result<Checked, regex::Error> {
    static CACHE: PerPattern<Checked> = OnceLock::new();
    once_per_pattern(&CACHE, source, multi_line, parse)
}

/// What was made of each distinct pattern (its source, and whether `^` and `$` match at lines).
pub(crate) type PerPattern<T> = OnceLock<Mutex<HashMap<(String, bool), T>>>;

/// `make` of a pattern, once per distinct pattern: a config that repeats one pattern over
/// thousands of backends (generated files do) pays once, and the copies share what was made
/// (a `Regex` clone is a reference count). Failures are not kept.
pub(crate) fn once_per_pattern<T: Clone>(
    cache: &PerPattern<T>,
    source: &str,
    multi_line: bool,
    make: impl FnOnce(&str, bool) -> Result<T, regex::Error>,
) -> Result<T, regex::Error> {
    let cache = cache.get_or_init(Default::default);
    let key = (source.to_string(), multi_line);
    if let Some(made) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(made);
    }
    let made = make(source, multi_line)?;
    if let Ok(mut c) = cache.lock() {
        c.insert(key, made.clone());
    }
    Ok(made)
}

fn parse(source: &str, multi_line: bool) -> Result<Checked, regex::Error> {
    let hir = regex_syntax::ParserBuilder::new()
        .multi_line(multi_line)
        .build()
        .parse(source)
        .map_err(|e| regex::Error::Syntax(e.to_string()))?;
    let mut names = Vec::new();
    group_names(&hir, &mut names);
    Ok(Checked {
        names,
        compile_now: compiled_size_bound(&hir) >= SIZE_LIMIT,
    })
}

/// The names of the groups in their order, as `Regex::capture_names` gives them.
fn group_names(hir: &Hir, names: &mut Vec<String>) {
    match hir.kind() {
        HirKind::Capture(capture) => {
            if let Some(name) = &capture.name {
                names.push(name.to_string());
            }
            group_names(&capture.sub, names);
        }
        HirKind::Repetition(repetition) => group_names(&repetition.sub, names),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => {
            subs.iter().for_each(|sub| group_names(sub, names))
        }
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => {}
    }
}

/// More bytes than compiling the pattern into one automaton (the regex crate builds a forward
/// and a reverse one, each held to the limit) can take, with room to spare: each piece at the
/// most the regex crate was measured to spend on it, twice over, times the copies a
/// repetition makes. Measured with regex-automata 0.4 at the edge of its limit: a literal
/// byte 32 bytes, a byte range (or a Unicode one within ASCII) 72, a Unicode range beyond
/// ASCII up to 500 (`.`, whose two ranges span every length of UTF-8; `\w` spends 65 a
/// range). The test below checks the bound against the crate: the largest patterns it lets
/// wait still compile.
fn compiled_size_bound(hir: &Hir) -> usize {
    const STATE: usize = 2 * 72;
    const UNICODE_RANGE: usize = 2 * 512;
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => STATE,
        HirKind::Literal(literal) => STATE.saturating_mul(literal.0.len()),
        HirKind::Class(Class::Bytes(class)) => STATE.saturating_mul(class.ranges().len() + 1),
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .map(|range| match range.end().is_ascii() {
                true => STATE,
                false => UNICODE_RANGE,
            })
            .fold(STATE, usize::saturating_add),
        HirKind::Capture(capture) => compiled_size_bound(&capture.sub).saturating_add(2 * STATE),
        HirKind::Repetition(repetition) => {
            // `x{n,m}` is m copies of `x`; `x{n,}` is n copies and a loop over one more.
            let copies = repetition.max.unwrap_or(repetition.min.saturating_add(1));
            compiled_size_bound(&repetition.sub)
                .saturating_mul(copies.max(1) as usize)
                .saturating_add(STATE)
        }
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs
            .iter()
            .map(compiled_size_bound)
            .fold(STATE, usize::saturating_add),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(source: &str) -> usize {
        compiled_size_bound(&regex_syntax::Parser::new().parse(source).unwrap())
    }

    #[test]
    fn syntax_errors_are_the_regex_crates() {
        let bad = String::from("(?P<input>[");
        let ours = check(&bad, false).err().unwrap().to_string();
        let theirs = regex::Regex::new(&bad).unwrap_err().to_string();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn group_names_come_in_order() {
        let checked = check(
            r"(?P<input>\d+) in(?:, (?P<output>\d+)|(x)*)(?<total>y)?",
            true,
        );
        assert_eq!(checked.unwrap().names, ["input", "output", "total"]);
    }

    #[test]
    fn small_patterns_wait_and_huge_ones_compile_now() {
        let tokens = r"Tokens: (?P<input>[\d.,]+[kKmM]?) in, (?P<output>[\d.,]+[kKmM]?) out";
        assert!(!check(tokens, true).unwrap().compile_now);
        assert!(check(r"\w{1000}", false).unwrap().compile_now);
    }

    /// Every pattern the bound lets wait compiles: for each shape, the largest repetition
    /// count whose bound is under the limit is compiled by the regex crate itself. The shapes
    /// are the costliest per piece that were measured (see `compiled_size_bound`).
    #[test]
    fn the_largest_patterns_that_wait_still_compile() {
        for shape in [
            r"\w{N}",
            r"\d{N}",
            r"\D{N}",
            r".{N}",
            r"(?s).{N}",
            r"(?i)k{N}",
            r"[a-z]{N}",
            r"(?:\w+\s*){N}",
            r"(?:(?:ab){N})+",
            r"(?:[\d.,]+[kKmM]?){N}",
        ] {
            let at = |n: u32| shape.replace('N', &n.to_string());
            let (mut waits, mut too_big) = (1u32, 2u32);
            while bound(&at(too_big)) < SIZE_LIMIT {
                (waits, too_big) = (too_big, too_big * 2);
            }
            while too_big - waits > 1 {
                let mid = (waits + too_big) / 2;
                match bound(&at(mid)) < SIZE_LIMIT {
                    true => waits = mid,
                    false => too_big = mid,
                }
            }
            let largest = at(waits);
            assert!(!check(&largest, false).unwrap().compile_now, "{largest}");
            regex::RegexBuilder::new(&largest)
                .size_limit(SIZE_LIMIT)
                .build()
                .unwrap_or_else(|e| panic!("{largest} waits but does not compile: {e}"));
        }
    }
}
