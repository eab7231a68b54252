//! The terminfo display: the plain display's lines, with coloured roles, and while a backend
//! runs a live region at the bottom, redrawn in place: a spinner with the backend's name and
//! elapsed time, and with `--tail N` the last N lines of its output above it.
//!
//! Every control sequence comes from [`Caps`]; what the entry lacks is not drawn (no `el`: no
//! live region, progress comes as plain `[waiting ...]` lines; no `setaf`: no colour). The
//! cursor is hidden only while the region is live and shown again when it ends: at the end
//! of the backend call, on an error, before any notice of the front end (such as the one after
//! Ctrl-C) and when the display is dropped.

use std::collections::VecDeque;
use std::io::Write;
use std::time::{Duration, Instant};

use super::renderer::Renderer;
use crate::cli::display::caps::{Caps, Colour};
use crate::cli::display::plain::{PlainDisplay, WidthFn};
use crate::cli::display::sanitize;
use crate::cli::display::shared::SharedWriter;
use crate::cli::text::{progress_text, CallState};
use agent_loop::event::{ApprovalRequest, Event};

/// How often the spinner moves.
pub const TICK: Duration = Duration::from_millis(100);
const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
/// Width assumed when neither the terminal nor the entry tells.
const DEFAULT_WIDTH: usize = 80;

pub struct TerminfoDisplay {
    caps: Caps,
    /// Writes the lines themselves, through the same streams.
    plain: PlainDisplay,
    err: SharedWriter,
    width: WidthFn,
    /// `--tail N`: lines of backend output shown in the live region; 0 for none.
    tail: usize,
    live: Option<Live>,
    /// Lines of the live region now on screen; the cursor is at the end of the last one.
    drawn: usize,
    /// Set while the cursor is hidden: dropping the display then shows it again (on a cleared
    /// line), so a panic that ends agent-loop before the region does leaves it visible.
    cursor_hidden: bool,
    /// Backend output of the running call, printed append-only when it ends (`--tail`).
    kept: Vec<Event>,
}

/// A backend call in progress.
struct Live {
    backend: String,
    started: Instant,
    frame: usize,
    window: VecDeque<String>,
    /// A running tool's progress, after the time.
    detail: String,
}

impl TerminfoDisplay {
    /// The final answer goes to `out`, everything else, the live region included, to `err`.
    pub fn new(
        caps: Caps,
        out: Box<dyn Write + Send>,
        err: Box<dyn Write + Send>,
        verbose: bool,
        tail: usize,
    ) -> Self {
        let err = SharedWriter::new(err);
        let mut plain = PlainDisplay::new(out, Box::new(err.clone()));
        plain.verbose = verbose;
        TerminfoDisplay {
            caps,
            plain,
            err,
            width: || None,
            tail,
            live: None,
            drawn: 0,
            cursor_hidden: false,
            kept: Vec::new(),
        }
    }

    /// How to ask the terminal for its width (else the entry's `cols`, else 80). Lines of
    /// agent-loop's own are broken to it at spaces, and left whole when it does not tell.
    pub fn with_width(mut self, width: WidthFn) -> Self {
        self.width = width;
        self.plain.fit_width = width;
        self
    }

    fn write(&mut self, bytes: &[u8]) {
        let _ = self.err.write_all(bytes);
        let _ = self.err.flush();
    }

    /// Erases the live region, leaving the cursor at the start of its first line.
    fn erase(&mut self) {
        if self.drawn == 0 {
            return;
        }
        let caps = &self.caps;
        let mut bytes = [seq(&caps.cr), seq(&caps.el)].concat();
        for _ in 1..self.drawn {
            bytes.extend([seq(&caps.cuu1), seq(&caps.el)].concat());
        }
        self.drawn = 0;
        self.write(&bytes);
    }

    fn draw(&mut self) {
        let Some(live) = &self.live else { return };
        // While a streamed answer leaves its line open on stdout, the region would be drawn on
        // that line, and erasing it would take the answer's text with it: it waits for the
        // line's end (the text coming is progress enough).
        if !self.caps.can_redraw() || self.plain.line_open() {
            return;
        }
        // One column short of the edge, so no line wraps and moving up stays exact.
        let width = (self.width)()
            .or(self.caps.cols)
            .unwrap_or(DEFAULT_WIDTH)
            .saturating_sub(1)
            .max(1);
        let mut lines: Vec<String> = Vec::new();
        if self.caps.can_redraw_lines() {
            lines.extend(live.window.iter().map(|l| fit(l, width)));
        }
        let mut after = format!(" {}s", live.started.elapsed().as_secs());
        if !live.detail.is_empty() {
            after.push(' ');
            after.push_str(&live.detail);
        }
        // The time and the progress stay in sight; a long name gives way. Counted as fit
        // counts, a non-ASCII character as two columns (the `…` too, hence one more).
        let after_width = after.chars().map(fit_columns).sum::<usize>();
        let room = width.saturating_sub(3 + after_width).max(1);
        let name = crate::cli::text::shortened(&live.backend, room);
        let spinner = format!("{} {name}{after}", FRAMES[live.frame % FRAMES.len()]);
        let mut bytes = lines.join("\n").into_bytes();
        if !lines.is_empty() {
            bytes.push(b'\n');
        }
        let colour = self.caps.colour(Colour::Cyan);
        bytes.extend(colour.iter().flatten());
        bytes.extend(fit(&spinner, width).into_bytes());
        if colour.is_some() {
            bytes.extend(seq(&self.caps.sgr0));
        }
        self.drawn = lines.len() + 1;
        self.write(&bytes);
    }

    fn redraw(&mut self) {
        self.erase();
        self.draw();
    }

    fn start(&mut self, backend: &str) {
        self.live = Some(Live {
            backend: sanitize(backend).into_owned(),
            started: Instant::now(),
            frame: 0,
            window: VecDeque::new(),
            detail: String::new(),
        });
        if self.caps.can_redraw() && self.caps.can_hide_cursor() && !self.cursor_hidden {
            let civis = seq(&self.caps.civis).to_vec();
            self.write(&civis);
            self.cursor_hidden = true;
        }
        self.draw();
    }

    /// Ends the live region: erased, cursor shown, kept output printed.
    fn stop(&mut self) {
        self.erase();
        self.live = None;
        if std::mem::take(&mut self.cursor_hidden) {
            let cnorm = seq(&self.caps.cnorm).to_vec();
            self.write(&cnorm);
        }
        if !self.kept.is_empty() {
            let verbose = std::mem::replace(&mut self.plain.verbose, true);
            for event in std::mem::take(&mut self.kept) {
                self.plain.render(&event);
            }
            self.plain.verbose = verbose;
        }
    }

    /// Writes through the plain display in `colour` (if any), above the live region.
    fn styled<T>(&mut self, style: Option<Vec<u8>>, w: impl FnOnce(&mut PlainDisplay) -> T) -> T {
        self.erase();
        if let Some(style) = &style {
            self.write(style);
        }
        let out = w(&mut self.plain);
        if style.is_some() {
            let sgr0 = seq(&self.caps.sgr0).to_vec();
            self.write(&sgr0);
        }
        self.draw();
        out
    }

    fn style_of(&self, event: &Event) -> Option<Vec<u8>> {
        self.caps.colour(colour_of(event)?)
    }
}

/// The colour of an event's lines, by role: text that comes with tool calls, the calls,
/// failures, token counts.
pub fn colour_of(event: &Event) -> Option<Colour> {
    Some(match event {
        Event::Text {
            final_answer: false,
            ..
        } => Colour::Green,
        Event::ToolCall { .. } => Colour::Cyan,
        Event::ToolResult { ok: false, .. } | Event::Error { .. } => Colour::Red,
        Event::Usage { .. } | Event::Waiting { .. } => Colour::Blue,
        _ => return None,
    })
}

impl Renderer for TerminfoDisplay {
    fn render(&mut self, event: &Event) {
        match event {
            Event::BackendStarted { backend, .. } => return self.start(backend),
            Event::BackendOutput { line, .. } if self.tail > 0 => {
                self.kept.push(event.clone());
                if let Some(live) = &mut self.live {
                    live.window.push_back(line.clone());
                    while live.window.len() > self.tail {
                        live.window.pop_front();
                    }
                }
                return self.redraw();
            }
            Event::BackendOutput { .. } if !self.plain.verbose => return,
            // The spinner shows the time.
            Event::Waiting { .. } if self.caps.can_redraw() => return,
            // A running tool's progress is a live region of its own, redrawn in place.
            Event::ToolProgress {
                tool,
                progress,
                total,
                message,
                ..
            } if self.caps.can_redraw() => {
                if self
                    .live
                    .as_ref()
                    .is_none_or(|l| l.backend != sanitize(tool))
                {
                    self.start(tool);
                }
                if let Some(live) = &mut self.live {
                    live.detail = progress_text(*progress, *total, message.as_deref());
                }
                return self.redraw();
            }
            Event::BackendFinished { .. }
            | Event::ToolResult { .. }
            | Event::Error { .. }
            | Event::TurnFinished { .. } => self.stop(),
            _ => {}
        }
        let style = self.style_of(event);
        self.styled(style, |plain| plain.render(event));
    }

    fn approval_prompt(&mut self, request: &ApprovalRequest, full: bool) -> bool {
        self.stop();
        self.plain.width = (self.width)().or(self.caps.cols).unwrap_or(DEFAULT_WIDTH);
        let style = self.caps.colour(Colour::Yellow);
        self.styled(style, |plain| plain.approval_prompt(request, full))
    }

    fn answered(&mut self, request: &ApprovalRequest, state: CallState) {
        self.stop();
        self.plain.answered(request, state);
    }

    fn notice(&mut self, text: &str) {
        self.stop();
        self.plain.notice(text);
    }

    fn aside(&mut self, text: &str) {
        self.stop();
        self.plain.aside(text);
    }

    fn prompt(&mut self, text: &str) {
        self.stop();
        let style = self.caps.bold();
        self.styled(style, |plain| plain.prompt(text));
    }

    fn fatal(&mut self, error: &agent_loop::Error) {
        self.stop();
        let style = self.caps.colour(Colour::Red);
        self.styled(style, |plain| {
            plain.notice(&format!("agent-loop: error: {error}"))
        });
    }

    fn tick_every(&self) -> Option<Duration> {
        self.caps.can_redraw().then_some(TICK)
    }

    fn tick(&mut self) {
        if let Some(live) = &mut self.live {
            live.frame += 1;
            self.redraw();
        }
    }
}

/// A display dropped while the spinner runs (a panic unwinding, an early return) clears the
/// spinner's line and shows the cursor again.
impl Drop for TerminfoDisplay {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A capability's bytes; empty where the entry lacks it (callers check first).
fn seq(cap: &Option<Vec<u8>>) -> &[u8] {
    cap.as_deref().unwrap_or_default()
}

/// The columns `fit` counts for `c`: two for any non-ASCII character, as some are wide.
fn fit_columns(c: char) -> usize {
    1 + usize::from(!c.is_ascii())
}

/// One line of the live region: no control character, no tab, and never wider than `width`
/// columns, so it cannot wrap and throw off the redraw. Non-ASCII characters count as two
/// columns (some are wide); at worst a line is cut early, and it is printed whole later.
fn fit(text: &str, width: usize) -> String {
    let mut used = 0;
    sanitize(text)
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .take_while(|c| {
            used += fit_columns(*c);
            used <= width
        })
        .collect()
}

#[cfg(test)]
mod tests;
