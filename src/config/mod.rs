//! Loading `backends.toml`: the built-in file embedded in the binary, then the user's
//! `$XDG_CONFIG_HOME/agent-loop/backends.toml`, then `--config FILE`. A later file adds
//! backends or overrides single keys of an earlier one. Every regex is compiled once, here,
//! and every mistake is reported with the file, the line, the backend and the key.

mod raw;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;

use crate::context::PromptStyle;
use crate::mcp::config::{RawServer, ServerDef};
use crate::parse::Parsers;
use crate::Error;
use raw::RawBackend;
pub use raw::{Located, Overlay};

/// The built-in backend definitions.
pub const BUILTIN_BACKENDS: &str = include_str!("../../backends.toml");

const DEFAULT_TOOL_CALL_REGEX: &str = r"(?s)<tool_call>\s*(?P<json>.*?)\s*</tool_call>";
const DEFAULT_TOOL_CALL_FORMAT: &str = "<tool_call>{json}</tool_call>";
const DEFAULT_TIMEOUT_S: u64 = 600;
const DEFAULT_PROGRESS_S: u64 = 10;
const DEFAULT_MAX_OUTPUT_BYTES: u64 = 4 * 1024 * 1024;

/// One configuration file's text and the name it is reported under.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn builtin() -> Self {
        Source {
            name: "built-in backends.toml".into(),
            text: BUILTIN_BACKENDS.into(),
        }
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
}

/// Every configured backend, plus the default backend if a file names one.
#[derive(Debug, Clone)]
pub struct Config {
    pub backends: BTreeMap<String, BackendDef>,
    pub default_backend: Option<String>,
    /// `[mcp.servers.NAME]` entries, enabled or not.
    pub mcp_servers: BTreeMap<String, ServerDef>,
    /// The files read, in order.
    pub sources: Vec<String>,
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
        let mut merged: BTreeMap<String, (RawBackend, String)> = BTreeMap::new();
        let mut servers: BTreeMap<String, (RawServer, String)> = BTreeMap::new();
        let mut default_backend = None;
        for source in sources {
            let file = raw::parse(source)?;
            if file.default_backend.is_some() {
                default_backend = file.default_backend;
            }
            merge(&mut merged, file.backends, source, raw::BACKENDS);
            merge(&mut servers, file.mcp.servers, source, raw::MCP_SERVERS);
        }
        let mcp_servers = servers
            .into_iter()
            .map(|(name, (raw, at))| {
                crate::mcp::config::resolve(&name, raw, at).map(|def| (name, def))
            })
            .collect::<Result<BTreeMap<_, _>, _>>()?;
        let backends = merged
            .into_iter()
            .map(|(name, (raw, at))| resolve(&name, raw, at).map(|def| (name, def)))
            .collect::<Result<BTreeMap<_, _>, _>>()?;
        Ok(Config {
            backends,
            default_backend,
            mcp_servers,
            sources: sources.iter().map(|s| s.name.clone()).collect(),
        })
    }

    /// The backend called `name`, or an error listing the configured ones.
    pub fn backend(&self, name: &str) -> Result<&BackendDef, Error> {
        self.backends.get(name).ok_or_else(|| {
            Error::config(format!(
                "no backend named `{name}`; configured backends: {} (run `agent-loop --help` for how to add one)",
                self.backends.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })
    }
}

/// Adds one file's tables to the merged ones: a table seen before takes the keys this file
/// sets, and is reported as defined here.
fn merge<T: raw::Overlay>(
    merged: &mut BTreeMap<String, (T, String)>,
    tables: BTreeMap<String, T>,
    source: &Source,
    prefix: &str,
) {
    for (name, table) in tables {
        let at = format!(
            "{}:{}",
            source.name,
            raw::table_line(&source.text, prefix, &name)
        );
        match merged.get_mut(&name) {
            Some((base, defined_at)) => {
                base.overlay(table);
                *defined_at = at;
            }
            None => {
                merged.insert(name, (table, at));
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
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|d| d.join("agent-loop"))
}

fn resolve(name: &str, raw: RawBackend, defined_at: String) -> Result<BackendDef, Error> {
    let here = |key: &str| format!("{defined_at}: backend `{name}`: key `{key}`");
    if let Some(kind) = &raw.kind {
        if kind.value != "cli" {
            return Err(Error::config(format!(
                "{}:{}: backend `{name}`: key `type`: unknown type `{}`; the supported type is `cli`",
                kind.file, kind.line, kind.value
            )));
        }
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
    let tool_call = compile(
        raw.tool_call_regex.as_ref(),
        DEFAULT_TOOL_CALL_REGEX,
        name,
        "tool_call_regex",
    )?;
    if tool_call
        .capture_names()
        .flatten()
        .all(|g| g != "json" && g != "name")
    {
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
            let re = compile(Some(r), "", name, "tokens_regex")?;
            if re
                .capture_names()
                .flatten()
                .all(|g| !matches!(g, "input" | "output" | "total"))
            {
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
        .map(|r| compile(Some(r), "", name, "skip_lines"))
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
        style: PromptStyle { tool_call_format },
        parsers: Parsers {
            tool_call,
            tokens,
            skip_lines,
        },
    })
}

fn compile(
    value: Option<&raw::Located>,
    default: &str,
    backend: &str,
    key: &str,
) -> Result<Regex, Error> {
    let Some(located) = value else {
        return Regex::new(default).map_err(|e| Error::config(format!("built-in {key}: {e}")));
    };
    Regex::new(&located.value).map_err(|e| {
        Error::config(format!(
            "{}: backend `{backend}`: key `{key}`: invalid regex: {e}",
            located.at()
        ))
    })
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
        assert!(config.backends.contains_key("demo"));
    }

    #[test]
    fn later_file_overrides_single_keys() {
        let config = Config::from_sources(&[
            src("a.toml", "[backends.x]\ncommand = \"one\"\ntimeout_s = 5\n"),
            src("b.toml", "[backends.x]\ntimeout_s = 7\n"),
        ])
        .unwrap();
        let x = &config.backends["x"];
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
    fn missing_command_is_named() {
        let err = Config::from_sources(&[src("my.toml", "[backends.a]\nargs = []\n")]).unwrap_err();
        assert_eq!(
            err.message,
            "my.toml:1: backend `a` has no `command` (the program to run, found through PATH)"
        );
    }
}
