//! A regex from `backends.toml` that is compiled when first used. Start-up then costs only
//! the patterns of the backend in use: the built-in file defines many presets, and compiling
//! all of their regexes took most of the time before the first backend call. Patterns from
//! the user's files are still compiled (and their errors reported) at load.

use std::ops::Deref;
use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

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
        let regex = build(source, multi_line)?;
        let _ = pattern.compiled.set(regex);
        Ok(pattern)
    }

    /// Whether it has not been compiled yet (so its checks are left to the unit tests).
    pub fn is_lazy(&self) -> bool {
        self.compiled.get().is_none()
    }
}

fn build(source: &str, multi_line: bool) -> Result<Regex, regex::Error> {
    RegexBuilder::new(source).multi_line(multi_line).build()
}

impl Deref for Pattern {
    type Target = Regex;

    fn deref(&self) -> &Regex {
        self.compiled.get_or_init(|| {
            build(&self.source, self.multi_line).unwrap_or_else(|e| {
                panic!("built-in pattern `{}` does not compile: {e}", self.source)
            })
        })
    }
}

impl From<Regex> for Pattern {
    fn from(regex: Regex) -> Self {
        let pattern = Pattern::lazy(regex.as_str(), false);
        let _ = pattern.compiled.set(regex);
        pattern
    }
}

impl Clone for Pattern {
    fn clone(&self) -> Self {
        Pattern {
            source: self.source.clone(),
            multi_line: self.multi_line,
            compiled: self.compiled.clone(),
        }
    }
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pattern({:?})", self.source)
    }
}
