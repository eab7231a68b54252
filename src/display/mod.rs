//! Rendering the loop's events for people. [`plain`] is the append-only renderer: it never
//! writes an escape byte or a bare carriage return, so its output is safe on any terminal,
//! in any log and through any pipe.

pub mod plain;
pub mod sanitize;

pub use plain::PlainDisplay;
