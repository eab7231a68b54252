//! What can go wrong building or calling a backend, each failure naming the backend and
//! what it ran or called (the program, the URL, the setting to change), with the I/O or
//! HTTP client's error underneath as its `source()`.

use std::path::PathBuf;

use crate::{Error, ErrorKind};

/// A backend that could not be built as asked, or a call of it that gave no reply.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// `--temp` given for an agent that sets its own; `what` says what kind of agent.
    #[error("--temp: backend `{backend}` is {what}, which sets its own temperature{also}")]
    NoTemperature {
        backend: String,
        what: &'static str,
        /// Said after, for the kind of backend it is (empty, or "; ...").
        also: &'static str,
    },
    /// An HTTP backend with no model in its entry nor on the command line.
    #[error("backend `{backend}` has no model: set `model` in its entry ({at}) or pass --model")]
    NoModel { backend: String, at: String },
    /// The variable that holds an HTTP backend's API key is unset or blank.
    #[error(
        "backend `{backend}` needs an API key: set the environment variable {var} (api_key_env \
         in {at})"
    )]
    NoKey {
        backend: String,
        var: String,
        at: String,
    },
    /// The variable that holds the API key is not UTF-8.
    #[error(
        "backend `{backend}`: the environment variable {var} (api_key_env in {at}) is not valid \
         UTF-8, so it cannot be the API key"
    )]
    KeyNotUnicode {
        backend: String,
        var: String,
        at: String,
    },
    /// The API key cannot be sent in an HTTP header.
    #[error(
        "backend `{backend}`: the API key in {var} has characters an HTTP header cannot carry"
    )]
    KeyNotHeader { backend: String, var: String },
    /// The HTTP client could not be set up; `why` is reqwest's error with its causes.
    #[error("backend `{backend}`: cannot set up the HTTP client: {why}")]
    Client {
        backend: String,
        why: String,
        source: reqwest::Error,
    },
    /// Nothing listens at a local server's URL; `hint` is the entry's `unreachable`.
    #[error("backend `{backend}`: {hint}")]
    Unreachable { backend: String, hint: String },
    /// A request to an HTTP API failed: an HTTP status with the provider's message, no
    /// connection, no reply in time, a reply that could not be read; `why` says which, and
    /// whether it was tried again.
    #[error("backend `{backend}` (POST {url}): {why}")]
    Request {
        backend: String,
        url: String,
        /// The HTTP status of the reply that ended it (401: the key, 429: the rate, 5xx:
        /// the server), where a reply came; `None` for a connection or a reply that failed.
        status: Option<u16>,
        why: String,
    },
    /// The file a CLI backend reads its prompt from could not be written.
    #[error("backend `{backend}`: cannot write the prompt file: {source}")]
    PromptFile {
        backend: String,
        source: std::io::Error,
    },
    /// The backend's program could not be started.
    #[error("backend `{backend}`: cannot run {}: {source}", program.display())]
    Spawn {
        backend: String,
        program: PathBuf,
        source: std::io::Error,
    },
    /// The program could not be started because its arguments, the prompt among them, are
    /// longer than the system allows.
    #[error(
        "backend `{backend}`: cannot run {}: {source}; the prompt is too long for a \
         command-line argument: pass it with {{prompt_file}} or on stdin instead",
        program.display()
    )]
    PromptTooLong {
        backend: String,
        program: PathBuf,
        source: std::io::Error,
    },
    /// `{self}` as a command, and agent-loop's own path cannot be found.
    #[error("backend `{backend}`: cannot find agent-loop's own executable: {source}")]
    OwnExecutable {
        backend: String,
        source: std::io::Error,
    },
    /// `{self}` as a command, in a program that is not agent-loop, with no `agent-loop` on
    /// PATH.
    #[error(
        "backend `{backend}` runs the agent-loop program (`{{self}}`, which answers \
         `demo-agent`): this program is not it, and no `agent-loop` is on PATH; install \
         agent-loop, or call `this_program_serves_demo_agent` where this program serves `demo-agent` itself"
    )]
    NotSelf { backend: String },
    /// A CLI backend's program is not found through PATH.
    #[error(
        "backend `{backend}`: command `{command}` is not on PATH; install it, or fix `command` \
         ({at})"
    )]
    NotOnPath {
        backend: String,
        command: String,
        at: String,
        source: which::Error,
    },
    /// A CLI backend ran past `timeout_s`; `tail` quotes the end of its stderr.
    #[error(
        "backend `{backend}` timed out after {secs}s (timeout_s in {at}); its process group was \
         killed{tail}"
    )]
    TimedOut {
        backend: String,
        secs: u64,
        at: String,
        tail: String,
    },
    /// A CLI backend's output holds an error (`error_regex`, `json_error`).
    #[error("backend `{backend}` reported an error: {message}")]
    Reported { backend: String, message: String },
    /// A CLI backend exited non-zero; `tail` quotes the end of its stderr, or of its stdout.
    #[error("backend `{backend}` ({}) exited with status {status}{tail}", program.display())]
    Exited {
        backend: String,
        program: PathBuf,
        status: i32,
        tail: String,
    },
    /// A CLI backend in `loop` mode said it offers its model tools of its own
    /// (`json_offered_tools`), which would run without agent-loop's approval; `when` says
    /// whether it was stopped before its model could call them (see `backend::offered`).
    #[error(
        "backend `{backend}` offered its model tools of its own in loop mode, where agent-loop \
         runs every tool with its approval: {tools}. {when} Its loop_args ({at}) do not turn \
         these off: `{command}` is likely newer than the preset knows; report it, with what \
         `{command} --version` says. To let `{command}` run its own tools under its own \
         approvals instead, set `tools = \"own\"` for `{backend}` in your backends.toml"
    )]
    OwnToolsOffered {
        backend: String,
        tools: String,
        when: &'static str,
        at: String,
        command: String,
    },
    /// A CLI backend exited with 0 and printed nothing usable.
    #[error("backend `{backend}` exited successfully but printed no answer on stdout{tail}")]
    NoAnswer { backend: String, tail: String },
    /// A CLI backend's answer was not found in what was kept of its output, which passed
    /// `max_output_bytes`: the answer's end (a stream's last line) was dropped with the rest.
    #[error("backend `{backend}`: its output passed max_output_bytes ({cap} bytes) and the rest, where its answer ends, was dropped; raise max_output_bytes in its entry ({at}){tail}")]
    AnswerCut {
        backend: String,
        cap: usize,
        at: String,
        tail: String,
    },
    /// A terminal or ACP agent's turn passed `timeout_s` and was cancelled; `why` is what
    /// the agent said then, if anything ("; ...").
    #[error("backend `{backend}`: the turn passed timeout_s ({secs} s) and was cancelled{why}")]
    TurnTimedOut {
        backend: String,
        secs: u64,
        why: String,
    },
    /// A terminal or ACP agent failed: it stopped, refused a request, or its screen or
    /// answer could not be used; `why` says which, with what the agent showed.
    #[error("backend `{backend}`: {why}")]
    Agent { backend: String, why: String },
    /// A terminal or ACP agent, which keeps its own conversation, was called with no user
    /// message to send it.
    #[error("an agent that keeps its own conversation was called without a user message")]
    NoMessage,
}

impl BackendError {
    /// What can be fixed before any call (the command line, the entry, the environment) is
    /// configuration (exit 2); a call that failed is the backend's (exit 1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            BackendError::NoTemperature { .. }
            | BackendError::NoModel { .. }
            | BackendError::NoKey { .. }
            | BackendError::KeyNotUnicode { .. }
            | BackendError::KeyNotHeader { .. }
            | BackendError::NotOnPath { .. }
            | BackendError::NotSelf { .. } => ErrorKind::Config,
            _ => ErrorKind::Backend,
        }
    }
}

/// A terminal or ACP agent's failure, `why` in words.
pub(crate) fn agent_failed(backend: &str, why: impl std::fmt::Display) -> Error {
    BackendError::Agent {
        backend: backend.to_string(),
        why: why.to_string(),
    }
    .into()
}

/// A terminal or ACP agent's turn cancelled at `timeout_s`; `why` is empty or "; ...".
pub(crate) fn turn_timed_out(backend: &str, timeout: std::time::Duration, why: String) -> Error {
    BackendError::TurnTimedOut {
        backend: backend.to_string(),
        secs: timeout.as_secs(),
        why,
    }
    .into()
}

impl From<BackendError> for Error {
    fn from(e: BackendError) -> Self {
        Error::caused(e.kind(), e.to_string(), e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// What can be fixed before a call is Config (exit 2), a failed call Backend (exit 1),
    /// and the I/O error of a program that cannot start stays its source.
    #[test]
    fn kinds_follow_when_it_failed_and_the_cause_stays() {
        let no_key = BackendError::NoKey {
            backend: "api".into(),
            var: "KEY".into(),
            at: "b.toml:3".into(),
        };
        assert_eq!(no_key.kind(), ErrorKind::Config);
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let spawn = BackendError::Spawn {
            backend: "cli".into(),
            program: PathBuf::from("/bin/x"),
            source: io,
        };
        assert_eq!(
            spawn.to_string(),
            "backend `cli`: cannot run /bin/x: denied"
        );
        let e: Error = spawn.into();
        assert_eq!(e.kind, ErrorKind::Backend);
        let cause = e.source().and_then(|s| s.source());
        assert!(cause.is_some_and(|c| c.is::<std::io::Error>()), "{e}");
    }
}

/// Why a backend could not count a message's tokens through its provider's endpoint.
#[derive(Debug, thiserror::Error)]
pub enum CountError {
    #[error("the backend has no count-tokens endpoint")]
    NoEndpoint,
    #[error("the key is not a header value")]
    KeyNotHeader,
    /// The request failed, or its answer held no count: what happened, after the URL, the
    /// API key masked.
    #[error("{0}")]
    Failed(String),
}
