//! OpenAI Chat Completions, as OpenAI, OpenRouter, DeepSeek, Groq, llama.cpp's server, vLLM
//! and LM Studio speak it: `tool_calls` with arguments as a JSON string, results back as
//! `role: tool` messages, SSE chunks whose tool-call deltas are keyed by index, ended by
//! `data: [DONE]`.

use serde_json::{json, Value};

use super::failure::ReplyError;
use super::reply::{count, cut_by, ReplyBuilder};
use super::wire::{
    args_object, bearer, error_in, function_tools, result_text, str_at, whole_function_calls,
    BodyInput, Wire,
};
use crate::context::Message;

pub struct OpenAi;

impl Wire for OpenAi {
    fn path(&self) -> &'static str {
        "/chat/completions"
    }

    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
        bearer(key)
    }

    fn body(&self, input: &BodyInput) -> Value {
        let mut messages = vec![json!({"role": "system", "content": input.system})];
        messages.extend(input.messages.iter().filter_map(message));
        let mut body = json!({"model": input.model, "messages": messages});
        if !input.tools.is_empty() {
            body["tools"] = function_tools(input.tools);
        }
        if let Some(n) = input.max_tokens {
            // OpenAI's own API replaced `max_tokens` (which its reasoning models reject);
            // the compatible servers know only `max_tokens`.
            let field = if input.base_url.contains("://api.openai.com") {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body[field] = json!(n);
        }
        if let Some(t) = input.temperature {
            body["temperature"] = json!(t);
        }
        if input.stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    fn parse(&self, body: &Value, reply: &mut ReplyBuilder) -> Result<(), ReplyError> {
        let message = body
            .pointer("/choices/0/message")
            .ok_or(ReplyError::Missing("choices[0].message"))?;
        reasoning(message, reply);
        reply.text(str_at(message, "content"));
        whole_function_calls(message, reply);
        reply.cut = cut_by(body.pointer("/choices/0/finish_reason"));
        if let Some(usage) = body.get("usage") {
            read_usage(usage, reply);
        }
        Ok(())
    }

    fn feed(&self, _event: &str, data: &str, reply: &mut ReplyBuilder) -> Result<bool, ReplyError> {
        if data.trim() == "[DONE]" {
            reply.complete = true;
            return Ok(true);
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|source| ReplyError::PieceNotJson {
                what: "a chunk".to_string(),
                source,
            })?;
        if chunk.get("error").is_some() {
            return Err(ReplyError::Streamed(
                error_in(&chunk).unwrap_or_else(|| data.to_string()),
            ));
        }
        if let Some(choice) = chunk.pointer("/choices/0") {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            reasoning(delta, reply);
            reply.text(str_at(delta, "content"));
            for call in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                reply.call_piece(
                    call.get("index").and_then(Value::as_u64).unwrap_or(0),
                    call.get("id").and_then(Value::as_str),
                    call.pointer("/function/name").and_then(Value::as_str),
                    call.pointer("/function/arguments")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                );
            }
            // The usage chunk may still follow; a server that sends no `[DONE]` after a
            // finish reason still gave a whole reply.
            if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
                reply.complete = true;
                reply.cut = cut_by(choice.get("finish_reason"));
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            read_usage(usage, reply);
        }
        Ok(false)
    }
}

fn message(message: &Message) -> Option<Value> {
    Some(match message {
        Message::User { text, images } if images.is_empty() => {
            json!({"role": "user", "content": text})
        }
        Message::User { text, images } => {
            let mut parts = vec![json!({"type": "text", "text": text})];
            parts.extend(
                images
                    .iter()
                    .map(|i| json!({"type": "image_url", "image_url": {"url": i.data_url()}})),
            );
            json!({"role": "user", "content": parts})
        }
        Message::Assistant { text, tool_calls } if tool_calls.is_empty() => {
            if text.is_empty() {
                return None;
            }
            json!({"role": "assistant", "content": text})
        }
        Message::Assistant { text, tool_calls } => json!({
            "role": "assistant",
            "content": if text.is_empty() { Value::Null } else { json!(text) },
            "tool_calls": tool_calls.iter().map(|c| json!({
                "id": c.id,
                "type": "function",
                "function": {"name": super::wire::api_name(&c.name), "arguments": args_object(&c.args).to_string()},
            })).collect::<Vec<_>>(),
        }),
        Message::ToolResult {
            call_id, output, ..
        } => json!({"role": "tool", "tool_call_id": call_id, "content": result_text(output)}),
    })
}

/// The model's thinking in a message or a delta: `reasoning_content` (DeepSeek, Qwen) or
/// `reasoning` (Ollama's and OpenRouter's OpenAI-compatible endpoints).
fn reasoning(message: &Value, reply: &mut ReplyBuilder) {
    for key in ["reasoning_content", "reasoning"] {
        reply.thinking(str_at(message, key));
    }
}

fn read_usage(usage: &Value, reply: &mut ReplyBuilder) {
    let u = reply.usage();
    count(&mut u.input, usage, "prompt_tokens");
    count(&mut u.output, usage, "completion_tokens");
    count(&mut u.total, usage, "total_tokens");
    if let Some(details) = usage.get("prompt_tokens_details") {
        count(&mut u.cache_read, details, "cached_tokens");
    }
    if let Some(details) = usage.get("completion_tokens_details") {
        count(&mut u.thinking, details, "reasoning_tokens");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_tokens_are_thinking_tokens() {
        let mut reply = ReplyBuilder::default();
        read_usage(
            &json!({"prompt_tokens": 10, "completion_tokens": 50,
                    "completion_tokens_details": {"reasoning_tokens": 32}}),
            &mut reply,
        );
        let u = *reply.usage();
        assert_eq!(
            (u.input, u.output, u.thinking),
            (Some(10), Some(50), Some(32))
        );
    }
}
