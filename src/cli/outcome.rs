//! How a turn ended, for the caller's exit code.

use agent_loop::Error;

use super::signals::Stop;

pub enum Outcome {
    Done(Result<String, Error>),
    /// A signal stopped the turn.
    Cancelled(Stop),
}
