//! `agent-loop backends`: a table of every configured backend (name, type, command or URL,
//! whether it can run here, version: see `versions`); `agent-loop doctor BACKEND`: one tiny
//! prompt through a backend, showing the command line, the raw output, the stripped text and
//! what each parser read from it.

use std::fmt::Write as _;

use super::display::sanitize::sanitize;
use agent_loop::agent::Event;
use agent_loop::backend::{self, CliBackend, Overrides, Request};
use agent_loop::config::{Config, Definition};
use agent_loop::context::{Conversation, Message, Window};
use agent_loop::tools::Registry;
use agent_loop::Error;

/// The prompt `doctor` sends.
pub const DOCTOR_PROMPT: &str = "This is a connection test. Reply with exactly: The answer is 42.";

/// One row of the table.
struct Row {
    name: String,
    kind: String,
    target: String,
    status: String,
    /// The program to ask for `--version`, when it was found.
    program: Option<std::path::PathBuf>,
    /// A keyless HTTP backend's URL: whether its server answers is the status.
    probe: Option<String>,
}

fn row(name: &str, def: &Definition) -> Row {
    match def {
        Definition::Cli(d) => {
            let kind = if d.parsers.own_tools {
                "cli, own tools"
            } else {
                "cli"
            };
            let (status, program) = if d.command == "{self}" {
                ("built in".to_string(), None)
            } else {
                match which::which(&d.command) {
                    Ok(path) => (format!("found: {}", path.display()), Some(path)),
                    Err(_) => ("not on PATH".to_string(), None),
                }
            };
            Row {
                name: name.into(),
                kind: kind.into(),
                target: d.command.replace("{self}", "agent-loop"),
                status,
                program,
                probe: None,
            }
        }
        Definition::Pty(d) => {
            let (status, program) = match which::which(&d.command) {
                Ok(path) => (format!("found: {}", path.display()), Some(path)),
                Err(_) => ("not on PATH".to_string(), None),
            };
            Row {
                name: name.into(),
                kind: "pty, own tools".into(),
                target: d.command.clone(),
                status,
                program,
                probe: None,
            }
        }
        Definition::Acp(d) => {
            let (status, program) = match which::which(&d.command) {
                Ok(path) => (format!("found: {}", path.display()), Some(path)),
                Err(_) => ("not on PATH".to_string(), None),
            };
            Row {
                name: name.into(),
                kind: "acp, own tools".into(),
                target: d.command.clone(),
                status,
                program,
                probe: None,
            }
        }
        Definition::Http(d) => Row {
            name: name.into(),
            kind: d.format.type_name().into(),
            target: d.base_url.clone(),
            status: match &d.api_key_env {
                None => String::new(),
                Some(var) if def.is_available() => format!("{var} set"),
                Some(var) => format!("{var} not set"),
            },
            program: None,
            probe: d.api_key_env.is_none().then(|| d.base_url.clone()),
        },
    }
}

/// The table, columns padded to their widest cell.
pub async fn table(config: &Config) -> Result<String, Error> {
    let rows: Vec<Row> = config
        .definitions()
        .map(|(name, def)| row(name, def))
        .collect();
    let programs: Vec<_> = rows.iter().map(|r| r.program.clone()).collect();
    let probes = futures_util::future::join_all(rows.iter().map(|r| {
        let url = r.probe.clone();
        async move {
            match url {
                Some(url) => Some(super::probe::server_status(&url).await),
                None => None,
            }
        }
    }));
    let (versions, probes) =
        futures_util::future::join(super::versions::versions(&programs), probes).await;
    let mut rows = rows;
    for (row, status) in rows.iter_mut().zip(probes) {
        if let Some(status) = status {
            row.status = status;
        }
    }
    let mut cells = vec![["NAME", "TYPE", "COMMAND / URL", "HERE", "VERSION"].map(String::from)];
    for (r, v) in rows.into_iter().zip(versions) {
        cells.push([r.name, r.kind, r.target, r.status, v]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for c in &cells {
        let line: Vec<String> = c
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{:<w$}", sanitize(cell), w = w))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    Ok(out)
}

/// `doctor`: runs [`DOCTOR_PROMPT`] through `name` and describes everything it got; with
/// why the check failed, when it did (no answer read, an error reported, a bad exit).
pub async fn doctor(
    config: &Config,
    name: &str,
    model: Option<String>,
) -> Result<(String, Option<String>), Error> {
    let def = config.backend(name)?;
    let mut conversation = Conversation::new();
    conversation.push(Message::User {
        text: DOCTOR_PROMPT.into(),
    });
    let window = Window::all(&conversation);
    let tools = Registry::builtin(None)?;
    let cwd = std::env::current_dir()
        .map_err(|e| Error::config(format!("cannot read the working directory: {e}")))?;
    let request = Request {
        window: &window,
        tools: tools.specs(),
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
            let args = d
                .arg_template()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" ");
            let cli = CliBackend::new(d)?;
            let _ = writeln!(out, "command: {} {args}", cli.program().display());
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
            let pty = agent_loop::backend::PtyBackend::new(d.clone())?;
            let _ = writeln!(
                out,
                "backend {name} ({}): a terminal agent (type = \"pty\"), {}x{} {}",
                d.defined_at, d.cols, d.rows, d.term
            );
            let probe = pty.probe(DOCTOR_PROMPT, &cwd, &mut emit).await;
            let _ = writeln!(
                out,
                "command: {} {}",
                probe.program.display(),
                probe.args.join(" ")
            );
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
            let raw = agent_loop::plural::count(probe.raw.len(), "byte", "bytes");
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
            let probe = agent_loop::backend::AcpBackend::new(d)?
                .probe(request, &mut emit)
                .await;
            let (text, failure) = probe.describe();
            out.push_str(&sanitize(&text));
            failure
        }
        Definition::Http(_) => {
            let overrides = Overrides {
                model,
                ..Overrides::default()
            };
            let backend = backend::build(def, &overrides)?;
            let _ = writeln!(out, "backend {name}: an HTTP API; the reply as parsed:");
            let reply = backend.call(request, &mut emit).await?;
            let parsed = agent_loop::parse::Parsed {
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
fn parsed_failure(parsed: &agent_loop::parse::Parsed) -> Option<String> {
    if let Some(error) = &parsed.error {
        return Some(format!(
            "the backend reported an error: {}",
            sanitize(error)
        ));
    }
    (parsed.text.trim().is_empty() && parsed.calls.is_empty()).then(|| NO_ANSWER.to_string())
}

fn section(out: &mut String, title: &str, body: &str) {
    let size = agent_loop::plural::count(body.len(), "byte", "bytes");
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

fn describe(out: &mut String, parsed: &agent_loop::parse::Parsed) {
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
