//! Backends: what the agent calls once per model step. One trait, [`Backend`]; the CLI
//! (subprocess) backend drives agent CLIs defined in `backends.toml`.

mod cli;
mod lines;

pub use cli::CliBackend;

use std::path::Path;

use crate::agent::{Event, RawOutput};
use crate::context::Conversation;
use crate::parse::{RawCall, Usage};
use crate::tools::ToolSpec;
use crate::{BoxFuture, Error};

/// What a backend gets for one call: the whole conversation (the backend formats it), the
/// tools that exist, and the working directory.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    pub conversation: &'a Conversation,
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
