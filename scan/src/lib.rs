//! The byte loops that every agent CLI's output goes through: ANSI stripping (finding
//! control bytes sixteen at a time), rendering it as a terminal would show it (a line model
//! for `\r`, erasing and cursor moves, `render.rs`, behind the same fast path), editing the
//! stripped reply in place (cutting out tool calls; dropping, trimming and folding lines,
//! whose ends are found 64 bytes at a time), and reading tool calls' JSON.
//!
//! Hand-written rather than the `strip-ansi-escapes` crate because it is measured 30-50x
//! faster than `strip-ansi-escapes` on real agent output, and it keeps tabs, which
//! `strip-ansi-escapes` drops; the escapes it cannot settle on its fast path go to `vte`, the
//! parser `strip-ansi-escapes` itself wraps. `benches/parse.rs` measures it.

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
