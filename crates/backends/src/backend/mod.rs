//! Backends: what the agent calls once per model step. One trait, [`Backend`]; the CLI
//! (subprocess) backend drives agent CLIs defined in `backends.toml`, the HTTP backends call
//! LLM APIs directly, the pty backend drives an interactive terminal agent through a
//! pseudo-terminal and reads its screen, the ACP backend drives an agent through the Agent
//! Client Protocol.

mod acp;
mod cli;
mod commented;
pub mod doctor;
mod error;
mod guard;
mod http;
mod kept;
mod lines;
mod offered;
mod own_program;
mod pty;
pub mod ratelimit;
pub mod retry;
mod shell_words;
mod streamed;
mod system;

pub use acp::{AcpBackend, AcpProbe};
pub use cli::{CliBackend, Probe};
use error::{agent_failed, turn_timed_out};
pub use error::{BackendError, CountError};
pub use http::{decode_recorded, token_method, HttpBackend, HttpClients};
pub use own_program::this_program_serves_demo_agent;
pub use pty::{question, Detail, PtyBackend, PtyProbe, Question, ScreenReader};
pub use system::effective_system_prompt;

use std::path::Path;

use crate::event::{ApprovalRequest, Decision, Event, RawOutput};

use crate::config::Definition;

use crate::context::{Message, Method, Window};
use crate::parse::{RawCall, Usage};
use crate::tools::ToolSpec;
use crate::{BoxFuture, Error};

/// What a backend gets for one call: the part of the conversation to send (already chosen by
/// the context mode and trimmed to the budget; the backend formats it, and must not send more),
/// the tools that exist, and the working directory.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    pub window: &'a Window<'a>,
    pub tools: &'a [ToolSpec],
    pub cwd: &'a Path,
}

/// What a backend answered.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// The text to show, tool-call markup removed.
    pub text: String,
    pub calls: Vec<RawCall>,
    pub usage: Option<Usage>,
    /// What the backend printed, before stripping, for logs.
    pub raw: Option<RawOutput>,
    /// Tool calls the agent behind the backend made and ran itself (an ACP agent's), for
    /// the conversation: another backend then sees them.
    pub ran: Vec<Ran>,
}

/// One tool call an agent ran itself, as it reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    /// The tool's name in the conversation (`acp_execute`: its kind, prefixed so that no
    /// model takes it for one of agent-loop's tools).
    pub name: String,
    /// What the agent said of the call: its title, kind, files and raw input.
    pub args: serde_json::Value,
    pub ok: bool,
    /// Its status and what it reported of its result, as text.
    pub output: String,
}

/// Where a backend reports live events (output lines, progress) during a call.
pub type Emit<'a> = dyn FnMut(Event) + Send + 'a;

/// What a backend can ask of the loop during a call: report events, and ask the user (through
/// the approval policy) whether something may run, for an agent that shows approval
/// questions of its own (a pty backend).
pub trait Host: Send {
    fn event(&mut self, event: Event);
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision>;

    /// Where and how agent-loop's own tools run (root, environment policy), for an agent that
    /// asks agent-loop to read, write or run commands for it (an ACP agent); `None` where no
    /// loop runs tools (`doctor`), and such requests are refused.
    fn tool_context(&self) -> Option<crate::tools::ToolContext> {
        None
    }

    /// Whether every approval question is answered yes without asking (`--approval never`).
    fn approves_all(&self) -> bool {
        false
    }

    /// Whether the approval policy answers `request` yes without putting it to anyone (the
    /// mode, an `--allow` rule, an earlier "always"): what [`Host::approve`] would then grant
    /// was judged by a rule, not seen by the user. No by default: nothing is assumed allowed.
    fn allows(&self, _request: &ApprovalRequest) -> bool {
        false
    }
}

/// One model step: conversation in, reply out.
pub trait Backend: Send + Sync {
    fn name(&self) -> &str;
    fn call<'a>(
        &'a self,
        request: Request<'a>,
        emit: &'a mut Emit<'_>,
    ) -> BoxFuture<'a, Result<Reply, Error>>;

    /// A call that may ask the user for approvals; only events, unless a backend needs more.
    fn call_with_host<'a>(
        &'a self,
        request: Request<'a>,
        host: &'a mut dyn Host,
    ) -> BoxFuture<'a, Result<Reply, Error>> {
        Box::pin(async move {
            let mut emit = |e: Event| host.event(e);
            self.call(request, &mut emit).await
        })
    }

    /// What the last call had gathered when its future was dropped (the turn was cancelled):
    /// the answer so far and the tool calls its agent ran, for the conversation; taken once.
    fn take_partial(&self) -> Option<Reply> {
        None
    }

    /// The agent's own slash commands (an ACP agent's), as it last listed them: names
    /// without `/` and what each does. `//NAME` in the REPL sends it `/NAME`.
    fn agent_commands(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The id of the agent's own session (an ACP agent's), kept with agent-loop's session so
    /// that a later run resumes it.
    fn agent_session(&self) -> Option<String> {
        None
    }

    /// The agent's session (an ACP agent's) for the next call: `id` kept by an earlier run
    /// or before a switch, or `None` for a new one (`/clear`, a loaded session without
    /// one). A running agent opens it before its next prompt. `lacks`: how many of the
    /// conversation's latest messages came after the session was kept (other backends'
    /// turns), which a loaded session is given with the next message.
    fn resume_agent_session(&self, _id: Option<&str>, _lacks: usize) {}

    /// Whether the agent behind the backend keeps its own conversation (an ACP or a terminal
    /// agent): it is not asked to summarise agent-loop's (`/compact`, `summarize` mode), since
    /// the request would land in its own history.
    fn keeps_conversation(&self) -> bool {
        false
    }

    /// Whether the next call may open a new session of the agent behind the backend (an ACP
    /// agent's, which keeps its own conversation): the request then carries the conversation
    /// so far, which the first prompt of a new session sends.
    fn starts_fresh(&self) -> bool {
        false
    }

    /// Whether the model takes images, where that is known without asking anyone: an HTTP
    /// backend's `images` setting; an ACP agent's `promptCapabilities.image` once it was
    /// started (`None` before); agent CLIs and terminal agents take text only.
    fn images_known(&self) -> Option<bool> {
        Some(false)
    }

    /// Whether the model takes images, asking the agent where it must (an ACP agent is
    /// started for its capabilities; no prompt is sent): asked before a prompt with images
    /// joins the conversation. The error says why not and what to set.
    fn check_images<'a>(
        &'a self,
        _cwd: &'a Path,
        _host: &'a mut dyn Host,
    ) -> BoxFuture<'a, Result<(), Error>> {
        let name = self.name().to_string();
        Box::pin(async move {
            Err(Error::config(format!(
                "backend `{name}` takes text only (an agent CLI or a terminal agent gets the \
                 prompt as text): use an HTTP backend with `images = true` in backends.toml, \
                 or an ACP agent that takes images"
            )))
        })
    }

    /// How this backend's tokens are counted (see `context::exact`): exactly where its
    /// model's tokenizer is known, else by the calibrated estimate.
    fn token_method(&self) -> Method {
        Method::Estimate
    }

    /// The exact tokens of `message` by the provider's count-tokens endpoint, for a backend
    /// whose method is [`Method::Api`]; the error says why not.
    fn count_tokens<'a>(&'a self, _message: &'a Message) -> BoxFuture<'a, Result<u64, CountError>> {
        Box::pin(async { Err(CountError::NoEndpoint) })
    }

    /// Ends what outlives a call (a pty agent's process) at the end of the session.
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// Command-line settings that override a backend's entry (`--model`, `--temp`,
/// `--no-stream`).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub model: Option<String>,
    pub temperature: Option<f64>,
    pub no_stream: bool,
    /// The `count_tokens` setting.
    pub count_tokens: crate::context::CountTokens,
}

/// The backend a definition describes, with the overrides applied; an HTTP backend's client
/// comes from `clients`. Everything that can be checked before the first call (the command
/// exists, the API key is set) is checked here.
pub fn build(
    def: &Definition,
    overrides: &Overrides,
    clients: &HttpClients,
) -> Result<Box<dyn Backend>, Error> {
    match def {
        Definition::Cli(def) => {
            if overrides.temperature.is_some() {
                return Err(no_temperature(
                    &def.name,
                    "an agent CLI",
                    "; only HTTP backends send one",
                ));
            }
            let mut def = def.clone();
            if let Some(model) = &overrides.model {
                def.model = Some(model.clone());
            }
            Ok(Box::new(CliBackend::new(def)?))
        }
        Definition::Http(def) => {
            let mut def = def.clone();
            if let Some(model) = &overrides.model {
                def.model = Some(model.clone());
            }
            if let Some(t) = overrides.temperature {
                def.temperature = Some(t);
            }
            def.stream &= !overrides.no_stream;
            def.count_tokens = overrides.count_tokens;
            Ok(Box::new(HttpBackend::new(def, clients)?))
        }
        Definition::Pty(def) => {
            if overrides.temperature.is_some() {
                return Err(no_temperature(&def.name, "a terminal agent", ""));
            }
            let mut def = def.clone();
            if let Some(model) = &overrides.model {
                def.model = Some(model.clone());
            }
            Ok(Box::new(PtyBackend::new(def)?))
        }
        Definition::Acp(def) => {
            if overrides.temperature.is_some() {
                return Err(no_temperature(&def.name, "an ACP agent", ""));
            }
            let mut def = def.clone();
            if let Some(model) = &overrides.model {
                def.model = Some(model.clone());
            }
            Ok(Box::new(AcpBackend::new(def)?))
        }
    }
}

fn no_temperature(backend: &str, what: &'static str, also: &'static str) -> Error {
    BackendError::NoTemperature {
        backend: backend.to_string(),
        what,
        also,
    }
    .into()
}
