//! The sessions the agent holds open, and how many. Each open session holds its chat, the MCP
//! servers the editor gave it (processes), its session's lock and log, and a connection to its
//! backend; an editor opens one per thread and may never close one (`session/close` is recent in
//! ACP), so a day of work would pile them up until the descriptors or the memory run out. When
//! opening one makes more than [`OPEN`] open, the idle session unused longest is closed, among
//! those closing loses nothing of: its file holds it (a turn saved, the last save not failed), or
//! it holds nothing yet (a thread not yet prompted). What the file does not hold (the session it is
//! on after `/clear`, the approval mode, backend and model) the closing returns. It is opened
//! again, under the editor's id, when the editor next sends it something (a `session/load`
//! included); what comes meanwhile waits for it, in order. Busy sessions, and those whose save
//! failed, stay open (closing them would lose them); a closed session's id stays known, so a new
//! session never takes it; without saving (`--no-save`) nothing is closed, as there is nothing to
//! reopen. A session the editor closes (`session/close`) is forgotten, but a `session/load` of
//! it sent before its closing is over waits for it, as its lock is held until then.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::rc::Rc;

use futures_util::future::{FutureExt, LocalBoxFuture, Shared};

use agent_client_protocol::v1::schema::{
    CloseSessionResponse, McpServer, PromptRequest, PromptResponse,
};
use agent_client_protocol::v1::Responder;
use agent_client_protocol::Error as RpcError;
use tokio::task::JoinHandle;

use super::session::{unknown, Handle, Job, Kept};

/// How many sessions stay open at once (more while every other one is busy).
pub const OPEN: usize = 16;

/// How many closed sessions are remembered for reopening; past it, the oldest is forgotten
/// (the editor can still `session/load` it).
const REMEMBERED: usize = 4096;

/// An open session and what it was opened with.
pub struct Open {
    pub handle: Handle,
    pub cwd: PathBuf,
    pub mcp: Vec<McpServer>,
}

/// A session closed to make room: what opens it again.
pub struct Reopen {
    pub cwd: PathBuf,
    pub mcp: Vec<McpServer>,
    /// Its closing; a reopening (or a load) waits for it, so the session's lock is free.
    pub closing: Closing,
    since: u64,
}

/// The closing of a session to make room: running, or over with what the session ran with.
pub enum Closing {
    Running(JoinHandle<Option<Kept>>),
    Over(Option<Kept>),
}

impl Closing {
    /// What the session ran with, once its closing is over (`None` if its worker panicked).
    pub async fn over(self) -> Option<Kept> {
        match self {
            Closing::Running(task) => task.await.ok().flatten(),
            Closing::Over(kept) => kept,
        }
    }
}

/// What the client sent a session while it was being opened again, given to it once open.
pub enum Deferred {
    Prompt(PromptRequest, Responder<PromptResponse>),
    Job(Job),
    Cancel,
    /// With, when it waits for a reopening, what tells a load waiting on it that it is over
    /// (dropped when it is).
    Close(
        Responder<CloseSessionResponse>,
        Option<tokio::sync::oneshot::Sender<()>>,
    ),
}

/// Boxed: a slot is moved in and out of the map as it changes.
enum Slot {
    Open(Box<Open>),
    Closed(Box<Reopen>),
    Reopening(Vec<Deferred>),
}

/// Where a session is.
pub enum Place {
    Open,
    Closed,
    Reopening,
    Unknown,
}

/// The closing of a session the editor closed (`session/close`), which a load of it awaits.
pub type Ending = Shared<LocalBoxFuture<'static, ()>>;

#[derive(Default)]
pub struct Room {
    slots: HashMap<String, Slot>,
    /// Sessions being closed at the editor's request: no longer in `slots` (a prompt to one is
    /// refused), but a `session/load` of one waits for its lock to be let go.
    ending: HashMap<String, Ending>,
    /// Counts the client's messages: a session's `used` is the count at its last one.
    clock: u64,
}

impl Room {
    pub fn place(&self, id: &str) -> Place {
        match self.slots.get(id) {
            Some(Slot::Open(_)) => Place::Open,
            Some(Slot::Closed(_)) => Place::Closed,
            Some(Slot::Reopening(_)) => Place::Reopening,
            None => Place::Unknown,
        }
    }

    /// The handle of session `id` if it is open.
    pub fn handle(&self, id: &str) -> Option<&Handle> {
        match self.slots.get(id) {
            Some(Slot::Open(open)) => Some(&open.handle),
            _ => None,
        }
    }

    /// Whether `id` is a session of this agent's, open, closed or being opened again.
    pub fn knows(&self, id: &str) -> bool {
        self.slots.contains_key(id)
    }

    /// Whether `id` is open or being opened again.
    pub fn is_open(&self, id: &str) -> bool {
        matches!(self.place(id), Place::Open | Place::Reopening)
    }

    /// The client sent session `id` something.
    pub fn touch(&mut self, id: &str) {
        self.clock += 1;
        if let Some(Slot::Open(open)) = self.slots.get(id) {
            open.handle.used.set(self.clock);
        }
    }

    /// Registers a session just opened; returns what was sent to it while it was being opened
    /// again, and the id of the session closed to make room, if one was (only with `evict`:
    /// sessions are saved).
    pub fn insert(
        &mut self,
        id: String,
        open: Open,
        evict: bool,
    ) -> (Vec<Deferred>, Option<String>) {
        self.clock += 1;
        open.handle.used.set(self.clock);
        let deferred = match self.slots.insert(id.clone(), Slot::Open(Box::new(open))) {
            Some(Slot::Reopening(deferred)) => deferred,
            _ => Vec::new(),
        };
        let open_count = self
            .slots
            .values()
            .filter(|s| matches!(s, Slot::Open(_)))
            .count();
        if !evict || open_count <= OPEN {
            return (deferred, None);
        }
        let victim = self
            .slots
            .iter()
            .filter_map(|(name, slot)| match slot {
                Slot::Open(open) if *name != id && open.handle.idle() && open.handle.kept() => {
                    Some((name, open.handle.used.get()))
                }
                _ => None,
            })
            .min_by_key(|(_, used)| *used)
            .map(|(name, _)| name.clone());
        let Some(victim) = victim else {
            return (deferred, None);
        };
        let Some(Slot::Open(open)) = self.slots.remove(&victim) else {
            return (deferred, None);
        };
        let Open { handle, cwd, mcp } = *open;
        let closing = Closing::Running(tokio::task::spawn_local(handle.close()));
        let since = self.clock;
        let reopen = Reopen {
            cwd,
            mcp,
            closing,
            since,
        };
        self.slots
            .insert(victim.clone(), Slot::Closed(Box::new(reopen)));
        self.forget_oldest();
        (deferred, Some(victim))
    }

    fn forget_oldest(&mut self) {
        let closed = || {
            self.slots.iter().filter_map(|(name, slot)| match slot {
                Slot::Closed(reopen) => Some((name, reopen.since)),
                _ => None,
            })
        };
        if closed().count() > REMEMBERED {
            let oldest = closed().min_by_key(|(_, since)| *since);
            if let Some(oldest) = oldest.map(|(name, _)| name.clone()) {
                self.slots.remove(&oldest);
            }
        }
    }

    /// Takes what reopens session `id` if it was closed to make room; it is then being
    /// opened again, and what is sent to it waits ([`Room::defer`]).
    pub fn start_reopen(&mut self, id: &str) -> Option<Reopen> {
        let reopen = self.take(id, |slot| match slot {
            Slot::Closed(reopen) => Ok(reopen),
            other => Err(other),
        })?;
        self.slots
            .insert(id.to_string(), Slot::Reopening(Vec::new()));
        Some(*reopen)
    }

    /// Keeps `message` for session `id` until it is open again; gives it back when `id` is
    /// not being opened again.
    pub fn defer(&mut self, id: &str, message: Deferred) -> Option<Deferred> {
        match self.slots.get_mut(id) {
            Some(Slot::Reopening(deferred)) => {
                deferred.push(message);
                None
            }
            _ => Some(message),
        }
    }

    /// A reopening that failed (another run holds the session, say): the session is closed
    /// again, to be opened at the next message; returns what was sent to it meanwhile.
    pub fn fail_reopen(
        &mut self,
        id: &str,
        cwd: PathBuf,
        mcp: Vec<McpServer>,
        kept: Option<Kept>,
    ) -> Vec<Deferred> {
        let reopen = Reopen {
            cwd,
            mcp,
            closing: Closing::Over(kept),
            since: self.clock,
        };
        match self
            .slots
            .insert(id.to_string(), Slot::Closed(Box::new(reopen)))
        {
            Some(Slot::Reopening(deferred)) => deferred,
            _ => Vec::new(),
        }
    }

    /// Takes session `id` out if it is open.
    pub fn remove_open(&mut self, id: &str) -> Option<Open> {
        self.take(id, |slot| match slot {
            Slot::Open(open) => Ok(*open),
            other => Err(other),
        })
    }

    /// Takes what reopens session `id` if it was closed to make room: it is then forgotten.
    pub fn take_closed(&mut self, id: &str) -> Option<Reopen> {
        self.take(id, |slot| match slot {
            Slot::Closed(reopen) => Ok(*reopen),
            other => Err(other),
        })
    }

    /// Takes the slot of `id` out as `pick` makes it, or leaves it where `pick` gives it back.
    fn take<T>(&mut self, id: &str, pick: impl FnOnce(Slot) -> Result<T, Slot>) -> Option<T> {
        let slot = self.slots.remove(id)?;
        match pick(slot) {
            Ok(taken) => Some(taken),
            Err(slot) => {
                self.slots.insert(id.to_string(), slot);
                None
            }
        }
    }

    /// Session `id`, out of the room, is being closed at the editor's request by `closing`;
    /// until [`ended`] has seen it through, a load of it waits for it ([`Room::ending`]).
    pub fn end(&mut self, id: &str, closing: impl Future<Output = ()> + 'static) -> Ending {
        let ending = closing.boxed_local().shared();
        self.ending.insert(id.to_string(), ending.clone());
        ending
    }

    /// Forgets the closing of `id` (a close of a session whose reopening failed: nothing held).
    pub fn end_over(&mut self, id: &str) {
        self.ending.remove(id);
    }

    /// The closing of session `id`, if the editor closed it and it is not over yet.
    pub fn ending(&self, id: &str) -> Option<Ending> {
        self.ending.get(id).cloned()
    }

    /// Every open session, taken out (the agent is ending).
    pub fn drain_open(&mut self) -> Vec<Open> {
        let ids: Vec<String> = self.slots.keys().cloned().collect();
        ids.iter().filter_map(|id| self.remove_open(id)).collect()
    }
}

/// Hands an open session's handle `message` (a close is the caller's).
pub fn give(handle: &Handle, message: Deferred) {
    match message {
        Deferred::Prompt(request, responder) => handle.prompt(request, responder),
        Deferred::Job(job) => handle.queue(job),
        Deferred::Cancel => handle.cancel(),
        Deferred::Close(responder, _) => {
            let _ = responder.respond_with_error(RpcError::internal_error());
        }
    }
}

/// Sees the closing of session `id` the editor asked for ([`Room::end`]) through, then answers
/// the `session/close`.
pub async fn ended(
    sessions: &Rc<RefCell<Room>>,
    id: &str,
    ending: Ending,
    responder: Responder<CloseSessionResponse>,
) {
    ending.clone().await;
    {
        let mut room = sessions.borrow_mut();
        // Not another closing of the same id, begun since (after a load of this one).
        if room.ending.get(id).is_some_and(|e| e.ptr_eq(&ending)) {
            room.ending.remove(id);
        }
    }
    let _ = responder.respond(CloseSessionResponse::new());
}

/// Gives session `id`, just opened again, a message sent while it opened.
pub async fn deliver(sessions: &Rc<RefCell<Room>>, id: &str, message: Deferred) {
    match message {
        Deferred::Close(responder, done) => {
            let ending = {
                let mut room = sessions.borrow_mut();
                let open = room.remove_open(id);
                room.end(id, async move {
                    if let Some(open) = open {
                        open.handle.close().await;
                    }
                    drop(done);
                })
            };
            ended(sessions, id, ending, responder).await;
        }
        message => match sessions.borrow().handle(id) {
            Some(handle) => give(handle, message),
            None => refuse(message, &unknown(id)),
        },
    }
}

/// Answers `message` with `error` (a cancel needs no answer).
pub fn refuse(message: Deferred, error: &RpcError) {
    let _ = match message {
        Deferred::Prompt(_, responder) | Deferred::Job(Job::Prompt(_, responder)) => {
            responder.respond_with_error(error.clone())
        }
        Deferred::Job(Job::SetMode(_, responder)) => responder.respond_with_error(error.clone()),
        Deferred::Job(Job::SetConfig(_, responder)) => responder.respond_with_error(error.clone()),
        Deferred::Close(responder, _) => responder.respond_with_error(error.clone()),
        Deferred::Cancel => Ok(()),
    };
}
