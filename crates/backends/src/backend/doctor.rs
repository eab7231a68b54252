//! `agent-loop doctor BACKEND`, the library's part: one tiny prompt through a backend, built
//! from its definition as a chat would build it, and a report of the command line, the raw
//! output, the stripped text and what each parser read from it.

use std::fmt::Write as _;

use crate::backend::shell_words::command_line;
use crate::backend::{self, CliBackend, Overrides, PtyBackend, Request};
use crate::config::{Config, Definition};
use crate::context::{Conversation, Message, Window};
use crate::event::Event;
use crate::sanitize::sanitize;
use crate::tools::ToolSpec;
use crate::Error;

/// The prompt `doctor` sends.
pub const DOCTOR_PROMPT: &str = "This is a connection test. Reply with exactly: The answer is 42.";

/// `doctor`: runs [`DOCTOR_PROMPT`] through `name`, offering `tools` (the built-in ones, as a
/// chat would), and describes everything it got; with why the check failed, when it did (no
/// answer read, an error reported, a bad exit).
pub async fn doctor(
    config: &Config,
    name: &str,
    model: Option<String>,
    tools: &[ToolSpec],
) -> Result<(String, Option<String>), Error> {
    let def = config.backend(name)?;
    let mut conversation = Conversation::new();
    conversation.push(Message::user(DOCTOR_PROMPT));
    let window = Window::all(&conversation);
    let cwd = std::env::current_dir().map_err(|e| {
        let message = format!("cannot read the working directory: {e}");
        Error::caused(crate::ErrorKind::Io, message, e)
    })?;
    let request = Request {
        window: &window,
        tools,
        cwd: &cwd,
    };
    let mut emit = |_: Event| {};
    let mut out = String::new();
    let failure = match def {
        Definition::Cli(d) => {
            let mut d = d.clone();
            if model.is_some() {
                d.model = model;
            }
            let _ = writeln!(out, "backend {name} ({})", d.defined_at);
            // The prompt stays a placeholder (a chat's whole prompt, tools and all, would
            // bury the report); the model is the one the run uses.
            let model = d.model.as_deref().unwrap_or_default();
            // Its guard's arguments too, in `loop` mode as a run adds them; `{file}` stays a
            // placeholder, for the file is written afresh for every run.
            let guard = d.guard.as_ref().filter(|_| !d.style.own_tools);
            let args = d
                .arg_template()
                .map(|a| a.replace("{model}", model))
                .chain(guard.into_iter().flat_map(|g| g.args.iter().cloned()))
                .collect::<Vec<_>>();
            let guard_env = guard
                .map(|g| g.env.keys().cloned().collect::<Vec<_>>().join(" "))
                .filter(|names| !names.is_empty());
            let json = d.parsers.json.clone();
            let cli = CliBackend::new(d)?;
            let line = command_line(cli.program(), &args);
            let _ = writeln!(out, "command: {line}");
            if let Some(names) = guard_env {
                let _ = writeln!(out, "guard sets: {names}");
            }
            let probe = cli.probe(request, &mut emit).await?;
            let _ = writeln!(
                out,
                "exit: {}",
                match (probe.timed_out, probe.exit_code) {
                    (true, _) => "timed out".to_string(),
                    (false, Some(c)) => c.to_string(),
                    (false, None) => "killed by a signal".to_string(),
                }
            );
            section(&mut out, "raw stdout", &escaped(&probe.raw.stdout));
            section(&mut out, "raw stderr", &escaped(&probe.raw.stderr));
            section(&mut out, "stripped stdout", &probe.stdout);
            section(&mut out, "stripped stderr", &probe.stderr);
            describe(&mut out, &probe.parsed);
            if json.text_delta.is_some() {
                // A path that reaches nothing streams nothing, and the answer still comes.
                let pieces = probe.stdout.lines().filter_map(|l| json.delta(l)).count();
                let _ = writeln!(out, "--- pieces (json_text_delta): {pieces} ---");
            }
            // The error the backend reported says more than its exit code.
            match (probe.timed_out, probe.exit_code) {
                _ if probe.parsed.error.is_some() => parsed_failure(&probe.parsed),
                (true, _) => Some("the command timed out".to_string()),
                (false, None) => Some("the command was killed by a signal".to_string()),
                (false, Some(c)) if c != 0 => Some(format!("the command exited with {c}")),
                _ => parsed_failure(&probe.parsed),
            }
        }
        Definition::Pty(d) => {
            let mut d = d.clone();
            if model.is_some() {
                d.model = model;
            }
            let pty = PtyBackend::new(d.clone())?;
            let _ = writeln!(
                out,
                "backend {name} ({}): a terminal agent (type = \"pty\"), {}x{} {}",
                d.defined_at, d.cols, d.rows, d.term
            );
            let probe = pty.probe(DOCTOR_PROMPT, &cwd, &mut emit).await;
            let line = command_line(&probe.program, &probe.args);
            let _ = writeln!(out, "command: {line}");
            let d = &probe.decided;
            for (name, phase) in [
                ("start", &d.start),
                ("ready", &d.ready),
                ("taken", &d.accepted),
                ("done", &d.done),
            ] {
                let line = match phase.at {
                    Some(at) => format!("{name}: {:>7.2} s  {}", at.as_secs_f64(), phase.rule),
                    None => format!("{name}: (not reached)"),
                };
                let _ = writeln!(out, "{}", sanitize(&line));
            }
            if let Some(notice) = &probe.update_notice {
                let _ = writeln!(
                    out,
                    "warning: the agent shows an update banner (update_regex): {}\n  \
                     it updates itself; turn that off in its own settings (docs/pty.md)",
                    sanitize(notice)
                );
            }
            let raw = crate::plural::count(probe.raw.len(), "byte", "bytes");
            let _ = writeln!(out, "raw output: {raw}");
            section(&mut out, "final screen", &probe.screen);
            section(&mut out, "new since the message", &probe.new_rows);
            match &probe.answer {
                Ok(text) => {
                    section(&mut out, "answer", text);
                    text.trim().is_empty().then(|| NO_ANSWER.to_string())
                }
                Err(e) => {
                    let _ = writeln!(out, "--- error ---");
                    let _ = writeln!(out, "{}", sanitize(&e.message));
                    Some(sanitize(&e.message).to_string())
                }
            }
        }
        Definition::Acp(d) => {
            let mut d = d.clone();
            if model.is_some() {
                d.model = model;
            }
            let _ = writeln!(
                out,
                "backend {name} ({}): an ACP agent (type = \"acp\")",
                d.defined_at
            );
            let probe = backend::AcpBackend::new(d)?.probe(request, &mut emit).await;
            let (text, failure) = probe.describe();
            out.push_str(&sanitize(&text));
            failure
        }
        Definition::Http(_) => {
            let overrides = Overrides {
                model,
                ..Overrides::default()
            };
            let backend = backend::build(def, &overrides, &backend::HttpClients::default())?;
            let _ = writeln!(out, "backend {name}: an HTTP API; the reply as parsed:");
            let reply = backend.call(request, &mut emit).await?;
            let parsed = crate::parse::Parsed {
                text: reply.text,
                calls: reply.calls,
                usage: reply.usage,
                ..Default::default()
            };
            describe(&mut out, &parsed);
            parsed_failure(&parsed)
        }
    };
    Ok((out, failure))
}

const NO_ANSWER: &str = "no answer was read from the output (see the sections above)";

/// Why what was read from a reply is not a working backend's answer, if it is not.
fn parsed_failure(parsed: &crate::parse::Parsed) -> Option<String> {
    if !parsed.offered_tools.is_empty() {
        return Some(format!(
            "the backend offered its model tools of its own in loop mode (json_offered_tools), which would run without agent-loop's approval: {}",
            sanitize(&parsed.offered_tools.join(", "))
        ));
    }
    if let Some(error) = &parsed.error {
        return Some(format!(
            "the backend reported an error: {}",
            sanitize(error)
        ));
    }
    (parsed.text.trim().is_empty() && parsed.calls.is_empty()).then(|| NO_ANSWER.to_string())
}

fn section(out: &mut String, title: &str, body: &str) {
    let size = crate::plural::count(body.len(), "byte", "bytes");
    let _ = writeln!(out, "--- {title} ({size}) ---");
    for line in body.lines() {
        let _ = writeln!(out, "{}", sanitize(line));
    }
}

/// Bytes as text with escape and control bytes written as `\x1b`, so they can be read (and
/// the display stays free of them).
fn escaped(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn describe(out: &mut String, parsed: &crate::parse::Parsed) {
    section(out, "text", &parsed.text);
    let _ = writeln!(out, "--- tool calls: {} ---", parsed.calls.len());
    for call in &parsed.calls {
        let _ = writeln!(out, "{} {}", sanitize(&call.name), sanitize(&call.raw));
    }
    let _ = writeln!(
        out,
        "--- usage: {} ---",
        parsed.usage.map_or("none found".to_string(), |u| {
            let n = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
            let cost = u.cost.map_or("-".to_string(), |c| format!("${c}"));
            format!(
                "input {}, output {}, total {}, cost {cost}",
                n(u.input),
                n(u.output),
                n(u.total)
            )
        })
    );
    if !parsed.activity.is_empty() {
        let _ = writeln!(out, "--- own tool activity ---");
        for a in &parsed.activity {
            let _ = writeln!(out, "{}", sanitize(a));
        }
    }
    let _ = writeln!(
        out,
        "--- error: {} ---",
        parsed.error.as_deref().map_or("none".into(), sanitize)
    );
}
