//! The display the front end holds: the renderer chosen once at start-up from the flags and
//! the environment, shared between the observer of the turn and the timer that moves the
//! spinner while the turn runs.

use std::convert::Infallible;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::display::{
    choose, no_color_requested, Caps, Choice, JsonlDisplay, PlainDisplay, QuietDisplay, Renderer,
    Settings, Terminal, TerminfoDisplay, ViewDisplay, ViewHandle,
};
use agent_loop::event::{ApprovalRequest, Event};
use agent_loop::Error;

use super::args::Args;
use super::editor::complete::Completer;
use super::editor::history::History;

/// The renderer; the view, when it is the view; the terminfo entry the REPL's line editor
/// draws with, when it is the terminfo display.
#[derive(Clone)]
pub struct Screen(
    Arc<Mutex<Box<dyn Renderer>>>,
    Option<ViewHandle>,
    Option<Box<Caps>>,
    /// The display writes lines for the terminal to wrap (plain, terminfo), not a screen of
    /// its own: the front end's own columns are laid out at the terminal's width.
    bool,
);

impl Screen {
    /// The display for these flags and settings (`display` and `output`, from flags,
    /// `AGENT_LOOP_DISPLAY`/`AGENT_LOOP_OUTPUT` or config.toml) on this process's terminal.
    pub fn for_args(args: &Args, chosen: &super::options::ScreenSettings) -> Result<Screen, Error> {
        let settings = Settings {
            display: chosen.display.as_ref().map(|s| s.value).unwrap_or_default(),
            output: chosen.output.as_ref().map(|s| s.value).unwrap_or_default(),
            quiet: args.run.quiet,
            no_color: no_color_requested(std::env::var_os("NO_COLOR").as_deref()),
        };
        let out = || Box::new(super::stdout::Stdout);
        let err = || Box::new(std::io::stderr());
        // stderr is unbuffered: each piece of a formatted line would be a write of its own.
        // The plain and quiet displays flush it at the end of every event.
        let err_lines = || Box::new(std::io::LineWriter::new(std::io::stderr()));
        let terminal = Terminal::detect();
        let mut choice = choose(&settings, &terminal, Caps::load)?;
        if let Choice::View(caps) = choice {
            choice = match view_refused(&caps, args, &terminal) {
                // What `auto` would choose: a pipe or a log file gets no escape, whatever
                // display a settings file asks for.
                Err(why) => {
                    let (fallback, name) = match terminal.stdout_tty && terminal.stderr_tty {
                        true => (Choice::Terminfo(caps), "terminfo"),
                        false => (Choice::Plain, "plain"),
                    };
                    if let Some(why) = why {
                        eprintln!("agent-loop: {why}; using the {name} display");
                    }
                    fallback
                }
                Ok(()) => {
                    let view = ViewDisplay::new(
                        *caps,
                        err(),
                        args.request.verbose,
                        Box::new(super::display::view::size),
                    )
                    .on_terminal();
                    let handle = ViewHandle::new(view);
                    return Ok(Screen(
                        Arc::new(Mutex::new(Box::new(handle.clone()))),
                        Some(handle),
                        None,
                        false,
                    ));
                }
            };
        }
        let editor_caps = match &choice {
            Choice::Terminfo(caps) => Some(caps.clone()),
            _ => None,
        };
        let lines = matches!(choice, Choice::Plain | Choice::Terminfo(_));
        let renderer: Box<dyn Renderer> = match choice {
            Choice::Plain => {
                let mut plain = PlainDisplay::new(out(), err_lines());
                plain.verbose = args.request.verbose;
                plain.fit_width = stderr_width;
                Box::new(plain)
            }
            Choice::Terminfo(caps) => Box::new(
                TerminfoDisplay::new(
                    *caps,
                    out(),
                    err(),
                    args.request.verbose,
                    args.run.tail.unwrap_or(0),
                )
                .with_width(stderr_width),
            ),
            Choice::View(_) => unreachable!("the view was built above"),
            Choice::Jsonl => Box::new(JsonlDisplay::new(out())),
            Choice::Quiet => Box::new(QuietDisplay::new(out(), err_lines())),
        };
        Ok(Screen(
            Arc::new(Mutex::new(renderer)),
            None,
            editor_caps,
            lines,
        ))
    }

    /// JSON lines on stdout, for errors found before the flags could be parsed.
    pub fn jsonl() -> Screen {
        let jsonl: Box<dyn Renderer> = Box::new(JsonlDisplay::new(Box::new(super::stdout::Stdout)));
        Screen(Arc::new(Mutex::new(jsonl)), None, None, false)
    }

    /// With the view: the entries typed at its input line, read from now on.
    pub fn view_entries(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<String>> {
        Some(self.1.as_ref()?.read_keys())
    }

    /// The width to lay the front end's own text out at (the REPL's `/help` and welcome):
    /// the terminal's on stderr, where the plain and terminfo displays write their lines;
    /// `None` on a pipe, and with the view, which wraps every line itself, again at each
    /// resize.
    pub fn layout_width(&self) -> Option<usize> {
        self.3.then(stderr_width).flatten()
    }

    /// The terminfo entry of the terminfo display, which the REPL's line editor draws with.
    pub fn editor_caps(&self) -> Option<Caps> {
        self.2.as_deref().cloned()
    }

    /// Gives the view its history and Tab's completions (nothing without the view).
    pub fn equip(&self, history: History, completer: Completer) {
        if let Some(view) = &self.1 {
            view.equip(history, completer);
        }
    }

    /// The conversation of a resumed or loaded session (the view shows it).
    pub fn history(&self, text: &str, tokens: (u64, u64)) {
        self.lock().history(text, tokens);
    }

    /// The run ends: the view gives the terminal back and prints the conversation.
    pub fn leave(&self) {
        self.lock().leave();
    }

    fn lock(&self) -> MutexGuard<'_, Box<dyn Renderer>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn render(&self, event: &Event) {
        self.lock().render(event);
    }

    /// Whether `[v]iew all` was offered.
    pub fn approval_prompt(&self, request: &ApprovalRequest, full: bool) -> bool {
        self.lock().approval_prompt(request, full)
    }

    /// What became of the call asked about (see [`Renderer::answered`]).
    pub fn answered(&self, request: &ApprovalRequest, state: crate::cli::text::CallState) {
        self.lock().answered(request, state);
    }

    pub fn notice(&self, text: &str) {
        self.lock().notice(text);
    }

    /// Ends the line of an approval question left unanswered, on which the terminal echoed
    /// the `^C` that cancelled the turn. The view's question is its input line, which it
    /// redraws: nothing to end there.
    pub fn end_question_line(&self) {
        if self.1.is_none() {
            let _drawing = self.lock();
            let _ = std::io::Write::write_all(&mut std::io::stderr(), b"\n");
        }
    }

    pub fn aside(&self, text: &str) {
        self.lock().aside(text);
    }

    pub fn prompt(&self, text: &str) {
        self.lock().prompt(text);
    }

    /// Shows an error outside a turn; returns its exit code.
    pub fn fail(&self, error: &Error) -> i32 {
        self.lock().fatal(error);
        super::outcome::exit_code(error)
    }

    pub fn session_start(
        &self,
        id: &str,
        name: &str,
        backend: &str,
        model: Option<&str>,
        turns: u32,
    ) {
        self.lock().session_start(id, name, backend, model, turns);
    }

    pub fn talking_to(&self, backend: &str, model: Option<&str>) {
        self.lock().talking_to(backend, model);
    }

    pub fn session_clear(&self, name: &str) {
        self.lock().session_clear(name);
    }

    pub fn answers_only(&self) -> bool {
        self.lock().answers_only()
    }

    pub fn asks_approval(&self) -> bool {
        self.lock().asks_approval()
    }

    /// Moves the spinner, for ever; run it beside a turn in a `select!`.
    pub async fn animate(&self) -> Infallible {
        let every = self.lock().tick_every();
        let Some(every) = every else {
            return std::future::pending().await;
        };
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            self.lock().tick();
        }
    }
}

/// Whether these command-line arguments, or else `AGENT_LOOP_OUTPUT`, ask for JSON lines:
/// then even an unparsable command line is reported as a JSON `error` record.
pub fn jsonl_requested(args: &[OsString], env: Option<&std::ffi::OsStr>) -> bool {
    let mut output = env.map(|v| v.to_string_lossy().into_owned());
    let mut args = args.iter().map(|a| a.to_string_lossy());
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        if arg == "--output" {
            output = args.next().map(|v| v.into_owned());
        } else if let Some(value) = arg.strip_prefix("--output=") {
            output = Some(value.to_string());
        }
    }
    output.as_deref() == Some("jsonl")
}

/// Why the view cannot be drawn here, if it cannot: input or output that is not a
/// terminal, an entry without a capability it needs. A run with a task (one turn, no REPL)
/// gets the terminfo display without a word: the view is the REPL's.
fn view_refused(caps: &Caps, args: &Args, terminal: &Terminal) -> Result<(), Option<String>> {
    use std::io::IsTerminal;
    if args.run.task.is_some() || !std::io::stdin().is_terminal() {
        return Err(None);
    }
    if !(terminal.stdout_tty && terminal.stderr_tty) {
        return Err(Some(
            "the view needs stdout and stderr to be the terminal".into(),
        ));
    }
    match caps.view_missing() {
        Some(missing) => Err(Some(format!(
            "the view needs the terminfo capability `{missing}`, which TERM={} lacks",
            caps.name
        ))),
        None => Ok(()),
    }
}

/// Columns of the terminal on stderr, where the spinner is drawn.
fn stderr_width() -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(std::io::stderr()).ok()?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn jsonl_is_requested_by_the_last_flag_or_the_environment() {
        let env = Some(std::ffi::OsStr::new("jsonl"));
        assert!(jsonl_requested(
            &argv("agent-loop --output jsonl --bogus"),
            None
        ));
        assert!(jsonl_requested(&argv("agent-loop --output=jsonl"), None));
        assert!(jsonl_requested(&argv("agent-loop --bogus"), env));
        assert!(!jsonl_requested(
            &argv("agent-loop --output text --bogus"),
            env
        ));
        assert!(!jsonl_requested(
            &argv("agent-loop -- --output=jsonl"),
            None
        ));
        assert!(!jsonl_requested(&argv("agent-loop --output"), None));
    }
}
