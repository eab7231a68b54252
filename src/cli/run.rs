//! Wiring: parse flags, run a subcommand, or build the app (backends, session, front end) and
//! run one turn (a task was given or piped) or the REPL (a terminal and no task). Maps every
//! outcome to the documented exit code; output that met a closed pipe makes a success 141
//! (see [`super::stdout`]).

use std::ffi::OsString;
use std::io::{IsTerminal, Read};

use clap::{CommandFactory, Parser};

use agent_loop::chat::Image;
use agent_loop::chat::{Chat, SessionError};
use agent_loop::text::Redactor;
use agent_loop::{Error, ErrorKind};

use super::app::{App, Outcome};
use super::args::{Args, Command, CompletionShell, McpAction};
use super::editor::complete::Completer;
use super::editor::history::{self, History};
use super::editor::Editor;
use super::frontend::Frontend;
use super::input::Input;
use super::options::{
    chat_options, load_run_settings, load_settings, read_layers, run_settings, screen_settings,
    Settings,
};
use super::repl;
use super::screen::{jsonl_requested, Screen};

pub fn main() -> i32 {
    let code = command();
    if code == 0 && super::stdout::was_closed() {
        return super::signals::Stop::Closed.exit_code();
    }
    code
}

fn command() -> i32 {
    // The demo agent behind the `demo` backend is reached before clap, not as a (hidden)
    // subcommand: shell completions would offer a hidden one, and no user types it.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == "demo-agent")
    {
        return super::demo_agent::run();
    }
    // This program is the one the `demo` backend's `{self}` names.
    agent_loop::process::this_program_serves_demo_agent();
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => return usage_error(e),
    };
    if let Some(e) = near_miss(&args).or_else(|| task_and_subcommand(&args)) {
        return early_fail(&e);
    }
    if args.command.is_some() && !args.run.image.is_empty() {
        return early_fail(&Error::config(
            "--image attaches to a task of a run; a subcommand takes none (an editor sends \
             images itself through agent-loop acp)",
        ));
    }
    match args.command {
        Some(Command::Completions { shell }) => {
            use clap_complete::shells::{Bash, Fish, Zsh};
            // Generated whole, then written: clap_complete panics on a closed pipe.
            let (command, mut out) = (&mut Args::command(), Vec::new());
            match shell {
                CompletionShell::Bash => {
                    clap_complete::generate(Bash, command, "agent-loop", &mut out)
                }
                CompletionShell::Zsh => {
                    clap_complete::generate(Zsh, command, "agent-loop", &mut out)
                }
                CompletionShell::Fish => {
                    clap_complete::generate(Fish, command, "agent-loop", &mut out)
                }
            }
            return match super::stdout::print(&String::from_utf8_lossy(&out)) {
                Ok(()) => 0,
                Err(e) => fail(&e),
            };
        }
        Some(Command::Config) => {
            return match load_settings(&args).and_then(|s| super::config_cmd::run(&args, &s)) {
                Ok(()) => 0,
                Err(e) => fail(&e),
            }
        }
        Some(Command::ImportSpec { file, out, force }) => {
            return match super::import_spec::run(&file, out.as_deref(), force) {
                Ok(()) => 0,
                Err(e) => fail(&e),
            }
        }
        Some(Command::Sessions { action }) => {
            return match super::sessions_cmd::run(action) {
                Ok(()) => 0,
                Err(e) => fail(&e),
            }
        }
        Some(Command::Backends)
        | Some(Command::Mcp { .. })
        | Some(Command::Doctor { .. })
        | Some(Command::Telegram(_))
        | Some(Command::Acp(_))
        | None => {}
    }
    // The watchdog's pipe; it is forked when the first child starts. Without it children
    // still die with agent-loop, theirs may not.
    if let Err(e) = agent_loop::process::watchdog::start() {
        eprintln!("agent-loop: warning: cannot start the watchdog that kills what tools and backends started if agent-loop is killed: {e}");
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        // A run watches a handful of descriptors (a backend's pipes, its pidfd, signals, a
        // socket or two); tokio's default buffer of 1,024 events is 12 KB of fresh pages.
        .max_io_events_per_tick(64)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return fail(&Error::new(
                ErrorKind::Io,
                format!("cannot start the runtime: {e}"),
            ))
        }
    };
    let code = match &args.command {
        Some(Command::Backends) => runtime.block_on(backends(&args)),
        Some(Command::Doctor {
            backend,
            backend_flag,
        }) => runtime.block_on(doctor(&args, &backend.clone().or(backend_flag.clone()))),
        Some(Command::Telegram(bot)) => runtime.block_on(super::telegram::run(&args, bot)),
        Some(Command::Acp(acp)) => runtime.block_on(super::acp::run(&args, acp)),
        Some(Command::Mcp {
            action: McpAction::Serve(serve),
        }) => runtime.block_on(super::mcp_serve::run(&args, serve)),
        Some(Command::Mcp { action }) => {
            match runtime.block_on(super::mcp::account(action, args.run.config.as_deref())) {
                Ok(()) => 0,
                Err(e) => fail(&e),
            }
        }
        _ => runtime.block_on(run(args)),
    };
    // Everything that matters is done and flushed: do not wait for the blocking pool (a
    // stuck read of a file or a terminal must not keep the process alive after `exit`).
    runtime.shutdown_background();
    code
}

/// A command line clap cannot parse: reported by clap, or as a JSON `error` record when JSON
/// lines were asked for, so `| jq` still reads it.
fn usage_error(e: clap::Error) -> i32 {
    use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
    let argv: Vec<_> = std::env::args_os().collect();
    if let Some(unquoted) = unquoted(&e, &argv) {
        return early_fail(&unquoted);
    }
    if matches!(e.kind(), DisplayHelp | DisplayVersion) {
        // Printed here, not by `e.exit()`, which would take a closed pipe for success.
        return match e.print() {
            Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => {
                super::signals::Stop::Closed.exit_code()
            }
            _ => e.exit_code(),
        };
    }
    if !jsonl_requested(&argv, std::env::var_os("AGENT_LOOP_OUTPUT").as_deref()) {
        e.exit();
    }
    let text = e.render().to_string();
    let message = text.trim_end().trim_start_matches("error: ");
    Screen::jsonl().fail(&Error::config(message))
}

/// A one-word task that is a slip for a subcommand (`agent-loop sesions`) would spend a turn
/// on it: refused, unless `--` before it says it is a task.
fn near_miss(args: &Args) -> Option<Error> {
    let task = args
        .run
        .task
        .as_deref()
        .filter(|t| !t.contains(char::is_whitespace))?;
    if args.command.is_some() || std::env::args_os().any(|a| a == "--") {
        return None;
    }
    let command = Args::command();
    let names = command.get_subcommands().map(|c| c.get_name());
    let near = agent_loop::text::closest(task, names)?;
    Some(Error::config(format!(
        "`{task}` is not a subcommand: did you mean `{near}`? To send it as the task, put `--` \
         before it: agent-loop -- {task}"
    )))
}

/// A task typed without quotes (`agent-loop list the files here`): clap reads its second word
/// as a subcommand, and says only that `the` is none. Words are not joined into the task
/// instead: a task that starts with a subcommand's name (`help me ...`, `config ...`) would
/// then run the subcommand. The error says to quote the task, with the words quoted.
fn unquoted(e: &clap::Error, argv: &[OsString]) -> Option<Error> {
    use clap::error::{ContextKind, ContextValue};
    if e.kind() != clap::error::ErrorKind::InvalidSubcommand {
        return None;
    }
    let Some(ContextValue::String(word)) = e.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    let at = argv.iter().rposition(|a| a == word.as_str())?;
    // What clap read before the word: the task's first word.
    let task = Args::try_parse_from(&argv[..at]).ok()?.run.task?;
    Some(quote_it(&task, argv, at, "is none"))
}

/// A task and a subcommand both given (`agent-loop explain backends` ran `backends`): the
/// words were meant as one task, or the subcommand alone.
fn task_and_subcommand(args: &Args) -> Option<Error> {
    let task = args
        .run
        .task
        .as_deref()
        .filter(|_| args.command.is_some())?;
    let argv: Vec<OsString> = std::env::args_os().collect();
    let after = argv.iter().position(|a| a == task)?;
    let command = Args::command();
    let names: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
    let at = after
        + argv[after..]
            .iter()
            .position(|a| names.iter().any(|n| a == *n))?;
    Some(quote_it(
        task,
        &argv,
        at,
        "runs without a task: leave the task out",
    ))
}

/// The error for a task given as several words: `task`, the words clap read as the task, and
/// those of `argv` from `at`, where clap read a subcommand (`what` it says of it), but the
/// flags.
fn quote_it(task: &str, argv: &[OsString], at: usize, what: &str) -> Error {
    let mut words = vec![task.to_string()];
    words.extend(
        argv[at..]
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .filter(|a| !a.starts_with('-')),
    );
    Error::config(format!(
        "the task is one argument: put it in quotes, agent-loop \"{}\" (with the flags as \
         they were); `{}` after the task was read as a subcommand, which {what}",
        words.join(" "),
        argv[at].to_string_lossy()
    ))
}

/// `agent-loop backends`.
async fn backends(args: &Args) -> i32 {
    let config = match agent_loop::chat::Chat::load_config(args.run.config.as_deref()) {
        Ok(config) => config,
        Err(e) => return fail(&e.into()),
    };
    match super::backends_cmd::table(&config).await {
        Ok(table) => {
            let text = format!("{table}\n{}\n", agent_loop::chat::Chat::web_search_status());
            match super::stdout::print(&text) {
                Ok(()) => 0,
                Err(e) => fail(&e),
            }
        }
        Err(e) => fail(&e),
    }
}

/// `agent-loop doctor [BACKEND]`: the report, then a last line `ok` (exit 0) or `failed: WHY`
/// (exit 1 when the backend cannot be run or reports an error, 2 for bad usage).
async fn doctor(args: &Args, name: &Option<String>) -> i32 {
    let (text, failure) = match doctor_report(args, name).await {
        Ok((report, None)) => (report + "ok\n", None),
        Ok((report, Some(why))) => (format!("{report}failed: {why}\n"), Some(1)),
        Err(e) => (
            format!("failed: {}\n", e.message),
            Some(super::outcome::exit_code(&e)),
        ),
    };
    match super::stdout::print(&text) {
        Ok(()) => failure.unwrap_or(0),
        Err(e) => fail(&e),
    }
}

async fn doctor_report(
    args: &Args,
    name: &Option<String>,
) -> Result<(String, Option<String>), Error> {
    let config = Chat::load_config(args.run.config.as_deref())?;
    let name = match name {
        Some(name) => name.clone(),
        // The backend a run would take.
        None => {
            let setting = load_run_settings(args)?.0.backend;
            match &setting {
                Some(setting) => Chat::check_backend_setting(&config, setting)?,
                None => Chat::check_default_backend(&config)?,
            }
            Chat::backend_to_run(&config, setting.map(|s| s.value)).ok_or_else(|| {
                Error::config(
                    "no backend chosen, and none of the configured ones is available: \
                     name one (`agent-loop doctor NAME`; `agent-loop doctor demo` checks the \
                     built-in offline demo); `agent-loop backends` lists them",
                )
            })?
        }
    };
    let model = args.request.model.clone();
    Chat::doctor(&config, &name, model).await
}

fn fail(error: &Error) -> i32 {
    eprintln!("agent-loop: error: {error}");
    super::outcome::exit_code(error)
}

/// An error before the display exists: a JSON record too when JSON lines were asked for.
fn early_fail(e: &Error) -> i32 {
    let argv: Vec<_> = std::env::args_os().collect();
    if jsonl_requested(&argv, std::env::var_os("AGENT_LOOP_OUTPUT").as_deref()) {
        Screen::jsonl().fail(e)
    } else {
        fail(e)
    }
}

async fn run(args: Args) -> i32 {
    // The display first, so that a bad setting of the library's is reported by it (a JSON
    // record when config.toml asks for JSON lines).
    let layers = match read_layers() {
        Ok(layers) => layers,
        Err(e) => return early_fail(&e),
    };
    let screen = match screen_settings(&layers, &args) {
        Ok(screen) => screen,
        Err(e) => return early_fail(&e),
    };
    let display = match Screen::for_args(&args, &screen) {
        Ok(display) => display,
        Err(e) => return early_fail(&e),
    };
    let settings = match run_settings(&layers, &args) {
        Ok(run) => Settings {
            run,
            screen,
            layers,
        },
        Err(e) => return display.fail(&e),
    };
    let task = match args.run.task.as_deref() {
        Some("-") => Some(read_stdin_task()),
        // As an empty stdin is: a turn of nothing costs tokens and does nothing.
        Some(task) if task.trim().is_empty() => Some(Err(Error::config(
            "no task: the task given was empty (give the task, or leave it out for the REPL)",
        ))),
        Some(task) => Some(Ok(task.to_string())),
        None if !std::io::stdin().is_terminal() => Some(read_stdin_task()),
        None => None,
    };
    let task = match task.transpose() {
        Ok(task) => task,
        Err(e) => return display.fail(&e),
    };
    // Every image is read and checked before the backend is even put together.
    let images: Result<Vec<_>, _> = args.run.image.iter().map(|p| Image::read(p)).collect();
    let images = match images {
        Ok(images) => images,
        Err(e) => return display.fail(&e),
    };
    let mut input = match task.is_none().then(|| display.view_entries()).flatten() {
        Some(entries) => Input::entries(entries),
        None => Input::stdin(),
    };
    if task.is_none() {
        input.editor = display.editor_caps().and_then(Editor::new);
    }
    let mut frontend = Frontend::new(display.clone(), input, Redactor::default());
    frontend.debug = settings.run.debug();
    if frontend.debug {
        for line in settings.describe().lines() {
            frontend.notice(&format!("debug: {line}"));
        }
    }
    let chat = match Chat::open(&settings.run, &chat_options(&args), &mut |n| {
        frontend.notice(n)
    }) {
        Ok(chat) => chat,
        Err(e) => return display.fail(&with_wait_hint(e)),
    };
    frontend.redactor = chat.redactor().clone();
    if task.is_none() {
        equip_editing(&chat, &mut frontend, !args.saving.no_save);
    }
    if frontend.debug {
        let files = chat.config_sources().join(", ");
        frontend.notice(&format!("debug: backends read from {files}"));
    }
    let mut app = App::new(chat, frontend);
    app.attach(images);
    app.announce_session();
    for notice in app.chat_mut().start_mcp().await {
        display.notice(&notice);
    }
    app.install_signals();
    let code = match task {
        Some(task) => one_shot(&mut app, &task).await,
        None => repl::run(&mut app).await,
    };
    app.chat_mut().shutdown().await;
    display.leave();
    code
}

/// The REPL's history and Tab's completions, for its line editor or the view's input line.
/// The line editor's history and completions. With `--no-save` the history is kept for this
/// run only: nothing typed is written to the history file, as nothing is to a session.
/// A run refused a session another run holds is told of `--wait-session`, the flag that
/// waits instead; the library's message does not name it, as other front ends have none.
fn with_wait_hint(mut e: Error) -> Error {
    let in_use = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<SessionError>())
        .is_some_and(|s| matches!(s, SessionError::InUse { .. }));
    if in_use {
        e.message
            .push_str(", or pass --wait-session to wait for it");
    }
    e
}

fn equip_editing(chat: &Chat, frontend: &mut Frontend, save: bool) {
    let file = history::default_file().filter(|_| save);
    let history = History::open(file, chat.redactor().clone());
    let completer = Completer {
        backends: chat.backend_names(),
        sessions: chat.sessions_dir().map(std::path::Path::to_path_buf),
    };
    match &mut frontend.input.editor {
        Some(editor) => {
            editor.history = history;
            editor.completer = completer;
        }
        None => frontend.display.equip(history, completer),
    }
}

fn read_stdin_task() -> Result<String, Error> {
    let mut task = String::new();
    std::io::stdin().read_to_string(&mut task).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot read the task from stdin: {e}"),
        )
    })?;
    let task = task.trim().to_string();
    if task.is_empty() {
        return Err(Error::config(
            "no task: stdin was empty (pass the task as an argument, or pipe it in)",
        ));
    }
    Ok(task)
}

/// The exit code of a one-shot turn in which a tool call was refused because approval could
/// not be asked (no terminal, or JSON lines) and the agent then ended: what was asked for may
/// not be done, and a script must be able to tell. The same rule for every backend type:
/// agent-loop's own tools and an agent's questions relayed to it alike. (A "no" typed at the
/// terminal is the user's own decision, seen as it was made.)
const REFUSED: i32 = 4;

async fn one_shot(app: &mut App, task: &str) -> i32 {
    let outcome = app.turn(task).await;
    let refused = app.frontend().refused;
    let code = match &outcome {
        Outcome::Done(Ok(_)) => 0,
        // The error has already been shown.
        Outcome::Done(Err(e)) => super::outcome::exit_code(e),
        Outcome::Cancelled(stop) => stop.exit_code(),
    };
    // A backend that failed after a refusal (a TUI whose turn ended without an answer) failed
    // because of it; other codes (bad usage, a turn that would not end, a signal) say more.
    let not_done = refused > 0 && (code == 0 || code == 1);
    if not_done {
        app.notice(&format!(
            "[not done: {} refused: approval cannot be asked here (no terminal, or --output \
             jsonl); pass --yes, or --allow TOOL for the tools you trust]",
            agent_loop::text::plural::count(refused, "tool call", "tool calls")
        ));
    }
    let line = app.summary_line();
    app.notice(&line);
    if not_done {
        REFUSED
    } else {
        code
    }
}
