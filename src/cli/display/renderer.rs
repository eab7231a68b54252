//! The one trait every display implements: what a front end needs from it.

use std::time::Duration;

use agent_loop::event::{ApprovalRequest, Event};

use crate::cli::text::CallState;

/// What a front end needs from a display. Write errors (a closed pipe) are ignored by every
/// method: the loop goes on.
pub trait Renderer: Send {
    /// Renders one event of the loop.
    fn render(&mut self, event: &Event);

    /// Asks whether a tool may run; the caller reads the answer. `full`: all of a command
    /// longer than a screen (the user answered `v`). Whether `[v]iew all` was offered, for
    /// the retry after an answer that is none of the offered ones.
    fn approval_prompt(&mut self, request: &ApprovalRequest, full: bool) -> bool;

    /// The question about `request` was answered (or could not be asked): what became of the
    /// call. An agent's own call, whose line came before its question, gets a line saying so.
    fn answered(&mut self, _request: &ApprovalRequest, _state: CallState) {}

    /// A line of the front end's own (REPL banner, notices).
    fn notice(&mut self, text: &str);

    /// A line of tracing (`--debug`) on stderr, written even in the middle of a streamed
    /// answer without touching stdout: the answer's bytes are the same with and without it.
    fn aside(&mut self, text: &str) {
        self.notice(text);
    }

    /// Text without a newline (the REPL's `You: ` prompt).
    fn prompt(&mut self, text: &str);

    /// An error outside any turn: bad configuration, unreadable input.
    fn fatal(&mut self, error: &agent_loop::Error) {
        self.notice(&format!("agent-loop: error: {error}"));
    }

    /// Session `name` (`id` in logs), `turns` turns in, is ready: it talks to `backend` (with
    /// `model`, if the backend names one).
    fn session_start(
        &mut self,
        _id: &str,
        _name: &str,
        _backend: &str,
        _model: Option<&str>,
        _turns: u32,
    ) {
    }

    /// The next turn talks to `backend` with `model` (`/backend` and `/model` change them
    /// between turns).
    fn talking_to(&mut self, _backend: &str, _model: Option<&str>) {}

    /// Session `name` ended here (`/clear`); a [`Renderer::session_start`] follows.
    fn session_clear(&mut self, _name: &str) {}

    /// Only the final answer goes out (`--quiet`): a comparison then shows the answer it
    /// kept, not every backend's under its heading.
    fn answers_only(&self) -> bool {
        false
    }

    /// Whether a person can be asked to approve tools through this display.
    fn asks_approval(&self) -> bool {
        true
    }

    /// How often [`Renderer::tick`] wants to be called, if it animates anything.
    fn tick_every(&self) -> Option<Duration> {
        None
    }

    /// Redraws whatever is animated (the spinner's frame and elapsed time).
    fn tick(&mut self) {}

    /// The conversation so far of a session resumed or loaded, as text, and the tokens it
    /// used, in and out (the view shows them; the other displays printed the conversation in
    /// their own runs). Follows [`Renderer::session_start`].
    fn history(&mut self, _text: &str, _tokens: (u64, u64)) {}

    /// The run ends: give the terminal back (the view).
    fn leave(&mut self) {}
}
