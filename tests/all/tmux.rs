//! What a person sees: the REPL in a real terminal emulator (tmux), typed into with
//! `send-keys` and read back with `capture-pane`, with `TERM=xterm-256color` (terminfo: a
//! spinner that the answer replaces) and `TERM=dumb` (plain progress lines).

use std::path::PathBuf;
use std::process::{Command, Output};

use regex::Regex;

use crate::common::{bin, poll, sh_quote, Workspace};

/// A tmux server of the test's own, killed when the test ends.
pub struct Tmux {
    socket: PathBuf,
    /// Where the pane's shell writes the exit status.
    status: PathBuf,
}

impl Tmux {
    /// Starts the REPL in an 80x24 window with `TERM=term`.
    pub fn start(ws: &Workspace, term: &str, args: &str) -> Tmux {
        Tmux::start_then(ws, term, args, "")
    }

    /// Starts it as [`Tmux::start`] does, and runs the shell command `then` in the pane
    /// after it (`sleep 60` keeps the pane alive to be looked at: a dead one shows no cursor).
    pub fn start_then(ws: &Workspace, term: &str, args: &str, then: &str) -> Tmux {
        Tmux::start_at(ws, term, args, then, 80)
    }

    /// Starts it as [`Tmux::start_then`] does, in a window `cols` wide.
    pub fn start_at(ws: &Workspace, term: &str, args: &str, then: &str, cols: u16) -> Tmux {
        let conf = ws.path("tmux.conf");
        // The pane stays after the program ends, so its exit status can be read.
        std::fs::write(&conf, "set -g remain-on-exit on\n").unwrap();
        // The shell writes the program's exit status to a file once it has ended: tmux's own
        // `pane_dead` can lag far behind on a loaded machine.
        // The server, started by the first command, passes its own (the workspace's)
        // environment to the pane; TERM is the emulated terminal's.
        let mut line = format!("env TERM={term}");
        line.push_str(&format!(
            " {} --config {} {args}; echo $? > {}; {then}",
            sh_quote(&bin().display().to_string()),
            sh_quote(&ws.path("backends.toml").display().to_string()),
            sh_quote(&ws.path("exit-status").display().to_string())
        ));
        let tmux = Tmux {
            socket: ws.path("tmux.sock"),
            status: ws.path("exit-status"),
        };
        let mut cmd = tmux.command();
        ws.hermetic(&mut cmd)
            .arg("-f")
            .arg(&conf)
            .args([
                "new-session",
                "-d",
                "-x",
                &cols.to_string(),
                "-y",
                "24",
                "-c",
            ])
            .arg(ws.work())
            .arg(line);
        let out = cmd.output().expect("tmux");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.arg("-S").arg(&self.socket);
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        let out = self.command().args(args).output().expect("tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Types `text` and Enter.
    pub fn type_line(&self, text: &str) {
        self.run(&["send-keys", "-l", text]);
        self.run(&["send-keys", "Enter"]);
    }

    /// The screen as a person sees it, trailing blank lines dropped.
    pub fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p"]);
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// Waits until the screen satisfies `check`; panics showing the screen if it never does.
    pub fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        poll(|| Some(self.screen()).filter(|s| check(s)))
            .unwrap_or_else(|| panic!("never saw {what} on screen:\n{}", self.screen()))
    }

    /// The exit status of the program, once it has ended.
    pub fn exit_status(&self) -> Option<i32> {
        let text = std::fs::read_to_string(&self.status).ok()?;
        text.trim().parse().ok()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}

/// Nothing on screen that a terminal failed to interpret: no control characters, no pieces
/// of escape sequences.
fn assert_no_garbage(screen: &str) {
    let leftovers = Regex::new(r"\[\??[0-9;]*[A-HJKSTfhlm]|\(B|\^\[|\u{fffd}").unwrap();
    for line in screen.lines() {
        assert!(
            !line.chars().any(|c| c.is_control() && c != '\t'),
            "control character on screen: {line:?}\n{screen}"
        );
        if let Some(m) = leftovers.find(line) {
            // `[tool ls]` and `[waiting for ...]` are ours: a letter then more text.
            assert!(
                line[m.end()..].starts_with(|c: char| c.is_alphanumeric()),
                "escape sequence residue {:?} on screen: {line:?}\n{screen}",
                m.as_str()
            );
        }
    }
}

/// The seconds shown by each spinner line on screen.
fn spinner_lines(screen: &str) -> Vec<u64> {
    let spinner = Regex::new(r"^[|/\\-] slow (\d+)s$").unwrap();
    screen
        .lines()
        .filter_map(|l| spinner.captures(l).map(|c| c[1].parse().unwrap()))
        .collect()
}

/// The seconds of each `[waiting ...]` line on screen, top to bottom.
fn progress_lines(screen: &str) -> Vec<u64> {
    let progress = Regex::new(r"^\[waiting for slow \.\.\. (\d+)s\]$").unwrap();
    screen
        .lines()
        .filter_map(|l| progress.captures(l).map(|c| c[1].parse().unwrap()))
        .collect()
}

fn slow_workspace() -> Workspace {
    let ws = Workspace::new();
    ws.gated_backend();
    ws.reply(0, "The answer is 42.\n");
    ws
}

#[test]
fn xterm_spinner_is_redrawn_in_place_then_replaced_by_the_answer() {
    let ws = slow_workspace();
    let tmux = Tmux::start(&ws, "xterm-256color", "--backend slow");
    tmux.wait_for("the prompt", |s| s.ends_with("You:"));
    tmux.type_line("what is the answer?");
    // One spinner line whose clock moves: redrawn in place, not appended.
    let screen = tmux.wait_for("the spinner past 0s", |s| {
        spinner_lines(s).first().is_some_and(|secs| *secs > 0)
    });
    let shown = spinner_lines(&screen);
    assert_eq!(shown.len(), 1, "{screen}");
    let screen = tmux.wait_for("the spinner a second later", |s| {
        spinner_lines(s)
            .first()
            .is_some_and(|secs| *secs > shown[0])
    });
    assert_eq!(spinner_lines(&screen).len(), 1, "{screen}");
    assert_no_garbage(&screen);
    ws.open_gate();
    let screen = tmux.wait_for("the answer and a new prompt", |s| {
        s.contains("The answer is 42.") && s.ends_with("You:")
    });
    assert!(spinner_lines(&screen).is_empty(), "{screen}");
    assert!(!screen.contains(" slow "), "{screen}");
    assert_no_garbage(&screen);
    let lines: Vec<&str> = screen.lines().collect();
    let asked = lines
        .iter()
        .position(|l| l.ends_with("You: what is the answer?"))
        .unwrap();
    assert_eq!(lines[asked + 1], "The answer is 42.", "{screen}");
    tmux.type_line("exit");
    assert_eq!(poll(|| tmux.exit_status()), Some(0), "{}", tmux.screen());
}

#[test]
fn dumb_terminal_gets_plain_progress_lines() {
    let ws = slow_workspace();
    let tmux = Tmux::start(&ws, "dumb", "--backend slow");
    tmux.wait_for("the prompt", |s| s.ends_with("You:"));
    tmux.type_line("what is the answer?");
    tmux.wait_for("two progress lines", |s| progress_lines(s).len() >= 2);
    ws.open_gate();
    let screen = tmux.wait_for("the answer and a new prompt", |s| {
        s.contains("The answer is 42.") && s.ends_with("You:")
    });
    // Append-only: the progress lines stay, in order, above the answer.
    let seconds = progress_lines(&screen);
    assert!(seconds.windows(2).all(|w| w[0] < w[1]), "{screen}");
    let last = screen.rfind("[waiting for slow").unwrap();
    assert!(last < screen.find("The answer is 42.").unwrap(), "{screen}");
    assert!(spinner_lines(&screen).is_empty(), "{screen}");
    assert_no_garbage(&screen);
    tmux.type_line("exit");
    assert_eq!(poll(|| tmux.exit_status()), Some(0), "{}", tmux.screen());
}

/// On a phone's 40 columns agent-loop's own lines (here the context after a turn) break at
/// spaces, their continuation indented, instead of being cut mid-word by the terminal.
#[test]
fn own_lines_break_at_spaces_on_40_columns() {
    let ws = Workspace::new();
    let tmux = Tmux::start_at(&ws, "xterm-256color", "--backend demo --no-save", "", 40);
    tmux.wait_for("the prompt", |s| s.ends_with("You:"));
    tmux.type_line("list the files here");
    let screen = tmux.wait_for("the context line and a new prompt", |s| {
        s.contains("[context ") && s.ends_with("You:")
    });
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("[context "))
        .unwrap();
    let (first, rest) = (lines[at], lines[at + 1]);
    assert!(first.len() <= 39, "{screen}");
    assert!(rest.starts_with("  ") && rest.ends_with(']'), "{screen}");
    // Whole words: the two rows joined at a space give the line as it was.
    let whole = Regex::new(r"^\[context \d+ messages, \d+ tokens, \d+% of \d+k\]$").unwrap();
    let joined = format!("{first} {}", rest.trim_start());
    assert!(whole.is_match(&joined), "{joined:?}\n{screen}");
    assert_no_garbage(&screen);
    tmux.type_line("exit");
    assert_eq!(poll(|| tmux.exit_status()), Some(0), "{}", tmux.screen());
}

/// An answer streamed in pieces (a CLI with `json_text_delta`) shows as it comes on a real
/// terminal, and stays: the spinner is not drawn after it on its line, where erasing the
/// spinner took the text with it.
#[test]
fn a_streamed_answer_shows_as_it_comes_and_stays() {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.stream]\ncommand = '{}'\ntimeout_s = 60\noutput = \"jsonl\"\n\
         json_text = \"[type=result].result\"\njson_text_delta = \"[type=delta].text\"\n",
        crate::common::fixture("agents/streaming.sh").display()
    ));
    let line = |v: serde_json::Value| format!("{v}\n");
    ws.fake_file(
        "head.1",
        line(serde_json::json!({"type": "delta", "text": "The answer"})),
    );
    ws.fake_file(
        "tail.1",
        line(serde_json::json!({"type": "delta", "text": " is 42."}))
            + &line(serde_json::json!({"type": "result", "result": "The answer is 42."})),
    );
    let made = Command::new("mkfifo")
        .arg(ws.path("fake/gate"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let tmux = Tmux::start(&ws, "xterm-256color", "--backend stream --no-save");
    tmux.wait_for("the prompt", |s| s.ends_with("You:"));
    tmux.type_line("what is it?");
    // The first piece, while the agent waits at its gate.
    let screen = tmux.wait_for("the first piece", |s| s.lines().any(|l| l == "The answer"));
    assert!(ws.path("fake/gate").exists(), "{screen}");
    ws.open_gate();
    let screen = tmux.wait_for("the whole answer and a new prompt", |s| {
        s.ends_with("You:") && s.lines().any(|l| l == "The answer is 42.")
    });
    let lines: Vec<&str> = screen.lines().collect();
    let asked = lines.iter().position(|l| *l == "You: what is it?").unwrap();
    assert_eq!(lines[asked + 1], "The answer is 42.", "{screen}");
    assert_no_garbage(&screen);
    tmux.type_line("exit");
    assert_eq!(poll(|| tmux.exit_status()), Some(0), "{}", tmux.screen());
}
