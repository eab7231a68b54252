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

    /// Why a changing file tool's call is refused before anyone is asked about it (its path
    /// leads outside the root, say): a question about a call that cannot run would be put to
    /// the user for nothing. Refused here, not run: the tool itself checks again.
    pub(super) fn refused_path(&self, call: &ToolCall) -> Option<String> {
        let spec = self.tools.get(&call.name)?.spec();
        if !spec.mutating {
            return None;
        }
        let param = spec.path_param.as_deref()?;
        let Some(Value::String(path)) = call.args.get(param) else {
            return None;
        };
        let refused = self.tool_context().checked_path(path).err()?;
        Some(refused.to_string())
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
