//! What the next requests carry besides the conversation: the context mode and settings, the
//! user's system prompt, where the budget was set, and the memory file.

use std::path::PathBuf;

use super::{admit, Agent};
use crate::context::{Artifacts, ContextSettings, ContextStats};
use crate::Error;

impl Agent {
    /// How much history the next requests carry (`/context MODE`).
    pub fn set_context_mode(&mut self, mode: crate::context::ContextMode) {
        self.context.set_mode(mode);
    }

    /// The context settings from now on (another backend's, on `/backend`).
    pub fn set_context_settings(&mut self, settings: ContextSettings) {
        self.context.set_settings(settings);
    }

    /// The context settings in force.
    pub fn context_settings(&self) -> ContextSettings {
        *self.context.settings()
    }

    /// Cut tool outputs are saved in this folder from now on (`/clear`, `/load`).
    pub fn set_artifacts(&mut self, artifacts: Artifacts) {
        self.context.set_artifacts(artifacts);
    }

    /// The user's system prompt, sent with every request from now on.
    pub fn set_system_prompt(&mut self, system: Option<crate::context::SystemPrompt>) {
        self.context.set_system(system);
    }

    /// Where `max_context_tokens` was set (`is set in FILE:LINE`), for the refusal of a
    /// request over it.
    pub fn set_budget_origin(&mut self, origin: impl Into<String>) {
        self.context.set_budget_origin(origin);
    }

    pub fn system_prompt(&self) -> Option<&crate::context::SystemPrompt> {
        self.context.system()
    }

    /// What the next request would carry (for `/tokens`).
    pub fn context_stats(&self) -> Result<ContextStats, Error> {
        let recipient = admit::recipient(&*self.backend);
        self.context
            .stats(&self.conversation, self.backend.name(), recipient)
    }

    /// Adds `* note` to the memory file of the working directory (for `/memory`).
    pub fn remember(&self, note: &str) -> Result<PathBuf, Error> {
        Ok(crate::context::memory::append(&self.options.cwd, note)?)
    }
}
