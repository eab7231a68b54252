//! The context manager the agent keeps beside its conversation: it plans each request (mode,
//! budget, summary), calibrates the token estimate from reported counts, cuts long tool
//! results into artifacts, and carries the memory file.

use std::path::Path;

use super::budget::{self, Limits, Plan};
use super::memory::{self, Memory};
use super::summarize::summary_range;
use super::tokens::{preamble_bytes, Calibration};
use super::truncate::fit_tool_output;
use super::{
    Artifacts, ContextError, ContextMode, ContextSettings, ContextStats, Conversation, SystemPrompt,
};
use crate::parse::Usage;
use crate::tools::ToolSpec;
use crate::Error;

/// Bytes of the memory section's heading and framing in the preamble.
const MEMORY_OVERHEAD: usize = 96;

pub struct ContextManager {
    settings: ContextSettings,
    calibration: Calibration,
    artifacts: Artifacts,
    memory: Option<Memory>,
    /// The user's system prompt (`system.md`, `--system`, `system_prompt`).
    system: Option<SystemPrompt>,
    /// Instructions and tool descriptions: fixed for the agent's life.
    preamble_bytes: usize,
    /// The first message kept by the last trim.
    hint: usize,
    /// The plan of the last request, for the per-turn metrics.
    last: Option<Plan>,
    /// The backend's agent may start a new session of its own at the next request, which
    /// then carries the conversation so far where the mode (`fresh`) would not.
    catch_up: bool,
}

impl ContextManager {
    /// Cut tool outputs go to this folder from now on (the session changed).
    pub fn set_artifacts(&mut self, artifacts: Artifacts) {
        self.artifacts = artifacts;
    }

    pub fn new(settings: ContextSettings, artifacts: Artifacts, tools: &[ToolSpec]) -> Self {
        ContextManager {
            settings,
            calibration: Calibration::default(),
            artifacts,
            memory: None,
            system: None,
            preamble_bytes: preamble_bytes(tools),
            hint: 0,
            last: None,
            catch_up: false,
        }
    }

    /// `/context MODE` in the REPL.
    pub fn set_mode(&mut self, mode: ContextMode) {
        self.settings.mode = mode;
        self.hint = 0;
    }

    pub fn settings(&self) -> &ContextSettings {
        &self.settings
    }

    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    pub fn memory(&self) -> Option<&Memory> {
        self.memory.as_ref()
    }

    pub fn system(&self) -> Option<&SystemPrompt> {
        self.system.as_ref()
    }

    /// Sets the user's system prompt; its text counts toward every request's fixed part.
    pub fn set_system(&mut self, system: Option<SystemPrompt>) {
        let bytes = |s: &Option<SystemPrompt>| s.as_ref().map_or(0, |s| s.text.len());
        self.preamble_bytes = self.preamble_bytes - bytes(&self.system) + bytes(&system);
        self.system = system;
    }

    /// Reads the memory file of `cwd` again (it may have changed since the last turn).
    pub fn reload_memory(&mut self, cwd: &Path) -> Result<(), Error> {
        let loaded = memory::load(cwd);
        self.memory = loaded.as_ref().ok().cloned().flatten();
        loaded.map(|_| ()).map_err(Error::from)
    }

    /// Forgets the trim point and the last plan (with the conversation's `clear`).
    pub fn clear(&mut self) {
        self.hint = 0;
        self.last = None;
    }

    /// Whether the next request is to carry the conversation so far in `fresh` mode: the
    /// agent behind the backend may start a session without it ([`Backend::starts_fresh`]).
    ///
    /// [`Backend::starts_fresh`]: crate::backend::Backend::starts_fresh
    pub fn set_catch_up(&mut self, catch_up: bool) {
        self.catch_up = catch_up;
    }

    fn limits(&self, backend: &str) -> Limits {
        let mode = match self.settings.mode {
            // Within the budget, as `continue` sends it.
            ContextMode::Fresh if self.catch_up => ContextMode::Continue,
            mode => mode,
        };
        Limits {
            mode,
            max_tokens: self.settings.max_tokens,
            bytes_per_token: self.calibration.bytes_per_token(backend),
            fixed_bytes: self.preamble_bytes
                + self
                    .memory
                    .as_ref()
                    .map_or(0, |m| MEMORY_OVERHEAD + m.text.len()),
            hint: self.hint,
        }
    }

    /// What the next request to `backend` would carry, changing nothing (for `/tokens`).
    pub fn plan(&self, conversation: &Conversation, backend: &str) -> Result<Plan, Error> {
        budget::plan(conversation, &self.limits(backend)).map_err(|mut e| {
            if let ContextError::TooBig { backend: b, .. } = &mut e {
                *b = Some(backend.to_string());
            }
            e.into()
        })
    }

    /// The metrics of the next request to `backend`, as [`plan`](Self::plan) sees it.
    pub fn stats(&self, conversation: &Conversation, backend: &str) -> Result<ContextStats, Error> {
        self.plan(conversation, backend).map(|p| stats(&p))
    }

    /// Plans the next request to `backend`: the plan, and in `summarize` mode, when the
    /// history passes the budget, the older messages to have summarised first (see
    /// `agent::summarize`, which then plans again).
    pub fn plan_next(
        &self,
        conversation: &Conversation,
        backend: &str,
    ) -> Result<(Plan, Option<(usize, usize)>), Error> {
        let plan = self.plan(conversation, backend)?;
        let range = (self.settings.mode == ContextMode::Summarize && plan.trimmed)
            .then(|| summary_range(conversation, &self.limits(backend)))
            .flatten();
        Ok((plan, range))
    }

    /// The plan the next request is made from: remembered for the next trim and for
    /// `take_last_stats`.
    pub fn planned(&mut self, plan: Plan) -> Plan {
        if plan.trimmed {
            self.hint = plan.hint();
        }
        self.last = Some(plan);
        plan
    }

    /// A backend reported the usage of a request made from `plan`: its input count corrects
    /// the bytes-per-token ratio of that backend.
    pub fn observe_usage(&mut self, backend: &str, plan: &Plan, usage: &Usage) {
        if let Some(input) = usage.input {
            self.calibration.observe(backend, plan.bytes, input);
        }
    }

    /// The metrics of the last request, once (the display shows them once per turn).
    pub fn take_last_stats(&mut self) -> Option<ContextStats> {
        self.last.take().map(|p| stats(&p))
    }

    /// The tool output as it goes into the context: cut past `tool_result_max_chars`, the
    /// full text saved as an artifact.
    pub fn fit_tool_output(&self, call_id: &str, tool: &str, output: String) -> String {
        fit_tool_output(output, self.settings.tool_result_max_chars, |full| {
            Ok(self.artifacts.save(call_id, tool, full)?)
        })
    }
}

/// What a planned request carries, as the metrics events and `/tokens` show it.
fn stats(plan: &Plan) -> ContextStats {
    ContextStats {
        messages: plan.messages(),
        history: plan.end,
        summary: plan.summary,
        tokens: plan.tokens,
        budget: plan.max_tokens,
    }
}
