//! The agent loop: one user input becomes a turn of backend calls and tool runs. It formats
//! nothing and prints nothing; it reports every step as an [`Event`] to an [`Observer`], which
//! is also asked to approve tools that change things.

mod approval;
mod error;
mod host;
mod summarize;
mod turn;

pub use crate::event::{ApprovalRequest, Decision, Event, Observer, OutputStream, RawOutput};
pub use approval::{AllowRule, AllowRuleError, ApprovalMode, Policy};
pub use error::AgentError;
pub use host::LoopHost;
pub use turn::{Agent, AgentOptions};

#[cfg(test)]
mod tests;
