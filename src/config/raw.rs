//! The `backends.toml` schema as written, every key optional so that a later file can
//! override single keys of an earlier one. Unknown keys are errors, so a typo is reported
//! instead of silently ignored.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

use super::Source;
use crate::mcp::config::RawMcp;
use crate::Error;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    /// The backend used when neither `--backend` nor `AGENT_LOOP_BACKEND` names one.
    pub default_backend: Option<String>,
    #[serde(default)]
    pub backends: BTreeMap<String, RawBackend>,
    /// `[mcp.servers.NAME]`: MCP servers whose tools join the built-in ones.
    #[serde(default)]
    pub mcp: RawMcp,
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

    pub(crate) fn locate(&mut self, source: &Source) {
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

/// A table a later file can override key by key.
pub trait Overlay {
    /// Takes every key `other` sets.
    fn overlay(&mut self, other: Self);
}

impl Overlay for RawBackend {
    fn overlay(&mut self, other: RawBackend) {
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
            skip_lines
        );
    }
}

impl RawBackend {
    fn locate(&mut self, source: &Source) {
        for located in [
            &mut self.kind,
            &mut self.command,
            &mut self.tool_call_regex,
            &mut self.tokens_regex,
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
            let table = line.and_then(|l| table_at(&source.text, l));
            let mut msg = source.name.clone();
            if let Some(line) = line {
                msg.push_str(&format!(":{line}"));
            }
            match table {
                Some((BACKENDS, b)) => msg.push_str(&format!(": backend `{b}`")),
                Some((_, s)) => msg.push_str(&format!(": MCP server `{s}`")),
                None => {}
            }
            format!("{msg}: {}", e.message())
        })
        .map_err(Error::config)?;
    for backend in file.backends.values_mut() {
        backend.locate(source);
    }
    for server in file.mcp.servers.values_mut() {
        server.locate(source);
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

/// The prefix of backend tables.
pub const BACKENDS: &str = "backends.";
/// The prefix of MCP server tables.
pub const MCP_SERVERS: &str = "mcp.servers.";

/// The `[backends.NAME]` or `[mcp.servers.NAME]` table that line `line` belongs to, as
/// (prefix, name).
fn table_at(text: &str, line: usize) -> Option<(&'static str, String)> {
    text.lines()
        .take(line)
        .filter_map(|l| {
            header(l).map(|inner| {
                [BACKENDS, MCP_SERVERS]
                    .into_iter()
                    .find_map(|prefix| table_name(inner, prefix).map(|name| (prefix, name)))
            })
        })
        .last()
        .flatten()
}

/// The inside of a table header line (`backends.x` for `[backends.x]`), `None` for a line
/// that is no header.
fn header(line: &str) -> Option<&str> {
    let inner = line.trim().strip_prefix('[')?.trim_start_matches('[');
    Some(inner.split(']').next()?.trim())
}

/// The NAME of a header inside `PREFIXNAME...`, if it starts with `prefix`.
fn table_name(inner: &str, prefix: &str) -> Option<String> {
    inner.strip_prefix(prefix).map(|rest| {
        rest.split('.')
            .next()
            .unwrap_or(rest)
            .trim()
            .trim_matches('"')
            .to_string()
    })
}

/// The line of the `[PREFIXNAME]` header, e.g. `[backends.NAME]` (1 if the table is written
/// inline).
pub fn table_line(text: &str, prefix: &str, name: &str) -> usize {
    text.lines()
        .position(|l| {
            header(l)
                .and_then(|inner| table_name(inner, prefix))
                .as_deref()
                == Some(name)
        })
        .map_or(1, |i| i + 1)
}
