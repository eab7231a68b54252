//! One live connection to an MCP server through the rmcp SDK: starting a stdio server as a
//! child process in its own process group (killed with everything it started when the
//! connection goes), or reaching a Streamable HTTP server; the handshake; listing tools (within
//! their caps) and calling one. A stdio server's stderr is kept (a bounded tail) for error
//! messages, never passed through to agent-loop's own output.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, PaginatedRequestParams,
    ServerResult, Tool,
};
use rmcp::service::ServiceError;
use rmcp::service::{ClientInitializeError, PeerRequestOptions, RoleClient, RunningService};
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{Map, Value};
use tokio::task::JoinHandle;

use super::caps::{self, Breach};
use super::content::lenient;
use super::handler::{Handler, ProgressRoutes};
use super::http::{self, HttpClient};
use super::lock;
use super::oauth;
use super::stdio::{self, StderrTail};
use super::transport::AnyTransport;
use crate::config::mcp::{ServerDef, Transport};
use crate::failure::{self, BadUrl, Failed, ListError, RefreshFailed, StartError};
use crate::process::GroupGuard;
use crate::redact::Redactor;
use crate::tools::{EnvPolicy, ProgressSink};

/// How long to wait for a failed server's last stderr lines once its group is killed.
const STDERR_GRACE: Duration = Duration::from_secs(2);
/// How long a call that timed out waits to tell the server it is cancelled.
const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// A call whose server keeps reporting progress has its timer restarted by each report (as
/// the TypeScript SDK's `resetTimeoutOnProgress` does), but runs at most this many times its
/// timeout in all, so a server that reports forever does not hold the turn forever.
pub const PROGRESS_CAP_FACTOR: u32 = 10;

/// Where a server's tools work.
#[derive(Debug, Clone)]
pub struct Place {
    /// Where a stdio server runs (the session's working directory).
    pub cwd: PathBuf,
    /// The folder `roots/list` is answered with (`--root`; the working directory when that
    /// is anywhere).
    pub root: PathBuf,
}

/// A connected server and the tools it offered when it was connected.
pub struct Connection {
    service: RunningService<RoleClient, Handler>,
    http: bool,
    /// The tools as last listed, and what that list left out (for a note).
    listed: Mutex<(Vec<Tool>, Vec<String>)>,
    /// The server said its tools changed (`notifications/tools/list_changed`).
    tools_changed: Arc<AtomicBool>,
    /// Where the running calls' progress reports go.
    progress: ProgressRoutes,
    /// Kills a stdio server's process group when the connection is dropped or found closed.
    group: Mutex<Option<GroupGuard>>,
    /// Killed when dropped.
    _child: Option<tokio::process::Child>,
    /// Reads a stdio server's stderr into `stderr` to its end.
    reader: Mutex<Option<JoinHandle<()>>>,
    stderr: Arc<Mutex<StderrTail>>,
    /// Why the transport gave up, when a cap did it.
    breach: Breach,
    /// The values of the server's credentials, masked in every message.
    redactor: Redactor,
}

/// Why a call through a connection failed.
pub enum CallError {
    /// The server is gone (exited, or the connection closed).
    Closed(String),
    /// No answer within the server's timeout, or within the cap on a call that kept
    /// reporting progress when `total` (it was told the call is cancelled).
    Timeout { total: bool },
    /// The server answered with a protocol error.
    Protocol(String),
    /// The request to an HTTP server failed (the connection, its event stream, a cap); the
    /// next one may not.
    Failed(String),
}

impl Connection {
    /// Starts or reaches the server, does the MCP handshake and lists its tools, all within
    /// the server's start-up timeout. The error says what failed, with the server's last
    /// stderr lines.
    pub async fn open(
        def: &ServerDef,
        place: &Place,
        env_policy: &EnvPolicy,
    ) -> Result<Connection, Failed> {
        let redactor = match &def.transport {
            Transport::Http { credentials, .. } => {
                Redactor::from_env(credentials.env_names()).with(oauth::secrets(&def.name))
            }
            Transport::Stdio { .. } => Redactor::default(),
        };
        let mut connection = Self::start(def, place, env_policy, redactor.clone())
            .await
            .map_err(|(why, stderr)| Failed::new(why, stderr, redactor.clone()))?;
        // A login's tokens as they are now: starting may have refreshed them.
        if matches!(def.transport, Transport::Http { .. }) {
            connection.redactor = redactor.with(oauth::secrets(&def.name));
        }
        Ok(connection)
    }

    async fn start(
        def: &ServerDef,
        place: &Place,
        env_policy: &EnvPolicy,
        redactor: Redactor,
    ) -> Result<Connection, (StartError, String)> {
        let stderr = Arc::new(Mutex::new(StderrTail::default()));
        let breach = Breach::default();
        let mut group = None;
        let mut child = None;
        let mut reader = None;
        let mut stray = None;
        let cwd = place.cwd.as_path();
        let handler = Handler::new(&def.name, &place.root);
        let tools_changed = handler.tools_changed.clone();
        let progress = handler.progress.clone();
        let mut challenged = None;
        let started = tokio::time::timeout(def.startup_timeout, async {
            let transport = match &def.transport {
                Transport::Stdio { command, args, env } => {
                    let program = match which::which_in(command, std::env::var_os("PATH"), cwd) {
                        Ok(program) => program,
                        // A path that is there but cannot be run: its start says why
                        // (permission denied), where "not on PATH" would send the user looking.
                        Err(_) if command.contains('/') && cwd.join(command).exists() => {
                            cwd.join(command)
                        }
                        Err(_) => {
                            return Err(StartError::NotOnPath {
                                command: command.clone(),
                            })
                        }
                    };
                    let mut cmd = tokio::process::Command::new(&program);
                    cmd.args(args).current_dir(cwd).kill_on_drop(true);
                    // Its own session and group: Ctrl-C at the terminal does not reach it,
                    // it has no terminal to type into, and killing the group takes whatever
                    // it started (npx starts node) with it.
                    crate::process::isolate(&mut cmd);
                    // No inherited secrets; what its own `env` names, it gets.
                    env_policy.apply(&mut cmd);
                    cmd.envs(env);
                    let (transport, started, err, watched) = stdio::start(cmd, breach.clone())
                        .map_err(|source| StartError::Spawn {
                            command: command.clone(),
                            source: crate::process::explained(&program, source),
                        })?;
                    stray = Some(watched);
                    group = Some(GroupGuard::new(started.id()));
                    child = Some(started);
                    reader = err.map(|err| tokio::spawn(stdio::keep_tail(err, stderr.clone())));
                    AnyTransport::new(transport)
                }
                Transport::Http { url, credentials } => {
                    let parsed = BadUrl::parse(url)?;
                    let public = http::is_public(&parsed).await;
                    let headers = http::headers(credentials)?;
                    let client = HttpClient::new(headers, public, breach.clone())
                        .map_err(StartError::Client)?;
                    challenged = Some(client.challenged.clone());
                    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .max_sse_event_size(caps::EVENT)
                        .max_json_response_size(caps::BODY)
                        .max_error_response_size(caps::ERROR_BODY);
                    config.allow_stateless = true;
                    // A login's tokens, unless the configuration gives a token of its own.
                    let login = match credentials.bearer_token_env_var {
                        None => oauth::stored(&def.name, url).await?,
                        Some(_) => None,
                    };
                    match login {
                        Some(manager) => {
                            AnyTransport::new(StreamableHttpClientTransport::with_client(
                                AuthClient::new(client, manager),
                                config,
                            ))
                        }
                        None => AnyTransport::new(StreamableHttpClientTransport::with_client(
                            client, config,
                        )),
                    }
                }
            };
            let service = handler.serve(transport).await.map_err(|e| {
                let login = challenged
                    .as_ref()
                    .is_some_and(|c| c.load(Ordering::Relaxed));
                if login {
                    let server = def.name.clone();
                    return StartError::LoginNeeded { server };
                }
                let mut why = lock(&breach).clone().unwrap_or_else(|| init_error(e));
                if let Some(line) = stray.as_ref().and_then(stdio::Stray::shown) {
                    why.push_str(&failure::stray_note(&line));
                }
                let url = match &def.transport {
                    Transport::Http { url, .. } => Some(url.clone()),
                    Transport::Stdio { .. } => None,
                };
                StartError::Handshake { url, why }
            })?;
            let offers_tools = service
                .peer_info()
                .is_none_or(|info| info.capabilities.tools.is_some());
            let (tools, notes) = if offers_tools {
                list_tools(&service).await.map_err(|e| {
                    let why = lock(&breach).clone().map_or(e, ListError::Failed);
                    StartError::List(why)
                })?
            } else {
                Default::default()
            };
            Ok::<_, StartError>((service, tools, notes))
        })
        .await;
        let failure = match started {
            Ok(Ok((service, tools, notes))) => {
                return Ok(Connection {
                    service,
                    http: matches!(def.transport, Transport::Http { .. }),
                    listed: Mutex::new((tools, notes)),
                    tools_changed,
                    progress,
                    group: Mutex::new(group),
                    _child: child,
                    reader: Mutex::new(reader),
                    stderr,
                    breach,
                    redactor,
                })
            }
            Ok(Err(e)) => e,
            Err(_) => StartError::Timeout {
                secs: def.startup_timeout.as_secs(),
                stray: stray.and_then(|s| s.shown()),
            },
        };
        // Kill what is left, so the stderr pipe reaches its end and its last lines are known.
        drop(group);
        drop(child);
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(STDERR_GRACE, reader).await;
        }
        let tail = lock(&stderr).render();
        Err((failure, tail))
    }

    /// The tools as last listed.
    /// Masks this server's credentials (its variables' values, its login's tokens) in text.
    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }

    pub fn tools(&self) -> Vec<Tool> {
        lock(&self.listed).0.clone()
    }

    /// What the last tool list left out.
    pub fn notes(&self) -> Vec<String> {
        lock(&self.listed).1.clone()
    }

    /// Reads the tool list again if the server said it changed since it was last read:
    /// whether it was (a list that fails keeps the one before, and says why).
    pub async fn refresh_tools(&self) -> Result<bool, RefreshFailed> {
        if !self.tools_changed.swap(false, Ordering::SeqCst) {
            return Ok(false);
        }
        let listed = list_tools(&self.service).await.map_err(|e| {
            let why = lock(&self.breach).clone().map_or(e, ListError::Failed);
            RefreshFailed::new(why, self.redactor.clone())
        })?;
        *lock(&self.listed) = listed;
        Ok(true)
    }

    /// Calls one tool of this server, within `timeout` from its start or from the server's
    /// latest progress report for it, and within [`PROGRESS_CAP_FACTOR`] times `timeout` in
    /// all; a call that runs out of either is cancelled on the server (rmcp sends
    /// `notifications/cancelled`). The server's progress reports for the call go to
    /// `progress`.
    pub async fn call(
        &self,
        tool: &str,
        args: Map<String, Value>,
        timeout: Duration,
        progress: ProgressSink,
    ) -> Result<CallToolResult, CallError> {
        let hide = |why: String| self.redactor.redact(&why);
        self.ask(tool, args, timeout, progress)
            .await
            .map_err(|e| match e {
                CallError::Closed(why) => CallError::Closed(hide(why)),
                CallError::Protocol(why) => CallError::Protocol(hide(why)),
                CallError::Failed(why) => CallError::Failed(hide(why)),
                CallError::Timeout { total } => CallError::Timeout { total },
            })
    }

    async fn ask(
        &self,
        tool: &str,
        args: Map<String, Value>,
        timeout: Duration,
        progress: ProgressSink,
    ) -> Result<CallToolResult, CallError> {
        if self.is_closed() {
            return Err(CallError::Closed(self.closed_note(String::new()).await));
        }
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(args);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let cap = timeout * PROGRESS_CAP_FACTOR;
        let mut options = PeerRequestOptions::with_timeout(timeout);
        options.reset_timeout_on_progress = true;
        options.max_total_timeout = Some(cap);
        let peer = self.service.peer();
        let heard = Arc::new(tokio::sync::Notify::new());
        let asked = async {
            match peer.send_cancellable_request(request, options).await {
                Ok(handle) => {
                    // rmcp put a progress token in the request's `_meta`.
                    let token = &handle.progress_token;
                    let _route = Route::new(&self.progress, token, progress, heard.clone());
                    handle.await_response().await
                }
                Err(e) => Err(e),
            }
        };
        let answer = guarded(asked, &heard, timeout, cap).await;
        match answer {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            // A result rmcp could not type (a block of a kind it does not know).
            Ok(ServerResult::CustomResult(raw)) => lenient(raw.0).ok_or_else(not_a_result),
            Ok(_) => Err(not_a_result()),
            Err(ServiceError::Timeout { timeout: ran_out }) => Err(CallError::Timeout {
                total: ran_out == cap && cap != timeout,
            }),
            Err(ServiceError::McpError(e)) => Err(CallError::Protocol(e.message.to_string())),
            // An HTTP request that failed says nothing of the next one: the server is not
            // taken for gone.
            Err(e) if self.http && !self.service.is_closed() => {
                let why = lock(&self.breach).take();
                Err(CallError::Failed(why.unwrap_or_else(|| cause(&e))))
            }
            Err(e) => {
                let why = match e {
                    ServiceError::TransportClosed | ServiceError::TransportSend(_) => String::new(),
                    other => cause(&other),
                };
                Err(CallError::Closed(self.closed_note(why).await))
            }
        }
    }

    /// Whether the server has gone away (a stdio server's output ended, or the connection
    /// closed).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    /// "the connection closed" (or the cap that closed it), with the server's last stderr
    /// lines so far.
    pub fn exit_note(&self) -> String {
        let why = lock(&self.breach)
            .clone()
            .unwrap_or_else(|| "the connection closed".into());
        with_stderr(why, &lock(&self.stderr).render())
    }

    /// Why the connection is gone, with all of the server's last stderr lines: its process
    /// group is killed, so the pipe reaches its end, and its reader is given a moment.
    async fn closed_note(&self, cause: String) -> String {
        let cause = match lock(&self.breach).clone() {
            Some(breach) => breach,
            None if cause.is_empty() => "the connection closed".to_string(),
            None => cause,
        };
        drop(lock(&self.group).take());
        let reader = lock(&self.reader).take();
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(STDERR_GRACE, reader).await;
        }
        with_stderr(cause, &lock(&self.stderr).render())
    }
}

/// Every page of `tools/list`, within the caps on their count and size. A name given twice
/// keeps its first tool, and a name MCP does not allow is passed over (it would reach the
/// prompt, the display and the allow rules as sent); the notes say which were left out.
async fn list_tools(
    service: &RunningService<RoleClient, Handler>,
) -> Result<(Vec<Tool>, Vec<String>), ListError> {
    let mut tools: Vec<Tool> = Vec::new();
    let mut names = HashSet::new();
    let mut notes = Vec::new();
    let mut bytes = 0;
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    loop {
        let params = cursor.take().map(|c| {
            let mut params = PaginatedRequestParams::default();
            params.cursor = Some(c);
            params
        });
        let page = service
            .list_tools(params)
            .await
            .map_err(|e| ListError::Failed(cause(&e)))?;
        for tool in page.tools {
            bytes += serde_json::to_vec(&tool).map_or(0, |t| t.len());
            if bytes > caps::TOOL_LIST {
                return Err(ListError::TooBig {
                    cap: caps::TOOL_LIST,
                });
            }
            if !super::words::allowed_name(&tool.name) {
                notes.push(format!(
                    "it offers a tool named {}, not a name MCP allows (1 to 128 of A-Z, a-z, \
                     0-9, `_`, `-` and `.`); it was left out",
                    super::words::shown_name(&tool.name)
                ));
                continue;
            }
            if !names.insert(tool.name.to_string()) {
                notes.push(format!(
                    "it offers two tools named `{}`; the second was left out",
                    tool.name
                ));
                continue;
            }
            if tools.len() == caps::TOOLS {
                return Err(ListError::TooMany { cap: caps::TOOLS });
            }
            tools.push(tool);
        }
        match page.next_cursor {
            // A server that hands back a cursor it gave before would be asked forever.
            Some(next) if seen.insert(next.clone()) => cursor = Some(next),
            _ => return Ok((tools, notes)),
        }
    }
}

/// `asked` within `timeout` and a grace from its start or the latest progress report (`heard`),
/// and within `cap` and a grace in all. rmcp cancels the call when its own timer or the cap
/// runs out; this is for a server too stuck to read even that (rmcp's cancellation waits on
/// the write), which then does not hold the call up any longer.
async fn guarded<T>(
    asked: impl std::future::Future<Output = Result<T, ServiceError>>,
    heard: &tokio::sync::Notify,
    timeout: Duration,
    cap: Duration,
) -> Result<T, ServiceError> {
    let end = tokio::time::Instant::now() + cap + CANCEL_GRACE;
    let mut asked = std::pin::pin!(asked);
    loop {
        let idle_end = (tokio::time::Instant::now() + timeout + CANCEL_GRACE).min(end);
        tokio::select! {
            answer = &mut asked => return answer,
            () = heard.notified() => {}
            () = tokio::time::sleep_until(idle_end) => {
                let ran_out = if idle_end == end { cap } else { timeout };
                return Err(ServiceError::Timeout { timeout: ran_out });
            }
        }
    }
}

/// A call's progress route, taken away when the call ends or is abandoned.
struct Route<'a> {
    routes: &'a ProgressRoutes,
    token: rmcp::model::ProgressToken,
}

impl<'a> Route<'a> {
    fn new(
        routes: &'a ProgressRoutes,
        token: &rmcp::model::ProgressToken,
        sink: ProgressSink,
        heard: Arc<tokio::sync::Notify>,
    ) -> Self {
        lock(routes).insert(token.clone(), (sink, heard));
        Route {
            routes,
            token: token.clone(),
        }
    }
}

impl Drop for Route<'_> {
    fn drop(&mut self) {
        lock(self.routes).remove(&self.token);
    }
}

fn not_a_result() -> CallError {
    CallError::Protocol("its answer to tools/call is not a tool result".into())
}

/// An error as its innermost cause (`Connection refused`), not the SDK's wrapping, which
/// names Rust types.
fn cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// The handshake's failure in words.
fn init_error(error: ClientInitializeError) -> String {
    match &error {
        ClientInitializeError::TransportError { error, .. } => cause(error.error.as_ref()),
        ClientInitializeError::ConnectionClosed(_) => "the connection closed".into(),
        ClientInitializeError::JsonRpcError(e) => e.message.to_string(),
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
