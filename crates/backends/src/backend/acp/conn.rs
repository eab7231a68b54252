//! One running ACP agent: the child process (its own session and process group, killed with
//! it), and the SDK's JSON-RPC connection over its stdin and stdout, served on a task of its
//! own. The agent's stdout is read through [`CappedLines`], so one line can cost at most the
//! cap of one message however long the agent makes it. Everything the agent sends (session
//! updates, requests, the answers to prompts) comes out of one channel in the order it
//! arrived, where the running turn takes it: a turn owns the host that can answer. That
//! channel is held to a budget ([`super::inbox`]).
//!
//! The agent's exit is watched beside its output: something it started can hold its stdout
//! open after it exited, so the end of the output is not the end of the agent. Once it has
//! exited, its group is killed, which ends the output after what it wrote before exiting.
//! When agent-loop is done with it, its stdin is closed and its group is sent SIGTERM at
//! once: claude-agent-acp and codex-acp do not exit at the end of their input, and an agent
//! has saved what it keeps of a turn by the time it answered the prompt (a session loads with
//! its last turn after that). SIGKILL follows if it has not exited within [`EXIT_WAIT`].

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio as Pipe;
use std::sync::{Arc, Mutex};

use acp::v1::{ConnectionTo, Responder};
use acp::UntypedMessage;
use agent_client_protocol as acp;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::inbox::{self, Inbound, Inbox, Outbox};
use crate::process::capped::{self as caps, Breach, CappedLines};
use crate::process::capped::{keep_tail, StderrTail};
use crate::process::GroupGuard;

/// How long an agent whose output closed is given to exit, for its exit status; how long an
/// agent sent SIGTERM is given before SIGKILL; how long the output of an agent that exited
/// is read on.
const EXIT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The most JSON values one message may hold: each costs agent-loop far more memory than its
/// text (a line of zeros within the cap on a line parsed into a gigabyte), and no message of
/// the protocol needs more.
const VALUES: usize = 100_000;

/// A started agent and its connection.
pub struct Agent {
    pub cx: ConnectionTo<acp::Agent>,
    pub inbound: Inbox,
    answers: Outbox,
    child: tokio::process::Child,
    /// It has exited (its group killed): its output is read on for what it wrote before.
    exited: bool,
    stderr: Arc<Mutex<StderrTail>>,
    breach: Breach,
    close: Option<oneshot::Sender<()>>,
    prompts: u64,
    /// It has just replayed a loaded session's history, which the next turn passes over.
    pub replayed: bool,
    // Last: the group is killed after the connection's ends are dropped.
    group: GroupGuard,
}

impl Agent {
    /// Starts `program` with `args` and the variables of `env` added, and connects to it
    /// (no handshake yet).
    pub async fn spawn(
        program: &Path,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: &Path,
    ) -> Result<Agent, SpawnError> {
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .envs(env)
            .current_dir(cwd)
            .kill_on_drop(true)
            .stdin(Pipe::piped())
            .stdout(Pipe::piped())
            .stderr(Pipe::piped());
        // Its own session and group: Ctrl-C at the terminal reaches agent-loop only (which
        // sends `session/cancel`), and killing the group takes what the agent started.
        crate::process::isolate(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| crate::process::explained(program, e))?;
        let group = GroupGuard::new(child.id());
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(SpawnError::NoPipes);
        };
        let stderr = Arc::new(Mutex::new(StderrTail::default()));
        if let Some(err) = child.stderr.take() {
            tokio::spawn(keep_tail(err, stderr.clone()));
        }
        let breach = Breach::default();
        let stdout = CappedLines::new(stdout, caps::LINE, breach.clone()).values(VALUES);
        let transport = acp::ByteStreams::new(stdin.compat_write(), stdout.compat());
        let (tx, inbound) = inbox::channel();
        let (cx_tx, cx_rx) = oneshot::channel();
        let (close, closed) = oneshot::channel::<()>();
        let (requests, notifications, ended) = (tx.clone(), tx.clone(), tx.clone());
        tokio::spawn(async move {
            let served = acp::Client
                .v1()
                .name("agent-loop")
                .on_receive_request(
                    async move |message: UntypedMessage, responder: Responder<Value>, _cx| {
                        let (method, params) = message.into_parts();
                        // A turn that is gone drops the receiver; the request is then
                        // dropped too, which answers it with an error.
                        let _ = requests.send(Inbound::Request {
                            method,
                            params,
                            responder,
                        });
                        Ok(())
                    },
                    acp::on_receive_request!(),
                )
                .on_receive_notification(
                    async move |message: UntypedMessage, _cx| {
                        let (method, params) = message.into_parts();
                        let _ = notifications.send(Inbound::Notification { method, params });
                        Ok(())
                    },
                    acp::on_receive_notification!(),
                )
                .connect_with(transport, async move |cx: ConnectionTo<acp::Agent>| {
                    let _ = cx_tx.send(cx.clone());
                    tokio::select! {
                        _ = closed => {}
                        _ = cx.incoming_closed() => {}
                    }
                    Ok(())
                })
                .await;
            let _ = ended.send(Inbound::Closed(served.err().map(|e| e.to_string())));
        });
        let Ok(cx) = cx_rx.await else {
            return Err(SpawnError::Ended(why_ended(
                &breach,
                &stderr,
                "it closed the connection at once",
            )));
        };
        Ok(Agent {
            cx,
            inbound,
            answers: tx,
            child,
            stderr,
            breach,
            close: Some(close),
            prompts: 0,
            replayed: false,
            exited: false,
            group,
        })
    }

    /// Sends a request and waits for its answer (or the end of the connection): for the
    /// handshake and the settings, not for prompts, whose turn reads other messages meanwhile.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Failure> {
        let message =
            UntypedMessage::new(method, params).map_err(|e| Failure::Local(e.to_string()))?;
        let sent = self.cx.send_request(message).block_task();
        tokio::pin!(sent);
        let answer = tokio::select! {
            biased;
            answer = &mut sent => answer,
            _ = self.child.wait(), if !self.exited => {
                self.gone();
                match tokio::time::timeout(EXIT_WAIT, &mut sent).await {
                    Ok(answer) => answer,
                    Err(_) => return Err(Failure::Ended(self.ended("it exited").await)),
                }
            }
        };
        match answer {
            Ok(value) => Ok(value),
            Err(e) if self.cx.termination().is_some() || self.exited() || closed(&e) => {
                Err(Failure::Ended(self.ended(&e.message).await))
            }
            Err(e) => Err(Failure::Refused(e)),
        }
    }

    /// Sends a prompt; its answer arrives on [`Agent::inbound`] as [`Inbound::Answered`]
    /// with the number returned.
    pub fn prompt(&mut self, params: Value) -> Result<u64, acp::Error> {
        self.prompts += 1;
        let number = self.prompts;
        let answers = self.answers.clone();
        let message = UntypedMessage::new("session/prompt", params)?;
        self.cx
            .send_request(message)
            .on_receiving_result(move |result| async move {
                let _ = answers.send(Inbound::Answered(number, result));
                Ok(())
            })?;
        Ok(number)
    }

    /// The next message from the agent. When the agent exits first, its group is killed,
    /// which ends its output after what it wrote: something it started no longer holds the
    /// turn past the agent's exit. `Closed` at the latest [`EXIT_WAIT`] after the exit.
    pub async fn next(&mut self) -> Option<Inbound> {
        if !self.exited {
            tokio::select! {
                biased;
                inbound = self.inbound.recv() => return inbound,
                _ = self.child.wait() => self.gone(),
            }
        }
        match tokio::time::timeout(EXIT_WAIT, self.inbound.recv()).await {
            Ok(inbound) => inbound,
            Err(_) => Some(Inbound::Closed(Some(
                "it exited, and its output was still held open".into(),
            ))),
        }
    }

    fn gone(&mut self) {
        self.exited = true;
        self.group.kill();
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Why the connection ended, for a message: the cap it broke, or its exit status (waited
    /// for a moment: its output closes as it exits) and the last lines of its stderr.
    pub async fn ended(&mut self, fallback: &str) -> String {
        let exit = tokio::time::timeout(EXIT_WAIT, self.child.wait()).await;
        let fallback = match exit {
            Ok(Ok(status)) => format!("it exited ({status})"),
            _ => fallback.to_string(),
        };
        why_ended(&self.breach, &self.stderr, &fallback)
    }

    /// Ends the connection, which closes the agent's stdin, and sends its group SIGTERM;
    /// an agent that does not exit within [`EXIT_WAIT`] has its group killed.
    pub async fn close(mut self) {
        if let Some(close) = self.close.take() {
            let _ = close.send(());
        }
        self.group.terminate();
        let _ = tokio::time::timeout(EXIT_WAIT, self.child.wait()).await;
    }
}

/// Why a request failed.
pub enum Failure {
    /// The agent answered with a JSON-RPC error.
    Refused(acp::Error),
    /// The connection ended before the answer.
    Ended(String),
    /// The request could not be made.
    Local(String),
}

/// Why an agent could not be started and connected to.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("{0}")]
    Start(#[from] std::io::Error),
    #[error("its stdin and stdout could not be piped")]
    NoPipes,
    /// It ended at once: how (its exit, a cap it broke, the end of its stderr).
    #[error("{0}")]
    Ended(String),
}

/// The error the SDK gives a request whose connection ended.
pub fn closed(e: &acp::Error) -> bool {
    e.data
        .as_ref()
        .is_some_and(|d| d["reason"].as_str().is_some_and(|r| r.contains("closed")))
}

fn why_ended(breach: &Breach, stderr: &Arc<Mutex<StderrTail>>, fallback: &str) -> String {
    if let Some(why) = breach.lock().unwrap_or_else(|e| e.into_inner()).clone() {
        return why;
    }
    let tail = stderr.lock().unwrap_or_else(|e| e.into_inner()).render();
    match tail.trim() {
        "" => fallback.to_string(),
        tail => format!("{fallback}; its stderr ends:\n{tail}"),
    }
}
