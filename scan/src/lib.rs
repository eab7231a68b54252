//! The byte loops that every agent CLI's output goes through: ANSI stripping (finding
//! control bytes sixteen at a time), rendering it as a terminal would show it (a line model
//! for `\r`, erasing and cursor moves, `render.rs`, behind the same fast path), editing the
//! stripped reply in place (cutting out tool calls; dropping, trimming and folding lines,
//! whose ends are found 64 bytes at a time), and reading tool calls' JSON.
//!
//! A crate of their own because agent-loop is built for size (`opt-level = "z"`), and at
//! that level the compiler neither inlines the small functions such a loop calls per block
//! nor keeps its constants in registers. The workspace's `Cargo.toml` builds this crate at
//! 3; it is a few kilobytes of code. Its functions are never inlined: inlined into a caller
//! in the size-first crate, their code would be compiled as the caller's.

mod ansi;
mod control;
mod fallback;
mod json;
mod lines;
mod newlines;
#[cfg(test)]
mod props;
mod render;

pub use ansi::{render_terminal, strip_ansi};
pub use json::json_value;
pub use lines::{clean_lines, cut};
