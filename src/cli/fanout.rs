//! Fan-out: one task on several backends at once (`--backend a,b,c`, `/compare a,b TASK`).
//! Each backend gets its own agent, with its own tool loop, working in its own copy of the
//! working directory; their events are held back and shown backend by backend, under a
//! heading with the time and tokens, once all are done, so the output stays append-only.
//! The conversation keeps the first answer that succeeded; `/pick N` keeps another.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_loop::agent::{Agent, ApprovalRequest, Decision, Event, Observer};
use agent_loop::chat::Chat;
use agent_loop::context::Conversation;
use agent_loop::{BoxFuture, Error};

use super::frontend::Frontend;
use super::outcome::Outcome;
use super::signals::{Signals, Stop};

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
pub fn names(chat: &Chat, list: &str) -> Result<Vec<String>, Error> {
    let names = chat.config().backend_list(list)?;
    if names.len() < 2 {
        return Err(Error::config(format!(
            "`{list}`: name at least two backends, separated by commas, to compare"
        )));
    }
    Ok(names)
}

/// Runs `task` on every backend in `names` at once and shows the answers one after another;
/// the session is saved. The outcome holds the kept answer, or the first error when every
/// backend failed; with it, what `/pick` can choose from.
pub async fn compare(
    chat: &mut Chat,
    frontend: &mut Frontend,
    signals: &mut Signals,
    names: &[String],
    task: &str,
) -> (Outcome, Option<Compared>) {
    let (outcome, compared) = match run(chat, frontend, signals, names, task).await {
        Ok(Ok((result, compared))) => (Outcome::Done(result), compared),
        Ok(Err(stop)) => (Outcome::Cancelled(stop), None),
        Err(e) => {
            frontend.notice(&format!("error: {e}"));
            (Outcome::Done(Err(e)), None)
        }
    };
    if let Err(e) = chat.save() {
        frontend.notice(&format!("error: {e}"));
    }
    (outcome, compared)
}

/// The answer kept and what `/pick` can choose from.
type Kept = (Result<String, Error>, Option<Compared>);

/// The comparison; `Ok(Err(signal))` when a signal stopped it, `Err` when it could not start.
async fn run(
    chat: &mut Chat,
    frontend: &mut Frontend,
    signals: &mut Signals,
    names: &[String],
    task: &str,
) -> Result<Result<Kept, Stop>, Error> {
    // Its own folder, not one inside the working directory, which is copied for each lane.
    let base = std::env::temp_dir();
    let root = tempfile::Builder::new()
        .prefix("agent-loop-compare-")
        .tempdir_in(&base)
        .map_err(|e| Error::config(format!("cannot make a folder in {}: {e}", base.display())))?
        .keep();
    let root = root.canonicalize().unwrap_or(root);
    let cwd = chat.agent().options().cwd.clone();
    let mut lanes = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let folder = root.join(format!("{}-{name}", i + 1));
        copy_tree(&cwd, &folder, &root, &mut 0)?;
        lanes.push(Lane {
            name: name.clone(),
            agent: chat.agent_for(name, &folder)?,
            folder,
            events: Vec::new(),
            result: None,
            elapsed: Duration::ZERO,
        });
    }
    let shared = tokio::sync::Mutex::new(&mut *frontend);
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
        stop = signals.next() => Some(stop),
    };
    if let Some(stop) = stopped {
        frontend.notice(
            "[comparison cancelled: every backend and running tool were stopped; the conversation is unchanged]",
        );
        return Ok(Err(stop));
    }
    show(chat, frontend, &lanes);
    Ok(Ok(keep(chat, frontend, lanes)))
}

/// Each backend's events under its heading, in the order the backends were named.
fn show(chat: &mut Chat, frontend: &mut Frontend, lanes: &[Lane]) {
    for (i, lane) in lanes.iter().enumerate() {
        let t = lane.agent.totals;
        let outcome = match &lane.result {
            Some(Ok(_)) => "",
            _ => ", failed",
        };
        let heading = format!(
            "=== [{}] {}: {:.1}s, {}{outcome}; worked in {} ===",
            i + 1,
            lane.name,
            lane.elapsed.as_secs_f64(),
            super::display::plain::tokens(Some(t.input), Some(t.output)),
            lane.folder.display()
        );
        // On stdout, with the answers, so `> answers.txt` keeps them apart.
        frontend.display.render(&Event::Text {
            text: heading,
            final_answer: true,
        });
        for event in &lane.events {
            chat.relay(event, frontend);
        }
    }
}

/// Keeps the first successful answer in the conversation and counts every backend's tokens.
fn keep(chat: &mut Chat, frontend: &mut Frontend, lanes: Vec<Lane>) -> Kept {
    let mut totals = chat.agent().totals;
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
    let Some((i, answer, conversation)) = kept else {
        let conversation = chat.agent().conversation.clone();
        chat.adopt(conversation, totals);
        let error = first_error.unwrap_or_else(|| Error::backend("no backend answered"));
        return (Err(error), None);
    };
    chat.adopt(conversation, totals);
    // `/pick` exists only in the REPL; a one-shot run has nothing to pick with.
    let pick = if frontend.repl {
        "; /pick N keeps another"
    } else {
        ""
    };
    frontend.notice(&format!("[kept answer {} ({}){pick}]", i + 1, saved[i].0));
    (Ok(answer), Some(Compared { lanes: saved }))
}

/// `/pick N`: the conversation takes the N-th answer of the last comparison instead.
pub fn pick(chat: &mut Chat, compared: Option<&Compared>, arg: &str) -> Result<String, Error> {
    let compared = compared
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
    chat.agent_mut().conversation = conversation;
    chat.save()?;
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

/// Copies the working directory for one backend (`.git` folders and `skip`, the folder the
/// copies go to, left out; symbolic links kept as links), refusing past [`MAX_COPY_BYTES`].
fn copy_tree(from: &Path, to: &Path, skip: &Path, copied: &mut u64) -> Result<(), Error> {
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
            if entry.file_name() != ".git" && src != skip {
                copy_tree(&src, &dst, skip, copied)?;
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
