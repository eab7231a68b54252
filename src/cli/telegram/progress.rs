//! What a chat sees while a turn runs: the observer of [`Chat::turn`](agent_loop::chat::Chat::turn)
//! turns tool activity into short progress lines ("running: ls -la"), which a reporter task
//! sends as one message and edits in place as lines are added, while "typing…" is renewed
//! every 4 s. Approval questions go out with buttons (see `approval`).

use std::time::Duration;

use tokio::sync::mpsc;

use agent_loop::context::ToolCall;
use agent_loop::event::{ApprovalRequest, Decision, Event, Observer};
use agent_loop::session::Redactor;
use agent_loop::BoxFuture;

use crate::cli::display::approval::shown_lines;

use super::api::{Api, Mode};
use super::approval::{ask, Approvals};

/// How often "typing…" is sent again (Telegram shows it for about 5 s).
const TYPING_EVERY: Duration = Duration::from_secs(4);
/// The progress message shows this many of the latest lines.
const SHOWN_LINES: usize = 15;
/// A progress line is cut to this many characters.
const LINE_CHARS: usize = 200;

/// The observer of one turn in one chat.
pub struct Progress {
    pub api: Api,
    pub approvals: Approvals,
    pub chat_id: i64,
    pub approval_timeout: Duration,
    pub lines: mpsc::UnboundedSender<String>,
    /// The chat's: an approval request reaches the observer unredacted.
    pub redactor: Redactor,
    /// Debug lines on stderr.
    pub debug: bool,
}

impl Observer for Progress {
    fn event(&mut self, event: &Event) {
        if self.debug {
            if let Ok(json) = serde_json::to_string(event) {
                eprintln!("debug: chat {}: {json}", self.chat_id);
            }
        }
        let line = match event {
            // Escaped as the approval question is: a summary is the model's text.
            Event::ToolCall { summary, .. } => {
                format!("running: {}", shown_lines(summary, usize::MAX).join(" "))
            }
            Event::OwnTool { activity, .. } => format!("running: {activity}"),
            Event::ToolResult {
                ok: false, tool, ..
            } => format!("{tool} failed"),
            Event::Retrying {
                retry,
                retries,
                reason,
                ..
            } => format!("retrying ({retry}/{retries}): {reason}"),
            _ => return,
        };
        let line = match line.char_indices().nth(LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line,
        };
        let _ = self.lines.send(line);
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let shown = ApprovalRequest {
                call: ToolCall {
                    args: serde_json::from_str(
                        &self.redactor.redact(&request.call.args.to_string()),
                    )
                    .unwrap_or_else(|_| request.call.args.clone()),
                    ..request.call.clone()
                },
                summary: self.redactor.redact(&request.summary),
            };
            ask(
                &self.api,
                &self.approvals,
                self.chat_id,
                &shown,
                self.approval_timeout,
            )
            .await
        })
    }
}

/// Sends the progress lines of one turn until its observer is dropped, and "typing…" all the
/// while.
pub async fn report(api: Api, chat_id: i64, mut lines: mpsc::UnboundedReceiver<String>) {
    let mut shown: Vec<String> = Vec::new();
    let mut message: Option<i64> = None;
    let mut typing = tokio::time::interval(TYPING_EVERY);
    loop {
        tokio::select! {
            line = lines.recv() => {
                let Some(line) = line else { return };
                shown.push(line);
                // Lines that came meanwhile go in the same edit.
                while let Ok(line) = lines.try_recv() {
                    shown.push(line);
                }
                let start = shown.len().saturating_sub(SHOWN_LINES);
                let text = shown[start..].join("\n");
                message = match message {
                    Some(id) => api
                        .edit_message_text(chat_id, id, &text, Mode::Plain)
                        .await
                        .map(|()| id)
                        .ok()
                        .or(Some(id)),
                    None => api.send_message(chat_id, &text, Mode::Plain, None).await.ok(),
                };
            }
            _ = typing.tick() => {
                let _ = api.typing(chat_id).await;
            }
        }
    }
}
