//! One configured MCP server and its state over the session: disabled, running (with its
//! connection), failed to start, or exited. Its tools hold it, so a server that dies mid-session
//! turns their calls into error results, and a restart is seen by them at once.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::connection::{Connection, Place};
use super::lock;
use crate::config::mcp::ServerDef;
use crate::tools::EnvPolicy;

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// `enabled = false`: never started.
    Disabled,
    Running,
    /// Could not be started; why.
    Failed(String),
    /// Was running and went away; what is known of why.
    Exited(String),
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerState::Disabled => f.write_str("disabled"),
            ServerState::Running => f.write_str("running"),
            ServerState::Failed(why) => write!(f, "failed: {why}"),
            ServerState::Exited(why) => write!(f, "exited: {why}"),
        }
    }
}

enum Slot {
    Disabled,
    Running(Arc<Connection>),
    Failed(String),
    Exited(String),
}

pub struct Server {
    pub def: ServerDef,
    /// Where a stdio server runs, and the root it is told of.
    place: Place,
    /// The variables a stdio server does not inherit.
    env: Arc<EnvPolicy>,
    slot: Mutex<Slot>,
}

impl Server {
    pub fn new(def: ServerDef, place: Place, env: Arc<EnvPolicy>) -> Self {
        Server {
            def,
            place,
            env,
            slot: Mutex::new(Slot::Disabled),
        }
    }

    /// Connects (again), replacing any earlier connection, whose process group is killed.
    /// Does nothing for a disabled server.
    pub async fn connect(&self) {
        if !self.def.enabled {
            return;
        }
        self.set(Slot::Failed("starting".into()));
        let slot = match Connection::open(&self.def, &self.place, &self.env).await {
            Ok(c) => Slot::Running(Arc::new(c)),
            Err(why) => Slot::Failed(why.to_string()),
        };
        self.set(slot);
    }

    /// The live connection, or why there is none. A connection found closed marks the server
    /// exited.
    pub fn connection(&self) -> Result<Arc<Connection>, ServerState> {
        let mut slot = lock(&self.slot);
        if let Slot::Running(c) = &*slot {
            if !c.is_closed() {
                return Ok(c.clone());
            }
            *slot = Slot::Exited(c.exit_note());
        }
        Err(state_of(&slot))
    }

    /// Closes the connection, killing a stdio server's processes.
    pub fn stop(&self) {
        self.set(Slot::Exited("stopped by agent-loop".into()));
    }

    /// The connection closed while a call was under way.
    pub fn mark_exited(&self, note: &str) {
        self.set(Slot::Exited(note.to_string()));
    }

    pub fn state(&self) -> ServerState {
        match self.connection() {
            Ok(_) => ServerState::Running,
            Err(state) => state,
        }
    }

    /// The tools the server offered when it was (last) connected; none unless running.
    /// Its tools, each with every secret agent-loop knows masked in the text the model reads
    /// (title, description, schema): a server that echoes its token into a description
    /// would hand it to the model with every request.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        let Ok(connection) = self.connection() else {
            return Vec::new();
        };
        let hide = |text: &str| self.env.redact(&connection.redact(text));
        connection
            .tools()
            .into_iter()
            .map(|tool| masked(tool, &hide))
            .collect()
    }

    /// What its tool list left out when it was (last) connected.
    pub fn notes(&self) -> Vec<String> {
        self.connection().map(|c| c.notes()).unwrap_or_default()
    }

    fn set(&self, new: Slot) {
        let old = std::mem::replace(&mut *lock(&self.slot), new);
        // Dropped outside the lock: dropping a connection kills its process group.
        drop(old);
    }
}

fn state_of(slot: &Slot) -> ServerState {
    match slot {
        Slot::Disabled => ServerState::Disabled,
        Slot::Running(_) => ServerState::Running,
        Slot::Failed(why) => ServerState::Failed(why.clone()),
        Slot::Exited(why) => ServerState::Exited(why.clone()),
    }
}

/// `tool` with `hide` applied to every text of it the model reads: its title, its
/// description and every string of its schemas.
fn masked(mut tool: rmcp::model::Tool, hide: &dyn Fn(&str) -> String) -> rmcp::model::Tool {
    fn walk(value: &mut Value, hide: &dyn Fn(&str) -> String) {
        match value {
            Value::String(s) => *s = hide(s),
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, hide)),
            Value::Object(map) => map.values_mut().for_each(|v| walk(v, hide)),
            _ => {}
        }
    }
    let schema = |schema: &Arc<Map<String, Value>>| {
        let mut value = Value::Object((**schema).clone());
        walk(&mut value, hide);
        match value {
            Value::Object(map) => Arc::new(map),
            _ => schema.clone(),
        }
    };
    tool.title = tool.title.map(|t| hide(&t));
    tool.description = tool.description.map(|d| hide(&d).into());
    tool.input_schema = schema(&tool.input_schema);
    tool.output_schema = tool.output_schema.as_ref().map(schema);
    tool
}
