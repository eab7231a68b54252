//! What one call's turn tells the calling client while it runs, and what it keeps for the
//! result. Events arrive redacted (the chat's log sees them first). When the client sent a
//! progress token, the backend's streamed text, tool calls and plans become
//! `notifications/progress` messages, at most one per [`EVERY`] (a streaming model sends
//! hundreds of pieces a second; the client wants to know it is alive, not every token).
//! They go out in order through one task, which the call waits for before it answers, so
//! no progress follows the result.

use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use agent_loop::event::{ApprovalRequest, CutReason, Decision, Event, Observer};
use agent_loop::BoxFuture;

use crate::cli::text::{call_title, plan_text, progress_text};

/// The least time between two progress notifications of one call.
pub const EVERY: Duration = Duration::from_millis(250);
/// A progress message keeps the last this many characters of what happened since the
/// previous one.
const MESSAGE_CHARS: usize = 1000;

pub struct CallObserver {
    peer: Peer<RoleServer>,
    /// Whether approval is asked through an elicitation (the client offers form mode).
    elicit: bool,
    progress: Option<Progress>,
    /// The answer so far: what a cancelled or timed-out call returns.
    pub so_far: String,
    /// The backend call streamed its text (told already, not again when it is whole).
    streamed: bool,
    /// Why the model stopped early, if it did.
    pub cut: Option<CutReason>,
    /// The cost the backend reported or was priced at, when any call of the turn had one.
    pub cost: Option<f64>,
    /// The input and output tokens the backend reported, when any call of the turn did: a
    /// backend that reports none gives null, not a count of 0.
    pub input: Option<u64>,
    pub output: Option<u64>,
    /// The calls whose approval was refused: the calling model is told which did not run,
    /// beside an answer that may not say so.
    pub refused: Vec<Refused>,
}

/// A tool call agent-loop did not let run, its approval refused.
pub struct Refused {
    pub tool: String,
    /// The call in a few words (`echo hi`), redacted as the question was.
    pub call: String,
    pub reason: String,
}

struct Progress {
    sender: mpsc::UnboundedSender<ProgressNotificationParam>,
    forwarder: JoinHandle<()>,
    token: ProgressToken,
    sent: u32,
    pending: String,
    last: Option<Instant>,
}

impl CallObserver {
    pub fn new(peer: Peer<RoleServer>, elicit: bool, token: Option<ProgressToken>) -> Self {
        let progress = token.map(|token| {
            let (sender, mut queue) = mpsc::unbounded_channel::<ProgressNotificationParam>();
            let to = peer.clone();
            let forwarder = tokio::task::spawn_local(async move {
                while let Some(note) = queue.recv().await {
                    // A client that went away misses its progress; the call ends anyway.
                    let _ = to.notify_progress(note).await;
                }
            });
            Progress {
                sender,
                forwarder,
                token,
                sent: 0,
                pending: String::new(),
                last: None,
            }
        });
        CallObserver {
            peer,
            elicit,
            progress,
            so_far: String::new(),
            streamed: false,
            cut: None,
            cost: None,
            input: None,
            output: None,
            refused: Vec::new(),
        }
    }

    /// Waits until every progress notification is sent.
    pub async fn finish(&mut self) {
        if let Some(progress) = self.progress.take() {
            drop(progress.sender);
            let _ = progress.forwarder.await;
        }
    }

    fn note(&mut self, text: &str) {
        let Some(progress) = &mut self.progress else {
            return;
        };
        if !progress.pending.is_empty() && !progress.pending.ends_with('\n') {
            progress.pending.push('\n');
        }
        progress.pending.push_str(text);
        if !due(&mut progress.last, Instant::now()) {
            return;
        }
        let message = tail(std::mem::take(&mut progress.pending), MESSAGE_CHARS);
        progress.sent += 1;
        let mut note =
            ProgressNotificationParam::new(progress.token.clone(), f64::from(progress.sent));
        note.message = Some(message);
        let _ = progress.sender.send(note);
    }
}

/// Whether a notification may go out at `now`, the last having gone at `last` (then `now`
/// is the last): the first at once, then at most one per [`EVERY`].
fn due(last: &mut Option<Instant>, now: Instant) -> bool {
    if last.is_some_and(|at| now.saturating_duration_since(at) < EVERY) {
        return false;
    }
    *last = Some(now);
    true
}

/// The last `max` characters of `text`.
fn tail(text: String, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text;
    }
    let start = text.char_indices().nth(count - max).map_or(0, |(i, _)| i);
    format!("...{}", &text[start..])
}

impl Observer for CallObserver {
    fn event(&mut self, event: &Event) {
        match event {
            Event::TextDelta { text, .. } => {
                self.streamed = true;
                self.so_far.push_str(text);
                let text = text.clone();
                self.note(&text);
            }
            Event::BackendStarted { .. } => {
                self.so_far.clear();
                self.streamed = false;
            }
            Event::Text { text, final_answer } => {
                self.so_far = text.clone();
                if !*final_answer && !self.streamed && !text.trim().is_empty() {
                    self.note(&text.clone());
                }
            }
            Event::ToolCall { call, summary } => {
                let title = call_title(&call.name, summary);
                self.note(&title);
            }
            Event::OwnTool { activity, .. } => {
                let activity = activity.clone();
                self.note(&activity);
            }
            Event::Plan { entries, .. } => {
                let plan = plan_text(entries);
                self.note(&plan);
            }
            Event::ToolProgress {
                tool,
                progress,
                total,
                message,
                ..
            } => {
                let text = format!(
                    "{tool}: {}",
                    progress_text(*progress, *total, message.as_deref())
                );
                self.note(&text);
            }
            Event::CutShort { reason, .. } => self.cut = Some(*reason),
            Event::Notice { message } => self.note(message),
            Event::Usage { usage, .. } => {
                if let Some(cost) = usage.cost {
                    *self.cost.get_or_insert(0.0) += cost;
                }
                for (sum, count) in [
                    (&mut self.input, usage.input),
                    (&mut self.output, usage.output),
                ] {
                    if let Some(count) = count {
                        *sum.get_or_insert(0) += count;
                    }
                }
            }
            _ => {}
        }
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let decision = super::approval::ask(&self.peer, self.elicit, request).await;
            if let Decision::Deny(reason) = &decision {
                self.refused.push(Refused {
                    tool: request.call.name.clone(),
                    call: request.summary.clone(),
                    reason: reason.clone(),
                });
            }
            decision
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_note_goes_at_once_and_the_next_after_the_interval() {
        let start = Instant::now();
        let mut last = None;
        assert!(due(&mut last, start));
        assert!(!due(&mut last, start + EVERY / 2));
        assert!(due(&mut last, start + EVERY));
        assert!(!due(&mut last, start + EVERY + EVERY / 2));
    }

    #[test]
    fn a_long_message_keeps_its_end() {
        assert_eq!(tail("short".into(), 10), "short");
        let long = format!("{}end", "x".repeat(2000));
        let cut = tail(long, 10);
        assert_eq!(cut, "...xxxxxxxend");
    }
}
