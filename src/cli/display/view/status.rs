//! The view's status line: backend, model, session, context used of its budget, tokens, and
//! the state (idle, running with its elapsed time, waiting for an approval), and while the
//! view is scrolled back how many lines wait below.

use std::time::Instant;

use agent_loop::event::Event;

#[derive(Debug, Default)]
pub struct Status {
    pub backend: String,
    pub model: Option<String>,
    pub session: String,
    /// Estimated tokens of the last request, and the budget.
    pub context: Option<(u64, u64)>,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Since when a turn runs.
    pub running: Option<Instant>,
    pub approval: bool,
}

impl Status {
    /// Takes what an event tells about the state; whether anything shown changed.
    pub fn update(&mut self, event: &Event) -> bool {
        match event {
            Event::TurnStarted { .. } => self.running = Some(Instant::now()),
            Event::TurnFinished { .. } => self.running = None,
            Event::BackendStarted { backend, .. } if self.backend != *backend => {
                self.backend.clone_from(backend);
            }
            Event::Usage { usage, .. } => {
                self.tokens_in += usage.input.unwrap_or(0);
                self.tokens_out += usage.output.unwrap_or(0);
            }
            Event::Context { stats } => self.context = Some((stats.tokens, stats.budget)),
            _ => return false,
        }
        true
    }

    /// The line, `below` lines waiting under a scrolled-back view. What matters most comes
    /// first, as a narrow screen cuts the end: the state, the lines below, then the backend,
    /// context, tokens and session.
    pub fn text(&self, below: usize) -> String {
        let mut parts = vec![match (self.approval, self.running) {
            (true, _) => "waiting for approval".into(),
            (false, Some(since)) => format!("running {}s", since.elapsed().as_secs()),
            (false, None) => "idle".into(),
        }];
        if below > 0 {
            parts.push(format!(
                "{} below (End)",
                agent_loop::text::plural::count(below, "line", "lines")
            ));
        }
        parts.push(match &self.model {
            Some(model) => format!("{} ({model})", self.backend),
            None => self.backend.clone(),
        });
        if let Some((used, budget)) = self.context {
            parts.push(format!("context {} of {}", short(used), short(budget)));
        }
        parts.push(format!(
            "tokens {} in, {} out",
            short(self.tokens_in),
            short(self.tokens_out)
        ));
        if !self.session.is_empty() {
            parts.push(format!("session {}", self.session));
        }
        parts.join(" | ")
    }
}

/// `1234` as `1.2k`, `56` as `56`.
fn short(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..1_000_000 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_everything_and_the_lines_below() {
        let mut status = Status {
            backend: "demo".into(),
            model: Some("m1".into()),
            session: "s1".into(),
            context: Some((3400, 80_000)),
            tokens_in: 1234,
            tokens_out: 56,
            ..Status::default()
        };
        assert_eq!(
            status.text(0),
            "idle | demo (m1) | context 3.4k of 80.0k | tokens 1.2k in, 56 out | session s1"
        );
        status.approval = true;
        assert!(status
            .text(3)
            .starts_with("waiting for approval | 3 lines below (End) | demo"));
        status.approval = false;
        status.update(&Event::TurnStarted {
            turn: 1,
            input: String::new(),
            images: Vec::new(),
        });
        assert!(status.text(0).starts_with("running 0s | "));
    }
}
