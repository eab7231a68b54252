//! What a chat sees while a turn runs: the observer of [`Chat::turn`](agent_loop::chat::Chat::turn)
//! turns tool activity into short progress lines ("bash: ls -la"), which a reporter task
//! sends as one message and edits in place as lines are added, while "typing…" is renewed
//! every 4 s. A call that needs approval is announced before it is judged: its line says
//! "(awaiting approval)" while the question waits, then "(allowed)" or "(denied)", so that no
//! line says a command runs while the person is asked whether it may, and a Deny is not shown
//! as the tool failing. A running tool's progress ("mcp.fs.copy: 3/10 (30%)") replaces its
//! line before, so a server that reports often edits one line rather than pushing the others
//! out. An ACP agent's plan and an answer cut short (output limit, refusal) are lines too, as
//! the CLI shows them. The turn waits for the reporter to send every line before its answer
//! goes out, so the progress message is complete, above the answer. Approval questions go out
//! with buttons (see `approval`).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use tokio::sync::mpsc;

use agent_loop::event::{ApprovalRequest, Decision, Event, Observer};
use agent_loop::text::Redactor;
use agent_loop::BoxFuture;

use crate::cli::text::{call_line, cut_short, plan_text, progress_text};

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
    /// A tool call's line: replaces the line of the same call (`key`) where it is, else added.
    Call { key: u64, text: String },
}

/// The tool calls of a turn, as their lines show them. A line is keyed by the observer, not by
/// the call's id: an id is the model's, and one used twice must not take over the first line.
#[derive(Default)]
pub struct Calls {
    /// Call id → the key and text (without the approval's state) of its latest line.
    lines: HashMap<String, (u64, String)>,
    next: u64,
    /// The calls the person denied: their result ("not run: …") is no failure to show.
    denied: HashSet<u64>,
}

/// The state of a call the person denied.
const DENIED: &str = "denied";

impl Calls {
    /// A new line for call `id`.
    fn add(&mut self, id: &str, tool: &str, summary: &str) -> Line {
        self.next += 1;
        let text = cut(call_line(tool, summary));
        self.lines.insert(id.to_string(), (self.next, text.clone()));
        Line::Call {
            key: self.next,
            text,
        }
    }

    /// The line of call `id` with `state` (`awaiting approval`, [`DENIED`]) after it.
    fn with_state(&mut self, id: &str, tool: &str, summary: &str, state: &str) -> Line {
        if !self.lines.contains_key(id) {
            self.add(id, tool, summary);
        }
        let (key, text) = &self.lines[id];
        if state == DENIED {
            self.denied.insert(*key);
        }
        Line::Call {
            key: *key,
            text: format!("{text} ({state})"),
        }
    }

    /// Whether the latest call `id` was denied.
    fn denied(&self, id: &str) -> bool {
        self.lines
            .get(id)
            .is_some_and(|(key, _)| self.denied.contains(key))
    }
}

/// `line` cut to [`LINE_CHARS`].
fn cut(line: String) -> String {
    match line.char_indices().nth(LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
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
    pub calls: Calls,
}

impl Observer for Progress {
    fn event(&mut self, event: &Event) {
        if self.debug {
            eprintln!("debug: chat {}: {event:?}", self.chat_id);
        }
        let progress = matches!(event, Event::ToolProgress { .. });
        let line = match event {
            Event::ToolCall { call, summary } => {
                let line = self.calls.add(&call.id, &call.name, summary);
                let _ = self.lines.send(line);
                return;
            }
            Event::ApprovalNeeded { call, summary } => {
                let line =
                    self.calls
                        .with_state(&call.id, &call.name, summary, "awaiting approval");
                let _ = self.lines.send(line);
                return;
            }
            Event::ToolResult { call_id, .. } if self.calls.denied(call_id) => return,
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
        let line = cut(line);
        let _ = self.lines.send(if progress {
            Line::Progress(line)
        } else {
            Line::Add(line)
        });
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let shown = request.map_text(&|text| self.redactor.redact(text));
            let decision = ask(
                &self.api,
                &self.approvals,
                self.chat_id,
                &shown,
                self.approval_timeout,
            )
            .await;
            let state = match decision {
                Decision::Once | Decision::Always => "allowed",
                Decision::Deny(_) => DENIED,
            };
            let line =
                self.calls
                    .with_state(&shown.call.id, &shown.call.name, &shown.summary, state);
            let _ = self.lines.send(line);
            decision
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
    /// Each line, with the key of the call it is the line of.
    lines: Vec<(Option<u64>, String)>,
    /// The last line is a tool's progress.
    progress: bool,
}

impl Shown {
    fn push(&mut self, line: Line) {
        match line {
            Line::Add(text) => {
                self.lines.push((None, text));
                self.progress = false;
            }
            Line::Progress(text) => {
                if std::mem::replace(&mut self.progress, true) {
                    self.lines.pop();
                }
                self.lines.push((None, text));
            }
            Line::Call { key, text } => {
                match self.lines.iter_mut().find(|(of, _)| *of == Some(key)) {
                    Some(line) => line.1 = text,
                    None => {
                        self.lines.push((Some(key), text));
                        self.progress = false;
                    }
                }
            }
        }
    }

    /// The latest lines, as the message shows them.
    fn text(&self) -> String {
        let start = self.lines.len().saturating_sub(SHOWN_LINES);
        let shown: Vec<&str> = self.lines[start..]
            .iter()
            .map(|(_, t)| t.as_str())
            .collect();
        shown.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(key: u64, text: &str) -> Line {
        Line::Call {
            key,
            text: text.into(),
        }
    }

    #[test]
    fn progress_replaces_progress_and_nothing_else() {
        let mut shown = Shown::default();
        shown.push(call(1, "copy: a b"));
        for n in 1..=1000 {
            shown.push(Line::Progress(format!("copy: {n}/1000")));
        }
        assert_eq!(shown.text(), "copy: a b\ncopy: 1000/1000");
        shown.push(call(2, "ls: ."));
        shown.push(Line::Progress("ls: 1".into()));
        assert_eq!(shown.text(), "copy: a b\ncopy: 1000/1000\nls: .\nls: 1");
    }

    /// A call's line changes where it is (its approval decided), whatever came after it.
    #[test]
    fn a_call_replaces_its_own_line_only() {
        let mut shown = Shown::default();
        shown.push(call(1, "bash: rm x (awaiting approval)"));
        shown.push(Line::Add("retrying (1/3): HTTP 429".into()));
        shown.push(call(1, "bash: rm x (denied)"));
        shown.push(call(2, "bash: rm x (awaiting approval)"));
        assert_eq!(
            shown.text(),
            "bash: rm x (denied)\nretrying (1/3): HTTP 429\nbash: rm x (awaiting approval)"
        );
    }
}
