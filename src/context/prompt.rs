//! The one prompt string sent to a CLI backend: a preamble that lists the tools and the exact
//! format to call them (the format the backend's tool-call regex parses), then the
//! conversation, then a cue for the assistant's reply.

use std::fmt::Write as _;
use std::path::Path;

use super::{Conversation, Message};
use crate::tools::ToolSpec;

/// How a backend wants to see tool calls, taken from its `backends.toml` entry.
#[derive(Debug, Clone)]
pub struct PromptStyle {
    /// Template for one tool call: `{name}`, `{args}` (the arguments as JSON) and `{json}`
    /// (`{"name": ..., "arguments": {...}}`) are replaced.
    pub tool_call_format: String,
}

impl PromptStyle {
    /// One tool call written in this backend's format.
    pub fn format_call(&self, name: &str, args: &serde_json::Value) -> String {
        // Built by hand so "name" comes first, as models expect to read and write it.
        let json = format!(
            "{{\"name\":{},\"arguments\":{args}}}",
            serde_json::Value::String(name.to_string())
        );
        self.tool_call_format
            .replace("{name}", name)
            .replace("{args}", &args.to_string())
            .replace("{json}", &json.to_string())
    }
}

/// Builds the whole prompt for a CLI backend from the conversation.
pub fn render_prompt(
    conversation: &Conversation,
    tools: &[ToolSpec],
    style: &PromptStyle,
    cwd: &Path,
) -> String {
    let mut out = String::with_capacity(4096);
    write_preamble(&mut out, tools, style, cwd);
    out.push_str("\n# Conversation\n");
    for message in &conversation.messages {
        out.push('\n');
        match message {
            Message::User { text } => {
                let _ = writeln!(out, "User: {text}");
            }
            Message::Assistant { text, tool_calls } => {
                out.push_str("Assistant:");
                if !text.is_empty() {
                    let _ = write!(out, " {text}");
                }
                out.push('\n');
                for call in tool_calls {
                    let _ = writeln!(out, "{}", style.format_call(&call.name, &call.args));
                }
            }
            Message::ToolResult {
                call_id,
                name,
                ok,
                output,
            } => {
                let status = if *ok { "ok" } else { "error" };
                let _ = writeln!(
                    out,
                    "Tool result:\n<tool_result id=\"{call_id}\" name=\"{name}\" status=\"{status}\">\n{output}\n</tool_result>"
                );
            }
        }
    }
    out.push_str("\nAssistant:");
    out
}

fn write_preamble(out: &mut String, tools: &[ToolSpec], style: &PromptStyle, cwd: &Path) {
    let _ = writeln!(
        out,
        "You are a coding agent driven by agent-loop. The working directory is {}.",
        cwd.display()
    );
    if tools.is_empty() {
        out.push_str("No tools are available: answer from what you know.\n");
        return;
    }
    let example = style.format_call("TOOL_NAME", &serde_json::json!({"PARAMETER": "VALUE"}));
    let _ = writeln!(
        out,
        "You do not run anything yourself. To use a tool, write a tool call in exactly this \
         format, on its own line, then end your reply:\n{example}\n\
         The results come back in the next message. Several tool calls in one reply run in \
         order. When the task is done, reply with the answer and no tool call."
    );
    out.push_str("\n# Tools\n");
    for tool in tools {
        let _ = writeln!(
            out,
            "\n## {}\n{}\nArguments (JSON schema): {}",
            tool.name, tool.description, tool.schema
        );
    }
}
