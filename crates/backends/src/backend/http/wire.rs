//! What a wire format must provide ([`Wire`]), and the pieces all three share: the system
//! prompt, the conversation made acceptable to an API, and the provider's error message.

use std::path::Path;

use serde_json::Value;

use super::failure::ReplyError;
use super::reply::ReplyBuilder;
use crate::context::Message;
use crate::tools::ToolSpec;

/// How a streamed reply is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Server-sent events (Anthropic, OpenAI).
    Sse,
    /// One JSON object per line (Ollama).
    Ndjson,
}

/// Everything a request body is built from.
pub struct BodyInput<'a> {
    pub base_url: &'a str,
    pub model: &'a str,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub stream: bool,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
}

/// One API's request and reply format.
pub trait Wire: Sync {
    /// Appended to `base_url`.
    fn path(&self) -> &'static str;
    /// Headers besides the content type: the API key (`None`: no key configured) and any
    /// version header. The first one carries the key.
    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)>;
    fn body(&self, input: &BodyInput) -> Value;
    /// Reads a whole (not streamed) reply.
    fn parse(&self, body: &Value, reply: &mut ReplyBuilder) -> Result<(), ReplyError>;
    fn framing(&self) -> Framing {
        Framing::Sse
    }
    /// Reads one streamed event: an SSE event (`event` is its type) or an NDJSON line
    /// (`event` is empty). Returns true for the last one.
    fn feed(&self, event: &str, data: &str, reply: &mut ReplyBuilder) -> Result<bool, ReplyError>;
}

/// The system prompt of HTTP backends. Tools are described natively, so it only sets the
/// scene; the text format CLI backends need is not part of it.
pub fn system_prompt(cwd: &Path) -> String {
    format!(
        "You are a coding agent driven by agent-loop. The working directory is {}. Use the \
         tools to look at and change files and to run commands; several tool calls in one \
         reply run in order. When the task is done, reply with the answer and no tool call.",
        cwd.display()
    )
}

/// The conversation with a result for every tool call. APIs reject a tool call left without
/// its result, which happens when a turn was cancelled while its tools ran.
pub fn with_all_results<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let mut open: Vec<(String, String)> = Vec::new();
    for message in messages {
        match message {
            Message::ToolResult { call_id, .. } => open.retain(|(id, _)| id != call_id),
            _ => close(&mut out, &mut open),
        }
        out.push(message.clone());
        if let Message::Assistant { tool_calls, .. } = message {
            open = tool_calls
                .iter()
                .map(|c| (c.id.clone(), c.name.clone()))
                .collect();
        }
    }
    close(&mut out, &mut open);
    out
}

/// The images of earlier messages (sent to another backend, or in a resumed session) as a
/// note in their text, for a model that takes none: a new prompt with images never gets
/// here (the turn is refused), but the history may hold some.
pub fn images_as_notes(messages: &mut [Message], backend: &str) {
    for message in messages {
        if let Message::User { text, images } = message {
            for image in images.drain(..) {
                // Escaped: a line end in a file's name would start a line of its own in the
                // transcript (a `User:` that nobody typed).
                let name = image
                    .name
                    .as_deref()
                    .map_or("an image".into(), |n| n.escape_debug().to_string());
                text.push_str(&format!(
                    "\n[{name} ({}) was attached here; not sent: backend `{backend}` takes no images]",
                    image.mime
                ));
            }
        }
    }
}

fn close(out: &mut Vec<Message>, open: &mut Vec<(String, String)>) {
    for (call_id, name) in open.drain(..) {
        out.push(Message::ToolResult {
            call_id,
            name,
            ok: false,
            output: "not run: the turn was cancelled".into(),
        });
    }
}

/// Tool arguments as the object APIs require; what was not one was already reported back to
/// the model as a malformed call.
pub fn args_object(args: &Value) -> Value {
    match args {
        Value::Object(_) => args.clone(),
        _ => Value::Object(Default::default()),
    }
}

/// A tool's output as sent back: never empty, since some APIs reject empty content.
pub fn result_text(output: &str) -> &str {
    if output.is_empty() {
        "(no output)"
    } else {
        output
    }
}

/// The string at `key`, or "" (absent, null, or not a string).
pub fn str_at<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An `Authorization: Bearer` header, when there is a key.
pub fn bearer(key: Option<&str>) -> Vec<(&'static str, String)> {
    key.map(|key| ("authorization", format!("Bearer {key}")))
        .into_iter()
        .collect()
}

/// Tool definitions in the `{"type": "function", "function": {...}}` form of OpenAI and
/// Ollama.
pub fn function_tools(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(|t| {
            serde_json::json!({"type": "function", "function": {
                "name": api_name(&t.name), "description": t.description, "parameters": t.schema(),
            }})
        })
        .collect()
}

/// The whole `tool_calls` of an OpenAI or Ollama message: `{id?, function: {name,
/// arguments}}`, arguments a JSON string (OpenAI) or an object (Ollama).
pub fn whole_function_calls(message: &Value, reply: &mut ReplyBuilder) {
    let calls = message.get("tool_calls").and_then(Value::as_array);
    for call in calls.into_iter().flatten() {
        reply.whole_call(
            call.get("id").and_then(Value::as_str),
            call.pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or(""),
            call.pointer("/function/arguments").unwrap_or(&Value::Null),
        );
    }
}

/// The provider's own error message in a JSON body or stream event, if it has one:
/// `{"error": {"message": ...}}` (Anthropic, OpenAI), `{"error": "..."}` (Ollama),
/// `{"message": ...}` or `{"detail": ...}` (some compatible servers).
pub fn error_in(value: &Value) -> Option<String> {
    let error = value.get("error");
    let text = error
        .and_then(|e| e.get("message"))
        .or(error.filter(|e| e.is_string()))
        .or_else(|| value.get("message").filter(|m| m.is_string()))
        .or_else(|| value.get("detail"))?;
    Some(match text {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// The provider's message in an error body, or the body itself, cut short.
pub fn error_message(body: &str) -> String {
    const MAX: usize = 500;
    if let Some(page) = html_page(body) {
        return page;
    }
    if let Some(message) = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| error_in(&v))
    {
        return message;
    }
    shorten(body.trim(), MAX)
}

/// An HTML page (a proxy's error page, a captive portal) said in one line, by its title.
pub fn html_page(body: &str) -> Option<String> {
    let start = body.trim_start().as_bytes();
    let opens = |tag: &str| {
        start
            .get(..tag.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(tag.as_bytes()))
    };
    if !(opens("<!doctype html") || opens("<html")) {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let title = lower
        .find("<title>")
        .map(|at| at + "<title>".len())
        .and_then(|from| Some((from, from + lower[from..].find("</title>")?)))
        .map(|(from, to)| {
            body[from..to]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        });
    Some(match title {
        Some(title) if !title.is_empty() => {
            format!("an HTML page titled \"{}\"", shorten(&title, 200))
        }
        _ => "an HTML page".to_string(),
    })
}

/// `text` cut to `max` characters, `...` marking a cut.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ToolCall;
    use serde_json::json;

    #[test]
    fn cancelled_calls_get_a_result() {
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "ls".into(),
            args: json!({}),
        };
        let messages = vec![
            Message::user("a"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("c1"), call("c2")],
            },
            Message::ToolResult {
                call_id: "c1".into(),
                name: "ls".into(),
                ok: true,
                output: "x".into(),
            },
            Message::user("b"),
        ];
        let fixed = with_all_results(&messages);
        assert_eq!(fixed.len(), 5);
        assert!(
            matches!(&fixed[3], Message::ToolResult { call_id, ok: false, .. } if call_id == "c2")
        );
        assert_eq!(fixed[4], messages[3]);
    }

    #[test]
    fn images_become_a_note_for_a_model_without_images() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend([0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0, 0, 0, 0]);
        let image = crate::context::Image::from_bytes(png, Some("a.png".into())).unwrap();
        let mut messages = vec![Message::User {
            text: "see".into(),
            images: vec![image],
        }];
        images_as_notes(&mut messages, "ds");
        assert_eq!(
            messages[0],
            Message::user(
                "see\n[a.png (image/png) was attached here; not sent: backend `ds` takes no images]"
            )
        );
    }

    #[test]
    fn provider_messages() {
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#
            ),
            "slow down"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message(r#"{"detail":"bad"}"#), "bad");
        assert_eq!(error_message(" Bad Gateway \n"), "Bad Gateway");
        assert!(error_message(&"x".repeat(900)).ends_with("..."));
    }
}

pub use crate::tools::api_name;

/// The tool a name from the API's reply stands for: a tool's own name, or its
/// [`api_name`]. Unknown names are kept, so the loop can say the tool does not exist.
pub fn tool_name(api: &str, tools: &[crate::tools::ToolSpec]) -> String {
    tools
        .iter()
        .find(|t| t.name == api)
        .or_else(|| tools.iter().find(|t| api_name(&t.name) == api))
        .map_or_else(|| api.to_string(), |t| t.name.clone())
}

#[cfg(test)]
mod name_tests {
    use super::*;

    #[test]
    fn dotted_names_round_trip() {
        let spec = crate::tools::ToolSpec::new(
            "mcp.files.read_file".into(),
            String::new(),
            String::new(),
            false,
            serde_json::json!({}),
        );
        assert_eq!(
            tool_name("mcp__files__read_file", std::slice::from_ref(&spec)),
            "mcp.files.read_file"
        );
        assert_eq!(tool_name("nope", &[spec]), "nope");
    }
}
