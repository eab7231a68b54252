//! The context manager the agent keeps beside its conversation: it plans each request (mode,
//! budget, summary), calibrates the token estimate from reported counts, cuts long tool
//! results into artifacts, and carries the memory file and the skills.
//!
//! The budget counts what the request sends, which depends on its [`Recipient`]: an HTTP API
//! or an agent CLI gets agent-loop's preamble and the history; an agent that keeps its own
//! conversation (ACP, terminal) gets no preamble, only the catch-up prompt of a new session
//! of its own or else the newest message.
//!
//! Such agents do not calibrate the estimate: the input tokens they report count what their
//! own model was sent (their hidden prompt, the history of their own session, their tool
//! rounds, sometimes the newest message alone), never what agent-loop sent, so no ratio of
//! bytes to tokens follows from them; their budget counts at the ratio it had.

use std::path::Path;

use super::budget::current_user;
use super::budget::{self, Limits, Plan};
use super::exact::Method;
use super::memory::{self, Memory};
use super::prompt::catch_up_prompt;
use super::skills::{self, SharedLibrary};
use super::summarize::summary_range;
use super::tokens::{preamble_bytes, Calibration};
use super::truncate::fit_tool_output;
use super::{
    Artifacts, ContextError, ContextMode, ContextSettings, ContextStats, Conversation, Recipient,
    SystemPrompt, Window,
};
use crate::tools::ToolSpec;
use crate::Error;
use agent_loop_protocol::usage::Usage;

/// Bytes of the memory section's heading and framing in the preamble.
const MEMORY_OVERHEAD: usize = 96;

pub struct ContextManager {
    settings: ContextSettings,
    calibration: Calibration,
    artifacts: Artifacts,
    memory: Option<Memory>,
    /// The user's system prompt (`system.md`, `--system`, `system_prompt`).
    system: Option<SystemPrompt>,
    /// The skills found for this run, when there are any.
    skills: Option<SharedLibrary>,
    /// Instructions and tool descriptions: fixed for the agent's life.
    preamble_bytes: usize,
    /// The first message kept by the last trim.
    hint: usize,
    /// The plan of the last request, for the per-turn metrics.
    last: Option<Plan>,
    /// Who the next request goes to, which decides what it carries besides the history.
    recipient: Recipient,
    /// Bytes of the catch-up prompt's opening lines, before the conversation.
    catch_up_bytes: usize,
    /// Where `max_context_tokens` was set, as the refusal of a request says it.
    origin: Option<String>,
    /// How the current backend's tokens are counted.
    method: Method,
}

impl ContextManager {
    /// Where cut tool outputs go.
    pub fn artifacts(&self) -> &Artifacts {
        &self.artifacts
    }

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
            skills: None,
            preamble_bytes: preamble_bytes(tools),
            hint: 0,
            last: None,
            recipient: Recipient::Model,
            catch_up_bytes: catch_up_prompt(&Window::default(), false).len(),
            origin: None,
            method: Method::Estimate,
        }
    }

    /// `/context MODE` in the REPL.
    pub fn set_mode(&mut self, mode: ContextMode) {
        self.settings.mode = mode;
        self.hint = 0;
    }

    /// Another backend's settings (`/backend`).
    pub fn set_settings(&mut self, settings: ContextSettings) {
        self.settings = settings;
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

    /// The skills of this run (the `skill` tool shares them).
    pub fn set_skills(&mut self, skills: Option<SharedLibrary>) {
        self.skills = skills;
    }

    pub fn skills(&self) -> Option<&SharedLibrary> {
        self.skills.as_ref()
    }

    /// Reads the skills again if a `SKILL.md` changed; the warnings not told before.
    pub fn reload_skills(&mut self) -> Vec<String> {
        self.skills.as_ref().map_or_else(Vec::new, |library| {
            skills::refresh(library)
                .iter()
                .map(ToString::to_string)
                .collect()
        })
    }

    /// The skills' part of the system prompt of a request that sends `window` of
    /// `conversation` (see `context::skills`).
    pub fn skills_section(
        &self,
        conversation: &Conversation,
        window: &Window<'_>,
    ) -> Option<String> {
        let library = self.skills.as_ref()?;
        skills::section(
            library,
            &conversation.messages,
            window.messages.iter().copied(),
        )
    }

    /// Forgets the trim point and the last plan (with the conversation's `clear`).
    pub fn clear(&mut self) {
        self.hint = 0;
        self.last = None;
    }

    /// Who the next request goes to: an agent that keeps its own conversation is sent no
    /// preamble, and in a new session of its own (the backends' `Backend::starts_fresh`) the
    /// conversation so far, where the mode (`fresh`) would not.
    pub fn set_recipient(&mut self, recipient: Recipient) {
        self.recipient = recipient;
    }

    /// How the tokens of the backend the next requests go to are counted: the messages it
    /// counted exactly (see `Conversation::count_exact`) count so in the budget.
    pub fn set_method(&mut self, method: Method) {
        self.method = method;
    }

    pub fn method(&self) -> Method {
        self.method
    }

    /// Where `max_context_tokens` was set, a clause the refusal of a request ends with:
    /// `is set in FILE:LINE`.
    pub fn set_budget_origin(&mut self, origin: impl Into<String>) {
        self.origin = Some(origin.into());
    }

    fn limits(&self, recipient: Recipient, conversation: &Conversation, backend: &str) -> Limits {
        let (mode, fixed_bytes, fixed_what) = match recipient {
            Recipient::Model => (
                self.settings.mode,
                self.preamble_bytes
                    + self
                        .memory
                        .as_ref()
                        .map_or(0, |m| MEMORY_OVERHEAD + m.text.len())
                    + self.skills.as_ref().map_or(0, |library| {
                        skills::fixed_bytes(library, &conversation.messages)
                    }),
                "agent-loop's preamble (instructions, tools, memory file, skills) takes",
            ),
            // Within the budget, as `continue` sends it; with no earlier message, the
            // message goes alone.
            Recipient::NewSession => (
                match self.settings.mode {
                    ContextMode::Fresh => ContextMode::Continue,
                    mode => mode,
                },
                if current_user(conversation) > 0 || conversation.summary().is_some() {
                    self.catch_up_bytes
                } else {
                    0
                },
                "the catch-up prompt's opening lines take",
            ),
            Recipient::Session => (ContextMode::Fresh, 0, ""),
        };
        Limits {
            mode,
            max_tokens: self.settings.max_tokens,
            bytes_per_token: self.calibration.bytes_per_token(backend),
            method: self.method,
            fixed_bytes,
            fixed_what,
            hint: self.hint,
        }
    }

    /// What the next request to `backend` would carry, changing nothing (for `/tokens`).
    pub fn plan(&self, conversation: &Conversation, backend: &str) -> Result<Plan, Error> {
        self.plan_for(self.recipient, conversation, backend)
    }

    fn plan_for(
        &self,
        recipient: Recipient,
        conversation: &Conversation,
        backend: &str,
    ) -> Result<Plan, Error> {
        let limits = self.limits(recipient, conversation, backend);
        budget::plan(conversation, &limits).map_err(|mut e| {
            if let ContextError::TooBig {
                backend: b, origin, ..
            } = &mut e
            {
                *b = Some(backend.to_string());
                origin.clone_from(&self.origin);
            }
            e.into()
        })
    }

    /// The metrics of the next request to `backend`, as [`plan`](Self::plan) sees it when it
    /// goes to `recipient`.
    pub fn stats(
        &self,
        conversation: &Conversation,
        backend: &str,
        recipient: Recipient,
    ) -> Result<ContextStats, Error> {
        self.plan_for(recipient, conversation, backend)
            .map(|p| stats(&p))
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
            .then(|| {
                let limits = self.limits(self.recipient, conversation, backend);
                summary_range(conversation, &limits)
            })
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
    /// the bytes-per-token ratio of that backend, unless the backend is an agent that keeps
    /// its own conversation (see the module doc).
    pub fn observe_usage(&mut self, backend: &str, plan: &Plan, usage: &Usage) {
        if self.recipient != Recipient::Model {
            return;
        }
        // What was counted exactly leaves the rest, estimated, to correct the ratio.
        if let Some(input) = usage.input {
            let estimated = input.saturating_sub(plan.exact);
            self.calibration.observe(backend, plan.bytes, estimated);
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
