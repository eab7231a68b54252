//! What a chat sees while a turn runs: the observer of [`Chat::turn`](agent_loop::chat::Chat::turn)
//! turns tool activity into short progress lines ("running: ls -la"), which a reporter task
//! sends as one message and edits in place as lines are added, while "typing…" is renewed
//! every 4 s. A running tool's progress ("mcp.fs.copy: 3/10 (30%)") replaces its line before,
//! so a server that reports often edits one line rather than pushing the others out. An ACP
//! agent's plan and an answer cut short (output limit, refusal) are lines too, as the CLI
//! shows them. The turn waits for the reporter to send every line before its answer goes out,
//! so the progress message is complete, above the answer. Approval questions go out with
//! buttons (see `approval`).

use std::time::Duration;

use tokio::sync::mpsc;

use agent_loop::event::{ApprovalRequest, Decision, Event, Observer};
use agent_loop::text::Redactor;
use agent_loop::BoxFuture;

use crate::cli::text::{cut_short, plan_text, progress_text, running};

use super::api::{Api, Mode};
use super::approval::{ask, Approvals};

/// How often "typing…" is sent again (Telegram shows it for about 5 s).
const TYPING_EVERY: Duration = Duration::from_secs(4);
/// The progress message shows this many of the latest lines.
const SHOWN_LINES: usize = 15;
/// A progress line is cut to this many characters.
const LINE_CHARS: usize = 200;

/// A line of the progress message.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// Added below the others.
    Add(String),
    /// A tool's progress: replaces the line before if that was progress too.
    Progress(String),
}

/// The observer of one turn in one chat.
pub struct Progress {
    pub api: Api,
    pub approvals: Approvals,
    pub chat_id: i64,
    pub approval_timeout: Duration,
    pub lines: mpsc::UnboundedSender<Line>,
    /// The chat's: an approval request reaches the observer unredacted.
    pub redactor: Redactor,
    /// Debug lines on stderr.
    pub debug: bool,
}

impl Observer for Progress {
    fn event(&mut self, event: &Event) {
        if self.debug {
            eprintln!("debug: chat {}: {event:?}", self.chat_id);
        }
        let progress = matches!(event, Event::ToolProgress { .. });
        let line = match event {
            Event::ToolProgress {
                tool,
                progress,
                total,
                message,
                ..
            } => format!(
                "{tool}: {}",
                progress_text(*progress, *total, message.as_deref())
            ),
            Event::ToolCall { summary, .. } => running(summary),
            Event::OwnTool { activity, .. } => format!("running: {activity}"),
            Event::Plan { entries, .. } => format!("plan: {}", plan_text(entries)),
            Event::CutShort { backend, reason } => cut_short(backend, *reason),
            Event::ToolResult {
                ok: false, tool, ..
            } => format!("{tool} failed"),
            Event::Retrying {
                retry,
                retries,
                reason,
                ..
            } => format!("retrying ({retry}/{retries}): {reason}"),
            Event::Notice { message } => message.clone(),
            _ => return,
        };
        let line = match line.char_indices().nth(LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line,
        };
        let _ = self.lines.send(if progress {
            Line::Progress(line)
        } else {
            Line::Add(line)
        });
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let shown = request.map_text(&|text| self.redactor.redact(text));
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
pub async fn report(api: Api, chat_id: i64, mut lines: mpsc::UnboundedReceiver<Line>) {
    let mut shown = Shown::default();
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
                let text = shown.text();
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

/// The lines of the progress message so far.
#[derive(Default)]
struct Shown {
    lines: Vec<String>,
    /// The last line is a tool's progress.
    progress: bool,
}

impl Shown {
    fn push(&mut self, line: Line) {
        match line {
            Line::Add(text) => {
                self.lines.push(text);
                self.progress = false;
            }
            Line::Progress(text) => {
                if std::mem::replace(&mut self.progress, true) {
                    self.lines.pop();
                }
                self.lines.push(text);
            }
        }
    }

    /// The latest lines, as the message shows them.
    fn text(&self) -> String {
        let start = self.lines.len().saturating_sub(SHOWN_LINES);
        self.lines[start..].join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_replaces_progress_and_nothing_else() {
        let mut shown = Shown::default();
        shown.push(Line::Add("running: copy".into()));
        for n in 1..=1000 {
            shown.push(Line::Progress(format!("copy: {n}/1000")));
        }
        assert_eq!(shown.text(), "running: copy\ncopy: 1000/1000");
        shown.push(Line::Add("running: ls".into()));
        shown.push(Line::Progress("ls: 1".into()));
        assert_eq!(
            shown.text(),
            "running: copy\ncopy: 1000/1000\nrunning: ls\nls: 1"
        );
    }
}
