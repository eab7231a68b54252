//! What can go wrong opening a chat or doing what its user asked (a slash command, a
//! comparison, an export), each naming the command, the setting or the file, with the I/O
//! or JSON error underneath as its `source()`. A backend's, a session's or the
//! configuration's own failures are theirs (`BackendError`, `SessionError`, `ConfigError`).

use std::path::PathBuf;

use crate::{Error, ErrorKind};

/// A chat that cannot open, or a request of its user that cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("cannot read the working directory: {source}")]
    WorkingDir { source: std::io::Error },
    /// `--root` (or a comparison's folder) is not a folder.
    #[error("{0}")]
    Root(#[from] crate::tools::RootError),
    #[error("max_iterations must be at least 1")]
    NoIterations,
    /// No backend named, and none of the configured ones can run here.
    #[error(
        "no backend chosen, and none of the configured ones is available (installed, or with \
         its API key set): pass --backend NAME, set AGENT_LOOP_BACKEND, or set `backend` in \
         config.toml. Configured backends: {}. To try agent-loop without installing anything: \
         agent-loop --backend demo \"list the files here\"",
        known.join(", ")
    )]
    NoBackend { known: Vec<String> },
    /// The user cancelled the turn.
    #[error("the turn was cancelled: the backend and any running tool were stopped")]
    Cancelled,
    /// `/save`, `/load` with `--no-save`.
    #[error("sessions are not saved (--no-save)")]
    NotSaving,
    /// A slash command given without the argument it needs; `usage` is how to write it.
    #[error("/{command} needs an argument: /{usage}")]
    NeedsArgument { command: String, usage: String },
    /// `/model NAME` on a backend whose entry has nowhere to put a model.
    #[error(
        "backend {backend} takes no model: its entry has no `model_args`, nor {{model}} in its \
         `args`"
    )]
    TakesNoModel { backend: String },
    /// `/context MODE` with a mode that is none.
    #[error("{0}")]
    ContextMode(#[from] crate::context::ModeError),
    #[error("/compare needs a task after the backends: /compare a,b TASK")]
    CompareNeedsTask,
    #[error("`{list}`: name at least two backends, separated by commas, to compare")]
    CompareNeedsTwo { list: String },
    #[error("/yes takes on or off")]
    YesTakesOnOrOff,
    #[error("usage: /mcp (list the MCP servers), /mcp restart NAME")]
    McpUsage,
    #[error("/history takes a number, not `{arg}`")]
    HistoryNumber { arg: String },
    #[error(
        "/pick: nothing to pick: it keeps another answer of the last /compare, until the \
         conversation moves on (another turn, /undo, /retry, /clear, /new, /load)"
    )]
    NothingToPick,
    #[error("/pick takes a number from 1 to {max}")]
    PickNumber { max: usize },
    #[error("/pick {number}: {backend} failed; it has no answer")]
    PickedFailed { number: usize, backend: String },
    /// The folder the copies of a comparison go to could not be made in `base`.
    #[error("cannot make a folder in {}: {source}", base.display())]
    CompareFolder {
        base: PathBuf,
        source: std::io::Error,
    },
    /// A file or folder of the working directory could not be copied for a comparison;
    /// `what` is the step (read, create, copy).
    #[error("cannot {what} {}: {source}", path.display())]
    Copy {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The working directory is too big to copy for each backend of a comparison.
    #[error(
        "the working directory holds more than {mb} MB, too much to copy for each backend of a \
         comparison; run it from a smaller folder"
    )]
    TooBigToCopy { mb: u64 },
    /// The thread copying the working directory for a comparison failed (it panicked).
    #[error("the copy of the working directory for a comparison failed: {0}")]
    CopyThread(String),
    /// No backend of a comparison answered, and none said why.
    #[error("no backend answered")]
    NoAnswer,
    /// A saved session another front end started, where the chat continues only its own
    /// (`mcp serve`); `instead` says what to do.
    #[error(
        "session `{name}` was not started by {own}{}: {own} continues only the sessions it \
         started; {instead}",
        match started_by {
            Some(other) => format!(" but by {other}"),
            None => " (it was started by the CLI, the Telegram bot or an editor, or saved \
                      before sessions were marked)".to_string(),
        }
    )]
    NotOwnSession {
        name: String,
        own: String,
        started_by: Option<String>,
        instead: String,
    },
    #[error(
        "/export {option}: unknown option (/export --force FILE replaces a file that is there; \
         write a FILE whose name starts with - as ./{option}...)"
    )]
    ExportOption { option: String },
    #[error("/export --force: name the FILE to replace (/export --force FILE)")]
    ExportForceAlone,
    #[error("/export {path}: name a .md or .json file")]
    ExportType { path: String },
    #[error("/export {path}: {path} is there already; to replace it, /export --force {path}")]
    ExportExists { path: String },
    #[error("{source}")]
    ExportJson { source: serde_json::Error },
    #[error("cannot write {path}: {source}")]
    Export {
        path: String,
        source: std::io::Error,
    },
}

impl ChatError {
    /// A working directory that cannot be read is I/O (exit 1), a cancelled turn exit 130, a
    /// comparison no backend answered the backends' (exit 1); the rest is a command line,
    /// setting or slash command to fix (exit 2), as they always were.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ChatError::WorkingDir { .. } | ChatError::Copy { .. } | ChatError::CopyThread(_) => {
                ErrorKind::Io
            }
            ChatError::Cancelled => ErrorKind::Cancelled,
            ChatError::NoAnswer => ErrorKind::Backend,
            _ => ErrorKind::Config,
        }
    }
}

impl From<ChatError> for Error {
    fn from(e: ChatError) -> Self {
        Error::caused(e.kind(), e.to_string(), e)
    }
}
