//! Typed messages of one conversation, in order, each with the size the token budget is
//! computed from, and the summary that stands in for older messages in `summarize` mode.

use serde::{Deserialize, Serialize};

use super::exact::{Exact, Method};
use super::image::Image;
use super::tokens::{image_bytes, MessageSize, CALL_OVERHEAD, MESSAGE_OVERHEAD};

pub use agent_loop_protocol::ToolCall;

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        text: String,
        /// Images attached to it (sessions saved before images have none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
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

impl Message {
    /// A user message of text alone.
    pub fn user(text: impl Into<String>) -> Message {
        Message::User {
            text: text.into(),
            images: Vec::new(),
        }
    }
}

/// What the user sends in one turn: text and the images attached to it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    pub text: String,
    pub images: Vec<Image>,
}

impl Prompt {
    pub fn new(text: impl Into<String>, images: Vec<Image>) -> Prompt {
        Prompt {
            text: text.into(),
            images,
        }
    }
}

impl From<&str> for Prompt {
    fn from(text: &str) -> Prompt {
        Prompt::new(text, Vec::new())
    }
}

impl From<String> for Prompt {
    fn from(text: String) -> Prompt {
        Prompt::new(text, Vec::new())
    }
}

impl From<&String> for Prompt {
    fn from(text: &String) -> Prompt {
        Prompt::new(text.as_str(), Vec::new())
    }
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
            exact: None,
        });
        self.messages.push(message);
    }

    /// The size of message `i` (measured now if it was pushed onto `messages` directly).
    pub fn size(&self, i: usize) -> MessageSize {
        self.sizes.get(i).copied().unwrap_or_else(|| MessageSize {
            bytes: message_bytes(&self.messages[i]),
            ..MessageSize::default()
        })
    }

    /// The messages with no exact count by `method` yet (none for the estimate).
    pub fn uncounted(&self, method: Method) -> Vec<usize> {
        if !method.is_exact() {
            return Vec::new();
        }
        (0..self.len())
            .filter(|&i| self.size(i).exact(method).is_none())
            .collect()
    }

    /// Message `i` is `exact.tokens` by `exact.method` (it replaces a count by another).
    pub fn set_exact(&mut self, i: usize, exact: Exact) {
        self.sync_sizes();
        self.sizes[i].exact = Some(exact);
    }

    /// Counts every message not yet counted by `method` with `count`.
    pub fn count_exact(&mut self, method: Method, count: impl Fn(&Message) -> u64) {
        for i in self.uncounted(method) {
            let tokens = count(&self.messages[i]);
            self.set_exact(i, Exact { method, tokens });
        }
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

    /// Keeps the first `len` messages (`/undo`, a refused prompt), their sizes with them.
    pub fn truncate(&mut self, len: usize) {
        self.messages.truncate(len);
        self.sizes.truncate(len);
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

/// The bytes a message adds to a prompt; an image counts as the bytes of text its tokens
/// would take ([`image_bytes`]).
pub fn message_bytes(message: &Message) -> usize {
    MESSAGE_OVERHEAD
        + match message {
            Message::User { text, images } => {
                text.len()
                    + images
                        .iter()
                        .map(|i| image_bytes(i.tokens()))
                        .sum::<usize>()
            }
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
        c.messages.push(Message::user("abc"));
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

    #[test]
    fn images_count_by_their_pixels_and_old_sessions_load() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(750u32.to_be_bytes());
        png.extend(100u32.to_be_bytes());
        png.extend([8, 6, 0, 0, 0, 0, 0, 0, 0]);
        let image = Image::from_bytes(png, None).unwrap();
        let with = Message::User {
            text: "see".into(),
            images: vec![image],
        };
        // 75,000 pixels are 100 tokens, counted as 400 bytes of text.
        assert_eq!(
            message_bytes(&with),
            message_bytes(&Message::user("see")) + 400
        );
        let old: Message = serde_json::from_str(r#"{"role":"user","text":"hi"}"#).unwrap();
        assert_eq!(old, Message::user("hi"));
        let saved = serde_json::to_string(&Message::user("hi")).unwrap();
        assert!(!saved.contains("images"), "{saved}");
    }
}
