//! `--output jsonl`: one JSON object per line on stdout and nothing else, for programs and
//! `| jq`, in the library's public schema ([`agent_loop::jsonl`]): each event serialised as it
//! is, inside the keys every record has.

use std::io::Write;
use std::time::SystemTime;

use agent_loop::event::{ApprovalRequest, Event};
use agent_loop::jsonl::{rfc3339, Body, Kind, Meta};
use serde::Serialize;

use super::renderer::Renderer;

/// Writes every event that has a record as a [`agent_loop::jsonl::Record`] line. Never asks for approval: without `--yes` tools
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

    /// Writes `body`'s record, if it has one (an event marked `skip`, a line of stderr, has
    /// none).
    fn write(&mut self, body: impl Kind + Serialize) {
        if let Some(line) = self.meta.line(&rfc3339(SystemTime::now()), body) {
            let _ = writeln!(self.out, "{line}");
            let _ = self.out.flush();
        }
    }
}

impl Renderer for JsonlDisplay {
    fn render(&mut self, event: &Event) {
        if let Event::TurnStarted { turn, .. } = event {
            self.meta.turn = *turn;
        }
        self.write(event);
    }

    fn talking_to(&mut self, backend: &str, model: Option<&str>) {
        self.meta.backend = Some(backend.to_string());
        self.meta.model = model.map(str::to_string);
    }

    fn approval_prompt(&mut self, _request: &ApprovalRequest, _full: bool) -> bool {
        false
    }

    fn notice(&mut self, _text: &str) {}

    fn prompt(&mut self, _text: &str) {}

    fn fatal(&mut self, error: &agent_loop::Error) {
        self.write(Event::Error {
            message: error.message.clone(),
            kind: error.kind,
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
        display.fatal(&agent_loop::Error::config("bad config"));
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
