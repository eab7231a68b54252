//! `agent-loop mcp serve`: agent-loop as an MCP server on stdio, so that another agent
//! (Claude Code, Codex, Gemini CLI, Qwen Code, opencode, Cursor) can run a turn on any of
//! agent-loop's backends as a tool call: `ask`, `reply` (a session continued, on the same or
//! another backend) and `backends`. Every call is a turn of an [`agent_loop::chat::Chat`], as
//! the CLI's, the Telegram bot's and the ACP server's are: the same tools, confinement,
//! approval, sessions and redaction.
//!
//! The official SDK (rmcp) runs the connection; its handlers must be `Send`, so they only
//! hand each call to [`calls`], which runs the chats on this thread. stdout carries JSON-RPC
//! only; notices go to stderr.
//!
//! MCP clients commonly stop a stdio server with a signal rather than by closing its input.
//! SIGTERM, SIGINT and SIGHUP end it as the end of input does, the running calls cancelled at
//! once (their chats saved, their answers sent), and, without saving, its folder of cut
//! answers removed: their default action would leave every answer of its lifetime in $TMPDIR.

mod approval;
mod calls;
mod handler;
mod observer;
mod tools;

use std::time::Duration;

use rmcp::ServiceExt;

use agent_loop::chat::LoadedConfig;
use agent_loop::chat::{Chat, ChatOptions, RunSettings};
use agent_loop::process::capped::{self, Breach, CappedLines};
use agent_loop::settings::Setting;
use agent_loop::{Error, ErrorKind};

use super::args::{Args, McpServe};
use super::options::{chat_options, load_run_settings, merged};
use super::signals::{Signals, Stop};

/// The mark of the sessions `mcp serve` starts (`started_by` in session.json).
const STARTED_BY: &str = "mcp serve";

/// What every call is run with.
pub struct Shared {
    /// The settings without `--backend`: a session continued keeps its backend unless the
    /// call names one, as `--session NAME` does.
    pub settings: RunSettings,
    pub options: ChatOptions,
    pub offered: Offered,
    /// `--timeout`: the longest one call may take.
    pub timeout: Option<Duration>,
    pub max_answer_chars: usize,
}

/// The backends the calling agent may ask for, and the one a new session starts on.
#[derive(Debug, Clone)]
pub struct Offered {
    pub default: String,
    pub names: Vec<String>,
}

impl Offered {
    pub fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

pub async fn run(top: &Args, serve: &McpServe) -> i32 {
    let mut args = merged(top, &serve.run);
    args.saving.no_save = top.saving.no_save || serve.no_save;
    let backend = args.run.backend.take();
    let settings = match load_run_settings(&args) {
        Ok((settings, _)) => settings,
        Err(e) => return fail(&e),
    };
    let mut options = chat_options(&args);
    // The sessions it starts are marked, and only those are continued unless the person
    // said otherwise: the calling model reads untrusted text, and another front end's
    // session (a group chat's, another project's) is not its to read or move.
    options.started_by = Some(STARTED_BY.to_string());
    if !serve.any_session {
        options.own_sessions_only =
            Some("`ask` without `session` starts a new one (agent-loop mcp serve --any-session continues any)".to_string());
    }
    let config = match Chat::load_config(options.config.as_deref()) {
        Ok(config) => config,
        Err(e) => return fail(&e.into()),
    };
    let offered = match offered(&config, &settings, backend, &serve.allow_backend) {
        Ok(offered) => offered,
        Err(e) => return fail(&e),
    };
    // A bad setting stops the start with a clear error, rather than failing every call: a
    // chat is put together once, unsaved, and dropped.
    let mut probe_settings = settings.clone();
    probe_settings.backend = Some(Setting::flag(offered.default.clone(), "--backend"));
    let probe = ChatOptions {
        save: false,
        ..options.clone()
    };
    if let Err(e) = Chat::open(&probe_settings, &probe, &mut |n| eprintln!("{n}")) {
        return fail(&e);
    }
    eprintln!(
        "agent-loop mcp serve: backends {} (default {}), serving MCP on stdio",
        offered.names.join(", "),
        offered.default
    );
    let shared = Shared {
        settings,
        options,
        offered,
        timeout: serve.timeout.map(Duration::from_secs),
        max_answer_chars: serve.max_answer_chars,
    };
    let save = shared.options.save;
    let local = tokio::task::LocalSet::new();
    let result = local.run_until(serve_stdio(shared)).await;
    // The calls' chats leave their cut outputs and answers there (`Chat::stop`), for the
    // calling model to read while the server runs.
    if !save {
        let _ = std::fs::remove_dir_all(agent_loop::chat::unsaved_artifacts());
    }
    match result {
        Ok(None) => 0,
        Ok(Some(stop)) => stop.exit_code(),
        Err(e) => fail(&e),
    }
}

/// Serves MCP on stdio until the client closes it or a signal comes (which it returns); then
/// the calls still running are cancelled (rmcp cancels their requests) and their chats saved.
async fn serve_stdio(shared: Shared) -> Result<Option<Stop>, Error> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let handler = handler::Handler::new(
        tx,
        tools::list(&shared.offered, shared.options.own_sessions_only.is_some()),
    );
    let server = tokio::task::spawn_local(calls::run(shared, rx));
    let breach = Breach::default();
    // A line longer than the cap on one message ends the connection instead of growing
    // memory with it.
    let stdin = CappedLines::new(tokio::io::stdin(), capped::LINE, breach.clone());
    let io_error = |e: String| Error::new(ErrorKind::Io, format!("MCP connection on stdio: {e}"));
    // Installed before the handshake, so that a signal during it ends the server too.
    let mut signals = Signals::install();
    let mut stop = None;
    let result = tokio::select! {
        served = handler.serve((stdin, tokio::io::stdout())) => match served {
            Ok(service) => {
                let cancel = service.cancellation_token();
                let waiting = service.waiting();
                tokio::pin!(waiting);
                let quit = tokio::select! {
                    quit = &mut waiting => quit,
                    signalled = signals.next() => {
                        stop = Some(signalled);
                        // As at the end of input: the requests' tokens are cancelled and
                        // their answers sent before the service lets stdout go.
                        cancel.cancel();
                        waiting.await
                    }
                };
                quit.map(drop).map_err(|e| io_error(e.to_string()))
            }
            Err(e) => Err(io_error(e.to_string())),
        },
        signalled = signals.next() => {
            stop = Some(signalled);
            Ok(())
        }
    };
    // The handler (the last sender) is gone with the service: the calls end.
    let _ = server.await;
    if let Some(why) = breach.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(io_error(why));
    }
    result.map(|()| stop)
}

/// The backends offered: `--backend` and every `--allow-backend`, else every backend that can
/// run here; the default is `--backend`, else the configured one when offered, else the
/// first offered that can run here, else the first offered.
fn offered(
    config: &LoadedConfig,
    settings: &RunSettings,
    backend: Option<String>,
    allowed: &[String],
) -> Result<Offered, Error> {
    let named: Vec<String> = backend.iter().chain(allowed).cloned().collect();
    for name in &named {
        Chat::check_backend(config, name)?;
    }
    let names: Vec<String> = if named.is_empty() {
        Chat::runnable_backends(config)?
    } else {
        let mut unique = Vec::new();
        for name in named {
            if !unique.contains(&name) {
                unique.push(name);
            }
        }
        unique
    };
    let setting = settings.backend.as_ref().map(|s| s.value.clone());
    let configured = Chat::configured_backend(config, setting);
    let runs_here = |name: &&String| Chat::can_run(config, name);
    let default = backend
        .or(configured.filter(|c| names.contains(c)))
        .or_else(|| names.iter().find(runs_here).cloned())
        .or_else(|| names.first().cloned())
        .ok_or_else(|| {
            Error::config(
                "no backend can run here (none is installed, or its API key is not set): \
                 `agent-loop backends` shows each one's state; name one with --backend",
            )
        })?;
    Ok(Offered { default, names })
}

fn fail(error: &Error) -> i32 {
    eprintln!("agent-loop: error: {error}");
    crate::cli::outcome::exit_code(error)
}
