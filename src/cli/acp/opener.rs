//! Opening a session for `session/new` or `session/load` (or a prompt to a session closed to
//! make room): the chat opened as the run's flags say, its worker started and registered in
//! the room, and what the editor is answered with. A task of its own, so a cancel is never
//! held up behind MCP servers starting.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ClientCapabilities, LoadSessionRequest, McpServer, SessionConfigOption, SessionModeState,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error as RpcError, ErrorCode, JsonRpcRequest};

use agent_loop::chat::{Chat, ChatOptions, SessionChoice};
use agent_loop::Error;

use super::editor_mcp::mcp_def;
use super::room::{self, Deferred, Open, Room};
use super::session::{config_options, internal, invalid, modes, restore, Handle, Kept};
use super::shared::{missing_key, Shared};
use super::updates::Notifier;

pub(super) struct Opener {
    pub(super) shared: Rc<Shared>,
    pub(super) sessions: Rc<RefCell<Room>>,
    pub(super) client: ClientCapabilities,
    pub(super) cx: ConnectionTo<Client>,
}

impl Opener {
    /// Opens a chat for `session/new` or `session/load` (or a prompt to a session closed to
    /// make room), starts its worker and registers it; answers with its id and (for the
    /// response) its modes and options.
    pub(super) async fn open(self, opening: Opening, load: bool) -> Result<Opened, RpcError> {
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
            reopening,
            kept,
        } = opening;
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(invalid(Error::config(format!(
                "cwd `{}` is not an absolute path to a folder",
                cwd.display()
            ))));
        }
        if let SessionChoice::Named(name) = &choice {
            if !reopening && sessions.borrow().is_open(name) {
                return Err(invalid(Error::config(format!(
                    "session {name} is open already in this agent"
                ))));
            }
            // (One opened again may have nothing saved: a thread not yet prompted.)
            if !reopening && (!shared.options.save || !Chat::is_saved(name)) {
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
        let open_chat = |options: &ChatOptions| {
            Chat::open(&shared.settings, options, &mut |n| eprintln!("{n}")).map_err(|e| {
                match missing_key(&shared.settings, &shared.options) {
                    Some(_) => RpcError::new(ErrorCode::AUTH_REQUIRED, e.message),
                    None => invalid(e),
                }
            })
        };
        let mut chat = open_chat(&options)?;
        // A load opens the session asked for or fails (the library refuses a session file it
        // cannot read): were another opened, the editor would hold a thread no prompt reaches.
        if let SessionChoice::Named(name) = &options.session {
            let opened = chat.session().name.clone();
            if !reopening && opened != *name {
                chat.shutdown().await;
                return Err(internal(Error::new(
                    agent_loop::ErrorKind::Io,
                    format!("session {name} could not be opened (session {opened} was)"),
                )));
            }
        }
        // A new session may be given the name a thread of this agent still answers to: one
        // closed to make room before any save, or a first session left by `/clear`, has no
        // file or lock to hold it. The id must stay that thread's: the new one takes another.
        if matches!(options.session, SessionChoice::New) && shared.options.save {
            let base = chat.session().name.clone();
            let mut n = 2;
            while sessions.borrow().knows(&chat.session().name) {
                let name = format!("{base}-{n}");
                n += 1;
                // A folder is another run's (a save cut short, a log): never taken over.
                let folder = Chat::saved_sessions_dir().map(|dir| dir.join(&name));
                if sessions.borrow().knows(&name) || folder.is_none_or(|f| f.exists()) {
                    continue;
                }
                let named = ChatOptions {
                    session: SessionChoice::Named(name),
                    ..options.clone()
                };
                match open_chat(&named) {
                    Ok(other) => chat = other,
                    // Held by a session of this agent's after `/clear`, or by another run.
                    Err(_) if n < 100 => {}
                    Err(e) => return Err(e),
                }
            }
        }
        if let Some(kept) = kept {
            restore(&mut chat, kept);
        }
        for server in &mcp {
            chat.add_mcp_server(mcp_def(server.clone())?);
        }
        for notice in chat.start_mcp().await {
            eprintln!("{notice}");
        }
        // A session opened again keeps the editor's id, whatever session it is on now.
        let id = match shared.options.save && !reopening {
            true => chat.session().name.clone(),
            false => unsaved_id,
        };
        let notifier = Notifier {
            cx: cx.clone(),
            session: id.clone(),
            rejected: Arc::default(),
            debug: shared.debug,
            running: Arc::default(),
            usage: Arc::default(),
        };
        chat.set_files(super::files::through_client(&client, &notifier));
        if load {
            let tools = super::updates::ToolFacts::of(&chat);
            super::content::replay(chat.messages(), &notifier, &tools, &cwd);
            // The editor named this session: it takes its updates before the answer.
            notifier.send(super::commands::advertised());
        }
        let mut opened = Opened {
            id: id.clone(),
            modes: modes(&chat),
            options: config_options(&chat),
            deferred: Vec::new(),
            notifier: notifier.clone(),
        };
        let open = Open {
            handle: Handle::start(chat, notifier, cwd.clone()),
            cwd,
            mcp,
        };
        let (deferred, closed) = sessions.borrow_mut().insert(id, open, shared.options.save);
        if let Some(closed) = closed {
            eprintln!(
                "agent-loop acp: session {closed} closed to make room ({} open at most); \
                 it is opened again when the editor sends it something",
                room::OPEN
            );
        }
        opened.deferred = deferred;
        Ok(opened)
    }
}

/// What `session/new` and `session/load` answer with.
pub(super) struct Opened {
    pub(super) id: String,
    pub(super) modes: SessionModeState,
    pub(super) options: Vec<SessionConfigOption>,
    /// What was sent to a session opened again while it opened.
    pub(super) deferred: Vec<Deferred>,
    /// Its updates, for the commands a new session advertises once it is answered.
    pub(super) notifier: Notifier,
}

/// A `session/load` of a session closed to make room: where, with what, and whom to answer.
pub(super) struct Load {
    pub(super) cwd: PathBuf,
    pub(super) mcp: Vec<McpServer>,
    pub(super) responder: Responder<<LoadSessionRequest as JsonRpcRequest>::Response>,
}

pub(super) struct Opening {
    pub(super) choice: SessionChoice,
    pub(super) cwd: PathBuf,
    pub(super) mcp: Vec<McpServer>,
    pub(super) unsaved_id: String,
    /// Opened again after it was closed to make room (it is in the room, being reopened).
    pub(super) reopening: bool,
    /// What it ran with then, restored over what the run's flags give.
    pub(super) kept: Option<Kept>,
}
