//! What a front end asks of [`Chat::open`](super::Chat::open) besides the settings: the choices
//! of one chat that come from its own flags or commands and that config.toml does not hold.
//! The settings (backend, model, approval mode with `--yes`, `allow` rules with `--allow`,
//! context settings, `max_iterations`) are the typed [`RunSettings`](super::RunSettings):
//! `config.toml`, the environment and the flags the front end set on top.

use std::path::PathBuf;

pub use crate::backend::HttpClients;

/// Which session a chat continues.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SessionChoice {
    /// A new session with a fresh name (`session-…`).
    #[default]
    New,
    /// `--session NAME`: continue it if it exists, else start it under that name (or the
    /// next free one, `NAME-2`, when the name is taken by a session that cannot be read).
    Named(String),
    /// `--continue`: the most recently used session, or a new one when there is none.
    MostRecent,
}

/// A front end's choices for one chat.
#[derive(Debug, Clone, Default)]
pub struct ChatOptions {
    /// `--config FILE`: a backends file read after the built-in and the user's.
    pub config: Option<PathBuf>,
    /// `--temp`: sent by HTTP backends; an agent CLI sets its own.
    pub temperature: Option<f64>,
    /// `--no-stream`: HTTP backends ask for the whole reply at once.
    pub no_stream: bool,
    /// `--system FILE`: the user's system prompt, instead of the `system_prompt` setting or
    /// `system.md` in the config folder.
    pub system: Option<PathBuf>,
    /// `--tools a,b`: only these tools (built-in names, `mcp.SERVER.TOOL`, `mcp.SERVER.*`).
    pub tools: Option<Vec<String>>,
    /// `--root DIR`: where the file tools may go; the working directory when `None`.
    pub root: Option<PathBuf>,
    /// The working directory of tools and backends; the process's when `None`.
    pub cwd: Option<PathBuf>,
    pub session: SessionChoice,
    /// Sessions are saved to the store (`--no-save` turns it off).
    pub save: bool,
    /// `--log FILE`: the event log goes there instead of the session's own `log.jsonl`.
    pub log: Option<PathBuf>,
    /// `--wait-session`: wait for a session another run holds instead of failing.
    pub wait_session: bool,
    /// The front end's mark, written into the sessions [`Chat::open`](super::Chat::open)
    /// starts (`started_by`): `mcp serve`'s.
    pub started_by: Option<String>,
    /// Continue only a saved session whose mark is `started_by`: one of another front end
    /// (a Telegram chat, a CLI session of another project) is refused, and this text, what
    /// to do instead, ends the refusal. `None`: any session is continued.
    pub own_sessions_only: Option<String>,
    /// More environment variables whose values are secrets, kept out of logs, sessions,
    /// displays and the tools' environment like the backends' API keys (the Telegram bot's
    /// token).
    pub secret_envs: Vec<String>,
    /// The HTTP backends' clients: the chats given clones of one set share the connections to
    /// an API (a front end that hosts many chats gives them all the same); a default is a
    /// set of the chat's own. One set belongs to one tokio runtime.
    pub http: HttpClients,
}

impl ChatOptions {
    /// The defaults of a saved session in the current directory.
    pub fn saved() -> Self {
        ChatOptions {
            save: true,
            ..ChatOptions::default()
        }
    }
}
