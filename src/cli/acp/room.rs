//! The sessions the agent holds open, and how many. Each open session holds its chat, the MCP
//! servers the editor gave it (processes), its session's lock and log, and a connection to its
//! backend; an editor opens one per thread and may never close one (`session/close` is recent
//! in ACP), so a day of work would pile them up until the descriptors or the memory run out.
//! At most [`OPEN`] stay open: opening one more closes the idle session unused longest. Saved,
//! it is reopened when the editor prompts it again, with the folder, MCP servers and approval
//! mode it had, and goes on from its saved conversation; the editor sees no difference.
//! Without saving (`--no-save`) there is nothing to reopen from, so nothing is closed.

use std::collections::HashMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::McpServer;
use tokio::task::JoinHandle;

use agent_loop::settings::ApprovalMode;

use super::session::Handle;

/// How many sessions stay open at once.
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
    /// Its closing, which ends with the approval mode it had; a reopening waits for it, so
    /// the session's lock is free again.
    pub closing: JoinHandle<Option<ApprovalMode>>,
    since: u64,
}

#[derive(Default)]
pub struct Room {
    pub open: HashMap<String, Open>,
    closed: HashMap<String, Reopen>,
    /// Counts the client's messages: a session's `used` is the count at its last one.
    clock: u64,
}

impl Room {
    /// The client sent session `id` something.
    pub fn touch(&mut self, id: &str) {
        self.clock += 1;
        if let Some(open) = self.open.get(id) {
            open.handle.used.set(self.clock);
        }
    }

    /// Registers a session just opened. With `evict` (sessions are saved), when more than
    /// [`OPEN`] are open the idle one unused longest is closed; its id is returned. When every
    /// other session is running a prompt, none is: the room is over for a while.
    pub fn insert(&mut self, id: String, open: Open, evict: bool) -> Option<String> {
        self.clock += 1;
        open.handle.used.set(self.clock);
        self.closed.remove(&id);
        self.open.insert(id.clone(), open);
        if !evict || self.open.len() <= OPEN {
            return None;
        }
        let victim = self
            .open
            .iter()
            .filter(|(name, open)| **name != id && open.handle.idle())
            .min_by_key(|(_, open)| open.handle.used.get())
            .map(|(name, _)| name.clone())?;
        let Open { handle, cwd, mcp } = self.open.remove(&victim)?;
        let closing = tokio::task::spawn_local(handle.close());
        let since = self.clock;
        self.closed.insert(
            victim.clone(),
            Reopen {
                cwd,
                mcp,
                closing,
                since,
            },
        );
        if self.closed.len() > REMEMBERED {
            let oldest = self.closed.iter().min_by_key(|(_, r)| r.since);
            if let Some(oldest) = oldest.map(|(name, _)| name.clone()) {
                self.closed.remove(&oldest);
            }
        }
        Some(victim)
    }

    /// What reopens session `id`, if it was closed to make room (taken: one reopening).
    pub fn take_closed(&mut self, id: &str) -> Option<Reopen> {
        self.closed.remove(id)
    }
}
