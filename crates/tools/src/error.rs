//! What can go wrong putting the tool set together (`--tools`, tools added from MCP
//! servers, `--root`). A tool that fails while it runs is not an error of the library: it is
//! a failed `ToolOutput` the model reads, and a file it cannot reach says why in a
//! [`FileError`].

use std::path::PathBuf;

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
    /// A tool added has a name an HTTP API would know by the same name as one already in
    /// the set.
    #[error("tools `{other}` and `{name}` would both be called `{api}` by an HTTP API")]
    SameApiName {
        name: String,
        other: String,
        api: String,
    },
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

/// Why a file tool could not reach a file the model named (`shown`, as the model wrote it):
/// not an error of the loop but the tool's failed output, which the model reads.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The path resolves outside the folder the file tools may use (`--root`).
    #[error(
        "refused: {shown} resolves to {}, outside the folder the file tools may use ({}). The \
         user can widen it with --root.",
        resolved.display(),
        root.display()
    )]
    Outside {
        shown: String,
        resolved: PathBuf,
        root: PathBuf,
    },
    /// A symbolic link on the path leads nowhere.
    #[error("refused: {shown}: {} is a symbolic link to nothing", link.display())]
    DanglingLink { shown: String, link: PathBuf },
    /// A part of the path exists but cannot be resolved.
    #[error("refused: {shown}: cannot resolve {}", part.display())]
    Unresolvable { shown: String, part: PathBuf },
    /// A symbolic link appeared on the path after it was checked.
    #[error("refused: {shown} changed while being opened (a symbolic link appeared on its way)")]
    Raced { shown: String },
    #[error("{shown} is a folder, not a file")]
    Folder { shown: String },
    /// A FIFO, socket or device; `what` says which.
    #[error("refused: {shown} is {what}; the file tools only open regular files")]
    Special { shown: String, what: &'static str },
    /// A file the user could not write; `mode` is its permission bits.
    #[error(
        "refused: {shown} is read-only (mode {mode:o}); the user has not allowed it to be written"
    )]
    ReadOnly { shown: String, mode: u32 },
    #[error("cannot write {shown}: not a file name")]
    NoFileName { shown: String },
    /// The system refused; `verb` is what was being done (read, list, write).
    #[error("cannot {verb} {shown}: {source}")]
    Io {
        verb: &'static str,
        shown: String,
        source: std::io::Error,
    },
    /// The editor holding the files (over ACP) refused or failed.
    #[error("cannot {} {shown}: {source}", source.verb)]
    Editor { shown: String, source: EditorError },
}

/// An editor's refusal or failure to read or write a file: its own message, as it sent it.
#[derive(Debug, thiserror::Error)]
#[error("the editor did not {verb} it: {message}")]
pub struct EditorError {
    /// `read` or `write`.
    pub verb: &'static str,
    pub message: String,
}

/// A `--root` that cannot be the file tools' folder.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    #[error("--root {}: {source}", dir.display())]
    Unreadable {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("--root {}: not a folder", dir.display())]
    NotFolder { dir: PathBuf },
}

impl From<RootError> for Error {
    fn from(e: RootError) -> Self {
        Error::caused(ErrorKind::Config, e.to_string(), e)
    }
}
