//! A chat: an agent put together from the user's settings, with the session it is saved to
//! and the log its events go to. This is the one entry point every front end builds through
//! (the CLI's one-shot runs and REPL, fan-out, the Telegram bot, `examples/one_turn.rs`):
//! [`Chat::open`] reads the configuration layers and the settings, builds the backend, the
//! tools, the approval policy and the context settings, and resumes or starts the session;
//! [`Chat::turn`] runs one turn with the front end's [`Observer`], logs it and saves.
//!
//! A front end keeps only its own concerns: flags, terminal, rendering, and how it asks the
//! user to approve a tool (the observer's [`Observer::approve`]).

mod cancel;
mod catalog;
pub mod commands;
mod context;
mod error;
mod fanout;
mod intents;
mod logged;
mod mcp;
mod open;
mod options;
mod rules;
mod settings;
mod skills;
mod views;

// Each export is public through the library's `agent_loop::chat`: tests/all/public_face.rs
// lists them, so the face widens only on purpose.
pub use cancel::Canceller;
pub use catalog::{BackendRow, LoadedConfig};
pub use commands::{CommandSpec, FrontEnd, Invocation, Outcome, SlashCommand, COMMANDS};
pub use error::ChatError;
pub use fanout::Kept;
pub use options::{ChatOptions, HttpClients, SessionChoice};
pub use settings::RunSettings;
pub use views::Status;

use std::path::{Path, PathBuf};

use crate::agent::{Agent, AgentOptions, ApprovalMode};
use crate::backend::{self, Overrides};
use crate::builtins;
use crate::config::{Config, Definition};
use crate::context::{Artifacts, Prompt};
use crate::event::{Event, Observer};
use crate::jsonl::Body;
use crate::mcp::McpServers;
use crate::parse::Totals;
use crate::session::{
    validate_name, Contended, EventLog, Log, LogContext, Redactor, Session, SessionError,
    SessionLock, Store,
};
use crate::tools::{Root, ToolOutput};
use crate::Error;
use context::ContextOverrides;
use logged::Logged;

pub struct Chat {
    agent: Agent,
    config: Config,
    /// The current backend's definition.
    def: Definition,
    /// `--model`, `--temp`, `--no-stream` (and `/model`), applied to every backend used.
    overrides: Overrides,
    /// The HTTP backends' clients (`ChatOptions::http`), for every backend this chat builds.
    http: backend::HttpClients,
    /// What config.toml, the environment and flags set of the context settings, applied to
    /// every backend used.
    context_overrides: ContextOverrides,
    /// Where sessions are saved; `None` without saving.
    store: Option<Store>,
    session: Session,
    /// `--log FILE`, which replaces the session's own log.
    log_path: Option<PathBuf>,
    log: Option<EventLog>,
    context: LogContext,
    redactor: Redactor,
    /// The approval mode the settings chose (what `/yes off` goes back to).
    base_mode: ApprovalMode,
    mcp: McpServers,
    /// Every backend named when several were (`--backend a,b`): a front end may run each
    /// task on all of them (fan-out).
    fanout: Option<Vec<String>>,
    /// This chat's hold on its session (none without saving): one run per session at a time.
    lock: Option<SessionLock>,
    /// `--wait-session`: wait for a session another run holds instead of failing.
    wait_session: bool,
    /// Cancels the running turn from another task.
    canceller: Canceller,
    /// The last comparison's answers, for `/pick` while the conversation is the one it left.
    compared: Option<Compared>,
    /// The last save failed: the session file lacks what the chat holds.
    save_failed: bool,
    /// The settings' `skill_dirs`, where `/skills` looks for skills added since the start.
    skill_dirs: Vec<String>,
    /// The last turn failed after its prompt was recorded: the prompt stays unanswered.
    prompt_stays: bool,
}

/// Where the cut tool outputs (and answers) of the sessions that are not saved go: one
/// temporary folder per process.
pub fn unsaved_artifacts() -> PathBuf {
    std::env::temp_dir().join(format!("agent-loop-{}-artifacts", std::process::id()))
}

/// Said after a turn's error when its prompt stays in the conversation ([`Chat::prompt_stays`]):
/// else the next prompt would go glued to it without a word (the model answering both). In
/// the words of a front end that has `/retry` and `/undo`; one that has not says its own.
pub const PROMPT_STAYS: &str =
    "[the prompt stays in the conversation: /retry sends it again, /undo drops it]";

/// What a comparison left for `/pick`: each backend's name and conversation if it answered,
/// with the session it was made in and which answer the conversation holds now. `/pick`
/// applies only while that session's conversation is still that answer's: after a turn,
/// `/undo`, `/clear` or `/load` it would put the comparison's conversation over another one.
struct Compared {
    session_id: String,
    answers: Vec<(String, Option<crate::context::Conversation>)>,
    current: usize,
}

impl Chat {
    /// Whether the current backend takes images: `None` for an ACP agent not started yet
    /// (its capabilities say; a prompt with images asks it).
    pub fn images_known(&self) -> Option<bool> {
        self.agent.images_known()
    }

    /// Whether the current backend takes images, asked as a turn with images asks (an ACP
    /// agent is started for it): a front end that fetches an image learns before it does.
    /// The refusal is logged, and names the backend and what to set.
    pub async fn check_images(&mut self, observer: &mut (dyn Observer + '_)) -> Result<(), Error> {
        let mut logged = Logged {
            inner: &mut *observer,
            log: self.log.as_mut(),
            context: &mut self.context,
            redactor: &self.redactor,
        };
        self.agent.check_images(&mut logged).await
    }

    /// Sends the file tools through `files` (an editor's buffers) from now on.
    pub fn set_files(&mut self, files: crate::tools::Files) {
        self.agent.set_files(files);
    }

    /// Stops the MCP servers, asks a terminal agent (`type = "pty"`) to quit (then its
    /// process group is killed), and removes the cut tool outputs of a session that is not
    /// saved: nothing would ever point to them again.
    pub async fn shutdown(&mut self) {
        self.stop().await;
        if self.store.is_none() {
            let _ = std::fs::remove_dir_all(self.artifacts().dir());
        }
    }

    /// [`Chat::shutdown`], leaving the cut outputs of a session that is not saved in
    /// [`unsaved_artifacts`]: for a front end whose chats end while what they answered points
    /// into that folder, and that serves other chats from it meanwhile (`mcp serve`, one chat
    /// per call). It removes the folder when it exits.
    pub async fn stop(&mut self) {
        self.mcp.shutdown();
        self.agent.shutdown().await;
    }

    /// Runs one turn: the events go through the log to `observer`; the session is saved
    /// after it. Dropping the future cancels the turn (the backend and tools are killed);
    /// call [`Chat::cancelled`] then. A [`Canceller`] cancels it from another task: the
    /// turn then ends with an error of kind [`crate::ErrorKind::Cancelled`], recorded and
    /// saved.
    ///
    /// `prompt` is text (`&str`, `String`) or a [`Prompt`] with images; images to a backend
    /// that takes none, and a prompt whose request would pass the context budget, are refused
    /// before anything is sent, the conversation and the session file unchanged. A turn that
    /// fails after that leaves its prompt in the conversation (nothing the user typed is
    /// lost): its error ends with [`PROMPT_STAYS`], and [`Chat::prompt_stays`] says so.
    pub async fn turn(
        &mut self,
        prompt: impl Into<Prompt>,
        observer: &mut (dyn Observer + '_),
    ) -> Result<String, Error> {
        let prompt = prompt.into();
        let turns = self.agent.turns();
        self.compared = None;
        self.prompt_stays = false;
        let cancelled = self.canceller.cancelled();
        // Servers that said their tools changed are read again before the turn.
        for note in self.mcp.refresh(self.agent.tools_mut()).await {
            observer.event(&crate::event::Event::Notice {
                message: format!("agent-loop: {note}"),
            });
        }
        let result = {
            let mut logged = Logged {
                inner: &mut *observer,
                log: self.log.as_mut(),
                context: &mut self.context,
                redactor: &self.redactor,
            };
            tokio::select! {
                result = self.agent.run_turn(prompt, &mut logged) => Some(result),
                () = cancelled => None,
            }
        };
        let Some(result) = result else {
            self.cancelled(None, observer)?;
            return Err(ChatError::Cancelled.into());
        };
        // A refused prompt (images a backend does not take, a request over the budget)
        // changed nothing: the session file stays as it was.
        if result.is_err() && self.agent.turns() == turns {
            return result;
        }
        self.prompt_stays = result.is_err();
        self.saved_after(result, observer)
    }

    /// Runs one tool as the user asked (`/commit`), through the approval policy, logged.
    pub async fn run_user_tool(
        &mut self,
        name: &str,
        args: serde_json::Value,
        observer: &mut (dyn Observer + '_),
    ) -> ToolOutput {
        let mut logged = Logged {
            inner: observer,
            log: self.log.as_mut(),
            context: &mut self.context,
            redactor: &self.redactor,
        };
        self.agent.run_user_tool(name, args, &mut logged).await
    }

    /// Saves after a turn; a failure to save is told to `observer`, and fails a turn that
    /// had succeeded.
    fn saved_after<T>(
        &mut self,
        result: Result<T, Error>,
        observer: &mut (dyn Observer + '_),
    ) -> Result<T, Error> {
        match self.save() {
            Ok(()) => result,
            Err(e) => {
                observer.event(&Event::Notice {
                    message: format!("error: {e}"),
                });
                result.and(Err(e))
            }
        }
    }

    /// Writes the session file (atomically, redacted); a failure leaves the conversation in
    /// memory and says where it could not be written.
    pub fn save(&mut self) -> Result<(), Error> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        // A session is saved once it holds a turn: a REPL left or cleared before any task
        // leaves no empty session behind. One saved before is saved again, emptied or not.
        let empty = self.agent.turns() == 0 && self.agent.conversation.messages.is_empty();
        if empty && !store.has(&self.session.name) {
            return Ok(());
        }
        self.session.turns = self.agent.turns();
        self.session.usage = self.agent.totals;
        self.session.usage_by_backend = self.agent.by_backend.clone();
        self.session.backend = self.def.name().to_string();
        self.session.model = self.model();
        self.session.context = Some(self.agent.context_settings().mode.to_string());
        self.session.system = self.agent.system_prompt().cloned();
        self.session.always = self.agent.options().policy.always();
        self.session.folder = Some(self.agent.options().cwd.clone());
        keep_agent_session(&mut self.session, &self.agent, &self.def);
        // Moved into the session for the save and back, not copied: a long session's
        // conversation is held once.
        self.session.conversation = std::mem::take(&mut self.agent.conversation);
        let result = store.save(&mut self.session, &self.redactor);
        self.agent.conversation = std::mem::take(&mut self.session.conversation);
        self.save_failed = result.is_err();
        if result.is_ok() && self.log.is_none() && self.log_path.is_none() {
            self.open_log()?;
        }
        Ok(result?)
    }

    /// Points the event log at `--log FILE` or the session's own `log.jsonl`.
    pub(super) fn open_log(&mut self) -> Result<(), Error> {
        let path = match (&self.log_path, &self.store) {
            (Some(path), _) => Some(path.clone()),
            (None, Some(store)) => Some(store.folder(&self.session.name).join("log.jsonl")),
            (None, None) => None,
        };
        self.sync();
        self.log = match path {
            None => None,
            // A session's own log is only created once it has something to say, so a
            // failure to create the folder is reported at the first event, not here.
            Some(path) if self.log_path.is_none() => Some(EventLog::new(
                Log::deferred(&path, self.redactor.clone()),
                &self.context,
            )),
            Some(path) => Some(EventLog::new(
                Log::open(&path, self.redactor.clone())?,
                &self.context,
            )),
        };
        Ok(())
    }

    /// Where this session's cut tool outputs go: its own folder, or a temporary one when
    /// nothing is saved.
    fn artifacts(&self) -> Artifacts {
        match &self.store {
            Some(store) => Artifacts::new(store.folder(&self.session.name).join("artifacts")),
            None => Artifacts::new(unsaved_artifacts()),
        }
    }

    /// Tells the agent and the log where the session now is.
    fn sync(&mut self) {
        let artifacts = self.artifacts();
        self.agent.set_artifacts(artifacts);
        self.context = LogContext {
            session: self.session.name.clone(),
            session_id: self.session.id.clone(),
            backend: self.def.name().to_string(),
            model: self.model(),
            turn: self.agent.turns(),
        };
    }

    fn use_def(&mut self, def: Definition) -> Result<(), Error> {
        let backend = backend::build(&def, &self.overrides, &self.http)?;
        keep_agent_session(&mut self.session, &self.agent, &self.def);
        self.agent.set_backend(backend);
        let len = self.agent.conversation.messages.len();
        let (id, lacks) = kept_agent_session(&self.session, def.name(), len);
        self.agent.resume_agent_session(id, lacks);
        // The new backend's budget and cut, with the settings' overrides. The old backend's
        // own context mode (`fresh` for an agent that keeps its own conversation) gives way
        // to the new one's; a mode the user chose (`--context`, `/context`) stays.
        let mut context = self.context_overrides.apply(&def);
        let mode = self.agent.context_settings().mode;
        if self.context_overrides.mode.is_some() || mode != self.def.context().mode {
            context.mode = mode;
        }
        self.agent.set_context_settings(context);
        self.agent
            .set_budget_origin(self.context_overrides.budget_origin(&def));
        self.def = def;
        self.sync();
        Ok(())
    }

    /// The model in use: `--model` or `/model`, else the backend's own.
    pub fn model(&self) -> Option<String> {
        self.overrides
            .model
            .clone()
            .or_else(|| self.def.model().map(str::to_string))
    }

    /// A new, empty session; the old one stays saved (`/clear`, `/new`).
    pub fn new_session(&mut self) -> Result<(), Error> {
        self.save()?;
        let session = self.session.name.clone();
        if let Some(log) = &mut self.log {
            log.body(Body::SessionClear { session }, &self.context);
        }
        let name = match &self.store {
            // Locked as it is chosen: runs started in the same second differ.
            Some(store) => {
                let (name, held) = store.lock_fresh()?;
                self.lock = Some(held);
                name
            }
            None => "unsaved".into(),
        };
        self.start_session(&name)
    }

    /// Starts an empty session called `name`, replacing a saved one of that name (the
    /// Telegram bot's `/new`, which keeps one session name per chat, archives it first).
    pub fn start_session(&mut self, name: &str) -> Result<(), Error> {
        validate_name(name)?;
        self.session = Session::new(name, self.def.name());
        self.agent.restore(
            Default::default(),
            0,
            Default::default(),
            Default::default(),
        );
        self.agent.policy_mut().forget_answers();
        // An ACP agent starts a new session of its own too.
        self.agent.resume_agent_session(None, 0);
        self.open_log()
    }

    /// Continues another saved session (`/load NAME`).
    pub fn load_session(&mut self, name: &str) -> Result<(), Error> {
        let store = self.saving_store()?;
        let session = store
            .load(name)?
            .ok_or_else(|| SessionError::NoSuchSession {
                name: name.to_string(),
                dir: store.dir().to_path_buf(),
            })?;
        self.save()?;
        let previous = std::mem::replace(&mut self.session, session);
        if let Err(e) = self.lock_session(&mut |_| {}) {
            self.session = previous;
            return Err(e);
        }
        // Loaded again under the lock: another run may have saved it meanwhile.
        if let Ok(Some(fresh)) = store.load_locked(name) {
            self.session = fresh;
        }
        // The conversation goes to the agent, the rest is copied: a long one is not copied.
        let conversation = std::mem::take(&mut self.session.conversation);
        let mut session = self.session.clone();
        session.conversation = conversation;
        self.resume_state(&mut session);
        self.open_log()
    }

    /// Takes the lock on the current session unless this chat holds it already: one run
    /// per session at a time. `notice` hears of a wait (`--wait-session`).
    pub(super) fn lock_session(&mut self, notice: &mut dyn FnMut(&str)) -> Result<(), Error> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        if self.lock.as_ref().map(SessionLock::name) == Some(self.session.name.as_str()) {
            return Ok(());
        }
        let contended = match self.wait_session {
            true => Contended::Wait,
            false => Contended::Fail,
        };
        self.lock = Some(store.lock(&self.session.name, contended, notice)?);
        Ok(())
    }

    pub(super) fn saving_store(&self) -> Result<Store, Error> {
        self.store
            .clone()
            .ok_or_else(|| ChatError::NotSaving.into())
    }

    /// An agent for the backend `name` that starts from this conversation and works in
    /// `folder` with this chat's settings and built-in tools (a fan-out lane).
    fn agent_for(&self, name: &str, folder: &Path) -> Result<Agent, Error> {
        let def = self.config.backend(name)?;
        let backend = backend::build(def, &self.overrides, &self.http)?;
        // The same tools, built-in and [tools.NAME] ones, without the MCP servers' (which run
        // once, for the session's own folder).
        let local: Vec<String> = self
            .agent
            .tools()
            .names()
            .into_iter()
            .filter(|n| !n.starts_with("mcp."))
            .map(String::from)
            .collect();
        let skills = self.agent.skills().cloned();
        let tools = builtins::configured(
            Some(&local),
            self.config.tools.command_defs(),
            &self.config.tools.confirms(),
            skills.as_ref(),
        )?;
        let mut agent = Agent::new(
            backend,
            tools,
            AgentOptions {
                cwd: folder.to_path_buf(),
                root: Root::new(folder).map_err(ChatError::Root)?,
                artifacts: Artifacts::new(folder.join(".agent-loop-artifacts")),
                context: self.context_overrides.apply(def),
                ..self.agent.options().clone()
            },
        );
        agent.set_budget_origin(self.context_overrides.budget_origin(def));
        agent.set_system_prompt(self.agent.system_prompt().cloned());
        agent.set_skills(skills);
        agent.restore(
            self.agent.conversation.clone(),
            self.agent.turns(),
            Totals::default(),
            Default::default(),
        );
        Ok(agent)
    }

    /// Passes `event` (from a run outside [`Chat::turn`], such as a fan-out lane's) through
    /// the redactor and the log to `observer`.
    pub fn relay(&mut self, event: &Event, observer: &mut (dyn Observer + '_)) {
        Logged {
            inner: observer,
            log: self.log.as_mut(),
            context: &mut self.context,
            redactor: &self.redactor,
        }
        .event(event);
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The current backend's definition.
    pub(crate) fn definition(&self) -> &Definition {
        &self.def
    }

    /// The session: its name, id, counts and settings as last saved. Its conversation is the
    /// chat's ([`Chat::messages`]), not kept here.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Whether the session's file holds the chat: saving is on, a turn was saved, and the
    /// last save did not fail (a front end may then close the chat and open it again).
    pub fn is_kept(&self) -> bool {
        self.store.is_some() && !self.save_failed && self.session.turns > 0
    }

    /// Whether the last turn failed with its prompt left in the conversation, unanswered.
    pub fn prompt_stays(&self) -> bool {
        self.prompt_stays
    }

    /// `e`, the last turn's error, with [`PROMPT_STAYS`] after it where its prompt stays: for
    /// a front end that shows the error as it is (an editor, a chat).
    pub fn with_prompt_stays(&self, mut e: Error) -> Error {
        if self.prompt_stays {
            e.message = format!("{}\n{PROMPT_STAYS}", e.message);
        }
        e
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The folder saved sessions are kept in (a front end completes their names); `None`
    /// when sessions are not saved.
    pub fn sessions_dir(&self) -> Option<&std::path::Path> {
        self.store.as_ref().map(Store::dir)
    }

    /// The approval mode the settings chose.
    pub fn base_mode(&self) -> ApprovalMode {
        self.base_mode
    }

    /// Every backend named when several were, the session's first.
    pub fn fanout(&self) -> Option<&[String]> {
        self.fanout.as_deref()
    }
}

/// Keeps the id of the agent's own session (an ACP agent's) with agent-loop's session, for
/// a later run and a switch back.
fn keep_agent_session(session: &mut Session, agent: &Agent, def: &Definition) {
    if let Some(id) = agent.agent_session() {
        session.agent_sessions.insert(def.name().to_string(), id);
        // The agent has seen the whole conversation: it was the backend until now.
        let seen = agent.conversation.messages.len();
        session.agent_seen.insert(def.name().to_string(), seen);
    }
}

/// The agent session `session` keeps for backend `name`, and how many of the conversation's
/// `len` messages came after it was kept (0 where that was not recorded).
pub(super) fn kept_agent_session<'a>(
    session: &'a Session,
    name: &str,
    len: usize,
) -> (Option<&'a str>, usize) {
    let id = session.agent_sessions.get(name).map(String::as_str);
    let seen = session.agent_seen.get(name).copied();
    (id, seen.map_or(0, |seen| len.saturating_sub(seen)))
}
