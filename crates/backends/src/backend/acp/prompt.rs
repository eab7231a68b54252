//! What a prompt to an ACP agent carries: the user's newest message with the files it names
//! as links, and in the first prompt of a session opened just now, the conversation (or the
//! part of it) that session does not hold.

use std::path::Path;

use serde_json::{json, Value};

use super::Running;
use crate::context::prompt::{catch_up_prompt, new_session_prompt};
use crate::context::{Image, Window};

/// What the first prompt of a session opened just now carries besides the newest message,
/// with a line saying so: a new session, the conversation so far; a loaded one, the messages
/// other backends had since it was kept. `None`: the newest message alone.
pub(super) fn catch_up(running: &mut Running, window: &Window<'_>) -> Option<(String, String)> {
    let lacks = std::mem::take(&mut running.lacks);
    let earlier = window.messages.len().saturating_sub(1);
    if std::mem::take(&mut running.unprompted) {
        return new_session_prompt(window);
    }
    let missed = lacks.min(earlier);
    if missed == 0 {
        return None;
    }
    let tail = Window {
        messages: window.messages[earlier - missed..].to_vec(),
        ..Window::default()
    };
    let line = format!(
        "(the agent's session is given what it missed: {})",
        crate::plural::count(missed, "message", "messages")
    );
    Some((catch_up_prompt(&tail, true), line))
}

/// The message as text with its images, and each `@path` naming a file as a link to it.
pub(super) fn prompt_blocks(message: &str, images: &[Image], cwd: &Path) -> Vec<Value> {
    let mut blocks = vec![json!({ "type": "text", "text": message })];
    blocks.extend(
        images
            .iter()
            .map(|i| json!({ "type": "image", "mimeType": i.mime, "data": i.base64() })),
    );
    for word in message.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches([',', '.', ';', ':', ')', '?', '!']);
        let full = cwd.join(path);
        if !path.is_empty() && full.is_file() {
            blocks.push(json!({
                "type": "resource_link",
                "uri": format!("file://{}", full.display()),
                "name": path,
            }));
        }
    }
    blocks
}
