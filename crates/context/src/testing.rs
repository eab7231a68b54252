//! Conversations for the context tests: messages of a known size (400 bytes of text, about
//! 104 tokens at 4 bytes per token with the per-message overhead).

use super::{Conversation, Message, ToolCall};

/// `tag` followed by `x`s, 400 bytes in all.
fn text(tag: &str) -> String {
    format!("{tag}{}", "x".repeat(400 - tag.len()))
}

/// A user message, then `pairs` tool calls, each with its result.
pub fn exchange(c: &mut Conversation, tag: &str, pairs: usize) {
    c.push(Message::user(text(&format!("{tag} task"))));
    for i in 0..pairs {
        let id = c.next_call_id();
        c.push(Message::Assistant {
            text: text(&format!("{tag} step {i}")),
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: "ls".into(),
                args: serde_json::json!({}),
            }],
        });
        c.push(Message::ToolResult {
            call_id: id,
            name: "ls".into(),
            ok: true,
            output: text(&format!("{tag} out {i}")),
        });
    }
}

/// `turns` exchanges of a user message and a plain answer, then the short task `now`.
pub fn chat(turns: usize) -> Conversation {
    let mut c = Conversation::new();
    for i in 0..turns {
        c.push(Message::user(text(&format!("{i} "))));
        c.push(Message::Assistant {
            text: text(&format!("{i} answer ")),
            tool_calls: vec![],
        });
    }
    c.push(Message::user("now"));
    c
}
