//! The append-only display: plain lines, written once, never redrawn. The final answer goes to
//! stdout; everything else (tool calls, results, token counts, progress, errors) to stderr, so
//! `agent-loop "task" > answer.txt` captures just the answer. Text that an HTTP backend streams
//! goes to stdout piece by piece as it arrives (so, streamed, the text that comes with tool
//! calls lands there too), and is not repeated when the whole text follows.

use std::collections::HashMap;
use std::io::{self, Write};

use super::renderer::Renderer;
use super::sanitize;
use crate::cli::text::wrap::break_long;
use crate::cli::text::{
    after_refusal, call_line, cut_short, plan_text, progress_text, CallState, PLAIN_EVERY,
};
use agent_loop::event::{ApprovalRequest, Event, OutputStream};
use agent_loop::text::Throttle;

/// Lines of a tool result shown under the call.
const PREVIEW_LINES: usize = 4;
/// Characters of one preview line.
const PREVIEW_WIDTH: usize = 160;

/// How to ask the terminal on stderr for its width: `None` on a pipe or a file.
pub type WidthFn = fn() -> Option<usize>;

pub struct PlainDisplay {
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    /// Also show every line the backend prints (`--verbose`).
    pub verbose: bool,
    /// Text deltas were shown since the last whole text: that text is not printed again.
    streamed: bool,
    /// The last delta did not end its line on stdout.
    mid_line: bool,
    /// The last delta ended in `\r`: held back, as the next may start with `\n`.
    pending_cr: bool,
    /// A line went to stderr since the last delta: on a terminal showing both, the next
    /// aside starts on a line of its own without a line break first.
    aside_after_delta: bool,
    /// Columns an approval prompt is wrapped to when the terminal does not tell.
    pub width: usize,
    /// The terminal's width, which agent-loop's own lines are broken to at spaces; on a pipe
    /// they stay whole.
    pub fit_width: WidthFn,
    /// A running tool's progress is written at most once a second.
    pub progress: Throttle,
    /// Streamed thinking not yet shown (`--verbose`): the backend's name and the line so far.
    thinking: Option<(String, String)>,
    /// The turn was cancelled: the results its calls get then ("not run") are the cancel's,
    /// which the front end has told.
    cancelled: bool,
    /// The agent's own calls of this turn that have a line, by the agent's call id: the
    /// backend that reported it, and what became of it at its question.
    agent_calls: HashMap<String, AgentCall>,
}

/// An agent's own call (an ACP agent's `tool_call`), shown as the agent reported it.
struct AgentCall {
    backend: String,
    state: Option<CallState>,
}

impl PlainDisplay {
    pub fn new(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>) -> Self {
        PlainDisplay {
            out,
            err,
            verbose: false,
            streamed: false,
            mid_line: false,
            pending_cr: false,
            aside_after_delta: false,
            width: 80,
            fit_width: || None,
            progress: Throttle::new(PLAIN_EVERY),
            thinking: None,
            cancelled: false,
            agent_calls: HashMap::new(),
        }
    }

    /// Renders one event. Write errors (a closed pipe) are ignored: the loop goes on.
    pub fn render(&mut self, event: &Event) {
        let _ = self.try_render(event);
    }

    fn try_render(&mut self, event: &Event) -> io::Result<()> {
        if let Event::TextDelta { text, .. } = event {
            self.end_thinking()?;
            return self.stream_text(text);
        }
        if let Event::ThinkingDelta { backend, text } = event {
            return match self.verbose {
                true => self.think(backend, text),
                false => Ok(()),
            };
        }
        // A CLI's output line (a streaming CLI's JSON lines come between the pieces of its
        // answer) leaves the answer's line open: not shown, or shown as an aside; so does a
        // waiting line while the answer streams, which shows it is coming. A line break on
        // stdout would change the answer's bytes.
        match event {
            Event::BackendOutput {
                backend,
                line,
                stream,
            } => {
                if self.verbose || *stream == OutputStream::Screen {
                    self.end_thinking()?;
                    self.aside(&format!(
                        "[{}] {}",
                        sanitize(backend),
                        escaped(line, " \u{23ce} ")
                    ));
                }
                return Ok(());
            }
            Event::Waiting { .. } if self.streamed => return Ok(()),
            _ => {}
        }
        self.end_thinking()?;
        self.end_streamed_line()?;
        match event {
            Event::Text { .. } if self.streamed => {
                // Already on stdout, piece by piece.
                self.streamed = false;
            }
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
            Event::ToolResult { ok: false, .. } if self.cancelled => {}
            Event::ToolResult { ok, output, .. } => {
                let mut lines = output.lines();
                if !ok {
                    let first = lines.next().unwrap_or("failed");
                    writeln!(self.err, "  error: {}", one_line(first))?;
                }
                for line in lines.by_ref().take(PREVIEW_LINES) {
                    writeln!(self.err, "  {}", one_line(line))?;
                }
                let rest = lines.count();
                if rest > 0 {
                    let more = agent_loop::text::plural::count(rest, "more line", "more lines");
                    writeln!(self.err, "  ... {more}")?;
                }
            }
            Event::ToolProgress {
                call_id,
                progress,
                total,
                message,
                ..
            } => {
                if self.progress.admit(call_id) {
                    let text = progress_text(*progress, *total, message.as_deref());
                    writeln!(self.err, "  [progress {}]", one_line(&text))?;
                }
            }
            Event::ToolLog {
                server,
                level,
                data,
                ..
            } if self.verbose || !matches!(level.as_str(), "debug" | "info" | "notice") => {
                writeln!(self.err, "  {}", one_line(&log_text(server, level, data)))?;
            }
            Event::ToolLog { .. } => {}
            Event::Usage { usage, .. } => {
                let mut line = format!("[{}", tokens(usage.input, usage.output));
                if let Some(read) = usage.cache_read.filter(|n| *n > 0) {
                    line.push_str(&format!(" / cache read {read}"));
                }
                if let Some(write) = usage.cache_write.filter(|n| *n > 0) {
                    line.push_str(&format!(" / cache write {write}"));
                }
                if let Some(cost) = usage.cost {
                    line.push_str(&format!(" / ${cost:.4}"));
                }
                line.push(']');
                self.own(&line)?;
            }
            // What an agent reports of a call refused at its question: its `failed` is no
            // failure of the call (the line after the question said what became of it);
            // anything else it did anyway is shown as such.
            Event::OwnTool {
                backend,
                activity,
                call_id: Some(id),
            } if self.agent_call_refused(id) => {
                if let Some(text) = after_refusal(activity) {
                    writeln!(self.err, "[{}] {}", sanitize(backend), one_line(&text))?;
                }
            }
            // An agent's call with an id (an ACP agent's) may be pending yet, about to be
            // asked about: its line says no verb. Its answer adds a line (`answered`).
            Event::OwnTool {
                backend,
                activity,
                call_id: Some(id),
            } => {
                self.agent_calls.entry(id.clone()).or_insert(AgentCall {
                    backend: backend.clone(),
                    state: None,
                });
                writeln!(self.err, "[{}] {}", sanitize(backend), one_line(activity))?;
            }
            // What an agent's output showed (a CLI's `tools = "own"`, a terminal agent's
            // screen) has run.
            Event::OwnTool {
                backend,
                activity,
                call_id: None,
            } => {
                writeln!(
                    self.err,
                    "[{} ran] {}",
                    sanitize(backend),
                    one_line(activity)
                )?;
            }
            Event::CutShort { backend, reason } => {
                self.own(&format!("[{}]", cut_short(backend, *reason)))?;
            }
            Event::Plan { backend, entries } => {
                self.own(&format!(
                    "[{}] plan: {}",
                    sanitize(backend),
                    lines_escaped(&plan_text(entries))
                ))?;
            }
            Event::Waiting { backend, elapsed_s } => {
                self.own(&format!(
                    "[waiting for {} ... {elapsed_s}s]",
                    sanitize(backend)
                ))?;
            }
            Event::Retrying {
                backend,
                retry,
                retries,
                wait_ms,
                reason,
            } => {
                self.own(&format!(
                    "[retrying {} in {} after {} (retry {retry} of {retries})]",
                    sanitize(backend),
                    duration_text(*wait_ms),
                    lines_escaped(reason)
                ))?;
            }
            Event::RateLimitWait {
                backend,
                wait_ms,
                limit,
            } => {
                self.own(&format!(
                    "[waiting {}: {} rate limit {}]",
                    duration_text(*wait_ms),
                    sanitize(backend),
                    lines_escaped(limit)
                ))?;
            }
            Event::BackendStarted { .. } => self.streamed = false,
            Event::Context { stats } => {
                self.own(&format!("[context {stats}]"))?;
            }
            Event::Summarized { backend, messages } => {
                self.own(&format!(
                    "[context: {} summarised {}]",
                    sanitize(backend),
                    agent_loop::text::plural::count(*messages, "older message", "older messages")
                ))?;
            }
            Event::ContextNotice { message } => {
                self.own(&format!("[context: {}]", sanitize(message)))?;
            }
            Event::Notice { message } => {
                self.own(&sanitize(message))?;
            }
            // The front end that cancelled says so in its own words (naming the signal); the
            // event is for the log and `--output jsonl`.
            Event::Error {
                kind: agent_loop::ErrorKind::Cancelled,
                ..
            } => self.cancelled = true,
            Event::Error { message, .. } => {
                self.own(&format!("error: {}", lines_escaped(message)))?;
            }
            Event::TurnStarted { .. } => {
                self.cancelled = false;
                self.agent_calls.clear();
            }
            Event::BackendOutput { .. }
            | Event::TextDelta { .. }
            | Event::ThinkingDelta { .. }
            | Event::BackendFinished { .. }
            | Event::ApprovalNeeded { .. }
            | Event::TurnFinished { .. } => {}
        }
        self.err.flush()
    }

    /// Whether the agent's call `id` was refused at its question.
    fn agent_call_refused(&self, id: &str) -> bool {
        (self.agent_calls.get(id)).is_some_and(|c| c.state.is_some_and(CallState::refused))
    }

    /// The question about `request` was answered: an agent's own call shown before it gets a
    /// line saying what became of it, in the question's words (the agent picks its ids and
    /// the words it reported; the question's are agent-loop's). Other calls say it by their
    /// result.
    pub fn answered(&mut self, request: &ApprovalRequest, state: CallState) {
        let Some(call) = self.agent_calls.get_mut(&request.call.id) else {
            return;
        };
        call.state = Some(state);
        let summary = request.summary.lines().next().unwrap_or_default();
        let line = format!(
            "[{}] {} ({})",
            sanitize(&call.backend),
            one_line(&call_line(&request.call.name, summary)),
            state.text()
        );
        // An aside: an answer's open line on stdout keeps its bytes (an ACP agent asks in the
        // middle of its answer).
        let open = self.aside_break();
        let _ = writeln!(self.err, "{open}{line}");
        let _ = self.err.flush();
    }

    /// Shows the model's thinking on stderr a line at a time, `[backend thinking] ...`.
    fn think(&mut self, backend: &str, text: &str) -> io::Result<()> {
        self.end_streamed_line()?;
        let (_, line) = self
            .thinking
            .get_or_insert_with(|| (backend.to_string(), String::new()));
        line.push_str(text);
        while let Some(end) = line.find('\n') {
            let done: String = line.drain(..=end).collect();
            writeln!(
                self.err,
                "[{} thinking] {}",
                sanitize(backend),
                escaped(done.trim_end(), " \u{23ce} ")
            )?;
        }
        self.err.flush()
    }

    /// Shows the rest of the thinking, before anything else.
    fn end_thinking(&mut self) -> io::Result<()> {
        if let Some((backend, line)) = self.thinking.take() {
            if !line.trim().is_empty() {
                writeln!(
                    self.err,
                    "[{} thinking] {}",
                    sanitize(&backend),
                    escaped(line.trim_end(), " \u{23ce} ")
                )?;
            }
        }
        Ok(())
    }

    /// Writes a streamed piece of text to stdout at once, sanitised.
    fn stream_text(&mut self, text: &str) -> io::Result<()> {
        let mut chunk = String::with_capacity(text.len() + 1);
        if std::mem::take(&mut self.pending_cr) {
            chunk.push('\r');
        }
        chunk.push_str(text);
        if chunk.ends_with('\r') {
            chunk.pop();
            self.pending_cr = true;
        }
        let clean = sanitize(&chunk);
        if clean.is_empty() {
            return Ok(());
        }
        self.out.write_all(clean.as_bytes())?;
        self.out.flush()?;
        self.aside_after_delta = false;
        self.streamed = true;
        self.mid_line = !clean.ends_with('\n');
        Ok(())
    }

    /// Streamed text left its line open on stdout (no newline yet).
    pub fn line_open(&self) -> bool {
        self.mid_line || self.pending_cr
    }

    /// Ends a line that streamed text left open, before anything else is written.
    fn end_streamed_line(&mut self) -> io::Result<()> {
        // A held-back `\r` with nothing after it would have been a line end anyway.
        if std::mem::take(&mut self.pending_cr) || std::mem::take(&mut self.mid_line) {
            writeln!(self.out)?;
            self.out.flush()?;
        }
        Ok(())
    }

    /// Asks whether a tool may run; the answer is read by the caller.
    /// Asks whether the call may run, showing all of it (super::approval); `full`: even a
    /// command longer than a screen. Whether `[v]iew all` was offered.
    pub fn approval_prompt(&mut self, request: &ApprovalRequest, full: bool) -> bool {
        // The terminal's width of the moment (a phone turned since the start counts).
        let width = (self.fit_width)().unwrap_or(self.width);
        let text = crate::cli::text::approval::prompt(request, width, full);
        // On a line of its own, an answer's open line on stdout left as it is (an ACP agent
        // asks in the middle of its answer).
        let open = self.aside_break();
        let _ = write!(self.err, "{open}{}", sanitize(&text));
        let _ = self.err.flush();
        crate::cli::text::approval::offers_view(&text)
    }

    /// The line break that starts a line on stderr while an answer's line is open on stdout
    /// (the two on one terminal), once after each piece: the lines after it start fresh.
    fn aside_break(&mut self) -> &'static str {
        if !self.line_open() || std::mem::replace(&mut self.aside_after_delta, true) {
            return "";
        }
        "\n"
    }

    /// A line of the front end's own (REPL prompt, notices), on stderr.
    pub fn notice(&mut self, text: &str) {
        let _ = self.end_streamed_line();
        let _ = self.own(&sanitize(text));
        let _ = self.err.flush();
    }

    /// One of agent-loop's own lines on stderr (not the answer, a tool call or its output),
    /// broken at spaces to the terminal's width, one column short of it as `/help` is.
    fn own(&mut self, text: &str) -> io::Result<()> {
        match (self.fit_width)() {
            Some(cols) => writeln!(self.err, "{}", break_long(text, cols.saturating_sub(1))),
            None => writeln!(self.err, "{text}"),
        }
    }

    /// A line of tracing on stderr that leaves stdout alone: a streamed line stays open
    /// there (a line break on stdout would change the answer's bytes); on stderr the line
    /// starts on a line of its own, for a terminal that shows both.
    pub fn aside(&mut self, text: &str) {
        let open = self.aside_break();
        let _ = writeln!(self.err, "{open}{}", sanitize(text));
        let _ = self.err.flush();
    }

    /// Text on stderr without a newline (the REPL's `You: ` prompt).
    pub fn prompt(&mut self, text: &str) {
        let _ = write!(self.err, "{}", sanitize(text));
        let _ = self.err.flush();
    }
}

/// A wait as people say it: `250ms`, `2s`, `1.5s`.
fn duration_text(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms}ms"),
        _ if ms.is_multiple_of(1000) => format!("{}s", ms / 1000),
        _ => format!("{:.1}s", ms as f64 / 1000.0),
    }
}

/// A summary on one line: newlines shown as `⏎`, the rest as [`escaped`]; cut to the preview
/// width.
fn one_line(text: &str) -> String {
    let shown = escaped(text, " \u{23ce} ");
    let mut chars = shown.chars();
    let head: String = chars.by_ref().take(PREVIEW_WIDTH).collect();
    if chars.next().is_some() {
        format!("{head}...")
    } else {
        head
    }
}

/// Text a server, an HTTP body or a TUI's screen sent, for a line of ours: a bare carriage
/// return and the characters that hide text (direction overrides, zero widths) as escapes,
/// newlines as `newline`, no other control character, so that nothing it holds starts a
/// line of its own or reorders this one. (Not the answer: a CR there is the answer's.)
fn escaped(text: &str, newline: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => shown.push_str(newline),
            '\r' => shown.push_str("\\r"),
            c if agent_loop::text::shown::invisible(c) => {
                shown.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => shown.push(c),
        }
    }
    sanitize(&shown).into_owned()
}

/// [`escaped`], its lines kept.
fn lines_escaped(text: &str) -> String {
    escaped(text, "\n")
}

impl Renderer for PlainDisplay {
    fn render(&mut self, event: &Event) {
        PlainDisplay::render(self, event);
    }

    fn approval_prompt(&mut self, request: &ApprovalRequest, full: bool) -> bool {
        PlainDisplay::approval_prompt(self, request, full)
    }

    fn answered(&mut self, request: &ApprovalRequest, state: CallState) {
        PlainDisplay::answered(self, request, state);
    }

    fn notice(&mut self, text: &str) {
        PlainDisplay::notice(self, text);
    }

    fn aside(&mut self, text: &str) {
        PlainDisplay::aside(self, text);
    }

    fn prompt(&mut self, text: &str) {
        PlainDisplay::prompt(self, text);
    }
}

/// The library's token counts (one wording for every front end).
pub use agent_loop::text::plural::tokens;

/// An MCP server's log message as one line: `[mcp SERVER LEVEL] DATA`, a text as it is, other
/// JSON as JSON.
fn log_text(server: &str, level: &str, data: &serde_json::Value) -> String {
    let data = match data {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    format!("[mcp {server} {level}] {data}")
}

#[cfg(test)]
mod tests;
