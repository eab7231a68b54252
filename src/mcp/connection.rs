//! One live connection to an MCP server: starting a stdio server as a child process in its
//! own process group (killed with everything it started when the connection goes), or reaching
//! a Streamable HTTP server; the handshake; listing tools and calling one. A stdio server's
//! stderr is kept (its last lines) for error messages, never passed through to agent-loop's
//! own output.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::io::AsyncBufReadExt;
use tokio::task::JoinHandle;

use super::http::Http;
use super::lock;
use super::protocol::{self, CallResult, Tool, ToolPage};
use super::rpc::{self, Failure};
use super::stdio::Stdio;
use crate::config::mcp::{ServerDef, Transport};
use crate::process::GroupGuard;
use crate::tools::EnvPolicy;

/// Lines of a server's stderr kept for messages.
const STDERR_LINES: usize = 20;
/// How long to wait for a failed server's last stderr lines once its group is killed.
const STDERR_GRACE: Duration = Duration::from_secs(2);
/// How long a call that timed out waits to tell the server it is cancelled.
const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// A connected server and the tools it offered when it was connected.
pub struct Connection {
    link: Link,
    /// The id of the next request; 0 is `initialize`'s.
    next_id: AtomicU64,
    pub tools: Vec<Tool>,
    /// Kills a stdio server's process group when the connection is dropped or found closed.
    group: Mutex<Option<GroupGuard>>,
    /// Reads a stdio server's stderr into `stderr` to its end.
    reader: Mutex<Option<JoinHandle<()>>>,
    stderr: Arc<Mutex<StderrTail>>,
}

/// The transport to a server.
enum Link {
    Stdio(Stdio),
    Http(Http),
}

/// Why a call through a connection failed.
pub enum CallError {
    /// The server is gone (exited, or the connection closed).
    Closed(String),
    /// No answer within the server's timeout.
    Timeout,
    /// The server answered with a protocol error.
    Protocol(String),
    /// The request to an HTTP server failed (the connection, or its event stream); the next
    /// one may not.
    Failed(String),
}

impl Connection {
    /// Starts or reaches the server, does the MCP handshake and lists its tools, all within
    /// the server's start-up timeout. The error says what failed, with the server's last
    /// stderr lines.
    pub async fn open(
        def: &ServerDef,
        cwd: &std::path::Path,
        env_policy: &EnvPolicy,
    ) -> Result<Connection, String> {
        let stderr = Arc::new(Mutex::new(StderrTail::default()));
        let (link, group, reader) = match &def.transport {
            Transport::Stdio { command, args, env } => {
                let program = which::which_in(command, std::env::var_os("PATH"), cwd)
                    .map_err(|_| format!("command `{command}` is not on PATH"))?;
                let mut cmd = tokio::process::Command::new(&program);
                cmd.args(args).current_dir(cwd).kill_on_drop(true);
                // Its own session and group: Ctrl-C at the terminal does not reach it, it has
                // no terminal to type into, and killing the group takes whatever it started
                // (npx starts node) with it.
                crate::process::isolate(&mut cmd);
                // No inherited secrets; what its own `env` names, it gets.
                env_policy.apply(&mut cmd);
                cmd.envs(env);
                let (stdio, err, pid) =
                    Stdio::start(cmd).map_err(|e| format!("cannot start `{command}`: {e}"))?;
                let reader = err.map(|err| tokio::spawn(keep_tail(err, stderr.clone())));
                (Link::Stdio(stdio), Some(GroupGuard::new(pid)), reader)
            }
            Transport::Http { url } => (Link::Http(Http::new(url)?), None, None),
        };
        let mut connection = Connection {
            link,
            next_id: AtomicU64::new(1),
            tools: Vec::new(),
            group: Mutex::new(group),
            reader: Mutex::new(reader),
            stderr,
        };
        let started = tokio::time::timeout(def.startup_timeout, async {
            let server = connection
                .handshake()
                .await
                .map_err(|e| match &def.transport {
                    Transport::Http { url } => format!("{url}: {}", describe(e)),
                    Transport::Stdio { .. } => describe(e),
                })?;
            if !protocol::offers_tools(&server) {
                return Ok(Vec::new());
            }
            connection
                .list_tools()
                .await
                .map_err(|e| format!("listing its tools failed: {}", describe(e)))
        })
        .await;
        let failure = match started {
            Ok(Ok(tools)) => {
                connection.tools = tools;
                return Ok(connection);
            }
            Ok(Err(e)) => e,
            Err(_) => format!(
                "no answer within {}s (its startup_timeout_s)",
                def.startup_timeout.as_secs()
            ),
        };
        Err(with_stderr(failure, &connection.last_stderr().await))
    }

    /// `initialize`, then the `initialized` notification; the server's `initialize` result.
    async fn handshake(&self) -> Result<Value, Failure> {
        match &self.link {
            Link::Http(http) => http.handshake().await,
            Link::Stdio(stdio) => {
                let initialize = rpc::request(0, "initialize", protocol::initialize());
                let server = stdio.request(0, initialize).await?;
                let initialized = rpc::notification("notifications/initialized", json!({}));
                stdio.send(initialized)?;
                Ok(server)
            }
        }
    }

    /// Every page of `tools/list`.
    async fn list_tools(&self) -> Result<Vec<Tool>, Failure> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        loop {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let page = self.link.request(id, "tools/list", params).await?;
            let page: ToolPage = serde_json::from_value(page)
                .map_err(|e| Failure::Refused(format!("its tool list is not MCP's: {e}")))?;
            tools.extend(page.tools);
            match page.next_cursor {
                // A server that hands back a cursor it gave before would be asked forever.
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                _ => return Ok(tools),
            }
        }
    }

    /// Calls one tool of this server, within `timeout`; a call that runs out of it is
    /// cancelled on the server.
    pub async fn call(
        &self,
        tool: &str,
        args: Map<String, Value>,
        timeout: Duration,
    ) -> Result<CallResult, CallError> {
        if self.is_closed() {
            return Err(CallError::Closed(self.closed_note(String::new()).await));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let params = json!({"name": tool, "arguments": args});
        match tokio::time::timeout(timeout, self.link.request(id, "tools/call", params)).await {
            Err(_) => {
                let cancel = json!({"requestId": id, "reason": "timed out"});
                let cancel = self
                    .link
                    .send(rpc::notification("notifications/cancelled", cancel));
                // A server too stuck to take it does not hold the call up any longer.
                let _ = tokio::time::timeout(CANCEL_GRACE, cancel).await;
                Err(CallError::Timeout)
            }
            Ok(Ok(result)) => serde_json::from_value(result)
                .map_err(|e| CallError::Protocol(format!("its result is not MCP's: {e}"))),
            Ok(Err(Failure::Refused(message))) => Err(CallError::Protocol(message)),
            // An HTTP request that failed says nothing of the next one: the server is not
            // taken for gone.
            Ok(Err(Failure::Closed(cause))) if matches!(self.link, Link::Http(_)) => {
                Err(CallError::Failed(cause))
            }
            Ok(Err(Failure::Closed(cause))) => {
                Err(CallError::Closed(self.closed_note(cause).await))
            }
        }
    }

    /// Whether the server has gone away (a stdio server's output ended).
    pub fn is_closed(&self) -> bool {
        match &self.link {
            Link::Stdio(stdio) => stdio.is_closed(),
            Link::Http(_) => false,
        }
    }

    /// "the connection closed", with the server's last stderr lines so far.
    pub fn exit_note(&self) -> String {
        with_stderr("the connection closed".into(), &self.stderr_tail())
    }

    /// Why the connection is gone, with all of the server's last stderr lines: its process
    /// group is killed, so the pipe reaches its end, and its reader is given a moment.
    async fn closed_note(&self, cause: String) -> String {
        let cause = if cause.is_empty() {
            "the connection closed".to_string()
        } else {
            cause
        };
        with_stderr(cause, &self.last_stderr().await)
    }

    async fn last_stderr(&self) -> String {
        drop(lock(&self.group).take());
        let reader = lock(&self.reader).take();
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(STDERR_GRACE, reader).await;
        }
        self.stderr_tail()
    }

    fn stderr_tail(&self) -> String {
        lock(&self.stderr).render()
    }
}

impl Link {
    async fn request(&self, id: u64, method: &str, params: Value) -> Result<Value, Failure> {
        let message = rpc::request(id, method, params);
        match self {
            Link::Stdio(stdio) => stdio.request(id, message).await,
            Link::Http(http) => http.request(id, message).await,
        }
    }

    async fn send(&self, message: Vec<u8>) -> Result<(), Failure> {
        match self {
            Link::Stdio(stdio) => stdio.send(message),
            Link::Http(http) => http.send(message).await,
        }
    }
}

/// A failure in words: the server's refusal, or why the transport closed.
fn describe(failure: Failure) -> String {
    match failure {
        Failure::Refused(message) => message,
        Failure::Closed(cause) if cause.is_empty() => "the connection closed".into(),
        Failure::Closed(cause) => cause,
    }
}

fn with_stderr(message: String, tail: &str) -> String {
    if tail.is_empty() {
        message
    } else {
        format!("{message}; its stderr ended with:\n{tail}")
    }
}

/// The last lines a server wrote on stderr.
#[derive(Default)]
struct StderrTail {
    lines: VecDeque<String>,
}

impl StderrTail {
    fn push(&mut self, line: String) {
        if self.lines.len() == STDERR_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    fn render(&self) -> String {
        self.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// Drains a server's stderr to its end, keeping the last lines (bytes that are not UTF-8
/// become U+FFFD rather than ending the reading).
async fn keep_tail(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<StderrTail>>) {
    let mut lines = tokio::io::BufReader::new(stderr).split(b'\n');
    while let Ok(Some(line)) = lines.next_segment().await {
        lock(&tail).push(String::from_utf8_lossy(&line).into_owned());
    }
}
