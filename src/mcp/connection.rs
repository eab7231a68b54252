//! One live connection to an MCP server through the rmcp SDK: starting a stdio server as a
//! child process in its own process group (killed with everything it started when the
//! connection goes), or reaching a Streamable HTTP server; the handshake; listing tools and
//! calling one. A stdio server's stderr is kept (its last lines) for error messages, never
//! passed through to agent-loop's own output.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, Implementation, Tool};
use rmcp::service::{ClientInitializeError, RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

use crate::tools::EnvPolicy;
use rmcp::ServiceExt;
use tokio::io::AsyncBufReadExt;

use super::http::HttpClient;
use super::transport::AnyTransport;
use crate::config::mcp::{ServerDef, Transport};
use crate::process::GroupGuard;

/// Lines of a server's stderr kept for messages.
const STDERR_LINES: usize = 20;
/// How long to wait for a failed server's last stderr lines once its group is killed.
const STDERR_GRACE: Duration = Duration::from_secs(2);

/// A connected server and the tools it offered when it was connected.
pub struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
    pub tools: Vec<Tool>,
    /// Kills a stdio server's process group when the connection is dropped.
    _group: Option<GroupGuard>,
    stderr: Arc<Mutex<StderrTail>>,
}

/// Why a call through a connection failed.
pub enum CallError {
    /// The server is gone (exited, or the connection closed).
    Closed(String),
    /// No answer within the server's timeout.
    Timeout,
    /// The server answered with a protocol error.
    Protocol(String),
}

impl Connection {
    /// Starts or reaches the server, does the MCP handshake and lists its tools, all within
    /// the server's start-up timeout. The error says what failed, with the server's last stderr lines.
    pub async fn open(
        def: &ServerDef,
        cwd: &std::path::Path,
        env_policy: &EnvPolicy,
    ) -> Result<Connection, String> {
        let stderr = Arc::new(Mutex::new(StderrTail::default()));
        let mut group = None;
        let mut reader = None;
        let result = tokio::time::timeout(def.startup_timeout, async {
            let transport = match &def.transport {
                Transport::Stdio { command, args, env } => {
                    let program = which::which_in(command, std::env::var_os("PATH"), cwd)
                        .map_err(|_| format!("command `{command}` is not on PATH"))?;
                    let mut cmd = tokio::process::Command::new(&program);
                    cmd.args(args).current_dir(cwd).kill_on_drop(true);
                    // Its own session and group: Ctrl-C at the terminal does not reach it,
                    // it has no terminal to type into, and killing the group takes whatever
                    // it started (npx starts node) with it.
                    crate::process::isolate(&mut cmd);
                    // No inherited secrets; what its own `env` names, it gets.
                    env_policy.apply(&mut cmd);
                    cmd.envs(env);
                    let (child, err) = TokioChildProcess::builder(cmd)
                        .stderr(Stdio::piped())
                        .spawn()
                        .map_err(|e| format!("cannot start `{command}`: {e}"))?;
                    group = Some(GroupGuard::new(child.id()));
                    if let Some(err) = err {
                        reader = Some(tokio::spawn(keep_tail(err, stderr.clone())));
                    }
                    AnyTransport::new(child)
                }
                Transport::Http { url } => {
                    AnyTransport::new(StreamableHttpClientTransport::with_client(
                        HttpClient::new().map_err(|e| e.to_string())?,
                        StreamableHttpClientTransportConfig::with_uri(url.as_str()),
                    ))
                }
            };
            let service =
                client_info()
                    .serve(transport)
                    .await
                    .map_err(|e| match &def.transport {
                        Transport::Http { url } => format!("{url}: {}", init_error(e)),
                        Transport::Stdio { .. } => init_error(e),
                    })?;
            let tools = service
                .list_all_tools()
                .await
                .map_err(|e| format!("listing its tools failed: {e}"))?;
            Ok::<_, String>((service, tools))
        })
        .await;
        let failure = match result {
            Ok(Ok((service, tools))) => {
                return Ok(Connection {
                    service,
                    tools,
                    _group: group,
                    stderr,
                })
            }
            Ok(Err(e)) => e,
            Err(_) => format!(
                "no answer within {}s (its startup_timeout_s)",
                def.startup_timeout.as_secs()
            ),
        };
        // Kill what is left, so the stderr pipe reaches its end and its last lines are known.
        drop(group);
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(STDERR_GRACE, reader).await;
        }
        let tail = stderr.lock().map(|t| t.render()).unwrap_or_default();
        Err(with_stderr(failure, &tail))
    }

    /// Calls one tool of this server, within `timeout`.
    pub async fn call(
        &self,
        tool: &str,
        args: serde_json::Map<String, serde_json::Value>,
        timeout: Duration,
    ) -> Result<CallToolResult, CallError> {
        if self.is_closed() {
            return Err(CallError::Closed(self.exit_note()));
        }
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(args);
        match tokio::time::timeout(timeout, self.service.call_tool(params)).await {
            Err(_) => Err(CallError::Timeout),
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ServiceError::McpError(e))) => Err(CallError::Protocol(e.message.to_string())),
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                Err(CallError::Closed(self.exit_note()))
            }
            Ok(Err(e)) if self.is_closed() => Err(CallError::Closed(format!(
                "{e}{}",
                with_stderr(String::new(), &self.stderr_tail())
            ))),
            Ok(Err(e)) => Err(CallError::Protocol(e.to_string())),
        }
    }

    /// Whether the server has gone away (its process exited, or the connection closed).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    /// "the connection closed", with the server's last stderr lines.
    pub fn exit_note(&self) -> String {
        with_stderr("the connection closed".into(), &self.stderr_tail())
    }

    fn stderr_tail(&self) -> String {
        self.stderr.lock().map(|t| t.render()).unwrap_or_default()
    }
}

/// What agent-loop tells servers about itself.
fn client_info() -> ClientConfig {
    let mut info = ClientConfig::default();
    info.client_info = Implementation::new("agent-loop", env!("CARGO_PKG_VERSION"));
    info
}

/// The handshake's failure in words: for a transport error, the innermost cause (`Connection
/// refused`) rather than the SDK's wrapping, which names Rust types.
fn init_error(error: ClientInitializeError) -> String {
    match &error {
        ClientInitializeError::TransportError { error, .. } => {
            let mut cause: &(dyn std::error::Error + 'static) = error.error.as_ref();
            while let Some(next) = cause.source() {
                cause = next;
            }
            cause.to_string()
        }
        _ => error.to_string(),
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

/// Drains a server's stderr to its end, keeping the last lines.
async fn keep_tail(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<StderrTail>>) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(mut tail) = tail.lock() {
            tail.push(line);
        }
    }
}
