//! Rendering the loop's events. A front end picks one [`Renderer`] at start-up with
//! [`choose`]:
//!
//! - [`plain`]: append-only lines; never an escape byte or a bare carriage return, so safe on
//!   any terminal, in any log and through any pipe;
//! - [`terminfo`]: the same lines, with colours, a spinner and a `--tail` view redrawn in place,
//!   every control sequence taken from the terminfo entry of `$TERM` ([`caps`]);
//! - [`jsonl`]: one JSON object per event on stdout, for programs;
//! - [`quiet`]: the final answer alone on stdout.
//!
//! Renderers write to the writers they are given; they never touch the terminal themselves.

pub mod caps;
pub mod choose;
pub mod jsonl;
pub mod plain;
pub mod quiet;
pub mod sanitize;
mod shared;
pub mod terminfo;

use std::time::Duration;

use agent_loop::agent::{ApprovalRequest, Event};

pub use caps::Caps;
pub use choose::{
    choose, no_color_requested, Choice, DisplayMode, OutputFormat, Settings, Terminal,
};
pub use jsonl::JsonlDisplay;
pub use plain::PlainDisplay;
pub use quiet::QuietDisplay;
pub use terminfo::TerminfoDisplay;

/// What a front end needs from a display. Write errors (a closed pipe) are ignored by every
/// method: the loop goes on.
pub trait Renderer: Send {
    /// Renders one event of the loop.
    fn render(&mut self, event: &Event);

    /// Asks whether a tool may run; the caller reads the answer.
    fn approval_prompt(&mut self, request: &ApprovalRequest);

    /// A line of the front end's own (REPL banner, notices).
    fn notice(&mut self, text: &str);

    /// Text without a newline (the REPL's `You: ` prompt).
    fn prompt(&mut self, text: &str);

    /// An error outside any turn: bad configuration, unreadable input.
    fn fatal(&mut self, message: &str) {
        self.notice(&format!("agent-loop: error: {message}"));
    }

    /// Session `name` (`id` in logs) is ready: it talks to `backend` (with `model`, if the
    /// backend names one).
    fn session_start(&mut self, _id: &str, _name: &str, _backend: &str, _model: Option<&str>) {}

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
}

impl Renderer for PlainDisplay {
    fn render(&mut self, event: &Event) {
        PlainDisplay::render(self, event);
    }

    fn approval_prompt(&mut self, request: &ApprovalRequest) {
        PlainDisplay::approval_prompt(self, request);
    }

    fn notice(&mut self, text: &str) {
        PlainDisplay::notice(self, text);
    }

    fn prompt(&mut self, text: &str) {
        PlainDisplay::prompt(self, text);
    }
}
