//! What can go wrong putting the tool set together (`--tools`, tools added from MCP
//! servers). A tool that fails while it runs is not an error of the library: it is a
//! failed `ToolOutput` the model reads.

use agent_loop_protocol::{Error, ErrorKind};

use crate::web::provider::{BRAVE_KEY_ENV, SEARXNG_ENV};

/// A tool set that cannot be built as asked.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// `--tools` names web_search, but no search provider is configured.
    #[error(
        "--tools: web_search needs a search provider: set {BRAVE_KEY_ENV} (a Brave Search API \
         key), or {SEARXNG_ENV} for a SearXNG instance"
    )]
    NoSearchProvider,
    /// `--tools` names a tool there is none of; `known` are the built-in and command tools.
    #[error(
        "--tools: unknown tool `{name}`; the tools are {}, and MCP tools as mcp.SERVER.TOOL, \
         mcp.SERVER.* or mcp.*",
        known.join(", ")
    )]
    UnknownTool { name: String, known: Vec<String> },
    /// A tool added (from an MCP server) has the name of one already in the set.
    #[error("two tools are called `{name}`")]
    Duplicate { name: String },
}

impl RegistryError {
    /// Each is a command line or configuration the tool set cannot meet: exit 2.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Config
    }
}

impl From<RegistryError> for Error {
    fn from(e: RegistryError) -> Self {
        Error::caused(e.kind(), e.to_string(), e)
    }
}
