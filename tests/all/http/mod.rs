//! HTTP backends against a scripted server on 127.0.0.1 that answers with the recorded wire
//! format bodies under `fixtures/http/`: tool round trips streamed and whole for all three
//! formats, retries, cut and malformed replies, missing keys, flags and Ctrl-C.

mod counts;
mod failures;
mod formats;
pub(crate) mod images;
mod ratelimit;
pub mod server;
mod stops;
mod summary;
mod switch_ids;
mod thinking;

use std::process::Command;

use crate::common::{fixture, Run, Workspace};
use server::{response, Answer, Server};

/// A made-up key: the tests check it is sent, and never shown.
pub(crate) const KEY: &str = "sk-test-7f3a9c1e5b2d4f6a8c0e";
pub(crate) const KEY_ENV: &str = "AGENT_LOOP_TEST_API_KEY";

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Format {
    Anthropic,
    OpenAi,
    Ollama,
}

use Format::*;

impl Format {
    fn type_name(self) -> &'static str {
        match self {
            Anthropic => "anthropic",
            OpenAi => "openai",
            Ollama => "ollama",
        }
    }

    /// The request path the backend must use (`base_url` is the server's root, plus `/v1`
    /// for OpenAI as its clients expect).
    fn path(self) -> &'static str {
        match self {
            Anthropic => "/v1/messages",
            OpenAi => "/v1/chat/completions",
            Ollama => "/api/chat",
        }
    }

    fn stream_file(self, name: &str) -> String {
        let ext = if self == Ollama { "ndjson" } else { "sse" };
        format!("http/{}/{name}.{ext}", self.type_name())
    }

    fn stream_type(self) -> &'static str {
        if self == Ollama {
            "application/x-ndjson"
        } else {
            "text/event-stream"
        }
    }
}

/// A 200 answer streaming `fixtures/http/FORMAT/NAME.sse` (or `.ndjson`).
pub(crate) fn streamed(format: Format, name: &str) -> Answer {
    let body = std::fs::read(fixture(&format.stream_file(name))).unwrap();
    response(200, &[("Content-Type", format.stream_type())], &body)
}

/// A 200 answer with `fixtures/http/FORMAT/NAME.json`.
pub(crate) fn whole(format: Format, name: &str) -> Answer {
    let path = fixture(&format!("http/{}/{name}.json", format.type_name()));
    let body = std::fs::read(path).unwrap();
    response(200, &[("Content-Type", "application/json")], &body)
}

/// A workspace whose backend `api` speaks `format` to a server scripted with `answers`.
/// Its working directory holds `notes.txt`. `extra` adds keys to the backend's entry.
pub(crate) fn setup(format: Format, answers: Vec<Answer>, extra: &str) -> (Workspace, Server) {
    let server = Server::start(answers);
    let ws = Workspace::new();
    let base_url = match format {
        OpenAi => format!("{}/v1", server.url),
        _ => server.url.clone(),
    };
    // Ollama needs no key; the others read it from KEY_ENV.
    let key = if format == Ollama {
        String::new()
    } else {
        format!("api_key_env = \"{KEY_ENV}\"\n")
    };
    ws.config(&format!(
        "[backends.api]\ntype = \"{}\"\nbase_url = \"{base_url}\"\n{key}model = \"test-model\"\n\
         max_tokens = 100\ntimeout_s = 300\nretry_base_ms = 1\n{extra}",
        format.type_name()
    ));
    std::fs::write(ws.work().join("notes.txt"), "hello from notes\n").unwrap();
    (ws, server)
}

/// The command for backend `api` with the key set.
pub(crate) fn cmd(ws: &Workspace, args: &[&str]) -> Command {
    cmd_for(ws, "api", args)
}

/// The command for `backend` with the key set.
pub(crate) fn cmd_for(ws: &Workspace, backend: &str, args: &[&str]) -> Command {
    let mut cmd = ws.cmd(&[&["--backend", backend][..], args].concat());
    cmd.env(KEY_ENV, KEY);
    // The server is on 127.0.0.1: no proxy of the machine's may stand in between.
    for var in ["http_proxy", "https_proxy", "all_proxy"] {
        cmd.env_remove(var).env_remove(var.to_uppercase());
    }
    cmd
}

pub(crate) fn run_api(ws: &Workspace, args: &[&str]) -> Run {
    let run = ws.run_cmd(cmd(ws, args));
    for (name, text) in [("stdout", run.stdout()), ("stderr", run.stderr())] {
        assert!(!text.contains(KEY), "the API key is in {name}:\n{text}");
    }
    run
}
