//! The REPL's slash commands. A line is a command only when it starts with `/`; anything else,
//! "save my work" included, is a prompt for the model.

use std::fmt::Write as _;

use agent_loop::agent::ApprovalMode;
use agent_loop::context::{ContextMode, Message};
use agent_loop::Error;

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

/// Every command, with its arguments and what it does, for `/help` and the unknown-command
/// error.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("/help", "", "this list"),
    ("/exit", "", "leave (also /quit, exit, quit, Ctrl-D)"),
    (
        "/clear",
        "",
        "start a new, empty session (the old one stays saved)",
    ),
    (
        "/backend",
        "[NAME]",
        "show the backend, or switch to NAME keeping the conversation",
    ),
    (
        "/model",
        "[NAME]",
        "show the model, or set it (the value of {model} in the backend's args)",
    ),
    (
        "/context",
        "[MODE]",
        "show the context, or set the mode: continue, fresh, sliding:N, summarize",
    ),
    (
        "/tokens",
        "",
        "tokens and cost of this session, and what the context holds",
    ),
    ("/history", "[N]", "the last N messages (default 10)"),
    (
        "/save",
        "NAME",
        "save a copy of this conversation as session NAME",
    ),
    ("/load", "NAME", "continue session NAME"),
    (
        "/memory",
        "TEXT",
        "add `* TEXT` to AGENTS.md, which every request carries",
    ),
    (
        "/compare",
        "A,B TASK",
        "run TASK on backends A and B at once, each in its own copy of the folder",
    ),
    (
        "/pick",
        "N",
        "keep answer N of the last /compare in the conversation",
    ),
    ("/tools", "", "the tools and whether they ask first"),
    (
        "/system",
        "",
        "the effective system prompt: the built-in one, yours, and AGENTS.md",
    ),
    (
        "/mcp",
        "[restart NAME]",
        "the MCP servers with their state and tools, or restart one",
    ),
    (
        "/yes",
        "on|off",
        "run every tool without asking, or ask again",
    ),
    (
        "/retry",
        "",
        "send the last message again, dropping the answer it got",
    ),
    (
        "/undo",
        "",
        "drop the last turn (your message and everything after it)",
    ),
    (
        "/commit",
        "MSG",
        "git add -A && git commit -m MSG, through bash and its approval",
    ),
    (
        "/export",
        "FILE",
        "write the conversation to FILE.md (markdown) or FILE.json",
    ),
];

/// `/system`: what the current backend is sent as instructions, and where yours came from.
fn system_prompt(app: &App) -> String {
    let (agent, def) = (app.chat().agent(), app.chat().definition());
    let cwd = &agent.options().cwd;
    let memory = agent_loop::context::memory::load(cwd).ok().flatten();
    let system = agent.system_prompt();
    let text = agent_loop::backend::effective_system_prompt(
        def,
        system,
        memory.as_ref(),
        agent.tools().specs(),
        cwd,
    );
    let yours = system.map_or("none".to_string(), |s| {
        let mode = match s.mode {
            agent_loop::context::SystemMode::Append => "append",
            agent_loop::context::SystemMode::Replace => "replace",
        };
        format!("{}, {mode}", s.source)
    });
    format!(
        "[system prompt of backend {}; yours: {yours}]\n{text}",
        def.name()
    )
}

fn names() -> String {
    COMMANDS.iter().map(|c| c.0).collect::<Vec<_>>().join(", ")
}

/// Runs one command line (starting with `/`).
pub async fn dispatch(app: &mut App, line: &str) -> Flow {
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    let result = match word {
        "/help" => Ok(Some(help())),
        "/exit" | "/quit" => return Flow::Exit,
        "/clear" => app
            .clear_session()
            .map(|_| Some(format!("[new session {}]", app.chat().session().name))),
        "/backend" if rest.is_empty() => Ok(Some(format!(
            "[backend {}; configured: {}]",
            app.chat().definition().name(),
            app.chat().config().names().collect::<Vec<_>>().join(", ")
        ))),
        "/backend" => app
            .chat_mut()
            .switch_backend(rest)
            .map(|_| Some(format!("[backend {}]", app.chat().definition().name()))),
        "/model" if rest.is_empty() => Ok(Some(format!(
            "[model {}]",
            app.chat()
                .model()
                .as_deref()
                .unwrap_or("(the backend's default)")
        ))),
        "/model" => app
            .chat_mut()
            .set_model(rest)
            .map(|_| Some(format!("[model {rest}]"))),
        "/tokens" => Ok(Some(format!(
            "{}\n{}",
            app.summary_line(),
            context_line(app)
        ))),
        "/context" if rest.is_empty() => Ok(Some(context_line(app))),
        "/context" => rest
            .parse::<ContextMode>()
            .map_err(Error::config)
            .map(|mode| {
                app.chat_mut().agent_mut().set_context_mode(mode);
                Some(format!("[context mode {mode}]"))
            }),
        "/memory" if !rest.is_empty() => app
            .chat()
            .agent()
            .remember(rest)
            .map(|path| Some(format!("[added to {}]", path.display()))),
        "/history" => history(app, rest).map(Some),
        "/save" if !rest.is_empty() => app
            .chat_mut()
            .save_as(rest)
            .map(|_| Some(format!("[saved a copy as session {rest}]"))),
        "/load" if !rest.is_empty() => app.load_session(rest).map(|_| {
            let status = app.chat().status();
            Some(format!(
                "[continuing session {} ({})]",
                status.session,
                agent_loop::plural::count(status.messages, "message", "messages")
            ))
        }),
        "/tools" => Ok(Some(tools(app))),
        "/system" => Ok(Some(system_prompt(app))),
        "/compare" if !rest.is_empty() => return compare(app, rest).await,
        "/pick" if !rest.is_empty() => app.pick(rest).map(Some),
        "/mcp" => {
            let (chat, frontend) = app.parts();
            super::mcp::command(line, chat, &frontend.display).await;
            return Flow::Continue;
        }
        "/yes" => yes(app, rest).map(Some),
        "/retry" => return retry(app).await,
        "/undo" => Ok(Some(undo(app))),
        "/commit" if !rest.is_empty() => return commit(app, rest).await,
        "/export" if !rest.is_empty() => export(app, rest).map(Some),
        "/save" | "/load" | "/commit" | "/export" | "/memory" | "/compare" | "/pick" => Err(
            Error::config(format!("{word} needs an argument: see /help")),
        ),
        _ => Err(Error::config(format!(
            "unknown command {word}; the commands are: {}",
            names()
        ))),
    };
    match result {
        Ok(Some(text)) => app.notice(&text),
        Ok(None) => {}
        Err(e) => app.notice(&format!("error: {e}")),
    }
    Flow::Continue
}

/// `[context continue: 12 messages, 3.4k tokens, 4% of 80k]`.
fn context_line(app: &App) -> String {
    let agent = app.chat().agent();
    let mode = agent.context_settings().mode;
    match agent.context_stats() {
        Ok(stats) => format!("[context {mode}: {stats}]"),
        Err(e) => format!("[context {mode}: {e}]"),
    }
}

fn help() -> String {
    let mut out = String::from("Commands (a line that does not start with / is a prompt):\n");
    let usage = |name: &str, args: &str| format!("{name} {args}").trim_end().to_string();
    // One column for the descriptions, as wide as the longest usage.
    let width = COMMANDS
        .iter()
        .map(|(name, args, _)| usage(name, args).chars().count())
        .max()
        .unwrap_or(0);
    for (name, args, what) in COMMANDS {
        let _ = writeln!(out, "  {:<width$} {what}", usage(name, args));
    }
    out.push_str("Multi-line input: end a line with \\ to continue it, or put \"\"\" alone on a line to start and end a block.");
    out
}

fn history(app: &App, arg: &str) -> Result<String, Error> {
    let n: usize = if arg.is_empty() {
        10
    } else {
        arg.parse()
            .map_err(|_| Error::config(format!("/history takes a number, not `{arg}`")))?
    };
    let messages = &app.chat().agent().conversation.messages;
    if messages.is_empty() {
        return Ok("[the conversation is empty]".into());
    }
    let mut out = String::new();
    for m in &messages[messages.len().saturating_sub(n)..] {
        let line = match m {
            Message::User { text } => format!("You: {text}"),
            Message::Assistant { text, tool_calls } => {
                let calls: Vec<&str> = tool_calls.iter().map(|c| c.name.as_str()).collect();
                if calls.is_empty() {
                    format!("Assistant: {text}")
                } else {
                    format!("Assistant: {text} [calls {}]", calls.join(", "))
                }
            }
            Message::ToolResult {
                name, ok, output, ..
            } => {
                let first = output.lines().next().unwrap_or("");
                format!("[{name} {}] {first}", if *ok { "ok" } else { "error" })
            }
        };
        let _ = writeln!(out, "{}", shorten(&line, 200));
    }
    Ok(out.trim_end().to_string())
}

/// `text` cut to at most `max` characters, at a word boundary, with `...` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(3)).collect();
    // Back to the last space, unless that loses most of the line (one very long word).
    let cut = match head.rfind(char::is_whitespace) {
        Some(at) if at > head.len() / 2 => &head[..at],
        _ => &head,
    };
    format!("{}...", cut.trim_end())
}

fn tools(app: &App) -> String {
    let mut out = String::new();
    let policy = app.chat().agent().tools();
    for spec in policy.specs() {
        let asks = match app.chat().base_mode() {
            ApprovalMode::Never => "runs without asking",
            ApprovalMode::AlwaysAsk => "asks first",
            ApprovalMode::OnWrite if spec.mutating => "asks first",
            ApprovalMode::OnWrite => "runs without asking",
        };
        let what = spec.description.split(". ").next().unwrap_or("");
        let _ = writeln!(out, "  {:<6} {asks:<19} {what}", spec.name);
    }
    out.trim_end().to_string()
}

fn yes(app: &mut App, arg: &str) -> Result<String, Error> {
    let mode = match arg {
        "on" => ApprovalMode::Never,
        "off" if app.chat().base_mode() == ApprovalMode::Never => ApprovalMode::OnWrite,
        "off" => app.chat().base_mode(),
        _ => return Err(Error::config("/yes takes on or off")),
    };
    app.chat_mut().agent_mut().policy_mut().mode = mode;
    Ok(format!(
        "[tools {}]",
        if mode == ApprovalMode::Never {
            "run without asking"
        } else {
            "ask before they change things"
        }
    ))
}

/// The index of the last user message.
fn last_user(app: &App) -> Option<usize> {
    app.chat()
        .agent()
        .conversation
        .messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }))
}

fn undo(app: &mut App) -> String {
    match last_user(app) {
        Some(i) => {
            app.chat_mut().agent_mut().truncate(i);
            let _ = app.chat_mut().save();
            "[dropped the last turn]".into()
        }
        None => "[nothing to undo]".into(),
    }
}

async fn retry(app: &mut App) -> Flow {
    let Some(i) = last_user(app) else {
        app.notice("[nothing to retry]");
        return Flow::Continue;
    };
    let Message::User { text } = app.chat().agent().conversation.messages[i].clone() else {
        unreachable!()
    };
    app.chat_mut().agent_mut().truncate(i);
    app.notice(&format!("[retrying: {text}]"));
    let outcome = app.turn(&text).await;
    after_turn(outcome, app)
}

/// `/compare a,b TASK`.
async fn compare(app: &mut App, rest: &str) -> Flow {
    let (list, task) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let names = super::fanout::names(app.chat(), list).and_then(|names| {
        if task.trim().is_empty() {
            Err(Error::config(
                "/compare needs a task after the backends: /compare a,b TASK",
            ))
        } else {
            Ok(names)
        }
    });
    match names {
        Ok(names) => {
            let outcome = app.compare(&names, task.trim()).await;
            after_turn(outcome, app)
        }
        Err(e) => {
            app.notice(&format!("error: {e}"));
            Flow::Continue
        }
    }
}

async fn commit(app: &mut App, message: &str) -> Flow {
    let command = format!("git add -A && git commit -m {}", shell_quote(message));
    let (chat, frontend) = app.parts();
    let output = chat
        .run_user_tool("bash", serde_json::json!({ "command": command }), frontend)
        .await;
    if !output.ok {
        app.notice("[commit failed: see the result above]");
    }
    Flow::Continue
}

/// Single-quotes a string for the shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn export(app: &App, path: &str) -> Result<String, Error> {
    let messages = &app.chat().agent().conversation.messages;
    let text = if path.ends_with(".json") {
        serde_json::to_string_pretty(messages).map_err(|e| Error::config(e.to_string()))?
    } else if path.ends_with(".md") || path.ends_with(".markdown") {
        markdown(app)
    } else {
        return Err(Error::config(format!(
            "/export {path}: name a .md or .json file"
        )));
    };
    let text = app.chat().redactor().redact(&text);
    agent_loop::tools::write_atomic(std::path::Path::new(path), text.as_bytes())
        .map_err(|e| Error::config(format!("cannot write {path}: {e}")))?;
    Ok(format!(
        "[wrote {} to {path}]",
        agent_loop::plural::count(messages.len(), "message", "messages")
    ))
}

fn markdown(app: &App) -> String {
    let mut out = format!("# Session {}\n", app.chat().session().name);
    for m in &app.chat().agent().conversation.messages {
        match m {
            Message::User { text } => {
                let _ = write!(out, "\n## User\n\n{text}\n");
            }
            Message::Assistant { text, tool_calls } => {
                let _ = write!(out, "\n## Assistant\n\n{text}\n");
                for c in tool_calls {
                    let _ = write!(
                        out,
                        "\n**Tool call** `{}`\n\n```json\n{}\n```\n",
                        c.name, c.args
                    );
                }
            }
            Message::ToolResult {
                name, ok, output, ..
            } => {
                let status = if *ok { "ok" } else { "error" };
                let _ = write!(
                    out,
                    "\n**Tool result** `{name}` ({status})\n\n```\n{output}\n```\n"
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_lines_are_cut_at_a_word_with_an_ellipsis() {
        let line = format!("You: {}", "word ".repeat(60));
        let short = shorten(&line, 200);
        assert!(short.ends_with("word..."), "{short}");
        assert!(short.chars().count() <= 200, "{short}");
        assert_eq!(shorten("short line", 200), "short line");
        // One long word is cut inside it rather than lost.
        let long = "x".repeat(300);
        assert_eq!(shorten(&long, 10), "xxxxxxx...");
    }

    #[test]
    fn help_aligns_every_description() {
        let text = help();
        // The column each description starts at, one per command.
        let starts: std::collections::BTreeSet<usize> = COMMANDS
            .iter()
            .map(|(name, args, what)| {
                let line = text
                    .lines()
                    .find(|l| l.starts_with(&format!("  {name} {args}").trim_end().to_string()))
                    .unwrap_or_else(|| panic!("{name} not in {text}"));
                line.find(what).unwrap()
            })
            .collect();
        assert_eq!(starts.len(), 1, "{text}");
        assert!(text.contains("  /mcp [restart NAME] "), "{text}");
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("it's done"), r"'it'\''s done'");
    }
}
