//! The ACP agent's state: what the client can do (from `initialize`) and the open sessions.
//! It takes the messages [`super::connection`] hands over, one at a time on this thread, and
//! answers each at once or hands it to a session's worker; opening a session (MCP servers
//! start) runs as a task of its own, so a cancel is never held up behind it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, ClientCapabilities, CloseSessionResponse,
    Implementation, InitializeResponse, LoadSessionResponse, McpCapabilities, McpServer,
    NewSessionResponse, PromptCapabilities, SessionCapabilities, SessionCloseCapabilities,
    SessionConfigOption, SessionModeState,
};
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, CloseSessionRequest, InitializeRequest,
    LoadSessionRequest, NewSessionRequest, PromptRequest, SetSessionConfigOptionRequest,
    SetSessionModeRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error as RpcError, ErrorCode, JsonRpcRequest};
use tokio::sync::{mpsc, oneshot};

use agent_loop::chat::{Chat, ChatOptions, RunSettings, SessionChoice};
use agent_loop::editor::{Credentials, ServerDef, Transport};
use agent_loop::settings::ApprovalMode;
use agent_loop::Error;

use super::room::{Open, Room};
use super::session::{config_options, invalid, modes, Handle, Job};
use super::updates::Notifier;

/// A message from the client, with what answers it.
// Each passes once through a channel; boxing the larger requests buys nothing.
#[allow(clippy::large_enum_variant)]
pub enum Incoming {
    Initialize(
        InitializeRequest,
        Responder<<InitializeRequest as JsonRpcRequest>::Response>,
    ),
    Authenticate(Responder<<AuthenticateRequest as JsonRpcRequest>::Response>),
    NewSession(
        NewSessionRequest,
        Responder<<NewSessionRequest as JsonRpcRequest>::Response>,
    ),
    LoadSession(
        LoadSessionRequest,
        Responder<<LoadSessionRequest as JsonRpcRequest>::Response>,
    ),
    Prompt(
        PromptRequest,
        Responder<<PromptRequest as JsonRpcRequest>::Response>,
    ),
    SetMode(
        SetSessionModeRequest,
        Responder<<SetSessionModeRequest as JsonRpcRequest>::Response>,
    ),
    SetConfig(
        SetSessionConfigOptionRequest,
        Responder<<SetSessionConfigOptionRequest as JsonRpcRequest>::Response>,
    ),
    Close(
        CloseSessionRequest,
        Responder<<CloseSessionRequest as JsonRpcRequest>::Response>,
    ),
    Cancel(CancelNotification),
}

/// What every session is opened from: the settings and the run's flags.
pub struct Shared {
    pub settings: RunSettings,
    pub options: ChatOptions,
    pub debug: bool,
    /// Whether the backend takes images, as far as is known at the start: what
    /// `initialize` advertises (`promptCapabilities.image`).
    pub images: bool,
}

pub struct Server {
    shared: Rc<Shared>,
    cx: ConnectionTo<Client>,
    client: Rc<RefCell<ClientCapabilities>>,
    sessions: Rc<RefCell<Room>>,
    /// Sessions not saved (`--no-save`) are told apart by a number.
    unsaved: u32,
    /// The tasks that open sessions (`session/new`, `session/load`, a prompt to a session
    /// closed to make room) or close one (`session/close`).
    opening: Vec<tokio::task::JoinHandle<()>>,
}

impl Server {
    pub fn new(shared: Shared, cx: ConnectionTo<Client>) -> Server {
        Server {
            shared: Rc::new(shared),
            cx,
            client: Rc::default(),
            sessions: Rc::default(),
            unsaved: 0,
            opening: Vec::new(),
        }
    }

    /// Handles messages until the input ends (`closed`), then those still queued, then ends
    /// every session (a running turn is cancelled).
    pub async fn run(
        mut self,
        mut incoming: mpsc::UnboundedReceiver<Incoming>,
        mut closed: oneshot::Receiver<()>,
    ) {
        loop {
            tokio::select! {
                biased;
                message = incoming.recv() => match message {
                    Some(message) => self.handle(message),
                    None => break,
                },
                _ = &mut closed => break,
            }
        }
        while let Ok(message) = incoming.try_recv() {
            self.handle(message);
        }
        // Sessions still opening finish first, so they are ended too.
        for opening in std::mem::take(&mut self.opening) {
            let _ = opening.await;
        }
        let sessions: Vec<Open> = (self.sessions.borrow_mut().open.drain())
            .map(|(_, open)| open)
            .collect();
        for session in sessions {
            session.handle.close().await;
        }
    }

    fn handle(&mut self, message: Incoming) {
        match message {
            Incoming::Initialize(request, responder) => {
                *self.client.borrow_mut() = request.client_capabilities.clone();
                let _ = responder.respond(self.initialize());
            }
            Incoming::Authenticate(responder) => {
                let _ = responder.respond_with_error(RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    "agent-loop reads API keys from its environment: set the variable the auth \
                     method names in the agent's env (the editor's agent settings) and restart it",
                ));
            }
            Incoming::NewSession(request, responder) => {
                self.unsaved += 1;
                let id = format!("unsaved-{}", self.unsaved);
                let opening = Opening {
                    choice: SessionChoice::New,
                    cwd: request.cwd,
                    mcp: request.mcp_servers,
                    unsaved_id: id,
                    mode: None,
                };
                let open = self.open(opening, false);
                self.spawn(async move {
                    let _ = responder.respond_with_result(open.await.map(|opened| {
                        NewSessionResponse::new(opened.id)
                            .modes(opened.modes)
                            .config_options(opened.options)
                    }));
                });
            }
            Incoming::LoadSession(request, responder) => {
                let name = request.session_id.0.to_string();
                let opening = Opening {
                    choice: SessionChoice::Named(name.clone()),
                    cwd: request.cwd,
                    mcp: request.mcp_servers,
                    unsaved_id: name,
                    mode: None,
                };
                let open = self.open(opening, true);
                self.spawn(async move {
                    let _ = responder.respond_with_result(open.await.map(|opened| {
                        LoadSessionResponse::new()
                            .modes(opened.modes)
                            .config_options(opened.options)
                    }));
                });
            }
            Incoming::Prompt(request, responder) => {
                let id = request.session_id.0.to_string();
                self.sessions.borrow_mut().touch(&id);
                if let Some(open) = self.sessions.borrow().open.get(&id) {
                    open.handle.prompt(request, responder);
                    return;
                }
                self.reopen_for(id, request, responder);
            }
            Incoming::SetMode(request, responder) => {
                let id = &*request.session_id.0;
                self.sessions.borrow_mut().touch(id);
                match self.sessions.borrow().open.get(id) {
                    Some(s) => s
                        .handle
                        .queue(Job::SetMode(request.mode_id.0.to_string(), responder)),
                    None => {
                        let _ = responder.respond_with_error(unknown(id));
                    }
                }
            }
            Incoming::SetConfig(request, responder) => {
                let id = request.session_id.0.to_string();
                self.sessions.borrow_mut().touch(&id);
                match self.sessions.borrow().open.get(&id) {
                    Some(s) => s.handle.queue(Job::SetConfig(request, responder)),
                    None => {
                        let _ = responder.respond_with_error(unknown(&id));
                    }
                }
            }
            Incoming::Close(request, responder) => {
                let id = &*request.session_id.0;
                let mut room = self.sessions.borrow_mut();
                let open = room.open.remove(id);
                let closed = room.take_closed(id);
                drop(room);
                match (open, closed) {
                    (Some(open), _) => self.spawn(async move {
                        open.handle.close().await;
                        let _ = responder.respond(CloseSessionResponse::new());
                    }),
                    // Closed already to make room: now it is not to be reopened either.
                    (None, Some(_)) => {
                        let _ = responder.respond(CloseSessionResponse::new());
                    }
                    (None, None) => {
                        let _ = responder.respond_with_error(unknown(id));
                    }
                }
            }
            Incoming::Cancel(cancel) => {
                if let Some(session) = self.sessions.borrow().open.get(&*cancel.session_id.0) {
                    session.handle.cancel();
                }
            }
        }
    }

    /// Runs a task that opens or closes sessions, kept so that the end waits for it.
    fn spawn(&mut self, task: impl std::future::Future<Output = ()> + 'static) {
        self.opening.retain(|task| !task.is_finished());
        self.opening.push(tokio::task::spawn_local(task));
    }

    /// A prompt to a session that is not open: one closed to make room is opened again (once
    /// its closing is over) and then given the prompt; any other is unknown.
    fn reopen_for(
        &mut self,
        id: String,
        request: PromptRequest,
        responder: Responder<<PromptRequest as JsonRpcRequest>::Response>,
    ) {
        let Some(reopen) = self.sessions.borrow_mut().take_closed(&id) else {
            let _ = responder.respond_with_error(unknown(&id));
            return;
        };
        let sessions = self.sessions.clone();
        let this = self.opener();
        self.spawn(async move {
            let mode = reopen.closing.await.ok().flatten();
            let opening = Opening {
                choice: SessionChoice::Named(id.clone()),
                cwd: reopen.cwd,
                mcp: reopen.mcp,
                unsaved_id: id.clone(),
                mode,
            };
            match this.open(opening, false).await {
                Ok(_) => match sessions.borrow().open.get(&id) {
                    Some(open) => open.handle.prompt(request, responder),
                    None => {
                        let _ = responder.respond_with_error(unknown(&id));
                    }
                },
                Err(e) => {
                    let _ = responder.respond_with_error(e);
                }
            }
        });
    }

    fn initialize(&self) -> InitializeResponse {
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .session_capabilities(SessionCapabilities::new().close(SessionCloseCapabilities::new()))
            .prompt_capabilities(
                PromptCapabilities::new()
                    .embedded_context(true)
                    .image(self.shared.images),
            )
            .mcp_capabilities(McpCapabilities::new().http(true));
        // A backend whose key is not set: the method says which variable to set.
        let auth = missing_key(&self.shared.settings, &self.shared.options).map(|var| {
                AuthMethod::Agent(AuthMethodAgent::new(format!("env:{var}"), format!("Set {var}")).description(
                    format!("The backend reads its API key from {var}: set it in the agent's environment (the editor's agent settings, `env`) and restart the agent"),
                ))
            });
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .auth_methods(auth.into_iter().collect())
            .agent_info(
                Implementation::new("agent-loop", env!("CARGO_PKG_VERSION"))
                    .title("agent-loop".to_string()),
            )
    }

    /// What opening a session needs, for a task that opens one now or later.
    fn opener(&self) -> Opener {
        Opener {
            shared: self.shared.clone(),
            sessions: self.sessions.clone(),
            client: self.client.borrow().clone(),
            cx: self.cx.clone(),
        }
    }

    fn open(
        &self,
        opening: Opening,
        load: bool,
    ) -> impl std::future::Future<Output = Result<Opened, RpcError>> + 'static {
        self.opener().open(opening, load)
    }
}

struct Opener {
    shared: Rc<Shared>,
    sessions: Rc<RefCell<Room>>,
    client: ClientCapabilities,
    cx: ConnectionTo<Client>,
}

impl Opener {
    /// Opens a chat for `session/new` or `session/load` (or a prompt to a session closed to
    /// make room), starts its worker and registers it; answers with its id and (for the
    /// response) its modes and options.
    async fn open(self, opening: Opening, load: bool) -> Result<Opened, RpcError> {
        let Opener {
            shared,
            sessions,
            client,
            cx,
        } = self;
        let Opening {
            choice,
            cwd,
            mcp,
            unsaved_id,
            mode,
        } = opening;
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(invalid(Error::config(format!(
                "cwd `{}` is not an absolute path to a folder",
                cwd.display()
            ))));
        }
        if let SessionChoice::Named(name) = &choice {
            if sessions.borrow().open.contains_key(name) {
                return Err(invalid(Error::config(format!(
                    "session {name} is open already in this agent"
                ))));
            }
            if !shared.options.save || !Chat::is_saved(name) {
                return Err(invalid(Error::config(format!(
                    "no saved session named `{name}`"
                ))));
            }
        }
        let options = ChatOptions {
            cwd: Some(cwd.clone()),
            session: choice,
            ..shared.options.clone()
        };
        let mut chat =
            Chat::open(&shared.settings, &options, &mut |n| eprintln!("{n}")).map_err(|e| {
                match missing_key(&shared.settings, &shared.options) {
                    Some(_) => RpcError::new(ErrorCode::AUTH_REQUIRED, e.message),
                    None => invalid(e),
                }
            })?;
        if let Some(mode) = mode {
            chat.set_approval(mode);
        }
        for server in &mcp {
            chat.add_mcp_server(mcp_def(server.clone())?);
        }
        for notice in chat.start_mcp().await {
            eprintln!("{notice}");
        }
        let id = match shared.options.save {
            true => chat.session().name.clone(),
            false => unsaved_id,
        };
        let notifier = Notifier {
            cx: cx.clone(),
            session: id.clone(),
            rejected: Arc::default(),
            debug: shared.debug,
            running: Arc::default(),
        };
        chat.set_files(super::files::through_client(&client, &notifier));
        if load {
            let tools = super::updates::ToolFacts::of(&chat);
            super::content::replay(chat.messages(), &notifier, &tools);
        }
        notifier.send(super::commands::advertised());
        let opened = Opened {
            id: id.clone(),
            modes: modes(&chat),
            options: config_options(&chat),
        };
        let open = Open {
            handle: Handle::start(chat, notifier, cwd.clone()),
            cwd,
            mcp,
        };
        let closed = sessions.borrow_mut().insert(id, open, shared.options.save);
        if let Some(closed) = closed {
            eprintln!(
                "agent-loop acp: session {closed} closed to make room ({} open at most); \
                 it is opened again when prompted",
                super::room::OPEN
            );
        }
        Ok(opened)
    }
}

/// What `session/new` and `session/load` answer with.
struct Opened {
    id: String,
    modes: SessionModeState,
    options: Vec<SessionConfigOption>,
}

struct Opening {
    choice: SessionChoice,
    cwd: PathBuf,
    mcp: Vec<McpServer>,
    unsaved_id: String,
    /// The approval mode of a session reopened (else the run's).
    mode: Option<ApprovalMode>,
}

/// The variable that should hold the key of the backend sessions start on, when it is empty.
pub fn missing_key(settings: &RunSettings, options: &ChatOptions) -> Option<String> {
    let config = Chat::load_config(options.config.as_deref()).ok()?;
    let setting = settings.backend.as_ref().map(|s| s.value.clone());
    let name = Chat::backend_to_run(&config, setting)?;
    Chat::missing_key(&config, &name)
}

fn unknown(id: &str) -> RpcError {
    RpcError::new(
        ErrorCode::INVALID_PARAMS,
        format!("no session `{id}` in this agent: open it with session/new or session/load first"),
    )
}

/// An MCP server the client gave, as agent-loop's definition of it.
fn mcp_def(server: McpServer) -> Result<ServerDef, RpcError> {
    let (name, transport) = match server {
        McpServer::Stdio(s) => (
            s.name,
            Transport::Stdio {
                command: s.command.to_string_lossy().into_owned(),
                args: s.args,
                env: s.env.into_iter().map(|v| (v.name, v.value)).collect(),
            },
        ),
        McpServer::Http(s) => (
            s.name,
            Transport::Http {
                url: s.url,
                credentials: Credentials {
                    http_headers: s
                        .headers
                        .into_iter()
                        .map(|h| (h.name, h.value))
                        .collect::<BTreeMap<_, _>>(),
                    ..Credentials::default()
                },
            },
        ),
        _ => {
            return Err(invalid(Error::config(
                "MCP servers over stdio and HTTP are supported, not this transport",
            )))
        }
    };
    // Its tools are called `mcp.NAME.TOOL`: a name is kept to the characters that allows.
    let name: String = name
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '-',
            },
        )
        .collect();
    Ok(ServerDef {
        defined_at: "session/new".into(),
        name,
        transport,
        enabled: true,
        timeout: Duration::from_secs(60),
        startup_timeout: Duration::from_secs(60),
        trust: false,
    })
}
