//! bash through the editor's terminal: when the client offers `terminal`, the bash tool's
//! command runs there (`terminal/create`), so the editor shows it live in the tool call
//! (`{"type": "terminal", "terminalId": ...}` in its content). Approval, the session's working
//! directory, the timeout (`terminal/kill`, then exit 124 as for local bash) and the output cap
//! are agent-loop's, as for the local tool; a cancelled turn drops the run, whose guard
//! releases the terminal (`terminal/release`), which kills the command.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, CreateTerminalResponse, KillTerminalRequest, ReleaseTerminalRequest,
    SessionUpdate, TerminalOutputRequest, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    WaitForTerminalExitRequest,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;

use agent_loop::editor::{timed_out, OUTPUT_CAP};
use agent_loop::editor::{Terminal, ToolOutput};
use agent_loop::BoxFuture;

use super::updates::{terminal_content, Notifier};

pub struct ClientTerminal {
    pub notifier: Notifier,
}

impl Terminal for ClientTerminal {
    fn run<'a>(
        &'a self,
        program: PathBuf,
        args: Vec<String>,
        cwd: &'a Path,
        timeout: Duration,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            match self.run_in_editor(program, args, cwd, timeout).await {
                Ok(output) => output,
                Err(e) => ToolOutput::error(format!("the editor's terminal failed: {e}")),
            }
        })
    }
}

impl ClientTerminal {
    async fn run_in_editor(
        &self,
        program: PathBuf,
        args: Vec<String>,
        cwd: &Path,
        timeout: Duration,
    ) -> Result<ToolOutput, agent_client_protocol::Error> {
        let n = &self.notifier;
        let create = CreateTerminalRequest::new(n.session.clone(), program.to_string_lossy())
            .args(args)
            .cwd(cwd.to_path_buf())
            .output_byte_limit(OUTPUT_CAP as u64);
        // A turn cancelled while the editor starts the command still releases it, once the
        // editor says which terminal it is.
        let mut creating = Creating {
            answer: Some(Box::pin(n.cx.send_request(create).block_task())),
            cx: n.cx.clone(),
            session: n.session.clone(),
        };
        let answer = creating.answer.as_mut().map(|a| a.as_mut());
        let created = answer.expect("set above").await;
        // Answered: nothing is left to wait for when it is dropped.
        creating.answer = None;
        let id = created?.terminal_id;
        let _release = Release {
            cx: n.cx.clone(),
            session: n.session.clone(),
            id: id.0.to_string(),
        };
        if let Some(call) = n.running_call() {
            n.set_terminal(&id.0);
            n.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call,
                ToolCallUpdateFields::new()
                    .status(ToolCallStatus::InProgress)
                    .content(vec![terminal_content(&id.0)]),
            )));
        }
        let wait = WaitForTerminalExitRequest::new(n.session.clone(), id.clone());
        let waited = tokio::time::timeout(timeout, n.cx.send_request(wait).block_task()).await;
        let timed_out_now = match waited {
            Ok(exited) => {
                exited?;
                false
            }
            Err(_) => {
                let kill = KillTerminalRequest::new(n.session.clone(), id.clone());
                n.cx.send_request(kill).block_task().await?;
                true
            }
        };
        let output = TerminalOutputRequest::new(n.session.clone(), id);
        let output = n.cx.send_request(output).block_task().await?;
        let status = output.exit_status.unwrap_or_default();
        let code: i32 = match (timed_out_now, status.exit_code) {
            (true, _) => 124,
            (false, Some(code)) => code.try_into().unwrap_or(-1),
            (false, None) => -1,
        };
        let mut text = format!("exit code: {code}\n");
        if timed_out_now {
            text.push_str(&timed_out(timeout));
        } else if let Some(signal) = &status.signal {
            text.push_str(&format!("killed by {signal}\n"));
        }
        let shown = agent_loop::text::strip_ansi(output.output.as_bytes());
        if !shown.is_empty() {
            text.push_str(&format!("output:\n{}\n", shown.trim_end_matches('\n')));
        }
        if output.truncated {
            text.push_str(&format!(
                "[output cut: the editor kept its last {OUTPUT_CAP} bytes]\n"
            ));
        }
        Ok(ToolOutput {
            ok: code == 0,
            output: text.trim_end().to_string(),
            exit_code: Some(code),
        })
    }
}

type Answer<T> =
    std::pin::Pin<Box<dyn Future<Output = Result<T, agent_client_protocol::Error>> + Send>>;

/// A `terminal/create` not yet answered: dropped (a cancelled turn), it waits for the answer
/// in a task of its own and releases the terminal.
struct Creating {
    answer: Option<Answer<CreateTerminalResponse>>,
    cx: ConnectionTo<Client>,
    session: String,
}

impl Drop for Creating {
    fn drop(&mut self) {
        if let Some(answer) = self.answer.take() {
            let (cx, session) = (self.cx.clone(), self.session.clone());
            tokio::spawn(async move {
                if let Ok(created) = answer.await {
                    let release = ReleaseTerminalRequest::new(session, created.terminal_id);
                    cx.send_request(release).detach();
                }
            });
        }
    }
}

/// Releases the terminal when the run ends or is dropped (a cancelled turn): the client
/// kills a command still running and frees the terminal.
struct Release {
    cx: ConnectionTo<Client>,
    session: String,
    id: String,
}

impl Drop for Release {
    fn drop(&mut self) {
        let release = ReleaseTerminalRequest::new(self.session.clone(), self.id.clone());
        self.cx.send_request(release).detach();
    }
}
