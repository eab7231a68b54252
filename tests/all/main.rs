//! All integration tests, compiled into one test binary to keep link time down. Each module
//! spawns the built `agent-loop` binary against fake agent CLIs under `fixtures/`.

mod common;

mod cli_backend;
mod config_errors;
mod demo;
mod jsonl;
mod modes;
mod readme;
mod repl;
mod terminfo;
mod tmux;
mod tools;
