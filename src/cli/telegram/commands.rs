//! The bot's commands: how a message names one, what each replies, and the list given to
//! `setMyCommands` so Telegram offers them. The bot's own (`/start`, `/new`, `/status`,
//! `/stop`, `/help`) come first; then every command of the library (`/undo`, `/retry`,
//! `/model`...), run by [`Chat::command`] as the REPL runs them. The library's `/clear` is
//! the bot's `/new`, which keeps the chat's one session name.

use agent_loop::chat::commands::{offered, FrontEnd, Invocation, SlashCommand};
use agent_loop::chat::Chat;
use agent_loop::text::format_time;
use agent_loop::Error;

use super::api::BotCommand;

/// The commands, as `setMyCommands` registers them and `/help` lists them. `/export` sends
/// the conversation to the chat, where the REPL writes a file.
pub fn commands() -> Vec<BotCommand> {
    offered(FrontEnd::Telegram)
        .map(|c| BotCommand {
            command: c.name,
            description: match c.command {
                SlashCommand::Export => EXPORT_HELP,
                _ => c.help,
            },
        })
        .collect()
}

const EXPORT_HELP: &str = "send the conversation here as a file: NAME.md (markdown) or NAME.json";

/// The most bytes of a document sent: the Bot API takes 50 MB in an upload, the form's
/// own bytes included.
pub const DOCUMENT_LIMIT: usize = 49_000_000;

/// The document's name of `/export ARGS`: the last part of a path (a chat names no place on
/// the bot's machine); `--force` (the REPL's, to replace a file) changes nothing here.
pub fn export_name(args: &str) -> Result<String, agent_loop::Error> {
    let (path, _) = agent_loop::chat::commands::export_args(args)?;
    Ok(path.rsplit('/').next().unwrap_or_default().to_string())
}

/// The command a message is, if it starts with `/` (`/status@MyBot` too); `None` inside
/// for one the bot does not offer. The library's `/clear` is the bot's `/new`.
pub fn parse(text: &str) -> Option<Option<Invocation>> {
    Some(match Invocation::parse(text)? {
        Ok(invocation) if invocation.command == SlashCommand::Clear => Some(Invocation {
            command: SlashCommand::New,
            ..invocation
        }),
        Ok(invocation) if invocation.spec().offered_in(FrontEnd::Telegram) => Some(invocation),
        Ok(_) | Err(_) => None,
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
    // As the CLI's summary says them: counts nobody reported are unknown, not 0, and a cost
    // only when one was reported or priced.
    let tokens = match (t.input, t.output) {
        (0, 0) => "unknown".to_string(),
        (input, output) => format!("{input} in, {output} out"),
    };
    let mut text = format!(
        "backend: {}\nmodel: {}\nsession: {}\nmessages: {}\ntokens: {tokens}",
        s.backend,
        s.model.as_deref().unwrap_or("(the backend's default)"),
        s.session,
        s.messages,
    );
    if t.cost > 0.0 {
        text.push_str(&format!("\ncost: ${:.4}", t.cost));
    }
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
    // On another session (`/load`), which stays saved under its own name: the chat's own is
    // taken up again first, so that it is what gets archived rather than replaced unsaved.
    if chat.session().name != session && Chat::is_saved(session) {
        chat.load_session(session)?;
    }
    let archive = Chat::free_session_name(&format!("{session}-archived"));
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
        let command = |text| parse(text).map(|c| c.map(|i| (i.command, i.args)));
        let bare = |c| Some(Some((c, String::new())));
        assert_eq!(command("/start"), bare(SlashCommand::Start));
        assert_eq!(command("/status@my_bot"), bare(SlashCommand::Status));
        assert_eq!(
            command(" /stop now"),
            Some(Some((SlashCommand::Stop, "now".into())))
        );
        assert_eq!(command("/what"), Some(None));
        assert_eq!(command("/exit"), Some(None));
        assert_eq!(
            command("/model@my_bot  big one"),
            Some(Some((SlashCommand::Model, "big one".into())))
        );
        assert_eq!(command("/clear"), bare(SlashCommand::New));
        assert_eq!(command("list the files"), None);
    }

    #[test]
    fn an_export_names_a_document_not_a_place() {
        let name = |args| export_name(args).map_err(|e| e.to_string());
        assert_eq!(name(" chat.md "), Ok("chat.md".into()));
        assert_eq!(name("--force chat.json"), Ok("chat.json".into()));
        assert_eq!(name("/home/me/.config/app.json"), Ok("app.json".into()));
        assert_eq!(name("../../x.md"), Ok("x.md".into()));
        assert_eq!(name("./-x.md"), Ok("-x.md".into()));
        assert!(name("-f notes.md")
            .unwrap_err()
            .contains("-f: unknown option"));
        assert!(name("--forced.md").is_err());
        assert_eq!(name("dir/"), Ok(String::new()));
    }
}
