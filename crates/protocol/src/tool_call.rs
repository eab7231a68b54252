//! A tool call as the model asked for it: the unit events, logs and conversations share.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request from the model to run one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Unique within the conversation (`call_1`, `call_2`, ...), so results can be matched.
    pub id: String,
    pub name: String,
    pub args: Value,
}

impl ToolCall {
    /// The same call with `f` applied to the text of its arguments (to redact secrets); the
    /// arguments are kept as they were if `f` leaves them unreadable as JSON.
    pub fn map_text(&self, f: &dyn Fn(&str) -> String) -> ToolCall {
        ToolCall {
            id: self.id.clone(),
            name: self.name.clone(),
            args: serde_json::from_str(&f(&self.args.to_string()))
                .unwrap_or_else(|_| self.args.clone()),
        }
    }
}

/// What a call does, as its approval question shows it: what a file tool puts into its file,
/// below the path (a yes to a write of a `Makefile` or `.envrc` is a yes to code run later),
/// or what an agent's own question asks. Without one, the question is to run the summary.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The file's whole new content (write).
    Write(String),
    /// The text replaced and its replacement (edit); `all`: every occurrence of it.
    Edit { old: String, new: String, all: bool },
    /// An ACP agent's permission question, which agent-loop words: what it asks to do (`edit
    /// made.txt`, `run`) and the lines made of the agent's title, files and input. A line end
    /// inside one of them is the agent's and is shown; those between them are agent-loop's.
    Asked { what: String, lines: Vec<String> },
}

impl Change {
    /// The same change with `f` applied to its text (to redact secrets).
    pub fn map_text(&self, f: &dyn Fn(&str) -> String) -> Change {
        match self {
            Change::Write(content) => Change::Write(f(content)),
            Change::Edit { old, new, all } => Change::Edit {
                old: f(old),
                new: f(new),
                all: *all,
            },
            Change::Asked { what, lines } => Change::Asked {
                what: f(what),
                lines: lines.iter().map(|line| f(line)).collect(),
            },
        }
    }
}
