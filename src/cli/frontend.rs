//! The front end of the binary: renders the chat's events (already redacted and logged by
//! the library) with the display, and asks the user to approve tools.

use agent_loop::event::{ApprovalRequest, Decision, Event, Observer};
use agent_loop::text::Redactor;
use agent_loop::BoxFuture;

use super::input::Input;
use super::screen::Screen;
use super::text::CallState;

pub struct Frontend {
    pub display: Screen,
    pub input: Input,
    /// Keeps secrets out of the front end's own notices.
    pub redactor: Redactor,
    /// `--debug`: every event in its debug form on stderr.
    pub debug: bool,
    /// In the REPL, where notices may point to slash commands such as `/pick`.
    pub repl: bool,
    /// Tool calls refused because approval could not be asked (no terminal, or JSON lines):
    /// a one-shot run with one says so in its exit code, whatever the backend type (an
    /// agent's own questions come here too).
    pub refused: u32,
    /// An approval question waits for its answer. A signal that cancels the turn drops the
    /// wait with this still set: the question's line, where the terminal echoed `^C`, is
    /// still open.
    pub asking: bool,
    /// A comparison runs under `--quiet`: the backends' headings and answers are held back,
    /// for only the answer it keeps goes to stdout.
    pub holding_answers: bool,
}

impl Frontend {
    pub fn new(display: Screen, input: Input, redactor: Redactor) -> Self {
        Frontend {
            display,
            input,
            redactor,
            debug: false,
            repl: false,
            refused: 0,
            asking: false,
            holding_answers: false,
        }
    }

    /// After a signal cancelled the turn: a question still waiting for its answer has its
    /// line ended, so that the notice that follows starts a line of its own.
    pub fn question_cut(&mut self) {
        if std::mem::take(&mut self.asking) {
            self.display.end_question_line();
        }
    }

    /// A notice on stderr, redacted.
    pub fn notice(&mut self, text: &str) {
        let text = self.redactor.redact(text);
        self.display.notice(&text);
    }

    /// Asks the user about `request`, if anyone can be asked: the decision, and what became
    /// of the call, for the display.
    async fn ask(&mut self, request: &ApprovalRequest) -> (Decision, CallState) {
        if !self.display.asks_approval() {
            self.refused += 1;
            return (
                Decision::Deny(format!(
                    "agent-loop does not ask for approval with --output jsonl and --yes was \
                     not given, so {} was not allowed to run",
                    request.call.name
                )),
                CallState::NotAnswered,
            );
        }
        if !self.input.interactive {
            self.refused += 1;
            return (
                Decision::Deny(format!(
                    "agent-loop cannot ask for approval (stdin is not a terminal) and --yes was \
                     not given, so {} was not allowed to run",
                    request.call.name
                )),
                CallState::NotAnswered,
            );
        }
        // Only what is typed after the question answers it.
        self.input.discard_typeahead();
        let mut full = false;
        loop {
            let offers_view = self.display.approval_prompt(request, full);
            self.asking = true;
            let answer = self.input.line().await;
            self.asking = false;
            let Some(answer) = answer else {
                let why = "the user closed the input instead of answering";
                return (Decision::Deny(why.into()), CallState::NotAnswered);
            };
            match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return (Decision::Once, CallState::Allowed),
                "a" | "always" => return (Decision::Always, CallState::Allowed),
                "n" | "no" => {
                    return (Decision::Deny("the user said no".into()), CallState::Denied)
                }
                "v" | "view" if offers_view => full = true,
                // An aside: an answer's open line on stdout (an ACP agent asks in the
                // middle of its answer) keeps its bytes. Only the answers offered.
                _ if offers_view => self.display.aside("Please answer y, a, n or v."),
                _ => self.display.aside("Please answer y, a or n."),
            }
        }
    }
}

impl Observer for Frontend {
    fn event(&mut self, event: &Event) {
        if self.debug {
            // Beside the answer, never in it: stdout's bytes are the same without --debug. The
            // debug form, as not every event has a record.
            self.display.aside(&format!("debug: event {event:?}"));
        }
        if self.holding_answers
            && matches!(
                event,
                Event::Text {
                    final_answer: true,
                    ..
                }
            )
        {
            return;
        }
        self.display.render(event);
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let (decision, state) = self.ask(request).await;
            self.display.answered(request, state);
            decision
        })
    }
}
