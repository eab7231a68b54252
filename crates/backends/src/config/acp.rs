//! ACP agent entries of `backends.toml` (`type = "acp"`): an agent that speaks the Agent
//! Client Protocol on its stdin and stdout (see `backend::acp`). The agent keeps its own
//! conversation, tools and prompts, so an entry says only how to start it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::keys::{DEFAULT_PROGRESS_S, DEFAULT_TIMEOUT_S};
use super::raw::RawBackend;
use crate::Error;

/// The `type` value of these entries.
pub const ACP_TYPE: &str = "acp";

/// A fully resolved ACP agent.
#[derive(Debug, Clone)]
pub struct AcpDef {
    pub name: String,
    /// What it is and how to install it.
    pub description: String,
    /// Where it was (last) defined, for messages: `file:line`.
    pub defined_at: String,
    pub command: String,
    /// `{model}` and `{cwd}` are replaced.
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// Chosen with `session/set_model` where the agent offers models (`--model`).
    pub model: Option<String>,
    /// The longest a turn (or the agent's start) may take (`timeout_s`).
    pub timeout: Duration,
    /// How often a `[waiting for ...]` line is shown while the agent works (`progress_s`).
    pub progress_every: Duration,
    /// The agent's own mode in which it asks no permission, set with `session/set_mode`
    /// under `--approval never` (`auto_mode`).
    pub auto_mode: Option<String>,
    /// The enabled `[mcp.servers.NAME]`, which the agent is given to connect to itself.
    pub mcp_servers: Vec<super::mcp::ServerDef>,
}

/// Checks a `type = "acp"` entry; every mistake names the file, the line, the backend and
/// the key.
pub(super) fn resolve(name: &str, raw: RawBackend, defined_at: String) -> Result<AcpDef, Error> {
    let here = |key: &str| format!("{defined_at}: backend `{name}`: key `{key}`");
    let mut ignored = raw.pty_only_keys();
    ignored.extend(raw.http_only_keys());
    ignored.extend(
        raw.cli_only_keys()
            .into_iter()
            .filter(|k| !["command", "args", "env", "cwd", "progress_s", "tools"].contains(k)),
    );
    if let Some(key) = ignored.first() {
        return Err(Error::config(format!(
            "{}: a `type = \"acp\"` backend does not read it (the agent keeps its own \
             conversation, tools and output format)",
            here(key)
        )));
    }
    if let Some(tools) = raw.tools.as_ref().filter(|t| t.value != "own") {
        return Err(Error::config(format!(
            "{}: backend `{name}`: key `tools`: an ACP agent runs its own tools; only `own` \
             is possible, not `{}`",
            tools.at(),
            tools.value
        )));
    }
    let Some(command) = raw.command else {
        return Err(Error::config(format!(
            "{defined_at}: backend `{name}` has no `command` (the program to run, found through PATH)"
        )));
    };
    let args = raw.args.unwrap_or_default();
    if let Some(arg) = args
        .iter()
        .find(|a| a.contains("{prompt}") || a.contains("{prompt_file}"))
    {
        return Err(Error::config(format!(
            "{}: `{arg}`: an ACP agent's messages are sent over the protocol, not as \
             arguments; remove {{prompt}} / {{prompt_file}}",
            here("args")
        )));
    }
    Ok(AcpDef {
        name: name.to_string(),
        description: raw.description.unwrap_or_default(),
        command: command.value,
        args,
        env: raw.env.unwrap_or_default(),
        cwd: raw.cwd.map(PathBuf::from),
        model: raw.model,
        timeout: Duration::from_secs(raw.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S).max(1)),
        progress_every: Duration::from_secs(raw.progress_s.unwrap_or(DEFAULT_PROGRESS_S).max(1)),
        auto_mode: raw.auto_mode.filter(|m| !m.is_empty()),
        mcp_servers: Vec::new(),
        defined_at,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Config, Definition, Source};

    fn load(text: &str) -> Result<Config, crate::Error> {
        Config::from_sources(&[Source {
            name: "my.toml".into(),
            text: text.into(),
        }])
    }

    #[test]
    fn an_entry_is_read_and_mistakes_name_the_key() {
        let config = load(
            "[backends.a]\ntype = \"acp\"\ncommand = \"a\"\nargs = [\"--acp\"]\nauto_mode = \"yolo\"\n",
        )
        .unwrap();
        let Definition::Acp(a) = config.backend("a").unwrap() else {
            panic!("a is an ACP backend")
        };
        assert_eq!(a.args, ["--acp"]);
        assert_eq!(a.auto_mode.as_deref(), Some("yolo"));
        let err = |text: &str| load(text).unwrap_err().message;
        let e = err("[backends.a]\ntype = \"acp\"\ncommand = \"a\"\ntokens_regex = \"x\"\n");
        assert!(e.contains("key `tokens_regex`: a `type = \"acp\"`"), "{e}");
        let e = err("[backends.a]\ntype = \"acp\"\ncommand = \"a\"\nsize = \"80x24\"\n");
        assert!(e.contains("key `size`"), "{e}");
        let e = err("[backends.a]\ntype = \"acp\"\n");
        assert!(e.contains("has no `command`"), "{e}");
        let e = err("[backends.a]\ntype = \"acp\"\ncommand = \"a\"\ntools = \"loop\"\n");
        assert!(e.contains("key `tools`"), "{e}");
        let e = err("[backends.a]\ncommand = \"a\"\nauto_mode = \"yolo\"\n");
        assert!(e.contains("key `auto_mode`"), "{e}");
    }
}
