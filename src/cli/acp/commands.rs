//! The slash commands an ACP session offers: the library's own (the CLI's REPL and the
//! Telegram bot run the same), advertised with `available_commands_update`, less those an
//! editor does in its own way (`/load`: its history list) or that a session cannot show
//! (`/compare`, `/pick`: answers side by side).

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};

use agent_loop::chat::commands::{find, CommandSpec, COMMANDS};

const NOT_HERE: &[&str] = &["load", "compare", "pick"];

/// The commands a session runs.
fn offered() -> impl Iterator<Item = &'static CommandSpec> {
    COMMANDS.iter().filter(|c| !NOT_HERE.contains(&c.name))
}

/// The `available_commands_update` that advertises them.
pub fn advertised() -> SessionUpdate {
    let commands = offered()
        .map(|spec| {
            let command = AvailableCommand::new(spec.name, spec.help);
            match spec.hint() {
                None => command,
                Some(hint) => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hint),
                )),
            }
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
}

/// What a prompt is: one of the commands, one not offered here, or a prompt for the model.
pub enum Line {
    Command,
    NotHere(&'static str),
    Prompt,
}

pub fn classify(text: &str) -> Line {
    match find(text) {
        Some(spec) if NOT_HERE.contains(&spec.name) => Line::NotHere(spec.name),
        Some(_) => Line::Command,
        None => Line::Prompt,
    }
}
