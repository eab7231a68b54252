//! How agent-loop talks to a backend: the backends themselves ([`backend`]: agent CLIs, HTTP
//! APIs, terminal agents on a pty, ACP agents) behind one trait, built from the definitions
//! of `agent-loop-config`, sent what `agent-loop-context` puts in a request, and reading a
//! CLI's output with `agent-loop-parse`. It knows nothing of the agent loop, sessions or
//! front ends, which build on it; the tools it names come from `agent-loop-tools`.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

pub mod backend;
pub mod sanitize;

// The layers below at the paths the modules name them by.
use agent_loop_config as config;
use agent_loop_context as context;
use agent_loop_parse as parse;
use agent_loop_protocol::{error, event, plural, BoxFuture, Error, ErrorKind};
use agent_loop_tools::{self as tools, process, sse, tls};
