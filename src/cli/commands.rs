//! The REPL's slash commands: `/help` and `/exit` are the REPL's own; every other command is
//! the library's ([`agent_loop::chat::commands`]), run by [`Chat::command`] and shown here.
//! A line is a command only when it starts with `/`; anything else, "save my work" included,
//! is a prompt for the model.
//!
//! [`Chat::command`]: agent_loop::chat::Chat::command

use agent_loop::chat::commands::{
    help_lines, offered, FrontEnd, Invocation, Outcome as Done, SlashCommand,
};

use agent_loop::chat::Image;

use super::app::{App, Outcome};

/// What the REPL does after a command.
pub enum Flow {
    Continue,
    Exit,
    /// SIGTERM or SIGHUP stopped what the command ran: the REPL ends with this code.
    Stopped(i32),
}

/// After a turn a command ran: on with the REPL, unless a signal that ends the run stopped it.
fn after_turn(outcome: Outcome, app: &mut App) -> Flow {
    match outcome {
        Outcome::Cancelled(stop) if stop.ends_run() => Flow::Stopped(stop.exit_code()),
        Outcome::Cancelled(_) => {
            app.notice("");
            Flow::Continue
        }
        Outcome::Done(_) => Flow::Continue,
    }
}

/// The REPL's commands (its own, then the library's); the agent's own (an ACP agent's)
/// follow them.
fn help() -> String {
    format!(
        "Commands (a line that does not start with / is a prompt):\n{}\n\
         Multi-line input: end a line with \\ to continue it, or put \"\"\" alone on a line to start and end a block.",
        help_lines(offered(FrontEnd::Repl))
    )
}

fn names() -> String {
    offered(FrontEnd::Repl)
        .map(|c| format!("/{}", c.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs one command line (starting with `/`).
pub async fn dispatch(app: &mut App, line: &str) -> Flow {
    let invocation = match Invocation::parse(line) {
        Some(Ok(invocation)) if invocation.spec().offered_in(FrontEnd::Repl) => invocation,
        Some(Ok(invocation)) => return unknown(app, &format!("/{}", invocation.spec().name)),
        Some(Err(unknown_command)) => return unknown(app, &unknown_command.word),
        None => return unknown(app, line),
    };
    match invocation.command {
        SlashCommand::Help => {
            app.notice(&help());
            let (chat, _) = app.parts();
            if let Some(commands) = chat.agent_commands() {
                app.notice(&commands);
            }
            return Flow::Continue;
        }
        SlashCommand::Exit => return Flow::Exit,
        SlashCommand::Image => {
            attach(app, &invocation.args);
            return Flow::Continue;
        }
        _ => {}
    }
    let result = {
        let (chat, frontend) = app.parts();
        chat.command(&invocation, frontend).await
    };
    match result {
        Ok(Done::Reply(text)) if text.is_empty() => {}
        Ok(Done::Reply(text)) => app.notice(&text),
        Ok(Done::Session { reply, cleared }) => {
            if let Some(old) = cleared {
                app.frontend().display.session_clear(&old);
            }
            app.announce_session();
            app.notice(&reply);
        }
        Ok(Done::Turn { notice, input }) => {
            app.notice(&notice);
            let outcome = app.turn(input).await;
            return after_turn(outcome, app);
        }
        Ok(Done::Compare { backends, task }) => {
            let outcome = app.compare(&backends, &task).await;
            return after_turn(outcome, app);
        }
        Ok(Done::Unknown(word)) => return unknown(app, &word),
        Err(e) => app.notice(&format!("error: {e}")),
    }
    Flow::Continue
}

fn unknown(app: &mut App, word: &str) -> Flow {
    app.notice(&format!(
        "error: unknown command {word}; the commands are: {}",
        names()
    ));
    Flow::Continue
}

/// `/image FILE`: the image read and checked now, sent with the next prompt.
fn attach(app: &mut App, path: &str) {
    if path.is_empty() {
        let pending: Vec<String> = app.pending().iter().map(|i| i.label()).collect();
        app.notice(&match pending.is_empty() {
            true => "usage: /image FILE (attaches it to your next prompt)".to_string(),
            false => format!("attached to your next prompt: {}", pending.join(" ")),
        });
        return;
    }
    match Image::read(std::path::Path::new(path)) {
        Ok(image) => {
            app.notice(&format!("{} attached to your next prompt", image.label()));
            app.attach(vec![image]);
        }
        Err(e) => app.notice(&format!("error: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_the_repl_commands_first_then_the_library_ones() {
        let text = help();
        let at = |name: &str| text.find(&format!("  /{name}")).unwrap();
        assert!(
            at("help") < at("exit") && at("exit") < at("clear"),
            "{text}"
        );
        assert!(names().starts_with("/help, /image, /exit, /clear"));
    }
}
