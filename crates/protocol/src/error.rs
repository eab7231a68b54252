//! The crate's error type: a kind, which decides the process exit code, and a message that
//! already names what failed and where (file, line, backend, command).

use std::fmt;

/// What kind of failure an [`Error`] is; each maps to one documented exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad command line, configuration file or backend definition (exit 2).
    Config,
    /// The backend failed: could not start, exited non-zero, timed out, printed nothing usable
    /// (exit 1).
    Backend,
    /// The turn hit `--max-iterations` with tool calls still pending (exit 3).
    IterationCap,
    /// The model asked for the same tool call three times in one turn (exit 3).
    Repeated,
    /// Reading input or writing output failed (exit 1).
    Io,
    /// The user cancelled the turn through a canceller (`agent_loop::chat::Canceller`) (exit 130, as for
    /// Ctrl-C).
    Cancelled,
}

/// An error with enough context to act on, shown to the user as is.
#[derive(Debug, Clone)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    pub fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, message)
    }

    pub fn backend(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Backend, message)
    }

    /// The process exit code documented in the README for this kind of error.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::Backend | ErrorKind::Io => 1,
            ErrorKind::Config => 2,
            ErrorKind::IterationCap | ErrorKind::Repeated => 3,
            ErrorKind::Cancelled => 130,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The innermost cause of an error (`Connection refused (os error 111)`), rather than the
/// wrapping a library puts around it (reqwest's "error sending request for url (...)").
pub fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
