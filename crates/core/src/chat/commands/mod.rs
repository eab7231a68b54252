//! The slash commands, defined once for every front end (the CLI's REPL, the Telegram bot,
//! the ACP server) in [`COMMANDS`], and [`Chat::command`], which runs the library's. A front
//! end parses a line once ([`Invocation::parse`]), runs the commands that are its own
//! (`/exit`, `/help`, a bot's `/stop`), hands the others here and renders the [`Outcome`]. Commands that run a turn
//! (`/retry`, `/compare`) come back as an outcome, so the front end runs them as it runs any
//! turn (its progress display, its way to cancel).

use crate::agent::ApprovalMode;
use crate::context::ContextMode;
use crate::event::Observer;
use crate::Error;

use super::{Chat, ChatError};

mod table;

pub use table::{
    help_lines, library, offered, ArgKind, Args, CommandSpec, FrontEnd, Invocation, RunBy,
    SlashCommand, UnknownCommand, COMMANDS,
};

/// `/export`'s arguments: the file, and whether `--force` replaces one that is there. Another
/// word starting with `-` is refused: a guessed `-f` would else write a file named `-f notes.md`.
pub fn export_args(rest: &str) -> Result<(&str, bool), Error> {
    let rest = rest.trim();
    let (path, force) = match rest.strip_prefix("--force") {
        Some("") => return Err(ChatError::ExportForceAlone.into()),
        Some(path) if path.starts_with(char::is_whitespace) => (path.trim_start(), true),
        _ => (rest, false),
    };
    if path.starts_with('-') {
        let option = path.split_whitespace().next().unwrap_or(path).to_string();
        return Err(ChatError::ExportOption { option }.into());
    }
    Ok((path, force))
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
    /// A front end's own command (`/help`, `/stop`...), which the library does not run (its
    /// name, with `/`).
    Unknown(String),
}

impl Chat {
    /// Runs one command line (starting with `/`). Events of what it runs (`/commit`'s tool,
    /// `/compact`'s backend call) go to `observer`; an error names what was wrong.
    pub async fn command(
        &mut self,
        invocation: &Invocation,
        observer: &mut (dyn Observer + '_),
    ) -> Result<Outcome, Error> {
        let spec = invocation.spec();
        let rest = invocation.args.as_str();
        if spec.args.is_some_and(|a| a.required) && rest.is_empty() {
            return Err(ChatError::NeedsArgument {
                command: spec.name.to_string(),
                usage: spec.usage().trim_start_matches('/').to_string(),
            }
            .into());
        }
        let reply = |text: String| Ok(Outcome::Reply(text));
        use SlashCommand as C;
        match invocation.command {
            C::Clear => {
                let old = self.session().name.clone();
                self.new_session()?;
                Ok(Outcome::Session {
                    reply: format!("[new session {}]", self.session().name),
                    cleared: Some(old),
                })
            }
            C::Backend if rest.is_empty() => reply(format!(
                "[backend {}; configured: {}]",
                self.definition().name(),
                self.config().names().collect::<Vec<_>>().join(", ")
            )),
            C::Backend => {
                self.switch_backend(rest)?;
                reply(format!("[backend {}]", self.definition().name()))
            }
            C::Model if rest.is_empty() => reply(format!(
                "[model {}]",
                self.model().as_deref().unwrap_or("(the backend's default)")
            )),
            C::Model => {
                self.set_model(rest)?;
                reply(format!("[model {rest}]"))
            }
            C::Context if rest.is_empty() => reply(self.context_line()),
            C::Context => {
                let mode = rest
                    .parse::<ContextMode>()
                    .map_err(ChatError::ContextMode)?;
                self.set_context_mode(mode)?;
                reply(format!("[context mode {mode}]"))
            }
            C::Compact => self.compact(observer).await.map(Outcome::Reply),
            C::Tokens => reply(self.tokens_text()),
            C::History => self.history(rest).map(Outcome::Reply),
            C::Save => {
                self.save_as(rest)?;
                reply(format!("[saved a copy as session {rest}]"))
            }
            C::Load => {
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
            C::Memory => {
                let path = self.agent.remember(rest)?;
                reply(format!("[added to {}]", path.display()))
            }
            C::Compare => {
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
            C::Pick => self.pick(rest).map(Outcome::Reply),
            C::Tools => reply(self.tools_text()),
            C::Skills => reply(self.skills_text()),
            C::System => reply(self.system_text()),
            C::Mcp => self.mcp_command(rest).await.map(Outcome::Reply),
            C::Yes => {
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
            C::Retry => Ok(match self.drop_last_turn()? {
                Some(input) => Outcome::Turn {
                    notice: format!("[retrying: {}]", input.text),
                    input,
                },
                None => Outcome::Reply("[nothing to retry]".into()),
            }),
            C::Undo => reply(match self.drop_last_turn()? {
                Some(_) => "[dropped the last turn]".into(),
                None => "[nothing to undo]".into(),
            }),
            C::Commit => {
                let command = format!("git add -A && git commit -m {}", shell_quote(rest));
                let output = self
                    .run_user_tool("bash", serde_json::json!({ "command": command }), observer)
                    .await;
                reply(match output.ok {
                    true => String::new(),
                    false => "[commit failed: see the result above]".into(),
                })
            }
            C::Export => {
                let (path, force) = export_args(rest)?;
                self.export(path, force).map(Outcome::Reply)
            }
            C::Start | C::New | C::Status | C::Stop | C::Help | C::Image | C::Exit => {
                Ok(Outcome::Unknown(format!("/{}", spec.name)))
            }
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
    fn export_takes_force_before_a_file_only() {
        assert_eq!(export_args(" a.md ").unwrap(), ("a.md", false));
        assert_eq!(export_args("--force a.md").unwrap(), ("a.md", true));
        let alone = export_args("--force").unwrap_err().to_string();
        assert!(alone.contains("name the FILE to replace"), "{alone}");
        let guessed = export_args("-f a.md").unwrap_err().to_string();
        assert!(guessed.contains("-f: unknown option"), "{guessed}");
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("it's done"), r"'it'\''s done'");
    }
}
