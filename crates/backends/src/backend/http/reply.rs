//! Assembles one model reply from the pieces an API sends: text, tool calls whose arguments
//! may arrive as JSON fragments (keyed by block or call index), and usage. Every wire format
//! fills the same builder, streamed or not.

use serde_json::Value;

use crate::backend::Reply;
use crate::event::CutReason;
use crate::parse::{RawArgs, RawCall, Usage};

#[derive(Debug, Default)]
pub struct ReplyBuilder {
    text: String,
    /// Text not yet handed to the display.
    unsent: String,
    /// Thinking not yet handed to the display: never part of the reply's text.
    unsent_thinking: String,
    calls: Vec<PartialCall>,
    usage: Option<Usage>,
    /// The API said the reply is complete (a stop reason, a final chunk). A stream that
    /// ends before this was cut off.
    pub complete: bool,
    /// The model stopped early, by the API's stop reason.
    pub cut: Option<CutReason>,
}

/// What a reply hands the display as it comes.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    Thinking(String),
}

impl Piece {
    fn text(&self) -> &str {
        match self {
            Piece::Text(t) | Piece::Thinking(t) => t,
        }
    }
}

#[derive(Debug)]
struct PartialCall {
    /// The API's index for the call (content block, `tool_calls[].index`).
    slot: u64,
    id: Option<String>,
    name: String,
    /// The arguments as JSON text, possibly still in pieces.
    args: String,
}

impl ReplyBuilder {
    pub fn text(&mut self, piece: &str) {
        self.text.push_str(piece);
        self.unsent.push_str(piece);
    }

    /// The text added since the last call.
    pub fn take_unsent(&mut self) -> String {
        std::mem::take(&mut self.unsent)
    }

    /// A piece of the model's thinking (reasoning): shown, not kept in the reply.
    pub fn thinking(&mut self, piece: &str) {
        self.unsent_thinking.push_str(piece);
    }

    /// The thinking and then the text added since the last call, each that is not empty.
    pub fn take_pieces(&mut self) -> impl Iterator<Item = Piece> {
        let thinking = std::mem::take(&mut self.unsent_thinking);
        let text = self.take_unsent();
        [Piece::Thinking(thinking), Piece::Text(text)]
            .into_iter()
            .filter(|p| !p.text().is_empty())
    }

    /// Starts the call in `slot`, or adds to it: a non-empty id or name replaces what is
    /// there, an argument fragment is appended.
    pub fn call_piece(&mut self, slot: u64, id: Option<&str>, name: Option<&str>, args: &str) {
        let index = match self.calls.iter().position(|c| c.slot == slot) {
            Some(i) => i,
            None => {
                self.calls.push(PartialCall {
                    slot,
                    id: None,
                    name: String::new(),
                    args: String::new(),
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[index];
        if let Some(id) = id.filter(|s| !s.is_empty()) {
            call.id = Some(id.to_string());
        }
        if let Some(name) = name.filter(|s| !s.is_empty()) {
            call.name = name.to_string();
        }
        call.args.push_str(args);
    }

    /// A call that arrives whole; its arguments are an object (or a string holding one).
    pub fn whole_call(&mut self, id: Option<&str>, name: &str, args: &Value) {
        let slot = self.calls.iter().map(|c| c.slot + 1).max().unwrap_or(0);
        let args = match args {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        self.call_piece(slot, id, Some(name), &args);
    }

    /// The usage so far, to fill in.
    pub fn usage(&mut self) -> &mut Usage {
        self.usage.get_or_insert_with(Usage::default)
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.calls.is_empty()
    }

    pub fn finish(self) -> Reply {
        let calls = self
            .calls
            .into_iter()
            .map(|c| RawCall {
                raw: format!("{} {}", c.name, c.args),
                args: RawArgs::from_json_text(&c.args),
                id: c.id,
                name: c.name,
            })
            .collect();
        Reply {
            text: self.text,
            calls,
            usage: self.usage,
            raw: None,
            ran: Vec::new(),
        }
    }
}

/// The early stop a reason names: Anthropic's `stop_reason` or OpenAI's and Ollama's
/// `finish_reason` / `done_reason`; `None` for a stop at the end of the answer.
pub fn cut_by(reason: Option<&Value>) -> Option<CutReason> {
    match reason?.as_str()? {
        "max_tokens" | "length" => Some(CutReason::MaxTokens),
        "refusal" | "content_filter" => Some(CutReason::Refusal),
        _ => None,
    }
}

/// Sets `field` from a count in `value` at `key`, if there is one.
pub fn count(field: &mut Option<u64>, value: &Value, key: &str) {
    if let Some(n) = value.get(key).and_then(Value::as_u64) {
        *field = Some(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fragments_by_slot_become_calls_in_order() {
        let mut b = ReplyBuilder::default();
        b.text("I will ");
        b.call_piece(1, Some("c1"), Some("read"), "");
        b.call_piece(2, Some("c2"), Some("ls"), "{}");
        b.call_piece(1, None, None, "{\"path\":");
        b.text("look.");
        b.call_piece(1, None, None, "\"a\"}");
        assert_eq!(b.take_unsent(), "I will look.");
        assert_eq!(b.take_unsent(), "");
        let reply = b.finish();
        assert_eq!(reply.text, "I will look.");
        assert_eq!(reply.calls[0].id.as_deref(), Some("c1"));
        assert_eq!(reply.calls[0].args, RawArgs::Json(json!({"path": "a"})));
        assert_eq!(reply.calls[1].name, "ls");
    }

    #[test]
    fn whole_calls_take_objects_strings_and_nothing() {
        let mut b = ReplyBuilder::default();
        b.whole_call(None, "ls", &json!({"path": "."}));
        b.whole_call(None, "read", &json!("{\"path\":\"x\"}"));
        b.whole_call(None, "ls", &Value::Null);
        b.whole_call(None, "bash", &json!("{\"command\":"));
        let calls = b.finish().calls;
        assert_eq!(calls[0].args, RawArgs::Json(json!({"path": "."})));
        assert_eq!(calls[1].args, RawArgs::Json(json!({"path": "x"})));
        assert_eq!(calls[2].args, RawArgs::Json(json!({})));
        assert!(matches!(&calls[3].args, RawArgs::Malformed(m) if m.contains("not valid JSON")));
    }
}
