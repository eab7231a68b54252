//! Wiring: parse flags, load backends, pick one, then run one turn (a task was given or piped)
//! or a REPL (a terminal and no task). Maps every outcome to the documented exit code.

use std::io::{IsTerminal, Read};

use clap::Parser;

use agent_loop::agent::{Agent, AgentOptions};
use agent_loop::backend::CliBackend;
use agent_loop::config::Config;
use agent_loop::tools::Registry;
use agent_loop::Error;

use super::args::{Args, Command};
use super::frontend::Frontend;
use super::input::Input;
use super::screen::{jsonl_requested, Screen};

/// Exit code for Ctrl-C, as shells report SIGINT.
const INTERRUPTED: i32 = 130;

pub fn main() -> i32 {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => return usage_error(e),
    };
    if let Some(Command::DemoAgent) = args.command {
        return super::demo_agent::run();
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return fail(&Error::new(
                agent_loop::ErrorKind::Io,
                format!("cannot start the runtime: {e}"),
            ))
        }
    };
    runtime.block_on(run(args))
}

/// A command line clap cannot parse: reported by clap, or as a JSON `error` record when JSON
/// lines were asked for, so `| jq` still reads it.
fn usage_error(e: clap::Error) -> i32 {
    use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
    let argv: Vec<_> = std::env::args_os().collect();
    if matches!(e.kind(), DisplayHelp | DisplayVersion)
        || !jsonl_requested(&argv, std::env::var_os("AGENT_LOOP_OUTPUT").as_deref())
    {
        e.exit();
    }
    let text = e.render().to_string();
    let message = text.trim_end().trim_start_matches("error: ");
    Screen::jsonl().fail(&Error::config(message))
}

fn fail(error: &Error) -> i32 {
    eprintln!("agent-loop: error: {error}");
    error.exit_code()
}

async fn run(args: Args) -> i32 {
    let display = match Screen::for_args(&args) {
        Ok(display) => display,
        Err(e) => return fail(&e),
    };
    let (agent, model) = match build_agent(&args) {
        Ok(built) => built,
        Err(e) => return display.fail(&e),
    };
    display.session_start(agent.backend_name(), model.as_deref());
    let task = match args.task.as_deref() {
        Some("-") => Some(read_stdin_task()),
        Some(task) => Some(Ok(task.to_string())),
        None if !std::io::stdin().is_terminal() => Some(read_stdin_task()),
        None => None,
    };
    match task {
        Some(Ok(task)) => {
            let frontend = Frontend {
                display,
                input: Input::stdin(),
            };
            one_shot(agent, frontend, &task).await
        }
        Some(Err(e)) => display.fail(&e),
        None => {
            let frontend = Frontend {
                display,
                input: Input::stdin(),
            };
            repl(agent, frontend).await
        }
    }
}

/// The agent, and the model its backend names (for JSON lines).
fn build_agent(args: &Args) -> Result<(Agent, Option<String>), Error> {
    let config = Config::load(args.config.as_deref())?;
    let name = args
        .backend
        .clone()
        .or_else(|| config.default_backend.clone())
        .ok_or_else(|| {
            Error::config(format!(
                "no backend chosen: pass --backend NAME, set AGENT_LOOP_BACKEND, or set \
                 default_backend in backends.toml. Configured backends: {}. \
                 To try agent-loop without installing anything: agent-loop --backend demo \"list the files here\"",
                config.backends.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })?;
    let def = config.backend(&name)?;
    let model = def.model.clone();
    let backend = CliBackend::new(def.clone())?;
    let tools = Registry::builtin(args.tools.as_deref())?;
    let cwd = std::env::current_dir()
        .map_err(|e| Error::config(format!("cannot read the working directory: {e}")))?;
    let agent = Agent::new(
        Box::new(backend),
        tools,
        AgentOptions {
            max_iterations: args.max_iterations,
            auto_approve: args.yes,
            cwd,
        },
    );
    Ok((agent, model))
}

fn read_stdin_task() -> Result<String, Error> {
    let mut task = String::new();
    std::io::stdin().read_to_string(&mut task).map_err(|e| {
        Error::new(
            agent_loop::ErrorKind::Io,
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

async fn one_shot(mut agent: Agent, mut frontend: Frontend, task: &str) -> i32 {
    let screen = frontend.display.clone();
    let result = tokio::select! {
        result = agent.run_turn(task, &mut frontend) => result,
        never = screen.animate() => match never {},
        _ = tokio::signal::ctrl_c() => {
            frontend.display.notice("interrupted: the backend and any running tool were stopped");
            return INTERRUPTED;
        }
    };
    match result {
        Ok(_) => 0,
        // The error event has already been shown.
        Err(e) => e.exit_code(),
    }
}

async fn repl(mut agent: Agent, mut frontend: Frontend) -> i32 {
    let screen = frontend.display.clone();
    frontend.display.notice(&format!(
        "agent-loop with backend `{}`. Type a task; `clear` forgets the conversation; `exit`, `quit` or Ctrl-D leaves.",
        agent.backend_name()
    ));
    loop {
        frontend.display.prompt("You: ");
        let line = tokio::select! {
            line = frontend.input.line() => line,
            _ = tokio::signal::ctrl_c() => {
                frontend.display.notice("");
                return INTERRUPTED;
            }
        };
        let Some(line) = line else {
            frontend.display.notice("");
            return 0;
        };
        match line.trim() {
            "" => continue,
            "exit" | "quit" => return 0,
            "clear" => {
                agent.clear();
                frontend.display.notice("[conversation cleared]");
                continue;
            }
            _ => {}
        }
        tokio::select! {
            _ = agent.run_turn(line.trim(), &mut frontend) => {}
            never = screen.animate() => match never {},
            _ = tokio::signal::ctrl_c() => {
                frontend.display.notice("[turn cancelled: the backend and any running tool were stopped]");
            }
        }
    }
}
