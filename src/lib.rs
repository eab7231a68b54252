//! agent-loop: one prompt for every AI agent.
//!
//! One turn with any configured backend (`examples/one_turn.rs`):
//!
//! ```no_run
#![doc = include_str!("../examples/one_turn.rs")]
//! ```
//!
//! [`chat::Chat::open`] is the one entry point every front end builds through: it reads the
//! configuration layers and the settings and puts together the backend, the tools, the
//! approval policy, the context settings and the session with its log. The library holds the
//! whole agent loop and no terminal I/O: [`agent::Agent`] runs a turn against a
//! [`backend::Backend`], executes the requested [`tools`] and reports everything it does as
//! [`event::Event`]s to an [`event::Observer`], which is also how a tool's approval is asked.
//! Front ends (the binary's displays and REPL, a chat bot) only render those events and send
//! intents: [`chat::Chat::command`] runs the slash commands every front end offers.
//!
//! The workspace's crates are the layers, each depending only on those before it:
//! `agent-loop-protocol` (events, tool calls, usage, the JSON lines schema), `agent-loop-tools`
//! (what a tool is, the registry, command tools, the processes they run in, TLS and SSE), then
//! side by side `agent-loop-builtins` (the built-in tools) and the backends' stack:
//! `agent-loop-parse` (a CLI's output parsers), `agent-loop-context` (the context manager),
//! `agent-loop-config` (`backends.toml`, settings, folders), with `agent-loop-backends` and
//! `agent-loop-mcp` (the MCP client) on it, then `agent-loop-core` (the agent loop, sessions,
//! the [`chat`] façade), `agent-loop-import` (the Prolog spec import), then the binary. This
//! library is their public face: it re-exports them at the paths front ends use ([`chat`],
//! [`tools`], [`builtins`], [`config`], [`backend`]...). docs/library.md has the table.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

pub use agent_loop_backends::{backend, sanitize};
pub use agent_loop_builtins as builtins;
pub use agent_loop_config as config;
pub use agent_loop_config::dirs;
pub use agent_loop_context as context;
pub use agent_loop_core::{agent, chat, session};
pub use agent_loop_import as import;
pub use agent_loop_mcp as mcp;
pub use agent_loop_parse as parse;
pub use agent_loop_protocol::{error, event, jsonl, plural, redact, shown, BoxFuture};
pub use agent_loop_tools as tools;
pub use agent_loop_tools::{process, sse, tls};
pub use error::{Error, ErrorKind};
