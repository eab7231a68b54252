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
//! approval policy, the context settings and the session with its log. [`chat::Chat::turn`]
//! runs a turn and reports everything it does as [`event::Event`]s to an
//! [`event::Observer`], which is also how a tool's approval is asked. Front ends (the
//! binary's displays and REPL, the Telegram bot, the ACP and MCP servers, a chat bot of
//! yours) only render those events and send intents: [`chat::Chat::command`] runs the slash
//! commands every front end offers, and the chat's methods do every other change and show
//! every other view (the saved sessions, the configured backends, `doctor`, the
//! configuration's report).
//!
//! # The public face
//!
//! This library is the workspace's public face, and it is deliberately narrow: a front end
//! compiles against it alone, so the layers under it (the agent loop, the backends, the
//! tools, the configuration, the context manager, the MCP client: crates of their own,
//! docs/library.md has the table) can change without touching a front end. Every export is
//! listed here, and `tests/all/public_face.rs` holds the same list, item by item for this
//! file and for the façade's own module (which [`chat`] takes whole), so a widening there is
//! a decision, not an accident. A module re-exported whole (the protocol's [`event`] and
//! [`jsonl`], [`chat::commands`], the process helpers) is listed as that module: what is
//! public inside it is its own crate's decision, made with its reason in that module's doc.
//! The exports:
//!
//! - [`chat`]: the façade ([`chat::Chat`], its options, its slash commands) and the types
//!   its methods take and return (prompts and images, the conversation's messages, the
//!   saved sessions' listing, the loaded configuration, opaque: front ends only pass it back to
//!   the chat's functions);
//! - [`settings`]: what [`chat::Chat::open`] reads, the settings and the typed values front
//!   ends parse their flags into;
//! - [`editor`]: what an editor supplies a chat's tools with (its files, its terminal, its
//!   MCP servers), for a front end that is an editor's agent (ACP);
//! - [`event`], [`jsonl`], [`Error`], [`ErrorKind`], [`UnknownValue`], [`BoxFuture`]: the
//!   protocol, what a turn reports and the public JSON lines schema it is logged in;
//! - [`text`]: the few text helpers every display needs to show what the library shows the
//!   same way (escapes stripped, control characters made visible, secrets redacted, counts
//!   pluralised), so two front ends never disagree on them;
//! - [`process`]: the process plumbing a front end that is a program needs and the library
//!   already has, audited once (`unsafe` lives in one module of the workspace): the watchdog
//!   that kills what the library started when the program is killed, children in their own
//!   process group, lines read under a cap (one past it ends them, or is replaced), the one
//!   TLS set-up, private files, the XDG
//!   folders, and whether this program answers `demo-agent` (the `demo` backend's `{self}`);
//! - [`import`]: the Prolog spec import of `agent-loop import-spec`, a layer of its own
//!   beside the chat.
//!
//! Tests, benches and the examples are not front ends: the examples use this face alone,
//! while tests and benches that check a layer's parts (a parser, the context budget, a
//! backend's wire format) name that layer's crate directly (`agent_loop_parse`...), as
//! dependencies the package has anyway. No hidden module widens the face for them; the
//! test above checks that the binary (src/main.rs, src/cli/) names no workspace crate but
//! this one.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

pub use agent_loop_protocol::{event, jsonl, BoxFuture, Error, ErrorKind, UnknownValue};

/// The façade every front end drives, and the types its methods take and return.
pub mod chat {
    pub use agent_loop_context::image::MAX_IMAGE_BYTES;
    pub use agent_loop_context::{Image, Message, Prompt, ToolCall};
    pub use agent_loop_core::chat::*;
    pub use agent_loop_core::session::{Listing, Session, SessionError, Summary};
}

/// What [`chat::Chat::open`] reads ([`chat::RunSettings`]) is made of: the layers of text
/// settings are read from, a front end's own keys, each setting's typed value and origin, and
/// the types of those values; a whole number read as the settings read one, for a flag.
pub mod settings {
    pub use agent_loop_config::bool_setting::Flag;
    pub use agent_loop_config::settings::{
        by_flag, table, whole_number, FrontEndKeys, Key, Layers, List, NotWhole, Origin, Setting,
        Shown, Whole,
    };
    pub use agent_loop_config::user_settings_path;
    pub use agent_loop_context::{ContextMode, CountTokens};
    pub use agent_loop_core::agent::{AllowRule, ApprovalMode};
}

/// What an editor (an ACP client) supplies a chat's tools with: its files and its terminal
/// (the tools' output capped and timed out as their own are), and the MCP servers it names.
pub mod editor {
    pub use agent_loop_config::mcp::{Credentials, ServerDef, Transport};
    pub use agent_loop_tools::command::{timed_out, OUTPUT_CAP};
    pub use agent_loop_tools::{Editor, EditorError, Files, Terminal, ToolKind, ToolOutput};
}

/// Text as every display shows it: ANSI escapes stripped, control characters escaped
/// (`sanitize`, `shown`), secrets redacted (`Redactor`), counts pluralised (`plural`),
/// times and "did you mean" suggestions written alike, progress shown at a steady rate.
pub mod text {
    pub use agent_loop_backends::sanitize::sanitize;
    pub use agent_loop_config::closest;
    pub use agent_loop_core::session::format_time;
    pub use agent_loop_parse::strip_ansi;
    pub use agent_loop_protocol::redact::Redactor;
    pub use agent_loop_protocol::{plural, shown};
    pub use agent_loop_tools::Throttle;
}

/// The process plumbing of a front end that is a program: the library's own, audited once.
pub mod process {
    pub use agent_loop_backends::backend::this_program_serves_demo_agent;
    pub use agent_loop_config::dirs::xdg_home;
    pub use agent_loop_tools::process::{capped, isolate, oversize, watchdog, GroupGuard};
    pub use agent_loop_tools::{private, tls};
}

/// `agent-loop import-spec`: a Prolog spec's backends as backends.toml.
pub mod import {
    pub use agent_loop_import::{import, write};
}
