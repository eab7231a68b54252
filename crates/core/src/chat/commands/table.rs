//! Every slash command of every front end, in one typed table: its name, its arguments (with
//! their kind, for an editor's completion), its help, which front ends offer it and who runs
//! it. A line is parsed once, here, into an [`Invocation`]; front ends match on
//! [`SlashCommand`], so a misspelt command does not compile, and all of them show the same
//! help from [`COMMANDS`].

/// A slash command, of the library or of a front end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlashCommand {
    Start,
    New,
    Status,
    Stop,
    Help,
    Image,
    Exit,
    Clear,
    Backend,
    Model,
    Context,
    Compact,
    Tokens,
    History,
    Save,
    Load,
    Memory,
    Compare,
    Pick,
    Tools,
    Skills,
    System,
    Mcp,
    Yes,
    Retry,
    Undo,
    Commit,
    Export,
}

/// A front end that offers slash commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrontEnd {
    /// The CLI's REPL.
    Repl,
    /// The Telegram bot.
    Telegram,
    /// The ACP server (an editor's session).
    Acp,
}

/// Who runs a command: [`crate::chat::Chat::command`], or the front end itself (`/help`,
/// `/exit`, a bot's `/stop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunBy {
    Chat,
    FrontEnd,
}

/// What a command's argument is, for completion and input hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// A configured backend's name.
    Backend,
    /// Backend names separated by commas, then a task.
    BackendsAndTask,
    /// A model name.
    Model,
    /// A context mode (`continue`, `fresh`, `sliding:N`, `summarize`).
    ContextMode,
    /// A whole number.
    Number,
    /// A saved session's name.
    Session,
    /// A file's path.
    File,
    /// Free text.
    Text,
    /// `on` or `off`.
    OnOff,
    /// `restart` and an MCP server's name.
    McpRestart,
}

/// What follows a command's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Args {
    /// As help shows it: `NAME`, `[N]`.
    pub usage: &'static str,
    pub kind: ArgKind,
    /// The command refuses to run without it.
    pub required: bool,
}

/// One slash command as front ends list it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    pub command: SlashCommand,
    /// Without the `/`.
    pub name: &'static str,
    /// Other names it answers to (without the `/`).
    pub aliases: &'static [&'static str],
    pub args: Option<Args>,
    pub help: &'static str,
    /// The front ends that offer it.
    pub offered: &'static [FrontEnd],
    pub run_by: RunBy,
}

impl CommandSpec {
    /// `/name ARGS`.
    pub fn usage(&self) -> String {
        match self.args {
            Some(args) => format!("/{} {}", self.name, args.usage),
            None => format!("/{}", self.name),
        }
    }

    /// What the argument is, for an editor's input hint; `None` without one.
    pub fn hint(&self) -> Option<&'static str> {
        self.args.map(|a| a.usage)
    }

    pub fn offered_in(&self, front_end: FrontEnd) -> bool {
        self.offered.contains(&front_end)
    }
}

use ArgKind as K;
use FrontEnd::{Acp, Repl, Telegram};
use SlashCommand as C;

const EVERYWHERE: &[FrontEnd] = &[Repl, Telegram, Acp];
/// Not in an editor: it loads sessions from its own list and cannot show answers side by side.
const NOT_IN_EDITORS: &[FrontEnd] = &[Repl, Telegram];

/// A command the library runs.
const fn chat(
    command: SlashCommand,
    name: &'static str,
    args: Option<Args>,
    help: &'static str,
    offered: &'static [FrontEnd],
) -> CommandSpec {
    CommandSpec {
        command,
        name,
        aliases: &[],
        args,
        help,
        offered,
        run_by: RunBy::Chat,
    }
}

/// A command the front ends that offer it run themselves.
const fn own(spec: CommandSpec) -> CommandSpec {
    CommandSpec {
        run_by: RunBy::FrontEnd,
        ..spec
    }
}

const fn optional(usage: &'static str, kind: ArgKind) -> Option<Args> {
    Some(Args {
        usage,
        kind,
        required: false,
    })
}

const fn required(usage: &'static str, kind: ArgKind) -> Option<Args> {
    Some(Args {
        usage,
        kind,
        required: true,
    })
}

/// Every command, in the order help lists them: the front ends' own, then the library's.
pub const COMMANDS: &[CommandSpec] = &[
    own(chat(
        C::Start,
        "start",
        None,
        "greet, and name the backend",
        &[Telegram],
    )),
    own(chat(
        C::New,
        "new",
        None,
        "archive this conversation and start a fresh one",
        &[Telegram],
    )),
    own(chat(
        C::Status,
        "status",
        None,
        "backend, model, messages, tokens, cost, last activity",
        &[Telegram],
    )),
    own(chat(
        C::Stop,
        "stop",
        None,
        "cancel the running turn",
        &[Telegram],
    )),
    own(chat(
        C::Help,
        "help",
        None,
        "the commands and what each does",
        &[Repl, Telegram],
    )),
    // A bare path lists the images waiting for the next prompt.
    own(chat(
        C::Image,
        "image",
        optional("FILE", K::File),
        "attach an image (PNG, JPEG, GIF, WebP) to your next prompt",
        &[Repl],
    )),
    CommandSpec {
        aliases: &["quit"],
        ..own(chat(
            C::Exit,
            "exit",
            None,
            "leave (also /quit, exit, quit, Ctrl-D)",
            &[Repl],
        ))
    },
    // The bot's `/new` is its `/clear`: it keeps the chat's one session name.
    chat(
        C::Clear,
        "clear",
        None,
        "start a new, empty session (the old one stays saved)",
        &[Repl, Acp],
    ),
    chat(
        C::Backend,
        "backend",
        optional("[NAME]", K::Backend),
        "show the backend, or switch to NAME keeping the conversation, with NAME's own model",
        EVERYWHERE,
    ),
    chat(
        C::Model,
        "model",
        optional("[NAME]", K::Model),
        "show the model, or set it (the value of {model} in the backend's args)",
        EVERYWHERE,
    ),
    chat(
        C::Context,
        "context",
        optional("[MODE]", K::ContextMode),
        "show the context, or set the mode: continue, fresh, sliding:N, summarize",
        EVERYWHERE,
    ),
    chat(
        C::Compact,
        "compact",
        None,
        "summarise the conversation before the last turn now (context mode summarize)",
        EVERYWHERE,
    ),
    chat(
        C::Tokens,
        "tokens",
        None,
        "tokens and cost of this session, and what the context holds",
        EVERYWHERE,
    ),
    chat(
        C::History,
        "history",
        optional("[N]", K::Number),
        "the last N messages (default 10)",
        EVERYWHERE,
    ),
    chat(
        C::Save,
        "save",
        required("NAME", K::Session),
        "save a copy of this conversation as session NAME, a name no session has",
        EVERYWHERE,
    ),
    chat(
        C::Load,
        "load",
        required("NAME", K::Session),
        "continue session NAME",
        NOT_IN_EDITORS,
    ),
    chat(
        C::Memory,
        "memory",
        required("TEXT", K::Text),
        "add `* TEXT` to AGENTS.md, which every request carries",
        EVERYWHERE,
    ),
    chat(
        C::Compare,
        "compare",
        required("A,B TASK", K::BackendsAndTask),
        "run TASK on backends A and B at once, each in its own copy of the folder",
        NOT_IN_EDITORS,
    ),
    chat(
        C::Pick,
        "pick",
        required("N", K::Number),
        "keep answer N of the last /compare in the conversation",
        NOT_IN_EDITORS,
    ),
    chat(
        C::Tools,
        "tools",
        None,
        "the tools and whether they ask first",
        EVERYWHERE,
    ),
    chat(
        C::Skills,
        "skills",
        None,
        "the skills found, where each came from and whether it is active",
        EVERYWHERE,
    ),
    chat(
        C::System,
        "system",
        None,
        "the effective system prompt: the built-in one, yours, and AGENTS.md",
        EVERYWHERE,
    ),
    chat(
        C::Mcp,
        "mcp",
        optional("[restart NAME]", K::McpRestart),
        "the MCP servers with their state and tools, or restart one",
        EVERYWHERE,
    ),
    // Without `on` or `off` it says which it takes.
    chat(
        C::Yes,
        "yes",
        optional("on|off", K::OnOff),
        "run every tool without asking, or ask again",
        EVERYWHERE,
    ),
    chat(
        C::Retry,
        "retry",
        None,
        "send the last message again, dropping the answer it got",
        EVERYWHERE,
    ),
    chat(
        C::Undo,
        "undo",
        None,
        "drop the last turn (your message and everything after it)",
        EVERYWHERE,
    ),
    chat(
        C::Commit,
        "commit",
        required("MSG", K::Text),
        "git add -A && git commit -m MSG, through bash and its approval",
        EVERYWHERE,
    ),
    chat(
        C::Export,
        "export",
        required("FILE", K::File),
        "write the conversation to a new FILE.md (markdown) or FILE.json; --force FILE replaces one",
        EVERYWHERE,
    ),
];

impl SlashCommand {
    /// Its row of [`COMMANDS`].
    pub fn spec(self) -> &'static CommandSpec {
        COMMANDS
            .iter()
            .find(|c| c.command == self)
            .expect("every command has a row in COMMANDS")
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }
}

/// The commands `front_end` offers, in help's order: what it lists, registers with its
/// platform or completes on Tab (name and [`Args::kind`]).
pub fn offered(front_end: FrontEnd) -> impl Iterator<Item = &'static CommandSpec> + Clone {
    COMMANDS.iter().filter(move |c| c.offered_in(front_end))
}

/// The commands [`crate::chat::Chat::command`] runs, for a front end of a library user.
pub fn library() -> impl Iterator<Item = &'static CommandSpec> + Clone {
    COMMANDS.iter().filter(|c| c.run_by == RunBy::Chat)
}

/// A `/` line that names no command: its first word, with the `/` (`/what`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{word}")]
pub struct UnknownCommand {
    pub word: String,
}

/// A command line, parsed: the command and what followed its name (trimmed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub command: SlashCommand,
    pub args: String,
}

impl Invocation {
    /// The command a line names: `None` when it does not start with `/`, the word (with its
    /// `/`) when no command has that name. `/model x`, `/status@Bot` (a bot's address) and
    /// `/quit` (an alias) are commands.
    pub fn parse(line: &str) -> Option<Result<Invocation, UnknownCommand>> {
        let line = line.trim();
        let rest = line.strip_prefix('/')?;
        let (word, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let name = word.split('@').next().unwrap_or(word);
        let found = COMMANDS
            .iter()
            .find(|c| c.name == name || c.aliases.contains(&name));
        Some(match found {
            Some(spec) => Ok(Invocation {
                command: spec.command,
                args: args.trim().to_string(),
            }),
            None => Err(UnknownCommand {
                word: format!("/{word}"),
            }),
        })
    }

    pub fn spec(&self) -> &'static CommandSpec {
        self.command.spec()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_one_row_and_a_unique_name() {
        let mut names = std::collections::BTreeSet::new();
        for spec in COMMANDS {
            assert_eq!(spec.command.spec(), spec);
            for name in std::iter::once(&spec.name).chain(spec.aliases) {
                assert!(names.insert(*name), "{name} twice");
            }
            assert!(!spec.offered.is_empty(), "{} offered nowhere", spec.name);
        }
    }

    #[test]
    fn help_aligns_every_description() {
        let text = help_lines(COMMANDS);
        let starts: std::collections::BTreeSet<usize> = COMMANDS
            .iter()
            .map(|c| {
                let line = text
                    .lines()
                    .find(|l| l.starts_with(&format!("  {} ", c.usage())))
                    .unwrap_or_else(|| panic!("{} not in {text}", c.name));
                line.find(c.help).unwrap()
            })
            .collect();
        assert_eq!(starts.len(), 1, "{text}");
        assert!(text.contains("  /mcp [restart NAME] "), "{text}");
    }

    #[test]
    fn a_line_is_parsed_by_its_first_word() {
        let parse = |line| Invocation::parse(line).map(|r| r.map(|i| (i.command, i.args)));
        assert_eq!(
            parse("/model  big one "),
            Some(Ok((C::Model, "big one".into())))
        );
        assert_eq!(parse(" /undo@my_bot"), Some(Ok((C::Undo, String::new()))));
        assert_eq!(parse("/quit"), Some(Ok((C::Exit, String::new()))));
        let word = "/what".to_string();
        assert_eq!(parse("/what now"), Some(Err(UnknownCommand { word })));
        assert_eq!(parse("undo"), None);
    }

    #[test]
    fn front_ends_offer_their_own_and_the_librarys() {
        let names = |f| offered(f).map(|c| c.name).collect::<Vec<_>>().join(" ");
        assert!(names(Repl).starts_with("help image exit clear backend"));
        assert!(names(Telegram).starts_with("start new status stop help backend"));
        assert!(names(Acp).starts_with("clear backend"));
        assert!(!names(Acp).contains("load") && !names(Acp).contains("pick"));
        assert!(library().all(|c| c.run_by == RunBy::Chat));
    }
}
