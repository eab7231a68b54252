//! One turn: call the backend, run the tools it asks for, feed the results back, repeat until
//! a reply asks for no tool or the iteration cap is reached.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::{ApprovalRequest, Decision, Event, Observer};
use crate::backend::{Backend, Request};
use crate::context::{Conversation, Message, ToolCall};
use crate::parse::{RawArgs, RawCall};
use crate::tools::{Registry, ToolContext, ToolOutput};
use crate::{Error, ErrorKind};

/// Settings of an [`Agent`].
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Backend calls allowed in one turn (`--max-iterations`).
    pub max_iterations: u32,
    /// Run every tool without asking (`--yes`).
    pub auto_approve: bool,
    /// Where tools run.
    pub cwd: PathBuf,
}

/// Owns the conversation, the backend and the tools.
pub struct Agent {
    backend: Box<dyn Backend>,
    tools: Registry,
    pub conversation: Conversation,
    options: AgentOptions,
    /// Tools the user answered "always" for.
    always: HashSet<String>,
    turn: u32,
}

/// A call read from the reply, checked against the registry.
enum Checked {
    Valid(ToolCall),
    /// Cannot run; the message goes back to the model.
    Invalid(ToolCall, String),
}

impl Agent {
    pub fn new(backend: Box<dyn Backend>, tools: Registry, options: AgentOptions) -> Self {
        Agent {
            backend,
            tools,
            conversation: Conversation::new(),
            options,
            always: HashSet::new(),
            turn: 0,
        }
    }

    pub fn backend_name(&self) -> &str {
        self.backend.name()
    }

    /// The tools of this session; MCP servers add theirs, and replace them on a restart.
    pub fn tools_mut(&mut self) -> &mut Registry {
        &mut self.tools
    }

    /// Forgets the conversation (the REPL's `clear`).
    pub fn clear(&mut self) {
        self.conversation.clear();
    }

    /// Runs one turn for `input` and returns the final answer. Dropping the future cancels the
    /// turn: a running backend or tool process group is killed.
    pub async fn run_turn(&mut self, input: &str, obs: &mut dyn Observer) -> Result<String, Error> {
        self.turn += 1;
        let turn = self.turn;
        obs.event(&Event::TurnStarted {
            turn,
            input: input.to_string(),
        });
        self.conversation.push(Message::User {
            text: input.to_string(),
        });
        let result = self.iterate(obs).await;
        let (iterations, outcome) = match result {
            Ok((n, text)) => (n, Ok(text)),
            Err((n, e)) => {
                obs.event(&Event::Error {
                    message: e.message.clone(),
                });
                (n, Err(e))
            }
        };
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
        for iteration in 1..=max {
            obs.event(&Event::BackendStarted {
                backend: name.clone(),
                iteration,
            });
            let started = std::time::Instant::now();
            let request = Request {
                conversation: &self.conversation,
                tools: self.tools.specs(),
                cwd: &self.options.cwd,
            };
            let reply = {
                let mut emit = |e: Event| obs.event(&e);
                self.backend.call(request, &mut emit).await
            }
            .map_err(|e| (iteration, e))?;
            obs.event(&Event::BackendFinished {
                backend: name.clone(),
                elapsed_ms: started.elapsed().as_millis() as u64,
            });
            let checked: Vec<Checked> = reply.calls.into_iter().map(|c| self.check(c)).collect();
            self.conversation.push(Message::Assistant {
                text: reply.text.clone(),
                tool_calls: checked
                    .iter()
                    .map(|c| match c {
                        Checked::Valid(call) | Checked::Invalid(call, _) => call.clone(),
                    })
                    .collect(),
            });
            let final_answer = checked.is_empty();
            if final_answer || !reply.text.is_empty() {
                obs.event(&Event::Text {
                    text: reply.text.clone(),
                    final_answer,
                });
            }
            if let Some(usage) = reply.usage {
                obs.event(&Event::Usage {
                    backend: name.clone(),
                    usage,
                });
            }
            if final_answer {
                return Ok((iteration, reply.text));
            }
            for call in checked {
                let (call, output) = match call {
                    Checked::Valid(call) => {
                        let output = self.run_tool(&call, obs).await;
                        (call, output)
                    }
                    Checked::Invalid(call, why) => {
                        obs.event(&Event::ToolCall {
                            summary: self.summary(&call),
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
                self.conversation.push(Message::ToolResult {
                    call_id: call.id,
                    name: call.name,
                    ok: output.ok,
                    output: output.output,
                });
            }
        }
        Err((
            max,
            Error::new(
                ErrorKind::IterationCap,
                format!(
                    "stopped after {max} backend calls (the --max-iterations cap) while the model \
                     was still asking for tools; raise --max-iterations to let it go on"
                ),
            ),
        ))
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

    /// The call in a few words for the display.
    fn summary(&self, call: &ToolCall) -> String {
        let main = self
            .tools
            .get(&call.name)
            .map(|t| t.spec().main_param.clone());
        match (main, &call.args) {
            (Some(main), Value::Object(map)) => match map.get(&main) {
                Some(Value::String(s)) => s.clone(),
                _ => call.args.to_string(),
            },
            (_, Value::String(s)) => s.clone(),
            _ => call.args.to_string(),
        }
    }

    async fn run_tool(&mut self, call: &ToolCall, obs: &mut dyn Observer) -> ToolOutput {
        let summary = self.summary(call);
        obs.event(&Event::ToolCall {
            call: call.clone(),
            summary: summary.clone(),
        });
        let Some(tool) = self.tools.get(&call.name) else {
            return ToolOutput::error(format!("unknown tool `{}`", call.name));
        };
        if tool.spec().mutating && !self.options.auto_approve && !self.always.contains(&call.name) {
            let request = ApprovalRequest {
                call: call.clone(),
                summary,
            };
            obs.event(&Event::ApprovalNeeded {
                call: request.call.clone(),
                summary: request.summary.clone(),
            });
            match obs.approve(&request).await {
                Decision::Once => {}
                Decision::Always => {
                    self.always.insert(call.name.clone());
                }
                Decision::Deny(reason) => {
                    return ToolOutput::error(format!("not run: {reason}"));
                }
            }
        }
        let ctx = ToolContext {
            cwd: self.options.cwd.clone(),
        };
        // The registry is borrowed again: approval needed `self` mutably.
        let tool = self.tools.get(&call.name).expect("checked above");
        tool.run(call.args.clone(), &ctx).await
    }
}
