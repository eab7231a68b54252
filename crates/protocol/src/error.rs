//! The error type every crate returns: a kind, from which the binary decides its exit code,
//! a message that already names what failed and where (file, line, backend, command), and
//! the error underneath, when there is one, as its `source()`.

use std::fmt;
use std::sync::Arc;

/// What kind of failure an [`Error`] is; each maps to one documented exit code. Its name in
/// a log's `error` record (`error_kind`) is the variant's in snake case: `config`,
/// `iteration_cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
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
    /// The turn's newest tool results do not fit in `max_context_tokens` even alone: the
    /// turn cannot go on (exit 3). A message too big from the start is `Config`.
    ContextFull,
    /// Reading input or writing output failed (exit 1).
    Io,
    /// The user cancelled the turn through a canceller (`agent_loop::chat::Canceller`): exit
    /// 130, as for Ctrl-C.
    Cancelled,
}

/// An error with enough context to act on, shown to the user as is.
#[derive(Debug, Clone)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    /// The error underneath (an I/O error, a parser's), for `source()`.
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// An error of `kind` caused by `source`; `message` says what failed and where, and
    /// already quotes the cause as the user should read it.
    pub fn caused(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error {
            source: Some(Arc::new(source)),
            ..Self::new(kind, message)
        }
    }

    pub fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, message)
    }

    pub fn backend(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Backend, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// A word that is none of a setting's values (a mode, a format): which setting (`what`), the
/// word, and what the values are, said after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownValue {
    pub what: &'static str,
    pub value: String,
    /// `the modes are ...`, or how to choose one.
    pub expected: &'static str,
}

impl fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let UnknownValue {
            what,
            value,
            expected,
        } = self;
        write!(f, "unknown {what} `{value}`; {expected}")
    }
}

impl std::error::Error for UnknownValue {}

/// The innermost cause of an error (`Connection refused (os error 111)`), rather than the
/// wrapping a library puts around it (reqwest's "error sending request for url (...)").
pub fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_the_source_and_the_message_stays_the_users() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = Error::caused(ErrorKind::Io, "cannot read the working directory: gone", io);
        assert_eq!(e.to_string(), "cannot read the working directory: gone");
        let source = std::error::Error::source(&e).expect("a source");
        assert_eq!(source.to_string(), "gone");
        assert_eq!(root_cause(&e), "gone");
        assert!(std::error::Error::source(&Error::config("plain")).is_none());
    }
}
