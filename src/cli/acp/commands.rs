//! The slash commands an ACP session offers (the library's, as the CLI's REPL and the
//! Telegram bot run them, less those the table keeps from editors: `/load`, which an editor
//! does with its history list, and `/compare` and `/pick`, whose answers side by side a
//! session cannot show), advertised with `available_commands_update`.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};

use agent_loop::chat::commands::{offered, FrontEnd, Invocation, RunBy};

/// The `available_commands_update` that advertises them.
pub fn advertised() -> SessionUpdate {
    let commands = offered(FrontEnd::Acp)
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

/// What a prompt is: one of the commands, one of the library's not offered here, or a
/// prompt for the model (a front end's own command, `/help`, goes to the model as it is).
pub enum Line {
    Command(Invocation),
    NotHere(&'static str),
    Prompt,
}

pub fn classify(text: &str) -> Line {
    match Invocation::parse(text) {
        Some(Ok(invocation)) if invocation.spec().offered_in(FrontEnd::Acp) => {
            Line::Command(invocation)
        }
        Some(Ok(invocation)) if invocation.spec().run_by == RunBy::Chat => {
            Line::NotHere(invocation.spec().name)
        }
        _ => Line::Prompt,
    }
}
