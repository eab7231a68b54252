//! From the command line to the library's inputs: the [`Settings`] (config.toml and the
//! environment, with the flags layered on top) and the [`ChatOptions`] the flags ask for.
//! Every front end of the binary (one-shot runs, the REPL, the Telegram bot) builds its chats
//! from these.

use agent_loop::chat::{ChatOptions, SessionChoice};
use agent_loop::settings::user_settings_path;
use agent_loop::settings::{FrontEndKeys, Settings};
use agent_loop::Error;

use super::args::{Args, Request, Run, Saving, ServeRun, Tooling};

/// The chat this run's flags ask for (the rest of its settings are in `Settings`).
pub fn chat_options(args: &Args) -> ChatOptions {
    ChatOptions {
        config: args.run.config.clone(),
        temperature: args.request.temp,
        no_stream: args.request.no_stream,
        system: args.run.system.clone(),
        tools: args.tooling.tools.clone(),
        root: args.tooling.root.clone(),
        cwd: None,
        yes: args.tooling.yes,
        allow: args.tooling.allow.clone(),
        session: match (&args.saving.session, args.saving.continue_) {
            (_, true) => SessionChoice::MostRecent,
            (Some(name), false) => SessionChoice::Named(name.clone()),
            (None, false) => SessionChoice::New,
        },
        save: !args.saving.no_save,
        log: args.saving.log.clone(),
        wait_session: args.saving.wait_session,
        secret_envs: Vec::new(),
    }
}

/// The settings of the binary's front ends, which the library does not know.
const FRONT_ENDS: &[FrontEndKeys] = &[
    super::display::choose::SETTINGS,
    super::telegram::settings::SETTINGS,
];

/// Settings from config.toml and the environment, with this run's flags on top.
pub fn load_settings(args: &Args) -> Result<Settings, Error> {
    let mut settings = Settings::load_with(
        user_settings_path().as_deref(),
        &|k| std::env::var(k).ok(),
        FRONT_ENDS,
    )?;
    settings.flag("backend", args.run.backend.clone());
    settings.flag("model", args.request.model.clone());
    settings.flag(
        "max_iterations",
        args.tooling.max_iterations.map(|n| n.to_string()),
    );
    settings.flag("approval", args.tooling.approval.map(|m| m.to_string()));
    if args.tooling.yes {
        settings.flag_as("approval", "never", "--yes");
    }
    settings.flag("debug", args.tooling.debug.then(|| "true".to_string()));
    settings.flag("context", args.request.context.map(|c| c.to_string()));
    settings.flag("display", args.run.display.map(|d| d.to_string()));
    settings.flag("output", args.run.output.map(|o| o.to_string()));
    if !args.tooling.allow.is_empty() {
        settings.flag(
            "allow",
            Some(
                args.tooling
                    .allow
                    .iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
        );
    }
    Ok(settings)
}

/// The flags given before a subcommand (`telegram`, `acp`) and after it, as one command line
/// (those after win).
pub fn merged(top: &Args, sub: &ServeRun) -> Args {
    let (a, b) = (&top.tooling, &sub.tooling);
    let (c, d) = (&top.request, &sub.request);
    Args {
        run: Run {
            task: None,
            backend: sub.backend.clone().or_else(|| top.run.backend.clone()),
            config: sub.config.clone().or_else(|| top.run.config.clone()),
            system: top.run.system.clone(),
            help: None,
            display: None,
            output: None,
            quiet: false,
            tail: None,
            image: Vec::new(),
        },
        tooling: Tooling {
            yes: a.yes || b.yes,
            approval: b.approval.or(a.approval),
            allow: a.allow.iter().chain(&b.allow).cloned().collect(),
            root: b.root.clone().or_else(|| a.root.clone()),
            tools: b.tools.clone().or_else(|| a.tools.clone()),
            max_iterations: b.max_iterations.or(a.max_iterations),
            debug: a.debug || b.debug,
        },
        request: Request {
            model: d.model.clone().or_else(|| c.model.clone()),
            temp: d.temp.or(c.temp),
            no_stream: c.no_stream || d.no_stream,
            context: d.context.or(c.context),
            verbose: c.verbose || d.verbose,
        },
        saving: Saving {
            session: None,
            continue_: false,
            log: None,
            no_save: false,
            wait_session: false,
        },
        command: None,
    }
}
