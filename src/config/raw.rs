//! The `backends.toml` schema as written, every key optional so that a later file can
//! override single keys of an earlier one. Unknown keys are errors, so a typo is reported
//! instead of silently ignored.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

use super::Source;
use crate::Error;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    /// The backend used when neither `--backend` nor `AGENT_LOOP_BACKEND` names one.
    pub default_backend: Option<String>,
    #[serde(default)]
    pub backends: BTreeMap<String, RawBackend>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBackend {
    #[serde(rename = "type")]
    pub kind: Option<Located>,
    pub description: Option<String>,
    pub command: Option<Located>,
    pub args: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub cwd: Option<String>,
    pub timeout_s: Option<u64>,
    pub progress_s: Option<u64>,
    pub max_output_bytes: Option<u64>,
    pub model: Option<String>,
    pub tool_call_regex: Option<Located>,
    pub tool_call_format: Option<String>,
    pub tokens_regex: Option<Located>,
    pub skip_lines: Option<Vec<Located>>,
    pub context: Option<Located>,
    pub context_format: Option<Located>,
    pub max_context_tokens: Option<u64>,
    pub tool_result_max_chars: Option<u64>,
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

    fn locate(&mut self, source: &Source) {
        self.file = source.name.clone();
        self.line = line_of(&source.text, self.start);
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

impl RawBackend {
    /// Takes every key `other` sets.
    pub fn overlay(&mut self, other: RawBackend) {
        macro_rules! take {
            ($($field:ident),*) => { $( if other.$field.is_some() { self.$field = other.$field; } )* };
        }
        take!(
            kind,
            description,
            command,
            args,
            env,
            cwd,
            timeout_s,
            progress_s,
            max_output_bytes,
            model,
            tool_call_regex,
            tool_call_format,
            tokens_regex,
            skip_lines,
            context,
            context_format,
            max_context_tokens,
            tool_result_max_chars
        );
    }

    fn locate(&mut self, source: &Source) {
        for located in [
            &mut self.kind,
            &mut self.command,
            &mut self.tool_call_regex,
            &mut self.tokens_regex,
            &mut self.context,
            &mut self.context_format,
        ]
        .into_iter()
        .flatten()
        .chain(self.skip_lines.iter_mut().flatten())
        {
            located.locate(source);
        }
    }
}

/// Parses one file; a syntax or schema error names the file, the line and the backend.
pub fn parse(source: &Source) -> Result<RawFile, Error> {
    let mut file: RawFile = toml::from_str(&source.text)
        .map_err(|e| {
            let line = e.span().map(|s| line_of(&source.text, s.start));
            let backend = line.and_then(|l| backend_at(&source.text, l));
            let mut msg = source.name.clone();
            if let Some(line) = line {
                msg.push_str(&format!(":{line}"));
            }
            if let Some(b) = backend {
                msg.push_str(&format!(": backend `{b}`"));
            }
            format!("{msg}: {}", e.message())
        })
        .map_err(Error::config)?;
    for backend in file.backends.values_mut() {
        backend.locate(source);
    }
    Ok(file)
}

/// 1-based line number of byte offset `pos`.
fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The `[backends.NAME]` table that line `line` belongs to.
fn backend_at(text: &str, line: usize) -> Option<String> {
    text.lines()
        .take(line)
        .filter_map(table_name)
        .last()
        .flatten()
}

/// For a table header line: `Some(Some(name))` for `[backends.NAME...]`, `Some(None)` for any
/// other table, `None` for a line that is no header.
fn table_name(line: &str) -> Option<Option<String>> {
    let inner = line.trim().strip_prefix('[')?.trim_start_matches('[');
    let inner = inner.split(']').next()?.trim();
    Some(inner.strip_prefix("backends.").map(|rest| {
        rest.split('.')
            .next()
            .unwrap_or(rest)
            .trim()
            .trim_matches('"')
            .to_string()
    }))
}

/// The line of the `[backends.NAME]` header (1 if the backend is written inline).
pub fn table_line(text: &str, name: &str) -> usize {
    text.lines()
        .position(|l| table_name(l) == Some(Some(name.to_string())))
        .map_or(1, |i| i + 1)
}
