//! Where and how this agent's tools run: the context a call gets, and the subject approval
//! judges and the display shows.

use serde_json::Value;

use super::Agent;
use crate::context::ToolCall;
use crate::tools::{Subject, ToolContext, WebOptions};

impl Agent {
    /// What approving the call means, and what the display shows of it: everything the call
    /// will use (see [`Subject`]).
    pub(super) fn subject(&self, call: &ToolCall) -> Subject {
        match (self.tools.get(&call.name), &call.args) {
            (Some(tool), Value::Object(_)) => tool.subject(&call.args, &self.tool_context()),
            (_, Value::String(s)) => Subject::plain(s.clone()),
            _ => Subject::plain(call.args.to_string()),
        }
    }

    /// Where and how the tools of this agent run.
    pub(super) fn tool_context(&self) -> ToolContext {
        ToolContext {
            cwd: self.options.cwd.clone(),
            root: self.options.root.clone(),
            // A cut result tells the model to read the rest there, wherever the root is.
            artifacts: Some(self.context.artifacts().dir().to_path_buf()),
            env: self.options.env.clone(),
            web: WebOptions {
                named: self.options.policy.named_patterns("read_url"),
                ..self.options.web.clone()
            },
            progress: Default::default(),
            files: self.files.clone(),
        }
    }
}
