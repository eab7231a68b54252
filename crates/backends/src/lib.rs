//! How agent-loop talks to a backend: the configuration that defines backends and settings
//! ([`config`]: `backends.toml`, `config.toml`, the environment), the context a request
//! carries ([`context`]: the conversation, its budget, the prompt), the parsers of a CLI's
//! output ([`parse`]), and the backends themselves ([`backend`]: agent CLIs, HTTP APIs,
//! terminal agents on a pty). It knows nothing of the agent loop, sessions or front ends,
//! which build on it; the tools it names come from `agent-loop-tools`.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

pub mod backend;
pub mod config;
pub mod context;
pub mod dirs;
pub mod parse;
pub mod sanitize;
pub mod sse;

use agent_loop_protocol::{error, event, plural, BoxFuture, Error, ErrorKind};
use agent_loop_tools::{self as tools, process, tls};
