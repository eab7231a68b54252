//! Cancelling a chat's running turn, and what is recorded of it. A [`Canceller`] cancels it
//! from elsewhere: another task (the ACP server's `session/cancel`, a bot's `/stop`) holds a
//! clone while [`Chat::turn`] runs. Dropping the turn's future cancels it too; the handle is
//! for a front end that does not own that future.

use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::{Chat, Logged};
use crate::context::Message;
use crate::event::{Event, Observer};
use crate::{Error, ErrorKind};

impl Chat {
    /// Records that the running turn was cancelled, `why` (`cancelled by SIGTERM`; else the
    /// canceller's reason, else `cancelled by the user`): the conversation says so, and the
    /// log and `observer` get the turn's end as a failed turn's, an `Error` of kind
    /// [`ErrorKind::Cancelled`], then the result each call left without one got ("not run"),
    /// then a `TurnFinished` that is not ok, so a reader of the log tells a cancelled turn
    /// from a cut one, and pairs every call with a result. Saves. A front end that dropped the turn's
    /// future calls this; [`Chat::turn`] does for a [`Canceller`].
    pub fn cancelled(
        &mut self,
        why: Option<&str>,
        observer: &mut (dyn Observer + '_),
    ) -> Result<(), Error> {
        let theirs = self.canceller.take_why();
        let why = why.or(theirs.as_deref()).unwrap_or("cancelled by the user");
        if let Some((iterations, results)) = self.agent.mark_cancelled(Some(why)) {
            let mut logged = Logged {
                inner: observer,
                log: self.log.as_mut(),
                context: &mut self.context,
                redactor: &self.redactor,
            };
            logged.event(&Event::Error {
                message: format!("the turn was {why}"),
                kind: ErrorKind::Cancelled,
            });
            // Each call the log shows has its result, the one the conversation got, after the
            // error: a front end knows it for the cancel's, no failure of the call's own.
            for result in results {
                if let Message::ToolResult {
                    call_id,
                    name,
                    ok,
                    output,
                } = result
                {
                    logged.event(&Event::ToolResult {
                        call_id,
                        tool: name,
                        ok,
                        output,
                        exit_code: None,
                    });
                }
            }
            logged.event(&Event::TurnFinished {
                turn: self.agent.turns(),
                iterations,
                ok: false,
            });
        }
        self.save()
    }
}

/// Cancels the turn running when [`Canceller::cancel`] is called; a cancel with no turn
/// running is not kept for the next one.
#[derive(Debug, Clone)]
pub struct Canceller {
    sender: Arc<watch::Sender<u64>>,
    /// Why the last cancel came, when it was not the user's: what the conversation records.
    why: Arc<Mutex<Option<String>>>,
}

impl Default for Canceller {
    fn default() -> Self {
        Canceller {
            sender: Arc::new(watch::Sender::new(0)),
            why: Arc::default(),
        }
    }
}

impl Canceller {
    /// Cancels the running turn: its backend and tools are stopped, the conversation records
    /// it, and [`Chat::turn`](super::Chat::turn) returns an error of kind `Cancelled`.
    pub fn cancel(&self) {
        self.stop(None);
    }

    /// [`Canceller::cancel`] for a reason that is not the user's (`stopped after 30s
    /// (--timeout)`): the conversation records `[turn WHY]`, not a cancel by the user.
    pub fn cancel_because(&self, why: impl Into<String>) {
        self.stop(Some(why.into()));
    }

    fn stop(&self, why: Option<String>) {
        *self.why.lock().unwrap_or_else(|e| e.into_inner()) = why;
        self.sender.send_modify(|n| *n += 1);
    }

    /// The reason of the cancel that stopped the turn, if one was given.
    pub(super) fn take_why(&self) -> Option<String> {
        self.why.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Resolves at the first cancel after this call; the reason of one before is forgotten.
    pub(super) fn cancelled(&self) -> impl std::future::Future<Output = ()> {
        self.take_why();
        let mut receiver = self.sender.subscribe();
        async move {
            // A closed channel cannot happen while `self` holds the sender; wait forever then.
            if receiver.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    #[test]
    fn a_cancel_reaches_the_turn_waiting_but_not_a_later_one() {
        let canceller = Canceller::default();
        let waiting = canceller.cancelled();
        canceller.clone().cancel();
        assert!(waiting.now_or_never().is_some());
        // The cancel above is spent: a turn started after it runs.
        assert!(canceller.cancelled().now_or_never().is_none());
    }
}
