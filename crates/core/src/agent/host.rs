//! What a backend may ask of the loop during a call ([`crate::backend::Host`]): its events go
//! to the observer, and the approval questions of an agent that runs its own tools (a pty
//! backend) go through the session's approval policy, as the loop's own tool calls do.

use serde_json::json;

use super::approval::Policy;
use crate::backend::Host;
use crate::event::{ApprovalRequest, Decision, Event, Observer};
use crate::tools::{Subject, ToolSpec};
use crate::BoxFuture;

/// The observer and the policy of the running turn.
pub struct LoopHost<'a> {
    pub obs: &'a mut dyn Observer,
    pub policy: &'a mut Policy,
    pub tools: crate::tools::ToolContext,
}

impl Host for LoopHost<'_> {
    fn event(&mut self, event: Event) {
        self.obs.event(&event);
    }

    fn tool_context(&self) -> Option<crate::tools::ToolContext> {
        Some(self.tools.clone())
    }

    fn approves_all(&self) -> bool {
        self.policy.mode == super::approval::ApprovalMode::Never
    }

    fn allows(&self, request: &ApprovalRequest) -> bool {
        let (spec, subject) = judged(request);
        !self.policy.needs_approval(&request.call, &spec, &subject)
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            if self.allows(request) {
                return Decision::Once;
            }
            self.obs.event(&Event::ApprovalNeeded {
                call: request.call.clone(),
                summary: request.summary.clone(),
            });
            let decision = self.obs.approve(request).await;
            if decision == Decision::Always {
                self.policy.allow_always(&request.call.name);
            }
            decision
        })
    }
}

/// What the policy judges of an agent's own tool call: it changes things as far as
/// agent-loop can tell, and its main argument is what the agent showed, so `--allow
/// TOOL:GLOB` rules apply to it; the files it changes (`paths`, resolved under the root)
/// are judged too (a write into .git/ always asks).
fn judged(request: &ApprovalRequest) -> (ToolSpec, Subject) {
    let spec = ToolSpec::new(
        request.call.name.clone(),
        "a tool the agent runs itself".into(),
        "command".into(),
        true,
        json!({"type": "object"}),
    );
    let mut subject = match request.call.args.get("command") {
        Some(serde_json::Value::String(command)) => Subject::plain(command.clone()),
        _ => Subject::plain(request.summary.clone()),
    };
    if let Some(paths) = request.call.args["paths"].as_array() {
        subject.paths = paths
            .iter()
            .filter_map(|p| p.as_str().map(str::to_string))
            .collect();
    }
    (spec, subject)
}
