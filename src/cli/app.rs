//! The program's state between turns: the library's [`Chat`] (agent, session, log), the
//! front end that renders it, what a comparison left for `/pick`, and the signals that stop a
//! turn. One-shot runs and the REPL share it.

use std::time::Duration;

use agent_loop::chat::Chat;

use super::fanout::{self, Compared};
use super::frontend::Frontend;
pub use super::outcome::Outcome;
use super::signals::{Signals, Stop};

pub struct App {
    chat: Chat,
    frontend: Frontend,
    /// The last comparison's answers, for `/pick` (until the next turn).
    compared: Option<Compared>,
    /// Ctrl-C, SIGTERM and SIGHUP; installed once the MCP servers have started, so that until
    /// then they end the run as usual.
    signals: Signals,
}

impl App {
    pub fn new(chat: Chat, frontend: Frontend) -> Self {
        App {
            chat,
            frontend,
            compared: None,
            signals: Signals::default(),
        }
    }

    pub fn chat(&self) -> &Chat {
        &self.chat
    }

    pub fn chat_mut(&mut self) -> &mut Chat {
        &mut self.chat
    }

    pub fn frontend(&mut self) -> &mut Frontend {
        &mut self.frontend
    }

    /// The chat and the front end at once: a turn needs both.
    pub fn parts(&mut self) -> (&mut Chat, &mut Frontend) {
        (&mut self.chat, &mut self.frontend)
    }

    /// `/clear`: a new, empty session. The display hears that the old one ended and the new
    /// one began, as the session log does (`--output jsonl` then carries the new id).
    pub fn clear_session(&mut self) -> Result<(), agent_loop::Error> {
        let old = self.chat.session().name.clone();
        self.chat.new_session()?;
        self.frontend.display.session_clear(&old);
        self.announce_session();
        Ok(())
    }

    /// `/load NAME`: continues a saved session, which the display hears of.
    pub fn load_session(&mut self, name: &str) -> Result<(), agent_loop::Error> {
        self.chat.load_session(name)?;
        self.announce_session();
        Ok(())
    }

    /// Tells the display which session is now in use.
    pub fn announce_session(&self) {
        let status = self.chat.status();
        self.frontend.display.session_start(
            &status.id,
            &status.session,
            &status.backend,
            status.model.as_deref(),
            status.turns,
        );
    }

    /// A notice on stderr, redacted.
    pub fn notice(&mut self, text: &str) {
        self.frontend.notice(text);
    }

    pub fn install_signals(&mut self) {
        self.signals = Signals::install();
    }

    /// The front end and the signals, for reading an entry that a signal may interrupt.
    pub fn input_parts(&mut self) -> (&mut Frontend, &mut Signals) {
        (&mut self.frontend, &mut self.signals)
    }

    /// `/pick N`: the conversation takes the N-th answer of the last comparison.
    pub fn pick(&mut self, arg: &str) -> Result<String, agent_loop::Error> {
        fanout::pick(&mut self.chat, self.compared.as_ref(), arg)
    }

    /// Runs one turn (on every backend of a fan-out); a signal cancels it (the backend and
    /// tools are killed) and records that. The session is saved either way.
    pub async fn turn(&mut self, input: &str) -> Outcome {
        self.compared = None;
        if let Some(names) = self.chat.fanout().map(<[String]>::to_vec) {
            return self.compare(&names, input).await;
        }
        let screen = self.frontend.display.clone();
        screen.talking_to(self.chat.definition().name(), self.chat.model().as_deref());
        let outcome = tokio::select! {
            result = self.chat.turn(input, &mut self.frontend) => Outcome::Done(result),
            never = screen.animate() => match never {},
            stop = self.signals.next() => Outcome::Cancelled(stop),
        };
        if let Outcome::Cancelled(stop) = outcome {
            self.frontend.notice(&cancelled_notice(stop));
            if let Err(e) = self.chat.cancelled() {
                self.frontend.notice(&format!("error: {e}"));
            }
        }
        outcome
    }

    /// Runs `task` on every backend in `names` at once (`--backend a,b`, `/compare`).
    pub async fn compare(&mut self, names: &[String], task: &str) -> Outcome {
        self.compared = None;
        let (outcome, compared) = fanout::compare(
            &mut self.chat,
            &mut self.frontend,
            &mut self.signals,
            names,
            task,
        )
        .await;
        self.compared = compared;
        outcome
    }

    /// `[session NAME: 3 turns, tokens in 1234 / out 56, $0.0123]`.
    pub fn summary_line(&self) -> String {
        let status = self.chat.status();
        let t = &status.totals;
        let mut line = format!(
            "[session {}: {}, {}",
            status.session,
            agent_loop::plural::count(status.turns, "turn", "turns"),
            super::display::plain::tokens(Some(t.input), Some(t.output))
        );
        if t.cost > 0.0 {
            line.push_str(&format!(", ${:.4}", t.cost));
        }
        if !status.saved {
            line.push_str(", not saved");
        }
        line.push(']');
        line
    }
}

/// What is shown when a signal cancels a turn.
pub fn cancelled_notice(stop: Stop) -> String {
    match stop {
        Stop::Interrupt => {
            "[turn cancelled: the backend and any running tool were stopped]".to_string()
        }
        _ => format!(
            "[turn cancelled by {}: the backend and any running tool were stopped]",
            stop.name()
        ),
    }
}

/// How long after one Ctrl-C a second one leaves the REPL.
pub const DOUBLE_INTERRUPT: Duration = Duration::from_secs(2);
