//! What the conversation records besides the model's replies and agent-loop's tool results:
//! the tool calls an agent ran itself (an ACP agent's), a cancelled turn with the answer so
//! far, and what such an agent keeps of its own (its session, its slash commands).

use super::Agent;
use crate::context::{Message, ToolCall};

impl Agent {
    /// Records that the running turn was cancelled (its future was dropped), by the user
    /// unless `why` says otherwise (`stopped after 30s (--timeout)`): every tool call left
    /// without a result gets one saying so, and a note ends the turn, so the next prompt is
    /// well formed and the model knows what happened. Returns, when a turn was under way, the
    /// backend calls it made and the results given to its calls left without one.
    pub fn mark_cancelled(&mut self, why: Option<&str>) -> Option<(u32, Vec<Message>)> {
        let why = why.unwrap_or("cancelled by the user");
        let answered: std::collections::HashSet<String> = self
            .conversation
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::ToolResult { call_id, .. } => Some(call_id.clone()),
                _ => None,
            })
            .collect();
        let pending: Vec<ToolCall> = match self.conversation.messages.last() {
            Some(Message::User { .. }) | None => Vec::new(),
            _ => self
                .conversation
                .messages
                .iter()
                .rev()
                .find_map(|m| match m {
                    Message::Assistant { tool_calls, .. } => Some(tool_calls.clone()),
                    _ => None,
                })
                .unwrap_or_default()
                .into_iter()
                .filter(|c| !answered.contains(&c.id))
                .collect(),
        };
        let results: Vec<Message> = (pending.into_iter())
            .map(|call| Message::ToolResult {
                call_id: call.id,
                name: call.name,
                ok: false,
                output: format!("not run: the turn was {why}"),
            })
            .collect();
        for result in &results {
            self.conversation.push(result.clone());
        }
        // An agent's answer so far (an ACP agent's) is kept, marked as cut short.
        let mut text = String::new();
        if let Some(partial) = self.backend.take_partial() {
            self.record_ran(partial.ran);
            if !partial.text.is_empty() {
                text = partial.text + "\n";
            }
        }
        text.push_str(&format!("[turn {why}]"));
        self.conversation.push(Message::Assistant {
            text,
            tool_calls: Vec::new(),
        });
        self.running.take().map(|iterations| (iterations, results))
    }

    /// The slash commands of the backend's agent (an ACP agent's), with what each does.
    pub fn agent_commands(&self) -> Vec<(String, String)> {
        self.backend.agent_commands()
    }

    /// The id of the backend's agent's own session (an ACP agent's), to keep.
    pub fn agent_session(&self) -> Option<String> {
        self.backend.agent_session()
    }

    /// Whether the backend's agent keeps its own conversation (an ACP or a terminal agent).
    pub fn keeps_conversation(&self) -> bool {
        self.backend.keeps_conversation()
    }

    /// The agent's own session for the backend to resume (or `None`: a new one) at its
    /// next call, and how many of the latest messages it lacks.
    pub fn resume_agent_session(&self, id: Option<&str>, lacks: usize) {
        self.backend.resume_agent_session(id, lacks);
    }

    /// Records the tool calls the agent behind the backend ran itself (an ACP agent's) as
    /// calls and results, before its answer: a backend switched to later sees them.
    pub(super) fn record_ran(&mut self, ran: Vec<crate::backend::Ran>) {
        if ran.is_empty() {
            return;
        }
        let ids: Vec<String> = ran
            .iter()
            .map(|_| self.conversation.next_call_id())
            .collect();
        let tool_calls = ran
            .iter()
            .zip(&ids)
            .map(|(r, id)| ToolCall {
                id: id.clone(),
                name: r.name.clone(),
                args: r.args.clone(),
            })
            .collect();
        self.conversation.push(Message::Assistant {
            text: String::new(),
            tool_calls,
        });
        for (r, id) in ran.into_iter().zip(ids) {
            let output = self.context.fit_tool_output(&id, &r.name, r.output);
            self.conversation.push(Message::ToolResult {
                call_id: id,
                name: r.name,
                ok: r.ok,
                output,
            });
        }
    }
}
