//! Typed messages of one conversation, in order.

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

/// The whole history of one conversation.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Conversation {
    pub messages: Vec<Message>,
    next_call_id: u64,
}

impl Conversation {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// A fresh call id, unique within this conversation.
    pub fn next_call_id(&mut self) -> String {
        self.next_call_id += 1;
        format!("call_{}", self.next_call_id)
    }

    pub fn clear(&mut self) {
        self.messages.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}
