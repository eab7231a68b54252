//! Sessions: conversations that survive restarts. Each session is a folder under
//! `$XDG_DATA_HOME/agent-loop/sessions/NAME/` holding `session.json` (the conversation and its
//! totals, rewritten atomically after every turn), `log.jsonl` (the event log) and
//! `artifacts/`, all private to the user (0700 folders, 0600 files). A file that fails to parse is reported with its path and never overwritten.

mod error;
mod id;
mod lock;
mod log;
mod store;

pub use agent_loop_protocol::redact::Redactor;
pub use error::SessionError;
pub use id::new_id;
pub use lock::{acquire as lock, Contended, SessionLock};
pub use log::{EventLog, Log, LogContext};
pub use store::{format_time, validate_name, Listing, Session, Store, Summary};
