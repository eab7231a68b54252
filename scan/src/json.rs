//! JSON text read into a `serde_json::Value`, for the tool calls found in a reply: serde's
//! parser is generic, so its code is compiled in the crate that calls it, and here that is
//! at `opt-level = 3`. In agent-loop's size-first build it took a tenth of the time of
//! stripping and parsing an agent's output with a tool call every 4 KB.

use serde_json::Value;

/// `serde_json::from_str::<Value>`, with its errors.
#[inline(never)]
pub fn json_value(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str(text)
}
