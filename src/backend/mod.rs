//! Backends: what the agent calls once per model step. One trait, [`Backend`]; the CLI
//! (subprocess) backend drives agent CLIs defined in `backends.toml`, the HTTP backends call
//! LLM APIs directly.

mod cli;
mod http;
mod lines;
mod system;

pub use cli::{CliBackend, Probe};
pub use http::{decode_recorded, HttpBackend};
pub use system::effective_system_prompt;

use std::path::Path;

use crate::event::{Event, RawOutput};

use crate::config::Definition;

use crate::context::Window;
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
}

/// Where a backend reports live events (output lines, progress) during a call.
pub type Emit<'a> = dyn FnMut(Event) + Send + 'a;

/// One model step: conversation in, reply out.
pub trait Backend: Send + Sync {
    fn name(&self) -> &str;
    fn call<'a>(
        &'a self,
        request: Request<'a>,
        emit: &'a mut Emit<'_>,
    ) -> BoxFuture<'a, Result<Reply, Error>>;
}

/// Command-line settings that override a backend's entry (`--model`, `--temp`,
/// `--no-stream`).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub model: Option<String>,
    pub temperature: Option<f64>,
    pub no_stream: bool,
}

/// The backend a definition describes, with the overrides applied. Everything that can be
/// checked before the first call (the command exists, the API key is set) is checked here.
pub fn build(def: &Definition, overrides: &Overrides) -> Result<Box<dyn Backend>, Error> {
    match def.clone() {
        Definition::Cli(mut def) => {
            if overrides.temperature.is_some() {
                return Err(Error::config(format!(
                    "--temp: backend `{}` is an agent CLI, which sets its own temperature; \
                     only HTTP backends send one",
                    def.name
                )));
            }
            if let Some(model) = &overrides.model {
                def.model = Some(model.clone());
            }
            Ok(Box::new(CliBackend::new(def)?))
        }
        Definition::Http(mut def) => {
            if let Some(model) = &overrides.model {
                def.model = Some(model.clone());
            }
            if let Some(t) = overrides.temperature {
                def.temperature = Some(t);
            }
            def.stream &= !overrides.no_stream;
            Ok(Box::new(HttpBackend::new(def)?))
        }
    }
}
