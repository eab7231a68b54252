//! All integration tests, compiled into one test binary to keep link time down. Each module
//! spawns the built `agent-loop` binary against fake agent CLIs under `fixtures/`.

mod common;

mod cli_backend;
mod config_errors;
mod context;
mod demo;
mod faults;
mod http;
mod mcp;
mod policy;
mod props;
mod readme;
mod repl;
mod sessions;
mod settings;
mod slash;
mod tools;
