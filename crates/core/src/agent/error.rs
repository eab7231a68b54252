//! Why the agent loop stopped a turn itself: the model kept asking for tools past the
//! cap, or for the same call again and again, or a summary came back empty. A backend's or
//! a tool set's own failures are theirs (`BackendError`, `RegistryError`).

use crate::{Error, ErrorKind};

/// A turn the loop ended without an answer.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// `--max-iterations` backend calls, and the model still asked for tools.
    #[error(
        "stopped after {} (the --max-iterations cap) while the model was still asking for \
         tools; raise --max-iterations to let it go on",
        crate::plural::count(*calls, "backend call", "backend calls")
    )]
    IterationCap { calls: u32 },
    /// The model asked for the same call `times` times in one turn; `call` shows it.
    #[error(
        "stopped: the model asked for the same tool call {times} times in this turn ({call}); \
         it is not making progress"
    )]
    Repeated { times: u32, call: String },
    /// The backend asked to summarise older messages answered with nothing.
    #[error("its reply held no summary")]
    NoSummary,
}

impl AgentError {
    /// The cap and the repetition stop the turn (exit 3); an empty summary is the backend's
    /// failure (exit 1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            AgentError::IterationCap { .. } => ErrorKind::IterationCap,
            AgentError::Repeated { .. } => ErrorKind::Repeated,
            AgentError::NoSummary => ErrorKind::Backend,
        }
    }
}

impl From<AgentError> for Error {
    fn from(e: AgentError) -> Self {
        Error::caused(e.kind(), e.to_string(), e)
    }
}
