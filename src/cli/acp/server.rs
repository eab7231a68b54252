//! The ACP agent's state: what the client can do (from `initialize`) and the open sessions.
//! It takes the messages [`super::connection`] hands over, one at a time on this thread, and
//! answers each at once or hands it to a session's worker; opening a session (MCP servers
//! start) runs as a task of its own, so a cancel is never held up behind it.

use std::cell::RefCell;
use std::rc::Rc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, ClientCapabilities, CloseSessionResponse,
    Implementation, InitializeResponse, LoadSessionResponse, McpCapabilities, NewSessionResponse,
    PromptCapabilities, SessionCapabilities, SessionCloseCapabilities,
};
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, CloseSessionRequest, InitializeRequest,
    LoadSessionRequest, NewSessionRequest, PromptRequest, SetSessionConfigOptionRequest,
    SetSessionModeRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error as RpcError, ErrorCode, JsonRpcRequest};
use tokio::sync::{mpsc, oneshot};

use agent_loop::chat::SessionChoice;

use super::opener::{Load, Opened, Opener, Opening};
use super::room::{self, deliver, give, refuse, Deferred, Ending, Open, Place, Reopen, Room};
use super::session::{unknown, Job};
use super::shared::{missing_key, Shared};

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
        let sessions: Vec<Open> = self.sessions.borrow_mut().drain_open();
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
                    reopening: false,
                    kept: None,
                };
                let open = self.open(opening, false);
                self.spawn(async move {
                    let opened = open.await;
                    let notifier = opened.as_ref().ok().map(|o| o.notifier.clone());
                    let _ = responder.respond_with_result(opened.map(|opened| {
                        NewSessionResponse::new(opened.id)
                            .modes(opened.modes)
                            .config_options(opened.options)
                    }));
                    // Only after the answer: an editor drops updates of a session it has not
                    // been told of yet (Zed showed no commands).
                    if let Some(notifier) = notifier {
                        notifier.send(super::commands::advertised());
                    }
                });
            }
            Incoming::LoadSession(request, responder) => {
                let name = request.session_id.0.to_string();
                // Closed to make room: opened again as a prompt would open it (on the session
                // it was on, with what it ran with), then its conversation replayed.
                // (A folder that is no folder fails this load alone, and reopens nothing.)
                let good_cwd = request.cwd.is_absolute() && request.cwd.is_dir();
                let reopen = match good_cwd {
                    true => self.sessions.borrow_mut().start_reopen(&name),
                    false => None,
                };
                if let Some(reopen) = reopen {
                    let load = Load {
                        cwd: request.cwd,
                        mcp: request.mcp_servers,
                        responder,
                    };
                    return self.reopen(name, reopen, Some(load));
                }
                // Closed by the editor a moment ago: its lock is let go when its closing is over.
                let ending = self.sessions.borrow().ending(&name);
                let opening = Opening {
                    choice: SessionChoice::Named(name.clone()),
                    cwd: request.cwd,
                    mcp: request.mcp_servers,
                    unsaved_id: name,
                    reopening: false,
                    kept: None,
                };
                let open = self.open(opening, true);
                self.spawn(async move {
                    if let Some(ending) = ending {
                        ending.await;
                    }
                    let _ = responder.respond_with_result(open.await.map(|opened| {
                        LoadSessionResponse::new()
                            .modes(opened.modes)
                            .config_options(opened.options)
                    }));
                });
            }
            Incoming::Prompt(request, responder) => {
                let id = request.session_id.0.to_string();
                self.send_to(&id, Deferred::Prompt(request, responder));
            }
            Incoming::SetMode(request, responder) => {
                let id = request.session_id.0.to_string();
                let job = Job::SetMode(request.mode_id.0.to_string(), responder);
                self.send_to(&id, Deferred::Job(job));
            }
            Incoming::SetConfig(request, responder) => {
                let id = request.session_id.0.to_string();
                self.send_to(&id, Deferred::Job(Job::SetConfig(request, responder)));
            }
            Incoming::Cancel(cancel) => {
                let id = cancel.session_id.0.to_string();
                self.send_to(&id, Deferred::Cancel);
            }
            Incoming::Close(request, responder) => {
                let id = request.session_id.0.to_string();
                self.send_to(&id, Deferred::Close(responder, None));
            }
        }
    }

    /// Runs a task that opens or closes sessions, kept so that the end waits for it.
    fn spawn(&mut self, task: impl std::future::Future<Output = ()> + 'static) {
        self.opening.retain(|task| !task.is_finished());
        self.opening.push(tokio::task::spawn_local(task));
    }

    /// Gives `message` to session `id`: at once if it is open, once it is if it is being
    /// opened again. One closed to make room is opened again for it, but for a cancel (there
    /// is nothing to cancel) and a close (then it is forgotten, once its closing is over).
    fn send_to(&mut self, id: &str, message: Deferred) {
        let mut room = self.sessions.borrow_mut();
        room.touch(id);
        match (room.place(id), message) {
            (Place::Open, Deferred::Close(responder, _)) => {
                let open = room.remove_open(id);
                let ending = room.end(id, async move {
                    if let Some(open) = open {
                        open.handle.close().await;
                    }
                });
                drop(room);
                self.see_ended(id, ending, responder);
            }
            (Place::Open, message) => match room.handle(id) {
                Some(handle) => give(handle, message),
                None => refuse(message, &unknown(id)),
            },
            (Place::Reopening, Deferred::Close(responder, _)) => {
                // A load sent before this close is answered waits for it, as for an open one:
                // the closing kept in the room (only there) ends when `done` is dropped.
                let (done, over) = oneshot::channel::<()>();
                drop(room.end(id, async move {
                    let _ = over.await;
                }));
                if let Some(message) = room.defer(id, Deferred::Close(responder, Some(done))) {
                    refuse(message, &unknown(id));
                }
            }
            (Place::Reopening, message) => {
                if let Some(message) = room.defer(id, message) {
                    refuse(message, &unknown(id));
                }
            }
            (Place::Closed, Deferred::Cancel) => {}
            (Place::Closed, Deferred::Close(responder, _)) => {
                let reopen = room.take_closed(id);
                let ending = room.end(id, async move {
                    if let Some(reopen) = reopen {
                        reopen.closing.over().await;
                    }
                });
                drop(room);
                self.see_ended(id, ending, responder);
            }
            (Place::Closed, message) => {
                let reopen = room.start_reopen(id);
                let refused = room.defer(id, message);
                drop(room);
                match (reopen, refused) {
                    (_, Some(message)) => refuse(message, &unknown(id)),
                    (Some(reopen), None) => self.reopen(id.to_string(), reopen, None),
                    (None, None) => {}
                }
            }
            (Place::Unknown, message) => refuse(message, &unknown(id)),
        }
    }

    /// Answers a `session/close` of `id` once its closing is over ([`room::ended`]).
    fn see_ended(&mut self, id: &str, ending: Ending, responder: Responder<CloseSessionResponse>) {
        let (sessions, id) = (self.sessions.clone(), id.to_string());
        self.spawn(async move { room::ended(&sessions, &id, ending, responder).await });
    }

    /// Opens session `id` again, once its closing is over, and gives it what was sent to it
    /// meanwhile; if it cannot be opened, each of those is answered with why, and it stays
    /// closed, to be tried again at the next message. For a `session/load`, in the folder and
    /// with the MCP servers the load names, its conversation replayed, and the load answered.
    fn reopen(&mut self, id: String, reopen: Reopen, load: Option<Load>) {
        let sessions = self.sessions.clone();
        let opener = self.opener();
        self.spawn(async move {
            let kept = reopen.closing.over().await;
            let (cwd, mcp) = match &load {
                Some(load) => (load.cwd.clone(), load.mcp.clone()),
                None => (reopen.cwd.clone(), reopen.mcp.clone()),
            };
            let opening = Opening {
                // The session it was on (`/clear` starts another), under the editor's id.
                choice: SessionChoice::Named(
                    kept.as_ref().map_or(id.clone(), |k| k.session.clone()),
                ),
                cwd,
                mcp,
                unsaved_id: id.clone(),
                reopening: true,
                kept: kept.clone(),
            };
            match opener.open(opening, load.is_some()).await {
                Ok(opened) => {
                    if let Some(load) = load {
                        let response = LoadSessionResponse::new()
                            .modes(opened.modes)
                            .config_options(opened.options);
                        let _ = load.responder.respond(response);
                    }
                    for message in opened.deferred {
                        deliver(&sessions, &id, message).await;
                    }
                }
                Err(e) => {
                    if let Some(load) = load {
                        let _ = load.responder.respond_with_error(e.clone());
                    }
                    let deferred =
                        (sessions.borrow_mut()).fail_reopen(&id, reopen.cwd, reopen.mcp, kept);
                    for message in deferred {
                        match message {
                            // Nothing is open: closed, as asked, and not to be reopened.
                            // (Its `done` dropped here: a load waiting for it goes on.)
                            Deferred::Close(responder, _done) => {
                                let mut room = sessions.borrow_mut();
                                room.take_closed(&id);
                                room.end_over(&id);
                                let _ = responder.respond(CloseSessionResponse::new());
                            }
                            message => refuse(message, &e),
                        }
                    }
                }
            }
        });
    }

    fn initialize(&self) -> InitializeResponse {
        let capabilities = AgentCapabilities::new()
            // With --no-save there is nothing to load.
            .load_session(self.shared.options.save)
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
