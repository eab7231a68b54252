//! The program's state between turns: the library's [`Chat`] (agent, session, log), the
//! front end that renders it, and the signals that stop a turn. One-shot runs and the REPL
//! share it.

use std::time::Duration;

use agent_loop::chat::Chat;
use agent_loop::chat::{Image, Prompt};
use agent_loop::event::Event;
use agent_loop::{Error, ErrorKind};

use super::frontend::Frontend;
pub use super::outcome::Outcome;
use super::signals::{Signals, Stop};

pub struct App {
    chat: Chat,
    frontend: Frontend,
    /// Ctrl-C, SIGTERM and SIGHUP; installed once the MCP servers have started, so that until
    /// then they end the run as usual.
    signals: Signals,
    /// Images for the next prompt (`--image`, `/image`).
    pending: Vec<Image>,
}

impl App {
    pub fn new(chat: Chat, frontend: Frontend) -> Self {
        App {
            chat,
            frontend,
            signals: Signals::default(),
            pending: Vec::new(),
        }
    }

    /// Attaches images to the next prompt.
    pub fn attach(&mut self, images: Vec<Image>) {
        self.pending.extend(images);
    }

    /// The images the next prompt carries.
    pub fn pending(&self) -> &[Image] {
        &self.pending
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

    /// Tells the display which session is now in use, and what it holds.
    pub fn announce_session(&self) {
        let status = self.chat.status();
        self.frontend.display.session_start(
            &status.id,
            &status.session,
            &status.backend,
            status.model.as_deref(),
            status.turns,
        );
        let messages = self.chat.messages();
        if !messages.is_empty() {
            let text = self.frontend.redactor.redact(&history_text(messages));
            let totals = (status.totals.input, status.totals.output);
            self.frontend.display.history(&text, totals);
        }
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

    /// Runs one turn (on every backend of a fan-out); a signal cancels it (the backend and
    /// tools are killed) and records that. The session is saved either way.
    pub async fn turn(&mut self, input: impl Into<Prompt>) -> Outcome {
        let mut prompt = input.into();
        prompt.images.append(&mut self.pending);
        if let Some(names) = self.chat.fanout().map(<[String]>::to_vec) {
            if !prompt.images.is_empty() {
                let e = Error::config(
                    "images go to one backend: --image and /image cannot be used with several \
                     backends (--backend A,B)",
                );
                self.frontend.notice(&format!("error: {e}"));
                return Outcome::Done(Err(e));
            }
            return self.compare(&names, &prompt.text).await;
        }
        let attached: Vec<String> = prompt.images.iter().map(Image::label).collect();
        let screen = self.frontend.display.clone();
        screen.talking_to(self.chat.backend_name(), self.chat.model().as_deref());
        let outcome = tokio::select! {
            result = self.chat.turn(prompt, &mut self.frontend) => Outcome::Done(result),
            never = screen.animate() => match never {},
            stop = self.signals.next() => Outcome::Cancelled(stop),
        };
        if let Outcome::Cancelled(stop) = outcome {
            self.frontend.question_cut();
            // Nobody reads any more: quietly, as a closed pipe ends other tools.
            if stop != Stop::Closed {
                self.frontend.notice(&cancelled_notice(stop));
            }
            // Ctrl-C is the user's; a signal from elsewhere is named in the conversation.
            let why = match stop {
                Stop::Interrupt => None,
                _ => Some(format!("cancelled by {}", stop.name())),
            };
            if let Err(e) = self.chat.cancelled(why.as_deref(), &mut self.frontend) {
                self.frontend.notice(&format!("error: {e}"));
            }
        }
        if let Outcome::Done(Err(e)) = &outcome {
            if self.chat.prompt_stays() {
                self.prompt_stays();
            } else if self.frontend.repl && !attached.is_empty() && e.kind != ErrorKind::Cancelled {
                // Refused (a backend that takes no images): the prompt is in the input
                // history, but the images went with it.
                self.frontend.notice(&format!(
                    "{} not kept with the refused prompt: /image attaches again, on a backend \
                     that takes images",
                    attached.join(" ")
                ));
            }
        }
        outcome
    }

    /// After a failed turn: the shown error was the event's, without the library's word that
    /// the prompt stays. A one-shot run has no `/retry`: its session is named to go on in.
    fn prompt_stays(&mut self) {
        let session = &self.chat.session().name;
        let note = match self.frontend.repl {
            true => agent_loop::chat::PROMPT_STAYS.to_string(),
            false if self.chat.is_kept() => format!(
                "[the prompt stays in session {session}, unanswered: in `agent-loop -s \
                 {session}`, /retry sends it again, /undo drops it]"
            ),
            false => return,
        };
        self.frontend.notice(&note);
    }

    /// Runs `task` on every backend in `names` at once (`--backend a,b`, `/compare`); a
    /// signal stops every backend and leaves the conversation unchanged. Under `--quiet` only
    /// the kept answer goes to stdout. Tool calls refused for want of a way to ask count only
    /// in the kept answer's backend: another backend's refusal does not make it short.
    pub async fn compare(&mut self, names: &[String], task: &str) -> Outcome {
        let refused = self.frontend.refused;
        let quiet = self.frontend.display.answers_only();
        self.frontend.holding_answers = quiet;
        let result = tokio::select! {
            result = self.chat.compare(names, task, &mut self.frontend) => Ok(result),
            stop = self.signals.next() => Err(stop),
        };
        self.frontend.holding_answers = false;
        let outcome = match result {
            Ok(result) => Outcome::Done(result.map(|kept| {
                // When a call was refused, approval could not be asked at all in this run:
                // every call denied in the kept backend was refused.
                if self.frontend.refused > refused {
                    self.frontend.refused = refused + kept.denied;
                }
                if quiet {
                    self.frontend.display.render(&Event::Text {
                        text: kept.answer.clone(),
                        final_answer: true,
                    });
                }
                // `/pick` exists only in the REPL; a one-shot run has nothing to pick with.
                let repl = self.frontend.repl;
                self.frontend.notice(&kept.notice(repl));
                kept.answer
            })),
            Err(stop) => Outcome::Cancelled(stop),
        };
        if let Outcome::Cancelled(_) = outcome {
            self.frontend.question_cut();
            self.frontend.notice(
                "[comparison cancelled: every backend and running tool were stopped; the conversation is unchanged]",
            );
            if let Err(e) = self.chat.save() {
                self.frontend.notice(&format!("error: {e}"));
            }
        }
        outcome
    }

    /// `[session NAME: 3 turns, tokens in 1234 / out 56, $0.0123]`.
    pub fn summary_line(&self) -> String {
        self.chat.summary_line()
    }
}

/// A session's messages as the displays print them: the user's after `You: `, the model's
/// text and tool calls, the first line of each result.
fn history_text(messages: &[agent_loop::chat::Message]) -> String {
    use agent_loop::chat::Message;
    use std::fmt::Write;
    let mut out = String::new();
    for message in messages {
        let _ = match message {
            Message::User { text, .. } => writeln!(out, "You: {text}"),
            Message::Assistant { text, tool_calls } => {
                let mut line = text.trim_end().to_string();
                for call in tool_calls {
                    let _ = write!(line, "\n[tool {}] {}", call.name, call.args);
                }
                writeln!(out, "{}", line.trim_start_matches('\n'))
            }
            Message::ToolResult { ok, output, .. } => {
                let first = output.lines().next().unwrap_or_default();
                match ok {
                    true => writeln!(out, "  {first}"),
                    false => writeln!(out, "  error: {first}"),
                }
            }
        };
    }
    agent_loop::text::sanitize(&out).into_owned()
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
