//! The program's state between turns: the agent, the configured backends, the session it is
//! saved to and the front end. One-shot runs and the REPL share it.

use std::time::Duration;

use agent_loop::agent::{Agent, AgentOptions, AllowRule, ApprovalMode, Policy};
use agent_loop::backend::{self, Overrides};
use agent_loop::config::settings::Settings;
use agent_loop::config::{Config, Definition};
use agent_loop::context::{Artifacts, ContextMode};
use agent_loop::mcp::McpServers;
use agent_loop::session::{format_time, Log, Redactor, Session, Store};
use agent_loop::tools::{Registry, Root};
use agent_loop::{Error, ErrorKind};

use super::args::Args;
use super::frontend::Frontend;
use super::signals::{Signals, Stop};

/// How a turn ended, for the caller's exit code.
pub enum Outcome {
    Done(Result<String, Error>),
    /// A signal stopped the turn.
    Cancelled(Stop),
}

pub struct App {
    pub agent: Agent,
    pub config: Config,
    /// The current backend's definition (for `/model` and the session file).
    pub def: Definition,
    /// `--model`, `--temp`, `--no-stream` (and `/model`), applied to every backend used.
    pub overrides: Overrides,
    /// Where sessions are saved; `None` with `--no-save`.
    pub store: Option<Store>,
    pub session: Session,
    pub frontend: Frontend,
    /// `--log FILE`, which replaces the session's own log.
    log_override: Option<std::path::PathBuf>,
    /// The approval mode to go back to after `/yes off`.
    pub base_mode: ApprovalMode,
    /// The MCP servers started for this run (none until `run` starts them).
    pub mcp: McpServers,
    /// `--backend a,b,c`: every task runs on all of these at once.
    pub fanout: Option<Vec<String>>,
    /// The last comparison's answers, for `/pick` (until the next turn).
    pub compared: Option<super::fanout::Compared>,
    /// Ctrl-C, SIGTERM and SIGHUP; installed once the MCP servers have started, so that until
    /// then they end the run as usual.
    pub signals: Signals,
}

impl App {
    pub fn build(args: &Args, settings: &Settings, mut frontend: Frontend) -> Result<App, Error> {
        let config = Config::load(args.run.config.as_deref())?;
        // Every API key any backend reads is kept out of displays, logs and session files.
        frontend.redactor = Redactor::from_env(config.api_key_envs());
        if frontend.debug {
            frontend.notice(&format!(
                "debug: backends read from {}",
                config.sources.join(", ")
            ));
        }
        let store = if args.saving.no_save {
            None
        } else {
            Store::default_dir().map(Store::new)
        };
        let lookup = store
            .clone()
            .or_else(|| Store::default_dir().map(Store::new));
        let resumed = resume(args, lookup.as_ref(), &mut frontend)?;
        // An explicit flag, then the resumed session's backend, then the settings and files.
        let resumed_backend = resumed
            .as_ref()
            .map(|s| s.backend.clone())
            .filter(|b| config.has(b));
        let name = match args.run.backend.clone().or(resumed_backend) {
            Some(name) => name,
            None => settings
                .get::<String>("backend")?
                .or_else(|| config.default_backend.clone())
                .or_else(|| config.first_available())
                .ok_or_else(|| no_backend(&config))?,
        };
        // `a,b,c`: a comparison on every task; the first one is the session's backend.
        let fanout = name.contains(',').then(|| {
            name.split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        });
        if let Some(names) = &fanout {
            for n in names {
                config.backend(n)?;
            }
        }
        let name = fanout
            .as_ref()
            .and_then(|n| n.first().cloned())
            .unwrap_or(name);
        let def = config.backend(&name)?.clone();
        let overrides = Overrides {
            model: settings.get::<String>("model")?,
            temperature: args.request.temp,
            no_stream: args.request.no_stream,
        };
        let backend = backend::build(&def, &overrides)?;
        let tools = Registry::builtin(args.tooling.tools.as_deref())?;
        let cwd = std::env::current_dir()
            .map_err(|e| Error::config(format!("cannot read the working directory: {e}")))?;
        let root =
            Root::new(args.tooling.root.as_deref().unwrap_or(&cwd)).map_err(Error::config)?;
        let base_mode = if args.tooling.yes {
            ApprovalMode::Never
        } else {
            settings
                .get::<ApprovalMode>("approval")?
                .unwrap_or_default()
        };
        let allow = match (&args.tooling.allow[..], settings.raw("allow")) {
            ([], Some((rules, origin))) => rules
                .split(',')
                .filter(|r| !r.trim().is_empty())
                .map(|r| {
                    r.trim()
                        .parse()
                        .map_err(|e| Error::config(format!("{origin}: {e}")))
                })
                .collect::<Result<Vec<AllowRule>, Error>>()?,
            (flags, _) => flags.to_vec(),
        };
        let max_iterations = settings.get::<u32>("max_iterations")?.unwrap_or(10);
        if max_iterations == 0 {
            return Err(Error::config("max_iterations must be at least 1"));
        }
        let mut context = def.context();
        if let Some(mode) = settings.get::<ContextMode>("context")? {
            context.mode = mode;
        }
        if let Some(n) = settings.get::<u64>("max_context_tokens")? {
            context.max_tokens = n;
        }
        if let Some(n) = settings.get::<usize>("tool_result_max_chars")? {
            context.tool_result_max_chars = n.max(1);
        }
        let web = agent_loop::tools::WebOptions::from_settings(settings)?;
        let mut agent = Agent::new(
            backend,
            tools,
            AgentOptions {
                max_iterations,
                policy: Policy::new(base_mode, allow),
                cwd,
                root,
                context,
                // Set for the session below, once its name is known.
                artifacts: Artifacts::new(std::env::temp_dir()),
                web,
            },
        );
        let session = match resumed {
            Some(s) => {
                agent.restore(s.conversation.clone(), s.turns, s.usage);
                s
            }
            None => {
                let session_name = match (&args.saving.session, &lookup) {
                    (Some(n), Some(store)) => store.free_name(n),
                    (Some(n), None) => n.clone(),
                    (None, Some(store)) => store.fresh_name(),
                    (None, None) => "unsaved".into(),
                };
                Session::new(&session_name, &name)
            }
        };
        let mut app = App {
            agent,
            config,
            def,
            overrides,
            store,
            session,
            frontend,
            log_override: args.saving.log.clone(),
            base_mode,
            mcp: McpServers::default(),
            fanout: fanout.filter(|n| n.len() > 1),
            compared: None,
            signals: Signals::default(),
        };
        app.session.backend = app.def.name().to_string();
        app.open_log()?;
        Ok(app)
    }

    /// Points the front end's log at `--log FILE` or the session's own `log.jsonl`.
    fn open_log(&mut self) -> Result<(), Error> {
        let path = match (&self.log_override, &self.store) {
            (Some(path), _) => path.clone(),
            (None, Some(store)) => store.folder(&self.session.name).join("log.jsonl"),
            (None, None) => {
                self.frontend.log = None;
                return self.sync_context();
            }
        };
        // A session's own log is only created once it has something to say, so a failure to
        // create the folder is reported at the first save, not here.
        self.frontend.log = match Log::open(&path, self.frontend.redactor.clone()) {
            Ok(log) => Some(log),
            Err(e) if self.log_override.is_some() => return Err(e),
            Err(_) => None,
        };
        self.sync_context()
    }

    /// Where this session's cut tool outputs go: its own folder, or a temporary one when
    /// nothing is saved.
    fn artifacts(&self) -> Artifacts {
        match &self.store {
            Some(store) => Artifacts::new(store.folder(&self.session.name).join("artifacts")),
            None => Artifacts::new(
                std::env::temp_dir().join(format!("agent-loop-{}-artifacts", std::process::id())),
            ),
        }
    }

    fn sync_context(&mut self) -> Result<(), Error> {
        let artifacts = self.artifacts();
        self.agent.set_artifacts(artifacts);
        let ctx = &mut self.frontend.context;
        ctx.session = self.session.name.clone();
        ctx.backend = self.def.name().to_string();
        ctx.model = self
            .overrides
            .model
            .clone()
            .or_else(|| self.def.model().map(str::to_string));
        ctx.turn = self.agent.turns();
        Ok(())
    }

    /// Runs one turn; Ctrl-C cancels it (the backend and tools are killed) and records that.
    /// The session is saved either way.
    pub async fn turn(&mut self, input: &str) -> Outcome {
        self.compared = None;
        if let Some(names) = self.fanout.clone() {
            return super::fanout::compare(self, &names, input).await;
        }
        let screen = self.frontend.display.clone();
        let outcome = tokio::select! {
            result = self.agent.run_turn(input, &mut self.frontend) => Outcome::Done(result),
            never = screen.animate() => match never {},
            stop = self.signals.next() => Outcome::Cancelled(stop),
        };
        if let Outcome::Cancelled(stop) = outcome {
            self.agent.mark_cancelled();
            self.frontend.notice(&cancelled_notice(stop));
        }
        if let Err(e) = self.save() {
            self.frontend.notice(&format!("error: {e}"));
            if let Outcome::Done(Ok(_)) = outcome {
                return Outcome::Done(Err(e));
            }
        }
        outcome
    }

    /// Writes the session file (atomically, redacted); a failure leaves the conversation in
    /// memory and says where it could not be written.
    pub fn save(&mut self) -> Result<(), Error> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        self.session.conversation = self.agent.conversation.clone();
        self.session.turns = self.agent.turns();
        self.session.usage = self.agent.totals;
        self.session.backend = self.def.name().to_string();
        self.session.model = self.model();
        let result = store.save(&mut self.session, &self.frontend.redactor);
        if result.is_ok() && self.frontend.log.is_none() && self.log_override.is_none() {
            self.open_log()?;
        }
        result
    }

    /// Switches to another configured backend, keeping the conversation.
    pub fn switch_backend(&mut self, name: &str) -> Result<(), Error> {
        let def = self.config.backend(name)?.clone();
        self.use_def(def)?;
        // One backend from now on, also after `--backend a,b`.
        self.fanout = None;
        Ok(())
    }

    /// Sets the model (an API's model, or the value of `{model}` in a CLI's args).
    pub fn set_model(&mut self, model: &str) -> Result<(), Error> {
        let previous = self.overrides.model.replace(model.to_string());
        let result = self.use_def(self.def.clone());
        if result.is_err() {
            self.overrides.model = previous;
        }
        result
    }

    /// The model in use: `--model` or `/model`, else the backend's own.
    pub fn model(&self) -> Option<String> {
        self.overrides
            .model
            .clone()
            .or_else(|| self.def.model().map(str::to_string))
    }

    fn use_def(&mut self, def: Definition) -> Result<(), Error> {
        let backend = backend::build(&def, &self.overrides)?;
        self.agent.set_backend(backend);
        self.def = def;
        self.sync_context()
    }

    /// `/clear`: a new, empty session; the old one stays saved.
    pub fn new_session(&mut self) -> Result<(), Error> {
        self.save()?;
        let name = self
            .store
            .as_ref()
            .map_or_else(|| "unsaved".into(), |s| s.fresh_name());
        self.session = Session::new(&name, self.def.name());
        self.agent
            .restore(Default::default(), 0, Default::default());
        self.open_log()
    }

    /// `/load NAME`: continue another saved session.
    pub fn load_session(&mut self, name: &str) -> Result<(), Error> {
        let store = self
            .store
            .clone()
            .ok_or_else(|| Error::config("sessions are not saved (--no-save)"))?;
        let session = store.load(name)?.ok_or_else(|| {
            Error::config(format!(
                "no session named `{name}` in {}",
                store.dir().display()
            ))
        })?;
        self.save()?;
        self.agent
            .restore(session.conversation.clone(), session.turns, session.usage);
        self.session = session;
        self.open_log()
    }

    /// `/save NAME`: a copy of this conversation under another name; this session goes on.
    pub fn save_as(&mut self, name: &str) -> Result<(), Error> {
        let store = self
            .store
            .clone()
            .ok_or_else(|| Error::config("sessions are not saved (--no-save)"))?;
        agent_loop::session::validate_name(name)?;
        self.save()?;
        let mut copy = self.session.clone();
        copy.name = name.to_string();
        copy.conversation = self.agent.conversation.clone();
        store.save(&mut copy, &self.frontend.redactor)
    }

    /// `[session NAME: 3 turns, tokens in 1234 / out 56, $0.0123]`.
    pub fn summary_line(&self) -> String {
        let t = &self.agent.totals;
        let turns = self.agent.turns();
        let mut line = format!(
            "[session {}: {turns} turn{}, tokens in {} / out {}",
            self.session.name,
            if turns == 1 { "" } else { "s" },
            t.input,
            t.output
        );
        if t.cost > 0.0 {
            line.push_str(&format!(", ${:.4}", t.cost));
        }
        if self.store.is_none() {
            line.push_str(", not saved");
        }
        line.push(']');
        line
    }
}

/// The session to continue, if `--continue` or `--session NAME` names a readable one. A file
/// that cannot be read is reported and left alone; the caller starts a new session.
fn resume(
    args: &Args,
    store: Option<&Store>,
    frontend: &mut Frontend,
) -> Result<Option<Session>, Error> {
    let Some(store) = store else {
        return Ok(None);
    };
    let name = if args.saving.continue_ {
        match store.most_recent() {
            Some(name) => name,
            None => {
                frontend.notice("[no saved session to continue: starting a new one]");
                return Ok(None);
            }
        }
    } else if let Some(name) = &args.saving.session {
        agent_loop::session::validate_name(name)?;
        name.clone()
    } else {
        return Ok(None);
    };
    match store.load(&name) {
        Ok(Some(session)) => {
            frontend.notice(&format!(
                "[continuing session {} ({} turns, last used {})]",
                session.name,
                session.turns,
                format_time(session.updated)
            ));
            Ok(Some(session))
        }
        Ok(None) => Ok(None),
        Err(e) => {
            frontend.notice(&format!(
                "error: {e}. It is left untouched; starting a new session instead."
            ));
            Ok(None)
        }
    }
}

fn no_backend(config: &Config) -> Error {
    Error::new(
        ErrorKind::Config,
        format!(
            "no backend chosen, and none of the configured ones is available (installed, or \
             with its API key set): pass --backend NAME, set AGENT_LOOP_BACKEND, or set `backend` \
             in config.toml. Configured backends: {}. \
             To try agent-loop without installing anything: agent-loop --backend demo \"list the files here\"",
            config.names().collect::<Vec<_>>().join(", ")
        ),
    )
}

/// How long after one Ctrl-C a second one leaves the REPL.
/// What is shown when a signal cancels a turn.
pub fn cancelled_notice(stop: Stop) -> String {
    match stop {
        Stop::Interrupt => {
            "[turn cancelled: the backend and any running tool were stopped]".to_string()
        }
        _ => format!(
            "[turn cancelled by {}: the backend and any running tool were stopped]",
            stop.name()
        ),
    }
}

pub const DOUBLE_INTERRUPT: Duration = Duration::from_secs(2);
