//! One ACP session: a worker task that owns its [`Chat`] and handles the session's requests
//! in order (a prompt, a mode or backend change), and the [`Handle`] the server keeps to
//! queue them and to cancel the running turn (the chat's [`Canceller`]: the backend call and
//! the running tool are stopped, and the prompt answers `cancelled` at once).

use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::rc::Rc;

use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, CurrentModeUpdate, PromptRequest, PromptResponse, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigOptionValue, SessionConfigSelectOption, SessionMode,
    SessionModeState, SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeResponse, StopReason,
};
use agent_client_protocol::v1::Responder;
use agent_client_protocol::{Error as RpcError, ErrorCode};
use futures_util::FutureExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use agent_loop::chat::Prompt;
use agent_loop::chat::{Canceller, Chat, Invocation, Outcome};
use agent_loop::event::CutReason;
use agent_loop::settings::ApprovalMode;
use agent_loop::{Error, ErrorKind};

use super::commands::{classify, Line};
use super::content::user_message;
use super::updates::{Notifier, ToolFacts, Updates};

/// A request queued for a session's worker.
pub enum Job {
    Prompt(PromptRequest, Responder<PromptResponse>),
    SetMode(String, Responder<SetSessionModeResponse>),
    SetConfig(
        SetSessionConfigOptionRequest,
        Responder<SetSessionConfigOptionResponse>,
    ),
}

/// What the server keeps of a running session.
pub struct Handle {
    jobs: mpsc::UnboundedSender<Job>,
    /// A prompt is queued or running.
    busy: Rc<Cell<bool>>,
    /// A cancel came for the prompt queued: it answers `cancelled` without running. (A turn
    /// hears its canceller only once it runs; a cancel before would be lost.)
    cancel_queued: Rc<Cell<bool>>,
    /// When the client last sent the session something (the server's count of messages):
    /// the session unused longest is the one closed to make room ([`super::room`]).
    pub used: Cell<u64>,
    /// Closing it loses nothing: its file holds it (a turn saved, the last save not failed),
    /// or it holds nothing yet (a thread opened and not yet prompted).
    kept: Rc<Cell<bool>>,
    /// Ends the running turn.
    canceller: Canceller,
    /// The worker; it ends with what the session ran with, which a reopening restores.
    task: JoinHandle<Kept>,
}

/// What a session ran with that its file does not decide when it is opened again (the run's
/// flags would): the session it is on now (`/clear` starts another), its approval mode,
/// backend and model.
#[derive(Clone)]
pub struct Kept {
    pub session: String,
    pub mode: ApprovalMode,
    pub backend: String,
    pub model: Option<String>,
}

impl Handle {
    /// Starts the worker of `chat`.
    pub fn start(chat: Chat, notifier: Notifier, cwd: PathBuf) -> Handle {
        let (jobs, queue) = mpsc::unbounded_channel();
        let busy = Rc::new(Cell::new(false));
        let kept = Rc::new(Cell::new(closable(&chat, &notifier.session)));
        let cancel_queued = Rc::new(Cell::new(false));
        let canceller = chat.canceller();
        let worker = Worker {
            chat,
            notifier,
            cwd,
            busy: busy.clone(),
            cancel_queued: cancel_queued.clone(),
            kept: kept.clone(),
        };
        let task = tokio::task::spawn_local(worker.run(queue));
        Handle {
            jobs,
            busy,
            cancel_queued,
            used: Cell::new(0),
            kept,
            canceller,
            task,
        }
    }

    /// Queues a prompt, unless one is running: ACP has one turn per session at a time.
    pub fn prompt(&self, request: PromptRequest, responder: Responder<PromptResponse>) {
        if self.busy.replace(true) {
            let _ = responder.respond_with_error(RpcError::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "session {} is already running a prompt; cancel it (session/cancel) or wait for its answer",
                    request.session_id.0
                ),
            ));
            return;
        }
        self.queue(Job::Prompt(request, responder));
    }

    pub fn queue(&self, job: Job) {
        // The worker ends only after the handle is dropped.
        let _ = self.jobs.send(job);
    }

    /// Ends the running turn, or the prompt queued before it starts.
    pub fn cancel(&self) {
        if self.busy.get() {
            self.cancel_queued.set(true);
        }
        self.canceller.cancel();
    }

    /// Whether no prompt is queued or running.
    pub fn idle(&self) -> bool {
        !self.busy.get()
    }

    /// Whether closing it loses nothing, so that it can be closed and opened again.
    pub fn kept(&self) -> bool {
        self.kept.get()
    }

    /// Cancels the running turn and waits for the worker to shut the chat down (its MCP
    /// servers stopped, its lock and log let go); returns what it ran with (`None` if the
    /// worker panicked).
    pub async fn close(self) -> Option<Kept> {
        self.cancel();
        drop(self.jobs);
        self.task.await.ok()
    }
}

struct Worker {
    chat: Chat,
    notifier: Notifier,
    cwd: PathBuf,
    busy: Rc<Cell<bool>>,
    cancel_queued: Rc<Cell<bool>>,
    kept: Rc<Cell<bool>>,
}

impl Worker {
    async fn run(mut self, mut queue: mpsc::UnboundedReceiver<Job>) -> Kept {
        while let Some(job) = queue.recv().await {
            match job {
                Job::Prompt(request, responder) => {
                    // Checked and the turn started with no await between: a cancel either
                    // comes before (and is seen here) or reaches the running turn.
                    let result = match self.cancel_queued.replace(false) {
                        true => Ok(PromptResponse::new(StopReason::Cancelled)),
                        // A bug that panics ends this prompt with an error, not the session:
                        // left busy, it would refuse every later prompt.
                        false => AssertUnwindSafe(self.prompt(&request))
                            .catch_unwind()
                            .await
                            .unwrap_or_else(|_| {
                                Err(internal(Error::new(
                                    ErrorKind::Backend,
                                    "agent-loop failed inside this prompt (a bug: its message is \
                                     in the agent's log); the session goes on",
                                )))
                            }),
                    };
                    self.cancel_queued.set(false);
                    self.kept.set(closable(&self.chat, &self.notifier.session));
                    self.busy.set(false);
                    let _ = responder.respond_with_result(result);
                }
                Job::SetMode(mode, responder) => {
                    let result = self.set_mode(&mode).map(|()| SetSessionModeResponse::new());
                    let _ = responder.respond_with_result(result);
                }
                Job::SetConfig(request, responder) => {
                    let result = self
                        .set_config(&request)
                        .map(|()| SetSessionConfigOptionResponse::new(config_options(&self.chat)));
                    self.kept.set(closable(&self.chat, &self.notifier.session));
                    let _ = responder.respond_with_result(result);
                }
            }
        }
        let status = self.chat.status();
        let kept = Kept {
            session: self.chat.session().name.clone(),
            mode: self.chat.approval(),
            backend: status.backend,
            model: status.model,
        };
        self.chat.shutdown().await;
        kept
    }

    async fn prompt(&mut self, request: &PromptRequest) -> Result<PromptResponse, RpcError> {
        let prompt = user_message(&request.prompt).map_err(invalid)?;
        if prompt.text.trim().is_empty() && prompt.images.is_empty() {
            // As the CLI refuses an empty task: a turn of nothing would spend tokens.
            return Err(invalid(Error::config("the prompt is empty")));
        }
        let text = prompt.text.clone();
        let reported = self.notifier.usage.clone();
        let take = || std::mem::take(&mut *reported.lock().unwrap_or_else(|e| e.into_inner()));
        take();
        let stop_reason = match classify(&text) {
            Line::Prompt => self.turn(prompt).await?,
            Line::NotHere(name) => {
                let why = match name {
                    "load" => "the editor's own session list loads one",
                    _ => "answers of several backends side by side cannot be shown here",
                };
                self.notifier.message(&format!(
                    "/{name} is not offered in an editor's session: {why}"
                ));
                StopReason::EndTurn
            }
            Line::Command(invocation) => self.command(&invocation).await?,
        };
        // This prompt's own calls: a command such as /clear changes the session, whose totals
        // then start again; what no call reported is null.
        let used = take();
        let total = used.input.zip(used.output).map(|(i, o)| i + o);
        let usage = serde_json::json!({
            "usage": {
                "inputTokens": used.input,
                "outputTokens": used.output,
                "totalTokens": total,
                "costUsd": used.cost,
            }
        });
        Ok(PromptResponse::new(stop_reason).meta(usage.as_object().cloned()))
    }

    /// Runs one turn; a cancel ends it at once.
    async fn turn(&mut self, prompt: Prompt) -> Result<StopReason, RpcError> {
        let mut updates = Updates::new(self.notifier.clone(), &self.cwd, ToolFacts::of(&self.chat));
        match self.chat.turn(prompt, &mut updates).await {
            Ok(_) => Ok(match updates.cut {
                Some(CutReason::MaxTokens) => StopReason::MaxTokens,
                Some(CutReason::Refusal) => StopReason::Refusal,
                None => StopReason::EndTurn,
            }),
            Err(e) if e.kind == ErrorKind::Cancelled => Ok(StopReason::Cancelled),
            Err(e) => self.failed(e),
        }
    }

    /// How a turn that failed ends: its error, with the prompt's fate, as ACP's stop or as
    /// the request's error.
    fn failed(&self, e: agent_loop::Error) -> Result<StopReason, RpcError> {
        let e = self.chat.with_prompt_stays(e);
        match e {
            // A turn that could not go on ends as ACP's stops say, with why as the message.
            e if matches!(e.kind, ErrorKind::IterationCap | ErrorKind::Repeated) => {
                self.notifier.message(&format!("\n\n{e}"));
                Ok(StopReason::MaxTurnRequests)
            }
            e if e.kind == ErrorKind::ContextFull => {
                self.notifier.message(&format!("\n\n{e}"));
                Ok(StopReason::MaxTokens)
            }
            // Refused before it started (images to a backend that takes none): the
            // editor's request was what could not be done.
            e if e.kind == ErrorKind::Config => Err(invalid(e)),
            e => Err(internal(e)),
        }
    }

    /// Runs one of the library's commands; its answer is the agent's message. A change of
    /// mode or backend is told to the editor too.
    async fn command(&mut self, invocation: &Invocation) -> Result<StopReason, RpcError> {
        let (mode, backend) = (self.chat.approval(), self.chat.status().backend);
        let mut updates = Updates::new(self.notifier.clone(), &self.cwd, ToolFacts::of(&self.chat));
        let outcome = self.chat.command(invocation, &mut updates).await;
        drop(updates);
        if self.chat.approval() != mode {
            self.notifier
                .send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                    self.chat.approval().to_string(),
                )));
        }
        if self.chat.status().backend != backend {
            self.notifier
                .send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                    config_options(&self.chat),
                )));
        }
        match outcome.map_err(invalid)? {
            Outcome::Reply(text) | Outcome::Session { reply: text, .. } => {
                if !text.is_empty() {
                    self.notifier.message(&text);
                }
                Ok(StopReason::EndTurn)
            }
            Outcome::Turn { notice, input } => {
                self.notifier.message(&format!("{notice}\n\n"));
                self.turn(input).await
            }
            Outcome::Compare { .. } | Outcome::Unknown(_) => Err(invalid(Error::config(
                "this command is not offered in an editor's session",
            ))),
        }
    }

    fn set_mode(&mut self, mode: &str) -> Result<(), RpcError> {
        let mode: ApprovalMode = mode
            .parse()
            .map_err(|e: agent_loop::UnknownValue| invalid(Error::config(e.to_string())))?;
        self.chat.set_approval(mode);
        self.notifier
            .send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                mode.to_string(),
            )));
        Ok(())
    }

    fn set_config(&mut self, request: &SetSessionConfigOptionRequest) -> Result<(), RpcError> {
        let value = match &request.value {
            SessionConfigOptionValue::ValueId { value } => value.0.to_string(),
            _ => {
                return Err(invalid(Error::config(
                    "the backend option takes a backend name",
                )))
            }
        };
        match &*request.config_id.0 {
            BACKEND => self.chat.switch_backend(&value).map_err(invalid),
            other => Err(invalid(Error::config(format!(
                "no configuration option `{other}`; this agent has `{BACKEND}`"
            )))),
        }
    }
}

const BACKEND: &str = "backend";

/// The session's configuration options: the backend, among those that can run here (ACP's
/// model selector: a backend is what picks the model here).
pub fn config_options(chat: &Chat) -> Vec<SessionConfigOption> {
    let status = chat.status();
    let options: Vec<SessionConfigSelectOption> = chat
        .switchable_backends()
        .into_iter()
        .map(|name| SessionConfigSelectOption::new(name.clone(), name))
        .collect();
    vec![
        SessionConfigOption::select(BACKEND, "Backend", status.backend, options)
            .description(
                "The backend (agent CLI, HTTP API or terminal agent) the session runs on"
                    .to_string(),
            )
            .category(SessionConfigOptionCategory::Model),
    ]
}

/// The approval modes (the library's titles and descriptions), as ACP session modes.
pub fn modes(chat: &Chat) -> SessionModeState {
    let current = chat.approval().to_string();
    let modes = ApprovalMode::ALL.iter().map(|mode| {
        SessionMode::new(mode.to_string(), mode.title()).description(mode.description().to_string())
    });
    SessionModeState::new(current, modes.collect())
}

/// The answer to a message for a session this agent does not have open.
pub fn unknown(id: &str) -> RpcError {
    RpcError::new(
        ErrorCode::INVALID_PARAMS,
        format!("no session `{id}` in this agent: open it with session/new or session/load first"),
    )
}

pub fn invalid(e: Error) -> RpcError {
    RpcError::new(ErrorCode::INVALID_PARAMS, e.message)
}

pub fn internal(e: Error) -> RpcError {
    RpcError::new(ErrorCode::INTERNAL_ERROR, e.message)
}

/// Puts back what a session ran with before it was closed to make room, where the run's
/// flags chose otherwise: its approval mode, backend and model.
pub fn restore(chat: &mut Chat, kept: Kept) {
    chat.set_approval(kept.mode);
    if chat.status().backend != kept.backend {
        if let Err(e) = chat.switch_backend(&kept.backend) {
            eprintln!("agent-loop acp: session {}: {e}", chat.session().name);
        }
    }
    if let Some(model) = kept
        .model
        .filter(|m| chat.status().model.as_ref() != Some(m))
    {
        if let Err(e) = chat.set_model(&model) {
            eprintln!("agent-loop acp: session {}: {e}", chat.session().name);
        }
    }
}

/// Whether closing `chat`, the session the editor calls `id`, loses nothing: its file holds
/// it, or it holds nothing yet. (Not one cleared before any save: the name it is on now, with
/// no file or lock after the closing, is not one the room keeps from new sessions.)
fn closable(chat: &Chat, id: &str) -> bool {
    chat.is_kept() || (chat.messages().is_empty() && chat.session().name == id)
}
