//! The effective system prompt of a backend, as `/system` shows it: for a CLI backend the
//! part of its prompt before the conversation, for an HTTP backend the system text of its
//! requests. Built by the same code the requests are.

use std::path::Path;

use crate::config::Definition;
use crate::context::{render_prompt, Memory, SystemPrompt, Window};
use crate::tools::ToolSpec;

/// What `def` would be sent as instructions now, with the user's system prompt and the
/// skills' section (see `context::skills`).
pub fn effective_system_prompt(
    def: &Definition,
    (system, skills): (Option<&SystemPrompt>, Option<&str>),
    memory: Option<&Memory>,
    tools: &[ToolSpec],
    cwd: &Path,
) -> String {
    let window = Window {
        memory,
        system,
        skills,
        ..Window::default()
    };
    match def {
        Definition::Cli(d) => {
            let prompt = render_prompt(&window, tools, &d.style, cwd);
            match prompt.find("\n# Conversation\n") {
                Some(end) => prompt[..end].to_string(),
                None => prompt,
            }
        }
        Definition::Http(_) => crate::context::native_system(
            super::http::builtin_system_prompt(cwd),
            &window,
            tools,
            cwd,
        ),
        // A terminal agent is typed each message alone: its instructions are its own.
        Definition::Pty(_) => String::from(
            "(a terminal agent (`type = \"pty\"`) keeps its own instructions; agent-loop sends \
             it each message alone)",
        ),
        Definition::Acp(_) => String::from(
            "(an ACP agent (`type = \"acp\"`) keeps its own instructions; agent-loop sends \
             it each message alone)",
        ),
    }
}
