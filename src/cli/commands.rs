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
use super::text::wrap::{at_spaces, columns};

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
/// follow them. On a terminal `width` columns wide, each description is wrapped in its
/// column (under its command on a narrow one).
fn help(width: Option<usize>) -> String {
    let head = "Commands (a line that does not start with / is a prompt):";
    let tail =
        "Multi-line input: end a line with \\ to continue it, or put \"\"\" alone on a line to \
                start and end a block.";
    let Some(width) = width else {
        return format!("{head}\n{}\n{tail}", help_lines(offered(FrontEnd::Repl)));
    };
    let rows: Vec<(String, &str)> = offered(FrontEnd::Repl)
        .map(|c| (c.usage(), c.help))
        .collect();
    let mut lines = at_spaces(head, width.saturating_sub(1));
    lines.extend(columns(&rows, width));
    lines.extend(at_spaces(tail, width.saturating_sub(1)));
    lines.join("\n")
}

/// The agent's own commands (an ACP agent's), laid out as the REPL's at `width`.
fn agent_help(commands: &[(String, String)], width: Option<usize>) -> String {
    let head = "The agent's own commands (`//NAME` sends it /NAME):";
    let rows: Vec<(String, &str)> = commands
        .iter()
        .map(|(name, help)| (format!("//{name}"), help.as_str()))
        .collect();
    let lines = match width {
        Some(width) => {
            let mut lines = at_spaces(head, width.saturating_sub(1));
            lines.extend(columns(&rows, width));
            lines
        }
        None => {
            let name = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
            let rows = rows.iter().map(|(n, h)| format!("  {n:<name$}  {h}"));
            std::iter::once(head.to_string()).chain(rows).collect()
        }
    };
    lines.join("\n")
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
            let width = app.frontend().display.layout_width();
            app.notice(&help(width));
            let (chat, _) = app.parts();
            let commands = chat.agent_commands();
            if !commands.is_empty() {
                app.notice(&agent_help(&commands, width));
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
        let text = help(None);
        let at = |name: &str| text.find(&format!("  /{name}")).unwrap();
        assert!(
            at("help") < at("exit") && at("exit") < at("clear"),
            "{text}"
        );
        assert!(names().starts_with("/help, /image, /exit, /clear"));
    }

    /// On a terminal, every line fits it and every word of the descriptions is there, in
    /// order: in their column on 80 columns, under their command on 40.
    #[test]
    fn help_fits_the_terminal_in_its_columns() {
        let words = |t: &str| t.split_whitespace().map(String::from).collect::<Vec<_>>();
        for cols in [80, 40] {
            let text = help(Some(cols));
            assert!(text.lines().all(|l| l.chars().count() < cols), "{text}");
            assert_eq!(words(&text), words(&help(None)), "{cols} columns");
        }
        let wide = help(Some(80));
        let model = wide
            .lines()
            .position(|l| l.starts_with("  /model"))
            .unwrap();
        let next = wide.lines().nth(model + 1).unwrap();
        let column = wide.lines().nth(model).unwrap().find("show").unwrap();
        assert_eq!(next.len() - next.trim_start().len(), column, "{wide}");
        assert!(help(Some(40)).contains("\n  /model [NAME]\n      show"));
    }

    #[test]
    fn the_agents_commands_are_laid_out_as_the_repls() {
        let commands = vec![
            ("init".to_string(), "create an AGENTS.md file with instructions for the agent, from what is in the project".to_string()),
            ("review".to_string(), "review the changes".to_string()),
        ];
        let plain = agent_help(&commands, None);
        assert!(
            plain.contains("\n  //init    create an AGENTS.md"),
            "{plain}"
        );
        let wide = agent_help(&commands, Some(60));
        assert!(wide.lines().all(|l| l.chars().count() < 60), "{wide}");
        assert!(wide.contains("\n  //review review the changes"), "{wide}");
        assert!(wide.contains("\n           the agent, from"), "{wide}");
    }
}
