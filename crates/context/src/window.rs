//! The part of the conversation one request carries, after the mode and the budget: what
//! every backend formats, a CLI backend as one prompt string, an HTTP backend as its native
//! message array.

use super::budget::Plan;
use super::{Conversation, Memory, Message, SystemPrompt};

#[derive(Debug, Clone, Default)]
pub struct Window<'a> {
    /// The memory file, for the system preamble.
    pub memory: Option<&'a Memory>,
    /// The user's system prompt, for the system preamble.
    pub system: Option<&'a SystemPrompt>,
    /// The skills' catalog and the activated skills no longer in `messages` (see
    /// `context::skills`), for backends that get agent-loop's tools.
    pub skills: Option<&'a str>,
    /// The backend's summary of older messages (`summarize` mode), sent before `messages`.
    pub summary: Option<&'a str>,
    /// Earlier messages left out (by `sliding:N` or the budget), for a note to the model.
    pub omitted: usize,
    /// The messages, oldest first; a tool call is never without its results.
    pub messages: Vec<&'a Message>,
}

impl<'a> Window<'a> {
    /// The whole conversation, nothing left out.
    pub fn all(conversation: &'a Conversation) -> Self {
        Window {
            messages: conversation.messages.iter().collect(),
            ..Window::default()
        }
    }

    /// The messages `plan` picked.
    pub fn planned(
        conversation: &'a Conversation,
        plan: &Plan,
        memory: Option<&'a Memory>,
    ) -> Self {
        let messages = &conversation.messages[..plan.end];
        let mut picked = Vec::with_capacity(plan.messages());
        picked.extend(plan.user.map(|u| &messages[u]));
        picked.extend(&messages[plan.start..]);
        Window {
            memory,
            system: None,
            skills: None,
            summary: plan
                .summary
                .then(|| conversation.summary().map(|s| s.text.as_str()))
                .flatten(),
            omitted: plan.omitted,
            messages: picked,
        }
    }
}
