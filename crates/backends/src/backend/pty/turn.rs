//! One turn with a terminal agent, as a person would take it: wait until it is ready, type
//! the message (bracketed paste when the agent asked for it) and the submit key, make sure it
//! was accepted (one more submit key if it still sits in the input box), relay its approval
//! questions, show its settled lines as progress, and decide when the answer is complete.
//!
//! Every decision is a pattern on the screen when one is configured (`ready_regex` and
//! `start_regex`, `done_regex` or `done_when_ready`); only without one does quiet (`idle_ms`)
//! decide, so a run's outcome never depends on the machine's speed when the patterns are set.
//! A turn whose tool call was denied and that ends without an answer is an error: the caller
//! must not take an empty answer for one.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use super::extract::{needle, Progress};
use super::question::question;
use super::session::{Session, Wake};
use crate::backend::{agent_failed, Host};
use crate::config::PtyDef;
use crate::context::ToolCall;
use crate::event::{ApprovalRequest, Decision, Event, OutputStream};
use crate::Error;

/// Rows of the screen quoted in an error.
const ERROR_TAIL_ROWS: usize = 15;

/// Bracketed paste: a multi-line message arrives as one paste, not as lines submitted.
const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";

/// One phase of a turn, for `agent-loop doctor`: when it ended, counted from the turn's
/// start, and which rule decided it.
#[derive(Debug, Clone, Default)]
pub struct Phase {
    pub at: Option<Duration>,
    pub rule: String,
}

/// How a turn went, phase by phase: the agent started (or was running), ready, took the
/// message, done.
#[derive(Debug, Clone, Default)]
pub struct Decided {
    pub start: Phase,
    pub ready: Phase,
    pub accepted: Phase,
    pub done: Phase,
}

pub struct Turn<'a> {
    pub def: &'a PtyDef,
    pub session: &'a mut Session,
    pub host: &'a mut dyn Host,
    pub deadline: Instant,
    pub decided: Decided,
    /// The turn's start, the agent's start included.
    began: Instant,
    /// The turn ended as the agent meant it to (an answer, or a denial it took): the agent
    /// can take the next message.
    pub clean_end: bool,
    /// What the last denied approval question was about.
    denied: Option<String>,
    /// The answer on the screen, and when it was last drawn differently.
    drawn: Option<(String, Duration)>,
    started: Instant,
    next_tick: Instant,
    progress: Progress,
    last_activity: Option<String>,
    /// The keys typed to answer the approval question on the screen, and whether they were
    /// typed a second time; cleared once the question is gone.
    answered: Option<(String, bool)>,
    /// The approval question as read, and since when it has read so.
    reading: Option<(String, Instant)>,
    approvals: u32,
}

impl<'a> Turn<'a> {
    pub fn new(
        def: &'a PtyDef,
        session: &'a mut Session,
        host: &'a mut dyn Host,
        decided: Decided,
        began: Instant,
    ) -> Self {
        let now = Instant::now();
        Turn {
            def,
            session,
            host,
            deadline: now + def.timeout,
            decided,
            began,
            clean_end: false,
            denied: None,
            drawn: None,
            started: now,
            next_tick: now + def.progress_every,
            progress: Progress::default(),
            last_activity: None,
            answered: None,
            reading: None,
            approvals: 0,
        }
    }

    /// Waits for the next thing to happen, at the latest `until` (or the next progress tick,
    /// or the deadline); an exit or the deadline is an error.
    async fn step(&mut self, until: Option<Instant>, waiting_for: &str) -> Result<Wake, Error> {
        let mut wake_at = self.deadline.min(self.next_tick);
        if let Some(until) = until {
            wake_at = wake_at.min(until);
        }
        let wake = self.session.pump(wake_at).await;
        let now = Instant::now();
        if wake == Wake::Exited {
            let status = self
                .session
                .exit
                .and_then(|s| {
                    use std::os::unix::process::ExitStatusExt;
                    s.code().or_else(|| s.signal().map(|n| 128 + n))
                })
                .map_or("an unknown status".to_string(), |c| format!("status {c}"));
            return Err(self.error(&format!(
                "the agent exited with {status} while agent-loop was waiting for {waiting_for}; \
                 it is started again for the next message"
            )));
        }
        if now >= self.deadline {
            self.session.interrupted = true;
            return Err(self.error(&format!(
                "no answer after {}s (timeout_s in {}): still waiting for {waiting_for}",
                self.def.timeout.as_secs(),
                self.def.defined_at
            )));
        }
        if now >= self.next_tick {
            self.next_tick = now + self.def.progress_every;
            self.host.event(Event::Waiting {
                backend: self.def.name.clone(),
                elapsed_s: self.started.elapsed().as_secs(),
            });
        }
        Ok(wake)
    }

    /// An error about this backend, with the end of its screen.
    fn error(&self, what: &str) -> Error {
        let rows = self.session.reader.last_drawn();
        let shown: Vec<&str> = rows
            .iter()
            .map(|r| r.as_str())
            .filter(|r| !r.trim().is_empty())
            .collect();
        let tail = &shown[shown.len().saturating_sub(ERROR_TAIL_ROWS)..];
        let screen = if tail.is_empty() {
            "; its screen is empty".to_string()
        } else {
            format!("; its screen ended with:\n{}", tail.join("\n"))
        };
        agent_failed(&self.def.name, format!("{what}{screen}"))
    }

    /// The phase ended now, decided by `rule`.
    fn phase(&self, rule: String) -> Phase {
        Phase {
            at: Some(self.began.elapsed()),
            rule,
        }
    }

    /// Quiet since the screen last changed for `idle_ms`.
    fn quiet(&self) -> bool {
        self.session.last_output.elapsed() >= self.def.idle
    }

    fn idle_at(&self) -> Instant {
        self.session.last_output + self.def.idle
    }

    /// Waits until the agent is ready for a message: `ready_regex` on the screen (or, without
    /// one, quiet), no `busy_regex`, and once after the start, `start_regex` (or, without
    /// one, quiet).
    pub async fn wait_ready(&mut self) -> Result<(), Error> {
        loop {
            let screen = self.session.reader.visible_text();
            let busy = self
                .def
                .busy
                .as_ref()
                .is_some_and(|re| re.is_match(&screen));
            // A TUI draws its input box before it has finished starting (gemini still probes
            // the terminal, and takes keys typed then as shortcuts): a fresh agent must also
            // show `start_regex`, or without one, have been quiet for idle_ms.
            let fresh = self.session.fresh;
            let started = match &self.def.start {
                _ if !fresh => Some(String::new()),
                Some(re) => re
                    .find(&screen)
                    .map(|m| format!(", and start_regex matched `{}`", m.as_str())),
                None => self.quiet().then(|| {
                    format!(
                        ", and the new agent was quiet for idle_ms ({} ms)",
                        self.def.idle.as_millis()
                    )
                }),
            };
            let rule = match &self.def.ready {
                Some(_) if busy => None,
                Some(re) => re.find(&screen).and_then(|m| {
                    let started = started.as_ref()?;
                    Some(format!(
                        "ready_regex `{}` matched `{}`{started}",
                        re.as_str(),
                        m.as_str()
                    ))
                }),
                None if self.quiet() && !busy && !screen.trim().is_empty() => Some(format!(
                    "no ready_regex: the screen was quiet for idle_ms ({} ms)",
                    self.def.idle.as_millis()
                )),
                None => None,
            };
            if let Some(rule) = rule {
                self.decided.ready = self.phase(rule);
                self.session.fresh = false;
                return Ok(());
            }
            let quiet_decides = self.def.ready.is_none() || (fresh && self.def.start.is_none());
            let until = quiet_decides.then(|| self.idle_at());
            self.step(until, "the agent to be ready (ready_regex)")
                .await?;
        }
    }

    /// Types the message and the submit key, and waits until the agent took it.
    async fn submit(&mut self, message: &str) -> Result<(), Error> {
        self.session.reader.start_message(message);
        let paste = self.def.bracketed_paste && self.session.reader.bracketed_paste();
        let typed = if paste {
            format!("{PASTE_START}{message}{PASTE_END}")
        } else {
            // Without paste, a newline would submit a line at a time.
            message.lines().collect::<Vec<_>>().join(" ")
        };
        self.send(typed.as_bytes()).await?;
        let needle = needle(message).unwrap_or_default().to_string();
        let rows_with = |turn: &Self| -> Vec<usize> {
            turn.session
                .reader
                .visible()
                .iter()
                .enumerate()
                .filter(|(_, r)| !needle.is_empty() && r.contains(needle.as_str()))
                .map(|(i, _)| i)
                .collect()
        };
        // The agent shows what was typed before it can take the submit key (a TUI that reads
        // a paste and the key in one go may take the key as part of the paste).
        while rows_with(self).is_empty() && !self.quiet() {
            let until = Some(self.idle_at());
            self.step(until, "the typed message to show").await?;
        }
        let typed_at = rows_with(self);
        let submit_at = Instant::now() + self.def.submit_delay;
        while Instant::now() < submit_at {
            self.step(Some(submit_at), "the typed message to show")
                .await?;
        }
        self.send(self.def.submit.clone().as_bytes()).await?;
        let submitted = self.session.last_output;
        let mut entered = self.began.elapsed();
        let mut submits = 1;
        loop {
            let screen = self.session.reader.visible_text();
            let busy = self.def.busy.as_ref().and_then(|re| re.find(&screen));
            let asks = self
                .def
                .approval
                .as_ref()
                .is_some_and(|re| re.is_match(&screen));
            let rule =
                if typed_at.is_empty() && (self.quiet() || self.session.last_output > submitted) {
                    // The typed text never showed, so the input box cannot tell.
                    Some("assumed: the typed message never showed".to_string())
                } else if rows_with(self) != typed_at {
                    Some("the message left the input box".to_string())
                } else if let Some(m) = busy {
                    Some(format!("busy_regex matched `{}`", m.as_str()))
                } else if asks {
                    Some("approval_regex matched".to_string())
                } else {
                    None
                };
            if let Some(rule) = rule {
                let nth = if submits == 2 { "a second " } else { "" };
                self.decided.accepted = self.phase(format!(
                    "{rule} ({nth}submit key typed at {:.2} s)",
                    entered.as_secs_f64()
                ));
                return Ok(());
            }
            if self.quiet() {
                if submits == 2 {
                    return Err(self.error(&format!(
                        "the agent did not take the message: it was still in its input box \
                         {} ms after a second submit key ({:?})",
                        self.def.idle.as_millis(),
                        self.def.submit
                    )));
                }
                submits += 1;
                entered = self.began.elapsed();
                self.send(self.def.submit.clone().as_bytes()).await?;
            }
            let until = Some(self.idle_at());
            self.step(until, "the agent to take the message").await?;
        }
    }

    /// Types `bytes`; quiet is counted from the last key as well as from the last output.
    async fn send(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let sent = self.session.send(bytes).await;
        self.session.last_output = Instant::now();
        sent.map_err(|e| self.error(&format!("cannot type into the agent's terminal: {e}")))
    }

    /// Runs the turn: the answer read off the screen.
    pub async fn run(&mut self, message: &str) -> Result<String, Error> {
        self.wait_ready().await?;
        self.submit(message).await?;
        loop {
            let rows = self.session.reader.new_rows();
            let text = rows.join("\n");
            let screen = self.session.reader.visible_text();
            self.approval(&screen).await?;
            if let Some(m) = self.def.error.as_ref().and_then(|re| re.find(&text)) {
                let line = text[m.start()..].lines().next().unwrap_or("");
                let line = super::extract::trim_row(line).unwrap_or_default();
                return Err(self.error(&format!("the agent showed an error: {}", line.trim())));
            }
            let answer = self.session.reader.answer();
            if self.drawn.as_ref().is_none_or(|(a, _)| *a != answer) {
                self.drawn = Some((answer.clone(), self.began.elapsed()));
            }
            let done = self.done(&text, &screen, &answer);
            self.show_progress(&rows, done.is_some());
            if let Some(how) = done {
                let drawn = match &self.drawn {
                    Some((a, at)) if !a.is_empty() => {
                        format!(
                            " (the answer as read was on the screen from {:.2} s)",
                            at.as_secs_f64()
                        )
                    }
                    _ => String::new(),
                };
                self.decided.done = self.phase(format!("{how}{drawn}"));
                self.clean_end = true;
                if let (true, Some(what)) = (answer.is_empty(), &self.denied) {
                    return Err(self.error(&format!(
                        "the agent's request to run `{what}` was denied, and its turn ended \
                         without an answer"
                    )));
                }
                return Ok(answer);
            }
            let quiet_decides = (self.def.done.is_none() && !self.def.done_when_ready)
                || (self.def.done_when_ready && !self.session.reader.echoed())
                || self.answered.as_ref().is_some_and(|(_, again)| !again);
            let settled = self.reading.as_ref().filter(|_| self.answered.is_none());
            let until = [
                quiet_decides.then(|| self.idle_at()),
                settled.map(|(_, since)| *since + self.def.idle),
            ]
            .into_iter()
            .flatten()
            .min();
            self.step(until, "the answer to be complete (done_regex)")
                .await?;
        }
    }

    /// Whether the turn is over, and by which rule: `done_regex` in what is new; the input
    /// box back (`done_when_ready`); or quiet with no spinner.
    fn done(&mut self, text: &str, screen: &str, answer: &str) -> Option<String> {
        let matches =
            |re: &Option<crate::parse::Pattern>| re.as_ref().is_some_and(|re| re.is_match(screen));
        // An answer, or a denial the agent took instead of one.
        let ended = self.denied.is_some() || !answer.is_empty();
        if let Some(re) = &self.def.done {
            return re
                .find(text)
                .map(|m| format!("done_regex `{}` matched `{}`", re.as_str(), m.as_str()));
        }
        if self.def.done_when_ready {
            let ready = self.def.ready.as_ref()?.find(screen)?;
            // The input box is back before the agent has drawn the message in its history,
            // where rows of an earlier answer may still count as new: the echo must show.
            // An agent that shows the message otherwise (a placeholder for a long paste)
            // falls back to quiet.
            let echoed = self.session.reader.echoed();
            let back = !matches(&self.def.busy)
                && !matches(&self.def.approval)
                && (echoed || self.quiet());
            return (back && ended).then(|| {
                format!(
                    "done_when_ready: ready_regex matched `{}` again, with no busy_regex or \
                     approval_regex match, {}{}",
                    ready.as_str(),
                    if self.denied.is_some() {
                        "after a denied approval"
                    } else {
                        "and an answer"
                    },
                    if echoed {
                        String::new()
                    } else {
                        format!(
                            " (the message's echo not found: after idle_ms of quiet, {} ms)",
                            self.def.idle.as_millis()
                        )
                    }
                )
            });
        }
        (self.quiet() && !matches(&self.def.busy) && ended).then(|| {
            format!(
                "no done_regex: quiet for idle_ms ({} ms) with no busy_regex match",
                self.def.idle.as_millis()
            )
        })
    }

    /// Shows the rows that settled as progress lines, and the agent's tool activity.
    fn show_progress(&mut self, rows: &[String], done: bool) {
        let chrome = self.session.reader.chrome();
        let lines = self.progress.next(rows, &chrome, done);
        for line in lines {
            let activity = self.def.tool_activity.as_ref().and_then(|re| {
                re.captures(&line).map(|c| {
                    c.name("activity")
                        .or_else(|| c.get(1))
                        .or_else(|| c.get(0))
                        .map_or("", |m| m.as_str())
                        .trim()
                        .to_string()
                })
            });
            self.host.event(Event::BackendOutput {
                backend: self.def.name.clone(),
                stream: OutputStream::Screen,
                line,
            });
            if let Some(activity) = activity.filter(|a| self.last_activity.as_ref() != Some(a)) {
                self.last_activity = Some(activity.clone());
                self.host.event(Event::OwnTool {
                    backend: self.def.name.clone(),
                    activity,
                    call_id: None,
                });
            }
        }
    }

    /// Relays an approval question on the screen to the user, and types the answer.
    async fn approval(&mut self, screen: &str) -> Result<(), Error> {
        let Some(asked) = question(self.def, screen) else {
            self.answered = None;
            self.reading = None;
            return Ok(());
        };
        if let Some((keys, again)) = self.answered.clone() {
            // A dialog takes keys only once it listens, which may be after it is drawn: the
            // answer is typed once more if the question still stands after idle_ms of quiet.
            if !again && self.quiet() {
                self.answered = Some((keys.clone(), true));
                self.send(keys.as_bytes()).await?;
            }
            return Ok(());
        }
        let line_start = screen[..asked.range.start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = screen[asked.range.end..]
            .find('\n')
            .map_or(screen.len(), |i| asked.range.end + i);
        let question = super::extract::trim_row(&screen[line_start..line_end])
            .unwrap_or_default()
            .trim()
            .to_string();
        let tool = asked.tool.clone().unwrap_or_else(|| self.def.name.clone());
        let detail = match asked.detail {
            _ if asked.start_cut => "[cut: the question's start is off the agent's screen]".into(),
            // Not shown as if whole; and a rule that names the command's start
            // (`--allow shell:touch*`) does not match it.
            Some(read) if read.cut => format!(
                "[cut: the agent's screen does not show all of it] {}",
                read.text
            ),
            Some(read) => read.text,
            None => question,
        };
        // What is shown must be what stays: a TUI may draw a question before it has measured
        // it (gemini draws a tall command's first rows with no sign of the rest, then draws
        // it again with its end). It is asked once it has read the same for idle_ms.
        let read = format!("{tool}\n{detail}");
        if !self.host.approves_all() {
            match &self.reading {
                Some((was, since)) if *was == read && since.elapsed() >= self.def.idle => {}
                Some((was, _)) if *was == read => return Ok(()),
                _ => {
                    self.reading = Some((read, Instant::now()));
                    return Ok(());
                }
            }
        }
        self.approvals += 1;
        let request = ApprovalRequest {
            call: ToolCall {
                id: format!("pty-{}", self.approvals),
                name: tool,
                args: json!({ "command": detail }),
            },
            summary: detail,
            change: None,
        };
        let asked_at = Instant::now();
        let decision = if !asked.start_cut {
            self.host.approve(&request).await
        } else if self.host.approves_all() {
            // --yes: everything is allowed, this too.
            Decision::Once
        } else {
            // Nothing of what it asks can be read: it is put to nobody.
            Decision::Deny(
                "its start is off the agent's screen, so what it asks cannot be read (a taller \
                 `size` shows it)"
                    .into(),
            )
        };
        // The user's time is not the agent's.
        self.deadline += asked_at.elapsed();
        self.next_tick += asked_at.elapsed();
        let (keys, said) = match decision {
            Decision::Once | Decision::Always => (self.def.approve_keys.clone(), "allowed".into()),
            Decision::Deny(why) => {
                self.denied = Some(request.summary.clone());
                (self.def.deny_keys.clone(), format!("denied: {why}"))
            }
        };
        self.host.event(Event::BackendOutput {
            backend: self.def.name.clone(),
            stream: OutputStream::Screen,
            line: format!("(approval of {}: {said})", request.summary),
        });
        self.answered = Some((keys.clone(), false));
        let typed_at = Instant::now() + self.def.submit_delay;
        while Instant::now() < typed_at {
            self.step(Some(typed_at), "the approval question to take keys")
                .await?;
        }
        self.send(keys.as_bytes()).await
    }
}
