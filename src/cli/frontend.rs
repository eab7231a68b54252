//! The front end of the binary: renders events with the display, appends them to the session's
//! JSONL log, keeps secrets out of both, and asks the user to approve tools.

use agent_loop::agent::{ApprovalRequest, Decision, Event, Observer};
use agent_loop::jsonl::{record, rfc3339, Body, Meta};
use agent_loop::session::{Log, Redactor};
use agent_loop::BoxFuture;

use super::input::Input;
use super::screen::Screen;

/// What every log line says about where it came from.
#[derive(Debug, Clone, Default)]
pub struct LogContext {
    pub session: String,
    /// The session's random id, the `session_id` of every record.
    pub session_id: String,
    pub backend: String,
    pub model: Option<String>,
    pub turn: u32,
}

pub struct Frontend {
    pub display: Screen,
    pub input: Input,
    pub log: Option<Log>,
    pub redactor: Redactor,
    pub context: LogContext,
    /// `--debug`: every event as JSON on stderr.
    pub debug: bool,
    log_failed: bool,
    /// How long the last backend call took, for the usage record after it.
    last_latency: Option<u64>,
}

impl Frontend {
    pub fn new(display: Screen, input: Input, redactor: Redactor) -> Self {
        Frontend {
            display,
            input,
            log: None,
            redactor,
            context: LogContext::default(),
            debug: false,
            log_failed: false,
            last_latency: None,
        }
    }

    /// A notice on stderr, redacted.
    pub fn notice(&mut self, text: &str) {
        let text = self.redactor.redact(text);
        self.display.notice(&text);
    }

    /// What every record of the log repeats, from the current context.
    fn meta(&self) -> Meta {
        Meta {
            session_id: self.context.session_id.clone(),
            turn: self.context.turn,
            backend: Some(self.context.backend.clone()),
            model: self.context.model.clone(),
            latency_ms: None,
        }
    }

    /// Appends a record of the log's own (`session_start`, `session_clear`).
    pub fn log_body(&mut self, body: Body) {
        let record = self
            .meta()
            .record(&rfc3339(std::time::SystemTime::now()), body);
        self.write_log(vec![serde_json::to_value(record).unwrap_or_default()]);
    }

    /// Appends the event to the log in the `--output jsonl` schema; the raw output of a CLI
    /// backend call is logged too, as a `backend_output` record of the log's own.
    fn log(&mut self, event: &Event) {
        if self.log.is_none() {
            return;
        }
        let meta = Meta {
            latency_ms: match event {
                Event::Usage { .. } => self.last_latency,
                _ => None,
            },
            ..self.meta()
        };
        if let Event::BackendFinished { elapsed_ms, .. } = event {
            self.last_latency = Some(*elapsed_ms);
        }
        let ts = rfc3339(std::time::SystemTime::now());
        let mut records = Vec::new();
        // A CLI's stdout lines are in the log once, byte for byte, in the `backend_output`
        // record that ends the call: as `assistant_delta` records too, a flood would be
        // logged twice over (`--output jsonl` streams them).
        let cli_line = matches!(event, Event::BackendOutput { .. });
        if let Some(record) = record(event, &meta, &ts).filter(|_| !cli_line) {
            records.push(record);
        }
        if let Event::BackendFinished { raw: Some(raw), .. } = event {
            let raw_value = serde_json::to_value(raw).unwrap_or_default();
            records.push(meta.record(&ts, Body::BackendOutput { raw: raw_value }));
            // What max_output_bytes kept out of that record (and out of memory).
            if raw.stdout_dropped + raw.stderr_dropped > 0 {
                records.push(meta.record(
                    &ts,
                    Body::BackendOutputDropped {
                        stdout_dropped_bytes: raw.stdout_dropped,
                        stderr_dropped_bytes: raw.stderr_dropped,
                    },
                ));
            }
        }
        let values = records
            .into_iter()
            .map(|r| serde_json::to_value(r).unwrap_or_default())
            .collect();
        self.write_log(values);
    }

    /// Writes records to the log; the first failure is reported once.
    fn write_log(&mut self, lines: Vec<serde_json::Value>) {
        let Some(log) = self.log.as_mut() else { return };
        for line in lines {
            if let Err(e) = log.write(&line) {
                if !self.log_failed {
                    self.log_failed = true;
                    let msg = format!(
                        "warning: cannot write the log {}: {e} (the conversation goes on)",
                        log.path().display()
                    );
                    self.display.notice(&msg);
                }
                return;
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
            if !self.display.asks_approval() {
                return Decision::Deny(format!(
                    "agent-loop does not ask for approval with --output jsonl and --yes was \
                     not given, so {} was not allowed to run",
                    request.call.name
                ));
            }
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
