//! A configuration file as read: its text and the name it is reported under, where each of
//! its lines starts, and string values that remember the file and line they came from, so
//! that every message about a value can say where it is.

use std::path::Path;

use serde::{Deserialize, Deserializer};

use super::ConfigError;
use super::BUILTIN_BACKENDS;

/// One configuration file's text and the name it is reported under.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    /// How the built-in file is named in messages.
    pub const BUILTIN_NAME: &'static str = "built-in backends.toml";

    pub fn builtin() -> Self {
        Source {
            name: Self::BUILTIN_NAME.into(),
            text: BUILTIN_BACKENDS.into(),
        }
    }

    /// Whether this is the built-in file, as [`Source::builtin`] made it.
    pub fn is_builtin(&self) -> bool {
        self.name == Self::BUILTIN_NAME && self.text == BUILTIN_BACKENDS
    }

    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Source {
            name: path.display().to_string(),
            text,
        })
    }
}

/// A string value that remembers the file and line it came from.
#[derive(Debug, Clone, Default)]
pub struct Located {
    pub value: String,
    pub file: String,
    pub line: usize,
    start: usize,
}

impl Located {
    pub fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// Gives it its file and line.
    pub(crate) fn locate(&mut self, lines: &Lines) {
        self.file = lines.name.to_string();
        self.line = lines.line(self.start);
    }
}

impl<'de> Deserialize<'de> for Located {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spanned = toml::Spanned::<String>::deserialize(d)?;
        Ok(Located {
            start: spanned.span().start,
            value: spanned.into_inner(),
            file: String::new(),
            line: 0,
        })
    }
}

/// What to do about `key =` with nothing after it, in config.toml and backends.toml alike.
pub(crate) const NO_VALUE: &str = "no value after `=`: write one (a number, true or false, or \
                                   \"text\" in quotes), or remove the line";

/// The key of line `line` (from 1) of `text` when that line is `key =` with nothing after
/// the `=` but a comment. The TOML parser's message for it guesses an unquoted string
/// ("string values must be quoted"), which misleads for a number or a flag.
pub(crate) fn key_without_value(text: &str, line: usize) -> Option<&str> {
    let written = text.lines().nth(line.checked_sub(1)?)?;
    let (key, value) = written.split('#').next()?.split_once('=')?;
    let key = key.trim().trim_matches('"');
    (value.trim().is_empty() && !key.is_empty() && !key.starts_with('[')).then_some(key)
}

/// 1-based line number of byte offset `pos`.
pub(crate) fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Where each line of one file starts, to turn the parser's byte offsets into line numbers.
pub struct Lines<'a> {
    name: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn of(source: &'a Source) -> Self {
        let starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', source.text.as_bytes()).map(|i| i + 1))
            .collect();
        Lines {
            name: &source.name,
            starts,
        }
    }

    /// The name the file is reported under.
    pub fn name(&self) -> &str {
        self.name
    }

    /// 1-based line number of byte offset `pos`.
    pub fn line(&self, pos: usize) -> usize {
        self.starts.partition_point(|&start| start <= pos)
    }
}

/// A table a later file can override key by key.
pub trait Overlay {
    /// Takes every key `other` sets.
    fn overlay(&mut self, other: Self);
}
