//! Tools from Model Context Protocol servers, alongside the built-in ones. The servers named in
//! `[mcp.servers.NAME]` tables are started together at start-up, each within its timeout; the
//! tools of those that answer join the [`Registry`] as
//! `mcp.<server>.<tool>`, and so reach every backend like the built-in tools. A server that
//! fails is reported once and left out; the others keep working.
//!
//! The protocol is the official rmcp SDK's (its service loop, messages, line transport and
//! Streamable HTTP worker); agent-loop brings what goes around it: starting stdio servers in
//! their own process groups, its own reqwest client for HTTP servers, and the caps on
//! everything a server sends (`caps`).
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

pub(crate) mod caps;
mod connection;
mod content;
mod error;
mod failure;
mod handler;
mod http;
pub mod oauth;
mod server;
pub(crate) mod stdio;
mod tool;
mod transport;
mod words;

use std::path::Path;
use std::sync::Arc;

pub use crate::config::mcp::{ServerDef, Transport};
pub use connection::Place;
pub use error::McpError;
pub use failure::{
    BadUrl, BodyError, Failed, HeaderError, ListError, LoginError, NotPublic, RefreshFailed,
    RequestError, StartError, TokenFileError,
};
pub use http::login_needed;
pub use server::{Server, ServerState};
pub use tool::{tool_name, McpTool};

use crate::tools::{Registry, Tool};
// The layers below at the paths the modules name them by.
use agent_loop_config::{self as config, dirs};
use agent_loop_protocol::{plural, redact, BoxFuture};
use agent_loop_tools::{self as tools, process, sse, tls};

/// All configured servers of a session.
#[derive(Default)]
pub struct McpServers {
    servers: Vec<Arc<Server>>,
}

/// One line of `/mcp`: a server, its state and how many tools it offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    pub tools: usize,
}

impl McpServers {
    /// Starts every enabled server at once and waits until each has answered, failed or run
    /// out of its timeout. Servers run in `cwd`, without the variables `env` removes; their
    /// `roots/list` is answered with `root` (`--root`; `cwd` when that is anywhere).
    pub async fn start(
        defs: impl IntoIterator<Item = ServerDef>,
        cwd: &Path,
        root: &crate::tools::Root,
        env: Arc<crate::tools::EnvPolicy>,
    ) -> Self {
        let root = match root {
            crate::tools::Root::Anywhere => cwd.to_path_buf(),
            crate::tools::Root::Dir(dir) => dir.clone(),
        };
        let servers: Vec<Arc<Server>> = defs
            .into_iter()
            .map(|def| {
                let place = Place {
                    cwd: cwd.to_path_buf(),
                    root: root.clone(),
                };
                Arc::new(Server::new(def, place, env.clone()))
            })
            .collect();
        let mut starting = tokio::task::JoinSet::new();
        for server in &servers {
            let server = server.clone();
            starting.spawn(async move { server.connect().await });
        }
        while starting.join_next().await.is_some() {}
        McpServers { servers }
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The servers that could not be started, with why: to be reported once at start-up.
    pub fn failures(&self) -> Vec<(String, String)> {
        self.servers
            .iter()
            .filter_map(|s| match s.state() {
                ServerState::Failed(why) => Some((s.def.name.clone(), why)),
                _ => None,
            })
            .collect()
    }

    /// Adds the tools of every running server to `registry`; what was left out (a tool name
    /// a server gave twice), in notes to be reported once at start-up. One server's mistake
    /// does not lose another's tools.
    pub fn register(&self, registry: &mut Registry) -> Vec<String> {
        let mut notes = Vec::new();
        for server in &self.servers {
            let name = &server.def.name;
            for note in server.notes() {
                notes.push(format!("MCP server `{name}`: {note}"));
            }
            for tool in adapters(server) {
                if let Err(e) = registry.add(tool) {
                    notes.push(format!("MCP server `{name}`: {e}; the second was left out"));
                }
            }
        }
        notes
    }

    /// Reads again the tool list of every server that said its tools changed, and replaces
    /// their tools in `registry`; what went wrong, in notes.
    pub async fn refresh(&self, registry: &mut Registry) -> Vec<String> {
        let mut notes = Vec::new();
        for server in &self.servers {
            let Ok(connection) = server.connection() else {
                continue;
            };
            match connection.refresh_tools().await {
                Ok(false) => {}
                Ok(true) => replace_tools(server, registry),
                Err(why) => notes.push(format!("MCP server `{}`: {why}", server.def.name)),
            }
        }
        notes
    }

    /// Each server with its state and tool count, in name order.
    pub fn status(&self) -> Vec<ServerStatus> {
        let mut all: Vec<ServerStatus> = self.servers.iter().map(|s| status(s)).collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// Stops the server called `name` (killing its processes), starts it again and replaces
    /// its tools in `registry` with the ones it offers now.
    pub async fn restart(
        &self,
        name: &str,
        registry: &mut Registry,
    ) -> Result<ServerStatus, McpError> {
        let server = self
            .servers
            .iter()
            .find(|s| s.def.name == name)
            .ok_or_else(|| {
                no_such_server(name, self.servers.iter().map(|s| s.def.name.as_str()))
            })?;
        if !server.def.enabled {
            return Err(McpError::Disabled {
                name: name.to_string(),
                defined_at: server.def.defined_at.clone(),
            });
        }
        server.connect().await;
        replace_tools(server, registry);
        Ok(status(server))
    }

    /// Stops every server: their connections close and their process groups are killed.
    /// Called before agent-loop exits; dropping the servers does the same.
    pub fn shutdown(&self) {
        for server in &self.servers {
            server.stop();
        }
    }

    /// The `/mcp` listing: one line per server.
    pub fn render_status(&self) -> String {
        if self.servers.is_empty() {
            return "no MCP servers are configured ([mcp.servers.NAME] in backends.toml)".into();
        }
        self.status()
            .iter()
            .map(ServerStatus::line)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl ServerStatus {
    /// `name: running, 3 tools`, or `name: failed: why` (the first line of why).
    pub fn line(&self) -> String {
        let state = self.state.to_string();
        let state = state.lines().next().unwrap_or_default();
        match self.state {
            ServerState::Running => format!(
                "{}: {state}, {}",
                self.name,
                crate::plural::count(self.tools, "tool", "tools")
            ),
            _ => format!("{}: {state}", self.name),
        }
    }
}

fn status(server: &Server) -> ServerStatus {
    ServerStatus {
        name: server.def.name.clone(),
        state: server.state(),
        tools: server.tools().len(),
    }
}

/// Puts the tools `server` offers now in `registry` in place of the ones it offered before.
fn replace_tools(server: &Arc<Server>, registry: &mut Registry) {
    let prefix = tool_name(&server.def.name, "");
    registry.retain(|spec| !spec.name.starts_with(&prefix));
    for tool in adapters(server) {
        // A name given twice keeps its first tool, as at start-up.
        let _ = registry.add(tool);
    }
}

fn adapters(server: &Arc<Server>) -> Vec<Box<dyn Tool>> {
    server
        .tools()
        .iter()
        .map(|t| Box::new(McpTool::new(server.clone(), t)) as Box<dyn Tool>)
        .collect()
}

/// The error for a server name that is not configured, naming the ones that are.
pub fn no_such_server<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> McpError {
    McpError::NoSuchServer {
        name: name.to_string(),
        known: known.into_iter().map(str::to_string).collect(),
    }
}

/// A lock that a panic elsewhere left poisoned still guards plain data.
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
