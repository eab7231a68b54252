//! The agent loop and everything a conversation holds, with no terminal I/O: [`agent::Agent`]
//! runs a turn against a backend, executes the requested tools under the approval policy and
//! reports what it does as events; [`session`] keeps conversations, their logs and locks on
//! disk; [`chat::Chat`] is the façade every front end drives, the one owner of every state
//! change, with the slash commands they all offer. Front ends (the binary, a chat bot, the
//! examples) reach it through the `agent_loop` library's public face (src/lib.rs), which
//! exports [`chat`] and the types of its methods, never [`agent`] or [`session`] whole. This
//! crate depends on none of them; what a front end needs of a lower layer (the saved
//! sessions, `doctor`, the backends' list) is a [`chat::Chat`] function.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(unsafe_code)]

pub mod agent;
pub mod chat;
pub mod session;

// The layers below at the paths the modules name them by.
use agent_loop_backends::backend;
use agent_loop_builtins as builtins;
use agent_loop_config::{self as config, dirs};
use agent_loop_context as context;
use agent_loop_mcp as mcp;
use agent_loop_parse as parse;
use agent_loop_protocol::{event, jsonl, plural, BoxFuture, Error, ErrorKind, UnknownValue};
use agent_loop_skills as skills;
use agent_loop_tools as tools;
