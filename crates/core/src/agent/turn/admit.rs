//! What a prompt must pass before its turn starts: images only to a backend that takes them,
//! and a first request within the context budget. A prompt refused here leaves the
//! conversation and the turn count as they were, so the session saved after it, the next
//! turn and `/undo` see no trace of it.

use super::Agent;
use crate::backend::Backend;
use crate::context::{Message, Prompt, Recipient};
use crate::event::{Event, Observer};
use crate::Error;

/// Who a request to `backend` goes to, which decides what the budget counts.
pub(super) fn recipient(backend: &dyn Backend) -> Recipient {
    match (backend.keeps_conversation(), backend.starts_fresh()) {
        (false, _) => Recipient::Model,
        (true, true) => Recipient::NewSession,
        (true, false) => Recipient::Session,
    }
}

impl Agent {
    /// The skills of this session (the `skill` tool shares them), read again every turn.
    pub fn set_skills(&mut self, skills: Option<crate::context::SharedLibrary>) {
        self.context.set_skills(skills);
    }

    pub fn skills(&self) -> Option<&crate::context::SharedLibrary> {
        self.context.skills()
    }

    /// Adds `prompt` to the conversation, or refuses it (an `Error` event and the error)
    /// leaving everything as it was. Returns the notices of its turn: why the memory file was
    /// left out, if it was, and the skills skipped since the last turn.
    pub(super) async fn admit(
        &mut self,
        prompt: Prompt,
        obs: &mut dyn Observer,
    ) -> Result<Vec<String>, Error> {
        let refuse = |obs: &mut dyn Observer, e: Error| {
            obs.event(&Event::Error {
                message: e.message.clone(),
                kind: e.kind,
            });
            Err(e)
        };
        if !prompt.images.is_empty() {
            // Refused with its own error event.
            self.check_images(obs).await?;
        }
        // The memory file counts toward the budget of a model that is sent it.
        let mut notices: Vec<String> = self
            .context
            .reload_memory(&self.options.cwd)
            .err()
            .map(|e| format!("{}; going on without it", e.message))
            .into_iter()
            .collect();
        // A changed SKILL.md is in the catalog of this turn's requests, and in its budget.
        notices.extend(self.context.reload_skills());
        let len = self.conversation.len();
        self.conversation.push(Message::User {
            text: prompt.text,
            images: prompt.images,
        });
        self.context.set_recipient(recipient(&*self.backend));
        // The first message of a conversation too is counted exactly where it can be.
        notices.extend(self.count_exact().await);
        if let Err(e) = self.context.plan(&self.conversation, self.backend.name()) {
            self.conversation.truncate(len);
            return refuse(obs, e);
        }
        Ok(notices)
    }
}
