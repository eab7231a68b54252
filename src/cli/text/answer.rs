//! What became of a call that needed approval, in the words every front end says after its
//! line: the Telegram bot edits a call's line (and its question's message) to it, the
//! terminal displays add a line with it once an agent's own call is answered. A pending call
//! is never said to have run. What an agent reports of its call after a refusal is shown by
//! every front end alike.

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

/// What an agent reports of its own call after agent-loop refused it, as a line's text: None
/// for its `failed` (the refusal, said already). Anything else (`completed`, a diff, the files
/// it names) is shown, marked as after the refusal: an agent is untrusted, and one that
/// ignores the "no" and writes the file itself must not do it unseen.
pub fn after_refusal(activity: &str) -> Option<String> {
    if activity.ends_with(" (failed)") {
        return None;
    }
    Some(match activity.strip_suffix(" (completed)") {
        Some(done) => format!("{done} (done after it was refused)"),
        None => format!("{activity} (after it was refused)"),
    })
}

#[cfg(test)]
mod tests {
    use super::after_refusal;

    /// The refusal is said once; what the agent did anyway is shown, marked.
    #[test]
    fn an_agents_report_after_a_refusal_is_hidden_only_when_failed() {
        assert_eq!(after_refusal("Write a.txt (/w/a.txt) (failed)"), None);
        assert_eq!(
            after_refusal("Write a.txt (/w/a.txt) (completed)").as_deref(),
            Some("Write a.txt (/w/a.txt) (done after it was refused)")
        );
        assert_eq!(
            after_refusal("Write a.txt (/w/a.txt)").as_deref(),
            Some("Write a.txt (/w/a.txt) (after it was refused)")
        );
    }
}
