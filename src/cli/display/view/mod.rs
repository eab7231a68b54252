//! The view (`--display view`): the design's limited-context display. The screen has three
//! parts: the conversation, wrapped to the width with the newest line at the bottom; one
//! status line (backend, model, session, context used of its budget, tokens, state); and the
//! input line at the bottom, where entries are typed and approvals answered. PgUp and PgDn
//! (Ctrl-B and Ctrl-F where there are none) scroll through the whole conversation, a resumed
//! session's turns included; new output does not move a scrolled-back view, and End goes back
//! to the live end.
//!
//! What the conversation shows is what the plain display would print, formatted by it
//! ([`PlainDisplay`] writing into memory) and kept as lines ([`lines`]), so the two cannot
//! drift apart. Every control sequence comes from the terminfo entry of `TERM` ([`draw`]);
//! an entry without one the view needs gets the terminfo display, and a message naming it.
//!
//! The view starts at the REPL's first prompt, not before: an error before then prints as
//! the terminfo display would, and leaves nothing to restore. It runs on the alternate screen
//! when the entry has one. Leaving (`exit`, Ctrl-D, Ctrl-C twice, SIGTERM, SIGHUP) gives the
//! terminal back (scroll region whole, attributes off, cursor shown, its modes, the main
//! screen) and then prints this run's conversation once, append-only, ending with the
//! session's summary line. That is how the conversation stays readable in the scrollback:
//! while the view runs, what a terminal keeps of it is fragments (lines scrolled in a region
//! that is not the whole screen do not reach tmux's history, and redraws overwrite rows), and
//! the alternate screen keeps none; written once at the end, it reads like a plain run's
//! output, on every terminal. A panic gives the terminal back from its hook ([`term`]).

mod draw;
mod lines;
mod status;

use super::super::editor::complete::{Completed, Completer};
use super::super::editor::history::{History, Search, Searched};
use super::super::editor::{keys, term};
use super::super::text::approval;
pub use term::size;

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::signal::unix::SignalKind;
use tokio::sync::mpsc;

use super::caps::Caps;
use super::plain::PlainDisplay;
use super::renderer::Renderer;
use super::terminfo::colour_of;
use agent_loop::event::{ApprovalRequest, Event};

use crate::cli::text::CallState;
use draw::Draw;
use keys::Key;
use lines::Style;

/// Columns and rows when the terminal cannot be asked, nor the entry tells.
const DEFAULT_SIZE: (usize, usize) = (80, 24);

/// Where the plain display writes, read back after every event.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Sink {
    fn take(&self) -> String {
        let bytes = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub struct ViewDisplay {
    draw: Draw,
    plain: PlainDisplay,
    sink: Sink,
    /// The first line of this run's conversation: those before it were printed before the
    /// view began (or belong to a resumed session) and are not printed again on leaving.
    from: usize,
    /// The view has ended: everything else is printed as plain lines.
    ended: bool,
    /// The entries typed before (the REPL editor's history).
    pub history: History,
    /// What Tab completes.
    completer: Completer,
    /// A Ctrl-R search going on, and the label it took the place of.
    search: Option<(Box<Search>, String)>,
    /// The last key was a Tab that added nothing: a second one lists the candidates.
    tabbed: bool,
    size: Box<dyn Fn() -> Option<(usize, usize)> + Send>,
    /// The view is drawn on this process's terminal, whose modes it sets and gives back
    /// (not in tests).
    tty: bool,
}

impl ViewDisplay {
    /// The view drawn on `term` with the entry's `caps`, sized by `size` (else the entry).
    pub fn new(
        caps: Caps,
        term: Box<dyn Write + Send>,
        verbose: bool,
        size: Box<dyn Fn() -> Option<(usize, usize)> + Send>,
    ) -> Self {
        let fallback = (
            caps.cols.unwrap_or(DEFAULT_SIZE.0),
            caps.lines.unwrap_or(DEFAULT_SIZE.1),
        );
        let (cols, rows) = size().unwrap_or(fallback);
        let sink = Sink::default();
        let mut plain = PlainDisplay::new(Box::new(sink.clone()), Box::new(sink.clone()));
        plain.verbose = verbose;
        plain.width = cols;
        ViewDisplay {
            draw: Draw::new(caps, term, cols, rows),
            plain,
            sink,
            from: 0,
            ended: false,
            history: History::default(),
            completer: Completer::default(),
            search: None,
            tabbed: false,
            size,
            tty: false,
        }
    }

    /// The view is drawn on this process's terminal: reading keys needs its modes changed,
    /// and they are given back on leaving (or by the panic hook).
    pub fn on_terminal(mut self) -> Self {
        self.tty = true;
        self
    }

    /// Starts drawing: the terminal's modes, the alternate screen, the whole layout.
    pub fn start(&mut self) {
        if self.draw.on || self.ended {
            return;
        }
        if self.tty {
            term::enter(self.draw.reset_bytes());
        }
        self.from = self.draw.convo.lines.len();
        let start = self.draw.start_bytes();
        self.draw.write_raw(&start);
        self.draw.on = true;
        self.resize();
    }

    /// Lays the screen out again for the terminal's size now (SIGWINCH).
    pub fn resize(&mut self) {
        let (cols, rows) = (self.size)().unwrap_or((self.draw.cols, self.draw.rows));
        self.plain.width = cols;
        self.draw.relayout(cols, rows.max(1));
        self.draw.flush();
    }

    /// Ctrl-Z: the terminal given back as on leaving (its modes, the main screen), agent-loop's
    /// process group stopped as the terminal's own Ctrl-Z stops it, and on `fg` the view taken
    /// up again and drawn whole. In a process group no shell watches (an orphaned one) the
    /// kernel drops the stop, and the view comes back at once.
    /// `resumed` hears SIGCONT: a stop sent to the process group reaches this thread only
    /// once another has taken it, so without waiting the view would take the terminal back
    /// before the stop.
    pub fn suspend(&mut self, resumed: &std::sync::mpsc::Receiver<()>) {
        if !self.draw.on {
            return;
        }
        let reset = self.draw.reset_bytes();
        self.draw.write_raw(&reset);
        if self.tty {
            term::leave(false);
        }
        self.draw.on = false;
        while resumed.try_recv().is_ok() {}
        let _ = rustix::process::kill_current_process_group(rustix::process::Signal::TSTP);
        let _ = resumed.recv_timeout(std::time::Duration::from_millis(200));
        if self.tty {
            term::enter(self.draw.reset_bytes());
        }
        let start = self.draw.start_bytes();
        self.draw.write_raw(&start);
        self.draw.on = true;
        self.resize();
    }

    /// Ends the view: the terminal given back, then this run's conversation printed.
    pub fn leave(&mut self) {
        if !self.draw.on {
            return;
        }
        self.draw.on = false;
        self.ended = true;
        let mut bytes = self.draw.reset_bytes();
        bytes.extend(self.draw.transcript(self.from));
        self.draw.write_raw(&bytes);
        if self.tty {
            term::leave(false);
        }
    }

    /// Adds what the plain display wrote for one event.
    fn take(&mut self, style: Style) {
        let text = self.sink.take();
        self.add(&text, style);
    }

    fn add(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        if !self.draw.on {
            // Before the view starts, or after it ended: printed as the plain display would.
            self.draw.write_raw(text.as_bytes());
        }
        if self.ended {
            return;
        }
        self.draw.push(text, style);
        self.draw.settle();
        self.draw.flush();
    }

    /// A key typed at the input line; the entry when it was Enter.
    pub fn key(&mut self, key: &Key) -> Option<String> {
        let page = self.draw.page();
        let was_tab = std::mem::take(&mut self.tabbed);
        if let Some((search, label)) = self.search.take() {
            match search.key(&self.history, key) {
                Ok(search) => {
                    (self.draw.label, self.draw.input) = search.shown();
                    self.search = Some((search, label));
                    self.repaint_input();
                    return None;
                }
                Err(Searched::Cancel(before)) => {
                    (self.draw.label, self.draw.input) = (label, before);
                    self.repaint_input();
                    return None;
                }
                Err(Searched::Accept(found)) => {
                    self.history.end_recall();
                    (self.draw.label, self.draw.input) = (label, found);
                }
            }
        }
        match key {
            Key::Ctrl('R') => {
                let search = Box::new(Search::new(self.draw.input.clone()));
                let label;
                (label, self.draw.input) = search.shown();
                let before = std::mem::replace(&mut self.draw.label, label);
                self.search = Some((search, before));
                self.repaint_input();
            }
            Key::Tab => match self.completer.complete(&mut self.draw.input) {
                Completed::Edited => self.repaint_input(),
                Completed::Choices(choices) if was_tab && !choices.is_empty() => {
                    self.add(&format!("{}\n", choices.join("  ")), Style::Plain);
                }
                Completed::Choices(_) => self.tabbed = true,
            },
            Key::Interrupt => {
                self.draw.input.take();
                self.history.end_recall();
                self.repaint_input();
            }
            Key::PageUp | Key::Ctrl('B') => self.draw.scroll(Some(page)),
            Key::PageDown | Key::Ctrl('F') => self.draw.scroll(Some(-page)),
            Key::End if self.draw.back > 0 => self.draw.scroll(None),
            Key::Ctrl('L') => self.resize(),
            Key::Up | Key::Down => {
                self.history.up_down(&mut self.draw.input, *key == Key::Up);
                self.draw.paint_input();
                self.draw.settle();
            }
            Key::Enter => {
                let entry = self.draw.input.take();
                let label = self.draw.label.clone();
                if !self.draw.status.approval {
                    self.history.keep(&entry);
                }
                self.draw.status.approval = false;
                self.add(&format!("{label}{entry}\n"), Style::Bold);
                self.draw.paint_input();
                self.draw.paint_status();
                self.draw.settle();
                self.draw.flush();
                return Some(entry);
            }
            key => {
                if !self.draw.input.edit(key) {
                    return None;
                }
                self.draw.paint_input();
                self.draw.settle();
            }
        }
        self.draw.flush();
        None
    }

    /// Whether nothing is typed (nor searched): Ctrl-C then is the REPL's (cancel a turn,
    /// or leave).
    fn nothing_typed(&self) -> bool {
        self.draw.input.text.is_empty() && self.search.is_none()
    }

    fn repaint_input(&mut self) {
        self.draw.paint_input();
        self.draw.settle();
        self.draw.flush();
    }

    /// The conversation of a resumed (or loaded) session, as lines before the live ones,
    /// and its tokens.
    pub fn history(&mut self, lines: &str, (input, output): (u64, u64)) {
        self.draw.status.tokens_in = input;
        self.draw.status.tokens_out = output;
        self.add(lines, Style::Plain);
        self.draw.paint_status();
        self.draw.flush();
    }
}

impl Renderer for ViewDisplay {
    fn render(&mut self, event: &Event) {
        let changed = self.draw.status.update(event);
        // The spinner's time is the status line's.
        if matches!(event, Event::Waiting { .. }) {
            return self.tick();
        }
        self.plain.render(event);
        let style = colour_of(event).map_or(Style::Plain, Style::Colour);
        self.take(style);
        if changed {
            self.draw.paint_status();
            self.draw.settle();
            self.draw.flush();
        }
    }

    fn approval_prompt(&mut self, request: &ApprovalRequest, full: bool) -> bool {
        let view = self.plain.approval_prompt(request, full);
        let text = self.sink.take();
        // The question's last line is the input line's label; the rest, the conversation's.
        let (body, question) = text.rsplit_once('\n').unwrap_or(("", &text));
        self.draw.label = question.to_string();
        self.draw.short_label = Some((question.to_string(), approval::short_answers(question)));
        self.draw.status.approval = true;
        let yellow = Style::Colour(super::caps::Colour::Yellow);
        self.add(&format!("{body}\n"), yellow);
        self.draw.paint_input();
        self.draw.paint_status();
        self.draw.settle();
        self.draw.flush();
        view
    }

    fn answered(&mut self, request: &ApprovalRequest, state: CallState) {
        self.plain.answered(request, state);
        self.take(Style::Plain);
    }

    fn notice(&mut self, text: &str) {
        self.plain.notice(text);
        self.take(Style::Plain);
    }

    fn prompt(&mut self, text: &str) {
        self.draw.label = text.to_string();
        // A prompt is shown between turns; no question waits (one a signal left unanswered
        // would otherwise keep the status, and keep the next entry out of the history).
        self.draw.status.running = None;
        self.draw.status.approval = false;
        self.start();
        self.draw.paint_input();
        self.draw.paint_status();
        self.draw.settle();
        self.draw.flush();
    }

    fn fatal(&mut self, error: &agent_loop::Error) {
        self.plain.notice(&format!("agent-loop: error: {error}"));
        self.take(Style::Colour(super::caps::Colour::Red));
    }

    fn session_start(
        &mut self,
        _id: &str,
        name: &str,
        backend: &str,
        model: Option<&str>,
        _turns: u32,
    ) {
        let status = &mut self.draw.status;
        // A new session (`/clear`, `/load`) counts its own tokens.
        status.tokens_in = 0;
        status.tokens_out = 0;
        status.context = None;
        status.session = name.to_string();
        status.backend = backend.to_string();
        status.model = model.map(str::to_string);
        self.draw.paint_status();
        self.draw.flush();
    }

    fn talking_to(&mut self, backend: &str, model: Option<&str>) {
        self.draw.status.backend = backend.to_string();
        self.draw.status.model = model.map(str::to_string);
        self.draw.paint_status();
        self.draw.flush();
    }

    fn tick_every(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_millis(250))
    }

    fn tick(&mut self) {
        self.draw.paint_status();
        self.draw.settle();
        self.draw.flush();
    }

    fn history(&mut self, lines: &str, tokens: (u64, u64)) {
        ViewDisplay::history(self, lines, tokens);
    }

    fn leave(&mut self) {
        ViewDisplay::leave(self);
    }
}

/// The view shared by the front end (events), the key reader (a thread of its own, so keys
/// are read while a turn runs) and the SIGWINCH watcher.
#[derive(Clone)]
pub struct ViewHandle(Arc<Mutex<ViewDisplay>>);

impl ViewHandle {
    pub fn new(view: ViewDisplay) -> Self {
        ViewHandle(Arc::new(Mutex::new(view)))
    }

    /// The history Up, Down and Ctrl-R recall, and what Tab completes.
    pub fn equip(&self, history: History, completer: Completer) {
        let mut view = self.lock();
        view.history = history;
        view.completer = completer;
    }

    fn lock(&self) -> MutexGuard<'_, ViewDisplay> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads keys from stdin on a thread; every entry typed is sent to the returned receiver,
    /// which closes at Ctrl-D on an empty line. Ctrl-C clears the line, or with nothing typed
    /// is sent to agent-loop itself as SIGINT (to cancel a turn, or twice to leave). Watches
    /// SIGWINCH in the runtime, which must be running.
    pub fn read_keys(&self) -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        let (cont_tx, resumed) = std::sync::mpsc::channel();
        let view = self.clone();
        std::thread::spawn(move || view.key_loop(&tx, &resumed));
        let cont = rustix::process::Signal::CONT.as_raw();
        if let Ok(mut cont) = tokio::signal::unix::signal(SignalKind::from_raw(cont)) {
            tokio::spawn(async move {
                while cont.recv().await.is_some() && cont_tx.send(()).is_ok() {}
            });
        }
        let view = self.clone();
        if let Ok(mut winch) = tokio::signal::unix::signal(SignalKind::window_change()) {
            tokio::spawn(async move {
                while winch.recv().await.is_some() {
                    view.lock().resize();
                }
            });
        }
        rx
    }

    fn key_loop(
        &self,
        entries: &mpsc::UnboundedSender<String>,
        resumed: &std::sync::mpsc::Receiver<()>,
    ) {
        use std::io::Read;
        let mut pending = Vec::new();
        let mut buf = [0u8; 4096];
        let mut stdin = std::io::stdin().lock();
        loop {
            let n = match stdin.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            pending.extend_from_slice(&buf[..n]);
            let (keys, used) = keys::decode(&pending);
            pending.drain(..used);
            for key in keys {
                let mut view = self.lock();
                match key {
                    Key::Interrupt if view.nothing_typed() => {
                        drop(view);
                        let me = rustix::process::getpid();
                        let _ = rustix::process::kill_process(me, rustix::process::Signal::INT);
                    }
                    Key::Interrupt => {
                        view.key(&Key::Interrupt);
                    }
                    Key::Suspend => view.suspend(resumed),
                    Key::Eof if view.nothing_typed() => return,
                    Key::Eof => {
                        view.key(&Key::Delete);
                    }
                    key => {
                        if let Some(entry) = view.key(&key) {
                            if entries.send(entry).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        }
    }
}

impl Renderer for ViewHandle {
    fn render(&mut self, event: &Event) {
        self.lock().render(event);
    }
    fn approval_prompt(&mut self, request: &ApprovalRequest, full: bool) -> bool {
        self.lock().approval_prompt(request, full)
    }
    fn answered(&mut self, request: &ApprovalRequest, state: CallState) {
        self.lock().answered(request, state);
    }
    fn notice(&mut self, text: &str) {
        self.lock().notice(text);
    }
    fn prompt(&mut self, text: &str) {
        self.lock().prompt(text);
    }
    fn fatal(&mut self, error: &agent_loop::Error) {
        self.lock().fatal(error);
    }
    fn session_start(
        &mut self,
        id: &str,
        name: &str,
        backend: &str,
        model: Option<&str>,
        turns: u32,
    ) {
        self.lock().session_start(id, name, backend, model, turns);
    }
    fn talking_to(&mut self, backend: &str, model: Option<&str>) {
        self.lock().talking_to(backend, model);
    }
    fn tick_every(&self) -> Option<std::time::Duration> {
        self.lock().tick_every()
    }
    fn tick(&mut self) {
        self.lock().tick();
    }
    fn history(&mut self, lines: &str, tokens: (u64, u64)) {
        self.lock().history(lines, tokens);
    }
    fn leave(&mut self) {
        self.lock().leave();
    }
}

#[cfg(test)]
mod tests;
