//! The `terminal/...` requests of an ACP agent, asked for and served the way agent-loop's bash
//! tool runs commands: the same approval (the whole command line shown, where it runs when
//! that is not the session's folder; `--yes` and `--allow bash:...` rules apply), the shell found through PATH, the environment policy that keeps secrets out
//! (and out of the output), its own process group killed on kill, release or the end of the
//! turn, its output capped in memory, and every run reported in the events and the log. A
//! command runs on a task of its own, so the turn keeps reading the agent meanwhile.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol as acp;
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::backend::shell_words::quote;
use crate::backend::Host;
use crate::context::ToolCall;
use crate::event::{ApprovalRequest, Decision, Event};
use crate::process::{Progress, Spec};
use crate::tools::{ToolContext, ToolOutput};

/// Output kept of a command when the agent sets no limit, and the most it may ask for: the
/// agent is untrusted, and its limit is memory agent-loop holds.
const DEFAULT_LIMIT: usize = 1024 * 1024;
/// Commands an agent may have unreleased at once, each holding up to [`DEFAULT_LIMIT`].
const MAX_TERMINALS: usize = 16;
/// The longest a command may run.
const TIMEOUT: Duration = Duration::from_secs(600);

/// The commands the agent started in this turn, by terminal id.
#[derive(Default)]
pub struct Terminals {
    next: u64,
    running: HashMap<String, Terminal>,
}

struct Terminal {
    task: tokio::task::JoinHandle<()>,
    done: watch::Receiver<Option<ToolOutput>>,
    /// stdout and stderr as they came, the newest `limit` bytes.
    output: Arc<Mutex<Tail>>,
    redact: Arc<crate::tools::EnvPolicy>,
}

impl Drop for Terminals {
    fn drop(&mut self) {
        // Dropping a bash run kills its process group.
        for terminal in self.running.values() {
            terminal.task.abort();
        }
    }
}

impl Terminals {
    pub async fn answer(
        &mut self,
        method: &str,
        params: &Value,
        ctx: &ToolContext,
        host: &mut dyn Host,
    ) -> Result<Value, acp::Error> {
        if method == "terminal/create" {
            return self.create(params, ctx, host).await;
        }
        let id = params["terminalId"].as_str().unwrap_or("");
        let Some(terminal) = self.running.get_mut(id) else {
            return Err(acp::Error::invalid_params()
                .data(json!({"terminalId": id, "why": "no such terminal"})));
        };
        match method {
            "terminal/output" => {
                let done = terminal.done.borrow().clone();
                let (output, truncated) = {
                    let tail = terminal.output.lock().unwrap_or_else(|e| e.into_inner());
                    (String::from_utf8_lossy(&tail.bytes).into_owned(), tail.cut)
                };
                let output = terminal.redact.redact(&output);
                Ok(json!({
                    "output": output,
                    "truncated": truncated,
                    "exitStatus": done.map(|o| exit_status(&o)),
                }))
            }
            "terminal/wait_for_exit" => {
                let waited = terminal.done.wait_for(Option::is_some).await;
                let done = waited.map(|o| o.clone()).ok().flatten();
                Ok(
                    done.map_or(json!({"exitCode": null, "signal": "SIGKILL"}), |o| {
                        exit_status(&o)
                    }),
                )
            }
            "terminal/kill" => {
                terminal.task.abort();
                Ok(json!({}))
            }
            "terminal/release" => {
                if let Some(terminal) = self.running.remove(id) {
                    terminal.task.abort();
                    report(id, &terminal, host);
                }
                Ok(json!({}))
            }
            other => Err(acp::Error::method_not_found().data(json!({ "method": other }))),
        }
    }

    /// Runs the command once the user (or `--yes`, or an `--allow bash:...` rule) allowed
    /// it, as the bash tool's commands are: the agent is untrusted code.
    async fn create(
        &mut self,
        params: &Value,
        ctx: &ToolContext,
        host: &mut dyn Host,
    ) -> Result<Value, acp::Error> {
        let Some(program) = params["command"].as_str() else {
            return Err(acp::Error::invalid_params().data(json!({"why": "no `command` given"})));
        };
        if self.running.len() >= MAX_TERMINALS {
            return Err(acp::Error::new(
                -32000,
                format!("refused: {MAX_TERMINALS} commands are not released yet"),
            ));
        }
        let mut line = String::new();
        for var in params["env"].as_array().into_iter().flatten() {
            if let (Some(name), Some(value)) = (var["name"].as_str(), var["value"].as_str()) {
                if !is_variable_name(name) {
                    return Err(acp::Error::invalid_params()
                        .data(json!({"why": format!("`{name}` is not a variable name")})));
                }
                line.push_str(&format!("export {name}={}; ", quote(value)));
            }
        }
        line.push_str(program);
        for arg in params["args"].as_array().into_iter().flatten() {
            line.push(' ');
            line.push_str(&quote(arg.as_str().unwrap_or("")));
        }
        let mut ctx = ctx.clone();
        // Where it runs is part of what it does: a folder other than the session's is shown.
        let mut shown = line.clone();
        if let Some(cwd) = params["cwd"].as_str() {
            let dir = ctx.cwd.join(cwd);
            if dir != ctx.cwd {
                shown = format!("cd {} && {line}", quote(&dir.to_string_lossy()));
            }
            ctx.cwd = dir;
        }
        self.next += 1;
        let id = format!("term-{}", self.next);
        let call = ToolCall {
            id: id.clone(),
            name: "bash".into(),
            args: json!({ "command": line }),
        };
        host.event(Event::ToolCall {
            call: call.clone(),
            summary: format!("{shown} (for the agent)"),
        });
        let request = ApprovalRequest {
            call,
            summary: shown,
            change: None,
        };
        if let Decision::Deny(why) = host.approve(&request).await {
            host.event(Event::ToolResult {
                call_id: id,
                tool: "bash".into(),
                ok: false,
                output: format!("not run: {why}"),
                exit_code: None,
            });
            return Err(acp::Error::new(-32000, format!("not run: {why}")));
        }
        let (tx, done) = watch::channel(None);
        let limit = params["outputByteLimit"]
            .as_u64()
            .map_or(DEFAULT_LIMIT, |n| (n as usize).min(DEFAULT_LIMIT));
        let output = Arc::new(Mutex::new(Tail {
            bytes: Vec::new(),
            cut: false,
            limit,
        }));
        let spec = Spec {
            program: which::which("bash")
                .or_else(|_| which::which("sh"))
                .unwrap_or_else(|_| "sh".into()),
            args: vec!["-c".into(), line],
            env: Default::default(),
            env_remove: ctx.env.removed(),
            cwd: Some(ctx.cwd.clone()),
            stdin: None,
            timeout: TIMEOUT,
            cap: limit,
            keep_stdout: true,
            read_ahead: false,
            tick: None,
        };
        let sink = output.clone();
        let task = tokio::spawn(async move {
            let mut progress = |p: Progress| {
                if let Progress::Stdout(b) | Progress::Stderr(b) = p {
                    sink.lock().unwrap_or_else(|e| e.into_inner()).push(b);
                }
            };
            let outcome = match crate::process::run(&spec, &mut progress).await {
                Ok(finished) => ToolOutput {
                    ok: finished.exit_code() == Some(0),
                    output: String::new(),
                    exit_code: finished.exit_code(),
                },
                Err(e) => ToolOutput::error(format!("cannot run it: {e}")),
            };
            let _ = tx.send(Some(outcome));
        });
        self.running.insert(
            id.clone(),
            Terminal {
                task,
                done,
                output,
                redact: ctx.env.clone(),
            },
        );
        Ok(json!({ "terminalId": id }))
    }

    /// Reports the commands the agent did not release, for the log.
    pub fn report(&mut self, host: &mut dyn Host) {
        for (id, terminal) in &self.running {
            report(id, terminal, host);
        }
    }
}

/// A command's outcome and output, for the log.
fn report(id: &str, terminal: &Terminal, host: &mut dyn Host) {
    let done = terminal.done.borrow().clone();
    let output = {
        let tail = terminal.output.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&tail.bytes).into_owned()
    };
    host.event(Event::ToolResult {
        call_id: id.to_string(),
        tool: "bash".into(),
        ok: done.as_ref().is_some_and(|o| o.ok),
        output: terminal.redact.redact(&output),
        exit_code: done.and_then(|o| o.exit_code),
    });
}

/// The newest `limit` bytes of a command's output.
struct Tail {
    bytes: Vec<u8>,
    cut: bool,
    limit: usize,
}

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        if self.bytes.len() > self.limit {
            let mut start = self.bytes.len() - self.limit;
            // Not inside a UTF-8 character.
            while start < self.bytes.len() && (self.bytes[start] & 0xC0) == 0x80 {
                start += 1;
            }
            self.bytes.drain(..start);
            self.cut = true;
        }
    }
}

fn exit_status(output: &ToolOutput) -> Value {
    json!({ "exitCode": output.exit_code, "signal": null })
}

/// Whether `name` can follow `export` as one variable's name and nothing more.
fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
