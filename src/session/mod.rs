//! Sessions: conversations that survive restarts. Each session is a folder under
//! `$XDG_DATA_HOME/agent-loop/sessions/NAME/` holding `session.json` (the conversation and its
//! totals, rewritten atomically after every turn), `log.jsonl` (the event log) and
//! `artifacts/`. A file that fails to parse is reported with its path and never overwritten.

mod id;
mod lock;
mod log;
mod redact;
mod store;

pub use id::new_id;
pub use lock::{acquire as lock, Contended, SessionLock};
pub use log::Log;
pub use redact::Redactor;
pub use store::{format_time, validate_name, Listing, Session, Store};
