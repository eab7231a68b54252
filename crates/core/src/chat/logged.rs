//! The chat's observer around a front end's: every event is redacted, appended to the
//! session's event log, then passed on; so is every approval question. The log is the same
//! whichever front end runs, and no front end sees a secret the redactor knows.

use crate::event::{ApprovalRequest, Decision, Event, Observer};
use crate::session::{EventLog, LogContext, Redactor};
use crate::BoxFuture;

pub(super) struct Logged<'a, O: ?Sized> {
    pub inner: &'a mut O,
    pub log: Option<&'a mut EventLog>,
    pub context: &'a mut LogContext,
    pub redactor: &'a Redactor,
}

impl<O: Observer + ?Sized> Observer for Logged<'_, O> {
    fn event(&mut self, event: &Event) {
        if let Event::TurnStarted { turn, .. } = event {
            self.context.turn = *turn;
        }
        let redacted;
        let event = if self.redactor.is_empty() {
            event
        } else {
            redacted = event.map_text(&|t| self.redactor.redact(t));
            &redacted
        };
        let warning = self
            .log
            .as_deref_mut()
            .and_then(|log| log.record(event, self.context));
        self.inner.event(event);
        if let Some(message) = warning {
            self.inner.event(&Event::Notice { message });
        }
    }

    /// The question is redacted as the events are: it goes where they go (a chat, an editor,
    /// an MCP client), and the call it shows is the one the event showed.
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        if self.redactor.is_empty() {
            return self.inner.approve(request);
        }
        let redacted = request.map_text(&|t| self.redactor.redact(t));
        Box::pin(async move { self.inner.approve(&redacted).await })
    }
}
