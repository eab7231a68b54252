//! The built-in presets, parsed one by one when first asked for. The built-in backends.toml
//! holds some two dozen presets and a run uses one or two, so parsing and resolving them all
//! at every start was work thrown away. The file is cut at its `[backends.NAME]` headers by a
//! line scan; a preset's table is parsed alone, after as many empty lines as come before it
//! in the file, so its messages still name the built-in file's own lines. A preset that a
//! user's file changes is parsed at load, to be merged with the user's keys.

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
        BUILTIN_BACKENDS[self.start..self.end]
            .lines()
            .find_map(|line| {
                let value = line
                    .strip_prefix("api_key_env")?
                    .trim_start()
                    .strip_prefix('=')?;
                value.trim().strip_prefix('"')?.strip_suffix('"')
            })
    }
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
    let mut at = 0;
    for line in BUILTIN_BACKENDS.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let Some(header) = line.strip_prefix("[backends.") else {
            continue;
        };
        let name = header.split(['.', ']']).next().unwrap_or_default();
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
