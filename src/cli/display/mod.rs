//! Rendering the loop's events. A front end picks one [`Renderer`] at start-up with
//! [`choose`]:
//!
//! - [`plain`]: append-only lines; never an escape byte or a bare carriage return, so safe on
//!   any terminal, in any log and through any pipe;
//! - [`terminfo`]: the same lines, with colours, a spinner and a `--tail` view redrawn in place,
//!   every control sequence taken from the terminfo entry of `$TERM` ([`caps`]);
//! - [`view`]: the REPL's screen of three parts (conversation, status line, input line), on
//!   top of the terminfo entry;
//! - [`jsonl`]: one JSON object per event on stdout, for programs;
//! - [`quiet`]: the final answer alone on stdout.
//!
//! Renderers write to the writers they are given; they never touch the terminal themselves.

pub mod caps;
pub mod choose;
pub mod jsonl;
pub mod plain;
pub mod quiet;
mod renderer;
pub use agent_loop::text::sanitize;
mod shared;
pub mod terminfo;
pub mod view;

pub use caps::Caps;
pub use choose::{
    choose, no_color_requested, Choice, DisplayMode, OutputFormat, Settings, Terminal,
};
pub use jsonl::JsonlDisplay;
pub use plain::PlainDisplay;
pub use quiet::QuietDisplay;
pub use renderer::Renderer;
pub use terminfo::TerminfoDisplay;
pub use view::{ViewDisplay, ViewHandle};
