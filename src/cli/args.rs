//! The command line, documented where each flag is defined; `--help` prints it.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use super::display::{DisplayMode, OutputFormat};

use agent_loop::settings::ContextMode;
use agent_loop::settings::{whole_number, AllowRule, ApprovalMode, NotWhole, Whole};

const EXAMPLES: &str = "\
Examples:
  agent-loop --backend demo \"list the files here\"
      One turn with the built-in offline demo agent; the answer goes to stdout.
  agent-loop --backend demo --yes \"run echo hello\"
      Let tools that change things (bash, write, edit) run without asking.
  echo \"read Cargo.toml\" | agent-loop --backend demo
      Read the task from stdin (or pass - as the task).
  agent-loop --backend demo
      Start a REPL on a terminal: type a task, `clear` to forget the conversation,
      `exit`, `quit` or Ctrl-D to leave.
  agent-loop --config my-backends.toml --backend mycli --tools read,ls,grep \"find TODOs\"
      Use a backend defined in your own file, with read-only tools.
  agent-loop -c \"and now add tests\"
      Continue the most recent session (every conversation is saved after each turn).
  agent-loop sessions
      List saved sessions; `agent-loop sessions rm NAME` removes one.
  ANTHROPIC_API_KEY=... agent-loop --backend claude-api \"explain src/main.rs\"
      Call an LLM API directly (presets: claude-api, openai, openrouter, deepseek,
      mistral, ollama); the reply streams to stdout as it arrives.
  agent-loop --backend ollama --model qwen3 --temp 0.2 --no-stream \"list the files\"
      Pick the model and temperature for this run, and take the reply whole.
  agent-loop --backend claude,codex \"add a --json flag\"
      Run the task on both at once, each in its own copy of the folder, and print both
      answers; in the REPL, /compare claude,codex TASK and /pick N do the same.
  agent-loop backends
      Every configured backend, whether it can run here, and its version;
      `agent-loop doctor NAME` shows what one prints and what is read from it.
  agent-loop --backend demo --context sliding:20
      A REPL whose requests carry only the last 20 messages of the conversation.
  agent-loop --backend demo --output jsonl \"list the files here\" | jq -r .event
      One JSON object per event on stdout, for programs.
  answer=$(agent-loop --backend demo -q \"list the files here\")
      Only the final answer on stdout.

Backends are defined in backends.toml: the built-in file, then
$XDG_CONFIG_HOME/agent-loop/backends.toml, then --config FILE. docs/backends-and-presets.md
documents every key and shows how to add an agent CLI; docs/configuration.md covers every
flag and setting.

Exit codes: 0 success, 1 the backend or a turn failed, 2 bad usage or configuration,
3 the turn would not end (--max-iterations reached, or the same tool call three times),
4 not done: a tool call was refused, as approval could not be asked (use --yes or --allow),
129 ended by SIGHUP, 130 interrupted (Ctrl-C), 143 ended by SIGTERM.";

const SHORT_FOOTER: &str = "\
All flags, examples: agent-loop --help
Guides: README.md, docs/*.md";

/// One prompt for every AI agent.
///
/// Drives agent CLIs and LLM APIs through one loop, one tool set and a display that works on
/// any terminal.
#[derive(Debug, Parser)]
// No colour in help and usage errors (clap is built without its `color` feature): clap's
// escapes are hard-coded, and would break plain mode's promise and terminfo mode's (every
// sequence from the entry).
// `-h` is a phone screen's worth: the most used flags, each in one line, and where to read
// more; `--help` has every flag in full, the examples and the exit codes.
#[command(
    name = "agent-loop",
    version,
    after_help = SHORT_FOOTER,
    after_long_help = EXAMPLES,
    disable_help_flag = true
)]
pub struct Args {
    // The flags in four groups, in the order `--help` lists them. Not for their own sake:
    // clap's derive builds each flag on the stack of one function, and one function for all
    // of them took an 80 KB stack frame, 19 fresh pages at every start before the backend
    // could be spawned; with a function per group the largest frame is half that (the stack
    // pages touched before the spawn went from 25 to 16).
    #[command(flatten)]
    pub run: Run,

    #[command(flatten)]
    pub tooling: Tooling,

    #[command(flatten)]
    pub request: Request,

    #[command(flatten)]
    pub saving: Saving,

    #[command(subcommand)]
    pub command: Option<Command>,
}

// What to run, on which backend, and how it is shown.
#[derive(Debug, clap::Args)]
pub struct Run {
    /// Task; none: a REPL.
    ///
    /// The task for one turn; `-` reads it from stdin.
    ///
    /// Without a task: a REPL on a terminal, or the task from piped stdin.
    pub task: Option<String>,

    /// Backend to use.
    ///
    /// Its name in backends.toml, for example `demo`. Without it: the
    /// `backend` setting (config.toml, AGENT_LOOP_BACKEND), else `default_backend` in a
    /// backends.toml, else the first available backend (docs/configuration.md, "Which
    /// backend runs").
    #[arg(short, long, value_name = "NAME")]
    pub backend: Option<String>,

    /// Extra backends.toml, read after the built-in and user files; its entries add backends
    /// or override single keys. sessions, completions and import-spec read no backends and
    /// ignore it.
    // Global: it names the file the subcommands that read backends read, so it is taken
    // before or after the subcommand's name (`agent-loop doctor --config mine.toml`); the
    // others take it too, unread, so that a shell alias holding it works for every one.
    #[arg(hide_short_help = true, long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,

    /// Your system prompt, from FILE.
    ///
    /// Instead of the `system_prompt` setting or system.md in $XDG_CONFIG_HOME/agent-loop/;
    /// `{date}`, `{cwd}` and `{tools}` in it are filled in. The `system_mode` setting says
    /// whether it extends or replaces the built-in one.
    #[arg(hide_short_help = true, long, value_name = "FILE")]
    pub system: Option<PathBuf>,

    /// How text is shown.
    ///
    /// auto, plain, terminfo or view. `plain` appends lines and never writes
    /// an escape byte; `terminfo` adds colours and a spinner, drawn with the terminfo entry of
    /// TERM only; `auto` is terminfo on a terminal, plain otherwise; `view` gives the REPL a
    /// screen of three parts (the conversation, scrolled with PgUp and PgDn, a status line and
    /// the input line). NO_COLOR turns colours off.
    /// [default: auto]
    #[arg(long, value_enum, value_name = "MODE", hide_possible_values = true)]
    pub display: Option<DisplayMode>,

    /// text, or jsonl.
    ///
    /// `jsonl`: one JSON object per event on stdout, nothing else, and no approval questions
    /// (use --yes) [default: text].
    #[arg(long, value_enum, value_name = "FORMAT", hide_possible_values = true)]
    pub output: Option<OutputFormat>,

    /// Answer only, on stdout.
    ///
    /// Only the final answer on stdout.
    /// Errors and approval questions go to stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// Help (--help: all).
    ///
    /// Print help: `-h` a summary, `--help` everything.
    #[arg(short, long, action = clap::ArgAction::Help, global = true)]
    pub help: Option<bool>,

    /// Attach an image (PNG, JPEG, GIF or WebP, by its content) to the task, or to the
    /// REPL's first prompt; repeatable. The backend must take images (`images` in
    /// backends.toml).
    #[arg(hide_short_help = true, long = "image", value_name = "FILE")]
    pub image: Vec<PathBuf>,

    /// In terminfo mode, show the last N lines of the backend's output in place while it
    /// runs; all of it is printed when the call ends.
    #[arg(hide_short_help = true, long, value_name = "N", value_parser = whole::<usize>(0), allow_negative_numbers = true)]
    pub tail: Option<usize>,
}

// What tools may do, and how far a turn may go.
#[derive(Debug, Clone, clap::Args)]
pub struct Tooling {
    /// Never ask before tools.
    ///
    /// Run every tool without asking.
    /// The same as `--approval never`.
    #[arg(short, long)]
    pub yes: bool,

    /// When tools ask first.
    ///
    /// never, on-write or always-ask.
    ///
    /// `on-write` asks before bash, write and edit, `always-ask` before every tool.
    /// [default: on-write]
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub approval: Option<ApprovalMode>,

    /// Let matching calls run without asking; repeatable. `TOOL` allows every call of a tool,
    /// `TOOL:GLOB` the calls whose main argument matches (`bash:git status`, `write:docs/*`).
    /// A bash command that chains commands (`;`, `&&`, `|`, `$(...)`, redirections) never
    /// matches a pattern; a `*` after a command admits any option of it (`bash:cargo test*`
    /// admits `--config ...runner=...`, which runs any program).
    #[arg(hide_short_help = true, long, value_name = "RULE", value_parser = parse_rule)]
    pub allow: Vec<AllowRule>,

    /// The folder read, write, edit, ls and grep may use (default: the working directory);
    /// paths that resolve outside it, through `..` or symbolic links, are refused. `--root /`
    /// lifts the limit. bash is not confined.
    #[arg(hide_short_help = true, long, value_name = "DIR")]
    pub root: Option<PathBuf>,

    /// Tools for this run.
    ///
    /// Comma-separated.
    ///
    /// All: bash, read, write, edit, ls, grep, read_url, web_search when BRAVE_API_KEY is set, the command tools of [tools.NAME] tables, and the tools of every MCP server. MCP tools are named
    /// mcp.SERVER.TOOL; mcp.SERVER.* takes all of one server's, mcp.* all of them.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub tools: Option<Vec<String>>,

    /// Backend calls allowed in one turn before it stops with an error (exit 3).
    /// [default: 10]
    #[arg(hide_short_help = true, long, value_name = "N", value_parser = whole::<u32>(1), allow_negative_numbers = true)]
    pub max_iterations: Option<u32>,

    /// Internal tracing (settings and their origins, every event as JSON) on stderr; never
    /// on stdout. Also AGENT_LOOP_DEBUG=1.
    #[arg(hide_short_help = true, long)]
    pub debug: bool,
}

// What a request to the backend asks for and carries.
#[derive(Debug, Clone, clap::Args)]
pub struct Request {
    /// Model to ask for.
    ///
    /// Instead of the backend's `model` key: for HTTP backends, and CLI backends with
    /// `model_args` or {model} in their args (every agent CLI preset but coro).
    #[arg(short, long, value_name = "NAME")]
    pub model: Option<String>,

    /// Sampling temperature sent to an HTTP backend (for example 0.2); without it, none is
    /// sent and the API's default applies.
    #[arg(hide_short_help = true, long, value_name = "T", value_parser = parse_temperature)]
    pub temp: Option<f64>,

    /// Ask an HTTP backend for the whole reply at once instead of streaming it. Then only
    /// the final answer reaches stdout.
    #[arg(hide_short_help = true, long)]
    pub no_stream: bool,

    /// How much history each request carries: continue (all, trimmed to the backend's
    /// max_context_tokens), fresh (none: only the current exchange), sliding:N (the last N
    /// messages) or summarize (the backend summarises older messages). Default: the backend's
    /// `context` key, else continue.
    #[arg(hide_short_help = true, long, value_name = "MODE")]
    pub context: Option<ContextMode>,

    /// Also show every line the backend prints (ANSI-stripped), on stderr.
    #[arg(hide_short_help = true, short, long)]
    pub verbose: bool,
}

// Which session the conversation is saved to.
#[derive(Debug, clap::Args)]
pub struct Saving {
    /// Start or continue NAME.
    ///
    /// Saved under $XDG_DATA_HOME/agent-loop/sessions/NAME/.
    #[arg(short, long, value_name = "NAME", conflicts_with = "continue_")]
    pub session: Option<String>,

    /// Continue last session.
    ///
    /// Continue the most recently used session.
    #[arg(short = 'c', long = "continue")]
    pub continue_: bool,

    /// Write the JSONL event log to FILE instead of the session's log.jsonl.
    #[arg(hide_short_help = true, long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Do not save the session or its log (for scripts that run many one-off tasks).
    #[arg(hide_short_help = true, long)]
    pub no_save: bool,

    /// Wait for a session another run is using.
    ///
    /// If another run is using the session, wait for it to finish instead of exiting with 2.
    #[arg(hide_short_help = true, long)]
    pub wait_session: bool,
}

// `defer`: a subcommand's flags are built only when it is the one given (or for `--help` and
// completions, which build them all), not at every start: telegram, acp and mcp serve take
// the tool flags again, and a run or `--version` built them for nothing. (So the structs of
// those flags have no doc comment: clap would apply it after the variant's, as their help.)
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Saved sessions.
    ///
    /// Lists the saved sessions, each with its name, backend, turns, tokens and when it was
    /// last used; `rm NAME` removes one.
    Sessions {
        #[command(subcommand)]
        action: Option<SessionsAction>,
    },
    /// Show the settings.
    ///
    /// Prints every setting's effective value and where it came from (default, config.toml,
    /// environment, flag), each checked as a run checks it, and where each configuration file
    /// is looked for.
    Config,
    /// Shell completions.
    ///
    /// Prints a shell completion script. To install it, once (new shells then complete; make
    /// the folder first with `mkdir -p` if it is not there):
    ///
    /// agent-loop completions bash > ~/.local/share/bash-completion/completions/agent-loop
    ///
    /// agent-loop completions zsh > ~/.zfunc/_agent-loop
    ///
    /// (zsh: with `fpath=(~/.zfunc $fpath)` in ~/.zshrc, before compinit)
    ///
    /// agent-loop completions fish > ~/.config/fish/completions/agent-loop.fish
    Completions {
        #[arg(value_enum)]
        shell: CompletionShell,
    },
    /// List backends.
    ///
    /// Lists every configured backend: its type, command or URL, whether it can run here (the
    /// command found on PATH, the API key set, a local server answering) and the version its
    /// `--version` prints.
    Backends,
    /// Check one backend.
    ///
    /// Sends a tiny prompt through BACKEND and shows its raw output, the ANSI-stripped text,
    /// and what each parser read from it (text, tool calls, usage, errors): for checking a
    /// preset. Without BACKEND: the backend a run would use. The last line is `ok` (exit 0)
    /// or `failed: WHY` (exit 1, or 2 for bad usage or configuration).
    Doctor {
        #[arg(value_name = "BACKEND")]
        backend: Option<String>,
        /// The backend to check, as a flag: the same as BACKEND (`--backend` is accepted
        /// wherever a backend is named).
        #[arg(
            short = 'b',
            long = "backend",
            value_name = "NAME",
            conflicts_with = "backend"
        )]
        backend_flag: Option<String>,
    },
    /// Translate a UnifyWeaver spec into backends.toml.
    ///
    /// The Prolog facts agent_backend/2, tool_spec/2 and loop_config/1 become
    /// backends.toml, printed to stdout; what has no equivalent becomes a comment and a
    /// warning on stderr.
    ImportSpec {
        #[arg(value_name = "FILE.pl")]
        file: PathBuf,
        /// Write the result to FILE (atomically) instead of stdout.
        #[arg(short = 'o', long = "out", value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace FILE if it exists.
        #[arg(long)]
        force: bool,
    },
    /// MCP: serve agent-loop to other agents, or log in to a server.
    ///
    /// `serve` runs agent-loop as an MCP server on stdio: Claude Code, Codex, Gemini CLI and
    /// other MCP clients call its tools `ask`, `reply` and `backends` to run a turn on any
    /// backend (docs/mcp-server.md). `login NAME` runs the OAuth authorization code flow with the server `[mcp.servers.NAME]`:
    /// it prints a URL to open in a browser on this machine, waits for the browser to come
    /// back to 127.0.0.1, and keeps the tokens in $XDG_DATA_HOME/agent-loop/mcp-tokens/NAME.json
    /// (readable by you only); runs then send them, refreshed when they expire. `logout NAME`
    /// forgets them.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Run as a Telegram bot.
    ///
    /// Each chat with it is a saved session (`telegram-CHAT_ID`) on the chosen backend, with
    /// the same tools and approval as the CLI. Runs until SIGTERM or SIGINT.
    Telegram(Box<Telegram>),
    /// Serve ACP on stdio (for editors).
    ///
    /// Runs as an Agent Client Protocol agent: Zed, JetBrains IDEs, Neovim and other ACP
    /// clients start it and talk JSON-RPC on its stdin and stdout; diagnostics go to stderr.
    /// Each ACP session is an agent-loop session on the chosen backend, with the same tools
    /// and approval as the CLI (docs/acp.md).
    Acp(Box<Acp>),
}

// The run flags a server subcommand (`telegram`, `acp`) takes after its name.
#[derive(Debug, clap::Args)]
pub struct ServeRun {
    /// Backend to use, by its name in backends.toml.
    #[arg(short, long, value_name = "NAME")]
    pub backend: Option<String>,

    #[command(flatten)]
    pub tooling: Tooling,

    #[command(flatten)]
    pub request: Request,
}

// `agent-loop acp`: the run flags that apply to an ACP agent.
#[derive(Debug, clap::Args)]
pub struct Acp {
    #[command(flatten)]
    pub run: ServeRun,

    /// Do not save the sessions or their logs.
    #[arg(long)]
    pub no_save: bool,
}

// `agent-loop mcp serve`: the run flags that apply to an MCP server, and its own.
#[derive(Debug, clap::Args)]
pub struct McpServe {
    #[command(flatten)]
    pub run: ServeRun,

    /// A backend the calling agent may ask for; repeatable. Without it and without
    /// --backend: every backend that can run here. --backend is always allowed.
    #[arg(long = "allow-backend", value_name = "NAME")]
    pub allow_backend: Vec<String>,

    /// The longest one call (one turn) may take; then the turn is cancelled and what it had
    /// answered is returned [default: no limit].
    #[arg(long, value_name = "SECS", value_parser = whole::<u64>(1), allow_negative_numbers = true)]
    pub timeout: Option<u64>,

    /// Longer answers are cut (head and tail kept) and saved whole in the session's
    /// artifacts, the cut answer saying where.
    #[arg(long, value_name = "N", default_value_t = 60_000, value_parser = whole::<usize>(1), allow_negative_numbers = true)]
    pub max_answer_chars: usize,

    /// Do not save the sessions or their logs (then `reply` has nothing to continue).
    #[arg(long)]
    pub no_save: bool,

    /// Let `ask` and `reply` continue any saved session (a Telegram chat's, a CLI session of
    /// another project), not only those this server started.
    #[arg(long)]
    pub any_session: bool,
}

// `agent-loop telegram`: the run flags that apply to a bot, and its own.
#[derive(Debug, clap::Args)]
pub struct Telegram {
    #[command(flatten)]
    pub run: ServeRun,

    /// A Telegram user id the bot answers; repeatable. Also AGENT_LOOP_TELEGRAM_USERS=1,2
    /// and `allowed_users` in config.toml's [telegram] table.
    #[arg(long = "allow-user", value_name = "ID", value_parser = parse_user)]
    pub allow_user: Vec<i64>,

    /// Answer anyone who finds the bot (a warning is printed): without an allowlist the bot
    /// refuses to start.
    #[arg(long)]
    pub allow_anyone: bool,

    /// Chats whose turns run at the same time; more wait their turn [default: 4].
    #[arg(long, value_name = "N", value_parser = whole::<u32>(1), allow_negative_numbers = true)]
    pub max_concurrent: Option<u32>,

    /// On SIGTERM or SIGINT, how long running turns may take to finish and send their
    /// answers before they are cancelled.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = whole::<u64>(0), allow_negative_numbers = true)]
    pub drain_timeout: u64,

    /// How long an approval question waits for a button before the call is denied.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = whole::<u64>(0), allow_negative_numbers = true)]
    pub approval_timeout: u64,

    /// The `timeout` of each getUpdates long poll.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = whole::<u64>(0), allow_negative_numbers = true)]
    pub poll_timeout: u64,
}

fn parse_mode(s: &str) -> Result<ApprovalMode, <ApprovalMode as std::str::FromStr>::Err> {
    s.parse()
}

fn parse_rule(s: &str) -> Result<AllowRule, <AllowRule as std::str::FromStr>::Err> {
    s.parse()
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum McpAction {
    /// Serve MCP on stdio: the tools ask, reply and backends (docs/mcp-server.md).
    Serve(Box<McpServe>),
    /// Log in to a URL server: the OAuth authorization code flow with PKCE.
    Login {
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// Forget a server's tokens.
    Logout {
        #[arg(value_name = "NAME")]
        name: String,
    },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum SessionsAction {
    /// Remove sessions (their folder: conversation, log and artifacts); one a run is using is
    /// refused.
    Rm {
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
}

/// A whole-number flag's value, at least `min`, refused in words: clap's own parser passes
/// on Rust's "invalid digit found in string", and takes a `-1` for a flag (so
/// `allow_negative_numbers` goes with it, to give the `-1` here).
fn whole<T: Whole + Send + Sync + 'static>(
    min: u64,
) -> impl Fn(&str) -> Result<T, NotWhole> + Clone + Send + Sync + 'static {
    move |text| whole_number(text, min)
}

/// A Telegram user id (`--allow-user`, and the `telegram_users` setting's items), refused in
/// words: clap's own parser passes on Rust's "invalid digit found in string".
pub fn parse_user(text: &str) -> Result<i64, String> {
    text.parse()
        .map_err(|_| format!("`{text}` is not a Telegram user id (a whole number)"))
}

/// A temperature: a finite number from 0.
fn parse_temperature(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!(
            "`{text}` is not a temperature (a number from 0, such as 0.2)"
        )),
    }
}

/// The shells `agent-loop completions` writes for: the ones of Linux and Termux (clap_complete's
/// elvish and PowerShell generators would cost binary for shells no user here runs).
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}
