//! Fan-out: one task on several backends at once (`--backend a,b,c`, `/compare a,b TASK`).
//! Each backend gets its own agent, with its own tool loop, working in its own copy of the
//! working directory; their events are held back and passed on backend by backend, under a
//! heading with the time and tokens, once all are done, so a display stays append-only.
//! The conversation keeps the first answer that succeeded; [`Chat::pick`] keeps another, while
//! the conversation is still the one the comparison left.
//! Dropping the future of [`Chat::compare`] stops every backend; the conversation is then
//! unchanged.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::agent::Agent;
use crate::event::{ApprovalRequest, Decision, Event, Observer};
use crate::{BoxFuture, Error};

use super::{Chat, ChatError, Compared};

/// The most a working directory may hold to be copied for each backend.
const MAX_COPY_BYTES: u64 = 200 * 1024 * 1024;

/// The answer a comparison kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    /// From 1, in the order the backends were named.
    pub number: usize,
    pub backend: String,
    pub answer: String,
    /// Tool calls of this backend the front end denied when asked: a front end that cannot
    /// ask (no terminal) tells by this whether the answer it kept is short of one, whatever
    /// the other backends met.
    pub denied: u32,
}

impl Kept {
    /// `[kept answer 1 (a)]`, with how to keep another where `/pick` can follow.
    pub fn notice(&self, pick_hint: bool) -> String {
        let pick = if pick_hint {
            "; /pick N keeps another"
        } else {
            ""
        };
        format!("[kept answer {} ({}){pick}]", self.number, self.backend)
    }
}

/// One backend's run.
struct Lane {
    name: String,
    agent: Agent,
    folder: PathBuf,
    events: Vec<Event>,
    result: Option<Result<String, Error>>,
    elapsed: Duration,
    /// Tool calls the front end denied when asked.
    denied: u32,
}

impl Chat {
    /// The backends named in a comma-separated list, checked to exist.
    pub fn compare_names(&self, list: &str) -> Result<Vec<String>, Error> {
        let names = self.config.backend_list(list)?;
        if names.len() < 2 {
            return Err(ChatError::CompareNeedsTwo {
                list: list.to_string(),
            }
            .into());
        }
        Ok(names)
    }

    /// Runs `task` on every backend in `backends` at once and passes each one's events on,
    /// one backend after another; keeps the first answer that succeeded and saves. Fails
    /// with the first error when every backend failed.
    pub async fn compare(
        &mut self,
        backends: &[String],
        task: &str,
        observer: &mut (dyn Observer + '_),
    ) -> Result<Kept, Error> {
        self.compared = None;
        let result = self.run_lanes(backends, task, observer).await;
        if let Err(e) = &result {
            observer.event(&Event::Notice {
                message: format!("error: {e}"),
            });
        }
        let lanes = result?;
        for (i, lane) in lanes.iter().enumerate() {
            self.show_lane(i, lane, observer);
        }
        let kept = self.keep(lanes);
        self.saved_after(kept, observer)
    }

    async fn run_lanes(
        &mut self,
        backends: &[String],
        task: &str,
        observer: &mut (dyn Observer + '_),
    ) -> Result<Vec<Lane>, Error> {
        // Its own folder, not one inside the working directory, which is copied for each lane.
        let base = std::env::temp_dir();
        let root = tempfile::Builder::new()
            .prefix("agent-loop-compare-")
            .tempdir_in(&base)
            .map_err(|source| ChatError::CompareFolder {
                base: base.clone(),
                source,
            })?
            .keep();
        let root = root.canonicalize().unwrap_or(root);
        let cwd = self.agent.options().cwd.clone();
        let mut lanes = Vec::new();
        for (i, name) in backends.iter().enumerate() {
            let folder = root.join(format!("{}-{name}", i + 1));
            // Off the runtime's thread: a copy of many files takes a while, and a signal
            // must still be heard meanwhile.
            let (from, to, skip) = (cwd.clone(), folder.clone(), root.clone());
            let copied = tokio::task::spawn_blocking(move || copy_tree(&from, &to, &skip, &mut 0))
                .await
                .unwrap_or_else(|e| Err(ChatError::CopyThread(e.to_string())));
            if let Err(e) = copied {
                let _ = std::fs::remove_dir_all(&root);
                return Err(e.into());
            }
            lanes.push(Lane {
                name: name.clone(),
                agent: self.agent_for(name, &folder)?,
                folder,
                events: Vec::new(),
                result: None,
                elapsed: Duration::ZERO,
                denied: 0,
            });
        }
        let shared = tokio::sync::Mutex::new(&mut *observer);
        let runs = lanes.iter_mut().enumerate().map(|(i, lane)| {
            let shared = &shared;
            async move {
                let mut observer = LaneObserver {
                    label: format!("[{}] {}", i + 1, lane.name),
                    events: Vec::new(),
                    denied: 0,
                    shared,
                };
                let started = Instant::now();
                let result = lane.agent.run_turn(task, &mut observer).await;
                lane.elapsed = started.elapsed();
                lane.events = observer.events;
                lane.denied = observer.denied;
                lane.result = Some(result);
            }
        });
        futures_util::future::join_all(runs).await;
        Ok(lanes)
    }

    /// One backend's events under its heading.
    fn show_lane(&mut self, i: usize, lane: &Lane, observer: &mut (dyn Observer + '_)) {
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
            super::views::spent(&t),
            lane.folder.display()
        );
        // A final answer's text, so a terminal puts it on stdout with the answers.
        observer.event(&Event::Text {
            text: heading,
            final_answer: true,
        });
        for event in &lane.events {
            self.relay(event, observer);
        }
    }

    /// Keeps the first successful answer in the conversation and counts every backend's
    /// tokens.
    fn keep(&mut self, lanes: Vec<Lane>) -> Result<Kept, Error> {
        let mut totals = self.agent.totals;
        let mut by_backend = self.agent.by_backend.clone();
        let mut kept = None;
        let mut first_error = None;
        let mut saved = Vec::new();
        for (i, lane) in lanes.into_iter().enumerate() {
            let Lane {
                name,
                agent,
                result,
                denied,
                ..
            } = lane;
            totals.merge(&agent.totals);
            for (backend, spent) in &agent.by_backend {
                by_backend.entry(backend.clone()).or_default().merge(spent);
            }
            match result {
                Some(Ok(answer)) => {
                    if kept.is_none() {
                        kept = Some((i, answer, agent.conversation.clone(), denied));
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
        let turns = self.agent.turns() + 1;
        let Some((i, answer, conversation, denied)) = kept else {
            let conversation = self.agent.conversation.clone();
            self.agent.restore(conversation, turns, totals, by_backend);
            return Err(first_error.unwrap_or_else(|| ChatError::NoAnswer.into()));
        };
        self.agent.restore(conversation, turns, totals, by_backend);
        let backend = saved[i].0.clone();
        self.compared = Some(Compared {
            session_id: self.session.id.clone(),
            answers: saved,
            current: i,
        });
        Ok(Kept {
            number: i + 1,
            backend,
            answer,
            denied,
        })
    }

    /// `/pick N`: the conversation takes the N-th answer of the last comparison instead, if
    /// it is still the one that comparison left (not another session's, nor one a turn,
    /// `/undo` or `/clear` changed since). A summary made since (`/compact`) is kept: it
    /// covers the turns before the comparison, which every answer shares.
    pub fn pick(&mut self, arg: &str) -> Result<String, Error> {
        let current = &self.agent.conversation.messages;
        let left = self.compared.take().filter(|c| {
            let holds = c.answers[c.current].1.as_ref().map(|c| &c.messages);
            c.session_id == self.session.id && holds == Some(current)
        });
        self.compared = left;
        let compared = self.compared.as_mut().ok_or(ChatError::NothingToPick)?;
        let n: usize = arg
            .parse()
            .ok()
            .filter(|n| (1..=compared.answers.len()).contains(n))
            .ok_or(ChatError::PickNumber {
                max: compared.answers.len(),
            })?;
        let left_summary =
            (compared.answers[compared.current].1.as_ref()).and_then(|c| c.summary().cloned());
        let (name, conversation) = &compared.answers[n - 1];
        let mut conversation = conversation
            .clone()
            .ok_or_else(|| ChatError::PickedFailed {
                number: n,
                backend: name.clone(),
            })?;
        let name = name.clone();
        let now = self.agent.conversation.summary();
        if let Some(summary) = now.filter(|s| Some(*s) != left_summary.as_ref()) {
            conversation.set_summary(summary.clone());
        }
        compared.current = n - 1;
        self.agent.conversation = conversation;
        self.save()?;
        Ok(format!("[kept answer {n} ({name})]"))
    }
}

/// Holds a backend's events back for [`Chat::show_lane`]; approvals are asked at once, one
/// at a time.
struct LaneObserver<'a, O: Observer + ?Sized> {
    label: String,
    events: Vec<Event>,
    denied: u32,
    shared: &'a tokio::sync::Mutex<&'a mut O>,
}

impl<O: Observer + ?Sized> Observer for LaneObserver<'_, O> {
    fn event(&mut self, event: &Event) {
        // Progress is passed on as it happens when the observer is free; it names the backend.
        if let Event::Waiting { .. } = event {
            if let Ok(mut observer) = self.shared.try_lock() {
                observer.event(event);
            }
            return;
        }
        self.events.push(event.clone());
    }

    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let mut observer = self.shared.lock().await;
            observer.event(&Event::Notice {
                message: format!("{} asks:", self.label),
            });
            let decision = observer.approve(request).await;
            if let Decision::Deny(_) = decision {
                self.denied += 1;
            }
            decision
        })
    }
}

/// Copies the working directory for one backend (`.git` folders and `skip`, the folder the
/// copies go to, left out; symbolic links kept as links; FIFOs, sockets and devices left out,
/// for opening a FIFO waits for a writer), refusing past [`MAX_COPY_BYTES`] before a file
/// that would pass it is copied.
fn copy_tree(from: &Path, to: &Path, skip: &Path, copied: &mut u64) -> Result<(), ChatError> {
    let fail = |what: &'static str, path: &Path, source: std::io::Error| ChatError::Copy {
        what,
        path: path.to_path_buf(),
        source,
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
        } else if kind.is_file() {
            let size = entry.metadata().map_err(|e| fail("read", &src, e))?.len();
            if *copied + size > MAX_COPY_BYTES {
                return Err(ChatError::TooBigToCopy {
                    mb: MAX_COPY_BYTES / (1024 * 1024),
                });
            }
            *copied += std::fs::copy(&src, &dst).map_err(|e| fail("copy", &src, e))?;
        }
    }
    Ok(())
}
