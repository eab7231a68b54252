//! Loading `backends.toml`: the built-in file embedded in the binary, then the user's
//! `$XDG_CONFIG_HOME/agent-loop/backends.toml`, then `--config FILE`. A later file adds
//! backends or overrides single keys of an earlier one. The user's files are checked whole
//! at load, every mistake reported with the file, the line, the backend and the key; the
//! built-in presets are read one at a time, when first used. Regexes are compiled while the
//! backend runs (see `parse::Pattern`).

mod http;
mod pty;
pub(crate) mod raw;
pub mod settings;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use crate::context::{ContextMode, ContextSettings, PromptStyle};
use crate::mcp::config::{RawServer, ServerDef};
use crate::parse::{JsonFields, JsonPath, OutputFormat, Parsers, Pattern, Prices};
use crate::Error;
use raw::RawBackend;
pub use raw::{Located, Overlay};

pub use http::{HttpDef, RetrySettings, WireFormat};
pub use pty::{PtyDef, PTY_TYPE};

/// The built-in backend definitions.
pub const BUILTIN_BACKENDS: &str = include_str!("../../backends.toml");

const DEFAULT_TOOL_CALL_REGEX: &str = r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>";
const DEFAULT_TOOL_CALL_FORMAT: &str = "<tool_call>{json}</tool_call>";
const DEFAULT_TIMEOUT_S: u64 = 600;
const DEFAULT_PROGRESS_S: u64 = 10;
const DEFAULT_MAX_OUTPUT_BYTES: u64 = 4 * 1024 * 1024;
/// Below this, the preamble alone would not fit.
const MIN_CONTEXT_TOKENS: u64 = 1_000;

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

    /// Whether it is the built-in file as this binary embeds it.
    fn is_builtin(&self) -> bool {
        self.name == Self::BUILTIN_NAME && self.text == BUILTIN_BACKENDS
    }

    pub fn read(path: &Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::config(format!("cannot read config file {}: {e}", path.display()))
        })?;
        Ok(Source {
            name: path.display().to_string(),
            text,
        })
    }
}

/// How a CLI backend receives its prompt, decided by the placeholders in its `args`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptVia {
    /// `{prompt}` in `args`: the prompt is one argument.
    Arg,
    /// `{prompt_file}` in `args`: the prompt is written to a temporary file named there.
    File,
    /// Neither: the prompt is written to the child's stdin.
    Stdin,
}

/// A fully resolved CLI backend.
#[derive(Debug, Clone)]
pub struct BackendDef {
    pub name: String,
    pub description: String,
    /// Where it was (last) defined, for messages: `file:line`.
    pub defined_at: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    pub timeout: Duration,
    pub progress_every: Duration,
    pub max_output_bytes: usize,
    pub model: Option<String>,
    pub prompt_via: PromptVia,
    pub style: PromptStyle,
    pub parsers: Parsers,
    /// Prices per million tokens, to compute a cost the backend does not report.
    pub prices: Option<Prices>,
    /// `context`, `max_context_tokens`, `tool_result_max_chars` (`context_format` is in
    /// `style`).
    pub context: ContextSettings,
}

impl Definition {
    pub fn name(&self) -> &str {
        match self {
            Definition::Cli(d) => &d.name,
            Definition::Http(d) => &d.name,
            Definition::Pty(d) => &d.name,
        }
    }

    pub fn model(&self) -> Option<&str> {
        match self {
            Definition::Cli(d) => d.model.as_deref(),
            Definition::Http(d) => d.model.as_deref(),
            Definition::Pty(d) => d.model.as_deref(),
        }
    }

    /// The environment variable that holds its API key, if any.
    /// Its context settings (`context`, `max_context_tokens`, `tool_result_max_chars`).
    pub fn context(&self) -> ContextSettings {
        match self {
            Definition::Cli(d) => d.context,
            Definition::Http(d) => d.context,
            // The agent keeps its own conversation; each call types the newest message.
            Definition::Pty(_) => ContextSettings {
                mode: ContextMode::Fresh,
                ..ContextSettings::default()
            },
        }
    }

    pub fn api_key_env(&self) -> Option<&str> {
        match self {
            Definition::Cli(_) | Definition::Pty(_) => None,
            Definition::Http(d) => d.api_key_env.as_deref(),
        }
    }

    /// Whether it can run here: an agent CLI's command is found; an API's key is set.
    pub fn is_available(&self) -> bool {
        match self {
            Definition::Cli(d) => {
                d.command == "{self}" || d.command.contains('/') || which::which(&d.command).is_ok()
            }
            Definition::Pty(d) => d.command.contains('/') || which::which(&d.command).is_ok(),
            Definition::Http(d) => d
                .api_key_env
                .as_ref()
                .is_none_or(|var| std::env::var(var).is_ok_and(|v| !v.trim().is_empty())),
        }
    }
}

/// A configured backend of any type.
#[derive(Debug, Clone)]
// A handful of definitions live for the whole run; boxing the larger variant buys nothing.
#[allow(clippy::large_enum_variant)]
pub enum Definition {
    /// `type = "cli"` (the default): an agent CLI run once per model step.
    Cli(BackendDef),
    /// `type = "anthropic" | "openai" | "ollama"`: an LLM HTTP API called once per step.
    Http(HttpDef),
    /// `type = "pty"`: an interactive terminal agent driven through a pseudo-terminal.
    Pty(PtyDef),
}

/// Every configured backend, plus the default backend if a file names one.
#[derive(Debug, Clone)]
pub struct Config {
    /// Every configured backend, by name.
    backends: BTreeMap<String, Entry>,
    pub default_backend: Option<String>,
    /// Built-in backends tried, in this order, when none is named (`auto_order`).
    pub auto_order: Vec<String>,
    /// Backends the user's files define or change, in the order of those files.
    pub user_order: Vec<String>,
    /// `[mcp.servers.NAME]` entries, enabled or not.
    pub mcp_servers: BTreeMap<String, ServerDef>,
    /// The files read, in order.
    pub sources: Vec<String>,
}

/// One configured backend. Those the user's files define or change are resolved at load, so
/// that every mistake in them is reported before anything runs; a built-in one they leave as
/// it is, is read from the built-in file when first used (a unit test resolves them all).
///
/// The definition is boxed: a map node holds eleven entries, and with a `Definition` (1.6 KB)
/// in each, the built-in backends not read yet made nodes of 18 KB, fresh pages touched at
/// every start for nothing.
#[derive(Debug, Clone)]
struct Entry {
    def: OnceLock<Box<Definition>>,
    /// Where its tables are in the built-in file, until it is resolved.
    builtin: Option<Range<usize>>,
}

impl Config {
    /// Built-in definitions, then the user's file if it exists, then `extra`.
    pub fn load(extra: Option<&Path>) -> Result<Self, Error> {
        let mut sources = vec![Source::builtin()];
        if let Some(path) = user_backends_path().filter(|p| p.is_file()) {
            sources.push(Source::read(&path)?);
        }
        if let Some(path) = extra {
            sources.push(Source::read(path)?);
        }
        Self::from_sources(&sources)
    }

    /// Merges the sources in order (later ones win, key by key) and validates the result.
    pub fn from_sources(sources: &[Source]) -> Result<Self, Error> {
        // Boxed, as in `Entry`: a `RawBackend` is 900 bytes, and eleven to a map node.
        let mut merged: Merged<Box<RawBackend>> = BTreeMap::new();
        let mut servers: Merged<RawServer> = BTreeMap::new();
        let mut default_backend = None;
        let mut auto_order = Vec::new();
        // The built-in backends not read yet, and where they are.
        let mut unread: BTreeMap<String, Range<usize>> = BTreeMap::new();
        for (index, source) in sources.iter().enumerate() {
            let lines = raw::Lines::of(source);
            let mut file = if source.is_builtin() {
                let split = raw::Split::of(&source.text, &lines);
                unread = split.backends;
                let rest = Source {
                    name: source.name.clone(),
                    text: split.rest,
                };
                // Blanking kept every line where it was, so the whole file's lines serve.
                raw::parse(&rest, &lines)?
            } else {
                raw::parse(source, &lines)?
            };
            // A built-in backend a later file changes is read first, to take the changes.
            for name in file.backends.keys() {
                if let Some(range) = unread.remove(name) {
                    let (raw, at) = read_builtin(name, range)?;
                    merged.insert(name.clone(), (raw, at, (0, 0)));
                }
            }
            if file.default_backend.is_some() {
                default_backend = file.default_backend;
            }
            if let Some(order) = file.auto_order.take() {
                auto_order = order;
            }
            merge(&mut merged, file.backends, &lines, index, raw::BACKENDS);
            merge(
                &mut servers,
                file.mcp.servers,
                &lines,
                index,
                raw::MCP_SERVERS,
            );
        }
        let mut user: Vec<(&String, (usize, usize))> = merged
            .iter()
            .filter(|(_, v)| v.2 .0 > 0)
            .map(|(k, v)| (k, v.2))
            .collect();
        user.sort_by_key(|(_, order)| *order);
        let user_order: Vec<String> = user.into_iter().map(|(name, _)| name.clone()).collect();
        let mcp_servers = servers
            .into_iter()
            .map(|(name, (raw, at, _))| {
                crate::mcp::config::resolve(&name, raw, at).map(|def| (name, def))
            })
            .collect::<Result<BTreeMap<_, _>, _>>()?;
        let mut backends = merged
            .into_iter()
            .map(|(name, (raw, at, _))| {
                let def = resolve(&name, *raw, at)?;
                Ok((
                    name,
                    Entry {
                        def: OnceLock::from(Box::new(def)),
                        builtin: None,
                    },
                ))
            })
            .collect::<Result<BTreeMap<_, _>, Error>>()?;
        for (name, range) in unread {
            backends.insert(
                name,
                Entry {
                    def: OnceLock::new(),
                    builtin: Some(range),
                },
            );
        }
        if let Some(unknown) = auto_order.iter().find(|n| !backends.contains_key(*n)) {
            return Err(Error::config(format!(
                "auto_order names `{unknown}`, which is not a configured backend"
            )));
        }
        Ok(Config {
            backends,
            default_backend,
            auto_order,
            user_order,
            mcp_servers,
            sources: sources.iter().map(|s| s.name.clone()).collect(),
        })
    }

    /// The backend to use when none is named: the user's own backends first (in the order of
    /// their files), then the built-in `auto_order` list; the first whose command is
    /// installed. The demo is never picked on its own.
    pub fn first_available(&self) -> Option<String> {
        self.user_order
            .iter()
            .chain(self.auto_order.iter())
            .filter(|name| *name != "demo")
            .find(|name| self.backend(name).is_ok_and(Definition::is_available))
            .cloned()
    }

    /// The backend called `name`, or an error listing the configured ones.
    pub fn backend(&self, name: &str) -> Result<&Definition, Error> {
        let entry = self.backends.get(name).ok_or_else(|| {
            Error::config(format!(
                "no backend named `{name}`; configured backends: {} (run `agent-loop --help` for how to add one)",
                self.names().collect::<Vec<_>>().join(", ")
            ))
        })?;
        if let Some(def) = entry.def.get() {
            return Ok(def);
        }
        let range = entry.builtin.clone().unwrap_or_default();
        let (raw, at) = read_builtin(name, range)?;
        let def = resolve(name, *raw, at)?;
        Ok(entry.def.get_or_init(|| Box::new(def)))
    }

    /// The names of every configured backend, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.backends.keys().map(String::as_str)
    }

    /// Whether a backend of that name is configured.
    pub fn has(&self, name: &str) -> bool {
        self.backends.contains_key(name)
    }

    /// Every configured backend, by name, sorted: the built-in ones are all read.
    pub fn definitions(&self) -> Result<Vec<(&str, &Definition)>, Error> {
        self.names()
            .map(|name| self.backend(name).map(|def| (name, def)))
            .collect()
    }

    /// The environment variables any backend reads its API key from, without reading the
    /// built-in backends not used yet.
    pub fn api_key_envs(&self) -> Vec<String> {
        self.backends
            .values()
            .filter_map(|entry| match (entry.def.get(), &entry.builtin) {
                (Some(def), _) => def.api_key_env().map(str::to_string),
                (None, Some(range)) => {
                    raw::plain_string(&BUILTIN_BACKENDS[range.clone()], "api_key_env")
                }
                (None, None) => None,
            })
            .collect()
    }
}

/// Reads one backend's tables from the built-in file: its raw keys and where it is defined.
fn read_builtin(name: &str, range: Range<usize>) -> Result<(Box<RawBackend>, String), Error> {
    let source = Source::builtin();
    let lines = raw::Lines::of(&source);
    let mut file = raw::parse_part(&source, &lines, range)?;
    let raw = file.backends.remove(name).ok_or_else(|| {
        Error::config(format!(
            "{}: backend `{name}` is not where its header is",
            source.name
        ))
    })?;
    let at = format!("{}:{}", lines.name(), lines.table(raw::BACKENDS, name));
    Ok((raw, at))
}

/// `$XDG_CONFIG_HOME/agent-loop/config.toml`, or `~/.config/agent-loop/config.toml`.
pub fn user_settings_path() -> Option<PathBuf> {
    config_dir().map(|d| d.join("config.toml"))
}

/// Tables merged from the files by name: each with where it was last defined, and
/// `(file index, line)` of that definition.
type Merged<T> = BTreeMap<String, (T, String, (usize, usize))>;

/// Adds one file's tables to the merged ones: a table seen before takes the keys this file
/// sets, and is reported as defined here; `(file index, line)` keeps the files' order.
fn merge<T: raw::Overlay>(
    merged: &mut Merged<T>,
    tables: BTreeMap<String, T>,
    lines: &raw::Lines,
    index: usize,
    prefix: &str,
) {
    for (name, table) in tables {
        let line = lines.table(prefix, &name);
        let at = format!("{}:{line}", lines.name());
        match merged.get_mut(&name) {
            Some((base, defined_at, order)) => {
                base.overlay(table);
                *defined_at = at;
                *order = (index, line);
            }
            None => {
                merged.insert(name, (table, at, (index, line)));
            }
        }
    }
}

/// `$XDG_CONFIG_HOME/agent-loop/backends.toml`, or `~/.config/agent-loop/backends.toml`.
pub fn user_backends_path() -> Option<PathBuf> {
    config_dir().map(|d| d.join("backends.toml"))
}

/// agent-loop's folder under the XDG config home.
pub fn config_dir() -> Option<PathBuf> {
    xdg_home("XDG_CONFIG_HOME", ".config").map(|d| d.join("agent-loop"))
}

/// An XDG base folder: `$VAR` when it is an absolute path, else `$HOME/FALLBACK`.
pub fn xdg_home(var: &str, fallback: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(fallback)))
}

/// Resolves an entry by its `type`.
fn resolve(name: &str, raw: RawBackend, defined_at: String) -> Result<Definition, Error> {
    if raw.kind.as_ref().is_some_and(|k| k.value == PTY_TYPE) {
        return pty::resolve(name, raw, defined_at).map(Definition::Pty);
    }
    if let Some(key) = raw.pty_only_keys().first() {
        return Err(Error::config(format!(
            "{defined_at}: backend `{name}`: key `{key}`: only `type = \"pty\"` backends read it"
        )));
    }
    let Some(kind) = raw.kind.clone().filter(|k| k.value != "cli") else {
        return resolve_cli(name, raw, defined_at).map(Definition::Cli);
    };
    match WireFormat::from_type(&kind.value) {
        Some(format) => http::resolve(name, raw, defined_at, format).map(Definition::Http),
        None => Err(Error::config(format!(
            "{}: backend `{name}`: key `type`: unknown type `{}`; the types are cli, pty, {}",
            kind.at(),
            kind.value,
            WireFormat::ALL.map(WireFormat::type_name).join(", ")
        ))),
    }
}

fn resolve_cli(name: &str, raw: RawBackend, defined_at: String) -> Result<BackendDef, Error> {
    let here = |key: &str| format!("{defined_at}: backend `{name}`: key `{key}`");
    let prices = prices(&raw);
    let context = context_settings(&raw, name, &here)?;
    let format = parse_located(raw.context_format.as_ref(), name, "context_format")?;
    let output: OutputFormat =
        parse_located(raw.output.as_ref(), name, "output")?.unwrap_or_default();
    let json = json_fields(&raw, name, output, &defined_at)?;
    let own_tools = match raw.tools.as_ref().map(|t| (t, t.value.as_str())) {
        None | Some((_, "loop")) => false,
        Some((_, "own")) => true,
        Some((t, other)) => {
            return Err(Error::config(format!(
                "{}: backend `{name}`: key `tools`: unknown mode `{other}`; use `loop` (agent-loop runs its tools) or `own` (the CLI runs its own)",
                t.at()
            )))
        }
    };
    let error = raw
        .error_regex
        .as_ref()
        .map(|r| pattern(Some(r), "", name, "error_regex"))
        .transpose()?;
    let tool_activity = raw
        .tool_activity_regex
        .as_ref()
        .map(|r| pattern(Some(r), "", name, "tool_activity_regex"))
        .transpose()?;
    if let Some(key) = raw.http_only_keys().first() {
        return Err(Error::config(format!(
            "{}: only HTTP backends read it; set `type` to one of {} to call an API",
            here(key),
            WireFormat::ALL.map(WireFormat::type_name).join(", ")
        )));
    }
    let Some(command) = raw.command else {
        return Err(Error::config(format!(
            "{defined_at}: backend `{name}` has no `command` (the program to run, found through PATH)"
        )));
    };
    let args = raw.args.unwrap_or_default();
    let has = |p: &str| args.iter().any(|a| a.contains(p));
    let prompt_via = match (has("{prompt}"), has("{prompt_file}")) {
        (true, true) => {
            return Err(Error::config(format!(
                "{}: uses both {{prompt}} and {{prompt_file}}; pick one",
                here("args")
            )))
        }
        (true, false) => PromptVia::Arg,
        (false, true) => PromptVia::File,
        (false, false) => PromptVia::Stdin,
    };
    let (tool_call, groups) = checked(
        raw.tool_call_regex.as_ref(),
        DEFAULT_TOOL_CALL_REGEX,
        name,
        "tool_call_regex",
    )?;
    if groups.is_some_and(|groups| groups.iter().all(|g| g != "json" && g != "name")) {
        let at = raw
            .tool_call_regex
            .as_ref()
            .map_or(defined_at.clone(), |r| r.at());
        return Err(Error::config(format!(
            "{at}: backend `{name}`: key `tool_call_regex`: needs a named group `json`, or `name` (and optional `args`)"
        )));
    }
    let tokens = match &raw.tokens_regex {
        Some(r) => {
            let (re, groups) = checked(Some(r), "", name, "tokens_regex")?;
            if groups.is_some_and(|groups| {
                groups
                    .iter()
                    .all(|g| !matches!(g.as_str(), "input" | "output" | "total"))
            }) {
                return Err(Error::config(format!(
                    "{}: backend `{name}`: key `tokens_regex`: needs a named group `input`, `output` or `total`",
                    r.at()
                )));
            }
            Some(re)
        }
        None => None,
    };
    let skip_lines = raw
        .skip_lines
        .iter()
        .flatten()
        .map(|r| pattern(Some(r), "", name, "skip_lines"))
        .collect::<Result<Vec<_>, _>>()?;
    let tool_call_format = raw
        .tool_call_format
        .unwrap_or_else(|| DEFAULT_TOOL_CALL_FORMAT.into());
    if !tool_call_format.contains("{json}") && !tool_call_format.contains("{name}") {
        return Err(Error::config(format!(
            "{}: must contain {{json}}, or {{name}} and {{args}}",
            here("tool_call_format")
        )));
    }
    Ok(BackendDef {
        name: name.to_string(),
        description: raw.description.unwrap_or_default(),
        defined_at,
        command: command.value,
        args,
        env: raw.env.unwrap_or_default(),
        cwd: raw.cwd.map(PathBuf::from),
        timeout: Duration::from_secs(raw.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S).max(1)),
        progress_every: Duration::from_secs(raw.progress_s.unwrap_or(DEFAULT_PROGRESS_S).max(1)),
        max_output_bytes: raw.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES) as usize,
        model: raw.model,
        prompt_via,
        style: PromptStyle {
            tool_call_format,
            format: format.unwrap_or_default(),
            own_tools,
        },
        parsers: Parsers {
            tool_call,
            tokens,
            skip_lines,
            output,
            json: Box::new(json),
            error,
            tool_activity,
            own_tools,
        },
        prices,
        context,
    })
}

/// The `json_*` field paths, compiled: each needs `output = "json"` or `"jsonl"`, and JSON
/// output needs `json_text`.
fn json_fields(
    raw: &RawBackend,
    name: &str,
    output: OutputFormat,
    defined_at: &str,
) -> Result<JsonFields, Error> {
    let keys = raw.json_keys();
    if output == OutputFormat::Text {
        if let Some((key, Some(at))) = keys.iter().find(|(_, v)| v.is_some()) {
            return Err(Error::config(format!(
                "{}: backend `{name}`: key `{key}`: only read with `output = \"json\"` or `\"jsonl\"`; set `output` too",
                at.at()
            )));
        }
        return Ok(JsonFields::default());
    }
    let [text, input, output_tokens, total, cost, error] = keys.map(|(key, value)| {
        value
            .map(|v| {
                v.value.parse::<JsonPath>().map_err(|e| {
                    Error::config(format!(
                        "{}: backend `{name}`: key `{key}`: bad field path: {e}",
                        v.at()
                    ))
                })
            })
            .transpose()
    });
    let fields = JsonFields {
        text: text?,
        input_tokens: input?,
        output_tokens: output_tokens?,
        total_tokens: total?,
        cost: cost?,
        error: error?,
    };
    if fields.text.is_none() {
        let at = raw
            .output
            .as_ref()
            .map_or(defined_at.to_string(), |o| o.at());
        return Err(Error::config(format!(
            "{at}: backend `{name}`: key `output`: JSON output needs `json_text`, the field path of the answer (for example `json_text = \"result\"`)"
        )));
    }
    Ok(fields)
}

/// `price_input_per_mtok` and `price_output_per_mtok`, if either is set.
fn prices(raw: &RawBackend) -> Option<Prices> {
    match (raw.price_input_per_mtok, raw.price_output_per_mtok) {
        (None, None) => None,
        (i, o) => Some(Prices {
            input_per_mtok: i.unwrap_or(0.0),
            output_per_mtok: o.unwrap_or(0.0),
        }),
    }
}

/// The context keys of a backend entry, defaults filled in.
pub(crate) fn context_settings(
    raw: &RawBackend,
    name: &str,
    here: &dyn Fn(&str) -> String,
) -> Result<ContextSettings, Error> {
    let defaults = ContextSettings::default();
    let mode: Option<ContextMode> = parse_located(raw.context.as_ref(), name, "context")?;
    let max_tokens = raw.max_context_tokens.unwrap_or(defaults.max_tokens);
    if max_tokens < MIN_CONTEXT_TOKENS {
        return Err(Error::config(format!(
            "{}: {max_tokens} is too small to hold the instructions and one message; use at least {MIN_CONTEXT_TOKENS}",
            here("max_context_tokens")
        )));
    }
    let tool_result_max_chars = match raw.tool_result_max_chars {
        Some(0) => {
            return Err(Error::config(format!(
                "{}: must be above 0",
                here("tool_result_max_chars")
            )))
        }
        Some(n) => n as usize,
        None => defaults.tool_result_max_chars,
    };
    Ok(ContextSettings {
        mode: mode.unwrap_or(defaults.mode),
        max_tokens,
        tool_result_max_chars,
    })
}

/// A located string key parsed with `FromStr`; a bad value names file, line, backend and key.
fn parse_located<T: std::str::FromStr<Err = String>>(
    value: Option<&raw::Located>,
    backend: &str,
    key: &str,
) -> Result<Option<T>, Error> {
    value
        .map(|v| {
            v.value.parse().map_err(|e| {
                Error::config(format!("{}: backend `{backend}`: key `{key}`: {e}", v.at()))
            })
        })
        .transpose()
}

/// A regex key. The line-oriented keys (`tokens_regex`, `skip_lines`, ...) are searched over
/// the whole output at once, so `^` and `$` match at every line's start and end. All are
/// compiled when first used; the built-in file's are known good (a unit test compiles them
/// all), the user's are parsed now, so a mistake is reported before anything runs.
fn pattern(
    value: Option<&raw::Located>,
    default: &str,
    backend: &str,
    key: &str,
) -> Result<Pattern, Error> {
    Ok(checked(value, default, backend, key)?.0)
}

/// As `pattern`, with the names of the groups of a user's pattern (`None` for a built-in one).
fn checked(
    value: Option<&raw::Located>,
    default: &str,
    backend: &str,
    key: &str,
) -> Result<(Pattern, Option<Vec<String>>), Error> {
    let per_line = key != "tool_call_regex";
    match value {
        None => Ok((Pattern::lazy(default, per_line), None)),
        Some(located) if located.file == Source::BUILTIN_NAME => {
            Ok((Pattern::lazy(&located.value, per_line), None))
        }
        Some(located) => {
            let origin = format!("{}: backend `{backend}`: key `{key}`", located.at());
            Pattern::checked(&located.value, per_line, origin.clone())
                .map(|(pattern, names)| (pattern, Some(names)))
                .map_err(|e| Error::config(format!("{origin}: invalid regex: {e}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(name: &str, text: &str) -> Source {
        Source {
            name: name.into(),
            text: text.into(),
        }
    }

    #[test]
    fn builtin_file_loads() {
        let config = Config::from_sources(&[Source::builtin()]).unwrap();
        assert!(config.has("demo"));
    }

    /// The built-in patterns are compiled only when used: every one of them compiles, and
    /// has the groups its key needs.
    #[test]
    fn builtin_patterns_compile_and_have_their_groups() {
        let config = Config::from_sources(&[Source::builtin()]).unwrap();
        let names = |p: &Pattern| {
            p.capture_names()
                .flatten()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        for (_, def) in config.definitions().unwrap() {
            let Definition::Cli(d) = def else { continue };
            let p = &d.parsers;
            let call = names(&p.tool_call);
            assert!(
                call.iter().any(|g| g == "json" || g == "name"),
                "{}: {call:?}",
                d.name
            );
            if let Some(tokens) = &p.tokens {
                let groups = names(tokens);
                assert!(
                    groups
                        .iter()
                        .any(|g| matches!(g.as_str(), "input" | "output" | "total")),
                    "{}",
                    d.name
                );
            }
            for extra in p.skip_lines.iter().chain(&p.error).chain(&p.tool_activity) {
                let _ = extra.is_match("");
            }
        }
    }

    /// The built-in backends are read one at a time, when used: each comes out exactly as
    /// reading the whole file at once makes it, and the API-key variables read without
    /// parsing are the ones parsing finds.
    #[test]
    fn builtin_backends_read_alone_equal_the_whole_file_read() {
        let lazy = Config::from_sources(&[Source::builtin()]).unwrap();
        // Not byte-for-byte the embedded file, so it is read whole, as a user's file is.
        let whole = Source {
            name: Source::BUILTIN_NAME.into(),
            text: format!("{BUILTIN_BACKENDS}\n"),
        };
        let eager = Config::from_sources(&[whole]).unwrap();
        assert_eq!(
            lazy.names().collect::<Vec<_>>(),
            eager.names().collect::<Vec<_>>()
        );
        assert!(lazy.names().count() > 10);
        let mut keys = lazy.api_key_envs();
        for (name, def) in eager.definitions().unwrap() {
            assert!(lazy.backends[name].def.get().is_none(), "{name} read early");
            assert_eq!(
                format!("{:?}", lazy.backend(name).unwrap()),
                format!("{def:?}"),
                "{name}"
            );
            if let Some(var) = def.api_key_env() {
                let at = keys.iter().position(|k| k == var).expect(var);
                keys.remove(at);
            }
        }
        assert_eq!(keys, Vec::<String>::new(), "found by the scan only");
        assert_eq!(lazy.auto_order, eager.auto_order);
    }

    #[test]
    fn a_user_file_changes_a_builtin_backend_key_by_key() {
        let config = Config::from_sources(&[
            Source::builtin(),
            src("my.toml", "\n[backends.claude]\ntimeout_s = 9\n"),
        ])
        .unwrap();
        let Definition::Cli(claude) = config.backend("claude").unwrap() else {
            panic!("claude is a CLI backend")
        };
        assert_eq!(claude.command, "claude");
        assert_eq!(claude.timeout, Duration::from_secs(9));
        assert_eq!(claude.defined_at, "my.toml:2");
        assert_eq!(config.user_order, ["claude"]);
        // Read at load, so that a mistake in the change is reported then.
        let err = Config::from_sources(&[
            Source::builtin(),
            src("my.toml", "[backends.claude]\ntokens_regex = \"(x\"\n"),
        ])
        .unwrap_err();
        assert!(
            err.message
                .starts_with("my.toml:2: backend `claude`: key `tokens_regex`: invalid regex"),
            "{}",
            err.message
        );
    }

    #[test]
    fn later_file_overrides_single_keys() {
        let config = Config::from_sources(&[
            src("a.toml", "[backends.x]\ncommand = \"one\"\ntimeout_s = 5\n"),
            src("b.toml", "[backends.x]\ntimeout_s = 7\n"),
        ])
        .unwrap();
        let Definition::Cli(x) = config.backend("x").unwrap() else {
            panic!("x is a CLI backend")
        };
        assert_eq!(x.command, "one");
        assert_eq!(x.timeout, Duration::from_secs(7));
        assert_eq!(x.defined_at, "b.toml:1");
    }

    #[test]
    fn bad_regex_names_file_line_backend_and_key() {
        let err = Config::from_sources(&[src(
            "my.toml",
            "[backends.ok]\ncommand = \"a\"\n\n[backends.bad]\ncommand = \"b\"\ntokens_regex = \"(unclosed\"\n",
        )])
        .unwrap_err();
        assert!(
            err.message
                .starts_with("my.toml:6: backend `bad`: key `tokens_regex`: invalid regex"),
            "{}",
            err.message
        );
    }

    /// The regex engine is built with only some of its Unicode tables (Cargo.toml); these are
    /// what patterns rely on. (The tables left out cannot be missed here: the dev-dependencies
    /// turn them back on in test builds.)
    #[test]
    fn patterns_are_unicode_aware() {
        let re = regex::Regex::new(r"(?i)^été\w* \d\s\p{Lu}\p{N}\b").unwrap();
        assert!(re.is_match("ÉTÉS \u{663}\u{a0}Ж\u{2167}"));
        assert!(!re.is_match("été x Ж3"));
    }

    #[test]
    fn unknown_key_names_file_line_backend_and_key() {
        let err = Config::from_sources(&[src(
            "my.toml",
            "[backends.a]\ncommand = \"a\"\n\n[backends.b]\ncomand = \"b\"\n",
        )])
        .unwrap_err();
        assert!(err.message.contains("my.toml:5"), "{}", err.message);
        assert!(err.message.contains("backend `b`"), "{}", err.message);
        assert!(
            err.message.contains("unknown field `comand`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn context_keys_are_read_with_defaults() {
        let config = Config::from_sources(&[src(
            "my.toml",
            "[backends.a]\ncommand = \"a\"\n\n[backends.b]\ncommand = \"b\"\ncontext = \"sliding:6\"\ncontext_format = \"xml\"\nmax_context_tokens = 32000\ntool_result_max_chars = 500\n",
        )])
        .unwrap();
        let cli = |name: &str| match config.backend(name).unwrap() {
            Definition::Cli(d) => d.clone(),
            Definition::Http(_) | Definition::Pty(_) => panic!("{name} is a CLI backend"),
        };
        let a = cli("a");
        assert_eq!(a.context, ContextSettings::default());
        assert_eq!(a.style.format, crate::context::ContextFormat::Plain);
        let b = cli("b");
        assert_eq!(b.context.mode, ContextMode::Sliding(6));
        assert_eq!(b.context.max_tokens, 32_000);
        assert_eq!(b.context.tool_result_max_chars, 500);
        assert_eq!(b.style.format, crate::context::ContextFormat::Xml);
    }

    #[test]
    fn bad_context_keys_name_file_line_backend_and_key() {
        let err = Config::from_sources(&[src(
            "my.toml",
            "[backends.a]\ncommand = \"a\"\ncontext = \"forever\"\n",
        )])
        .unwrap_err();
        assert!(
            err.message.starts_with(
                "my.toml:3: backend `a`: key `context`: unknown context mode `forever`"
            ),
            "{}",
            err.message
        );
        let err = Config::from_sources(&[src(
            "my.toml",
            "[backends.a]\ncommand = \"a\"\ncontext_format = \"yaml\"\n",
        )])
        .unwrap_err();
        assert!(
            err.message
                .starts_with("my.toml:3: backend `a`: key `context_format`"),
            "{}",
            err.message
        );
        let err = Config::from_sources(&[src(
            "my.toml",
            "[backends.a]\ncommand = \"a\"\nmax_context_tokens = 10\n",
        )])
        .unwrap_err();
        assert!(
            err.message.contains("key `max_context_tokens`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn missing_command_is_named() {
        let err = Config::from_sources(&[src("my.toml", "[backends.a]\nargs = []\n")]).unwrap_err();
        assert_eq!(
            err.message,
            "my.toml:1: backend `a` has no `command` (the program to run, found through PATH)"
        );
    }

    #[test]
    fn json_keys_are_checked_with_file_line_backend_and_key() {
        let err = |text: &str| {
            Config::from_sources(&[src("my.toml", text)])
                .unwrap_err()
                .message
        };
        let e = err("[backends.a]\ncommand = \"a\"\njson_text = \"result\"\n");
        assert!(
            e.starts_with("my.toml:3: backend `a`: key `json_text`: only read with `output"),
            "{e}"
        );
        let e = err("[backends.a]\ncommand = \"a\"\noutput = \"json\"\n");
        assert!(
            e.starts_with("my.toml:3: backend `a`: key `output`: JSON output needs `json_text`"),
            "{e}"
        );
        let e = err("[backends.a]\ncommand = \"a\"\noutput = \"xml\"\n");
        assert!(
            e.starts_with("my.toml:3: backend `a`: key `output`: unknown output `xml`"),
            "{e}"
        );
        let e = err(
            "[backends.a]\ncommand = \"a\"\noutput = \"jsonl\"\njson_text = \"a\"\njson_error = \"x[y\"\n",
        );
        assert!(
            e.starts_with("my.toml:5: backend `a`: key `json_error`: bad field path"),
            "{e}"
        );
        let e = err("[backends.a]\ncommand = \"a\"\ntools = \"some\"\n");
        assert!(
            e.starts_with("my.toml:3: backend `a`: key `tools`: unknown mode `some`"),
            "{e}"
        );
        let e = err("[backends.a]\ntype = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\noutput = \"json\"\n");
        assert!(e.contains("`output`"), "{e}");
    }

    #[test]
    fn own_tools_reach_the_parsers_and_the_prompt_style() {
        let config = Config::from_sources(&[src(
            "my.toml",
            "[backends.a]\ncommand = \"a\"\ntools = \"own\"\n",
        )])
        .unwrap();
        let Definition::Cli(a) = config.backend("a").unwrap() else {
            panic!("a is a CLI backend")
        };
        assert!(a.parsers.own_tools && a.style.own_tools);
    }

    #[test]
    fn auto_order_tries_keyed_apis_then_every_cli_preset() {
        let config = Config::from_sources(&[Source::builtin()]).unwrap();
        let order = &config.auto_order;
        assert_eq!(
            order[..4],
            ["claude-api", "openai", "openrouter", "deepseek"]
        );
        for (name, def) in config.definitions().unwrap() {
            let listed = order.iter().any(|n| n == name);
            match def {
                Definition::Cli(_) => assert_eq!(listed, name != "demo", "{name}"),
                Definition::Http(d) => assert_eq!(listed, d.api_key_env.is_some(), "{name}"),
                // A single-task CLI preset of the same agent is the better pick.
                Definition::Pty(_) => assert!(!listed, "{name}"),
            }
        }
    }
}
