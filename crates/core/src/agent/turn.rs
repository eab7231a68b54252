//! One turn: call the backend, run the tools it asks for, feed the results back, repeat until
//! a reply asks for no tool or the iteration cap is reached.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::approval::Policy;
use super::error::AgentError;
use super::host::LoopHost;
use crate::backend::{Backend, Request};
use crate::context::{
    Artifacts, ContextManager, ContextSettings, Conversation, Message, Prompt, ToolCall, Window,
};
use crate::event::{ApprovalRequest, CallPurpose, Decision, Event, Observer};
use crate::parse::{ByBackend, RawArgs, RawCall, Totals};
use crate::tools::{
    ProgressReports, ProgressSink, Registry, Root, ToolContext, ToolOutput, WebOptions,
};
use crate::Error;

mod admit;
mod context;
mod count;
mod gate;
mod images;
mod recorded;
mod settings;

/// Settings of an [`Agent`].
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Backend calls allowed in one turn (`--max-iterations`).
    pub max_iterations: u32,
    /// Tool calls of one reply that run (`max_tool_calls`); the rest are answered as not run.
    pub max_tool_calls: u32,
    /// When tools may run without asking (`--approval`, `--allow`, `--yes`).
    pub policy: Policy,
    /// Where tools run.
    pub cwd: PathBuf,
    /// Where the file tools may go (`--root`).
    pub root: Root,
    /// The backend's context settings (`--context` applied).
    pub context: ContextSettings,
    /// Where cut tool outputs are saved in full.
    pub artifacts: Artifacts,
    /// What bash and MCP servers do not inherit; their values are masked in tool results.
    pub env: std::sync::Arc<crate::tools::EnvPolicy>,
    /// How read_url fetches (`web_timeout`, `web_connect_timeout`, `web_max_bytes`).
    pub web: WebOptions,
}

/// Owns the conversation, the backend and the tools.
pub struct Agent {
    pub(super) backend: Box<dyn Backend>,
    tools: Registry,
    pub conversation: Conversation,
    pub(super) context: ContextManager,
    options: AgentOptions,
    turn: u32,
    /// Tokens and cost of every backend call so far.
    pub totals: Totals,
    /// The same, split by the backend that made the call (`/tokens` of a session that
    /// changed backend).
    pub by_backend: ByBackend,
    /// The backend calls of the turn under way, from its start to its end: a cancelled
    /// turn's record says how many it made.
    running: Option<u32>,
    /// The editor the file tools go through, if a front end gave one.
    files: crate::tools::Files,
}

/// A call read from the reply, checked against the registry.
enum Checked {
    Valid(ToolCall),
    /// Cannot run; the message goes back to the model.
    Invalid(ToolCall, String),
}

impl Agent {
    pub fn new(backend: Box<dyn Backend>, tools: Registry, options: AgentOptions) -> Self {
        let context =
            ContextManager::new(options.context, options.artifacts.clone(), tools.specs());
        Agent {
            backend,
            tools,
            conversation: Conversation::new(),
            context,
            options,
            turn: 0,
            totals: Totals::default(),
            by_backend: ByBackend::new(),
            running: None,
            files: Default::default(),
        }
    }

    /// Sends read, write and edit through `files` (an editor's buffers) from now on.
    pub fn set_files(&mut self, files: crate::tools::Files) {
        self.files = files;
    }

    /// Continues a saved conversation, with its counts.
    pub fn restore(
        &mut self,
        conversation: Conversation,
        turns: u32,
        totals: Totals,
        by_backend: ByBackend,
    ) {
        self.conversation = conversation;
        self.turn = turns;
        self.totals = totals;
        self.by_backend = by_backend;
        // The trim point belongs to the history it was computed on.
        self.context.clear();
        self.count_local();
    }

    /// Keeps the first `len` messages (the REPL's `/undo` and `/retry`).
    pub fn truncate(&mut self, len: usize) {
        self.conversation.truncate(len);
        self.context.clear();
    }

    /// Its settings (a comparison builds its other agents from them).
    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// What the tools inherit of the environment, and what is masked in their output.
    pub fn set_env_policy(&mut self, env: std::sync::Arc<crate::tools::EnvPolicy>) {
        self.options.env = env;
    }

    /// Turns run so far (restored ones included).
    pub fn turns(&self) -> u32 {
        self.turn
    }

    /// The tool policy, for the REPL's `/yes`.
    pub fn policy_mut(&mut self) -> &mut Policy {
        &mut self.options.policy
    }

    /// Whether the backend takes images, where known without asking (see
    /// [`crate::backend::Backend::images_known`]).
    pub fn images_known(&self) -> Option<bool> {
        self.backend.images_known()
    }

    pub fn backend_name(&self) -> &str {
        self.backend.name()
    }

    /// Changes the backend mid-conversation: the next prompt carries all history in its format.
    pub fn set_backend(&mut self, backend: Box<dyn Backend>) {
        self.backend = backend;
        self.count_local();
    }

    /// Ends what the backend keeps between turns (a terminal agent's process) at session end.
    pub async fn shutdown(&self) {
        self.backend.shutdown().await;
    }

    /// The tools that exist for this session.
    pub fn tools(&self) -> &Registry {
        &self.tools
    }

    /// Runs one tool call the user asked for directly (the REPL's `/commit`), through the same
    /// approval as the model's calls.
    pub async fn run_user_tool(
        &mut self,
        name: &str,
        args: serde_json::Value,
        obs: &mut dyn Observer,
    ) -> ToolOutput {
        let call = ToolCall {
            id: self.conversation.next_call_id(),
            name: name.to_string(),
            args,
        };
        if self.tools.get(name).is_none() {
            return ToolOutput::error(format!("the {name} tool is not available (see --tools)"));
        }
        let output = self.run_tool(&call, obs).await;
        obs.event(&Event::ToolResult {
            call_id: call.id,
            tool: call.name,
            ok: output.ok,
            output: output.output.clone(),
            exit_code: output.exit_code,
        });
        output
    }

    /// The tools of this session; MCP servers add theirs, and replace them on a restart.
    pub fn tools_mut(&mut self) -> &mut Registry {
        &mut self.tools
    }

    /// Forgets the conversation (the REPL's `clear`).
    pub fn clear(&mut self) {
        self.conversation.clear();
        self.context.clear();
    }

    /// Runs one turn for `input` and returns the final answer. Dropping the future cancels the
    /// turn: a running backend or tool process group is killed.
    ///
    /// A prompt with images to a backend that takes none, or whose first request would pass
    /// the context budget, is refused before anything is sent or recorded.
    pub async fn run_turn(
        &mut self,
        prompt: impl Into<Prompt>,
        obs: &mut dyn Observer,
    ) -> Result<String, Error> {
        let notices = self.admit(prompt.into(), obs).await?;
        self.turn += 1;
        self.running = Some(0);
        let turn = self.turn;
        if let Some(Message::User { text, images }) = self.conversation.messages.last() {
            obs.event(&Event::TurnStarted {
                turn,
                input: text.clone(),
                images: images.iter().map(|i| i.attached()).collect(),
            });
        }
        for message in notices {
            obs.event(&Event::ContextNotice { message });
        }
        let result = self.iterate(obs).await;
        if let Some(stats) = self.context.take_last_stats() {
            obs.event(&Event::Context { stats });
        }
        let (iterations, outcome) = match result {
            Ok((n, text)) => (n, Ok(text)),
            Err((n, e)) => {
                obs.event(&Event::Error {
                    message: e.message.clone(),
                    kind: e.kind,
                });
                (n, Err(e))
            }
        };
        self.running = None;
        obs.event(&Event::TurnFinished {
            turn,
            iterations,
            ok: outcome.is_ok(),
        });
        outcome
    }

    async fn iterate(&mut self, obs: &mut dyn Observer) -> Result<(u32, String), (u32, Error)> {
        let max = self.options.max_iterations.max(1);
        let name = self.backend.name().to_string();
        let mut gate = gate::Gate::new(self.options.max_tool_calls);
        for iteration in 1..=max {
            self.running = Some(iteration);
            obs.event(&Event::BackendStarted {
                backend: name.clone(),
                iteration,
            });
            self.context.set_recipient(admit::recipient(&*self.backend));
            if let Some(message) = self.count_exact().await {
                obs.event(&Event::ContextNotice { message });
            }
            let plan = {
                let mut emit = |e: Event| obs.event(&e);
                let backend = &*self.backend;
                let counts = super::summarize::Counts {
                    totals: &mut self.totals,
                    by_backend: &mut self.by_backend,
                };
                super::summarize::prepare(
                    &mut self.context,
                    &mut self.conversation,
                    backend,
                    &self.options.cwd,
                    counts,
                    &mut emit,
                )
                .await
            }
            .map_err(|e| (iteration, e))?;
            let mut window = Window::planned(&self.conversation, &plan, self.context.memory());
            window.system = self.context.system();
            let skills = self.context.skills_section(&self.conversation, &window);
            window.skills = skills.as_deref();
            let started = std::time::Instant::now();
            let request = Request {
                window: &window,
                tools: self.tools.specs(),
                cwd: &self.options.cwd,
            };
            let reply = {
                let tools = self.tool_context();
                let mut host = LoopHost {
                    obs,
                    policy: &mut self.options.policy,
                    tools,
                };
                self.backend.call_with_host(request, &mut host).await
            }
            .map_err(|e| (iteration, e))?;
            let elapsed_ms = started.elapsed().as_millis() as u64;
            obs.event(&Event::BackendFinished {
                backend: name.clone(),
                elapsed_ms,
                raw: reply.raw,
            });
            self.record_ran(reply.ran);
            let checked: Vec<Checked> = reply.calls.into_iter().map(|c| self.check(c)).collect();
            let tool_calls = checked
                .iter()
                .map(|c| match c {
                    Checked::Valid(call) | Checked::Invalid(call, _) => call.clone(),
                })
                .collect();
            self.conversation.push_counted(
                Message::Assistant {
                    text: reply.text.clone(),
                    tool_calls,
                },
                reply.usage.and_then(|u| u.output),
            );
            let final_answer = checked.is_empty();
            if final_answer || !reply.text.is_empty() {
                obs.event(&Event::Text {
                    text: reply.text.clone(),
                    final_answer,
                });
            }
            let split = self.by_backend.entry(name.clone()).or_default();
            if let Some(usage) = reply.usage {
                self.totals.add(&usage);
                split.add(&usage);
                self.context.observe_usage(&name, &plan, &usage);
                obs.event(&Event::Usage {
                    backend: name.clone(),
                    usage,
                    latency_ms: elapsed_ms,
                    purpose: CallPurpose::Answer,
                });
            } else {
                self.totals.add_uncounted();
                split.add_uncounted();
            }
            if final_answer {
                return Ok((iteration, reply.text));
            }
            if let Some(message) = gate.over_cap(checked.len()) {
                obs.event(&Event::Notice { message });
            }
            for (index, call) in checked.into_iter().enumerate() {
                if let Some(why) = gate.past_cap(index) {
                    let (Checked::Valid(call) | Checked::Invalid(call, _)) = call;
                    self.conversation.push(Message::ToolResult {
                        call_id: call.id,
                        name: call.name,
                        ok: false,
                        output: why,
                    });
                    continue;
                }
                let (call, output) = match call {
                    Checked::Valid(call) => match gate.check(&call) {
                        gate::Verdict::Run => {
                            let output = self.run_tool(&call, obs).await;
                            (call, output)
                        }
                        gate::Verdict::NotRun(why) => (call, ToolOutput::error(why)),
                    },
                    Checked::Invalid(call, why) => {
                        obs.event(&Event::ToolCall {
                            summary: self.subject(&call).shown,
                            call: call.clone(),
                        });
                        (call, ToolOutput::error(why))
                    }
                };
                obs.event(&Event::ToolResult {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    ok: output.ok,
                    output: output.output.clone(),
                    exit_code: output.exit_code,
                });
                let text = self
                    .context
                    .fit_tool_output(&call.id, &call.name, output.output);
                self.conversation.push(Message::ToolResult {
                    call_id: call.id,
                    name: call.name,
                    ok: output.ok,
                    output: text,
                });
            }
            if let Some(call) = gate.stopped() {
                return Err((
                    iteration,
                    AgentError::Repeated {
                        times: gate::REPEAT_LIMIT,
                        call,
                    }
                    .into(),
                ));
            }
        }
        Err((max, AgentError::IterationCap { calls: max }.into()))
    }

    /// Matches a printed call to a tool and its arguments; problems become an error result.
    fn check(&mut self, raw: RawCall) -> Checked {
        let id = raw
            .id
            .clone()
            .unwrap_or_else(|| self.conversation.next_call_id());
        let known = self.tools.names().join(", ");
        let Some(tool) = self.tools.resolve(&raw.name) else {
            let why = if raw.name.is_empty() {
                match &raw.args {
                    RawArgs::Malformed(m) => format!("{m}. The call was: {}", raw.raw),
                    _ => format!("a tool call without a tool name: {}", raw.raw),
                }
            } else {
                format!("unknown tool `{}`; the tools are: {known}", raw.name)
            };
            let args = match raw.args {
                RawArgs::Json(v) => v,
                _ => Value::String(raw.raw),
            };
            return Checked::Invalid(
                ToolCall {
                    id,
                    name: raw.name,
                    args,
                },
                why,
            );
        };
        let spec = tool.spec();
        let name = spec.name.clone();
        match raw.args {
            RawArgs::Json(args) => Checked::Valid(ToolCall { id, name, args }),
            RawArgs::Bare(value) => {
                let mut args = Map::new();
                args.insert(spec.main_param.clone(), Value::String(value));
                Checked::Valid(ToolCall {
                    id,
                    name,
                    args: Value::Object(args),
                })
            }
            RawArgs::Malformed(why) => Checked::Invalid(
                ToolCall {
                    id,
                    name: name.clone(),
                    args: Value::String(raw.raw.clone()),
                },
                format!("malformed call of {name}: {why}. The call was: {}", raw.raw),
            ),
        }
    }

    async fn run_tool(&mut self, call: &ToolCall, obs: &mut dyn Observer) -> ToolOutput {
        let subject = self.subject(call);
        let summary = subject.shown.clone();
        obs.event(&Event::ToolCall {
            call: call.clone(),
            summary: summary.clone(),
        });
        let Some(tool) = self.tools.get(&call.name) else {
            return ToolOutput::error(format!("unknown tool `{}`", call.name));
        };
        if self
            .options
            .policy
            .needs_approval(call, tool.spec(), &subject)
        {
            if let Some(refused) = self.refused_path(call) {
                return ToolOutput::error(refused);
            }
            let request = ApprovalRequest {
                call: call.clone(),
                summary,
                change: subject.change.clone(),
            };
            obs.event(&Event::ApprovalNeeded {
                call: request.call.clone(),
                summary: request.summary.clone(),
            });
            let spec = tool.spec().clone();
            match obs.approve(&request).await {
                Decision::Once => self.options.policy.approved_once(call, &spec),
                Decision::Always => self.options.policy.allow_always(&call.name),
                Decision::Deny(reason) => {
                    return ToolOutput::error(format!("not run: {reason}"));
                }
            }
        }
        // The registry is borrowed again: approval needed `self` mutably.
        let tool = self.tools.get(&call.name).expect("checked above");
        let (sink, mut reports, mut logs) = ProgressSink::channel();
        let ctx = ToolContext {
            progress: sink,
            ..self.tool_context()
        };
        let env = &self.options.env;
        let progress_event = |reports: &mut ProgressReports| {
            let latest = reports.borrow_and_update().clone();
            latest.map(|p| Event::ToolProgress {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                progress: p.progress,
                total: p.total,
                message: p.message.map(|m| env.redact(&m)),
            })
        };
        let log_event = |l: crate::tools::ToolLog| {
            let event = Event::ToolLog {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                server: l.server,
                level: l.level,
                data: l.data,
            };
            event.map_text(&|t| env.redact(t))
        };
        let run = tool.run(call.args.clone(), &ctx);
        tokio::pin!(run);
        // The tool's reports are shown while it runs, the latest only when they come faster
        // than the observer takes them; its log messages each (up to the sink's bound).
        let mut output = loop {
            tokio::select! {
                output = &mut run => break output,
                Ok(()) = reports.changed() => {
                    if let Some(event) = progress_event(&mut reports) {
                        obs.event(&event);
                    }
                }
                Some(l) = logs.recv() => obs.event(&log_event(l)),
            }
        };
        // What came with the result is shown before it.
        while let Ok(l) = logs.try_recv() {
            obs.event(&log_event(l));
        }
        if reports.has_changed().unwrap_or(false) {
            if let Some(event) = progress_event(&mut reports) {
                obs.event(&event);
            }
        }
        // A key a tool printed (bash `env`, an MCP server's error) never reaches the model.
        output.output = self.options.env.redact(&output.output);
        output
    }
}
