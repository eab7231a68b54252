//! Ollama's native chat API (`/api/chat`): tool calls with arguments as an object and no
//! ids (the loop numbers them), results back as `role: tool` messages naming the tool, and a
//! stream of one JSON object per line ending with `"done": true`.

use serde_json::{json, Value};

use super::failure::ReplyError;
use super::reply::{count, cut_by, ReplyBuilder};
use super::wire::{
    args_object, bearer, error_in, function_tools, result_text, str_at, whole_function_calls,
    BodyInput, Framing, Wire,
};
use crate::context::Message;

pub struct Ollama;

impl Wire for Ollama {
    fn path(&self) -> &'static str {
        "/api/chat"
    }

    /// Ollama itself takes no key; one configured is sent as a bearer token, for servers
    /// behind an authenticating proxy.
    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
        bearer(key)
    }

    fn body(&self, input: &BodyInput) -> Value {
        let mut messages = vec![json!({"role": "system", "content": input.system})];
        messages.extend(input.messages.iter().map(message));
        // Ollama streams unless told not to.
        let mut body = json!({"model": input.model, "messages": messages, "stream": input.stream});
        if !input.tools.is_empty() {
            body["tools"] = function_tools(input.tools);
        }
        let mut options = json!({});
        if let Some(n) = input.max_tokens {
            options["num_predict"] = json!(n);
        }
        if let Some(t) = input.temperature {
            options["temperature"] = json!(t);
        }
        if options.as_object().is_some_and(|o| !o.is_empty()) {
            body["options"] = options;
        }
        body
    }

    fn parse(&self, body: &Value, reply: &mut ReplyBuilder) -> Result<(), ReplyError> {
        if body.get("message").is_none() {
            return Err(ReplyError::Missing("message"));
        }
        read_line(body, reply);
        Ok(())
    }

    fn framing(&self) -> Framing {
        Framing::Ndjson
    }

    fn feed(&self, _event: &str, data: &str, reply: &mut ReplyBuilder) -> Result<bool, ReplyError> {
        let line: Value =
            serde_json::from_str(data).map_err(|source| ReplyError::PieceNotJson {
                what: "a line".to_string(),
                source,
            })?;
        if line.get("error").is_some() {
            return Err(ReplyError::Streamed(
                error_in(&line).unwrap_or_else(|| data.to_string()),
            ));
        }
        Ok(read_line(&line, reply))
    }
}

/// Reads one object (a stream line, or the whole reply); true if it is the last.
fn read_line(line: &Value, reply: &mut ReplyBuilder) -> bool {
    let message = line.get("message").unwrap_or(&Value::Null);
    reply.thinking(str_at(message, "thinking"));
    reply.text(str_at(message, "content"));
    whole_function_calls(message, reply);
    let done = line.get("done").and_then(Value::as_bool) == Some(true);
    if done {
        let u = reply.usage();
        count(&mut u.input, line, "prompt_eval_count");
        count(&mut u.output, line, "eval_count");
        reply.complete = true;
        reply.cut = cut_by(line.get("done_reason"));
    }
    done
}

fn message(message: &Message) -> Value {
    match message {
        Message::User { text, images } if images.is_empty() => {
            json!({"role": "user", "content": text})
        }
        Message::User { text, images } => json!({
            "role": "user",
            "content": text,
            "images": images.iter().map(|i| i.base64()).collect::<Vec<_>>(),
        }),
        Message::Assistant { text, tool_calls } => {
            let mut m = json!({"role": "assistant", "content": text});
            if !tool_calls.is_empty() {
                m["tool_calls"] = tool_calls
                    .iter()
                    .map(|c| json!({"function": {"name": super::wire::api_name(&c.name), "arguments": args_object(&c.args)}}))
                    .collect();
            }
            m
        }
        Message::ToolResult { name, output, .. } => {
            json!({"role": "tool", "tool_name": super::wire::api_name(name), "content": result_text(output)})
        }
    }
}
