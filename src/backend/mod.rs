//! Backends: what the agent calls once per model step. One trait, [`Backend`]; the CLI
//! (subprocess) backend drives agent CLIs defined in `backends.toml`.

mod cli;
mod lines;

pub use cli::CliBackend;

use std::path::Path;

use crate::agent::Event;
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
