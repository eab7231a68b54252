//! Terminfo honesty: fake terminfo entries compiled with `tic`, whose capabilities are
//! distinctive strings (`\E{el}`), and agent-loop run on a pseudo-terminal with `TERMINFO`
//! pointing at them. Every escape it writes must be one of the entry's strings, and what the
//! entry lacks must not be attempted.

use std::path::PathBuf;
use std::process::Command;

use regex::bytes::Regex;

use crate::common::{Pty, Workspace};

/// Every capability the terminfo display may use.
const HONEST: &str = "honest|a terminal whose capabilities are distinctive strings,
\tcols#60, lines#20, colors#8,
\tcr=\\E{cr}, el=\\E{el}, cuu1=\\E{cuu1}, civis=\\E{civis}, cnorm=\\E{cnorm},
\tbold=\\E{bold}, sgr0=\\E{sgr0}, setaf=\\E{setaf%p1%d},
";

/// No `el` and no `civis`/`cnorm`: colours, but nothing can be redrawn in place.
const POOR: &str = "poor|a terminal that cannot clear a line or hide the cursor,
\tcols#60, lines#20, colors#8,
\tcr=\\E{cr}, cuu1=\\E{cuu1}, bold=\\E{bold}, sgr0=\\E{sgr0}, setaf=\\E{setaf%p1%d},
";

const TOOL_REPLY: &str = "Let me look.\n<tool_call>{\"name\": \"ls\", \"arguments\": {\"path\": \".\"}}</tool_call>\nTokens: 10 in, 2 out\n";

/// Compiles `source` into the workspace's own terminfo folder, which it returns.
fn compile(ws: &Workspace, source: &str) -> PathBuf {
    let db = ws.path("terminfo");
    let src = ws.path("entry.src");
    std::fs::write(&src, source).unwrap();
    let out = ws
        .hermetic(&mut Command::new("tic"))
        .arg("-o")
        .arg(&db)
        .arg(&src)
        .output()
        .expect("tic (ncurses-bin)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    db
}

/// Checks that every escape in `bytes` starts one of the strings of the entry `source`, and
/// that no carriage return was written (the entry's `cr` is not one).
fn assert_only_entry_strings(source: &str, bytes: &[u8]) {
    let caps: Vec<String> = Regex::new(r"(\w+)=\\E\{")
        .unwrap()
        .captures_iter(source.as_bytes())
        .map(|c| String::from_utf8_lossy(&c[1]).into_owned())
        .collect();
    let allowed = Regex::new(&format!(
        r"^\x1b\{{({})\}}",
        caps.iter()
            .map(|c| if c == "setaf" {
                "setaf[0-7]".to_string()
            } else {
                c.clone()
            })
            .collect::<Vec<_>>()
            .join("|")
    ))
    .unwrap();
    let text = String::from_utf8_lossy(bytes);
    for (at, _) in bytes.iter().enumerate().filter(|(_, b)| **b == 0x1b) {
        assert!(
            allowed.is_match(&bytes[at..]),
            "escape at byte {at} is not a string of the entry: {:?}\n{text}",
            String::from_utf8_lossy(&bytes[at..(at + 12).min(bytes.len())])
        );
    }
    assert!(
        !bytes.contains(&b'\r'),
        "a guessed carriage return:\n{text}"
    );
}

/// A slow fake agent whose first run prints progress lines and asks for `ls`, the second
/// answers; and a terminfo entry selected through `TERM` and `TERMINFO`.
struct Scenario {
    ws: Workspace,
    entry: &'static str,
    vars: Vec<(&'static str, String)>,
}

impl Scenario {
    fn new(entry: &'static str) -> Scenario {
        let ws = Workspace::new();
        let db = compile(&ws, entry);
        ws.gated_backend();
        ws.fake_file("progress", "step one\nstep two\nstep three\n");
        ws.reply(1, TOOL_REPLY);
        ws.reply(2, "All done.\n");
        let name = entry.split('|').next().unwrap().to_string();
        let vars = vec![("TERM", name), ("TERMINFO", db.display().to_string())];
        Scenario { ws, entry, vars }
    }

    /// Starts `agent-loop ARGS --backend slow "look around"` on a terminal.
    fn spawn(&self, args: &[&str]) -> Pty {
        let env: Vec<(&str, &str)> = self.vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut argv = args.to_vec();
        argv.extend(["--backend", "slow", "look around"]);
        Pty::spawn(&self.ws, &env, &argv)
    }

    /// Runs until each of `seen` has been written, lets the agent finish, and returns the
    /// output, checked for exit code `code` and for escapes that are not the entry's.
    fn run(&self, args: &[&str], seen: &[&str], code: i32) -> String {
        let pty = self.spawn(args);
        for text in seen {
            pty.wait_for(text);
        }
        self.ws.open_gate();
        self.check(pty, code)
    }

    fn check(&self, pty: Pty, code: i32) -> String {
        let (exit, bytes) = pty.finish();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        assert_eq!(exit, code, "{text}");
        assert_only_entry_strings(self.entry, &bytes);
        text
    }
}

fn assert_contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}

/// The cursor was hidden, and shown again after the last time it was hidden.
fn assert_cursor_restored(text: &str) {
    let hidden = text
        .rfind("\x1b{civis}")
        .expect("the cursor was never hidden");
    let shown = text
        .rfind("\x1b{cnorm}")
        .expect("the cursor was never shown again");
    assert!(shown > hidden, "{text}");
}

#[test]
fn every_control_sequence_comes_from_the_entry() {
    let scenario = Scenario::new(HONEST);
    // `auto`: a terminal, TERM set, its entry loads. The spinner is redrawn in place with its
    // elapsed time, and the tail view above it.
    let text = scenario.run(&["--tail", "2"], &["slow 1s", "\x1b{cuu1}\x1b{el}"], 0);
    assert_contains_all(
        &text,
        &[
            "\x1b{cr}\x1b{el}\x1b{cuu1}\x1b{el}\x1b{cuu1}\x1b{el}step two\nstep three\n\x1b{setaf6}",
            "\x1b{setaf2}Let me look.\n\x1b{sgr0}",
            "\x1b{setaf6}[tool ls] .\n\x1b{sgr0}",
            "\x1b{setaf4}[tokens in 10 / out 2]",
            // The whole output is kept and printed append-only when the call ends.
            "[slow] step one\n[slow] step two\n[slow] step three\n",
        ],
    );
    // The answer, then the context and session lines on stderr.
    assert!(text.contains("\nAll done.\n[context "), "{text}");
    assert!(
        text.trim_end()
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("[session ")),
        "{text}"
    );
    assert_cursor_restored(&text);
}

#[test]
fn an_entry_without_el_or_civis_gets_no_in_place_redraw() {
    let scenario = Scenario::new(POOR);
    let text = scenario.run(
        &["--display", "terminfo", "--tail", "2"],
        &["[waiting for slow ... "],
        0,
    );
    for redraw in ["\x1b{cr}", "\x1b{cuu1}"] {
        assert!(!text.contains(redraw), "{redraw:?} used:\n{text}");
    }
    // Progress as lines instead, still in colour; the output in full at the end.
    assert_contains_all(
        &text,
        &["\x1b{setaf4}[waiting for slow ... ", "[slow] step three\n"],
    );
    // The answer, then the context and session lines on stderr.
    assert!(text.contains("\nAll done.\n[context "), "{text}");
    assert!(
        text.trim_end()
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("[session ")),
        "{text}"
    );
}

#[test]
fn no_color_keeps_the_spinner_and_drops_the_colours() {
    let mut scenario = Scenario::new(HONEST);
    scenario.vars.push(("NO_COLOR", "1".into()));
    let text = scenario.run(&[], &["\x1b{cr}\x1b{el}"], 0);
    assert!(
        !text.contains("\x1b{setaf") && !text.contains("\x1b{bold}"),
        "{text}"
    );
    assert_cursor_restored(&text);
}

#[test]
fn ctrl_c_restores_the_cursor() {
    let scenario = Scenario::new(HONEST);
    let mut pty = scenario.spawn(&[]);
    pty.wait_for("\x1b{civis}");
    assert!(crate::common::poll(|| scenario.ws.gate_reached().then_some(())).is_some());
    pty.send("\x03");
    let text = scenario.check(pty, 130);
    assert_cursor_restored(&text);
    assert!(text.contains("[turn cancelled: "), "{text}");
}

#[test]
fn a_failing_backend_restores_the_cursor_and_shows_the_error_in_red() {
    let scenario = Scenario::new(HONEST);
    scenario.ws.fake_file("rc.1", "1");
    scenario.ws.fake_file("stderr.1", "model overloaded\n");
    let text = scenario.run(&[], &["\x1b{civis}"], 1);
    assert_cursor_restored(&text);
    assert_contains_all(&text, &["\x1b{setaf1}error: ", "model overloaded"]);
}

/// An entry with every capability the view needs.
const VIEW: &str = "viewable|a terminal the view can draw on,
\tcols#60, lines#20, colors#8,
\tcr=\\E{cr}, el=\\E{el}, ed=\\E{ed}, cup=\\E{cup%p1%d;%p2%d}, csr=\\E{csr%p1%d;%p2%d},
\tind=\\E{ind}, cuu1=\\E{cuu1}, civis=\\E{civis}, cnorm=\\E{cnorm},
\tbold=\\E{bold}, sgr0=\\E{sgr0}, setaf=\\E{setaf%p1%d},
";

#[test]
fn the_view_asked_for_in_a_pipe_writes_no_escape() {
    // `display = "view"` in a settings file stands for every run: a pipe or a log file gets
    // what `auto` would give it, the plain display, not the terminfo display's escapes.
    let ws = Workspace::new();
    let db = compile(&ws, VIEW);
    for (flags, env) in [
        (vec!["--display", "view"], None),
        (vec![], Some(("AGENT_LOOP_DISPLAY", "view"))),
    ] {
        let mut args = flags.clone();
        args.extend(["--backend", "demo", "--yes", "list the files here"]);
        let mut cmd = ws.cmd(&args);
        cmd.env("TERM", "viewable").env("TERMINFO", &db);
        if let Some((key, value)) = env {
            cmd.env(key, value);
        }
        let run = ws.run_cmd(cmd);
        run.expect_code(0);
        for (what, bytes) in [
            ("stdout", &run.output.stdout),
            ("stderr", &run.output.stderr),
        ] {
            assert!(
                !bytes.contains(&0x1b) && !bytes.contains(&b'\r'),
                "{flags:?} {env:?}: {what}: {}",
                String::from_utf8_lossy(bytes)
            );
        }
        assert!(!run.stdout().is_empty(), "{flags:?} {env:?}");
    }
}
