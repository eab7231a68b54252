//! The Anthropic Messages API: `tool_use` content blocks out, `tool_result` blocks back in a
//! user message, SSE events (`content_block_delta` with `text_delta`, `thinking_delta` or
//! `input_json_delta`) when streamed. Thinking is shown, never kept in the reply.

use serde_json::{json, Value};

use super::failure::ReplyError;
use super::reply::{count, cut_by, ReplyBuilder};
use super::wire::{args_object, error_in, result_text, str_at, BodyInput, Wire};
use crate::context::Message;

/// The API version this format is written against.
const API_VERSION: &str = "2023-06-01";

pub struct Anthropic;

impl Wire for Anthropic {
    fn path(&self) -> &'static str {
        "/v1/messages"
    }

    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
        let mut headers = Vec::new();
        if let Some(key) = key {
            headers.push(("x-api-key", key.to_string()));
        }
        headers.push(("anthropic-version", API_VERSION.to_string()));
        headers
    }

    fn body(&self, input: &BodyInput) -> Value {
        let mut body = json!({
            "model": input.model,
            "max_tokens": input.max_tokens,
            "system": input.system,
            "messages": messages(input.messages),
        });
        if !input.tools.is_empty() {
            body["tools"] = input
                .tools
                .iter()
                .map(|t| json!({"name": super::wire::api_name(&t.name), "description": t.description, "input_schema": t.schema()}))
                .collect();
        }
        if let Some(t) = input.temperature {
            body["temperature"] = json!(t);
        }
        if input.stream {
            body["stream"] = json!(true);
        }
        body
    }

    fn parse(&self, body: &Value, reply: &mut ReplyBuilder) -> Result<(), ReplyError> {
        let content = body
            .get("content")
            .and_then(Value::as_array)
            .ok_or(ReplyError::Missing("content` array"))?;
        for block in content {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => reply.text(str_at(block, "text")),
                Some("thinking") => reply.thinking(str_at(block, "thinking")),
                Some("tool_use") => reply.whole_call(
                    block.get("id").and_then(Value::as_str),
                    str_at(block, "name"),
                    block.get("input").unwrap_or(&Value::Null),
                ),
                _ => {}
            }
        }
        if let Some(usage) = body.get("usage") {
            read_usage(usage, reply);
        }
        reply.cut = cut_by(body.get("stop_reason"));
        Ok(())
    }

    fn feed(&self, event: &str, data: &str, reply: &mut ReplyBuilder) -> Result<bool, ReplyError> {
        if event == "ping" {
            return Ok(false);
        }
        let value: Value =
            serde_json::from_str(data).map_err(|source| ReplyError::PieceNotJson {
                what: format!("a `{event}` event"),
                source,
            })?;
        let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event {
            "message_start" => {
                if let Some(usage) = value.pointer("/message/usage") {
                    read_usage(usage, reply);
                }
            }
            "content_block_start" => {
                let block = value.get("content_block").unwrap_or(&Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => reply.call_piece(
                        index,
                        block.get("id").and_then(Value::as_str),
                        block.get("name").and_then(Value::as_str),
                        // The input arrives as `input_json_delta` pieces.
                        "",
                    ),
                    Some("text") => reply.text(str_at(block, "text")),
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = value.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => reply.text(str_at(delta, "text")),
                    Some("thinking_delta") => reply.thinking(str_at(delta, "thinking")),
                    Some("input_json_delta") => {
                        reply.call_piece(index, None, None, str_at(delta, "partial_json"))
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(usage) = value.get("usage") {
                    read_usage(usage, reply);
                }
                reply.cut = cut_by(value.pointer("/delta/stop_reason"));
            }
            "message_stop" => {
                reply.complete = true;
                return Ok(true);
            }
            "error" => {
                return Err(ReplyError::Streamed(
                    error_in(&value).unwrap_or_else(|| data.to_string()),
                ));
            }
            _ => {}
        }
        Ok(false)
    }
}

/// The conversation as Anthropic messages: roles alternate, so consecutive messages of one
/// role (tool results, then the next user input) are merged into one.
fn messages(conversation: &[Message]) -> Vec<Value> {
    let mut out: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in conversation {
        let (role, blocks) = match message {
            Message::User { text, images } => {
                let mut blocks: Vec<Value> = images
                    .iter()
                    .map(|i| {
                        json!({"type": "image", "source": {
                            "type": "base64", "media_type": i.mime, "data": i.base64(),
                        }})
                    })
                    .collect();
                blocks.push(json!({"type": "text", "text": text}));
                ("user", blocks)
            }
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                blocks.extend(tool_calls.iter().map(|c| {
                    json!({"type": "tool_use", "id": c.id, "name": super::wire::api_name(&c.name), "input": args_object(&c.args)})
                }));
                ("assistant", blocks)
            }
            Message::ToolResult {
                call_id,
                ok,
                output,
                ..
            } => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": result_text(output),
                    "is_error": !ok,
                })],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// Usage fields as Anthropic names them; a later event's counts replace earlier ones.
fn read_usage(usage: &Value, reply: &mut ReplyBuilder) {
    let u = reply.usage();
    count(&mut u.input, usage, "input_tokens");
    count(&mut u.output, usage, "output_tokens");
    count(&mut u.cache_read, usage, "cache_read_input_tokens");
    count(&mut u.cache_write, usage, "cache_creation_input_tokens");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ToolCall;

    #[test]
    fn tool_results_merge_into_one_user_message() {
        let conversation = vec![
            Message::user("go"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "toolu_1".into(),
                        name: "ls".into(),
                        args: json!({}),
                    },
                    ToolCall {
                        id: "toolu_2".into(),
                        name: "read".into(),
                        args: json!("broken"),
                    },
                ],
            },
            Message::ToolResult {
                call_id: "toolu_1".into(),
                name: "ls".into(),
                ok: true,
                output: String::new(),
            },
            Message::ToolResult {
                call_id: "toolu_2".into(),
                name: "read".into(),
                ok: false,
                output: "malformed".into(),
            },
        ];
        let m = messages(&conversation);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1]["content"][1]["input"], json!({}));
        assert_eq!(m[2]["role"], "user");
        assert_eq!(m[2]["content"][0]["content"], "(no output)");
        assert_eq!(m[2]["content"][1]["tool_use_id"], "toolu_2");
        assert_eq!(m[2]["content"][1]["is_error"], true);
    }
}
