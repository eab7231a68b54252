//! `agent-loop acp`: agent-loop as an Agent Client Protocol agent. Editors (Zed, JetBrains
//! IDEs, Neovim) start it and talk JSON-RPC on its stdio; every ACP session is an
//! [`agent_loop::chat::Chat`], the same as the CLI's and the Telegram bot's, whose events become
//! `session/update` notifications and whose approvals become `session/request_permission`.
//!
//! The official SDK (`agent-client-protocol`) runs the connection; its handlers must be `Send`
//! and must not hold its dispatch loop, so they only hand each message to [`server`], which
//! runs on this thread with the chats. stdout carries JSON-RPC only; notices go to stderr.

mod commands;
mod connection;
mod content;
mod editor_mcp;
mod files;
mod opener;
mod oversize;
mod room;
mod server;
mod session;
mod shared;
mod terminal;
mod updates;

use agent_loop::chat::{Chat, ChatOptions};
use agent_loop::Error;

use super::args::{Acp, Args};
use super::options::{chat_options, load_run_settings, merged};

pub async fn run(top: &Args, acp: &Acp) -> i32 {
    let mut args = merged(top, &acp.run);
    args.saving.no_save = top.saving.no_save || acp.no_save;
    let settings = match load_run_settings(&args) {
        Ok((settings, _)) => settings,
        Err(e) => return fail(&e),
    };
    let options = chat_options(&args);
    // A bad backend or setting stops the start with a clear error, rather than failing
    // every `session/new`: a chat is put together once, unsaved, and dropped.
    let probe = ChatOptions {
        save: false,
        ..options.clone()
    };
    let mut images = false;
    match Chat::open(&settings, &probe, &mut |n| eprintln!("{n}")) {
        Ok(chat) => {
            // An ACP agent's own answer is not known before it starts: not advertised.
            images = chat.images_known() == Some(true);
            let status = chat.status();
            let model = status.model.map(|m| format!(" (model {m})"));
            eprintln!(
                "agent-loop acp: backend {}{}, serving ACP on stdio",
                status.backend,
                model.unwrap_or_default()
            );
        }
        // A missing key is the client's to tell the user (an auth method names it).
        Err(e) if shared::missing_key(&settings, &options).is_some() => {
            eprintln!("agent-loop acp: {e}; serving ACP on stdio, sessions wait for the key");
        }
        Err(e) => return fail(&e),
    }
    let local = tokio::task::LocalSet::new();
    let debug = settings.debug();
    let shared = shared::Shared {
        settings,
        options,
        debug,
        images,
    };
    match local.run_until(connection::serve(shared)).await {
        Ok(None) => 0,
        Ok(Some(stop)) => stop.exit_code(),
        Err(e) => fail(&e),
    }
}

fn fail(error: &Error) -> i32 {
    eprintln!("agent-loop: error: {error}");
    crate::cli::outcome::exit_code(error)
}
