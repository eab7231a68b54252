//! All integration tests, compiled into one test binary to keep link time down. Each module
//! spawns the built `agent-loop` binary against fake agent CLIs under `fixtures/`.

mod common;

mod bounded_log;
mod cli_backend;
mod cli_retry;
mod config_errors;
mod context;
mod custom_tools;
mod demo;
mod docs_cover;
mod fanout;
mod faults;
mod http;
mod import_spec;
mod jsonl;
mod layering;
mod library;
mod log_schema;
mod mcp;
mod modes;
mod policy;
mod preset_args;
mod preset_retry;
mod presets;
mod props;
mod pty;
mod pty_docs;
mod pty_replay;
mod readme;
mod repl;
mod replay;
mod session_safety;
mod sessions;
mod settings;
mod slash;
mod start;
mod system_prompt;
mod telegram;
mod terminal_text;
mod terminfo;
mod tmux;
mod tools;
mod thinking_tokens;
mod versions;
mod web;
