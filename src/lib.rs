//! agent-loop: one prompt for every AI agent.
//!
//! The library holds the whole agent loop and no terminal I/O: [`agent::Agent`] runs a turn
//! against a [`backend::Backend`], executes the requested [`tools`] and reports everything it
//! does as [`agent::Event`]s to an [`agent::Observer`]. Front ends (the append-only display in
//! [`display`], and the binary's REPL) only render those events.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod backend;
pub mod config;
pub mod context;
pub mod error;
pub mod event;
pub mod jsonl;
pub mod mcp;
pub mod parse;
pub mod process;
pub mod session;
pub mod spec;
pub mod tools;

pub use error::{Error, ErrorKind};

/// A boxed, sendable future: the return type of the object-safe async trait methods
/// ([`backend::Backend::call`], [`tools::Tool::run`], [`agent::Observer::approve`]).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
