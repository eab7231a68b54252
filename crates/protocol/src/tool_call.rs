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
