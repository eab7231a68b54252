//! `--output jsonl`: one JSON object per line on stdout and nothing else, for programs and
//! `| jq`, in the library's public schema ([`agent_loop::jsonl`]).

use std::io::Write;
use std::time::SystemTime;

use agent_loop::event::{ApprovalRequest, Event};
use agent_loop::jsonl::{record, rfc3339, Body, Meta, Record};

use super::renderer::Renderer;

/// Writes every event as a [`Record`] line. Never asks for approval: without `--yes` tools
/// that change things are refused.
pub struct JsonlDisplay {
    out: Box<dyn Write + Send>,
    meta: Meta,
}

impl JsonlDisplay {
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        JsonlDisplay {
            out,
            meta: Meta::default(),
        }
    }

    fn write(&mut self, body: Body) {
        let record = self.meta.record(&rfc3339(SystemTime::now()), body);
        self.write_record(&record);
    }

    fn write_record(&mut self, record: &Record) {
        // Serialising these types cannot fail: string keys, no non-finite numbers kept.
        if let Ok(line) = serde_json::to_string(record) {
            let _ = writeln!(self.out, "{line}");
            let _ = self.out.flush();
        }
    }
}

impl Renderer for JsonlDisplay {
    fn render(&mut self, event: &Event) {
        match event {
            Event::TurnStarted { turn, .. } => self.meta.turn = *turn,
            Event::BackendStarted { .. } => self.meta.latency_ms = None,
            Event::BackendFinished { elapsed_ms, .. } => self.meta.latency_ms = Some(*elapsed_ms),
            _ => {}
        }
        if let Some(record) = record(event, &self.meta, &rfc3339(SystemTime::now())) {
            self.write_record(&record);
        }
    }

    fn talking_to(&mut self, backend: &str, model: Option<&str>) {
        self.meta.backend = Some(backend.to_string());
        self.meta.model = model.map(str::to_string);
    }

    fn approval_prompt(&mut self, _request: &ApprovalRequest, _full: bool) {}

    fn notice(&mut self, _text: &str) {}

    fn prompt(&mut self, _text: &str) {}

    fn fatal(&mut self, message: &str) {
        self.write(Body::Error {
            error: message.to_string(),
        });
    }

    fn session_start(
        &mut self,
        id: &str,
        name: &str,
        backend: &str,
        model: Option<&str>,
        turns: u32,
    ) {
        self.meta.session_id = id.to_string();
        // The turns it had, as the session's log says (`/clear` and `/load` switch mid-run).
        self.meta.turn = turns;
        self.meta.backend = Some(backend.to_string());
        self.meta.model = model.map(str::to_string);
        self.write(Body::SessionStart {
            session: name.to_string(),
        });
    }

    fn session_clear(&mut self, name: &str) {
        self.write(Body::SessionClear {
            session: name.to_string(),
        });
    }

    fn asks_approval(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::cli::display::shared::Captured;

    #[test]
    fn display_writes_one_parseable_line_per_record() {
        let out = Captured::default();
        let mut display = JsonlDisplay::new(out.boxed());
        display.fatal("bad config");
        display.session_start("s1", "work", "fake", Some("m1"), 0);
        display.render(&Event::TurnStarted {
            turn: 1,
            input: "hi\nthere\u{1b}".into(),
            images: vec![],
        });
        display.notice("not JSON, so not shown");
        let lines: Vec<Value> = out
            .text()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{}", out.text());
        assert_eq!(lines[0]["event"], "error");
        assert_eq!(lines[0]["backend"], Value::Null);
        assert_eq!(lines[1]["event"], "session_start");
        assert_eq!(
            (&lines[1]["model"], lines[2]["turn"].as_u64()),
            (&json!("m1"), Some(1))
        );
        assert_eq!(lines[2]["text"], "hi\nthere\u{1b}");
        assert!(!out.text().contains('\u{1b}'));
        // Before the session starts (a configuration error) there is no session id yet.
        assert_eq!(lines[0]["session_id"], "");
        assert_eq!(lines[2]["session_id"], "s1");
        assert!(!display.asks_approval());
    }
}
