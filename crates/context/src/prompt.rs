//! The one prompt string sent to a CLI backend: a preamble that lists the tools and the exact
//! format to call them (the format the backend's tool-call regex parses), the memory file,
//! then the conversation window in the backend's `context_format`, then a cue for the
//! assistant's reply.

use std::fmt::Write as _;
use std::path::Path;

use super::formats::{write_messages, PromptStyle};
use super::system::{write_appended, write_opening, SystemMode};
use super::{Memory, Window};
use crate::tools::ToolSpec;

/// Builds the whole prompt for a CLI backend from a conversation window.
pub fn render_prompt(
    window: &Window<'_>,
    tools: &[ToolSpec],
    style: &PromptStyle,
    cwd: &Path,
) -> String {
    // A guess that saves most regrowth; the exact size would cost a pass over the messages.
    let mut out = String::with_capacity(8192 + 512 * window.messages.len());
    write_system(&mut out, window, tools, style, cwd);
    out.push_str("\n# Conversation\n");
    write_omitted(&mut out, window.omitted);
    write_messages(&mut out, window.summary, &window.messages, style);
    out
}

/// The first prompt of an agent's new session (an ACP agent's, which keeps its own
/// conversation) when agent-loop's conversation has earlier turns, or of a loaded session
/// that missed some (`resumed`): the window written as a CLI backend's prompt writes its
/// conversation, the newest user message last. The agent keeps its own tools and
/// instructions, so there is no preamble.
pub fn catch_up_prompt(window: &Window<'_>, resumed: bool) -> String {
    let style = PromptStyle {
        tool_call_format: "<tool_call>{json}</tool_call>".into(),
        format: super::ContextFormat::Plain,
        own_tools: true,
    };
    let mut out = String::from(match resumed {
        false => {
            "You join this conversation now: its earlier turns were with another agent or \
                  another session of yours."
        }
        true => {
            "Since your last turn, this conversation went on with another agent: here is \
                 what you missed."
        }
    });
    out.push_str(
        " Use your own tools as you need them, then reply to the user's last message.\n\n\
         # Conversation\n",
    );
    write_omitted(&mut out, window.omitted);
    write_messages(&mut out, window.summary, &window.messages, &style);
    out
}

/// The first prompt of an agent's new session (an ACP agent's, a terminal agent's new
/// process) and the line saying so, when the window has more than the newest message;
/// `None`: the newest message alone.
pub fn new_session_prompt(window: &Window<'_>) -> Option<(String, String)> {
    let earlier = window.messages.len().saturating_sub(1) + window.omitted;
    if earlier == 0 && window.summary.is_none() {
        return None;
    }
    let line = format!(
        "(the agent's new session is given the conversation so far: {})",
        crate::plural::count(earlier, "earlier message", "earlier messages")
    );
    Some((catch_up_prompt(window, false), line))
}

/// Everything before the conversation: the preamble, the user's system prompt and the memory
/// file (see `context::system` for how they combine).
pub fn write_system(
    out: &mut String,
    window: &Window<'_>,
    tools: &[ToolSpec],
    style: &PromptStyle,
    cwd: &Path,
) {
    write_opening(out, window.system, tools, cwd);
    write_tools(out, tools, style);
    write_appended(out, window.system, tools, cwd);
    // An agent with its own tools reads skills itself.
    if let Some(skills) = window.skills.filter(|_| !style.own_tools) {
        let _ = writeln!(out, "\n{skills}");
    }
    if let Some(memory) = window.memory {
        write_memory(out, memory);
    }
}

/// How to call a tool, and the tools.
fn write_tools(out: &mut String, tools: &[ToolSpec], style: &PromptStyle) {
    if style.own_tools {
        out.push_str("Use your own tools as you need them, then reply with the answer.\n");
        return;
    }
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
            tool.name,
            tool.description,
            tool.schema_text()
        );
    }
}

/// What a backend with native message arrays (the HTTP APIs) adds to its system prompt from
/// the window: the memory file, a note on left-out messages, and the summary of older ones.
pub fn native_preamble(window: &Window) -> String {
    let mut out = String::new();
    if let Some(memory) = window.memory {
        write_memory(&mut out, memory);
    }
    write_omitted(&mut out, window.omitted);
    if let Some(summary) = window.summary {
        let _ = writeln!(out, "\n# Summary of earlier messages\n{summary}");
    }
    out
}

fn write_omitted(out: &mut String, omitted: usize) {
    if omitted > 0 {
        let _ = writeln!(
            out,
            "\n({} of this conversation {} left out.)",
            crate::plural::count(omitted, "earlier message", "earlier messages"),
            if omitted == 1 { "is" } else { "are" }
        );
    }
}

fn write_memory(out: &mut String, memory: &Memory) {
    let _ = writeln!(
        out,
        "\n# Memory\nNotes kept in {} in the working directory; follow them.\n\n{}",
        memory.file_name(),
        memory.text.trim_end()
    );
}

/// The whole system prompt of a backend with native messages (the HTTP APIs): `builtin`, or
/// the user's text instead of it or after it, then the memory file and the window's notes.
pub fn native_system(builtin: String, window: &Window, tools: &[ToolSpec], cwd: &Path) -> String {
    let mut out = match window.system {
        Some(system) if system.mode == SystemMode::Replace => system.render(cwd, tools),
        _ => builtin,
    };
    if out.ends_with('\n') {
        out.pop();
    }
    let mut rest = String::new();
    write_appended(&mut rest, window.system, tools, cwd);
    out.push_str(rest.trim_end_matches('\n'));
    if let Some(skills) = window.skills {
        out.push('\n');
        out.push_str(skills);
    }
    out.push_str(&native_preamble(window));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{plan, Limits};
    use crate::ContextFormat;
    use crate::{ContextMode, Conversation, Message, Summary, ToolCall};

    const HEAD: &str =
        "You are a coding agent driven by agent-loop. The working directory is /w.\n\
                        No tools are available: answer from what you know.\n\n# Conversation\n";

    /// Two exchanges; the second (current) one has a tool call with its result.
    fn conversation() -> Conversation {
        let mut c = Conversation::new();
        c.push(Message::user("hi"));
        c.push(Message::Assistant {
            text: "Hello.".into(),
            tool_calls: vec![],
        });
        c.push(Message::user("list <files>"));
        c.push(Message::Assistant {
            text: "Looking.".into(),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "ls".into(),
                args: serde_json::json!({"path": "."}),
            }],
        });
        c.push(Message::ToolResult {
            call_id: "call_1".into(),
            name: "ls".into(),
            ok: true,
            output: "a.txt\nb & c.txt".into(),
        });
        c
    }

    /// The conversation with the answer to the call and a third user message.
    fn answered() -> Conversation {
        let mut c = conversation();
        c.push(Message::Assistant {
            text: "Two files.".into(),
            tool_calls: vec![],
        });
        c.push(Message::user("thanks"));
        c
    }

    fn style(format: ContextFormat) -> PromptStyle {
        PromptStyle {
            tool_call_format: "<tool_call>{json}</tool_call>".into(),
            format,
            own_tools: false,
        }
    }

    fn render(c: &Conversation, mode: ContextMode, format: ContextFormat) -> String {
        let limits = Limits {
            mode,
            max_tokens: 100_000,
            bytes_per_token: 4.0,
            method: Default::default(),
            fixed_bytes: 100,
            fixed_what: "the preamble takes",
            hint: 0,
        };
        let p = plan(c, &limits).unwrap();
        render_prompt(
            &Window::planned(c, &p, None),
            &[],
            &style(format),
            Path::new("/w"),
        )
    }

    const CALL: &str = r#"<tool_call>{"name":"ls","arguments":{"path":"."}}</tool_call>"#;

    #[test]
    fn plain_continue() {
        assert_eq!(
            render(&conversation(), ContextMode::Continue, ContextFormat::Plain),
            format!(
                "{HEAD}\nUser: hi\n\nAssistant: Hello.\n\nUser: list <files>\n\nAssistant: Looking.\n{CALL}\n\n\
                 Tool result:\n<tool_result id=\"call_1\" name=\"ls\" status=\"ok\">\na.txt\nb & c.txt\n</tool_result>\n\nAssistant:"
            )
        );
    }

    #[test]
    fn plain_fresh_has_only_the_current_exchange() {
        assert_eq!(
            render(&conversation(), ContextMode::Fresh, ContextFormat::Plain),
            format!(
                "{HEAD}\nUser: list <files>\n\nAssistant: Looking.\n{CALL}\n\n\
                 Tool result:\n<tool_result id=\"call_1\" name=\"ls\" status=\"ok\">\na.txt\nb & c.txt\n</tool_result>\n\nAssistant:"
            )
        );
    }

    #[test]
    fn plain_sliding_keeps_the_pair_and_the_task_and_says_what_is_left_out() {
        let c = answered();
        // The last 3 messages start at the result of call_1: its call comes along, and the
        // user message it answers.
        assert_eq!(
            render(&c, ContextMode::Sliding(3), ContextFormat::Plain),
            format!(
                "{HEAD}\n(2 earlier messages of this conversation are left out.)\n\nUser: list <files>\n\nAssistant: Looking.\n{CALL}\n\n\
                 Tool result:\n<tool_result id=\"call_1\" name=\"ls\" status=\"ok\">\na.txt\nb & c.txt\n</tool_result>\n\n\
                 Assistant: Two files.\n\nUser: thanks\n\nAssistant:"
            )
        );
        // sliding:1 is just the task.
        assert_eq!(
            render(&c, ContextMode::Sliding(1), ContextFormat::Plain),
            format!("{HEAD}\n(6 earlier messages of this conversation are left out.)\n\nUser: thanks\n\nAssistant:")
        );
    }

    #[test]
    fn plain_summarize_sends_the_summary_then_the_rest() {
        let mut c = conversation();
        c.set_summary(Summary {
            text: "The user said hi.".into(),
            upto: 2,
        });
        assert_eq!(
            render(&c, ContextMode::Summarize, ContextFormat::Plain),
            format!(
                "{HEAD}\nSummary of earlier messages:\nThe user said hi.\n\nUser: list <files>\n\nAssistant: Looking.\n{CALL}\n\n\
                 Tool result:\n<tool_result id=\"call_1\" name=\"ls\" status=\"ok\">\na.txt\nb & c.txt\n</tool_result>\n\nAssistant:"
            )
        );
    }

    #[test]
    fn markdown() {
        assert_eq!(
            render(&conversation(), ContextMode::Continue, ContextFormat::Markdown),
            format!(
                "{HEAD}\n## User\n\nhi\n\n## Assistant\n\nHello.\n\n## User\n\nlist <files>\n\n\
                 ## Assistant\n\nLooking.\n\n{CALL}\n\n## Tool result: ls (call_1, ok)\n\n```\na.txt\nb & c.txt\n```\n\n## Assistant\n"
            )
        );
    }

    #[test]
    fn json() {
        assert_eq!(
            render(&conversation(), ContextMode::Continue, ContextFormat::Json),
            format!(
                "{HEAD}\n[\n{{\"role\":\"user\",\"content\":\"hi\"}},\n\
                 {{\"role\":\"assistant\",\"content\":\"Hello.\"}},\n\
                 {{\"role\":\"user\",\"content\":\"list <files>\"}},\n\
                 {{\"role\":\"assistant\",\"content\":\"Looking.\",\"tool_calls\":[{{\"id\":\"call_1\",\"name\":\"ls\",\"arguments\":{{\"path\":\".\"}}}}]}},\n\
                 {{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"name\":\"ls\",\"status\":\"ok\",\"content\":\"a.txt\\nb & c.txt\"}}\n]\n\n\
                 Write the assistant's next reply in plain text, not as JSON."
            )
        );
    }

    #[test]
    fn json_summary_is_a_role_of_its_own() {
        let mut c = conversation();
        c.set_summary(Summary {
            text: "Said hi.".into(),
            upto: 2,
        });
        let prompt = render(&c, ContextMode::Summarize, ContextFormat::Json);
        assert!(
            prompt.contains("\n[\n{\"role\":\"summary\",\"content\":\"Said hi.\"},\n{\"role\":\"user\",\"content\":\"list <files>\"},"),
            "{prompt}"
        );
    }

    #[test]
    fn xml() {
        assert_eq!(
            render(&conversation(), ContextMode::Continue, ContextFormat::Xml),
            format!(
                "{HEAD}\n<conversation>\n<message role=\"user\">\nhi\n</message>\n\
                 <message role=\"assistant\">\nHello.\n</message>\n\
                 <message role=\"user\">\nlist &lt;files&gt;\n</message>\n\
                 <message role=\"assistant\">\nLooking.\n{CALL}\n</message>\n\
                 <message role=\"tool\" name=\"ls\" call_id=\"call_1\" status=\"ok\">\na.txt\nb &amp; c.txt\n</message>\n\
                 </conversation>\n\nWrite the assistant's next reply in plain text, without the XML tags."
            )
        );
    }

    #[test]
    fn memory_goes_into_the_preamble() {
        let c = conversation();
        let memory = Memory {
            path: "/w/AGENTS.md".into(),
            text: "* use tabs\n".into(),
        };
        let window = Window {
            memory: Some(&memory),
            ..Window::all(&c)
        };
        let prompt = render_prompt(&window, &[], &style(ContextFormat::Plain), Path::new("/w"));
        assert!(
            prompt.starts_with(
                "You are a coding agent driven by agent-loop. The working directory is /w.\n\
                 No tools are available: answer from what you know.\n\n# Memory\n\
                 Notes kept in AGENTS.md in the working directory; follow them.\n\n* use tabs\n\n# Conversation\n\nUser: hi\n"
            ),
            "{prompt}"
        );
    }

    #[test]
    fn tools_are_listed_with_the_backends_call_format() {
        let c = conversation();
        let tools = agent_loop_builtins::registry(Some(&["ls".to_string()])).unwrap();
        let style = PromptStyle {
            tool_call_format: "CALL {name} {args}".into(),
            format: ContextFormat::Plain,
            own_tools: false,
        };
        let prompt = render_prompt(&Window::all(&c), tools.specs(), &style, Path::new("/w"));
        assert!(
            prompt.contains("CALL TOOL_NAME {\"PARAMETER\":\"VALUE\"}"),
            "{prompt}"
        );
        assert!(prompt.contains("\n## ls\n"), "{prompt}");
        assert!(
            prompt.contains("Assistant: Looking.\nCALL ls {\"path\":\".\"}\n"),
            "{prompt}"
        );
    }

    #[test]
    fn a_catch_up_is_the_conversation_without_a_preamble() {
        let c = answered();
        let mut window = Window::all(&c);
        window.omitted = 2;
        let prompt = catch_up_prompt(&window, false);
        assert!(
            prompt.starts_with("You join this conversation now"),
            "{prompt}"
        );
        assert!(!prompt.contains("working directory"), "{prompt}");
        assert!(
            prompt.contains("\n(2 earlier messages of this conversation are left out.)\n"),
            "{prompt}"
        );
        assert!(
            prompt.ends_with(&format!(
                "\nUser: hi\n\nAssistant: Hello.\n\nUser: list <files>\n\nAssistant: Looking.\n{CALL}\n\n\
                 Tool result:\n<tool_result id=\"call_1\" name=\"ls\" status=\"ok\">\na.txt\nb & c.txt\n</tool_result>\n\n\
                 Assistant: Two files.\n\nUser: thanks\n\nAssistant:"
            )),
            "{prompt}"
        );
    }
}
