//! `agent-loop telegram`: the agent as a Telegram bot. A front end on the library like the
//! CLI: each chat is an [`agent_loop::chat::Chat`] saved as the session `telegram-<chat id>`,
//! whose turns run with an observer that reports progress in the chat and asks for approval
//! with buttons. This file wires it: the token and the allowlist, the long-polling loop, and
//! the shutdown (stop polling, let running turns finish up to `--drain-timeout`, then cancel).

mod api;
mod approval;
mod chats;
mod commands;
mod format;
mod media;
mod progress;
pub mod settings;
mod split;

use std::cell::Cell;
use std::time::Duration;

use tokio::sync::{watch, Semaphore};

use agent_loop::chat::{Chat, ChatOptions, RunSettings};
use agent_loop::Error;

use super::args::{Args, Telegram};
use super::options::{chat_options, load_run_settings, merged};
use super::signals::Signals;
use api::{backoff, Api, ApiError, Update};
use approval::Approvals;
use chats::{Chats, Shared};

/// How long the workers may take to end once their turns were cancelled.
const CANCEL_GRACE: Duration = Duration::from_secs(30);

pub async fn run(top: &Args, bot: &Telegram) -> i32 {
    let args = merged(top, &bot.run);
    let setup = match setup(&args, bot) {
        Ok(setup) => setup,
        Err(e) => return fail(&e),
    };
    let local = tokio::task::LocalSet::new();
    local.run_until(serve(setup, bot)).await
}

/// Everything `serve` needs, checked before it starts.
struct Setup {
    api: Api,
    settings: RunSettings,
    users: Vec<i64>,
    options: ChatOptions,
    /// The variable the token came from, to name in errors.
    token_env: String,
    max_concurrent: usize,
    debug: bool,
}

fn setup(args: &Args, bot: &Telegram) -> Result<Setup, Error> {
    let (settings, layers) = load_run_settings(args)?;
    let settings::BotSettings {
        users,
        token_env,
        max_concurrent,
    } = settings::BotSettings::read(&layers, bot)?;
    let token = std::env::var(&token_env)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            Error::config(format!(
                "no bot token: set {token_env} to the token @BotFather gave you (docs/telegram.md)"
            ))
        })?;
    if users.is_empty() && !bot.allow_anyone {
        return Err(Error::config(
            "no allowlist: the bot would answer anyone who finds it. Give the Telegram user ids \
             it may answer with --allow-user ID, AGENT_LOOP_TELEGRAM_USERS=ID,ID or \
             `allowed_users` in config.toml's [telegram] table (to find your id, message the \
             bot: it replies with it), or pass --allow-anyone",
        ));
    }
    let debug = settings.debug();
    let base = std::env::var("TELEGRAM_API_URL")
        .ok()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| api::DEFAULT_BASE.into());
    let api = Api::new(&base, &token).map_err(Error::config)?;
    let mut options = chat_options(args);
    // The token is kept out of logs and sessions as the backends' keys are.
    options.secret_envs.push(token_env.clone());
    // A bad backend or setting stops the start, rather than failing every chat's first
    // message: a chat is put together once, unsaved, and dropped.
    let probe = ChatOptions {
        save: false,
        ..options.clone()
    };
    let backend = Chat::open(&settings, &probe, &mut |_| {})?.status().backend;
    eprintln!("agent-loop telegram: backend {backend}");
    Ok(Setup {
        api,
        settings,
        users,
        options,
        token_env,
        max_concurrent,
        debug,
    })
}

fn fail(error: &Error) -> i32 {
    eprintln!("agent-loop: error: {error}");
    crate::cli::outcome::exit_code(error)
}

async fn serve(setup: Setup, bot: &Telegram) -> i32 {
    let Setup {
        api,
        settings,
        users,
        options,
        token_env,
        max_concurrent,
        debug,
    } = setup;
    if users.is_empty() {
        eprintln!(
            "agent-loop telegram: warning: --allow-anyone: anyone who finds the bot can run tools on this machine"
        );
    }
    let (cancel, cancel_all) = watch::channel(false);
    let (answers, polls) = watch::channel(0u64);
    let approvals = Approvals::default();
    let chats = Chats::new(Shared {
        api: api.clone(),
        settings,
        options,
        approvals: approvals.clone(),
        approval_timeout: Duration::from_secs(bot.approval_timeout),
        slots: Semaphore::new(max_concurrent),
        cancel_all,
        draining: Cell::new(false),
        polls,
        debug,
    });
    let mut signals = Signals::install();
    // Beside the polling, which must not wait for it while the network is down.
    let commands_api = api.clone();
    tokio::task::spawn_local(async move {
        if let Err(e) = commands_api.set_my_commands(&commands::commands()).await {
            eprintln!("agent-loop telegram: setMyCommands failed, the commands still work: {e}");
        }
    });
    eprintln!("agent-loop telegram: polling for messages");
    let poll_timeout = Duration::from_secs(bot.poll_timeout);
    let mut offset = 0;
    let mut failures = 0;
    let stop = loop {
        let polled = tokio::select! {
            stop = signals.next() => break stop,
            polled = api.get_updates(offset, poll_timeout) => polled,
        };
        match polled {
            Ok(updates) => {
                failures = 0;
                for update in updates {
                    offset = offset.max(update.update_id + 1);
                    handle(&chats, &approvals, &users, update, debug);
                }
                answers.send_modify(|n| *n += 1);
            }
            // The token is wrong (or revoked): no retry will fix it.
            Err(ApiError::Refused { code, description }) if code == 401 || code == 404 => {
                return fail(&Error::config(format!(
                    "the Bot API refused the token ({code} {description}): check {}",
                    token_env
                )));
            }
            Err(e) => {
                eprintln!("agent-loop telegram: getUpdates: {e}; trying again");
                tokio::select! {
                    stop = signals.next() => break stop,
                    _ = tokio::time::sleep(backoff(failures)) => {}
                }
                failures += 1;
            }
        }
    };
    // No more answers: a photo waiting for the rest of its album goes on.
    drop(answers);
    // Acknowledge what was handled, so a restart does not see it again.
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        api.get_updates(offset, Duration::ZERO),
    )
    .await;
    let drain = Duration::from_secs(bot.drain_timeout);
    eprintln!(
        "agent-loop telegram: {}: stopping; running turns have {} s to finish",
        stop.name(),
        drain.as_secs()
    );
    let workers = futures_util::future::join_all(chats.close());
    tokio::pin!(workers);
    if tokio::time::timeout(drain, &mut workers).await.is_err() {
        eprintln!("agent-loop telegram: cancelling the turns still running");
        let _ = cancel.send(true);
        let _ = tokio::time::timeout(CANCEL_GRACE, &mut workers).await;
    }
    0
}

/// Routes one update: a text message or a photo of an allowed user to its chat, a button's
/// answer to the question waiting for it; a stranger gets one short refusal, and nothing runs.
fn handle(chats: &Chats, approvals: &Approvals, users: &[i64], update: Update, debug: bool) {
    let allowed = |id: i64| users.is_empty() || users.contains(&id);
    if let Some(query) = update.callback_query {
        let chat_id = query.message.as_ref().map(|m| m.chat.id);
        let answer = match (allowed(query.from.id), chat_id, query.data.as_deref()) {
            (false, _, _) => "You are not allowed to answer this.".to_string(),
            (true, Some(chat_id), Some(data)) => match approvals.answer(data, chat_id) {
                Some(label) => label.to_string(),
                None => approval::CLOSED.to_string(),
            },
            _ => approval::CLOSED.to_string(),
        };
        let api = chats.api().clone();
        tokio::task::spawn_local(async move {
            let _ = api.answer_callback_query(&query.id, Some(&answer)).await;
        });
        return;
    }
    let Some(message) = update.message else {
        if debug {
            eprintln!("debug: update {} ignored: not a message", update.update_id);
        }
        return;
    };
    let chat_id = message.chat.id;
    let Some(from) = message.from.as_ref() else {
        return;
    };
    if !allowed(from.id) {
        eprintln!(
            "agent-loop telegram: refused a message from user {}",
            from.id
        );
        chats.reply(
            chat_id,
            format!(
                "Sorry, this bot only answers the users on its allowlist (your user id is {}).",
                from.id
            ),
        );
        return;
    }
    // Fetched only now, for an allowed user.
    match media::photos(&message) {
        Some(Ok(photos)) => return chats.photos(chat_id, photos),
        Some(Err(why)) => return chats.reply(chat_id, why),
        None => {}
    }
    match message.text {
        Some(text) => chats.message(chat_id, &text),
        None if debug => eprintln!(
            "debug: message {} in chat {chat_id} ignored: not text",
            message.message_id
        ),
        None => {}
    }
}
