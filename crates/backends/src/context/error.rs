//! What can go wrong with the context a request carries: a conversation too big for the
//! budget, and the files around it (artifacts, the memory file, the system prompt), each
//! naming the file, with the I/O error underneath as its `source()`.

use std::path::PathBuf;

use crate::{Error, ErrorKind};

/// A request that cannot be planned, or a file of the context that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// The preamble, the current message and the newest tool call alone pass
    /// `max_context_tokens`; the figures are estimated tokens. `backend` is the backend the
    /// request was for, when known.
    #[error(
        "{}the request does not fit in max_context_tokens ({max_tokens}): the preamble and \
         memory file take ~{fixed} tokens, the current message ~{user} and the newest tool call \
         with its results ~{newest}; raise max_context_tokens for this backend in \
         backends.toml, or lower tool_result_max_chars",
        backend.as_ref().map(|b| format!("backend `{b}`: ")).unwrap_or_default()
    )]
    TooBig {
        backend: Option<String>,
        max_tokens: u64,
        fixed: u64,
        user: u64,
        newest: u64,
    },
    /// A tool's full output could not be saved; `what` is the step (create the folder,
    /// create or write the file).
    #[error("cannot {what} {}: {source}", path.display())]
    Artifact {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the memory file {}: {source}", path.display())]
    ReadMemory {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `/memory` with no note.
    #[error("nothing to remember: give the note after /memory")]
    NothingToRemember,
    #[error("cannot add to the memory file {}: {source}", path.display())]
    AddMemory {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `--system FILE` or `system.md` cannot be read.
    #[error("cannot read the system prompt {}: {source}", path.display())]
    ReadSystemPrompt {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ContextError {
    /// A file that cannot be written or the memory file read is I/O (exit 1); a budget too
    /// small, a note missing or a system prompt that cannot be read are configuration (exit
    /// 2), as they always were.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ContextError::Artifact { .. }
            | ContextError::ReadMemory { .. }
            | ContextError::AddMemory { .. } => ErrorKind::Io,
            ContextError::TooBig { .. }
            | ContextError::NothingToRemember
            | ContextError::ReadSystemPrompt { .. } => ErrorKind::Config,
        }
    }
}

impl From<ContextError> for Error {
    fn from(e: ContextError) -> Self {
        Error::caused(e.kind(), e.to_string(), e)
    }
}
