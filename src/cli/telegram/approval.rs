//! Approval through inline buttons: the bot sends everything the call will use (as the
//! terminal's prompt shows it: control and invisible characters as escapes, runs of blanks
//! as counts, a long command folded) with Allow / Deny / Always under it, and View all when
//! folded; the `callback_query` of the button pressed answers the question waiting for it
//! (View all sends the whole of it and keeps waiting). No answer within the timeout denies
//! the call. A question closed is edited to say what became of it, in its call's progress
//! line's words, and loses its buttons: also when the turn ends first (/stop, shutdown, an
//! agent that withdraws its question), for live buttons under a question nothing waits for
//! any more would look as if a press still decided something.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;

use agent_loop::event::{ApprovalRequest, Decision};

use super::api::{Api, InlineKeyboardButton, InlineKeyboardMarkup, Mode};
use super::format::escape;
use super::split::{split, MESSAGE_LIMIT};
use crate::cli::text::{asked, fold, line_count, not_shown, shown_lines};

/// The questions waiting for a button, shared by the turns that ask and the poll loop that
/// receives the answers.
#[derive(Clone, Default)]
pub struct Approvals {
    inner: Arc<Mutex<Pending>>,
}

#[derive(Default)]
struct Pending {
    next: u64,
    /// Question id → (the chat asked, where its buttons' answers go).
    waiting: HashMap<u64, (i64, mpsc::UnboundedSender<Answer>)>,
}

/// A button pressed under a question.
enum Answer {
    Decided(Decision),
    /// Show the whole call, then keep waiting.
    ViewAll,
}

/// The buttons' answers, as their callback data spells them.
const CHOICES: [(&str, &str); 3] = [("allow", "Allow"), ("deny", "Deny"), ("always", "Always")];
/// The button of a folded question.
const VIEW: (&str, &str) = ("view", "View all");

/// What a press under a question that no longer waits is told: Telegram shows a spinner
/// until a press is answered.
pub const CLOSED: &str = "This question is no longer open: the press changed nothing.";

/// The state of a call's approval, as its progress line and its question's message say it:
/// the words every front end says.
pub use crate::cli::text::CallState as State;

/// The width the question's lines are wrapped to: a phone's screen of monospace text.
const WIDTH: usize = 60;

impl Approvals {
    fn register(&self, chat_id: i64) -> (u64, mpsc::UnboundedReceiver<Answer>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut pending = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        pending.next += 1;
        let id = pending.next;
        pending.waiting.insert(id, (chat_id, tx));
        (id, rx)
    }

    fn forget(&self, id: u64) {
        let mut pending = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        pending.waiting.remove(&id);
    }

    /// Answers the question a button's `data` names, if it is still waiting and was asked in
    /// `chat_id`; returns what the user chose, to confirm to them.
    pub fn answer(&self, data: &str, chat_id: i64) -> Option<&'static str> {
        let rest = data.strip_prefix("approve:")?;
        let (id, choice) = rest.split_once(':')?;
        let id: u64 = id.parse().ok()?;
        let (_, label) = CHOICES.iter().chain([&VIEW]).find(|(c, _)| *c == choice)?;
        let mut pending = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if pending
            .waiting
            .get(&id)
            .is_none_or(|(chat, _)| *chat != chat_id)
        {
            return None;
        }
        if choice == VIEW.0 {
            let (_, tx) = pending.waiting.get(&id)?;
            tx.send(Answer::ViewAll).ok()?;
            return Some(label);
        }
        let (_, tx) = pending.waiting.remove(&id)?;
        let decision = match choice {
            "allow" => Decision::Once,
            "always" => Decision::Always,
            _ => Decision::Deny("the user denied it on Telegram".into()),
        };
        tx.send(Answer::Decided(decision)).ok()?;
        Some(label)
    }
}

/// What became of a question: the decision, and whether a button gave it (if not, the call
/// is denied though nobody pressed Deny: the time ran out, or the question was not sent).
pub struct Asked {
    pub decision: Decision,
    pub answered: bool,
}

/// A question's message, closed before its answer came: to be edited to `html`, without its
/// buttons.
#[derive(Debug, PartialEq)]
pub struct Closed {
    pub message: i64,
    pub html: String,
}

/// What has a closed question's message edited, when the ask cannot (it was dropped).
pub type Closer<'a> = Box<dyn FnOnce(Closed) + Send + 'a>;

/// A question sent and still open. Dropped before [`Open::close`] (the turn that asked ended
/// first), it is closed as cancelled: no longer waited for, and its message edited by
/// `closer` (the turn's progress reporter, which the turn waits for before its reply goes
/// out).
struct Open<'a> {
    approvals: &'a Approvals,
    id: u64,
    message: i64,
    question: String,
    /// None once [`Open::close`] took over: a drop while its edit is under way changes nothing.
    closer: Option<Closer<'a>>,
}

impl Open<'_> {
    /// The question's text with what became of it under it, in place of its buttons.
    fn closed_text(&self, state: State, detail: &str) -> String {
        format!("{}\n({}{})", self.question, state.text(), escape(detail))
    }

    async fn close(mut self, api: &Api, chat_id: i64, state: State, detail: &str) {
        self.closer = None;
        self.approvals.forget(self.id);
        // Edited without a keyboard: the buttons go.
        let text = self.closed_text(state, detail);
        let _ = api
            .edit_message_text(chat_id, self.message, &text, Mode::Html)
            .await;
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        let Some(closer) = self.closer.take() else {
            return;
        };
        self.approvals.forget(self.id);
        closer(Closed {
            message: self.message,
            html: self.closed_text(State::Cancelled, ""),
        });
    }
}

/// Asks in `chat_id` whether the call may run; waits for a button up to `timeout`. `closer`
/// has the question's message edited if the ask is dropped before it closes it.
pub async fn ask(
    api: &Api,
    approvals: &Approvals,
    chat_id: i64,
    request: &ApprovalRequest,
    timeout: Duration,
    closer: Closer<'_>,
) -> Asked {
    let (id, mut answers) = approvals.register(chat_id);
    // The same escaping and folding as the terminal's prompt: the summary is everything the
    // call will use.
    let (what, lines) = asked(request, WIDTH);
    let shown = fold(lines.len(), false);
    let mut body = lines[..shown].join("\n");
    if shown < lines.len() {
        body.push_str(&format!(
            "\n... {}",
            not_shown(lines.len() - shown, lines.len(), "press View all")
        ));
    }
    let question = format!(
        "Allow <b>{}</b>? It asks to {} ({})\n<pre>{}</pre>",
        escape(&shown_lines(&request.call.name, usize::MAX).concat()),
        escape(&what),
        line_count(lines.len()),
        escape(&body)
    );
    let buttons = CHOICES.iter().chain((shown < lines.len()).then_some(&VIEW));
    let keyboard = InlineKeyboardMarkup {
        inline_keyboard: vec![buttons
            .map(|(data, label)| InlineKeyboardButton {
                text: label.to_string(),
                callback_data: format!("approve:{id}:{data}"),
            })
            .collect()],
    };
    let message = match api
        .send_message(chat_id, &question, Mode::Html, Some(&keyboard))
        .await
    {
        Ok(message) => message,
        Err(e) => {
            approvals.forget(id);
            return Asked {
                decision: Decision::Deny(format!(
                    "the question could not be sent to Telegram: {e}"
                )),
                answered: false,
            };
        }
    };
    let open = Open {
        approvals,
        id,
        message,
        question,
        closer: Some(closer),
    };
    let deadline = tokio::time::Instant::now() + timeout;
    let (decision, answered) = loop {
        match tokio::time::timeout_at(deadline, answers.recv()).await {
            Ok(Some(Answer::Decided(decision))) => break (decision, true),
            Ok(Some(Answer::ViewAll)) => {
                for piece in split(&lines.join("\n"), MESSAGE_LIMIT - 16) {
                    let piece = format!("<pre>{}</pre>", escape(&piece));
                    let _ = api.send_message(chat_id, &piece, Mode::Html, None).await;
                }
            }
            _ => {
                let why = format!("nobody answered on Telegram within {} s", timeout.as_secs());
                break (Decision::Deny(why), false);
            }
        }
    };
    let (state, detail) = match &decision {
        Decision::Once => (State::Allowed, String::new()),
        Decision::Always => (
            State::Allowed,
            format!(", and every later {} call", request.call.name),
        ),
        Decision::Deny(_) if answered => (State::Denied, String::new()),
        Decision::Deny(_) => (State::NotAnswered, format!(" in {} s", timeout.as_secs())),
    };
    open.close(api, chat_id, state, &detail).await;
    Asked { decision, answered }
}
