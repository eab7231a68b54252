//! What a chat sees while a turn runs: the observer of [`Chat::turn`](agent_loop::chat::Chat::turn)
//! turns tool activity into short progress lines ("bash: ls -la"), which a reporter task
//! sends as one message and edits in place as lines are added, while "typing…" is renewed
//! every 4 s. A call that needs approval is announced before it is judged: its line says
//! "(awaiting approval)" while the question waits, then "(allowed)", "(denied)", "(not
//! answered)" (the time ran out) or "(cancelled)" (the turn ended first), so that no line
//! says a command runs while the person is asked whether it may, or that they decided what
//! they did not, and a refusal is not shown as the tool failing. An agent's own tool is its
//! activity as the agent reports it, with no verb either, as an ACP agent reports a call
//! (status `pending`) before it asks about it; an ACP call's line is keyed by the agent's
//! call id, which its question names, so the states edit that line. A terminal agent's
//! screen names no call, so its question is a line of its own. A running tool's progress
//! ("mcp.fs.copy: 3/10 (30%)") replaces its line before, so a server that reports often
//! edits one line rather than pushing the others out. An ACP agent's plan and an answer cut
//! short (output limit, refusal) are lines too, as the CLI shows them. The turn waits for the
//! reporter to send every line before its answer goes out, so the progress message is
//! complete, above the answer. Approval questions go out with buttons (see `approval`).

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::mpsc;

use agent_loop::event::{ApprovalRequest, Decision, Event, Observer};
use agent_loop::text::Redactor;
use agent_loop::BoxFuture;

use crate::cli::text::{after_refusal, call_line, cut_short, plan_text, progress_text};

use super::api::{Api, Mode};
use super::approval::{ask, Approvals, Closed, State};

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
    /// Not a progress line: an approval question's message, closed as the turn ended before
    /// its answer, to edit.
    Question(Closed),
}

/// The latest line of a call id.
struct Entry {
    key: u64,
    /// Without the approval's state.
    text: String,
    state: Option<State>,
}

/// The tool calls of a turn, as their lines show them. A line is keyed by the observer, not by
/// the call's id: an id is the model's, and one used twice must not take over the first line.
#[derive(Default)]
pub struct Calls {
    /// Call id → its latest line.
    lines: HashMap<String, Entry>,
    next: u64,
    /// The turn was cancelled: the results its calls get from then on ("not run") are the
    /// cancel's, no failure of theirs.
    stopped: bool,
}

impl Calls {
    /// A new line `text` for call `id`.
    fn add(&mut self, id: &str, text: String) -> Line {
        self.next += 1;
        let key = self.next;
        let entry = Entry {
            key,
            text: cut(text),
            state: None,
        };
        let text = entry.text.clone();
        self.lines.insert(id.to_string(), entry);
        Line::Call { key, text }
    }

    /// The line of call `id` with `state` after it (a new line if `id` has none), in the
    /// question's words, its first line (the question's message has the rest): what an
    /// agent reported earlier under the same id (it picks its ids) is not what the person
    /// is asked about.
    fn with_state(&mut self, id: &str, tool: &str, summary: &str, state: State) -> Line {
        let text = call_line(tool, summary.lines().next().unwrap_or_default());
        if !self.lines.contains_key(id) {
            self.add(id, text.clone());
        }
        let entry = self.lines.get_mut(id).expect("added above");
        entry.text = cut(text);
        entry.state = Some(state);
        Line::Call {
            key: entry.key,
            text: format!("{} ({})", entry.text, state.text()),
        }
    }

    /// Whether call `id` has a line.
    fn known(&self, id: &str) -> bool {
        self.lines.contains_key(id)
    }

    /// Whether the latest call `id` was refused (denied, or not answered in time): its result
    /// ("not run: …") is no failure to show.
    fn refused(&self, id: &str) -> bool {
        self.lines
            .get(id)
            .is_some_and(|e| e.state.is_some_and(State::refused))
    }

    /// The line of call `id` as cancelled, if its question still waits: the turn ended before
    /// it was answered (the result a cancelled turn gives the call says "not run").
    fn cancel(&mut self, id: &str) -> Option<Line> {
        let entry = self.lines.get_mut(id)?;
        if entry.state != Some(State::Awaiting) {
            return None;
        }
        entry.state = Some(State::Cancelled);
        Some(Line::Call {
            key: entry.key,
            text: format!("{} ({})", entry.text, State::Cancelled.text()),
        })
    }

    /// The line of call `id` as cancelled, unless it was refused: its result came from a
    /// cancelled turn. None for a call never shown.
    fn stop(&mut self, id: &str) -> Option<Line> {
        let entry = self.lines.get_mut(id)?;
        entry.state = Some(State::Cancelled);
        Some(Line::Call {
            key: entry.key,
            text: format!("{} ({})", entry.text, State::Cancelled.text()),
        })
    }

    /// The lines of every call whose question still waits, as cancelled, in the order shown.
    fn cancel_all(&mut self) -> Vec<Line> {
        let mut ids: Vec<(u64, String)> = (self.lines.iter())
            .map(|(id, e)| (e.key, id.clone()))
            .collect();
        ids.sort();
        ids.iter().filter_map(|(_, id)| self.cancel(id)).collect()
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
            // A call reported after its question was refused (an ACP agent's file write, under
            // the question's id) has its line already.
            Event::ToolCall { call, .. } if self.calls.refused(&call.id) => return,
            Event::ToolCall { call, summary } => {
                let line = self.calls.add(&call.id, call_line(&call.name, summary));
                let _ = self.lines.send(line);
                return;
            }
            Event::ApprovalNeeded { call, summary } => {
                let state = State::Awaiting;
                let line = self.calls.with_state(&call.id, &call.name, summary, state);
                let _ = self.lines.send(line);
                return;
            }
            Event::ToolResult {
                call_id, ok, tool, ..
            } => {
                // A refused call's result ("not run: …") is no failure to show, nor are the
                // results a cancelled turn gives its calls: a shown call's line says so.
                if self.calls.refused(call_id) || *ok {
                    return;
                }
                if self.calls.stopped {
                    if let Some(line) = self.calls.stop(call_id) {
                        let _ = self.lines.send(line);
                    }
                    return;
                }
                format!("{tool} failed")
            }
            Event::Error {
                kind: agent_loop::ErrorKind::Cancelled,
                ..
            } => {
                self.calls.stopped = true;
                return;
            }
            // An ACP agent's call: its first line is the one its question's states edit.
            // What it reports of a call it was refused: its `failed` is no failure to show,
            // anything else it did anyway is a line of its own.
            Event::OwnTool {
                activity,
                call_id: Some(id),
                ..
            } if self.calls.refused(id) => match after_refusal(activity) {
                Some(text) => text,
                None => return,
            },
            Event::OwnTool {
                activity,
                call_id: Some(id),
                ..
            } if !self.calls.known(id) => {
                let line = self.calls.add(id, activity.clone());
                let _ = self.lines.send(line);
                return;
            }
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
            Event::OwnTool { activity, .. } => activity.clone(),
            Event::Plan { entries, .. } => format!("plan: {}", plan_text(entries)),
            Event::CutShort { backend, reason } => cut_short(backend, *reason),
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
            let asked = ask(
                &self.api,
                &self.approvals,
                self.chat_id,
                &shown,
                self.approval_timeout,
                Box::new(|closed| {
                    let _ = self.lines.send(Line::Question(closed));
                }),
            )
            .await;
            let state = match (&asked.decision, asked.answered) {
                (Decision::Once | Decision::Always, _) => State::Allowed,
                (Decision::Deny(_), true) => State::Denied,
                (Decision::Deny(_), false) => State::NotAnswered,
            };
            let line =
                self.calls
                    .with_state(&shown.call.id, &shown.call.name, &shown.summary, state);
            let _ = self.lines.send(line);
            asked.decision
        })
    }
}

/// A turn dropped or cancelled while a question waited never hears its answer, and an agent's
/// own call gets no result from agent-loop to tell it: the line says so before the reporter's
/// last edit, rather than awaiting approval forever.
impl Drop for Progress {
    fn drop(&mut self) {
        for line in self.calls.cancel_all() {
            let _ = self.lines.send(line);
        }
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
                // Lines that came meanwhile go in the same edit.
                let mut changed = false;
                for line in std::iter::once(line).chain(std::iter::from_fn(|| lines.try_recv().ok())) {
                    match line {
                        Line::Question(Closed { message, html }) => {
                            let _ = api.edit_message_text(chat_id, message, &html, Mode::Html).await;
                        }
                        line => {
                            shown.push(line);
                            changed = true;
                        }
                    }
                }
                if !changed {
                    continue;
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
            // The reporter edits the question's message instead.
            Line::Question(_) => {}
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

    /// A turn that ends while a question waits has that call's line say "cancelled"; a
    /// decided call keeps its state, and a call not answered in time is refused, not denied.
    #[test]
    fn only_a_waiting_question_is_cancelled() {
        let mut calls = Calls::default();
        calls.add("a", "bash: ls".into());
        calls.with_state("b", "bash", "rm x", State::Awaiting);
        calls.with_state("c", "bash", "rm y", State::Awaiting);
        let line = calls.with_state("c", "bash", "rm y", State::NotAnswered);
        assert_eq!(line, call(3, "bash: rm y (not answered)"));
        assert_eq!(calls.cancel_all(), [call(2, "bash: rm x (cancelled)")]);
        assert!(calls.refused("c") && !calls.refused("b") && !calls.refused("a"));
        assert_eq!(calls.cancel_all(), []);
    }
}
