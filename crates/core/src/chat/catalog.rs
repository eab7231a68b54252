//! What a front end shows outside any one chat: the saved sessions (`agent-loop sessions`,
//! the Telegram bot's archive names, the ACP and MCP servers' checks that a session exists),
//! the configured backends (`agent-loop backends`), `doctor`, the configuration's report
//! (`agent-loop config`) and MCP logins. Associated functions of [`Chat`], so that front ends
//! reach the session store, the backends' definitions, the backends and the MCP client only
//! through the façade (the library's public face exports no lower layer).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::config::{user_backends_path, user_settings_path, Config, Definition, HttpDef, Source};
use crate::context::Method;
use crate::session::{validate_name, Listing, Store};
use crate::{builtins, Error};

use super::{Chat, RunSettings};

/// The loaded configuration (backends.toml's layers, the MCP servers, the tools' tables),
/// opaque to front ends: they get it from [`Chat::load_config`] and hand it back to the
/// functions here, so what it holds can change without touching one of them.
pub struct LoadedConfig(pub(crate) Config);

/// A configured backend as `agent-loop backends` lists it.
#[derive(Debug, Clone)]
pub struct BackendRow {
    pub name: String,
    /// Its type: `cli`, `cli, own tools`, `pty, own tools`, `acp, own tools` or the HTTP
    /// format's name.
    pub kind: String,
    /// The command it runs, or the URL it calls.
    pub target: String,
    /// Whether it can run here: its program found on PATH, its API key set.
    pub status: String,
    /// The program found, which a front end may ask for `--version`.
    pub program: Option<PathBuf>,
    /// A keyless HTTP backend's URL: whether its server answers is its status, which a
    /// front end may ask.
    pub probe: Option<String>,
    /// The model it is configured with, if any.
    pub model: Option<String>,
    /// Its description in the backends files.
    pub description: String,
}

/// Whether the configured backend `name` can run here.
fn available(config: &Config, name: &str) -> bool {
    config.backend(name).is_ok_and(Definition::is_available)
}

/// The program `command` names on PATH, and the status that says so.
fn found(command: &str) -> (String, Option<PathBuf>) {
    match crate::config::find_program(command) {
        Some(path) => (format!("found: {}", path.display()), Some(path)),
        None => ("not on PATH".to_string(), None),
    }
}

fn row(name: &str, def: &Definition) -> BackendRow {
    let (kind, target, (status, program), probe) = match def {
        Definition::Cli(d) => {
            let kind = if d.parsers.own_tools {
                "cli, own tools"
            } else {
                "cli"
            };
            let status = if d.command == "{self}" {
                ("built in".to_string(), None)
            } else {
                found(&d.command)
            };
            let target = d.command.replace("{self}", "agent-loop");
            (kind.to_string(), target, status, None)
        }
        Definition::Pty(d) => (
            "pty, own tools".into(),
            d.command.clone(),
            found(&d.command),
            None,
        ),
        Definition::Acp(d) => (
            "acp, own tools".into(),
            d.command.clone(),
            found(&d.command),
            None,
        ),
        Definition::Http(d) => {
            let status = match &d.api_key_env {
                None => String::new(),
                Some(var) if def.is_available() => format!("{var} set"),
                Some(var) => format!("{var} not set"),
            };
            let probe = d.api_key_env.is_none().then(|| d.base_url.clone());
            (
                d.format.type_name().into(),
                crate::config::shown_url(&d.base_url),
                (status, None),
                probe,
            )
        }
    };
    BackendRow {
        name: name.into(),
        kind,
        target,
        status,
        program,
        probe,
        model: def.model().map(str::to_string),
        description: def.description().to_string(),
    }
}

/// A file's path, and `(not found)` when nothing is there.
fn looked_for(path: Option<&Path>) -> String {
    match path {
        Some(path) if path.is_file() => path.display().to_string(),
        Some(path) => format!("{} (not found)", path.display()),
        None => "(no home folder: neither XDG_CONFIG_HOME nor HOME is set)".to_string(),
    }
}

impl Chat {
    /// The folder sessions are saved in by default; `None` without a home folder.
    pub fn saved_sessions_dir() -> Option<PathBuf> {
        Store::default_dir()
    }

    fn store() -> Result<Store, Error> {
        let dir = Self::saved_sessions_dir()
            .ok_or_else(|| Error::config("neither XDG_DATA_HOME nor HOME is set"))?;
        Ok(Store::new(dir))
    }

    /// Every saved session (a broken one as such), for `agent-loop sessions`.
    pub fn saved_sessions() -> Result<Vec<Listing>, Error> {
        Ok(Self::store()?.list())
    }

    /// Removes the saved session `name`.
    pub fn remove_saved(name: &str) -> Result<(), Error> {
        Ok(Self::store()?.remove(name)?)
    }

    /// Whether a session named `name` is saved.
    pub fn is_saved(name: &str) -> bool {
        Self::store().is_ok_and(|s| s.has(name))
    }

    /// `base`, or `base-2`, `base-3`... : the first name no saved session has; `None`
    /// without a home folder.
    pub fn free_session_name(base: &str) -> Option<String> {
        Self::store().ok().map(|s| s.free_name(base))
    }

    /// Whether `name` can name a session (the error says why not).
    pub fn check_session_name(name: &str) -> Result<(), Error> {
        Ok(validate_name(name)?)
    }

    /// Every configured backend as `agent-loop backends` lists it, without asking servers
    /// or programs anything.
    pub fn backends(config: &LoadedConfig) -> Result<Vec<BackendRow>, Error> {
        Ok(config
            .0
            .definitions()?
            .into_iter()
            .map(|(name, def)| row(name, def))
            .collect())
    }

    /// Whether the configured backend `name` can run here (its program found, its key set).
    pub fn can_run(config: &LoadedConfig, name: &str) -> bool {
        available(&config.0, name)
    }

    /// Every configured backend that can run here.
    pub fn runnable_backends(config: &LoadedConfig) -> Result<Vec<String>, Error> {
        Ok(config
            .0
            .definitions()?
            .into_iter()
            .filter(|(_, def)| def.is_available())
            .map(|(name, _)| name.to_string())
            .collect())
    }

    /// The backends this chat may switch to: its own, and every other that can run here.
    pub fn switchable_backends(&self) -> Vec<String> {
        let current = &self.def;
        self.config
            .names()
            .filter(|name| *name == current.name() || available(&self.config, name))
            .map(str::to_string)
            .collect()
    }

    /// That `name` is a configured backend (the error names the closest one).
    pub fn check_backend(config: &LoadedConfig, name: &str) -> Result<(), Error> {
        config.0.backend(name)?;
        Ok(())
    }

    /// That every backend of a comma-separated list (`a,b`: a fan-out) is configured.
    pub fn check_backends(config: &LoadedConfig, list: &str) -> Result<(), Error> {
        config.0.backend_list(list)?;
        Ok(())
    }

    /// That every backend the `backend` setting names is configured; the error for one that
    /// is not says where the setting came from (config.toml:LINE, AGENT_LOOP_BACKEND).
    pub fn check_backend_setting(
        config: &LoadedConfig,
        setting: &crate::config::settings::Setting<String>,
    ) -> Result<(), Error> {
        config.0.setting_backends(setting)?;
        Ok(())
    }

    /// That every backend `default_backend` names, if a backends file sets it, is
    /// configured; the error for one that is not names that file and line.
    pub fn check_default_backend(config: &LoadedConfig) -> Result<(), Error> {
        config.0.default_backends()?;
        Ok(())
    }

    /// The backend the settings choose: `setting` (the `backend` setting), else the
    /// backends files' default.
    pub fn configured_backend(config: &LoadedConfig, setting: Option<String>) -> Option<String> {
        setting.or_else(|| config.0.default_backend.as_ref().map(|d| d.value.clone()))
    }

    /// The backend a run takes when none is named on its command line: the configured one,
    /// else the first that can run here.
    pub fn backend_to_run(config: &LoadedConfig, setting: Option<String>) -> Option<String> {
        Self::configured_backend(config, setting).or_else(|| config.0.first_available())
    }

    /// The variable that should hold the API key of `backend` (a list's first), when it is
    /// empty: what a front end asks its user to set before the chat can run.
    pub fn missing_key(config: &LoadedConfig, backend: &str) -> Option<String> {
        let first = config.0.backend_list(backend).ok()?.into_iter().next()?;
        let var = config.0.backend(&first).ok()?.api_key_env()?.to_string();
        std::env::var(&var)
            .map_or(true, |v| v.trim().is_empty())
            .then_some(var)
    }

    /// `doctor`: one connection test through the backend `name`, offering the built-in
    /// tools as a chat would; the report, and why the check failed when it did.
    pub async fn doctor(
        config: &LoadedConfig,
        name: &str,
        model: Option<String>,
    ) -> Result<(String, Option<String>), Error> {
        let tools = builtins::registry(None)?;
        crate::backend::doctor::doctor(&config.0, name, model, tools.specs()).await
    }

    /// Whether `web_search` is set up, and with which provider: a line.
    pub fn web_search_status() -> String {
        crate::tools::web_search_status()
    }

    /// What `agent-loop config` shows after the settings: where each file is looked for,
    /// the environment the tools get, the `[tools.NAME]` tables, how each backend's tokens
    /// are counted (with `count_tokens`), how file tools open files, where sessions are saved
    /// and the web tools' set-up.
    pub fn describe_setup(extra: Option<&Path>, settings: &RunSettings) -> Result<String, Error> {
        let count_tokens = settings
            .count_tokens
            .as_ref()
            .map(|s| s.value)
            .unwrap_or_default();
        let mut out = String::new();
        let settings_file = looked_for(user_settings_path().as_deref());
        let _ = writeln!(out, "\nsettings file: {settings_file}");
        let mut files = vec![Source::BUILTIN_NAME.to_string()];
        files.push(looked_for(user_backends_path().as_deref()));
        if let Some(extra) = extra {
            files.push(format!("{} (--config)", extra.display()));
        }
        let _ = writeln!(out, "backends files: {}", files.join(", "));
        let config = Self::load_config(extra)?;
        out.push_str(&settings.env_policy(config.0.api_key_envs()).describe());
        let tools = config.0.tools.describe();
        if !tools.is_empty() {
            let _ = write!(out, "tools ([tools.NAME]):\n{tools}");
        }
        out.push_str("token counts:\n");
        for (name, def) in config.0.definitions()? {
            if let Definition::Http(def) = def {
                let def = HttpDef {
                    count_tokens,
                    ..def.clone()
                };
                let model = def.model.clone().unwrap_or_default();
                let method = crate::backend::token_method(&def, &model);
                let _ = writeln!(out, "  {name}: {method}");
            }
        }
        let _ = writeln!(out, "  every other backend: {}", Method::Estimate);
        let method = crate::tools::confinement_method().describe();
        let _ = writeln!(out, "file tools open files with: {method}");
        if let Some(dir) = Self::saved_sessions_dir() {
            let _ = writeln!(out, "sessions: {}", dir.display());
        }
        let _ = writeln!(out, "{}", crate::tools::web_search_status());
        let _ = writeln!(out, "{}", builtins::read_url_status());
        Ok(out)
    }

    /// `agent-loop mcp login NAME`: the OAuth login to the configured MCP server `name`;
    /// `show` receives the URL to open and what happens.
    pub async fn mcp_login(
        config: &LoadedConfig,
        name: &str,
        show: &mut dyn FnMut(&str),
    ) -> Result<(), Error> {
        let servers = &config.0.mcp_servers;
        let def = servers
            .get(name)
            .ok_or_else(|| crate::mcp::no_such_server(name, servers.keys().map(String::as_str)))?;
        Ok(crate::mcp::oauth::login(def, show).await?)
    }

    /// `agent-loop mcp logout NAME`: whether there was a login to forget.
    pub fn mcp_logout(name: &str) -> Result<bool, Error> {
        Ok(crate::mcp::oauth::logout(name)?)
    }
}
