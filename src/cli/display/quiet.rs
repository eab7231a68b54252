//! `--quiet`: the final answer alone on stdout, for `answer=$(agent-loop -q "task")`. Only
//! what needs a person reaches stderr: errors, and the approval question and REPL prompt when
//! there is a terminal to answer them.

use std::io::Write;

use super::renderer::Renderer;
use crate::cli::display::plain::PlainDisplay;
use agent_loop::event::{ApprovalRequest, Event};

pub struct QuietDisplay {
    plain: PlainDisplay,
}

impl QuietDisplay {
    pub fn new(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>) -> Self {
        QuietDisplay {
            plain: PlainDisplay::new(out, err),
        }
    }
}

impl Renderer for QuietDisplay {
    fn render(&mut self, event: &Event) {
        if let Event::Text {
            final_answer: true, ..
        }
        | Event::Error { .. } = event
        {
            self.plain.render(event);
        }
    }

    fn approval_prompt(&mut self, request: &ApprovalRequest, full: bool) -> bool {
        self.plain.approval_prompt(request, full)
    }

    fn notice(&mut self, _text: &str) {}

    fn answers_only(&self) -> bool {
        true
    }

    fn prompt(&mut self, text: &str) {
        self.plain.prompt(text);
    }

    fn fatal(&mut self, error: &agent_loop::Error) {
        self.plain.notice(&format!("agent-loop: error: {error}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::display::shared::Captured;

    #[test]
    fn only_the_answer_and_errors_are_shown() {
        let (out, err) = (Captured::default(), Captured::default());
        let mut quiet = QuietDisplay::new(out.boxed(), err.boxed());
        for event in [
            Event::Text {
                text: "let me look".into(),
                final_answer: false,
            },
            Event::Waiting {
                backend: "fake".into(),
                elapsed_s: 10,
            },
            Event::Error {
                message: "boom".into(),
                kind: agent_loop::ErrorKind::Backend,
            },
            Event::Text {
                text: "42".into(),
                final_answer: true,
            },
        ] {
            quiet.render(&event);
        }
        quiet.notice("[conversation cleared]");
        assert_eq!(out.text(), "42\n");
        assert_eq!(err.text(), "error: boom\n");
    }
}
