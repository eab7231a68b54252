//! A tool result from an MCP server as text for the model: text blocks joined, and every
//! other kind of content (images, audio, resources) described in one line rather than
//! dropped, so the model knows it was there. `isError` results become error results.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::tools::ToolOutput;

/// The model's view of one call's result.
pub fn tool_output(result: CallToolResult) -> ToolOutput {
    let mut parts: Vec<String> = result.content.iter().map(describe).collect();
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

fn describe(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => {
            format!("[image: {}, {} bytes]", i.mime_type, decoded_len(&i.data))
        }
        ContentBlock::Audio(a) => {
            format!("[audio: {}, {} bytes]", a.mime_type, decoded_len(&a.data))
        }
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource: {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource: {uri}, {}, {} bytes]",
                mime_type.as_deref().unwrap_or("binary"),
                decoded_len(blob)
            ),
            other => unknown(other),
        },
        ContentBlock::ResourceLink(link) => {
            let mut line = format!("[resource link: {}", link.uri);
            if !link.name.is_empty() {
                line.push_str(&format!(" ({})", link.name));
            }
            if let Some(mime) = &link.mime_type {
                line.push_str(&format!(", {mime}"));
            }
            line.push(']');
            line
        }
        other => unknown(other),
    }
}

/// A kind of content newer than this client: named by its `type`, not dropped.
fn unknown(content: &impl serde::Serialize) -> String {
    let value = serde_json::to_value(content).unwrap_or_default();
    let kind = value
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("unknown");
    format!("[{kind} content]")
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
    use rmcp::model::{ImageContent, TextContent};

    fn result(content: Vec<ContentBlock>, is_error: Option<bool>) -> CallToolResult {
        let mut r = CallToolResult::success(content);
        r.is_error = is_error;
        r
    }

    #[test]
    fn text_is_joined_and_images_are_described() {
        let out = tool_output(result(
            vec![
                ContentBlock::Text(TextContent::new("one")),
                ContentBlock::Image(ImageContent::new("aGVsbG8=", "image/png")),
                ContentBlock::Text(TextContent::new("two")),
            ],
            None,
        ));
        assert!(out.ok);
        assert_eq!(out.output, "one\n[image: image/png, 5 bytes]\ntwo");
    }

    #[test]
    fn is_error_becomes_an_error_result() {
        let out = tool_output(result(
            vec![ContentBlock::Text(TextContent::new("no such file"))],
            Some(true),
        ));
        assert!(!out.ok);
        assert_eq!(out.output, "no such file");
    }

    #[test]
    fn base64_lengths() {
        assert_eq!(decoded_len(""), 0);
        assert_eq!(decoded_len("YQ=="), 1);
        assert_eq!(decoded_len("YWI="), 2);
        assert_eq!(decoded_len("YWJj"), 3);
    }
}
