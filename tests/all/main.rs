//! All integration tests, compiled into one test binary to keep link time down. Each module
//! spawns the built `agent-loop` binary against fake agent CLIs under `fixtures/`.

mod common;

mod cli_backend;
mod config_errors;
mod context;
mod demo;
mod docs_cover;
mod fanout;
mod faults;
mod http;
mod jsonl;
mod layering;
mod library;
mod mcp;
mod modes;
mod policy;
mod presets;
mod props;
mod readme;
mod repl;
mod replay;
mod sessions;
mod settings;
mod slash;
mod start;
mod telegram;
mod terminfo;
mod tmux;
mod tools;
