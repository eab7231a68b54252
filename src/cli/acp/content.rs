//! From ACP content to agent-loop's and back: a prompt's blocks (text, images, resource
//! links, embedded resources) as the user message, and a saved conversation replayed as
//! `session/update` notifications when a session is loaded.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, EmbeddedResourceResource, ImageContent, SessionUpdate,
    ToolCallStatus,
};

use agent_loop::chat::{Image, Message, Prompt};
use agent_loop::Error;

use super::updates::{announce, finished, text_block, Notifier, ToolFacts};

/// The user message a prompt's blocks make: text as it is, images attached (their type read
/// from their bytes; whether the backend takes them is asked when the turn starts), a
/// linked file by its URI (the model reads it with its tools), an embedded resource's text in
/// a fenced block named by its URI. Audio is refused.
pub fn user_message(blocks: &[ContentBlock]) -> Result<Prompt, Error> {
    let mut parts = Vec::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => {
                parts.push(format!("[{}]({})", link.name, link.uri));
            }
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    parts.push(format!("{}:\n```\n{}\n```", r.uri, r.text.trim_end()));
                }
                EmbeddedResourceResource::BlobResourceContents(r) => {
                    parts.push(format!("[{}] (binary content, not included)", r.uri));
                }
                _ => {}
            },
            ContentBlock::Image(image) => {
                let name = image.uri.clone().unwrap_or_else(|| "an image block".into());
                images.push(Image::from_base64(&image.data, Some(name))?);
            }
            ContentBlock::Audio(_) => {
                return Err(Error::config(
                    "this agent takes text, images, resource links and embedded text \
                     resources; audio is not supported",
                ))
            }
            _ => {}
        }
    }
    Ok(Prompt::new(parts.join("\n\n"), images))
}

/// Sends a saved conversation as the updates that would have shown it.
pub fn replay(messages: &[Message], notifier: &Notifier, tools: &ToolFacts, cwd: &Path) {
    for message in messages {
        match message {
            Message::User { text, images } => {
                notifier.send(SessionUpdate::UserMessageChunk(ContentChunk::new(
                    text_block(text),
                )));
                for image in images {
                    let block = ImageContent::new(image.base64(), image.mime.clone());
                    notifier.send(SessionUpdate::UserMessageChunk(ContentChunk::new(
                        ContentBlock::Image(block.uri(image.name.clone())),
                    )));
                }
            }
            Message::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    notifier.message(text);
                }
                for call in tool_calls {
                    // Titled and located as the turn that ran it announced it.
                    let summary = tools.shown(call);
                    let path = tools.path_of(call, cwd);
                    let announced = announce(call, &summary, path, tools.kind(&call.name))
                        .status(ToolCallStatus::Pending);
                    notifier.send(SessionUpdate::ToolCall(announced));
                }
            }
            Message::ToolResult {
                call_id,
                ok,
                output,
                ..
            } => notifier.send(SessionUpdate::ToolCallUpdate(finished(
                call_id, *ok, output, None, None,
            ))),
        }
    }
}
