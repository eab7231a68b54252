//! The `agent-loop` program: flags, one-shot and REPL modes, and the front end that renders
//! the library's events. All terminal I/O lives here and in the display.

mod acp;
mod app;
pub mod args;
mod backends_cmd;
mod commands;
mod config_cmd;
pub mod demo_agent;
mod display;
mod editor;
mod frontend;
mod import_spec;
mod input;
mod mcp;
mod mcp_serve;
mod options;
mod outcome;
mod probe;
mod repl;
mod run;
mod screen;
mod sessions_cmd;
mod signals;
mod stdout;
mod telegram;
mod text;
mod versions;

pub use run::main;
