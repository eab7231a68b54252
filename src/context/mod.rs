//! The conversation agent-loop owns: typed messages, and the prompt text built from them for
//! backends that take one prompt string (agent CLIs). The backend never keeps the history;
//! every request is formatted from here, so the backend can change mid-conversation.

mod conversation;
mod prompt;

pub use conversation::{Conversation, Message, ToolCall};
pub use prompt::{render_prompt, PromptStyle};
