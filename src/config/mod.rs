//! Loading `backends.toml`: the built-in file embedded in the binary, then the user's
//! `$XDG_CONFIG_HOME/agent-loop/backends.toml`, then `--config FILE`. A later file adds
//! backends or overrides single keys of an earlier one. Every file is parsed whole and every
//! backend resolved at load, each mistake reported with the file, the line, the backend and
//! the key. A user's regexes are compiled then too; the built-in presets' when first used
//! (see `parse::Pattern`).
//!
//! - `raw`: the schema as written, each key optional so that files can be layered;
//! - `cli` and `http`: the checked definitions of the two kinds of backend;
//! - `mcp`: the `[mcp.servers.NAME]` tables;
//! - `tools`: the `[tools.NAME]` tables (custom command tools, `confirm` of built-ins);
//! - `settings`: `config.toml`, the environment and the flags (`settings::Settings`).

mod cli;
mod http;
pub mod mcp;
pub(crate) mod raw;
pub mod settings;
#[cfg(test)]
mod tests;
pub mod tools;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::context::ContextSettings;
use crate::Error;
use mcp::{RawServer, ServerDef};
use raw::RawBackend;
pub use raw::{Located, Overlay};

pub use cli::{BackendDef, PromptVia};
pub use http::{HttpDef, RetrySettings, WireFormat};

/// The built-in backend definitions.
pub const BUILTIN_BACKENDS: &str = include_str!("../../backends.toml");

/// The timeout of a backend call when its entry sets none.
const DEFAULT_TIMEOUT_S: u64 = 600;

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

impl Definition {
    pub fn name(&self) -> &str {
        match self {
            Definition::Cli(d) => &d.name,
            Definition::Http(d) => &d.name,
        }
    }

    pub fn model(&self) -> Option<&str> {
        match self {
            Definition::Cli(d) => d.model.as_deref(),
            Definition::Http(d) => d.model.as_deref(),
        }
    }

    /// The environment variable that holds its API key, if any.
    /// Its context settings (`context`, `max_context_tokens`, `tool_result_max_chars`).
    pub fn context(&self) -> ContextSettings {
        match self {
            Definition::Cli(d) => d.context,
            Definition::Http(d) => d.context,
        }
    }

    pub fn api_key_env(&self) -> Option<&str> {
        match self {
            Definition::Cli(_) => None,
            Definition::Http(d) => d.api_key_env.as_deref(),
        }
    }

    /// Whether it can run here: an agent CLI's command is found; an API's key is set.
    pub fn is_available(&self) -> bool {
        match self {
            Definition::Cli(d) => {
                d.command == "{self}" || d.command.contains('/') || which::which(&d.command).is_ok()
            }
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
}

/// Every configured backend, plus the default backend if a file names one.
#[derive(Debug, Clone)]
pub struct Config {
    /// Every configured backend, by name.
    backends: BTreeMap<String, Definition>,
    pub default_backend: Option<String>,
    /// Built-in backends tried, in this order, when none is named (`auto_order`).
    pub auto_order: Vec<String>,
    /// Backends the user's files define or change, in the order of those files.
    pub user_order: Vec<String>,
    /// `[mcp.servers.NAME]` entries, enabled or not.
    pub mcp_servers: BTreeMap<String, ServerDef>,
    /// `[tools.NAME]` entries.
    pub tools: tools::ToolDefs,
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
        let mut merged: Merged<RawBackend> = BTreeMap::new();
        let mut servers: Merged<RawServer> = BTreeMap::new();
        let mut tool_tables: Merged<tools::RawTool> = BTreeMap::new();
        let mut default_backend = None;
        let mut auto_order = Vec::new();
        for (index, source) in sources.iter().enumerate() {
            let lines = raw::Lines::of(source);
            let mut file = raw::parse(source, &lines)?;
            if file.default_backend.is_some() {
                default_backend = file.default_backend;
            }
            if let Some(order) = file.auto_order.take() {
                auto_order = order;
            }
            merge(&mut merged, file.backends, &lines, index);
            merge(&mut servers, file.mcp.servers, &lines, index);
            merge(&mut tool_tables, file.tools, &lines, index);
        }
        // The built-in file is the first source; what the others define is the user's.
        let mut user: Vec<(&String, (usize, usize))> = merged
            .iter()
            .filter(|(_, v)| v.2 .0 > 0)
            .map(|(k, v)| (k, v.2))
            .collect();
        user.sort_by_key(|(_, order)| *order);
        let user_order: Vec<String> = user.into_iter().map(|(name, _)| name.clone()).collect();
        let mcp_servers = servers
            .into_iter()
            .map(|(name, (raw, at, _))| mcp::resolve(&name, raw, at).map(|def| (name, def)))
            .collect::<Result<BTreeMap<_, _>, _>>()?;
        let backends = merged
            .into_iter()
            .map(|(name, (raw, at, _))| resolve(&name, raw, at).map(|def| (name, def)))
            .collect::<Result<BTreeMap<_, _>, Error>>()?;
        let tools = tools::resolve(
            tool_tables
                .into_iter()
                .map(|(name, (raw, at, _))| (name, (raw, at)))
                .collect(),
        )?;
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
            tools,
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
        self.backends.get(name).ok_or_else(|| {
            Error::config(format!(
                "no backend named `{name}`; configured backends: {} (run `agent-loop --help` for how to add one)",
                self.names().collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// The names of every configured backend, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.backends.keys().map(String::as_str)
    }

    /// Whether a backend of that name is configured.
    pub fn has(&self, name: &str) -> bool {
        self.backends.contains_key(name)
    }

    /// Every configured backend, by name, sorted.
    pub fn definitions(&self) -> impl Iterator<Item = (&str, &Definition)> {
        self.backends.iter().map(|(name, def)| (name.as_str(), def))
    }

    /// The environment variables any backend reads its API key from.
    pub fn api_key_envs(&self) -> Vec<String> {
        self.backends
            .values()
            .filter_map(|def| def.api_key_env().map(str::to_string))
            .collect()
    }
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
    tables: BTreeMap<toml::Spanned<String>, T>,
    lines: &raw::Lines,
    index: usize,
) {
    for (name, table) in tables {
        let line = lines.line(name.span().start);
        let at = format!("{}:{line}", lines.name());
        match merged.get_mut(name.get_ref()) {
            Some((base, defined_at, order)) => {
                base.overlay(table);
                *defined_at = at;
                *order = (index, line);
            }
            None => {
                merged.insert(name.into_inner(), (table, at, (index, line)));
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
    let Some(kind) = raw.kind.clone().filter(|k| k.value != "cli") else {
        return cli::resolve(name, raw, defined_at).map(Definition::Cli);
    };
    match WireFormat::from_type(&kind.value) {
        Some(format) => http::resolve(name, raw, defined_at, format).map(Definition::Http),
        None => Err(Error::config(format!(
            "{}: backend `{name}`: key `type`: unknown type `{}`; the types are cli, {}",
            kind.at(),
            kind.value,
            WireFormat::ALL.map(WireFormat::type_name).join(", ")
        ))),
    }
}
