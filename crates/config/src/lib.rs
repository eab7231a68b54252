//! Loading `backends.toml`: the built-in file embedded in the binary, then the user's
//! `$XDG_CONFIG_HOME/agent-loop/backends.toml`, then `--config FILE`. A later file adds
//! backends or overrides single keys of an earlier one. Every file of the user's is parsed
//! whole and every backend resolved at load, each mistake reported with the file, the line,
//! the backend and the key. A user's regexes are compiled then too. The built-in presets are
//! parsed when first asked for (`presets`), their regexes compiled when first used (see
//! `parse::Pattern`).
//!
//! - `raw`: the schema as written, each key optional so that files can be layered;
//! - `cli` and `http`: the checked definitions of the two kinds of backend;
//! - `mcp`: the `[mcp.servers.NAME]` tables;
//! - `tools`: the `[tools.NAME]` tables (custom command tools, `confirm` of built-ins);
//! - `settings`: the text `config.toml`, the environment and the built-in defaults give of
//!   each setting, with its origin (`settings::Layers`), typed one by one (`Setting`);
//! - `bool_setting`: how a boolean setting is written (`debug`, `web_keep_chrome`).
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

mod acp;
pub mod bool_setting;
mod cli;
mod cli_args;
pub mod dirs;
mod error;
mod http;
mod keys;
mod launch;
pub mod mcp;
pub mod own_files;
mod presets;
mod pty;
pub(crate) mod raw;
pub mod settings;
mod source;
#[cfg(test)]
mod tests;
pub mod tools;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::context::{ContextMode, ContextSettings};
use crate::dirs::xdg_home;
// The layers below at the paths the modules name them by.
use agent_loop_context as context;
use agent_loop_parse as parse;
use agent_loop_protocol::{Error, ErrorKind};
use agent_loop_tools::ToolSpec;
use mcp::{RawServer, ServerDef};
use raw::RawBackend;
pub use source::{Located, Overlay, Source};

pub use acp::{AcpDef, Guard, PerName, ACP_TYPE, GUARD_FILE, GUARD_MCP_SERVERS};
pub use cli::{BackendDef, PromptVia};
pub use error::ConfigError;
pub use http::{shown_url, HttpDef, RetrySettings, ToolCallIds, WireFormat};
pub use launch::Launch;
pub use pty::{PtyDef, PtyExit, PTY_TYPE};

/// The built-in backend definitions.
pub const BUILTIN_BACKENDS: &str = include_str!("../../../backends.toml");

impl Definition {
    pub fn name(&self) -> &str {
        match self {
            Definition::Cli(d) => &d.name,
            Definition::Http(d) => &d.name,
            Definition::Pty(d) => &d.name,
            Definition::Acp(d) => &d.name,
        }
    }

    pub fn model(&self) -> Option<&str> {
        match self {
            Definition::Cli(d) => d.model.as_deref(),
            Definition::Http(d) => d.model.as_deref(),
            Definition::Pty(d) => d.model.as_deref(),
            Definition::Acp(d) => d.model.as_deref(),
        }
    }

    /// What it is and what it needs (`description` in backends.toml), or "".
    pub fn description(&self) -> &str {
        match self {
            Definition::Cli(d) => &d.description,
            Definition::Http(d) => &d.description,
            Definition::Pty(d) => &d.launch.description,
            Definition::Acp(d) => &d.launch.description,
        }
    }

    /// Whether a model can be chosen for it (`--model`, `/model`): an API's always, an ACP
    /// agent's where it offers models (it says), an agent CLI's or terminal agent's through
    /// `model_args` or `{model}` in its arguments.
    pub fn takes_model(&self) -> bool {
        let names = |args: &[String]| args.iter().any(|a| a.contains("{model}"));
        match self {
            Definition::Cli(d) => !d.model_args.is_empty() || names(&d.args) || names(&d.loop_args),
            Definition::Http(_) | Definition::Acp(_) => true,
            Definition::Pty(d) => names(&d.launch.args),
        }
    }

    /// Its context settings (`context`, `max_context_tokens`, `tool_result_max_chars`).
    pub fn context(&self) -> ContextSettings {
        match self {
            Definition::Cli(d) => d.context,
            Definition::Http(d) => d.context,
            // The agent keeps its own conversation; each call types the newest message.
            Definition::Pty(_) | Definition::Acp(_) => ContextSettings {
                mode: ContextMode::Fresh,
                ..ContextSettings::default()
            },
        }
    }

    /// The environment variable that holds its API key, if any.
    pub fn api_key_env(&self) -> Option<&str> {
        match self {
            Definition::Cli(_) | Definition::Pty(_) | Definition::Acp(_) => None,
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
            Definition::Pty(d) => d.command.contains('/') || which::which(&d.command).is_ok(),
            Definition::Acp(d) => d.command.contains('/') || which::which(&d.command).is_ok(),
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
    /// `type = "acp"`: an agent speaking the Agent Client Protocol on its stdio.
    Acp(AcpDef),
}

/// A configured backend: resolved at load, or a built-in preset no file changes, resolved
/// when first asked for. The definitions are boxed: a definition is large, and the map of
/// some two dozen entries, most of them never resolved, moved each one whole as it grew.
#[derive(Debug, Clone)]
enum Entry {
    Ready(Box<Definition>),
    Preset(presets::Preset, OnceLock<Box<Definition>>),
}

/// Every configured backend, plus the default backend if a file names one.
#[derive(Debug, Clone)]
pub struct Config {
    /// Every configured backend, by name.
    backends: BTreeMap<String, Entry>,
    /// `default_backend` of the last backends file that sets it, and that file and line.
    pub default_backend: Option<settings::Setting<String>>,
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
    /// Built-in definitions, then the user's file if it exists, then `extra`; `[tools.NAME]`
    /// tables checked against the built-in tools' specs (`agent_loop_builtins::specs()`).
    pub fn load(extra: Option<&Path>, builtins: &[ToolSpec]) -> Result<Self, ConfigError> {
        let mut sources = Vec::new();
        if let Some(path) = user_backends_path().filter(|p| p.is_file()) {
            sources.push(Source::read(&path)?);
        }
        if let Some(path) = extra {
            sources.push(Source::read(path)?);
        }
        // The built-in file is read where it is, not copied to be a source like the others.
        Self::layered(true, &sources, builtins)
    }

    /// Merges the sources in order (later ones win, key by key) and validates the result,
    /// knowing no built-in tool.
    pub fn from_sources(sources: &[Source]) -> Result<Self, ConfigError> {
        Self::from_sources_with(sources, &[])
    }

    /// [`Config::from_sources`], with `[tools.NAME]` tables checked against `builtins`.
    pub fn from_sources_with(
        sources: &[Source],
        builtins: &[ToolSpec],
    ) -> Result<Self, ConfigError> {
        match sources.split_first() {
            Some((first, rest)) if first.is_builtin() => Self::layered(true, rest, builtins),
            _ => Self::layered(false, sources, builtins),
        }
    }

    /// The built-in file's backends when `builtin`, then the files `rest` in order.
    fn layered(builtin: bool, rest: &[Source], builtins: &[ToolSpec]) -> Result<Self, ConfigError> {
        let user_lines: Vec<source::Lines> = rest.iter().map(source::Lines::of).collect();
        let user_files = rest
            .iter()
            .zip(&user_lines)
            .map(|(source, lines)| raw::parse(source, lines))
            .collect::<Result<Vec<_>, _>>()?;
        // The built-in file: its presets that the user's files change are parsed now, to be
        // merged with them; the others when first asked for.
        let mut lazy = BTreeMap::new();
        let mut builtin_sources = Vec::new();
        if builtin {
            let changed: BTreeSet<&str> = user_files
                .iter()
                .flat_map(|file| file.backends.keys())
                .map(|name| name.get_ref().as_str())
                .collect();
            let all = presets::all();
            builtin_sources.push(presets::preamble(&all));
            for preset in all {
                if changed.contains(preset.name) {
                    builtin_sources.push(preset.source());
                } else {
                    lazy.insert(preset.name.to_string(), preset);
                }
            }
        }
        let builtin_lines: Vec<source::Lines> =
            builtin_sources.iter().map(source::Lines::of).collect();
        let builtin_files = builtin_sources
            .iter()
            .zip(&builtin_lines)
            .map(|(source, lines)| raw::parse(source, lines))
            .collect::<Result<Vec<_>, _>>()?;
        // The built-in file is the first source (index 0); what the others define is the user's.
        let layers = builtin_files
            .into_iter()
            .zip(&builtin_lines)
            .map(|(file, lines)| (0, file, lines))
            .chain(
                user_files
                    .into_iter()
                    .zip(&user_lines)
                    .enumerate()
                    .map(|(i, (file, lines))| (i + usize::from(builtin), file, lines)),
            );
        let mut merged: Merged<RawBackend> = BTreeMap::new();
        let mut servers: Merged<RawServer> = BTreeMap::new();
        let mut tool_tables: Merged<tools::RawTool> = BTreeMap::new();
        let mut default_backend = None;
        let mut auto_order = Vec::new();
        for (index, mut file, lines) in layers {
            if file.default_backend.is_some() {
                default_backend = file.default_backend;
            }
            if let Some(order) = file.auto_order.take() {
                auto_order = order;
            }
            merge(&mut merged, file.backends, lines, index);
            merge(&mut servers, file.mcp.servers, lines, index);
            merge(&mut tool_tables, file.tools, lines, index);
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
        let mut backends = merged
            .into_iter()
            .map(|(name, (raw, at, _))| {
                resolve(&name, raw, at).map(|def| {
                    (
                        name,
                        Entry::Ready(Box::new(with_servers(def, &mcp_servers))),
                    )
                })
            })
            .collect::<Result<BTreeMap<_, _>, ConfigError>>()?;
        for (name, preset) in lazy {
            backends.insert(name, Entry::Preset(preset, OnceLock::new()));
        }
        let tools = tools::resolve(
            tool_tables
                .into_iter()
                .map(|(name, (raw, at, _))| (name, (raw, at)))
                .collect(),
            builtins,
        )?;
        if let Some(unknown) = auto_order.iter().find(|n| !backends.contains_key(*n)) {
            return Err(ConfigError::AutoOrder {
                name: unknown.clone(),
            });
        }
        Ok(Config {
            backends,
            default_backend: default_backend.map(|d: Located| settings::Setting {
                origin: settings::Origin::File(d.at()),
                value: d.value,
            }),
            auto_order,
            user_order,
            mcp_servers,
            tools,
            sources: (builtin.then(|| Source::BUILTIN_NAME.to_string()))
                .into_iter()
                .chain(rest.iter().map(|s| s.name.clone()))
                .collect(),
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
    pub fn backend(&self, name: &str) -> Result<&Definition, ConfigError> {
        match self.backends.get(name) {
            Some(entry) => self.resolved(entry),
            None => Err(ConfigError::UnknownBackend {
                name: name.to_string(),
                near: closest(name, self.names()).map(str::to_string),
                known: self.names().map(str::to_string).collect(),
            }),
        }
    }

    /// An entry's definition; a built-in preset's parsed and resolved the first time.
    fn resolved<'a>(&'a self, entry: &'a Entry) -> Result<&'a Definition, ConfigError> {
        let (preset, cell) = match entry {
            Entry::Ready(def) => return Ok(def),
            Entry::Preset(preset, cell) => (preset, cell),
        };
        if let Some(def) = cell.get() {
            return Ok(def);
        }
        let source = preset.source();
        let lines = source::Lines::of(&source);
        let file = raw::parse(&source, &lines)?;
        let mut def = None;
        for (name, raw) in file.backends {
            let at = format!("{}:{}", lines.name(), lines.line(name.span().start));
            def = Some(resolve(name.get_ref(), raw, at)?);
        }
        let def = def.ok_or_else(|| ConfigError::UnknownBackend {
            name: preset.name.to_string(),
            near: None,
            known: self.names().map(str::to_string).collect(),
        })?;
        Ok(cell.get_or_init(|| Box::new(with_servers(def, &self.mcp_servers))))
    }

    /// The backends of a comma-separated list (`a,b,c`), each checked to be configured.
    pub fn backend_list(&self, list: &str) -> Result<Vec<String>, ConfigError> {
        let names: Vec<String> = list
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect();
        for name in &names {
            self.backend(name)?;
        }
        Ok(names)
    }

    /// The backends the `backend` setting names (`a,b`), each checked. A name that is not
    /// configured is an error saying where the setting came from (config.toml:LINE, the
    /// variable): the user did not type it on this command line, and would have to guess.
    pub fn setting_backends(
        &self,
        setting: &settings::Setting<String>,
    ) -> Result<Vec<String>, ConfigError> {
        self.named_backends("backend", setting)
    }

    /// The backends a backends file's `default_backend` names, each checked; an unknown one
    /// is an error naming that file and line, as the `backend` setting's names its origin.
    pub fn default_backends(&self) -> Result<Option<Vec<String>>, ConfigError> {
        let named = |setting| self.named_backends("default_backend", setting);
        self.default_backend.as_ref().map(named).transpose()
    }

    /// The backends of `setting` (called `name`), each checked, an error naming its origin.
    fn named_backends(
        &self,
        name: &str,
        setting: &settings::Setting<String>,
    ) -> Result<Vec<String>, ConfigError> {
        self.backend_list(&setting.value)
            .map_err(|e| match (&e, &setting.origin) {
                (
                    ConfigError::UnknownBackend { .. },
                    settings::Origin::File(_) | settings::Origin::Env(_),
                ) => ConfigError::BadSetting {
                    origin: setting.origin.clone(),
                    name: name.into(),
                    value: setting.value.clone(),
                    why: e.to_string(),
                },
                _ => e,
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

    /// Every configured backend, by name, sorted (every built-in preset parsed).
    pub fn definitions(&self) -> Result<Vec<(&str, &Definition)>, ConfigError> {
        self.backends
            .iter()
            .map(|(name, entry)| Ok((name.as_str(), self.resolved(entry)?)))
            .collect()
    }

    /// The environment variables that hold secrets: any backend's API key, and the MCP
    /// servers' credentials.
    pub fn api_key_envs(&self) -> Vec<String> {
        let mcp = self
            .mcp_servers
            .values()
            .flat_map(|def| match &def.transport {
                mcp::Transport::Http { credentials, .. } => credentials.env_names(),
                mcp::Transport::Stdio { .. } => Vec::new(),
            });
        self.backends
            .values()
            .filter_map(|entry| match entry {
                Entry::Ready(def) => def.api_key_env(),
                Entry::Preset(preset, cell) => cell
                    .get()
                    .map_or_else(|| preset.api_key_env(), |def| def.api_key_env()),
            })
            .map(str::to_string)
            .chain(mcp)
            .collect()
    }
}

/// The name most like `name`, if one is close enough to be a typing slip: clap's measure for
/// misspelt flags, with a stricter threshold (at clap's 0.7, `nope` would suggest `openai`).
pub fn closest<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    names
        .map(|n| (strsim::jaro(name, n), n))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

/// The program `command` names, looked for on PATH as a backend's is (`agent-loop
/// backends` shows where it was found).
pub fn find_program(command: &str) -> Option<PathBuf> {
    which::which(command).ok()
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
fn merge<T: Overlay>(
    merged: &mut Merged<T>,
    tables: BTreeMap<toml::Spanned<String>, T>,
    lines: &source::Lines,
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

/// An ACP agent connects to the enabled MCP servers itself.
fn with_servers(mut def: Definition, servers: &BTreeMap<String, ServerDef>) -> Definition {
    if let Definition::Acp(d) = &mut def {
        d.mcp_servers = servers.values().filter(|s| s.enabled).cloned().collect();
    }
    def
}

/// Resolves an entry by its `type`.
fn resolve(name: &str, raw: RawBackend, defined_at: String) -> Result<Definition, ConfigError> {
    if raw.kind.as_ref().is_some_and(|k| k.value == ACP_TYPE) {
        return acp::resolve(name, raw, defined_at).map(Definition::Acp);
    }
    for (key, set) in [
        ("auto_mode", raw.auto_mode.is_some()),
        ("ask_mode", raw.ask_mode.is_some()),
        ("notice_regex", raw.notice_regex.is_some()),
    ] {
        if set {
            return Err(ConfigError::key(
                defined_at,
                name,
                key,
                "only `type = \"acp\"` backends read it",
            ));
        }
    }
    if raw.kind.as_ref().is_some_and(|k| k.value == PTY_TYPE) {
        return pty::resolve(name, raw, defined_at).map(Definition::Pty);
    }
    if let Some(key) = raw.pty_only_keys().first() {
        return Err(ConfigError::key(
            defined_at,
            name,
            key,
            "only `type = \"pty\"` backends read it",
        ));
    }
    let Some(kind) = raw.kind.clone().filter(|k| k.value != "cli") else {
        return cli::resolve(name, raw, defined_at).map(Definition::Cli);
    };
    match WireFormat::from_type(&kind.value) {
        Some(_) if raw.guard.is_some() => Err(ConfigError::key(
            defined_at,
            name,
            "guard",
            "an HTTP backend runs no program (agent-loop runs its tools)",
        )),
        Some(format) => http::resolve(name, raw, defined_at, format).map(Definition::Http),
        None => Err(ConfigError::key(
            kind.at(),
            name,
            "type",
            format!(
                "unknown type `{}`; the types are cli, pty, acp, {}",
                kind.value,
                WireFormat::ALL.map(WireFormat::type_name).join(", ")
            ),
        )),
    }
}
