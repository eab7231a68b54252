//! What can go wrong with a session's files (its JSON, its lock, its event log), each
//! failure naming the session or the file, with the I/O or JSON error underneath as its
//! `source()`.

use std::path::PathBuf;

use crate::{Error, ErrorKind};

/// A session that could not be named, locked, read, saved, logged or removed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("invalid session name `{name}`: use letters, digits, `-`, `_` and `.` (not first)")]
    InvalidName { name: String },
    /// Another run holds the session's lock (`holder` says which: its process id). The
    /// command line adds its flag that waits instead; other front ends have no such flag.
    #[error("session {name} is in use by {holder}: wait for it to finish")]
    InUse { name: String, holder: String },
    /// A session another run holds was to be removed or saved over (`sessions rm`, `/save`).
    #[error(
        "cannot {what} session {name}: it is in use by {holder}; try again when that run ends"
    )]
    Held {
        what: &'static str,
        name: String,
        holder: String,
    },
    /// `/save NAME` with a name a session (or a run's folder) has already.
    #[error(
        "session {name} exists already (in {}): pick another name, or remove that session first \
         (agent-loop sessions rm {name})",
        dir.display()
    )]
    Exists { name: String, dir: PathBuf },
    /// The lock file could not be created, opened, taken, waited for or written (`what`).
    #[error("cannot {what} the session lock {}: {source}", path.display())]
    Lock {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// Every name a new session could take in this second is taken or locked.
    #[error("no free session name in this second")]
    NoFreeName,
    #[error("cannot create log folder {}: {source}", path.display())]
    LogFolder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open log file {}: {source}", path.display())]
    LogFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read session file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("session file {} is not valid: {source}", path.display())]
    Invalid {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot write session {name} as JSON: {source}")]
    Serialize {
        name: String,
        source: serde_json::Error,
    },
    #[error("cannot save session file {}: {source}", path.display())]
    Save {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no session named `{name}` in {}", dir.display())]
    NoSuchSession { name: String, dir: PathBuf },
    #[error("cannot remove {}: {source}", path.display())]
    Remove {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl SessionError {
    /// A file that could not be written or removed is I/O (exit 1); a bad name, a session
    /// in use, a file that cannot be read or parsed, a log that cannot be opened are
    /// configuration (exit 2), as they always were.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SessionError::Lock { .. } | SessionError::Save { .. } | SessionError::Remove { .. } => {
                ErrorKind::Io
            }
            _ => ErrorKind::Config,
        }
    }
}

impl From<SessionError> for Error {
    fn from(e: SessionError) -> Self {
        Error::caused(e.kind(), e.to_string(), e)
    }
}
