//! A tool result from an MCP server as text for the model: text blocks joined, and every
//! other kind of content (images, audio, resources) described in one line rather than
//! dropped, so the model knows it was there. `isError` results become error results. A block
//! of a kind rmcp does not know (a newer revision's, a server's own) would fail the whole
//! result in rmcp's typed model; it is named (`[KIND content]`) instead.

use serde_json::Value;

use rmcp::model::{CallToolResult, ContentBlock};

use crate::tools::ToolOutput;

/// The model's view of one call's result.
pub fn tool_output(result: CallToolResult) -> ToolOutput {
    // As JSON: a kind of content this build does not know is still named.
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|block| describe(&serde_json::to_value(block).unwrap_or_default()))
        .collect();
    if parts.is_empty() {
        // Servers may answer only with structured content; it is the result then.
        if let Some(value) = &result.structured_content {
            parts.push(value.to_string());
        }
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        ToolOutput::error(if text.is_empty() {
            "the tool reported an error and said nothing more".to_string()
        } else {
            text
        })
    } else {
        ToolOutput::ok(text)
    }
}

/// A tool result rmcp's typed model refused (it comes as an untyped result): each block it
/// cannot read becomes the text `[KIND content]`, and the rest is read as usual. `None` when
/// it is no tool result even then.
pub fn lenient(mut result: Value) -> Option<CallToolResult> {
    if let Some(blocks) = result.get_mut("content").and_then(Value::as_array_mut) {
        for block in blocks {
            if serde_json::from_value::<ContentBlock>(block.clone()).is_err() {
                let kind = block
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                *block = serde_json::json!({"type": "text", "text": format!("[{kind} content]")});
            }
        }
    }
    serde_json::from_value(result).ok()
}

fn describe(block: &Value) -> String {
    let text =
        |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    let field = |key: &str| text(block, key).unwrap_or_default();
    match block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
    {
        "text" => field("text"),
        kind @ ("image" | "audio") => format!(
            "[{kind}: {}, {}]",
            field("mimeType"),
            crate::plural::count(decoded_len(&field("data")), "byte", "bytes")
        ),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = text(resource, "uri").unwrap_or_default();
            match (text(resource, "text"), text(resource, "blob")) {
                (Some(body), _) => format!("[resource: {uri}]\n{body}"),
                (None, Some(blob)) => format!(
                    "[resource: {uri}, {}, {}]",
                    text(resource, "mimeType").as_deref().unwrap_or("binary"),
                    crate::plural::count(decoded_len(&blob), "byte", "bytes")
                ),
                (None, None) => format!("[resource: {uri}]"),
            }
        }
        "resource_link" => {
            let mut line = format!("[resource link: {}", field("uri"));
            let name = field("name");
            if !name.is_empty() {
                line.push_str(&format!(" ({name})"));
            }
            if let Some(mime) = text(block, "mimeType") {
                line.push_str(&format!(", {mime}"));
            }
            line.push(']');
            line
        }
        // A kind newer than this client: named by its `type`, not dropped.
        other => format!("[{other} content]"),
    }
}

/// Bytes that base64 text decodes to, without decoding it.
fn decoded_len(base64: &str) -> usize {
    let data = base64.trim_end();
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() * 3 / 4).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(content: Value, is_error: Option<bool>) -> CallToolResult {
        serde_json::from_value(json!({"content": content, "isError": is_error})).unwrap()
    }

    #[test]
    fn text_is_joined_and_images_are_described() {
        let out = tool_output(result(
            json!([
                {"type": "text", "text": "one"},
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "text", "text": "two"},
            ]),
            None,
        ));
        assert!(out.ok);
        assert_eq!(out.output, "one\n[image: image/png, 5 bytes]\ntwo");
    }

    #[test]
    fn resources_links_and_new_kinds_are_described() {
        let out = tool_output(result(
            json!([
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
                {"type": "resource", "resource": {"uri": "file:///b", "blob": "YWJj"}},
                {"type": "resource_link", "uri": "file:///c", "name": "c", "mimeType": "text/plain"},
            ]),
            None,
        ));
        assert_eq!(
            out.output,
            "[resource: file:///a.txt]\nhello\n[resource: file:///b, binary, 3 bytes]\n\
             [resource link: file:///c (c), text/plain]"
        );
    }

    #[test]
    fn is_error_becomes_an_error_result() {
        let out = tool_output(result(
            json!([{"type": "text", "text": "no such file"}]),
            Some(true),
        ));
        assert!(!out.ok);
        assert_eq!(out.output, "no such file");
        let structured: CallToolResult =
            serde_json::from_value(json!({"content": [], "structuredContent": {"n": 3}})).unwrap();
        assert_eq!(tool_output(structured).output, r#"{"n":3}"#);
    }

    #[test]
    fn blocks_of_unknown_kinds_are_named_and_the_rest_kept() {
        let raw = json!({"content": [
            {"type": "text", "text": "before"},
            {"type": "hologram", "frames": 3},
            {"type": "image"},
            {"type": "text", "text": "after"},
        ]});
        assert!(serde_json::from_value::<CallToolResult>(raw.clone()).is_err());
        let out = tool_output(lenient(raw).unwrap());
        assert_eq!(
            out.output,
            "before\n[hologram content]\n[image content]\nafter"
        );
        assert!(lenient(json!("no result")).is_none());
    }

    #[test]
    fn base64_lengths() {
        assert_eq!(decoded_len(""), 0);
        assert_eq!(decoded_len("YQ=="), 1);
        assert_eq!(decoded_len("YWI="), 2);
        assert_eq!(decoded_len("YWJj"), 3);
    }
}
