//! How an agent that keeps its own conversation is started (`type = "pty"` and
//! `type = "acp"` entries): the command, its arguments, environment and folder, the model,
//! the time a turn may take, and the description that says how to install it. Both kinds
//! check and use these the same way, here; what differs (the terminal and its patterns, the
//! protocol's modes and MCP servers) stays in `pty.rs` and `acp.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::keys::{DEFAULT_PROGRESS_S, DEFAULT_TIMEOUT_S};
use super::raw::RawBackend;
use super::ConfigError;

/// What starts the agent.
#[derive(Debug, Clone)]
pub struct Launch {
    pub name: String,
    /// What it is and how to install it.
    pub description: String,
    /// Where it was (last) defined, for messages: `file:line`.
    pub defined_at: String,
    pub command: String,
    /// `{model}` and `{cwd}` are replaced; there is no `{prompt}`: messages do not go on
    /// the command line.
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    pub model: Option<String>,
    /// The longest a turn (or the agent's start) may take (`timeout_s`).
    pub timeout: Duration,
    /// How often a `[waiting for ...]` line is shown while the agent works (`progress_s`).
    pub progress_every: Duration,
}

/// The kind of agent, in the words of the messages: `a terminal agent`, and how its
/// messages reach it: `are typed, not passed as arguments`.
pub(super) struct Kind {
    pub agent: &'static str,
    pub messages: &'static str,
}

impl Launch {
    /// Takes the launch keys of an entry (`tools`, if set, must be `own`); every mistake
    /// names the file, the line, the backend and the key.
    pub(super) fn resolve(
        name: &str,
        raw: &mut RawBackend,
        defined_at: String,
        kind: Kind,
    ) -> Result<Launch, ConfigError> {
        if let Some(tools) = raw.tools.as_ref().filter(|t| t.value != "own") {
            return Err(ConfigError::key(
                tools.at(),
                name,
                "tools",
                format!(
                    "{} runs its own tools; only `own` is possible, not `{}`",
                    kind.agent, tools.value
                ),
            ));
        }
        let Some(command) = raw.command.take() else {
            return Err(ConfigError::NoCommand {
                at: defined_at,
                backend: name.to_string(),
            });
        };
        let args = raw.args.take().unwrap_or_default();
        if let Some(arg) = args
            .iter()
            .find(|a| a.contains("{prompt}") || a.contains("{prompt_file}"))
        {
            return Err(ConfigError::key(
                &defined_at,
                name,
                "args",
                format!(
                    "`{arg}`: {}'s messages {}; remove {{prompt}} / {{prompt_file}}",
                    kind.agent, kind.messages
                ),
            ));
        }
        Ok(Launch {
            name: name.to_string(),
            description: raw.description.take().unwrap_or_default(),
            command: command.value,
            args,
            env: raw.env.take().unwrap_or_default(),
            cwd: raw.cwd.take().map(PathBuf::from),
            model: raw.model.take(),
            timeout: Duration::from_secs(raw.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S).max(1)),
            progress_every: Duration::from_secs(
                raw.progress_s.unwrap_or(DEFAULT_PROGRESS_S).max(1),
            ),
            defined_at,
        })
    }

    /// The program: `command` as a path, or found through `PATH`; not found, the error says
    /// how to install it.
    pub fn program(&self) -> Result<PathBuf, ConfigError> {
        if self.command.contains('/') {
            return Ok(PathBuf::from(&self.command));
        }
        which::which(&self.command).map_err(|source| ConfigError::NotOnPath {
            backend: self.name.clone(),
            command: self.command.clone(),
            description: self.description.clone(),
            at: self.defined_at.clone(),
            source,
        })
    }

    /// The arguments with `{model}` and `{cwd}` replaced.
    pub fn args_in(&self, cwd: &Path) -> Vec<String> {
        let model = self.model.as_deref().unwrap_or("");
        let cwd = cwd.display().to_string();
        self.args
            .iter()
            .map(|a| a.replace("{model}", model).replace("{cwd}", &cwd))
            .collect()
    }
}
