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
    /// Adds `prompt` to the conversation, or refuses it (an `Error` event and the error)
    /// leaving everything as it was. Returns why the memory file was left out, if it was.
    pub(super) async fn admit(
        &mut self,
        prompt: Prompt,
        obs: &mut dyn Observer,
    ) -> Result<Option<String>, Error> {
        let refuse = |obs: &mut dyn Observer, e: Error| {
            obs.event(&Event::Error {
                message: e.message.clone(),
            });
            Err(e)
        };
        if !prompt.images.is_empty() {
            // Refused with its own error event.
            self.check_images(obs).await?;
        }
        // The memory file counts toward the budget of a model that is sent it.
        let memory_notice = self
            .context
            .reload_memory(&self.options.cwd)
            .err()
            .map(|e| format!("{}; going on without it", e.message));
        let len = self.conversation.len();
        self.conversation.push(Message::User {
            text: prompt.text,
            images: prompt.images,
        });
        self.context.set_recipient(recipient(&*self.backend));
        if let Err(e) = self.context.plan(&self.conversation, self.backend.name()) {
            self.conversation.truncate(len);
            return refuse(obs, e);
        }
        Ok(memory_notice)
    }
}
