//! What can go wrong with the context a request carries: a conversation too big for the
//! budget, and the files around it (artifacts, the memory file, the system prompt), each
//! naming the file, with the I/O error underneath as its `source()`.

use std::path::PathBuf;

use crate::{Error, ErrorKind};

/// A request that cannot be planned, or a file of the context that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// What is always sent (the preamble and memory file, or an agent's catch-up opening),
    /// the current message and the newest tool call alone pass `max_context_tokens`; the
    /// figures are estimated tokens. `backend` is the backend the request was for, `origin`
    /// where the budget was set (`is set in FILE:LINE`), when known. `tool_results`: what
    /// no longer fits is the newest tool call with its results, not the message alone.
    #[error("{}", too_big(self))]
    TooBig {
        backend: Option<String>,
        max_tokens: u64,
        origin: Option<String>,
        /// What `fixed` is, empty when nothing is sent besides the messages.
        fixed_what: &'static str,
        fixed: u64,
        user: u64,
        newest: u64,
        tool_results: bool,
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

/// The refusal of a request over the budget: each part's share, and where to raise it.
fn too_big(e: &ContextError) -> String {
    let ContextError::TooBig {
        backend,
        max_tokens,
        origin,
        fixed_what,
        fixed,
        user,
        newest,
        tool_results,
    } = e
    else {
        return String::new();
    };
    let backend = backend
        .as_ref()
        .map(|b| format!("backend `{b}`: "))
        .unwrap_or_default();
    let fixed = match (*fixed_what, fixed) {
        ("", _) | (_, 0) => String::new(),
        (what, n) => format!("{what} ~{n} tokens, "),
    };
    let newest = match newest {
        0 => String::new(),
        n => format!(" and the newest tool call with its results ~{n}"),
    };
    let origin = origin
        .as_deref()
        .unwrap_or("is set for this backend in backends.toml");
    let remedy = if *tool_results {
        "ask for a task that needs less output at once"
    } else {
        "send a shorter message"
    };
    format!(
        "{backend}the request does not fit in max_context_tokens ({max_tokens}): {fixed}the \
         current message ~{user}{newest}; max_context_tokens {origin}: raise it, or {remedy}"
    )
}

impl ContextError {
    /// A file that cannot be written or the memory file read is I/O (exit 1); a message too
    /// big for the budget, a note missing or a system prompt that cannot be read are
    /// configuration (exit 2), as they always were. Tool results past the budget in the
    /// middle of a turn are none of these: the turn cannot go on (exit 3).
    pub fn kind(&self) -> ErrorKind {
        match self {
            ContextError::TooBig {
                tool_results: true, ..
            } => ErrorKind::ContextFull,
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
