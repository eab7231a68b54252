//! The slash commands, defined once for every front end (the CLI's REPL, the Telegram bot,
//! the ACP server): their names, arguments and help, and [`Chat::command`], which runs one.
//! A front end first takes the commands that are its own (`/exit`, `/help`, a bot's `/stop`),
//! then hands the line here and renders the [`Outcome`]. Commands that run a turn
//! (`/retry`, `/compare`) come back as an outcome, so the front end runs them as it runs any
//! turn (its progress display, its way to cancel).

use crate::agent::ApprovalMode;
use crate::context::ContextMode;
use crate::event::Observer;
use crate::Error;

use super::{Chat, ChatError};

/// One slash command as a front end lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// Without the `/`.
    pub name: &'static str,
    /// What follows the name (`NAME`, `[N]`), empty when nothing does.
    pub args: &'static str,
    pub help: &'static str,
}

impl CommandSpec {
    /// `/name ARGS`.
    pub fn usage(&self) -> String {
        format!("/{} {}", self.name, self.args)
            .trim_end()
            .to_string()
    }

    /// What the argument is, for an editor's input hint; `None` without one.
    pub fn hint(&self) -> Option<&'static str> {
        (!self.args.is_empty()).then_some(self.args)
    }
}

const fn spec(name: &'static str, args: &'static str, help: &'static str) -> CommandSpec {
    CommandSpec { name, args, help }
}

/// Every command of the library, in the order help lists them.
pub const COMMANDS: &[CommandSpec] = &[
    spec(
        "clear",
        "",
        "start a new, empty session (the old one stays saved)",
    ),
    spec(
        "backend",
        "[NAME]",
        "show the backend, or switch to NAME keeping the conversation",
    ),
    spec(
        "model",
        "[NAME]",
        "show the model, or set it (the value of {model} in the backend's args)",
    ),
    spec(
        "context",
        "[MODE]",
        "show the context, or set the mode: continue, fresh, sliding:N, summarize",
    ),
    spec(
        "compact",
        "",
        "summarise the conversation before the last turn now (context mode summarize)",
    ),
    spec(
        "tokens",
        "",
        "tokens and cost of this session, and what the context holds",
    ),
    spec("history", "[N]", "the last N messages (default 10)"),
    spec(
        "save",
        "NAME",
        "save a copy of this conversation as session NAME",
    ),
    spec("load", "NAME", "continue session NAME"),
    spec(
        "memory",
        "TEXT",
        "add `* TEXT` to AGENTS.md, which every request carries",
    ),
    spec(
        "compare",
        "A,B TASK",
        "run TASK on backends A and B at once, each in its own copy of the folder",
    ),
    spec(
        "pick",
        "N",
        "keep answer N of the last /compare in the conversation",
    ),
    spec("tools", "", "the tools and whether they ask first"),
    spec(
        "system",
        "",
        "the effective system prompt: the built-in one, yours, and AGENTS.md",
    ),
    spec(
        "mcp",
        "[restart NAME]",
        "the MCP servers with their state and tools, or restart one",
    ),
    spec(
        "yes",
        "on|off",
        "run every tool without asking, or ask again",
    ),
    spec(
        "retry",
        "",
        "send the last message again, dropping the answer it got",
    ),
    spec(
        "undo",
        "",
        "drop the last turn (your message and everything after it)",
    ),
    spec(
        "commit",
        "MSG",
        "git add -A && git commit -m MSG, through bash and its approval",
    ),
    spec(
        "export",
        "FILE",
        "write the conversation to FILE.md (markdown) or FILE.json",
    ),
];

/// The command a line names, if it is one of the library's: `/model x`, `/status@Bot`.
pub fn find(line: &str) -> Option<&'static CommandSpec> {
    let word = line
        .trim_start()
        .strip_prefix('/')?
        .split_whitespace()
        .next()?;
    let name = word.split('@').next().unwrap_or(word);
    COMMANDS.iter().find(|c| c.name == name)
}

/// `specs` as help lines, the descriptions in one column.
pub fn help_lines<'a>(specs: impl IntoIterator<Item = &'a CommandSpec> + Clone) -> String {
    let width = specs
        .clone()
        .into_iter()
        .map(|c| c.usage().chars().count())
        .max()
        .unwrap_or(0);
    specs
        .into_iter()
        .map(|c| format!("  {:<width$} {}", c.usage(), c.help))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a front end does after [`Chat::command`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Show this text (nothing when empty: what the command did was shown as events).
    Reply(String),
    /// The session in use changed (`/clear`, `/load`); `cleared` names the one a `/clear`
    /// left. A front end announces the new one.
    Session {
        reply: String,
        cleared: Option<String>,
    },
    /// `/retry`: show `notice`, then run `input` (with its images) as the next turn.
    Turn {
        notice: String,
        input: crate::context::Prompt,
    },
    /// `/compare`: run `task` on `backends` at once ([`Chat::compare`]).
    Compare { backends: Vec<String>, task: String },
    /// Not a command of the library: a front end's own, or unknown (the word, with `/`).
    Unknown(String),
}

impl Chat {
    /// Runs one command line (starting with `/`). Events of what it runs (`/commit`'s tool,
    /// `/compact`'s backend call) go to `observer`; an error names what was wrong.
    pub async fn command(
        &mut self,
        line: &str,
        observer: &mut (dyn Observer + '_),
    ) -> Result<Outcome, Error> {
        let line = line.trim();
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let Some(spec) = find(word) else {
            return Ok(Outcome::Unknown(word.to_string()));
        };
        let needs_argument = matches!(
            spec.name,
            "save" | "load" | "memory" | "compare" | "pick" | "commit" | "export"
        );
        if needs_argument && rest.is_empty() {
            return Err(ChatError::NeedsArgument {
                command: spec.name.to_string(),
                usage: spec.usage().trim_start_matches('/').to_string(),
            }
            .into());
        }
        let reply = |text: String| Ok(Outcome::Reply(text));
        match spec.name {
            "clear" => {
                let old = self.session().name.clone();
                self.new_session()?;
                Ok(Outcome::Session {
                    reply: format!("[new session {}]", self.session().name),
                    cleared: Some(old),
                })
            }
            "backend" if rest.is_empty() => reply(format!(
                "[backend {}; configured: {}]",
                self.definition().name(),
                self.config().names().collect::<Vec<_>>().join(", ")
            )),
            "backend" => {
                self.switch_backend(rest)?;
                reply(format!("[backend {}]", self.definition().name()))
            }
            "model" if rest.is_empty() => reply(format!(
                "[model {}]",
                self.model().as_deref().unwrap_or("(the backend's default)")
            )),
            "model" => {
                self.set_model(rest)?;
                reply(format!("[model {rest}]"))
            }
            "context" if rest.is_empty() => reply(self.context_line()),
            "context" => {
                let mode = rest
                    .parse::<ContextMode>()
                    .map_err(|why| ChatError::ContextMode { why })?;
                self.set_context_mode(mode)?;
                reply(format!("[context mode {mode}]"))
            }
            "compact" => self.compact(observer).await.map(Outcome::Reply),
            "tokens" => reply(format!("{}\n{}", self.summary_line(), self.context_line())),
            "history" => self.history(rest).map(Outcome::Reply),
            "save" => {
                self.save_as(rest)?;
                reply(format!("[saved a copy as session {rest}]"))
            }
            "load" => {
                self.load_session(rest)?;
                let status = self.status();
                Ok(Outcome::Session {
                    reply: format!(
                        "[continuing session {} ({})]",
                        status.session,
                        crate::plural::count(status.messages, "message", "messages")
                    ),
                    cleared: None,
                })
            }
            "memory" => {
                let path = self.agent.remember(rest)?;
                reply(format!("[added to {}]", path.display()))
            }
            "compare" => {
                let (list, task) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let backends = self.compare_names(list)?;
                if task.trim().is_empty() {
                    return Err(ChatError::CompareNeedsTask.into());
                }
                Ok(Outcome::Compare {
                    backends,
                    task: task.trim().to_string(),
                })
            }
            "pick" => self.pick(rest).map(Outcome::Reply),
            "tools" => reply(self.tools_text()),
            "system" => reply(self.system_text()),
            "mcp" => self.mcp_command(rest).await.map(Outcome::Reply),
            "yes" => {
                let mode = match rest {
                    "on" => ApprovalMode::Never,
                    "off" if self.base_mode() == ApprovalMode::Never => ApprovalMode::OnWrite,
                    "off" => self.base_mode(),
                    _ => return Err(ChatError::YesTakesOnOrOff.into()),
                };
                self.set_approval(mode);
                reply(format!(
                    "[tools {}]",
                    if mode == ApprovalMode::Never {
                        "run without asking"
                    } else {
                        "ask before they change things"
                    }
                ))
            }
            "retry" => Ok(match self.drop_last_turn()? {
                Some(input) => Outcome::Turn {
                    notice: format!("[retrying: {}]", input.text),
                    input,
                },
                None => Outcome::Reply("[nothing to retry]".into()),
            }),
            "undo" => reply(match self.drop_last_turn()? {
                Some(_) => "[dropped the last turn]".into(),
                None => "[nothing to undo]".into(),
            }),
            "commit" => {
                let command = format!("git add -A && git commit -m {}", shell_quote(rest));
                let output = self
                    .run_user_tool("bash", serde_json::json!({ "command": command }), observer)
                    .await;
                reply(match output.ok {
                    true => String::new(),
                    false => "[commit failed: see the result above]".into(),
                })
            }
            "export" => self.export(rest).map(Outcome::Reply),
            _ => Ok(Outcome::Unknown(word.to_string())),
        }
    }

    /// `/mcp` lists the servers with their state and tool count; `/mcp restart NAME`
    /// restarts one.
    async fn mcp_command(&mut self, rest: &str) -> Result<String, Error> {
        let words: Vec<&str> = rest.split_whitespace().collect();
        match words.as_slice() {
            [] => Ok(self.mcp_status()),
            ["restart", name] => Ok(self.restart_mcp(name).await?.line()),
            _ => Err(ChatError::McpUsage.into()),
        }
    }
}

/// Single-quotes a string for the shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_aligns_every_description() {
        let text = help_lines(COMMANDS);
        let starts: std::collections::BTreeSet<usize> = COMMANDS
            .iter()
            .map(|c| {
                let line = text
                    .lines()
                    .find(|l| l.starts_with(&format!("  {}", c.usage())))
                    .unwrap_or_else(|| panic!("{} not in {text}", c.name));
                line.find(c.help).unwrap()
            })
            .collect();
        assert_eq!(starts.len(), 1, "{text}");
        assert!(text.contains("  /mcp [restart NAME] "), "{text}");
    }

    #[test]
    fn a_command_is_found_by_its_first_word() {
        assert_eq!(find("/model x").map(|c| c.name), Some("model"));
        assert_eq!(find("/undo@my_bot").map(|c| c.name), Some("undo"));
        assert_eq!(find("/what"), None);
        assert_eq!(find("undo"), None);
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("it's done"), r"'it'\''s done'");
    }
}
