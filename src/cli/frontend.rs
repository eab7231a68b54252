//! The front end of the binary: renders events with the display, appends them to the session's
//! JSONL log, keeps secrets out of both, and asks the user to approve tools.

use agent_loop::agent::{ApprovalRequest, Decision, Event, Observer};
use agent_loop::display::PlainDisplay;
use agent_loop::session::{Log, Redactor};
use agent_loop::BoxFuture;

use super::input::Input;

/// What every log line says about where it came from.
#[derive(Debug, Clone, Default)]
pub struct LogContext {
    pub session: String,
    pub backend: String,
    pub model: Option<String>,
    pub turn: u32,
}

pub struct Frontend {
    pub display: PlainDisplay,
    pub input: Input,
    pub log: Option<Log>,
    pub redactor: Redactor,
    pub context: LogContext,
    /// `--debug`: every event as JSON on stderr.
    pub debug: bool,
    log_failed: bool,
}

impl Frontend {
    pub fn new(display: PlainDisplay, input: Input, redactor: Redactor) -> Self {
        Frontend {
            display,
            input,
            log: None,
            redactor,
            context: LogContext::default(),
            debug: false,
            log_failed: false,
        }
    }

    /// A notice on stderr, redacted.
    pub fn notice(&mut self, text: &str) {
        let text = self.redactor.redact(text);
        self.display.notice(&text);
    }

    fn log(&mut self, event: &Event) {
        let Some(log) = self.log.as_mut() else { return };
        // Live output lines are in the raw output of BackendFinished already.
        if matches!(event, Event::BackendOutput { .. } | Event::Waiting { .. }) {
            return;
        }
        let mut value = serde_json::to_value(event).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            let ts = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
            map.insert("ts".into(), ts.into());
            map.insert("session_id".into(), self.context.session.clone().into());
            map.insert("turn".into(), self.context.turn.into());
            map.insert("backend".into(), self.context.backend.clone().into());
            map.insert("model".into(), self.context.model.clone().into());
        }
        if let Err(e) = log.write(&value) {
            if !self.log_failed {
                self.log_failed = true;
                let msg = format!(
                    "warning: cannot write the log {}: {e} (the conversation goes on)",
                    log.path().display()
                );
                self.display.notice(&msg);
            }
        }
    }
}

impl Observer for Frontend {
    fn event(&mut self, event: &Event) {
        if let Event::TurnStarted { turn, .. } = event {
            self.context.turn = *turn;
        }
        let redacted;
        let event = if self.redactor.is_empty() {
            event
        } else {
            let redactor = self.redactor.clone();
            redacted = event.map_text(&|t| redactor.redact(t));
            &redacted
        };
        if self.debug {
            let json = serde_json::to_string(event).unwrap_or_default();
            self.display.notice(&format!("debug: event {json}"));
        }
        self.log(event);
        self.display.render(event);
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            if !self.input.interactive {
                return Decision::Deny(format!(
                    "agent-loop cannot ask for approval (stdin is not a terminal) and --yes was \
                     not given, so {} was not allowed to run",
                    request.call.name
                ));
            }
            loop {
                self.display.approval_prompt(request);
                let Some(answer) = self.input.line().await else {
                    return Decision::Deny("the user closed the input instead of answering".into());
                };
                match answer.trim().to_ascii_lowercase().as_str() {
                    "y" | "yes" => return Decision::Once,
                    "a" | "always" => return Decision::Always,
                    "n" | "no" => return Decision::Deny("the user said no".into()),
                    _ => self.display.notice("Please answer y, a or n."),
                }
            }
        })
    }
}
