//! The `backends.toml` schema as written, every key optional so that a later file can
//! override single keys of an earlier one. Unknown keys are errors, so a typo is reported
//! instead of silently ignored.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Deserializer};

use super::Source;
use crate::mcp::config::RawMcp;
use crate::Error;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    /// The backend used when neither `--backend` nor the `backend` setting names one.
    pub default_backend: Option<String>,
    /// Backends tried in order when none is named (the built-in file sets it).
    pub auto_order: Option<Vec<String>>,
    /// Boxed: see `merged` in `Config::from_sources`.
    #[serde(default)]
    pub backends: BTreeMap<String, Box<RawBackend>>,
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
    /// `text` (the default), `json` or `jsonl`; see `parse::json`.
    pub output: Option<Located>,
    pub json_text: Option<Located>,
    pub json_input_tokens: Option<Located>,
    pub json_output_tokens: Option<Located>,
    pub json_total_tokens: Option<Located>,
    pub json_cost: Option<Located>,
    pub json_error: Option<Located>,
    pub error_regex: Option<Located>,
    /// `loop` (the default: agent-loop runs the tools) or `own` (the CLI runs its own).
    pub tools: Option<Located>,
    pub tool_activity_regex: Option<Located>,
    pub price_input_per_mtok: Option<f64>,
    pub price_output_per_mtok: Option<f64>,
    // HTTP backends (`type = "anthropic" | "openai" | "ollama"`), see `config::http`.
    pub base_url: Option<Located>,
    pub api_key_env: Option<Located>,
    /// An environment variable that, when set, replaces `base_url`.
    pub base_url_env: Option<Located>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub stream: Option<bool>,
    pub connect_timeout_s: Option<u64>,
    pub retries: Option<u32>,
    pub retry_base_ms: Option<u64>,
    pub retry_max_s: Option<u64>,
    pub context: Option<Located>,
    pub context_format: Option<Located>,
    pub max_context_tokens: Option<u64>,
    pub tool_result_max_chars: Option<u64>,
    // Terminal agents (`type = "pty"`), see `config::pty`.
    pub size: Option<Located>,
    pub term: Option<String>,
    pub ready_regex: Option<Located>,
    pub idle_ms: Option<u64>,
    pub submit: Option<String>,
    pub bracketed_paste: Option<bool>,
    pub done_regex: Option<Located>,
    pub busy_regex: Option<Located>,
    pub approval_regex: Option<Located>,
    pub approve_keys: Option<String>,
    pub deny_keys: Option<String>,
    pub exit_keys: Option<String>,
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

    /// Gives it its file and line; `offset` is where the parsed text starts in the file.
    pub(crate) fn locate(&mut self, lines: &Lines, offset: usize) {
        self.file = lines.name.to_string();
        self.line = lines.line(offset + self.start);
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

impl<T: Overlay> Overlay for Box<T> {
    fn overlay(&mut self, other: Self) {
        (**self).overlay(*other);
    }
}

impl Overlay for RawBackend {
    fn overlay(&mut self, other: RawBackend) {
        let kind = |b: &RawBackend| {
            b.kind
                .as_ref()
                .map_or("cli", |k| k.value.as_str())
                .to_string()
        };
        if other.kind.is_some() && kind(&other) != kind(self) {
            *self = other;
            return;
        }
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
            output,
            json_text,
            json_input_tokens,
            json_output_tokens,
            json_total_tokens,
            json_cost,
            json_error,
            error_regex,
            tools,
            tool_activity_regex,
            base_url,
            api_key_env,
            base_url_env,
            max_tokens,
            temperature,
            stream,
            connect_timeout_s,
            retries,
            retry_base_ms,
            retry_max_s,
            price_input_per_mtok,
            price_output_per_mtok,
            context,
            context_format,
            max_context_tokens,
            tool_result_max_chars,
            size,
            term,
            ready_regex,
            idle_ms,
            submit,
            bracketed_paste,
            done_regex,
            busy_regex,
            approval_regex,
            approve_keys,
            deny_keys,
            exit_keys
        );
    }
}

impl RawBackend {
    /// The keys set here that only CLI backends read.
    pub fn cli_only_keys(&self) -> Vec<&'static str> {
        set_keys(
            &[
                ("command", self.command.is_some()),
                ("args", self.args.is_some()),
                ("env", self.env.is_some()),
                ("cwd", self.cwd.is_some()),
                ("progress_s", self.progress_s.is_some()),
                ("max_output_bytes", self.max_output_bytes.is_some()),
                ("tool_call_regex", self.tool_call_regex.is_some()),
                ("tool_call_format", self.tool_call_format.is_some()),
                ("tokens_regex", self.tokens_regex.is_some()),
                ("skip_lines", self.skip_lines.is_some()),
                ("output", self.output.is_some()),
                ("error_regex", self.error_regex.is_some()),
                ("tools", self.tools.is_some()),
                ("tool_activity_regex", self.tool_activity_regex.is_some()),
            ]
            .into_iter()
            .chain(self.json_keys().into_iter().map(|(k, v)| (k, v.is_some())))
            .collect::<Vec<_>>(),
        )
    }

    /// The `json_*` field paths, by key.
    pub fn json_keys(&self) -> [(&'static str, Option<&Located>); 6] {
        [
            ("json_text", self.json_text.as_ref()),
            ("json_input_tokens", self.json_input_tokens.as_ref()),
            ("json_output_tokens", self.json_output_tokens.as_ref()),
            ("json_total_tokens", self.json_total_tokens.as_ref()),
            ("json_cost", self.json_cost.as_ref()),
            ("json_error", self.json_error.as_ref()),
        ]
    }

    /// The keys set here that only HTTP backends read.
    pub fn http_only_keys(&self) -> Vec<&'static str> {
        set_keys(&[
            ("base_url", self.base_url.is_some()),
            ("api_key_env", self.api_key_env.is_some()),
            ("base_url_env", self.base_url_env.is_some()),
            ("max_tokens", self.max_tokens.is_some()),
            ("temperature", self.temperature.is_some()),
            ("stream", self.stream.is_some()),
            ("connect_timeout_s", self.connect_timeout_s.is_some()),
            ("retries", self.retries.is_some()),
            ("retry_base_ms", self.retry_base_ms.is_some()),
            ("retry_max_s", self.retry_max_s.is_some()),
        ])
    }

    fn locate(&mut self, lines: &Lines, offset: usize) {
        for located in [
            &mut self.kind,
            &mut self.command,
            &mut self.tool_call_regex,
            &mut self.tokens_regex,
            &mut self.base_url,
            &mut self.api_key_env,
            &mut self.base_url_env,
            &mut self.context,
            &mut self.context_format,
            &mut self.output,
            &mut self.json_text,
            &mut self.json_input_tokens,
            &mut self.json_output_tokens,
            &mut self.json_total_tokens,
            &mut self.json_cost,
            &mut self.json_error,
            &mut self.error_regex,
            &mut self.tools,
            &mut self.tool_activity_regex,
            &mut self.size,
            &mut self.ready_regex,
            &mut self.done_regex,
            &mut self.busy_regex,
            &mut self.approval_regex,
        ]
        .into_iter()
        .flatten()
        .chain(self.skip_lines.iter_mut().flatten())
        {
            located.locate(lines, offset);
        }
    }
}

/// The names of the keys marked as set.
fn set_keys(keys: &[(&'static str, bool)]) -> Vec<&'static str> {
    keys.iter()
        .filter(|(_, set)| *set)
        .map(|(k, _)| *k)
        .collect()
}

/// Parses one file; a syntax or schema error names the file, the line and the backend.
pub fn parse(source: &Source, lines: &Lines) -> Result<RawFile, Error> {
    parse_part(source, lines, 0..source.text.len())
}

/// Parses the part `range` of a file, which starts at a line's start: a syntax or schema
/// error names the file, the line and the backend, and every value is placed in the whole
/// file.
pub fn parse_part(source: &Source, lines: &Lines, range: Range<usize>) -> Result<RawFile, Error> {
    let offset = range.start;
    let mut file: RawFile = toml::from_str(&source.text[range])
        .map_err(|e| {
            let line = e.span().map(|s| line_of(&source.text, offset + s.start));
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
        backend.locate(lines, offset);
    }
    for server in file.mcp.servers.values_mut() {
        server.locate(lines, offset);
    }
    Ok(file)
}

/// A file split so that its backends can be read one at a time: only the built-in file is
/// read this way, since a run uses one or two of its dozen presets and parsing them all took
/// half of the start-up time.
pub struct Split {
    /// The file with every backend's tables blanked out (newlines kept, so that lines and
    /// offsets stay those of the whole file): the top-level keys and any other tables.
    pub rest: String,
    /// Where each backend's tables are: from its first `[backends.NAME...]` header to the end
    /// of its last table (with any tables written between them).
    pub backends: BTreeMap<String, Range<usize>>,
}

impl Split {
    /// Splits `text`, whose lines and headers `lines` holds.
    pub fn of(text: &str, lines: &Lines) -> Split {
        let mut backends: BTreeMap<String, Range<usize>> = BTreeMap::new();
        let mut tables = Vec::new();
        // Where the text that is not a backend's ends: the start of the first header, or the
        // end of the last other table.
        let mut others_end = text.len();
        // Each header starts a table that runs to the next header.
        let starts: Vec<usize> = lines.bracketed.iter().map(|&i| lines.starts[i]).collect();
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(text.len());
            let line = text[start..end].split('\n').next().unwrap_or("");
            let backend = header(line).and_then(|inner| table_name(inner, BACKENDS));
            match backend {
                Some(name) => {
                    if i == 0 {
                        others_end = start;
                    }
                    backends.entry(name).or_insert(start..end).end = end;
                    tables.push(start..end);
                }
                None => others_end = end,
            }
        }
        // The built-in file's backends come last: its top is all there is to parse.
        let mut rest = text.as_bytes()[..others_end].to_vec();
        for range in tables.into_iter().filter(|r| r.start < others_end) {
            for b in &mut rest[range] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
        Split {
            // Only whole characters were replaced, each byte by an ASCII space.
            rest: String::from_utf8(rest).expect("blanking keeps UTF-8 valid"),
            backends,
        }
    }
}

/// The string value of `key` written as `key = "value"` on a line of its own in `text`,
/// without parsing the TOML around it: for reading one key of a built-in backend that is
/// not otherwise needed (a test checks it against the parsed file for every preset).
pub fn plain_string(text: &str, key: &str) -> Option<String> {
    // Each place the key is written, rather than each line: a preset's text is mostly other
    // keys, and this runs for every preset at start-up.
    text.match_indices(key).find_map(|(at, _)| {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        if !text[line_start..at].trim().is_empty() {
            return None;
        }
        let value = text[at + key.len()..line_end]
            .trim_start()
            .strip_prefix('=')?;
        let value = value.trim().strip_prefix('"')?.strip_suffix('"')?;
        (!value.contains(['\\', '"'])).then(|| value.to_string())
    })
}

/// 1-based line number of byte offset `pos`.
pub(crate) fn line_of(text: &str, pos: usize) -> usize {
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

/// Where one file's lines and table headers are, found in one pass: placing each of the
/// hundreds of values and tables in the built-in file is then a lookup, where rescanning the
/// text for each took most of the start-up time.
pub struct Lines<'a> {
    name: &'a str,
    /// The byte offset where each line starts.
    starts: Vec<usize>,
    /// The 0-based indexes of the lines that start with `[` (after blanks): the headers.
    bracketed: Vec<usize>,
    /// (1-based line, prefix, name) of every `[backends.NAME]` and `[mcp.servers.NAME]` header.
    headers: Vec<(usize, &'static str, String)>,
}

impl<'a> Lines<'a> {
    pub fn of(source: &'a Source) -> Self {
        let text = &source.text;
        let bytes = text.as_bytes();
        // The newlines are found by memchr's portable searcher, eight bytes at a time: the
        // byte-by-byte loop before it cost ten instructions a byte at the size-first
        // optimisation level this crate is built with. Not `memchr::memchr`: its first search
        // runs CPUID to learn the CPU's features, and on a virtual machine each CPUID traps to
        // the hypervisor (9 µs each on the benchmark's), all before the backend starts.
        let newlines = memchr::arch::all::memchr::One::new(b'\n');
        let starts: Vec<usize> = std::iter::once(0)
            .chain(newlines.iter(bytes).map(|i| i + 1))
            .collect();
        // Only a line that starts with `[` (after blanks) can be a header; most do not.
        let bracketed: Vec<usize> = (0..starts.len())
            .filter(|&i| {
                bytes[starts[i]..]
                    .iter()
                    .find(|b| !matches!(b, b' ' | b'\t'))
                    == Some(&b'[')
            })
            .collect();
        let headers = bracketed
            .iter()
            .filter_map(|&i| {
                let line = text[starts[i]..].split('\n').next().unwrap_or("");
                let inner = header(line)?;
                [BACKENDS, MCP_SERVERS]
                    .into_iter()
                    .find_map(|prefix| table_name(inner, prefix).map(|name| (i + 1, prefix, name)))
            })
            .collect();
        Lines {
            name: &source.name,
            starts,
            bracketed,
            headers,
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

    /// The line of the first `[PREFIXNAME]` header, e.g. `[backends.NAME]` (1 if the table is
    /// written inline).
    pub fn table(&self, prefix: &str, name: &str) -> usize {
        self.headers
            .iter()
            .find(|(_, p, n)| *p == prefix && n == name)
            .map_or(1, |(line, _, _)| *line)
    }
}

#[cfg(test)]
mod tests;
