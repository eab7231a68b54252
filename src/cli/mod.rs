//! The `agent-loop` program: flags, one-shot and REPL modes, and the front end that renders
//! the library's events. All terminal I/O lives here and in the display.

pub mod args;
pub mod demo_agent;
mod frontend;
mod input;
mod run;
mod screen;

pub use run::main;
