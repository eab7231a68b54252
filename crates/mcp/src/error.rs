//! What can go wrong when the user asks for an MCP server by name (`/mcp restart`, `mcp
//! login`, `mcp logout`), each failure naming the server; a server that fails to start is
//! not an error but a state (`ServerState::Failed`), reported once and left out.

use agent_loop_protocol::{Error, ErrorKind};

/// The innermost cause of a library's error, for the messages of failed connections.
pub(crate) use agent_loop_protocol::error::root_cause;

/// A request about one MCP server that could not be done.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// No server of that name is configured.
    #[error(
        "no MCP server named `{name}`; configured servers: {}",
        known_list(known)
    )]
    NoSuchServer { name: String, known: Vec<String> },
    /// The server is configured with `enabled = false`, in the file and table given.
    #[error("MCP server `{name}` is disabled (enabled = false in {defined_at})")]
    Disabled { name: String, defined_at: String },
    /// `mcp login` failed: the server is not a URL, or a step of the OAuth flow failed.
    #[error("MCP server `{name}`: {source}")]
    Login {
        name: String,
        source: Box<crate::failure::LoginError>,
    },
    /// `mcp logout` could not find or remove the server's token file.
    #[error("{source}")]
    Logout {
        name: String,
        source: crate::failure::TokenFileError,
    },
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "none".to_string()
    } else {
        known.join(", ")
    }
}

impl McpError {
    /// Every one is a request the configuration cannot meet: exit 2.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Config
    }
}

impl From<McpError> for Error {
    fn from(e: McpError) -> Self {
        Error::caused(e.kind(), e.to_string(), e)
    }
}
