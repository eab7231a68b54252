//! Fan-out: one task on several backends at once (`--backend a,b,c`, `/compare a,b TASK`).
//! Each backend gets its own agent, with its own tool loop, working in its own copy of the
//! working directory; their events are held back and shown backend by backend, under a
//! heading with the time and tokens, once all are done, so the output stays append-only.
//! The conversation keeps the first answer that succeeded; `/pick N` keeps another.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_loop::agent::{Agent, AgentOptions, ApprovalRequest, Decision, Event, Observer};
use agent_loop::backend;
use agent_loop::context::{Artifacts, Conversation};
use agent_loop::parse::Totals;
use agent_loop::tools::{Registry, Root};
use agent_loop::{BoxFuture, Error};

use super::app::{App, Outcome};
use super::frontend::Frontend;
use super::signals::Stop;

/// The most a working directory may hold to be copied for each backend.
const MAX_COPY_BYTES: u64 = 200 * 1024 * 1024;

/// What a comparison left for `/pick`: each backend's conversation, when its turn succeeded.
pub struct Compared {
    pub lanes: Vec<(String, Option<Conversation>)>,
}

/// One backend's run.
struct Lane {
    name: String,
    agent: Agent,
    folder: PathBuf,
    events: Vec<Event>,
    result: Option<Result<String, Error>>,
    elapsed: Duration,
}

/// The backends named in a comma-separated list, checked to exist.
pub fn names(app: &App, list: &str) -> Result<Vec<String>, Error> {
    let names: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(String::from)
        .collect();
    if names.len() < 2 {
        return Err(Error::config(format!(
            "`{list}`: name at least two backends, separated by commas, to compare"
        )));
    }
    for name in &names {
        app.config.backend(name)?;
    }
    Ok(names)
}

/// Runs `task` on every backend in `names` at once and shows the answers one after another;
/// the session is saved. The outcome holds the kept answer, or the first error when every
/// backend failed.
pub async fn compare(app: &mut App, names: &[String], task: &str) -> Outcome {
    let outcome = match run(app, names, task).await {
        Ok(Ok(result)) => Outcome::Done(result),
        Ok(Err(stop)) => Outcome::Cancelled(stop),
        Err(e) => {
            app.frontend.notice(&format!("error: {e}"));
            Outcome::Done(Err(e))
        }
    };
    if let Err(e) = app.save() {
        app.frontend.notice(&format!("error: {e}"));
    }
    outcome
}

/// The comparison; `Ok(Err(signal))` when a signal stopped it, `Err` when it could not start.
async fn run(
    app: &mut App,
    names: &[String],
    task: &str,
) -> Result<Result<Result<String, Error>, Stop>, Error> {
    let base = std::env::temp_dir();
    let root = tempfile::Builder::new()
        .prefix("agent-loop-compare-")
        .tempdir_in(&base)
        .map_err(|e| Error::config(format!("cannot make a folder in {}: {e}", base.display())))?
        .keep();
    let mut lanes = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let folder = root.join(format!("{}-{name}", i + 1));
        copy_tree(&app.agent.options().cwd, &folder, &mut 0)?;
        lanes.push(lane(app, name, folder)?);
    }
    let shared = tokio::sync::Mutex::new(&mut app.frontend);
    let runs = lanes.iter_mut().enumerate().map(|(i, lane)| {
        let shared = &shared;
        async move {
            let mut observer = LaneObserver {
                label: format!("[{}] {}", i + 1, lane.name),
                events: Vec::new(),
                shared,
            };
            let started = Instant::now();
            let result = lane.agent.run_turn(task, &mut observer).await;
            lane.elapsed = started.elapsed();
            lane.events = observer.events;
            lane.result = Some(result);
        }
    });
    let stopped = tokio::select! {
        _ = futures_util::future::join_all(runs) => None,
        stop = app.signals.next() => Some(stop),
    };
    if let Some(stop) = stopped {
        app.frontend.notice(
            "[comparison cancelled: every backend and running tool were stopped; the conversation is unchanged]",
        );
        return Ok(Err(stop));
    }
    show(app, &lanes);
    Ok(Ok(keep(app, lanes)))
}

/// An agent for `name` that starts from the current conversation and works in `folder`.
fn lane(app: &App, name: &str, folder: PathBuf) -> Result<Lane, Error> {
    let def = app.config.backend(name)?;
    let backend = backend::build(def, &app.overrides)?;
    // The same tools, built-in and [tools.NAME] ones, without the MCP servers' (which run
    // once, for the session's own folder).
    let local: Vec<String> = app
        .agent
        .tools()
        .names()
        .into_iter()
        .filter(|n| !n.starts_with("mcp."))
        .map(String::from)
        .collect();
    let tools = Registry::configured(
        Some(&local),
        app.config.tools.command_defs(),
        &app.config.tools.confirms(),
    )?;
    let options = app.agent.options();
    let mut agent = Agent::new(
        backend,
        tools,
        AgentOptions {
            cwd: folder.clone(),
            root: Root::new(&folder).map_err(Error::config)?,
            artifacts: Artifacts::new(folder.join(".agent-loop-artifacts")),
            context: def.context(),
            ..options.clone()
        },
    );
    agent.set_system_prompt(app.agent.system_prompt().cloned());
    agent.restore(
        app.agent.conversation.clone(),
        app.agent.turns(),
        Totals::default(),
    );
    Ok(Lane {
        name: name.to_string(),
        agent,
        folder,
        events: Vec::new(),
        result: None,
        elapsed: Duration::ZERO,
    })
}

/// Each backend's events under its heading, in the order the backends were named.
fn show(app: &mut App, lanes: &[Lane]) {
    for (i, lane) in lanes.iter().enumerate() {
        let t = lane.agent.totals;
        let outcome = match &lane.result {
            Some(Ok(_)) => "",
            _ => ", failed",
        };
        let heading = format!(
            "=== [{}] {}: {:.1}s, tokens in {} / out {}{outcome}; worked in {} ===",
            i + 1,
            lane.name,
            lane.elapsed.as_secs_f64(),
            t.input,
            t.output,
            lane.folder.display()
        );
        // On stdout, with the answers, so `> answers.txt` keeps them apart.
        app.frontend.display.render(&Event::Text {
            text: heading,
            final_answer: true,
        });
        for event in &lane.events {
            app.frontend.event(event);
        }
    }
}

/// Keeps the first successful answer in the conversation and counts every backend's tokens.
fn keep(app: &mut App, lanes: Vec<Lane>) -> Result<String, Error> {
    let mut totals = app.agent.totals;
    let mut kept = None;
    let mut first_error = None;
    let mut saved = Vec::new();
    for (i, lane) in lanes.into_iter().enumerate() {
        let Lane {
            name,
            agent,
            result,
            ..
        } = lane;
        totals.input += agent.totals.input;
        totals.output += agent.totals.output;
        totals.cost += agent.totals.cost;
        totals.calls += agent.totals.calls;
        match result {
            Some(Ok(answer)) => {
                if kept.is_none() {
                    kept = Some((i, answer, agent.conversation.clone()));
                }
                saved.push((name, Some(agent.conversation)));
            }
            Some(Err(e)) => {
                first_error.get_or_insert(e);
                saved.push((name, None));
            }
            None => saved.push((name, None)),
        }
    }
    let turns = app.agent.turns() + 1;
    let Some((i, answer, conversation)) = kept else {
        let conversation = app.agent.conversation.clone();
        app.agent.restore(conversation, turns, totals);
        return Err(first_error.unwrap_or_else(|| Error::backend("no backend answered")));
    };
    app.agent.restore(conversation, turns, totals);
    app.frontend.notice(&format!(
        "[kept answer {} ({}); /pick N keeps another]",
        i + 1,
        saved[i].0
    ));
    app.compared = Some(Compared { lanes: saved });
    Ok(answer)
}

/// `/pick N`: the conversation takes the N-th answer of the last comparison instead.
pub fn pick(app: &mut App, arg: &str) -> Result<String, Error> {
    let compared = app
        .compared
        .as_ref()
        .ok_or_else(|| Error::config("/pick: no comparison to pick from (run /compare first)"))?;
    let n: usize = arg
        .parse()
        .ok()
        .filter(|n| (1..=compared.lanes.len()).contains(n))
        .ok_or_else(|| {
            Error::config(format!(
                "/pick takes a number from 1 to {}",
                compared.lanes.len()
            ))
        })?;
    let (name, conversation) = &compared.lanes[n - 1];
    let conversation = conversation
        .clone()
        .ok_or_else(|| Error::config(format!("/pick {n}: {name} failed; it has no answer")))?;
    let name = name.clone();
    app.agent.conversation = conversation;
    app.save()?;
    Ok(format!("[kept answer {n} ({name})]"))
}

/// Holds a backend's events back for [`show`]; approvals are asked at once, one at a time.
struct LaneObserver<'a, 'f> {
    label: String,
    events: Vec<Event>,
    shared: &'a tokio::sync::Mutex<&'f mut Frontend>,
}

impl Observer for LaneObserver<'_, '_> {
    fn event(&mut self, event: &Event) {
        // Progress is shown as it happens when the display is free; it names the backend.
        if let Event::Waiting { .. } = event {
            if let Ok(mut frontend) = self.shared.try_lock() {
                frontend.event(event);
            }
            return;
        }
        self.events.push(event.clone());
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let mut frontend = self.shared.lock().await;
            frontend.notice(&format!("{} asks:", self.label));
            frontend.approve(request).await
        })
    }
}

/// Copies the working directory for one backend (`.git` folders left out, symbolic links
/// kept as links), refusing past [`MAX_COPY_BYTES`].
fn copy_tree(from: &Path, to: &Path, copied: &mut u64) -> Result<(), Error> {
    let fail = |what: &str, path: &Path, e: std::io::Error| {
        Error::config(format!("cannot {what} {}: {e}", path.display()))
    };
    std::fs::create_dir_all(to).map_err(|e| fail("create", to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| fail("read", from, e))? {
        let entry = entry.map_err(|e| fail("read", from, e))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(|e| fail("read", &src, e))?;
        if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(|e| fail("read", &src, e))?;
            std::os::unix::fs::symlink(target, &dst).map_err(|e| fail("create", &dst, e))?;
        } else if kind.is_dir() {
            if entry.file_name() != ".git" {
                copy_tree(&src, &dst, copied)?;
            }
        } else {
            *copied += std::fs::copy(&src, &dst).map_err(|e| fail("copy", &src, e))?;
            if *copied > MAX_COPY_BYTES {
                return Err(Error::config(format!(
                    "the working directory holds more than {} MB, too much to copy for each backend of a comparison; run it from a smaller folder",
                    MAX_COPY_BYTES / (1024 * 1024)
                )));
            }
        }
    }
    Ok(())
}
