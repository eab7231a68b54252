//! The terminal bridge (`type = "pty"`): drives an interactive, TUI-only agent through a
//! pseudo-terminal and reads its answers off a virtual screen, so that agents without a
//! single-task mode (or whose headless mode lacks their slash commands, memory and
//! extensions) can be used append-only.
//!
//! The agent runs on a pty of its own (`pty-process`: async over tokio, pure Rust over
//! rustix, no C code; `portable-pty` would need a blocking reader thread per agent and pulls
//! in nix, serial and shell-words). What it prints goes to a `vt100` screen with scrollback
//! (`screen`), which a turn reads (`turn`, `extract`). The agent's own UI is never shown.
//!
//! The agent lives as long as the session: started at the first message, kept between
//! turns so its own context carries over, started again if it died or a turn failed, and
//! closed at the end ([`Backend::shutdown`]): its `exit_keys` (or Ctrl-D) and a short grace,
//! or at once (`exit_by_sigterm`), SIGTERM, then SIGKILL to its process group. It keeps its
//! own tools (`tools = "own"`): agent-loop sends it only the newest user message (a new agent
//! process, the conversation so far first), reports the tool activity its screen shows, and
//! relays its approval questions through agent-loop's approval flow.

mod extract;
mod question;
mod reader;
mod screen;
mod session;
mod turn;

pub use question::{question, Detail, Question};
pub use reader::ScreenReader;

use std::path::{Path, PathBuf};

use crate::backend::{guard, Backend, BackendError, Emit, Host, Reply, Request};
use crate::config::PtyDef;
use crate::context::prompt::new_session_prompt;
use crate::context::{Message, Window};
use crate::event::{ApprovalRequest, Decision, Event, OutputStream, RawOutput};
use crate::{BoxFuture, Error};
use session::Session;
use turn::Turn;
pub use turn::{Decided, Phase};

pub struct PtyBackend {
    def: PtyDef,
    program: PathBuf,
    /// The running agent, between turns too.
    session: tokio::sync::Mutex<Option<Session>>,
}

/// One turn through a terminal agent, described for `agent-loop doctor`.
pub struct PtyProbe {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The visible screen at the end, as text.
    pub screen: String,
    /// The rows new since the message, as read before extraction.
    pub new_rows: String,
    /// The answer, or why there was none.
    pub answer: Result<String, Error>,
    /// Each phase's time and the rule that decided it.
    pub decided: Decided,
    /// A row of the screen matching `update_regex`: the agent updated itself or offers to.
    pub update_notice: Option<String>,
    pub raw: Vec<u8>,
}

/// What one message through the agent gave.
struct Outcome {
    answer: Result<String, Error>,
    decided: Decided,
    raw: Vec<u8>,
    /// The visible screen and the rows new since the message, at the end.
    screens: Option<(String, String)>,
    update_notice: Option<String>,
}

impl PtyBackend {
    /// Checks that the command exists (through `PATH` unless it is a path).
    pub fn new(def: PtyDef) -> Result<Self, Error> {
        let program = def.program()?;
        Ok(PtyBackend {
            def,
            program,
            session: tokio::sync::Mutex::new(None),
        })
    }

    fn args(&self, cwd: &Path) -> Vec<String> {
        self.def.args_in(cwd)
    }

    /// The running agent, started (again) if there is none, it died, its last turn was
    /// cut short, or agent-loop's conversation changed under it; how it came to be there
    /// (for `doctor`), and whether it was started just now.
    async fn ensure<'s>(
        &self,
        slot: &'s mut Option<Session>,
        cwd: &Path,
        host: &mut dyn Host,
    ) -> Result<(&'s mut Session, String, bool), Error> {
        // Its guard whenever agent-loop's approval asks: an agent started under --yes without
        // it is started again with it after `/yes off`.
        let guard = self.def.guard.as_ref().filter(|_| !host.approves_all());
        let unguarded = guard.is_some() && slot.as_ref().is_some_and(|s| s.guarded.is_none());
        let usable = slot.as_mut().is_some_and(Session::usable) && !unguarded;
        let mut how = "the agent was already running".to_string();
        if !usable {
            if let Some(old) = slot.take() {
                let why = if unguarded {
                    crate::backend::guard::UNGUARDED
                } else if old.stale {
                    "the conversation changed (/undo, /retry, /load, /clear)"
                } else if old.interrupted {
                    "its last turn did not finish"
                } else {
                    "it had exited"
                };
                host.event(Event::BackendOutput {
                    backend: self.def.name.clone(),
                    stream: OutputStream::Screen,
                    line: format!("(agent started again: {why})"),
                });
                if (old.stale || unguarded) && !old.interrupted {
                    // Idle: it is asked to quit, as at the end of the session.
                    old.close(&self.def.exit).await;
                } else {
                    drop(old);
                }
            }
            let dir = match &self.def.cwd {
                Some(dir) => cwd.join(dir),
                None => cwd.to_path_buf(),
            };
            let spawned = match guard::refused(guard, &dir) {
                Some(found) => Err(std::io::Error::other(guard::refusal(&found, true))),
                None => guard::start(guard, self.args(cwd), &self.def.env, &[], &dir),
            }
            .and_then(|start| {
                Session::spawn(&self.def, &self.program, start, guard.is_some(), &dir)
            });
            let session = spawned.map_err(|source| BackendError::Spawn {
                backend: self.def.name.clone(),
                program: self.program.clone(),
                source: crate::process::explained(&self.program, source),
            })?;
            how = format!(
                "started {} on a new pseudo-terminal",
                self.program.display()
            );
            *slot = Some(session);
        }
        Ok((slot.as_mut().expect("just set"), how, !usable))
    }

    /// One message through the agent; a new agent process is given `window` (the
    /// conversation so far) in its first message instead, where it holds more than that.
    async fn turn(
        &self,
        message: &str,
        window: Option<&Window<'_>>,
        cwd: &Path,
        host: &mut dyn Host,
    ) -> Outcome {
        let began = tokio::time::Instant::now();
        let mut decided = Decided::default();
        let mut slot = self.session.lock().await;
        let mut catch_up = None;
        let session = match self.ensure(&mut slot, cwd, host).await {
            Ok((session, how, started)) => {
                decided.start = Phase {
                    at: Some(began.elapsed()),
                    rule: how,
                };
                if started {
                    catch_up = window.and_then(new_session_prompt);
                }
                session
            }
            Err(e) => {
                return Outcome {
                    answer: Err(e),
                    decided,
                    raw: Vec::new(),
                    screens: None,
                    update_notice: None,
                }
            }
        };
        session.take_raw();
        let message = match catch_up {
            Some((text, line)) => {
                host.event(Event::BackendOutput {
                    backend: self.def.name.clone(),
                    stream: OutputStream::Screen,
                    line,
                });
                text
            }
            None => message.to_string(),
        };
        let message = message.as_str();
        // Cleared only when the turn ends well: a cancelled or failed turn leaves the agent
        // in a state the next turn cannot trust.
        session.interrupted = true;
        let mut turn = Turn::new(&self.def, session, host, decided, began);
        let answer = turn.run(message).await;
        let decided = std::mem::take(&mut turn.decided);
        let clean_end = turn.clean_end;
        drop(turn);
        if clean_end {
            session.interrupted = false;
        }
        let screens = (
            session.reader.visible_text(),
            session.reader.new_rows().join("\n"),
        );
        let all = session.reader.all_text();
        let update_notice = self.def.update.as_ref().and_then(|re| {
            let m = re.find(&all)?;
            let start = all[..m.start()].rfind('\n').map_or(0, |i| i + 1);
            let end = all[m.end()..].find('\n').map_or(all.len(), |i| m.end() + i);
            Some(all[start..end].trim().to_string())
        });
        Outcome {
            answer,
            decided,
            raw: session.take_raw(),
            screens: Some(screens),
            update_notice,
        }
    }

    async fn run(&self, request: Request<'_>, host: &mut dyn Host) -> Result<Reply, Error> {
        let (message, _) = newest_message(&request)?;
        let outcome = self
            .turn(message, Some(request.window), request.cwd, host)
            .await;
        Ok(Reply {
            text: outcome.answer?,
            calls: Vec::new(),
            usage: None,
            raw: Some(RawOutput {
                stdout: outcome.raw,
                ..RawOutput::default()
            }),
            ran: Vec::new(),
        })
    }

    /// Runs one message and describes everything about it, without judging it: what
    /// `agent-loop doctor` shows. The agent is closed afterwards.
    pub async fn probe(&self, message: &str, cwd: &Path, emit: &mut Emit<'_>) -> PtyProbe {
        let mut host = EmitHost { emit };
        let outcome = self.turn(message, None, cwd, &mut host).await;
        let (screen, new_rows) = outcome.screens.unwrap_or_default();
        self.shutdown().await;
        PtyProbe {
            program: self.program.clone(),
            args: self.args(cwd),
            screen,
            new_rows,
            answer: outcome.answer,
            decided: outcome.decided,
            update_notice: outcome.update_notice,
            raw: outcome.raw,
        }
    }
}

/// The newest user message: a terminal (or ACP) agent keeps the conversation itself.
pub(super) fn newest_message<'a>(
    request: &Request<'a>,
) -> Result<(&'a str, &'a [crate::context::Image]), Error> {
    request
        .window
        .messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::User { text, images } => Some((text.as_str(), images.as_slice())),
            _ => None,
        })
        .ok_or_else(|| BackendError::NoMessage.into())
}

/// A host that only reports events: approval questions are denied (doctor, and callers
/// without an approval flow).
pub(super) struct EmitHost<'a, 'e> {
    pub(super) emit: &'a mut Emit<'e>,
}

impl Host for EmitHost<'_, '_> {
    fn event(&mut self, event: Event) {
        (self.emit)(event);
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        let reason = format!(
            "nobody can be asked here, so {} was not allowed",
            request.call.name
        );
        Box::pin(async move { Decision::Deny(reason) })
    }
}

impl Backend for PtyBackend {
    fn name(&self) -> &str {
        &self.def.name
    }

    fn call<'a>(
        &'a self,
        request: Request<'a>,
        emit: &'a mut Emit<'_>,
    ) -> BoxFuture<'a, Result<Reply, Error>> {
        Box::pin(async move {
            let mut host = EmitHost { emit };
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

    fn keeps_conversation(&self) -> bool {
        true
    }

    /// agent-loop's conversation changed (`/undo`, `/retry`, `/load`, `/clear`): the agent's
    /// TUI, which keeps its own history, is started again at the next message, given the
    /// conversation as it is now.
    fn resume_agent_session(&self, _id: Option<&str>, _lacks: usize) {
        if let Ok(mut slot) = self.session.try_lock() {
            if let Some(session) = slot.as_mut() {
                session.stale = true;
            }
        }
    }

    fn starts_fresh(&self) -> bool {
        self.session
            .try_lock()
            .is_ok_and(|mut slot| !slot.as_mut().is_some_and(Session::usable))
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // An agent whose last turn failed may not listen: its group is killed at once.
            if let Some(session) = self.session.lock().await.take() {
                if !session.interrupted {
                    session.close(&self.def.exit).await;
                }
            }
        })
    }
}
