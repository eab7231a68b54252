//! The built-in presets, parsed one by one when first asked for. The built-in backends.toml
//! holds some two dozen presets and a run uses one or two, so parsing and resolving them all
//! at every start was work thrown away. The file is cut at its `[backends.NAME]` headers,
//! found by a search for them; a preset's table is parsed alone, after as many empty lines as
//! come before it in the file, so its messages still name the built-in file's own lines. A
//! preset that a user's file changes is parsed at load, to be merged with the user's keys.

use std::sync::OnceLock;

use super::source::Source;
use super::BUILTIN_BACKENDS;

/// One built-in preset: its name and its table's bytes in the built-in file.
#[derive(Debug, Clone)]
pub(crate) struct Preset {
    pub name: &'static str,
    start: usize,
    end: usize,
}

impl Preset {
    /// Its table as a file of its own, its lines where they are in the built-in file.
    pub fn source(&self) -> Source {
        let before = memchr::memchr_iter(b'\n', &BUILTIN_BACKENDS.as_bytes()[..self.start]).count();
        let mut text = "\n".repeat(before);
        text.push_str(&BUILTIN_BACKENDS[self.start..self.end]);
        Source {
            name: Source::BUILTIN_NAME.into(),
            text,
        }
    }

    /// Its `api_key_env`, read off its text: the secrets every run keeps from the programs it
    /// starts include the keys of presets it never parses. (A test holds it to the parser's.)
    pub fn api_key_env(&self) -> Option<&'static str> {
        key_lines()
            .iter()
            .find(|(at, _)| (self.start..self.end).contains(at))
            .map(|(_, var)| *var)
    }
}

/// Where each `api_key_env` line of the built-in file starts, and the variable it names:
/// found by one search of the file, the first time a run asks for the keys.
fn key_lines() -> &'static [(usize, &'static str)] {
    static LINES: OnceLock<Vec<(usize, &'static str)>> = OnceLock::new();
    LINES.get_or_init(|| {
        // A line of the key follows a newline: the file starts with a comment.
        memchr::memmem::find_iter(BUILTIN_BACKENDS.as_bytes(), "\napi_key_env")
            .filter_map(|at| {
                let line = BUILTIN_BACKENDS[at + 1..].lines().next()?;
                let value = line
                    .strip_prefix("api_key_env")?
                    .trim_start()
                    .strip_prefix('=')?;
                let var = value.trim().strip_prefix('"')?.strip_suffix('"')?;
                Some((at + 1, var))
            })
            .collect()
    })
}

/// The built-in file before its first preset (`auto_order`), as a file of its own.
pub(crate) fn preamble(presets: &[Preset]) -> Source {
    let end = presets.first().map_or(BUILTIN_BACKENDS.len(), |p| p.start);
    Source {
        name: Source::BUILTIN_NAME.into(),
        text: BUILTIN_BACKENDS[..end].into(),
    }
}

/// Every built-in preset, in the file's order: a table starts at a `[backends.NAME]` header
/// and runs to the next header of another backend (its own subtables, `[backends.NAME.env]`,
/// stay in it).
pub(crate) fn all() -> Vec<Preset> {
    let mut presets: Vec<Preset> = Vec::new();
    // Only the lines that start a table are looked at, found by one search of the file (the
    // file starts with a comment, not a header).
    for at in memchr::memmem::find_iter(BUILTIN_BACKENDS.as_bytes(), "\n[backends.") {
        let start = at + 1;
        let header = &BUILTIN_BACKENDS[start + "[backends.".len()..];
        let name = header.split(['.', ']', '\n']).next().unwrap_or_default();
        if presets.last().is_some_and(|p| p.name == name) {
            continue;
        }
        if let Some(last) = presets.last_mut() {
            last.end = start;
        }
        presets.push(Preset {
            name,
            start,
            end: BUILTIN_BACKENDS.len(),
        });
    }
    presets
}
