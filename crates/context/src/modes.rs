//! Context modes (`--context`, or `context` in a backend's entry) and the per-backend
//! context settings they come with.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::UnknownValue;

/// Default `max_context_tokens`.
pub const DEFAULT_MAX_CONTEXT_TOKENS: u64 = 80_000;
/// Default `tool_result_max_chars`.
pub const DEFAULT_TOOL_RESULT_MAX_CHARS: usize = 10_000;
/// The least `max_context_tokens` a backend entry, config.toml or the environment may set:
/// below it, the preamble alone would not fit.
pub const MIN_CONTEXT_TOKENS: u64 = 1_000;

/// Why `n` cannot be a `max_context_tokens`, if it cannot: the one rule wherever it is set.
pub fn context_tokens_too_small(n: u64) -> Option<String> {
    (n < MIN_CONTEXT_TOKENS).then(|| {
        format!(
            "{n} is too small to hold the instructions and one message; use at least {MIN_CONTEXT_TOKENS}"
        )
    })
}

/// How much history a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextMode {
    /// All history, trimmed oldest first when it passes the budget.
    #[default]
    Continue,
    /// No history: each request holds only the current exchange (the user's message and the
    /// tool calls and results of this turn).
    Fresh,
    /// The last N messages (extended back to a tool call whose results they start with),
    /// plus the current user message.
    Sliding(usize),
    /// Like `continue`, but when history passes the budget the backend summarises the older
    /// part into one message instead of it being dropped.
    Summarize,
}

/// A context mode that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    #[error("{0}")]
    Unknown(UnknownValue),
    /// `sliding:N` whose N is not a whole number above 0.
    #[error("`{mode}`: the N of sliding:N must be a whole number of messages above 0")]
    Window { mode: String },
}

impl FromStr for ContextMode {
    type Err = ModeError;

    fn from_str(s: &str) -> Result<Self, ModeError> {
        let s = s.trim();
        match s {
            "continue" => return Ok(Self::Continue),
            "fresh" => return Ok(Self::Fresh),
            "summarize" | "summarise" => return Ok(Self::Summarize),
            _ => {}
        }
        if let Some(n) = s.strip_prefix("sliding:") {
            return match n.trim().parse::<usize>() {
                Ok(n) if n > 0 => Ok(Self::Sliding(n)),
                _ => Err(ModeError::Window {
                    mode: s.to_string(),
                }),
            };
        }
        Err(ModeError::Unknown(UnknownValue {
            what: "context mode",
            value: s.to_string(),
            expected: "the modes are continue, fresh, sliding:N (for example sliding:20) and \
                       summarize",
        }))
    }
}

impl fmt::Display for ContextMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Continue => f.write_str("continue"),
            Self::Fresh => f.write_str("fresh"),
            Self::Sliding(n) => write!(f, "sliding:{n}"),
            Self::Summarize => f.write_str("summarize"),
        }
    }
}

/// What a request carries besides the messages the budget picks, by who receives it: the
/// budget counts what is sent, and an agent that keeps its own conversation (an ACP or a
/// terminal agent) never gets agent-loop's preamble.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Recipient {
    /// An HTTP API or an agent CLI: the preamble (instructions, tools, system prompt, memory
    /// file) and the history the mode picks.
    #[default]
    Model,
    /// An agent opening a new session of its own: the catch-up prompt, the conversation so
    /// far within the budget.
    NewSession,
    /// An agent whose session holds the conversation: the newest message alone.
    Session,
}

/// A backend's context settings, from its `backends.toml` entry (and `--context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextSettings {
    pub mode: ContextMode,
    /// No request is sent above this many (estimated) tokens.
    pub max_tokens: u64,
    /// Tool results longer than this many characters are cut in the context, the full text
    /// saved as an artifact.
    pub tool_result_max_chars: usize,
}

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings {
            mode: ContextMode::default(),
            max_tokens: DEFAULT_MAX_CONTEXT_TOKENS,
            tool_result_max_chars: DEFAULT_TOOL_RESULT_MAX_CHARS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_print_back() {
        for text in ["continue", "fresh", "sliding:20", "summarize"] {
            assert_eq!(text.parse::<ContextMode>().unwrap().to_string(), text);
        }
        assert_eq!("summarise".parse(), Ok(ContextMode::Summarize));
        let window = |mode: &str| ModeError::Window {
            mode: mode.to_string(),
        };
        assert_eq!("sliding:0".parse::<ContextMode>(), Err(window("sliding:0")));
        assert_eq!("sliding:x".parse::<ContextMode>(), Err(window("sliding:x")));
        let err = "everything".parse::<ContextMode>().unwrap_err();
        assert!(err.to_string().contains("sliding:N"), "{err}");
    }
}
