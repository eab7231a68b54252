//! What became of a call that needed approval, in the words every front end says after its
//! line: the Telegram bot edits a call's line (and its question's message) to it, the
//! terminal displays add a line with it once an agent's own call is answered. A pending call
//! is never said to have run.

/// The state of a call's approval, said after its line's text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CallState {
    Awaiting,
    Allowed,
    /// The person said no.
    Denied,
    /// Denied for want of an answer: the time ran out, the input closed, or the question
    /// was not sent or could not be asked (no terminal, JSON lines).
    NotAnswered,
    /// The turn ended (/stop, shutdown) while the question waited.
    Cancelled,
}

impl CallState {
    pub fn text(self) -> &'static str {
        match self {
            CallState::Awaiting => "awaiting approval",
            CallState::Allowed => "allowed",
            CallState::Denied => "denied",
            CallState::NotAnswered => "not answered",
            CallState::Cancelled => "cancelled",
        }
    }

    /// The call was refused: what is reported of it afterwards ("not run", an agent's
    /// `failed`) is no failure of its own.
    pub fn refused(self) -> bool {
        matches!(self, CallState::Denied | CallState::NotAnswered)
    }
}
