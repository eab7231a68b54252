//! Approval through inline buttons: the bot sends the whole command or path with Allow /
//! Deny / Always under it; the `callback_query` of the button pressed answers the question
//! waiting for it. No answer within the timeout denies the call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

use agent_loop::event::{ApprovalRequest, Decision};

use super::api::{Api, InlineKeyboardButton, InlineKeyboardMarkup, Mode};
use super::format::escape;

/// The questions waiting for a button, shared by the turns that ask and the poll loop that
/// receives the answers.
#[derive(Clone, Default)]
pub struct Approvals {
    inner: Arc<Mutex<Pending>>,
}

#[derive(Default)]
struct Pending {
    next: u64,
    /// Question id → (the chat asked, where its answer goes).
    waiting: HashMap<u64, (i64, oneshot::Sender<Decision>)>,
}

/// The buttons' answers, as their callback data spells them.
const CHOICES: [(&str, &str); 3] = [("allow", "Allow"), ("deny", "Deny"), ("always", "Always")];

impl Approvals {
    fn register(&self, chat_id: i64) -> (u64, oneshot::Receiver<Decision>) {
        let (tx, rx) = oneshot::channel();
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
        let (_, label) = CHOICES.iter().find(|(c, _)| *c == choice)?;
        let mut pending = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if pending
            .waiting
            .get(&id)
            .is_none_or(|(chat, _)| *chat != chat_id)
        {
            return None;
        }
        let (_, tx) = pending.waiting.remove(&id)?;
        let decision = match choice {
            "allow" => Decision::Once,
            "always" => Decision::Always,
            _ => Decision::Deny("the user denied it on Telegram".into()),
        };
        tx.send(decision).ok()?;
        Some(label)
    }
}

/// What the question shows of a call: its whole command or path, else its arguments.
fn subject(request: &ApprovalRequest) -> String {
    let args = &request.call.args;
    ["command", "path", "file_path"]
        .iter()
        .find_map(|k| args.get(k).and_then(|v| v.as_str()))
        .map(str::to_string)
        .unwrap_or_else(|| serde_json::to_string_pretty(args).unwrap_or_else(|_| args.to_string()))
}

/// Asks in `chat_id` whether the call may run; waits for a button up to `timeout`.
pub async fn ask(
    api: &Api,
    approvals: &Approvals,
    chat_id: i64,
    request: &ApprovalRequest,
    timeout: Duration,
) -> Decision {
    let (id, answer) = approvals.register(chat_id);
    let question = format!(
        "Allow <b>{}</b>?\n<pre>{}</pre>",
        escape(&request.call.name),
        escape(&subject(request))
    );
    let keyboard = InlineKeyboardMarkup {
        inline_keyboard: vec![CHOICES
            .iter()
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
            return Decision::Deny(format!("the question could not be sent to Telegram: {e}"));
        }
    };
    let decision = match tokio::time::timeout(timeout, answer).await {
        Ok(Ok(decision)) => decision,
        _ => Decision::Deny(format!(
            "nobody answered on Telegram within {} s",
            timeout.as_secs()
        )),
    };
    approvals.forget(id);
    let verdict = match &decision {
        Decision::Once => "allowed".to_string(),
        Decision::Always => format!("allowed, and every later {} call", request.call.name),
        Decision::Deny(why) => format!("denied: {why}"),
    };
    // The buttons go; the question stays with its answer under it.
    let _ = api
        .edit_message_text(
            chat_id,
            message,
            &format!("{question}\n{}", escape(&verdict)),
            Mode::Html,
        )
        .await;
    decision
}
