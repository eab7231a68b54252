//! The bot's commands: how a message names one, what each replies, and the list given to
//! `setMyCommands` so Telegram offers them. The bot's own (`/start`, `/new`, `/status`,
//! `/stop`, `/help`) come first; then every command of the library (`/undo`, `/retry`,
//! `/model`...), run by [`Chat::command`] as the REPL runs them. The library's `/clear` is
//! the bot's `/new`, which keeps the chat's one session name.

use agent_loop::chat::{Chat, COMMANDS as LIBRARY};
use agent_loop::session::{format_time, Store};
use agent_loop::Error;

use super::api::BotCommand;

/// The bot's own commands.
const OWN: [BotCommand; 5] = [
    BotCommand {
        command: "start",
        description: "greet, and name the backend",
    },
    BotCommand {
        command: "new",
        description: "archive this conversation and start a fresh one",
    },
    BotCommand {
        command: "status",
        description: "backend, model, messages, tokens, cost, last activity",
    },
    BotCommand {
        command: "stop",
        description: "cancel the running turn",
    },
    BotCommand {
        command: "help",
        description: "what the bot does and its commands",
    },
];

/// The commands, as `setMyCommands` registers them and `/help` lists them.
pub fn commands() -> Vec<BotCommand> {
    let library = LIBRARY
        .iter()
        .filter(|c| c.name != "clear")
        .map(|c| BotCommand {
            command: c.name,
            description: c.help,
        });
    OWN.into_iter().chain(library).collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Start,
    New,
    Status,
    Stop,
    Help,
    /// One of the library's, with its arguments (the line without a `@BotName`).
    Library(String),
    Unknown,
}

/// The command a message is, if it starts with `/` (`/status@MyBot` too).
pub fn parse(text: &str) -> Option<Command> {
    let word = text.trim().strip_prefix('/')?.split_whitespace().next()?;
    let name = word.split('@').next().unwrap_or(word);
    Some(match name {
        "start" => Command::Start,
        "new" => Command::New,
        "status" => Command::Status,
        "stop" => Command::Stop,
        "help" => Command::Help,
        "clear" => Command::New,
        _ if agent_loop::chat::commands::find(text).is_some() => {
            let rest = text
                .trim()
                .split_once(char::is_whitespace)
                .map_or("", |(_, r)| r);
            Command::Library(format!("/{name} {}", rest.trim()).trim_end().to_string())
        }
        _ => Command::Unknown,
    })
}

pub fn help() -> String {
    let mut text = String::from(
        "Send a task and agent-loop runs it on its backend, with its tools, in the folder it \
         was started in. Tools that change things ask first, with buttons. Each chat is one \
         saved conversation.\n",
    );
    for c in &commands() {
        text.push_str(&format!("\n/{} - {}", c.command, c.description));
    }
    text
}

pub fn start(chat: &Chat) -> String {
    let status = chat.status();
    let model = status.model.map_or(String::new(), |m| format!(" ({m})"));
    format!(
        "Hello! This is agent-loop on the {}{model} backend. Send a task to start; /help lists the commands.",
        status.backend
    )
}

pub fn status(chat: &Chat, running: bool) -> String {
    let s = chat.status();
    let t = &s.totals;
    let mut text = format!(
        "backend: {}\nmodel: {}\nsession: {}\nmessages: {}\ntokens: {} in, {} out",
        s.backend,
        s.model.as_deref().unwrap_or("(the backend's default)"),
        s.session,
        s.messages,
        t.input,
        t.output
    );
    text.push_str(&format!("\ncost: ${:.4}", t.cost));
    let last = if s.turns == 0 {
        "none yet".to_string()
    } else {
        format_time(s.updated)
    };
    text.push_str(&format!("\nlast activity: {last}"));
    if running {
        text.push_str("\na turn is running");
    }
    text
}

/// `/new`: the conversation is saved under an archive name, and the chat's session starts
/// empty under its own name.
pub fn new(chat: &mut Chat, session: &str) -> Result<String, Error> {
    let archive = Store::default_dir()
        .map(Store::new)
        .map(|store| store.free_name(&format!("{session}-archived")));
    let kept = match archive {
        Some(name) if chat.status().messages > 0 => {
            chat.save_as(&name)?;
            format!(" The previous one is saved as {name}.")
        }
        _ => String::new(),
    };
    chat.start_session(session)?;
    chat.save()?;
    Ok(format!("New conversation.{kept}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands() {
        assert_eq!(parse("/start"), Some(Command::Start));
        assert_eq!(parse("/status@my_bot"), Some(Command::Status));
        assert_eq!(parse(" /stop now"), Some(Command::Stop));
        assert_eq!(parse("/what"), Some(Command::Unknown));
        assert_eq!(
            parse("/model@my_bot  big one"),
            Some(Command::Library("/model big one".into()))
        );
        assert_eq!(parse("/clear"), Some(Command::New));
        assert_eq!(parse("list the files"), None);
    }
}
