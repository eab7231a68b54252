//! The slash commands an ACP session offers (`available_commands_update`) and runs when a
//! prompt starts with one: the chat's own operations, as the CLI's REPL runs them. A prompt
//! that starts with `/` but names no command here goes to the model as it is.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};

use agent_loop::chat::Chat;
use agent_loop::context::ContextMode;
use agent_loop::Error;

/// Name (without `/`), argument hint (empty: none) and what it does.
const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "clear",
        "",
        "Start a new, empty session (the old one stays saved)",
    ),
    (
        "backend",
        "NAME",
        "Show the backend, or switch to NAME keeping the conversation",
    ),
    ("model", "NAME", "Show the model, or set it"),
    (
        "context",
        "MODE",
        "Show the context, or set its mode: continue, fresh, sliding:N, summarize",
    ),
    ("tokens", "", "Tokens and cost of this session"),
    ("mcp", "", "The MCP servers and their states"),
];

/// The `available_commands_update` that advertises them.
pub fn advertised() -> SessionUpdate {
    let commands = COMMANDS
        .iter()
        .map(|(name, hint, what)| {
            let command = AvailableCommand::new(*name, *what);
            match hint.is_empty() {
                true => command,
                false => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(*hint),
                )),
            }
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
}

/// Runs `text` if it is one of the commands: `None` when it is a prompt for the model.
pub async fn run(chat: &mut Chat, text: &str) -> Option<Result<String, Error>> {
    let line = text.trim().strip_prefix('/')?;
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    COMMANDS.iter().find(|(name, ..)| *name == word)?;
    Some(match word {
        "clear" => chat
            .new_session()
            .map(|()| format!("New session {}.", chat.session().name)),
        "backend" if rest.is_empty() => Ok(format!(
            "Backend {}; configured: {}.",
            chat.definition().name(),
            chat.config().names().collect::<Vec<_>>().join(", ")
        )),
        "backend" => chat
            .switch_backend(rest)
            .map(|()| format!("Backend {}.", chat.definition().name())),
        "model" if rest.is_empty() => Ok(format!(
            "Model {}.",
            chat.model().as_deref().unwrap_or("(the backend's default)")
        )),
        "model" => chat.set_model(rest).map(|()| format!("Model {rest}.")),
        "context" if !rest.is_empty() => {
            rest.parse::<ContextMode>()
                .map_err(Error::config)
                .map(|mode| {
                    chat.agent_mut().set_context_mode(mode);
                    format!("Context mode {mode}.")
                })
        }
        "context" => {
            let agent = chat.agent();
            let mode = agent.context_settings().mode;
            Ok(match agent.context_stats() {
                Ok(stats) => format!("Context {mode}: {stats}."),
                Err(e) => format!("Context {mode}: {e}."),
            })
        }
        "tokens" => {
            let totals = chat.status().totals;
            Ok(format!(
                "{} tokens in, {} out, ${:.4}, {} backend calls.",
                totals.input, totals.output, totals.cost, totals.calls
            ))
        }
        _ => Ok(chat.mcp_status()),
    })
}
