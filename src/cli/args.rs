//! The command line, documented where each flag is defined; `--help` prints it.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use agent_loop::display::{DisplayMode, OutputFormat};

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
  agent-loop --backend demo --output jsonl \"list the files here\" | jq -r .event
      One JSON object per event on stdout, for programs.
  answer=$(agent-loop --backend demo -q \"list the files here\")
      Only the final answer on stdout.

Backends are defined in backends.toml: the built-in file, then
$XDG_CONFIG_HOME/agent-loop/backends.toml, then --config FILE. The README documents
every key and shows how to add an agent CLI.

Exit codes: 0 success, 1 the backend or a turn failed, 2 bad usage or configuration,
3 the --max-iterations cap was reached, 130 interrupted (Ctrl-C).";

/// One prompt for every AI agent: drives agent CLIs through one loop, one tool set and a
/// display that works on any terminal.
#[derive(Debug, Parser)]
// No colour in help and usage errors: clap's escapes are hard-coded, and would break plain
// mode's promise and terminfo mode's (every sequence from the entry).
#[command(name = "agent-loop", version, after_help = EXAMPLES, args_conflicts_with_subcommands = true, color = clap::ColorChoice::Never)]
pub struct Args {
    /// The task for one turn; `-` reads it from stdin. Without a task: a REPL on a terminal,
    /// or the task from piped stdin.
    pub task: Option<String>,

    /// Backend to use, by its name in backends.toml (for example `demo`).
    #[arg(short, long, env = "AGENT_LOOP_BACKEND", value_name = "NAME")]
    pub backend: Option<String>,

    /// Extra backends.toml, read after the built-in and user files; its entries add backends
    /// or override single keys.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// How to show the conversation [default: auto]. `plain` appends lines and never writes
    /// an escape byte; `terminfo` adds colours and a spinner, drawn with the terminfo entry of
    /// TERM only; `auto` is terminfo on a terminal, plain otherwise. NO_COLOR turns colours off.
    #[arg(long, value_enum, env = "AGENT_LOOP_DISPLAY", value_name = "MODE")]
    pub display: Option<DisplayMode>,

    /// `text` for people, or `jsonl`: one JSON object per event on stdout, nothing else, and
    /// no approval questions (use --yes) [default: text].
    #[arg(long, value_enum, env = "AGENT_LOOP_OUTPUT", value_name = "FORMAT")]
    pub output: Option<OutputFormat>,

    /// Only the final answer on stdout; errors and approval questions on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// In terminfo mode, show the last N lines of the backend's output in place while it
    /// runs; all of it is printed when the call ends.
    #[arg(long, value_name = "N")]
    pub tail: Option<usize>,

    /// Run bash, write and edit without asking for approval.
    #[arg(short, long)]
    pub yes: bool,

    /// Comma-separated tools that exist for this run (default: all of bash, read, write,
    /// edit, ls, grep).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub tools: Option<Vec<String>>,

    /// Backend calls allowed in one turn before it stops with an error (exit 3).
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_iterations: u32,

    /// Also show every line the backend prints (ANSI-stripped), on stderr.
    #[arg(short, long)]
    pub verbose: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The offline demo agent behind the `demo` backend: an emulated single-task agent CLI.
    #[command(hide = true)]
    DemoAgent,
}
