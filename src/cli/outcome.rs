//! How a turn ended, for the caller's exit code.

use agent_loop::{Error, ErrorKind};

use super::signals::Stop;

pub enum Outcome {
    Done(Result<String, Error>),
    /// A signal stopped the turn.
    Cancelled(Stop),
}

/// The process exit code the README documents for an error of this kind.
pub fn exit_code(error: &Error) -> i32 {
    match error.kind {
        ErrorKind::Backend | ErrorKind::Io => 1,
        ErrorKind::Config => 2,
        ErrorKind::IterationCap | ErrorKind::Repeated | ErrorKind::ContextFull => 3,
        ErrorKind::Cancelled => 130,
    }
}
