//! The append-only display: plain lines, written once, never redrawn. The final answer goes to
//! stdout; everything else (tool calls, results, token counts, progress, errors) to stderr, so
//! `agent-loop "task" > answer.txt` captures just the answer.

use std::io::{self, Write};

use crate::agent::{ApprovalRequest, Event};
use crate::display::sanitize::sanitize;

/// Lines of a tool result shown under the call.
const PREVIEW_LINES: usize = 4;
/// Characters of one preview line.
const PREVIEW_WIDTH: usize = 160;

pub struct PlainDisplay {
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    /// Also show every line the backend prints (`--verbose`).
    pub verbose: bool,
}

impl PlainDisplay {
    pub fn new(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>) -> Self {
        PlainDisplay {
            out,
            err,
            verbose: false,
        }
    }

    /// Renders one event. Write errors (a closed pipe) are ignored: the loop goes on.
    pub fn render(&mut self, event: &Event) {
        let _ = self.try_render(event);
    }

    fn try_render(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::Text {
                text,
                final_answer: true,
            } => {
                writeln!(self.out, "{}", sanitize(text))?;
                self.out.flush()?;
            }
            Event::Text {
                text,
                final_answer: false,
            } => {
                writeln!(self.err, "{}", sanitize(text))?;
            }
            Event::ToolCall { call, summary } => {
                writeln!(
                    self.err,
                    "[tool {}] {}",
                    sanitize(&call.name),
                    one_line(summary)
                )?;
            }
            Event::ToolResult { ok, output, .. } => {
                let mut lines = output.lines();
                if !ok {
                    let first = lines.next().unwrap_or("failed");
                    writeln!(self.err, "  error: {}", cut(first))?;
                }
                for line in lines.by_ref().take(PREVIEW_LINES) {
                    writeln!(self.err, "  {}", cut(line))?;
                }
                let rest = lines.count();
                if rest > 0 {
                    writeln!(
                        self.err,
                        "  ... {rest} more line{}",
                        if rest == 1 { "" } else { "s" }
                    )?;
                }
            }
            Event::Usage { usage, .. } => {
                let n = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
                let mut line = format!("[tokens in {} / out {}", n(usage.input), n(usage.output));
                if let Some(cost) = usage.cost {
                    line.push_str(&format!(" / ${cost:.4}"));
                }
                line.push(']');
                writeln!(self.err, "{line}")?;
            }
            Event::Waiting { backend, elapsed_s } => {
                writeln!(
                    self.err,
                    "[waiting for {} ... {elapsed_s}s]",
                    sanitize(backend)
                )?;
            }
            Event::BackendOutput { backend, line, .. } if self.verbose => {
                writeln!(self.err, "[{}] {}", sanitize(backend), sanitize(line))?;
            }
            Event::Context { stats } => {
                writeln!(self.err, "[context {stats}]")?;
            }
            Event::Summarized { backend, messages } => {
                writeln!(
                    self.err,
                    "[context: {} summarised {messages} older message{}]",
                    sanitize(backend),
                    if *messages == 1 { "" } else { "s" }
                )?;
            }
            Event::ContextNotice { message } => {
                writeln!(self.err, "[context: {}]", sanitize(message))?;
            }
            Event::Error { message } => {
                writeln!(self.err, "error: {}", sanitize(message))?;
            }
            Event::TurnStarted { .. }
            | Event::BackendStarted { .. }
            | Event::BackendOutput { .. }
            | Event::BackendFinished { .. }
            | Event::ApprovalNeeded { .. }
            | Event::TurnFinished { .. } => {}
        }
        self.err.flush()
    }

    /// Asks whether a tool may run; the answer is read by the caller.
    pub fn approval_prompt(&mut self, request: &ApprovalRequest) {
        let _ = write!(
            self.err,
            "Allow {} {}? [y]es once, [a]lways for {}, [n]o: ",
            sanitize(&request.call.name),
            one_line(&request.summary),
            sanitize(&request.call.name)
        );
        let _ = self.err.flush();
    }

    /// A line of the front end's own (REPL prompt, notices), on stderr.
    pub fn notice(&mut self, text: &str) {
        let _ = writeln!(self.err, "{}", sanitize(text));
        let _ = self.err.flush();
    }

    /// Text on stderr without a newline (the REPL's `You: ` prompt).
    pub fn prompt(&mut self, text: &str) {
        let _ = write!(self.err, "{}", sanitize(text));
        let _ = self.err.flush();
    }
}

/// A summary on one line: newlines shown as `⏎`, cut to the preview width.
fn one_line(text: &str) -> String {
    cut(&text.replace('\n', " \u{23ce} "))
}

fn cut(line: &str) -> String {
    let clean = sanitize(line);
    let mut chars = clean.chars();
    let head: String = chars.by_ref().take(PREVIEW_WIDTH).collect();
    if chars.next().is_some() {
        format!("{head}...")
    } else {
        head
    }
}
