//! The queue of what an ACP agent sent, between the connection's task and the turn that
//! reads it, held to a budget of memory. Nobody reads it while a turn waits on something else
//! (a command's exit for `terminal/wait_for_exit`, the user's answer to a question) or
//! between turns, and an agent can send without pause meanwhile: then, past the budget, its
//! notifications and requests are passed over (a request passed over is answered with an
//! error), counted for a note. While a turn reads (it is `attended`), nothing is passed over:
//! the turn keeps up, and what it keeps is capped on its own. Answers to prompts and the end
//! of the connection always pass.
//! Backpressure on the reader was the other way: it stalls the agent until someone reads, and
//! a request awaited outside a turn (the handshake, `session/load` replaying a long history)
//! would then wait for ever behind what nobody reads.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use acp::v1::Responder;
use agent_client_protocol as acp;
use serde_json::Value;
use tokio::sync::mpsc;

/// What the agent sent, in order.
pub enum Inbound {
    /// A notification: `session/update` and any other.
    Notification { method: String, params: Value },
    /// A request the client answers (`session/request_permission`, `fs/...`, `terminal/...`).
    Request {
        method: String,
        params: Value,
        responder: Responder<Value>,
    },
    /// The answer to the prompt of this number.
    Answered(u64, Result<Value, acp::Error>),
    /// The connection ended: the agent exited, closed its output or broke the protocol.
    Closed(Option<String>),
}

/// What the queue holds at most (estimated as in memory), well within the ceiling on the
/// whole client; an empty queue takes any one message (at most the cap on a line).
pub const BUDGET: usize = 16 * 1024 * 1024;

#[derive(Default)]
struct Count {
    bytes: AtomicUsize,
    dropped: AtomicUsize,
    attended: AtomicBool,
}

/// The connection's end: it queues what arrives.
#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<(Inbound, usize)>,
    count: Arc<Count>,
}

/// The turn's end.
pub struct Inbox {
    rx: mpsc::UnboundedReceiver<(Inbound, usize)>,
    count: Arc<Count>,
}

pub fn channel() -> (Outbox, Inbox) {
    let (tx, rx) = mpsc::unbounded_channel();
    let count = Arc::new(Count::default());
    (
        Outbox {
            tx,
            count: count.clone(),
        },
        Inbox { rx, count },
    )
}

impl Outbox {
    /// Queues `inbound`, or passes it over when the queue is past its budget. `false`: nobody
    /// reads any more (the agent is being closed).
    pub fn send(&self, inbound: Inbound) -> bool {
        let weight = match &inbound {
            Inbound::Notification { params, .. } | Inbound::Request { params, .. } => {
                weight(params)
            }
            Inbound::Answered(..) | Inbound::Closed(_) => 0,
        };
        let queued = self.count.bytes.load(Ordering::Acquire);
        let attended = self.count.attended.load(Ordering::Acquire);
        if weight > 0 && !attended && queued > 0 && queued + weight > BUDGET {
            self.count.dropped.fetch_add(1, Ordering::AcqRel);
            // A request dropped here is answered with an error by the SDK.
            return true;
        }
        self.count.bytes.fetch_add(weight, Ordering::AcqRel);
        self.tx.send((inbound, weight)).is_ok()
    }
}

impl Inbox {
    pub async fn recv(&mut self) -> Option<Inbound> {
        let (inbound, weight) = self.rx.recv().await?;
        self.count.bytes.fetch_sub(weight, Ordering::AcqRel);
        Some(inbound)
    }

    pub fn try_recv(&mut self) -> Option<Inbound> {
        let (inbound, weight) = self.rx.try_recv().ok()?;
        self.count.bytes.fetch_sub(weight, Ordering::AcqRel);
        Some(inbound)
    }

    /// Whether a turn reads the queue as it fills (nothing is passed over then).
    pub fn attend(&self, attended: bool) {
        self.count.attended.store(attended, Ordering::Release);
    }

    /// Attended until the guard is dropped, also with the turn's future (Ctrl-C).
    pub fn attending(&self) -> Attending {
        self.attend(true);
        Attending(self.count.clone())
    }
    /// How many messages were passed over since the last call.
    pub fn dropped(&self) -> usize {
        self.count.dropped.swap(0, Ordering::AcqRel)
    }
}

/// A turn reading the queue; dropped, nobody is.
pub struct Attending(Arc<Count>);

impl Drop for Attending {
    fn drop(&mut self) {
        self.0.attended.store(false, Ordering::Release);
    }
}

/// About what a JSON value takes in memory: its strings and a node's size for each part.
fn weight(value: &Value) -> usize {
    const NODE: usize = std::mem::size_of::<Value>();
    NODE + match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(weight).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + NODE + weight(v)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn note(text: &str) -> Inbound {
        Inbound::Notification {
            method: "session/update".into(),
            params: json!({ "text": text }),
        }
    }

    #[test]
    fn past_the_budget_notifications_are_counted_not_kept_and_answers_pass() {
        let (tx, mut rx) = channel();
        let big = "x".repeat(BUDGET / 2);
        // An empty queue takes anything; then what fits.
        assert!(tx.send(note(&"y".repeat(BUDGET + 1))));
        assert!(rx.try_recv().is_some());
        assert!(tx.send(note(&big)));
        assert!(tx.send(note(&big)));
        assert!(tx.send(Inbound::Answered(1, Ok(Value::Null))));
        assert_eq!(rx.dropped(), 1);
        assert!(matches!(rx.try_recv(), Some(Inbound::Notification { .. })));
        assert!(matches!(rx.try_recv(), Some(Inbound::Answered(1, _))));
        // Read, the budget is free again.
        assert!(tx.send(note(&big)));
        assert!(rx.try_recv().is_some());
        assert_eq!(rx.dropped(), 0);
        // While a turn reads, nothing is passed over.
        rx.attend(true);
        for _ in 0..3 {
            assert!(tx.send(note(&big)));
        }
        assert_eq!(rx.dropped(), 0);
    }
}
