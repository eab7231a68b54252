//! The chat's observer around a front end's: every event is redacted, appended to the
//! session's event log, then passed on. The log is the same whichever front end runs, and no
//! front end sees a secret the redactor knows.

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

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        self.inner.approve(request)
    }
}
