//! [`Chat::open`]: from the settings and a front end's options to a ready chat, the session
//! resumed or started. Its stages, in order, each a function of its own: the stores sessions
//! are saved to and looked up in; the session to continue (`resume`); the backend and model
//! (`choose_backend`, then `backend`); the agent with its tools, policy, context settings and
//! system prompt (`agent`, with `tools` and `system_prompt`); the session itself
//! (`session`); and, once the chat holds them all, `Chat::ready` takes up the resumed state,
//! locks the session and opens its log.

use std::path::Path;

use super::LoadedConfig;
use crate::agent::{Agent, AgentOptions, ApprovalMode, Policy};
use crate::backend::{self, Backend, Overrides};
use crate::builtins;
use crate::config::settings::Setting;
use crate::config::{Config, Definition};
use crate::context::{Artifacts, SharedLibrary, SystemPrompt};
use crate::mcp::McpServers;
use crate::session::{
    format_time, validate_name, Contended, LogContext, Redactor, Session, SessionError,
    SessionLock, Store,
};
use crate::tools::{Registry, Root};
use crate::Error;

use super::context::ContextOverrides;
use super::options::{ChatOptions, SessionChoice};
use super::settings::{flagged, RunSettings};
use super::{Chat, ChatError};

/// How many backend calls a turn may make when the settings do not say.
const DEFAULT_MAX_ITERATIONS: u32 = 10;

impl Chat {
    /// The configuration layers (the built-in backends.toml, the user's, `extra`), with
    /// `[tools.NAME]` tables checked against the built-in tools.
    pub fn load_config(
        extra: Option<&std::path::Path>,
    ) -> Result<LoadedConfig, crate::config::ConfigError> {
        Config::load(extra, &builtins::specs()).map(LoadedConfig)
    }

    /// Puts a chat together. `notice` receives what the user should know on the way (a
    /// session continued, one that could not be read and was left alone).
    pub fn open(
        settings: &RunSettings,
        options: &ChatOptions,
        notice: &mut dyn FnMut(&str),
    ) -> Result<Chat, Error> {
        let config = Chat::load_config(options.config.as_deref())?.0;
        let stores = Stores::of(options);
        let (resumed, mut lock) = resume(options, &stores, notice)?;
        let chosen = choose_backend(settings, &config, resumed.as_ref())?;
        // `--model` given for a backend with nowhere to put it would do nothing, unsaid.
        if flagged(&settings.model) && !chosen.def.takes_model() {
            let backend = chosen.name.clone();
            let why = ChatError::TakesNoModel { backend };
            notice(&format!("warning: {why}: --model is not used"));
        }
        let overrides = Overrides {
            model: chosen.model,
            temperature: options.temperature,
            no_stream: options.no_stream,
            count_tokens: settings
                .count_tokens
                .as_ref()
                .map(|s| s.value)
                .unwrap_or_default(),
        };
        let backend = backend(&chosen.def, &overrides, &options.http)?;
        // Read once: the agent's tools are kept from them, the redactor masks their values.
        let key_envs = config.api_key_envs();
        let redactor = redactor(&config, &key_envs, options);
        let (agent, context_overrides, base_mode) = agent(
            backend,
            settings,
            options,
            &config,
            key_envs,
            &chosen.def,
            notice,
        )?;
        let (session, resumed_state) =
            session(resumed, settings, options, &stores, &chosen.name, &mut lock)?;
        let chat = Chat {
            canceller: Default::default(),
            compared: None,
            save_failed: false,
            prompt_stays: false,
            agent,
            redactor,
            config,
            def: chosen.def,
            overrides,
            http: options.http.clone(),
            context_overrides,
            store: stores.saving,
            session,
            log_path: options.log.clone(),
            log: None,
            context: LogContext::default(),
            base_mode,
            mcp: McpServers::default(),
            fanout: (chosen.names.len() > 1).then_some(chosen.names),
            lock,
            wait_session: options.wait_session,
            skill_dirs: (settings.skill_dirs.as_ref()).map_or_else(Vec::new, |s| s.value.0.clone()),
        };
        chat.ready(resumed_state, notice)
    }

    /// The last stage of [`Chat::open`]: what the resumed session ran with taken up, the
    /// session locked under its backend, its log opened.
    fn ready(
        mut self,
        resumed_state: Option<Session>,
        notice: &mut dyn FnMut(&str),
    ) -> Result<Chat, Error> {
        if let Some(mut state) = resumed_state {
            self.resume_state(&mut state);
        }
        self.lock_session(notice)?;
        self.session.backend = self.def.name().to_string();
        self.open_log()?;
        Ok(self)
    }
}

/// Where sessions are saved (`None` without saving), and where they are looked up to
/// continue one or name a new one (the default store even without saving).
struct Stores {
    saving: Option<Store>,
    lookup: Option<Store>,
}

impl Stores {
    fn of(options: &ChatOptions) -> Self {
        let saving = options
            .save
            .then(Store::default_dir)
            .flatten()
            .map(Store::new);
        let lookup = saving
            .clone()
            .or_else(|| Store::default_dir().map(Store::new));
        Stores { saving, lookup }
    }
}

/// The backend, built; the tokenizer's table is read while the first prompt is made ready.
fn backend(
    def: &Definition,
    overrides: &Overrides,
    http: &backend::HttpClients,
) -> Result<Box<dyn Backend>, Error> {
    let backend = backend::build(def, overrides, http)?;
    if let crate::context::Method::Encoding(encoding) = backend.token_method() {
        encoding.warm();
    }
    Ok(backend)
}

/// The agent: the backend with the tools (built-ins, `[tools.NAME]` command tools), the
/// approval policy (its tools kept from `key_envs`, the configuration's secrets), the
/// folders, the context settings and the system prompt. Returns the context overrides and
/// the approval mode too, which the chat keeps.
fn agent(
    backend: Box<dyn crate::backend::Backend>,
    settings: &RunSettings,
    options: &ChatOptions,
    config: &Config,
    key_envs: Vec<String>,
    def: &Definition,
    notice: &mut dyn FnMut(&str),
) -> Result<(Agent, ContextOverrides, ApprovalMode), Error> {
    let (cwd, root) = working_dirs(options)?;
    let (tools, skills) = tools(settings, options, config, &cwd, notice)?;
    let base_mode = settings.approval();
    let allow = settings
        .allow
        .as_ref()
        .map_or(Vec::new(), |rules| rules.value.0.clone());
    if let Some(rules) = &settings.allow {
        let origin = rules.origin.to_string();
        for warning in super::rules::unmatchable(&allow, &origin, &tools, config, def) {
            notice(&warning);
        }
    }
    let max_iterations = settings
        .max_iterations
        .as_ref()
        .map_or(DEFAULT_MAX_ITERATIONS, |s| s.value);
    if max_iterations == 0 {
        return Err(ChatError::NoIterations.into());
    }
    let context_overrides = ContextOverrides::from_settings(settings);
    let context = context_overrides.apply(def);
    let web = settings.web_options();
    let mut agent = Agent::new(
        backend,
        tools,
        AgentOptions {
            max_iterations,
            max_tool_calls: settings.max_tool_calls(),
            policy: Policy::new(base_mode, allow),
            cwd,
            root,
            context,
            // Set for the session below, once its name is known; until then a folder of this
            // run's own (read may open files in it).
            artifacts: Artifacts::new(
                std::env::temp_dir().join(format!("agent-loop-{}-artifacts", std::process::id())),
            ),
            web,
            env: std::sync::Arc::new(
                settings
                    .env_policy(key_envs)
                    .also_removing(options.secret_envs.iter().cloned()),
            ),
        },
    );
    agent.set_system_prompt(system_prompt(settings, options)?);
    agent.set_skills(skills);
    agent.set_budget_origin(context_overrides.budget_origin(def));
    Ok((agent, context_overrides, base_mode))
}

/// The tools: the built-ins (`--tools` picks some), `[tools.NAME]` command tools, and the
/// `skill` tool when skills are found for `cwd`, returned too; the warnings of their
/// reading go to `notice`.
fn tools(
    settings: &RunSettings,
    options: &ChatOptions,
    config: &Config,
    cwd: &Path,
    notice: &mut dyn FnMut(&str),
) -> Result<(Registry, Option<SharedLibrary>), Error> {
    let skill_dirs = settings.skill_dirs.as_ref().map_or(&[][..], |s| &s.value.0);
    let (skills, skill_warnings) = super::skills::load(cwd, skill_dirs);
    let tools = builtins::configured(
        options.tools.as_deref(),
        config.tools.command_defs(),
        &config.tools.confirms(),
        skills.as_ref(),
    )?;
    for warning in config.tools.warnings.iter().chain(&skill_warnings) {
        notice(&format!("warning: {warning}"));
    }
    Ok((tools, skills))
}

/// The user's system prompt: `--system FILE`, else the `system_prompt` setting, else
/// `system.md` in the config folder; appended or in place of the built-in opening as
/// `system_mode` says.
fn system_prompt(
    settings: &RunSettings,
    options: &ChatOptions,
) -> Result<Option<SystemPrompt>, Error> {
    Ok(SystemPrompt::load(
        options.system.as_deref(),
        settings
            .system_prompt
            .as_ref()
            .map(|s| (s.value.clone(), s.origin.to_string())),
        crate::config::config_dir().as_deref(),
        settings
            .system_mode
            .as_ref()
            .map(|s| s.value)
            .unwrap_or_default(),
    )?)
}

/// Every API key any backend reads (`key_envs`, the configuration's secrets) is kept out of
/// displays, logs and session files, and the tokens of the MCP servers logged in to.
fn redactor(config: &Config, key_envs: &[String], options: &ChatOptions) -> Redactor {
    Redactor::from_env(key_envs.iter().chain(&options.secret_envs).cloned()).with(
        config
            .mcp_servers
            .keys()
            .flat_map(|name| crate::mcp::oauth::secrets(name)),
    )
}

/// The backends a chat runs on (several for fan-out, the first the session's), the first
/// one's definition, and the model.
struct Chosen {
    names: Vec<String>,
    name: String,
    def: Definition,
    model: Option<String>,
}

fn choose_backend(
    settings: &RunSettings,
    config: &Config,
    resumed: Option<&Session>,
) -> Result<Chosen, Error> {
    // The settings' backend (a flag is one), then the resumed session's, then the files'.
    let resumed_backend = resumed.map(|s| s.backend.clone()).filter(|b| config.has(b));
    let flagged_backend = flagged(&settings.backend).then(|| value(&settings.backend));
    let name = match flagged_backend.flatten().or(resumed_backend) {
        Some(name) => name,
        None => value(&settings.backend)
            .or_else(|| config.default_backend.as_ref().map(|d| d.value.clone()))
            .or_else(|| config.first_available())
            .ok_or_else(|| no_backend(config))?,
    };
    // `a,b,c`: several backends; the first one is the session's.
    let names = match &settings.backend {
        Some(setting) if setting.value == name => config.setting_backends(setting)?,
        // Named by a backends file: a mistake in it is told with its file and line.
        _ if config
            .default_backend
            .as_ref()
            .is_some_and(|d| d.value == name) =>
        {
            config.default_backends()?.unwrap_or_default()
        }
        _ => config.backend_list(&name)?,
    };
    let name = names.first().cloned().unwrap_or(name);
    let def = config.backend(&name)?.clone();
    // The model likewise: a flag, then the model the resumed session ran with (on the
    // same backend, when it is not that backend's default), then the settings'.
    let flagged_model = flagged(&settings.model)
        .then(|| value(&settings.model))
        .flatten();
    let resumed_model = resumed
        .filter(|s| s.backend == name)
        .and_then(|s| s.model.clone())
        .filter(|m| Some(m.as_str()) != def.model());
    let model = flagged_model
        .or(resumed_model)
        .or_else(|| value(&settings.model));
    Ok(Chosen {
        names,
        name,
        def,
        model,
    })
}

/// The working folder (the process's unless the options name one) and the root the file
/// tools are confined to.
fn working_dirs(options: &ChatOptions) -> Result<(std::path::PathBuf, Root), Error> {
    let cwd = match &options.cwd {
        Some(cwd) => cwd.clone(),
        None => std::env::current_dir().map_err(|source| ChatError::WorkingDir { source })?,
    };
    let root = Root::new(options.root.as_deref().unwrap_or(&cwd)).map_err(ChatError::Root)?;
    Ok((cwd, root))
}

/// The session: the resumed one, keeping what it ran with but what a flag sets now (that
/// state returned for the chat to take up), or a new one, named as the options say.
fn session(
    resumed: Option<Session>,
    settings: &RunSettings,
    options: &ChatOptions,
    stores: &Stores,
    backend: &str,
    lock: &mut Option<SessionLock>,
) -> Result<(Session, Option<Session>), Error> {
    let (store, lookup) = (stores.saving.as_ref(), stores.lookup.as_ref());
    let mut resumed_state = None;
    let session = match resumed {
        Some(mut s) => {
            // What the session ran with, but what a flag sets now; its conversation goes
            // with it to the chat's agent (moved, not copied: a long one is held once).
            let conversation = std::mem::take(&mut s.conversation);
            let mut kept = s.clone();
            kept.conversation = conversation;
            if flagged(&settings.context) {
                kept.context = None;
            }
            if options.system.is_some() || flagged(&settings.system_prompt) {
                kept.system = None;
            }
            resumed_state = Some(kept);
            s
        }
        None => {
            let session_name = match (&options.session, lookup, store) {
                (SessionChoice::Named(n), Some(lookup), _) => lookup.name_for_new(n),
                (SessionChoice::Named(n), None, _) => n.clone(),
                // Locked as it is chosen: runs started in the same second differ.
                (_, _, Some(saving)) => {
                    let (name, held) = saving.lock_fresh()?;
                    *lock = Some(held);
                    name
                }
                (_, Some(lookup), None) => lookup.fresh_name(),
                (_, None, None) => "unsaved".into(),
            };
            let mut session = Session::new(&session_name, backend);
            session.started_by = options.started_by.clone();
            session
        }
    };
    Ok((session, resumed_state))
}

/// The session to continue, if the options name one, and the lock on it (when saving). A
/// file that cannot be read is an error, and left alone. The session is locked before it is read, so that a run that waited for it reads
/// what the other run saved.
fn resume(
    options: &ChatOptions,
    stores: &Stores,
    notice: &mut dyn FnMut(&str),
) -> Result<(Option<Session>, Option<SessionLock>), Error> {
    let saving = stores.saving.as_ref();
    let Some(store) = stores.lookup.as_ref() else {
        return Ok((None, None));
    };
    let name = match &options.session {
        SessionChoice::New => return Ok((None, None)),
        SessionChoice::MostRecent => match store.most_recent() {
            Some(name) => name,
            None => {
                notice("[no saved session to continue: starting a new one]");
                return Ok((None, None));
            }
        },
        SessionChoice::Named(name) => {
            validate_name(name)?;
            name.clone()
        }
    };
    let contended = match options.wait_session {
        true => Contended::Wait,
        false => Contended::Fail,
    };
    let lock = match saving {
        Some(saving) => Some(saving.lock(&name, contended, notice)?),
        None => None,
    };
    // Only the holder of the session's lock may put a recovered save in place.
    let loaded = match &lock {
        Some(_) => store.load_locked(&name),
        None => store.load(&name),
    };
    let session = match loaded {
        Ok(Some(session)) => {
            if let Some(instead) = &options.own_sessions_only {
                if session.started_by != options.started_by {
                    return Err(ChatError::NotOwnSession {
                        name,
                        own: options.started_by.clone().unwrap_or_default(),
                        started_by: session.started_by,
                        instead: instead.clone(),
                    }
                    .into());
                }
            }
            // Run from another folder, its conversation is about files that are not here.
            let here = options.cwd.clone().or_else(|| std::env::current_dir().ok());
            let elsewhere = match &session.folder {
                Some(folder) if Some(folder) != here.as_ref() => format!(
                    ", last run in {}: its conversation is about that folder",
                    folder.display()
                ),
                _ => String::new(),
            };
            notice(&format!(
                "[continuing session {} ({}, last used {}){elsewhere}]",
                session.name,
                crate::plural::count(session.turns, "turn", "turns"),
                format_time(session.updated)
            ));
            Some(session)
        }
        Ok(None) => {
            if store.unsaved_folder(&name) {
                notice(&format!(
                    "[session {name} has no saved turn (a run stopped before its first save): \
                     starting it again under the same name; its log.jsonl is kept]"
                ));
            }
            None
        }
        // Refused, not forked: a new session beside it (`NAME-2`) left the next run on NAME
        // forking again, the turns scattered over as many sessions as runs.
        Err(e) => return Err(unreadable(&name, e)),
    };
    Ok((session, lock))
}

/// Session `name`'s file cannot be read or parsed: the error says it is left as it is and how
/// to go on.
fn unreadable(name: &str, e: SessionError) -> Error {
    let how = match &e {
        SessionError::Invalid { path, .. } | SessionError::Read { path, .. } => {
            let path = path.display();
            format!(
                "to start session {name} afresh, move it aside (mv {path} {path}.broken); or \
                 use another session name"
            )
        }
        _ => "use another session name".to_string(),
    };
    Error::caused(e.kind(), format!("{e}. It is left untouched: {how}"), e)
}

/// A text setting's value.
fn value(setting: &Option<Setting<String>>) -> Option<String> {
    setting.as_ref().map(|s| s.value.clone())
}

fn no_backend(config: &Config) -> Error {
    ChatError::NoBackend {
        known: config.names().map(str::to_string).collect(),
    }
    .into()
}

impl Chat {
    /// Takes what a saved session holds besides its backend and model: the conversation
    /// (taken out of `session`) and counts, the context mode, the user's system prompt, the
    /// tools answered "always" (its own, not those of the session before).
    pub(super) fn resume_state(&mut self, session: &mut Session) {
        let conversation = std::mem::take(&mut session.conversation);
        self.agent.restore(
            conversation,
            session.turns,
            session.usage,
            std::mem::take(&mut session.usage_by_backend),
        );
        if let Some(mode) = session.context.as_deref().and_then(|m| m.parse().ok()) {
            // Resumed with another backend, a mode that was only the old backend's own
            // (`fresh` for an agent that keeps its own conversation) gives way to the new
            // one's, as on `/backend`; a mode the user chose stays.
            let old_own = self
                .config
                .backend(&session.backend)
                .ok()
                .map(|d| d.context().mode);
            if session.backend == self.def.name() || old_own != Some(mode) {
                self.agent.set_context_mode(mode);
            }
        }
        if session.system.is_some() {
            self.agent.set_system_prompt(session.system.clone());
        }
        // The answers of the session before (`/load`) were given for that one.
        self.agent.policy_mut().forget_answers();
        for tool in &session.always {
            self.agent.policy_mut().allow_always(tool);
        }
        // The loaded session's own agent session, or a new one: never the one of the
        // session before (`/load` while an ACP agent runs).
        let len = self.agent.conversation.messages.len();
        let (id, lacks) = super::kept_agent_session(session, self.def.name(), len);
        self.agent.resume_agent_session(id, lacks);
    }
}
