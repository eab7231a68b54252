//! From the command line to the library's inputs: the [`Settings`] (config.toml and the
//! environment, each value typed once, with the flags' typed values on top) and the
//! [`ChatOptions`] the flags ask for. Every front end of the binary (one-shot runs, the REPL,
//! the Telegram bot, the ACP and MCP servers) builds its chats from these.

use agent_loop::chat::{ChatOptions, RunSettings, SessionChoice};
use agent_loop::settings::user_settings_path;
use agent_loop::settings::{by_flag, table, FrontEndKeys, Layers, List, Setting};
use agent_loop::Error;

use super::args::{Args, Request, Run, Saving, ServeRun, Tooling};
use super::display::{DisplayMode, OutputFormat};

/// A run's settings: the library's ([`RunSettings`]), the display's, and the layers they were
/// read from, where the Telegram bot finds its own.
#[derive(Debug, Clone)]
pub struct Settings {
    pub run: RunSettings,
    pub screen: ScreenSettings,
    pub layers: Layers,
}

/// The display's settings, which the library does not know.
#[derive(Debug, Clone)]
pub struct ScreenSettings {
    pub display: Option<Setting<DisplayMode>>,
    pub output: Option<Setting<OutputFormat>>,
}

impl Settings {
    /// The table of `agent-loop config` and `--debug`: the library's settings, the display's,
    /// then the Telegram bot's as config.toml and the environment give them.
    pub fn describe(&self) -> String {
        let bot = super::telegram::settings::SETTINGS
            .keys
            .iter()
            .map(|k| k.name);
        table(
            self.run
                .shown()
                .into_iter()
                .chain([
                    ("display", Setting::shown(&self.screen.display)),
                    ("output", Setting::shown(&self.screen.output)),
                ])
                .chain(self.layers.shown(bot)),
        )
    }
}

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
        session: match (&args.saving.session, args.saving.continue_) {
            (_, true) => SessionChoice::MostRecent,
            (Some(name), false) => SessionChoice::Named(name.clone()),
            (None, false) => SessionChoice::New,
        },
        save: !args.saving.no_save,
        log: args.saving.log.clone(),
        wait_session: args.saving.wait_session,
        started_by: None,
        own_sessions_only: None,
        secret_envs: Vec::new(),
        // One set for the run: the chats of a front end that hosts many (ACP sessions, MCP
        // asks, Telegram chats) are opened with clones of these options.
        http: Default::default(),
    }
}

/// The settings of the binary's front ends, which the library does not know.
const FRONT_ENDS: &[FrontEndKeys] = &[
    super::display::choose::SETTINGS,
    super::telegram::settings::SETTINGS,
];

/// Settings from config.toml and the environment, with this run's flags on top: the
/// library's and the display's.
pub fn load_settings(args: &Args) -> Result<Settings, Error> {
    let layers = read_layers()?;
    Ok(Settings {
        screen: screen_settings(&layers, args)?,
        run: run_settings(&layers, args)?,
        layers,
    })
}

/// The library's settings from config.toml and the environment, with this run's flags on
/// top, and the layers they were read from: for the front ends that have no display of the
/// command's, whose settings they leave alone (the ACP and MCP servers, the Telegram bot).
pub fn load_run_settings(args: &Args) -> Result<(RunSettings, Layers), Error> {
    let layers = read_layers()?;
    Ok((run_settings(&layers, args)?, layers))
}

/// The text of config.toml, the environment and the defaults, for the library's settings
/// and the front ends'; an unknown setting of config.toml is an error.
pub fn read_layers() -> Result<Layers, Error> {
    Ok(Layers::load_with(
        user_settings_path().as_deref(),
        &|k| std::env::var(k).ok(),
        FRONT_ENDS,
    )?)
}

/// The display's settings, typed, with this run's flags on top.
pub fn screen_settings(layers: &Layers, args: &Args) -> Result<ScreenSettings, Error> {
    let mut display = layers.setting("display")?;
    by_flag(&mut display, args.run.display, "--display");
    let mut output = layers.setting("output")?;
    by_flag(&mut output, args.run.output, "--output");
    Ok(ScreenSettings { display, output })
}

/// The library's settings, typed, with this run's flags on top.
pub fn run_settings(layers: &Layers, args: &Args) -> Result<RunSettings, Error> {
    let mut run = RunSettings::read(layers)?;
    let (request, tooling) = (&args.request, &args.tooling);
    by_flag(&mut run.backend, args.run.backend.clone(), "--backend");
    by_flag(&mut run.model, request.model.clone(), "--model");
    by_flag(
        &mut run.max_iterations,
        tooling.max_iterations,
        "--max-iterations",
    );
    by_flag(&mut run.approval, tooling.approval, "--approval");
    by_flag(&mut run.context, request.context, "--context");
    let allow = (!tooling.allow.is_empty()).then(|| List(tooling.allow.clone()));
    by_flag(&mut run.allow, allow, "--allow");
    // `--yes` wins over `--approval`.
    let yes = tooling
        .yes
        .then_some(agent_loop::settings::ApprovalMode::Never);
    by_flag(&mut run.approval, yes, "--yes");
    let debug = tooling.debug.then_some(agent_loop::settings::Flag(true));
    by_flag(&mut run.debug, debug, "--debug");
    Ok(run)
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
            config: top.run.config.clone(),
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
