//! The changes a front end asks of a chat between turns (`/backend`, `/model`, `/context`,
//! `/yes`, `/undo`, `/retry`, `/compact`, `/save`): each one a method here, so no front end
//! reaches into the agent, its conversation or its policy.

use crate::agent::ApprovalMode;
use crate::config::Definition;
use crate::context::{ContextMode, Message, Prompt};
use crate::event::Observer;
use crate::session::{validate_name, SessionError};
use crate::Error;

use super::logged::Logged;
use super::{Canceller, Chat, ChatError};

impl Chat {
    /// Switches to another configured backend, keeping the conversation (and ending a
    /// fan-out: one backend from now on). The model chosen (`--model`, `/model`, `model` in
    /// config.toml) was the old backend's: the new one runs with its own, unless it is an API
    /// whose entry names none, which cannot run without one.
    pub fn switch_backend(&mut self, name: &str) -> Result<(), Error> {
        let def = self.config.backend(name)?.clone();
        let needs_one = matches!(def, Definition::Http(_)) && def.model().is_none();
        let dropped = match def.name() != self.def.name() && !needs_one {
            true => self.overrides.model.take(),
            false => None,
        };
        if let Err(e) = self.use_def(def) {
            if dropped.is_some() {
                self.overrides.model = dropped;
            }
            return Err(e);
        }
        self.fanout = None;
        Ok(())
    }

    /// Sets the model (an API's model, or the value of `{model}` in a CLI's args).
    pub fn set_model(&mut self, model: &str) -> Result<(), Error> {
        if !self.def.takes_model() {
            let backend = self.def.name().to_string();
            return Err(ChatError::TakesNoModel { backend }.into());
        }
        let previous = self.overrides.model.replace(model.to_string());
        let result = self.use_def(self.def.clone());
        if result.is_err() {
            self.overrides.model = previous;
        }
        result
    }

    /// Saves a copy of this conversation under a name no session has; this session goes on.
    pub fn save_as(&mut self, name: &str) -> Result<(), Error> {
        let store = self.saving_store()?;
        validate_name(name)?;
        if name == self.session.name {
            let dir = store.dir().to_path_buf();
            return Err(SessionError::Exists {
                name: name.into(),
                dir,
            }
            .into());
        }
        self.save()?;
        let mut copy = self.session.clone();
        copy.name = name.to_string();
        copy.id = crate::session::new_id();
        copy.conversation = self.agent.conversation.clone();
        Ok(store.save_new(&mut copy, &self.redactor)?)
    }

    /// A handle that cancels the running [`Chat::turn`] from another task.
    pub fn canceller(&self) -> Canceller {
        self.canceller.clone()
    }

    /// How much history the next requests carry; kept with the session.
    pub fn set_context_mode(&mut self, mode: ContextMode) -> Result<(), Error> {
        // The user's choice, so it stays on `/backend` even where it is the old backend's own.
        self.context_overrides.mode = Some(mode);
        self.agent.set_context_mode(mode);
        self.save()
    }

    /// When tools ask before they run, from now on (`/yes on|off`).
    pub fn set_approval(&mut self, mode: ApprovalMode) {
        self.agent.policy_mut().mode = mode;
    }

    /// The approval mode in force.
    pub fn approval(&self) -> ApprovalMode {
        self.agent.options().policy.mode
    }

    /// Drops the last turn (the user's message and everything after it) and saves; returns
    /// that message with its images, or `None` when there is no turn (`/undo`, `/retry`).
    pub fn drop_last_turn(&mut self) -> Result<Option<Prompt>, Error> {
        let messages = &self.agent.conversation.messages;
        let Some(i) = messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }))
        else {
            return Ok(None);
        };
        let Message::User { text, images } = messages[i].clone() else {
            unreachable!("rposition found a user message")
        };
        self.agent.truncate(i);
        self.forget_agent_sessions(i);
        self.save()?;
        Ok(Some(Prompt::new(text, images)))
    }

    /// After the conversation was cut to its first `len` messages: the agent sessions (an
    /// ACP agent's, which keeps its own conversation) that hold more are not used again,
    /// since they would answer from turns the user removed. The backend's agent starts a new
    /// session, given the conversation as it is now; a kept one of another backend that had
    /// seen no further stays.
    fn forget_agent_sessions(&mut self, len: usize) {
        self.agent.resume_agent_session(None, 0);
        let seen = &self.session.agent_seen;
        let current = self.def.name();
        self.session
            .agent_sessions
            .retain(|name, _| name != current && seen.get(name).is_some_and(|&n| n <= len));
        let kept = &self.session.agent_sessions;
        self.session
            .agent_seen
            .retain(|name, _| kept.contains_key(name));
    }

    /// `/compact`: summarises the conversation before the last turn with the backend now;
    /// requests carry the summary in its place from then on.
    /// An agent that keeps its own conversation (ACP, terminal) is not asked: the request
    /// and its summary would become part of its history.
    pub async fn compact(&mut self, observer: &mut (dyn Observer + '_)) -> Result<String, Error> {
        if self.agent.keeps_conversation() {
            return Ok(format!(
                "[nothing to compact here: {} keeps its own conversation (its own command \
                 compacts it, where it has one); agent-loop's stays whole for other backends]",
                self.def.name()
            ));
        }
        let compacted = {
            let mut logged = Logged {
                inner: observer,
                log: self.log.as_mut(),
                context: &mut self.context,
                redactor: &self.redactor,
            };
            self.agent.compact(&mut logged).await
        };
        // Saved even when the summary failed: a call that was made has its cost counted.
        self.save()?;
        Ok(match compacted? {
            0 => "[nothing to compact: the conversation holds at most one turn]".into(),
            n => format!(
                "[compacted {} into a summary; context mode summarize]",
                crate::plural::count(n, "message", "messages")
            ),
        })
    }
}
