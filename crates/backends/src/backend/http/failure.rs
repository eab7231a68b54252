//! Why an HTTP backend's reply could not be read: the body broke off or passed a cap, the
//! event stream was malformed, or a wire format found no reply in it. Each says so in words
//! the user reads after the backend's name and URL.

/// Why a body could not be read to its end.
#[derive(Debug)]
pub enum BodyError {
    Broke(reqwest::Error),
    /// More than this many bytes arrived.
    TooLong(usize),
    /// A line passed this many bytes.
    LineTooLong(usize),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Broke(e) => write!(f, "the connection broke mid-reply: {}", chain(e)),
            BodyError::TooLong(cap) => write!(
                f,
                "the reply passed {} MiB, agent-loop's cap for one reply body; the rest was not read",
                cap / (1024 * 1024)
            ),
            BodyError::LineTooLong(max) => write!(
                f,
                "a line of the stream passed {} MiB without ending; the rest was not read",
                max / (1024 * 1024)
            ),
        }
    }
}

impl std::error::Error for BodyError {}

/// Why a reply could not be read: its body, its framing or a wire format's reading of it.
#[derive(Debug, thiserror::Error)]
pub enum ReplyError {
    #[error("{0}")]
    Body(#[from] BodyError),
    #[error("{0}")]
    Events(#[from] crate::sse::SseError),
    /// A whole reply that is not JSON; `head` is how it began.
    #[error("the reply is not valid JSON ({source}); it began: {head}")]
    NotJson {
        source: serde_json::Error,
        head: String,
    },
    /// A piece of a streamed reply that is not JSON; `what` names the piece (a chunk, a
    /// line, an event of a type).
    #[error("{what} is not valid JSON: {source}")]
    PieceNotJson {
        what: String,
        source: serde_json::Error,
    },
    /// A whole reply without the field its format always has.
    #[error("the reply has no `{0}`")]
    Missing(&'static str),
    /// A whole reply that is the provider's error; its message.
    #[error("the provider answered with an error: {0}")]
    Provider(String),
    /// A streamed error: the provider's message, or the event itself when it has none.
    #[error("{0}")]
    Streamed(String),
    /// A streamed event that could not be read, and how it began.
    #[error("{source}; the event was: {event}")]
    Event {
        source: Box<ReplyError>,
        event: String,
    },
    #[error("the stream ended before the reply was complete: the connection was cut mid-reply")]
    Cut,
}

/// An error and its causes, `: `-separated (reqwest's own message hides the root cause).
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
