//! ACP agents (`type = "acp"`): an agent CLI driven through the Agent Client Protocol
//! (JSON-RPC 2.0, one message a line on its stdio), on the protocol's official Rust SDK,
//! protocol v1. The agent keeps its own conversation, tools, prompts and slash commands;
//! agent-loop sends it each user message (`session/prompt`), shows what it reports
//! (`update`), answers its permission questions with agent-loop's approval and serves its
//! file and command requests with agent-loop's own tools (`serve`, `terminal`).
//!
//! The agent lives as long as the session (`conn`): started at the first message
//! (`initialize`, `session/new` with the working directory), kept between turns, started
//! again with a note if it died (resuming its session with `session/load` where it offers
//! that), and closed at the end ([`Backend::shutdown`]).

mod auth;
mod conn;
mod inbox;
mod mcp;
mod mode;
mod probe;
mod prompt;
mod serve;
mod terminal;
mod turn;
mod update;

pub use probe::AcpProbe;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::backend::{agent_failed, guard, Backend, Emit, Host, Reply, Request};
use crate::config::AcpDef;
use crate::event::{CutReason, Event, OutputStream};
use crate::{BoxFuture, Error};
use conn::{Agent, Failure};
use prompt::{catch_up, prompt_blocks};

/// The protocol version agent-loop speaks.
const PROTOCOL_VERSION: u64 = 1;

pub struct AcpBackend {
    def: AcpDef,
    program: PathBuf,
    running: tokio::sync::Mutex<Running>,
    /// What a cancelled turn had gathered, until the loop takes it.
    partial: turn::Partial,
}

/// The agent between turns, and what it said of itself.
#[derive(Default)]
struct Running {
    agent: Option<Agent>,
    session: Option<String>,
    /// The answer to `initialize`.
    info: Value,
    /// The answer to `session/new` (or `session/load`): modes, models.
    setup: Value,
    /// Its slash commands, as it last listed them, with what each does.
    commands: Vec<(String, String)>,
    /// Its session's mode, as last known (`mode`).
    mode: Option<String>,
    /// A prompt cancelled and not yet answered.
    outstanding: Option<u64>,
    /// The running agent is to open `session` (a new one when `None`) before the next
    /// prompt: agent-loop's session changed (`/load`, `/clear`).
    reopen: bool,
    /// Its session is new and had no prompt yet: the first carries the conversation so far.
    unprompted: bool,
    /// How many of the conversation's latest messages the session to load lacks (other
    /// backends' turns since it was kept): the first prompt after loading carries them.
    lacks: usize,
    /// The running agent was started with the entry's guard (`guard`), whose file is in
    /// this folder, removed after the agent.
    guarded: Option<Option<tempfile::TempDir>>,
}

impl AcpBackend {
    /// Checks that the command exists (through `PATH` unless it is a path).
    pub fn new(def: AcpDef) -> Result<Self, Error> {
        let program = def.program()?;
        Ok(AcpBackend {
            def,
            program,
            running: tokio::sync::Mutex::new(Running::default()),
            partial: Default::default(),
        })
    }

    fn args(&self, cwd: &Path) -> Vec<String> {
        self.def.args_in(cwd)
    }

    /// The entry's guard, when the running agent was started with it.
    fn guard(&self, guarded: bool) -> Option<&crate::config::Guard> {
        self.def.guard.as_ref().filter(|_| guarded)
    }

    fn error(&self, why: impl std::fmt::Display) -> Error {
        agent_failed(&self.def.name, why)
    }

    /// The running agent with its session, started (again) when there is none, it exited,
    /// or it did not settle after a cancelled turn.
    async fn ensure(
        &self,
        running: &mut Running,
        cwd: &Path,
        host: &mut dyn Host,
    ) -> Result<(), Error> {
        let dir = match &self.def.cwd {
            Some(dir) => cwd.join(dir),
            None => cwd.to_path_buf(),
        };
        // Its guard whenever agent-loop's approval asks: an agent started under --yes
        // without it is started again with it after `/yes off`.
        let guard = self.def.guard.as_ref().filter(|_| !host.approves_all());
        if let Some(agent) = running.agent.as_mut() {
            let settled = turn::settle(agent, &mut running.outstanding).await;
            let unguarded = guard.is_some() && running.guarded.is_none();
            if settled && !agent.exited() && !unguarded {
                // agent-loop's session changed (`/load`, `/clear`): so does the agent's.
                if running.reopen {
                    self.open(running, &dir, host).await?;
                }
                return Ok(());
            }
            let why = if unguarded {
                crate::backend::guard::UNGUARDED
            } else if settled {
                "it had exited"
            } else {
                "it did not stop after the turn was cancelled"
            };
            host.event(Event::BackendOutput {
                backend: self.def.name.clone(),
                stream: OutputStream::Screen,
                line: format!("(agent started again: {why})"),
            });
            if let Some(agent) = running.agent.take() {
                agent.close().await;
            }
            running.outstanding = None;
        }
        let cannot = |e: &dyn std::fmt::Display| {
            self.error(format!("cannot run {}: {e}", self.program.display()))
        };
        if let Some(found) = guard::refused(guard, &dir) {
            return Err(self.error(guard::refusal(&found, true)));
        }
        // Its `session/new` names agent-loop's MCP servers: the ones the guard lets it start.
        let servers: Vec<&str> = self
            .def
            .mcp_servers
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        let start = guard::start(guard, self.args(cwd), &self.def.env, &servers, &dir)
            .map_err(|e| cannot(&format!("cannot set up its guard: {e}")))?;
        let mut agent = Agent::spawn(&self.program, &start.args, &start.env, &dir)
            .await
            .map_err(|e| cannot(&e))?;
        running.guarded = guard.map(|_| start.folder);
        let serves = host.tool_context().is_some();
        let info = tokio::time::timeout(
            self.def.timeout,
            agent.request(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "clientCapabilities": {
                        "fs": { "readTextFile": serves, "writeTextFile": serves },
                        "terminal": serves,
                    },
                    "clientInfo": { "name": "agent-loop", "version": env!("CARGO_PKG_VERSION") },
                }),
            ),
        )
        .await
        .map_err(|_| {
            self.error(format!(
                "`initialize` got no answer within timeout_s ({} s)",
                self.def.timeout.as_secs()
            ))
        })?
        .map_err(|e| auth::failed(&self.def, "initialize", e, &Value::Null))?;
        running.info = info;
        running.agent = Some(agent);
        let opened = self.open(running, &dir, host).await;
        // An agent without a session is no use to the next turn, which starts it again.
        if opened.is_err() {
            if let Some(agent) = running.agent.take() {
                agent.close().await;
            }
        }
        opened
    }

    /// Opens the agent's session: the one kept (`session/load`, where the agent offers it)
    /// or a new one, with a note when the kept one could not be resumed; then the model and
    /// the mode. A new session is `unprompted`: its first prompt carries the conversation.
    async fn open(
        &self,
        running: &mut Running,
        dir: &Path,
        host: &mut dyn Host,
    ) -> Result<(), Error> {
        let cwd = dir.display().to_string();
        let agent = running.agent.as_mut().expect("started before");
        let info = &running.info;
        let loads = info["agentCapabilities"]["loadSession"] == true;
        let mut note = None;
        let mut loaded = None;
        match &running.session {
            Some(id) if loads => {
                let params = json!({ "sessionId": id, "cwd": cwd, "mcpServers": mcp::servers(&self.def.mcp_servers, info) });
                let params = guard::with_meta(params, self.guard(running.guarded.is_some()));
                match agent.request("session/load", params).await {
                    Ok(setup) => {
                        // What it replays of the session is no news.
                        agent.replayed = true;
                        note = Some(format!("(resumed the agent's session {id})"));
                        loaded = Some((id.clone(), setup));
                    }
                    Err(e) => {
                        let why = match e {
                            Failure::Refused(e) => e.message,
                            Failure::Ended(why) | Failure::Local(why) => why,
                        };
                        note = Some(format!(
                            "(the agent could not load its session {id} ({why}): it starts a new one)"
                        ));
                    }
                }
            }
            Some(_) => {
                note = Some(
                    "(the agent cannot load its earlier session (it offers no loadSession): \
                     it starts a new one)"
                        .into(),
                )
            }
            None => {}
        }
        let fresh = loaded.is_none();
        let (id, setup) = match loaded {
            Some(loaded) => loaded,
            None => {
                let guard = self.guard(running.guarded.is_some());
                self.new_session(agent, &cwd, info, guard).await?
            }
        };
        if let Some(line) = note {
            host.event(Event::BackendOutput {
                backend: self.def.name.clone(),
                stream: OutputStream::Screen,
                line,
            });
        }
        self.configure(agent, &id, &setup, host).await;
        running.mode = mode::current(&setup);
        running.session = Some(id);
        running.setup = setup;
        running.unprompted = fresh;
        // Only now: a session change that failed is tried again at the next turn.
        running.reopen = false;
        Ok(())
    }

    async fn new_session(
        &self,
        agent: &mut Agent,
        cwd: &str,
        info: &Value,
        guard: Option<&crate::config::Guard>,
    ) -> Result<(String, Value), Error> {
        let params = json!({ "cwd": cwd, "mcpServers": mcp::servers(&self.def.mcp_servers, info) });
        let params = guard::with_meta(params, guard);
        let mut setup = agent.request("session/new", params.clone()).await;
        // codex-acp wants `authenticate` even when its key is set: with the method whose
        // variables the agent has, once.
        if matches!(&setup, Err(Failure::Refused(e)) if i32::from(e.code) == -32000) {
            if let Some(method) = auth::env_auth(&self.def, info) {
                let chosen = json!({ "methodId": method });
                if agent.request("authenticate", chosen).await.is_ok() {
                    setup = agent.request("session/new", params).await;
                }
            }
        }
        let setup = setup.map_err(|e| auth::failed(&self.def, "session/new", e, info))?;
        let id = setup["sessionId"].as_str().unwrap_or("").to_string();
        if id.is_empty() {
            return Err(self.error("`session/new` answered without a sessionId"));
        }
        Ok((id, setup))
    }

    /// `--model` through `session/set_model` (or the config option), where the agent offers
    /// models; a refusal is a note, not an error. The mode is set before each prompt (`mode`).
    async fn configure(
        &self,
        agent: &mut Agent,
        session: &str,
        setup: &Value,
        host: &mut dyn Host,
    ) {
        let note = |host: &mut dyn Host, line: String| {
            host.event(Event::BackendOutput {
                backend: self.def.name.clone(),
                stream: OutputStream::Screen,
                line,
            })
        };
        if let Some(model) = &self.def.model {
            let offered = setup["models"]["availableModels"].as_array();
            // opencode and codex-acp offer their models only as a config option.
            let option = config_option(setup, "model");
            let set = if offered.is_some() {
                if setup["models"]["currentModelId"] == model.as_str() {
                    None
                } else {
                    let params = json!({ "sessionId": session, "modelId": model });
                    Some(agent.request("session/set_model", params).await)
                }
            } else if let Some(option) = option.filter(|o| o["currentValue"] != model.as_str()) {
                let params =
                    json!({ "sessionId": session, "configId": option["id"], "value": model });
                Some(agent.request("session/set_config_option", params).await)
            } else {
                None
            };
            if let Some(set) = set {
                if set.is_err() {
                    note(
                        host,
                        format!("(the agent did not take the model `{model}`)"),
                    );
                }
            }
        }
    }

    /// One message through the agent.
    async fn run(&self, request: Request<'_>, host: &mut dyn Host) -> Result<Reply, Error> {
        let (message, images) = super::pty::newest_message(&request)?;
        self.take_partial();
        let mut guard = self.running.lock().await;
        let running = &mut *guard;
        self.ensure(running, request.cwd, host).await?;
        let session = running.session.clone().unwrap_or_default();
        let mut prompt = prompt_blocks(message, images, request.cwd);
        if let Some((text, line)) = catch_up(running, request.window) {
            host.event(Event::BackendOutput {
                backend: self.def.name.clone(),
                stream: OutputStream::Screen,
                line,
            });
            prompt[0] = json!({ "type": "text", "text": text });
        }
        let agent = running.agent.as_mut().expect("started above");
        let session_mode = mode::Session {
            agent,
            id: &session,
            setup: &running.setup,
            mode: &mut running.mode,
        };
        mode::align(&self.def, session_mode, host).await?;
        let agent = running.agent.as_mut().expect("started above");
        if !images.is_empty() && !takes_images(&running.info) {
            // Checked before the turn (`check_images`); here for a caller that did not.
            return Err(self.error(
                "the agent does not take images (its promptCapabilities.image is not true); \
                 the prompt was not sent",
            ));
        }
        let outcome = turn::run(
            &self.def,
            agent,
            &session,
            prompt,
            &mut running.outstanding,
            &self.partial,
            host,
        )
        .await;
        let answer = match outcome {
            Ok(answer) => answer,
            Err(e) => {
                if running.agent.as_mut().is_some_and(Agent::exited) {
                    if let Some(agent) = running.agent.take() {
                        agent.close().await;
                    }
                }
                return Err(e);
            }
        };
        let mut gathered = answer.gathered;
        if let Some(commands) = gathered.commands.take() {
            running.commands = commands;
        }
        if let Some(now) = gathered.mode.take() {
            running.mode = Some(now);
        }
        let mut text = std::mem::take(&mut gathered.text);
        // Cut short, as an HTTP backend reports it (the answer so far stays the answer);
        // other stops are marked in the answer, which the next backend reads.
        let cut = |reason| Event::CutShort {
            backend: self.def.name.clone(),
            reason,
        };
        match answer.stop_reason.as_str() {
            "end_turn" => {}
            "max_tokens" => host.event(cut(CutReason::MaxTokens)),
            "refusal" => host.event(cut(CutReason::Refusal)),
            "cancelled" => text.push_str("\n[the agent stopped: cancelled]"),
            other => text.push_str(&format!("\n[the agent stopped: {other}]")),
        }
        if gathered.usage.is_none() {
            host.event(Event::BackendOutput {
                backend: self.def.name.clone(),
                stream: OutputStream::Stderr,
                line: "(tokens unknown: the agent reported none)".into(),
            });
        }
        Ok(Reply {
            text: text.trim().to_string(),
            calls: Vec::new(),
            usage: gathered.usage,
            raw: None,
            ran: gathered.ran(),
        })
    }

    /// Runs one message and describes what the agent advertised: what `agent-loop doctor`
    /// shows. The agent is closed afterwards.
    pub async fn probe(&self, request: Request<'_>, emit: &mut Emit<'_>) -> AcpProbe {
        let mut host = super::pty::EmitHost { emit };
        let answer = self.run(request, &mut host).await;
        let running = std::mem::take(&mut *self.running.lock().await);
        if let Some(agent) = running.agent {
            agent.close().await;
        }
        AcpProbe {
            program: self.program.clone(),
            args: self.args(request.cwd),
            info: running.info,
            setup: running.setup,
            commands: running.commands,
            modes: (self.def.auto_mode.clone(), self.def.ask_mode.clone()),
            answer,
        }
    }
}

/// The session's config option of `category` (`model`, `mode`) that `session/new` offered.
pub fn config_option<'a>(setup: &'a Value, category: &str) -> Option<&'a Value> {
    setup["configOptions"]
        .as_array()?
        .iter()
        .find(|o| o["category"] == category || o["id"] == category)
}

/// Whether the agent's answer to `initialize` says it takes image blocks.
fn takes_images(info: &Value) -> bool {
    info.pointer("/agentCapabilities/promptCapabilities/image") == Some(&Value::Bool(true))
}

impl Backend for AcpBackend {
    fn name(&self) -> &str {
        &self.def.name
    }

    fn call<'a>(
        &'a self,
        request: Request<'a>,
        emit: &'a mut Emit<'_>,
    ) -> BoxFuture<'a, Result<Reply, Error>> {
        Box::pin(async move {
            let mut host = super::pty::EmitHost { emit };
            self.run(request, &mut host).await
        })
    }

    fn call_with_host<'a>(
        &'a self,
        request: Request<'a>,
        host: &'a mut dyn Host,
    ) -> BoxFuture<'a, Result<Reply, Error>> {
        Box::pin(self.run(request, host))
    }

    fn images_known(&self) -> Option<bool> {
        let running = self.running.try_lock().ok()?;
        running.agent.as_ref()?;
        Some(takes_images(&running.info))
    }

    fn check_images<'a>(
        &'a self,
        cwd: &'a Path,
        host: &'a mut dyn Host,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let mut running = self.running.lock().await;
            self.ensure(&mut running, cwd, host).await?;
            match takes_images(&running.info) {
                true => Ok(()),
                false => Err(Error::config(format!(
                    "backend `{}`: the agent does not take images (its answer to `initialize` \
                     has no promptCapabilities.image = true)",
                    self.def.name
                ))),
            }
        })
    }

    fn agent_commands(&self) -> Vec<(String, String)> {
        self.running
            .try_lock()
            .map(|r| r.commands.clone())
            .unwrap_or_default()
    }

    fn agent_session(&self) -> Option<String> {
        self.running.try_lock().ok()?.session.clone()
    }

    fn resume_agent_session(&self, id: Option<&str>, lacks: usize) {
        if let Ok(mut running) = self.running.try_lock() {
            if running.session.as_deref() != id {
                running.session = id.map(str::to_string);
                running.reopen = running.agent.is_some();
                running.lacks = lacks;
            }
        }
    }

    fn keeps_conversation(&self) -> bool {
        true
    }

    fn starts_fresh(&self) -> bool {
        let Ok(mut running) = self.running.try_lock() else {
            return false;
        };
        running.reopen
            || running.outstanding.is_some()
            || running.agent.as_mut().is_none_or(Agent::exited)
    }

    fn take_partial(&self) -> Option<Reply> {
        self.partial
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(agent) = self.running.lock().await.agent.take() {
                agent.close().await;
            }
        })
    }
}
