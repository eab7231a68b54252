//! How a CLI backend sees the conversation (`context_format`): `plain`, `markdown`, `json` or
//! `xml`. Each delimits tool calls and results clearly; tool calls are always written in the
//! backend's own `tool_call_format` (inside the assistant's message, or as a `tool_calls`
//! array in JSON), so a model that imitates the history writes calls the backend parses.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::str::FromStr;

use serde::Serialize;

use super::{Image, Message, ToolCall};
use crate::UnknownValue;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextFormat {
    /// `User: ...` / `Assistant: ...`, results in `<tool_result>` blocks.
    #[default]
    Plain,
    /// A `##` heading per message, results in fenced blocks.
    Markdown,
    /// An array of role/content objects, one per line.
    Json,
    /// `<message role="user">...</message>`, text escaped.
    Xml,
}

impl FromStr for ContextFormat {
    type Err = UnknownValue;

    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        match s.trim() {
            "plain" => Ok(Self::Plain),
            "markdown" => Ok(Self::Markdown),
            "json" => Ok(Self::Json),
            "xml" => Ok(Self::Xml),
            other => Err(UnknownValue {
                what: "context format",
                value: other.to_string(),
                expected: "the formats are plain, markdown, json and xml",
            }),
        }
    }
}

impl fmt::Display for ContextFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Plain => "plain",
            Self::Markdown => "markdown",
            Self::Json => "json",
            Self::Xml => "xml",
        })
    }
}

fn status(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "error"
    }
}

/// Writes the summary, the messages, and the cue for the assistant's reply.
pub fn write_messages(
    out: &mut String,
    summary: Option<&str>,
    messages: &[&Message],
    style: &PromptStyle,
) {
    match style.format {
        ContextFormat::Plain => plain(out, summary, messages, style),
        ContextFormat::Markdown => markdown(out, summary, messages, style),
        ContextFormat::Json => json(out, summary, messages),
        ContextFormat::Xml => xml(out, summary, messages, style),
    }
}

/// A user message's text, each of its images a note in its place: a transcript is text, and
/// a model reading answers about an image it never knew of would be lost (an HTTP backend
/// that takes no images gets the like).
fn user_text<'a>(text: &'a str, images: &[Image]) -> Cow<'a, str> {
    if images.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut text = text.to_string();
    for image in images {
        // Escaped: a line end in a file's name would start a line of its own in the
        // transcript (a `User:` that nobody typed).
        let name = image
            .name
            .as_deref()
            .map_or("an image".into(), |n| n.escape_debug().to_string());
        let _ = write!(
            text,
            "\n[{name} ({}) was attached here; not sent: this conversation reaches the backend \
             as text]",
            image.mime
        );
    }
    Cow::Owned(text)
}

fn write_calls(out: &mut String, calls: &[ToolCall], style: &PromptStyle) {
    for call in calls {
        out.push_str(&style.format_call(&call.name, &call.args));
        out.push('\n');
    }
}

fn plain(out: &mut String, summary: Option<&str>, messages: &[&Message], style: &PromptStyle) {
    if let Some(summary) = summary {
        let _ = writeln!(out, "\nSummary of earlier messages:\n{summary}");
    }
    for message in messages {
        out.push('\n');
        match message {
            Message::User { text, images } => {
                let _ = writeln!(out, "User: {}", user_text(text, images));
            }
            Message::Assistant { text, tool_calls } => {
                out.push_str("Assistant:");
                if !text.is_empty() {
                    let _ = write!(out, " {text}");
                }
                out.push('\n');
                write_calls(out, tool_calls, style);
            }
            Message::ToolResult {
                call_id,
                name,
                ok,
                output,
            } => {
                let _ = writeln!(
                    out,
                    "Tool result:\n<tool_result id=\"{call_id}\" name=\"{name}\" status=\"{}\">\n{output}\n</tool_result>",
                    status(*ok)
                );
            }
        }
    }
    out.push_str("\nAssistant:");
}

/// A code fence longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

fn markdown(out: &mut String, summary: Option<&str>, messages: &[&Message], style: &PromptStyle) {
    if let Some(summary) = summary {
        let _ = writeln!(out, "\n## Summary of earlier messages\n\n{summary}");
    }
    for message in messages {
        match message {
            Message::User { text, images } => {
                let _ = writeln!(out, "\n## User\n\n{}", user_text(text, images));
            }
            Message::Assistant { text, tool_calls } => {
                out.push_str("\n## Assistant\n\n");
                if !text.is_empty() {
                    out.push_str(text);
                    out.push('\n');
                    if !tool_calls.is_empty() {
                        out.push('\n');
                    }
                }
                write_calls(out, tool_calls, style);
            }
            Message::ToolResult {
                call_id,
                name,
                ok,
                output,
            } => {
                let fence = fence(output);
                let _ = writeln!(
                    out,
                    "\n## Tool result: {name} ({call_id}, {})\n\n{fence}\n{output}\n{fence}",
                    status(*ok)
                );
            }
        }
    }
    out.push_str("\n## Assistant\n");
}

#[derive(Serialize)]
struct JsonCall<'a> {
    id: &'a str,
    name: &'a str,
    arguments: &'a serde_json::Value,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum JsonMessage<'a> {
    Summary {
        content: &'a str,
    },
    User {
        content: Cow<'a, str>,
    },
    Assistant {
        content: &'a str,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<JsonCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        name: &'a str,
        status: &'static str,
        content: &'a str,
    },
}

fn json(out: &mut String, summary: Option<&str>, messages: &[&Message]) {
    let items = summary
        .map(|content| JsonMessage::Summary { content })
        .into_iter()
        .chain(messages.iter().map(|m| {
            match m {
                Message::User { text, images } => JsonMessage::User {
                    content: user_text(text, images),
                },
                Message::Assistant { text, tool_calls } => JsonMessage::Assistant {
                    content: text,
                    tool_calls: tool_calls
                        .iter()
                        .map(|c| JsonCall {
                            id: &c.id,
                            name: &c.name,
                            arguments: &c.args,
                        })
                        .collect(),
                },
                Message::ToolResult {
                    call_id,
                    name,
                    ok,
                    output,
                } => JsonMessage::Tool {
                    tool_call_id: call_id,
                    name,
                    status: status(*ok),
                    content: output,
                },
            }
        }));
    out.push_str("\n[");
    for (i, item) in items.enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        // Serialising borrowed strings cannot fail.
        out.push_str(&serde_json::to_string(&item).unwrap_or_default());
    }
    out.push_str("\n]\n\nWrite the assistant's next reply in plain text, not as JSON.");
}

/// `text` with `&`, `<` and `>` escaped (and `"` too in attributes).
fn escape(out: &mut String, text: &str, attribute: bool) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

fn xml(out: &mut String, summary: Option<&str>, messages: &[&Message], style: &PromptStyle) {
    out.push_str("\n<conversation>\n");
    if let Some(summary) = summary {
        out.push_str("<summary>\n");
        escape(out, summary, false);
        out.push_str("\n</summary>\n");
    }
    for message in messages {
        match message {
            Message::User { text, images } => {
                out.push_str("<message role=\"user\">\n");
                escape(out, &user_text(text, images), false);
                out.push('\n');
            }
            Message::Assistant { text, tool_calls } => {
                out.push_str("<message role=\"assistant\">\n");
                if !text.is_empty() {
                    escape(out, text, false);
                    out.push('\n');
                }
                write_calls(out, tool_calls, style);
            }
            Message::ToolResult {
                call_id,
                name,
                ok,
                output,
            } => {
                out.push_str("<message role=\"tool\" name=\"");
                escape(out, name, true);
                out.push_str("\" call_id=\"");
                escape(out, call_id, true);
                let _ = writeln!(out, "\" status=\"{}\">", status(*ok));
                escape(out, output, false);
                out.push('\n');
            }
        }
        out.push_str("</message>\n");
    }
    out.push_str(
        "</conversation>\n\nWrite the assistant's next reply in plain text, without the XML tags.",
    );
}

/// How a backend wants to see its prompt, taken from its `backends.toml` entry.
#[derive(Debug, Clone)]
pub struct PromptStyle {
    /// Template for one tool call: `{name}`, `{args}` (the arguments as JSON) and `{json}`
    /// (`{"name": ..., "arguments": {...}}`) are replaced.
    pub tool_call_format: String,
    /// How the conversation is written (`context_format`).
    pub format: ContextFormat,
    /// `tools = "own"`: the CLI runs its own tools, so the prompt lists none of agent-loop's.
    pub own_tools: bool,
}

impl PromptStyle {
    /// The text a tool call starts with: `tool_call_format` before its first placeholder,
    /// trimmed (`<tool_call>`); `None` when the format starts with one (a call is then not
    /// told from the text before it is whole).
    pub fn call_opening(&self) -> Option<&str> {
        let format = &self.tool_call_format;
        let at = ["{json}", "{name}"]
            .iter()
            .filter_map(|p| format.find(p))
            .min()
            .unwrap_or(format.len());
        Some(format[..at].trim()).filter(|o| !o.is_empty())
    }

    /// One tool call written in this backend's format.
    pub fn format_call(&self, name: &str, args: &serde_json::Value) -> String {
        // Built by hand so "name" comes first, as models expect to read and write it.
        let json = format!(
            "{{\"name\":{},\"arguments\":{args}}}",
            serde_json::Value::String(name.to_string())
        );
        self.tool_call_format
            .replace("{name}", name)
            .replace("{args}", &args.to_string())
            .replace("{json}", &json.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_and_print_back() {
        for text in ["plain", "markdown", "json", "xml"] {
            assert_eq!(text.parse::<ContextFormat>().unwrap().to_string(), text);
        }
        assert!("yaml".parse::<ContextFormat>().is_err());
    }

    #[test]
    fn a_fence_outgrows_the_backticks_inside() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }

    #[test]
    fn xml_escapes_text_and_attributes() {
        let mut out = String::new();
        escape(&mut out, "a<b & \"c\">", true);
        assert_eq!(out, "a&lt;b &amp; &quot;c&quot;&gt;");
    }
}
