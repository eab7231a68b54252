//! What every layer of agent-loop shares, and nothing else: the events a turn reports and the
//! observer that hears them (with the approval question and answer), tool calls, token usage
//! and context metrics, the masking of secrets, the characters shown escaped, the error type, and the public JSON lines schema those events are logged in. It
//! depends on no other crate of the workspace, so the loop, the backends, the tools and every
//! front end can speak it without depending on each other.

#![deny(unsafe_code)]

pub mod error;
pub mod event;
pub mod jsonl;
pub mod metrics;
pub mod plural;
pub mod redact;
pub mod shown;
pub mod tool_call;
pub mod usage;

pub use error::{Error, ErrorKind, UnknownValue};
pub use event::Attached;
pub use tool_call::{Change, ToolCall};

/// A boxed, sendable future: the return type of the object-safe async trait methods
/// (the backends' `call`, the tools' `run`, [`event::Observer::approve`]).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
