//! Typed messages of one conversation, in order, each with the size the token budget is
//! computed from, and the summary that stands in for older messages in `summarize` mode.

use serde::{Deserialize, Serialize};

use super::tokens::{MessageSize, CALL_OVERHEAD, MESSAGE_OVERHEAD};

pub use agent_loop_protocol::ToolCall;

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        text: String,
    },
    /// The model's reply: the text shown to the user (tool-call markup removed) and the tool
    /// calls it asked for.
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, fed back to the model.
    ToolResult {
        call_id: String,
        name: String,
        ok: bool,
        output: String,
    },
}

/// The backend's own summary of the messages before `upto` (`summarize` mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub text: String,
    /// Messages `0..upto` are summarised (or were dropped) and are no longer sent.
    pub upto: usize,
}

/// The whole history of one conversation.
///
/// Change it only through its methods: `sizes` runs parallel to `messages`. (A message pushed
/// onto `messages` directly is measured when it is first needed.)
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Conversation {
    pub messages: Vec<Message>,
    #[serde(default)]
    sizes: Vec<MessageSize>,
    #[serde(default)]
    summary: Option<Summary>,
    next_call_id: u64,
}

impl Conversation {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a message; its token count will be an estimate.
    pub fn push(&mut self, message: Message) {
        self.push_counted(message, None);
    }

    /// Adds a message with the token count the backend reported for it, if any.
    pub fn push_counted(&mut self, message: Message, reported_tokens: Option<u64>) {
        self.sync_sizes();
        self.sizes.push(MessageSize {
            bytes: message_bytes(&message),
            reported: reported_tokens,
        });
        self.messages.push(message);
    }

    /// The size of message `i` (measured now if it was pushed onto `messages` directly).
    pub fn size(&self, i: usize) -> MessageSize {
        self.sizes.get(i).copied().unwrap_or_else(|| MessageSize {
            bytes: message_bytes(&self.messages[i]),
            reported: None,
        })
    }

    /// The summary standing in for older messages, if one was made.
    pub fn summary(&self) -> Option<&Summary> {
        self.summary.as_ref()
    }

    pub fn set_summary(&mut self, summary: Summary) {
        self.summary = Some(summary);
    }

    /// A fresh call id, unique within this conversation.
    pub fn next_call_id(&mut self) -> String {
        self.next_call_id += 1;
        format!("call_{}", self.next_call_id)
    }

    pub fn clear(&mut self) {
        self.messages.clear();
        self.sizes.clear();
        self.summary = None;
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    fn sync_sizes(&mut self) {
        while self.sizes.len() < self.messages.len() {
            let i = self.sizes.len();
            let size = self.size(i);
            self.sizes.push(size);
        }
    }
}

/// The bytes a message adds to a prompt.
pub fn message_bytes(message: &Message) -> usize {
    MESSAGE_OVERHEAD
        + match message {
            Message::User { text } => text.len(),
            Message::Assistant { text, tool_calls } => {
                text.len()
                    + tool_calls
                        .iter()
                        .map(|c| {
                            CALL_OVERHEAD + c.id.len() + c.name.len() + c.args.to_string().len()
                        })
                        .sum::<usize>()
            }
            Message::ToolResult {
                call_id,
                name,
                output,
                ..
            } => CALL_OVERHEAD + call_id.len() + name.len() + output.len(),
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_messages_even_when_pushed_directly() {
        let mut c = Conversation::new();
        c.messages.push(Message::User { text: "abc".into() });
        c.push_counted(
            Message::Assistant {
                text: "hello".into(),
                tool_calls: vec![],
            },
            Some(7),
        );
        assert_eq!(c.size(0).reported, None);
        assert!(c.size(0).bytes >= 3);
        assert_eq!(c.size(1).reported, Some(7));
        c.clear();
        assert!(c.is_empty());
        assert!(c.summary().is_none());
    }
}
