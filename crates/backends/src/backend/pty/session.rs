//! One terminal agent process: started on a pseudo-terminal of its own (it is the leader of a
//! new session with the pty as its controlling terminal, so its pid is its process group),
//! read into the virtual screen, written to as a person types, and closed at the end: its
//! exit keys and a short grace to quit by itself, or at once (`exit_by_sigterm`), SIGTERM to
//! its whole process group, then SIGKILL. It has gone when it has exited and nothing it
//! started holds the terminal any more: what it leaves behind may still be writing its
//! session files.

use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use super::reader::ScreenReader;
use crate::config::{PtyDef, PtyExit};
use crate::process::GroupGuard;

/// The longest the agent is given to quit by itself after its exit keys: nothing more is
/// asked of it, and a one-shot run ends only when it has gone.
const QUIT_GRACE: Duration = Duration::from_millis(500);

/// How long the agent is given after SIGTERM, before SIGKILL; the longest its exit keys' Enter
/// waits for its screen to settle.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// How long the agent's screen must stay still after exit keys are typed before their
/// Enter follows (only when closing: the session's outcome does not depend on it).
const KEYS_SETTLE: Duration = Duration::from_millis(150);

/// How much of a turn's raw output is kept for the log.
const RAW_CAP: usize = 4 * 1024 * 1024;

/// How much is read from the pty at a time.
const READ_SIZE: usize = 16 * 1024;

/// What woke a wait on the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// It printed something (already on the screen).
    Output,
    /// The time asked for came.
    Timer,
    /// It exited (what it printed last is on the screen).
    Exited,
}

pub struct Session {
    child: tokio::process::Child,
    pty: pty_process::Pty,
    pub reader: ScreenReader,
    /// Killing the group when the session goes, however it goes.
    group: GroupGuard,
    pub exit: Option<ExitStatus>,
    /// What it printed since [`Session::take_raw`], up to `RAW_CAP`.
    raw: Vec<u8>,
    /// When the screen last changed.
    pub last_output: Instant,
    /// A turn was cut short (cancelled, timed out): the agent may still be busy with it.
    pub interrupted: bool,
    /// Not ready for a message yet since it started.
    pub fresh: bool,
    /// agent-loop's conversation changed since: its history no longer matches.
    pub stale: bool,
    /// It was started with its entry's guard, whose file is in this folder (removed after
    /// the agent, which is killed when the session is dropped).
    pub guarded: Option<Option<tempfile::TempDir>>,
    /// What a read fills, kept between reads.
    buf: Vec<u8>,
}

impl Session {
    /// Starts the agent on a new pty of the configured size and `TERM`.
    pub fn spawn(
        def: &PtyDef,
        program: &Path,
        start: crate::backend::guard::Start,
        guarded: bool,
        cwd: &Path,
    ) -> std::io::Result<Self> {
        let (pty, pts) = pty_process::open().map_err(std::io::Error::other)?;
        pty.resize(pty_process::Size::new(def.rows, def.cols))
            .map_err(std::io::Error::other)?;
        // pty_process makes the agent the leader of the pty's session; it dies with agent-loop
        // and records its group for the watchdog (forked now, before it starts), as a child
        // of `isolate` does.
        let command = pty_process::Command::from(crate::process::tied(program));
        let child = command
            .args(&start.args)
            .envs(&start.env)
            .env("TERM", &def.term)
            .env("COLUMNS", def.cols.to_string())
            .env("LINES", def.rows.to_string())
            .current_dir(cwd)
            .kill_on_drop(true)
            .spawn(pts)
            .map_err(std::io::Error::other)?;
        let group = GroupGuard::new(child.id());
        Ok(Session {
            child,
            pty,
            reader: ScreenReader::new(def),
            guarded: guarded.then_some(start.folder),
            group,
            exit: None,
            raw: Vec::new(),
            last_output: Instant::now(),
            interrupted: false,
            fresh: true,
            stale: false,
            buf: vec![0; READ_SIZE],
        })
    }

    /// Waits until the agent prints something, exits, or `until` comes.
    pub async fn pump(&mut self, until: Instant) -> Wake {
        if self.exit.is_some() {
            return Wake::Exited;
        }
        let mut buf = std::mem::take(&mut self.buf);
        let wake = tokio::select! {
            read = self.pty.read(&mut buf) => match read {
                Ok(n) if n > 0 => {
                    self.take_in(&buf[..n]);
                    Wake::Output
                }
                // EIO: no process has the terminal open any more.
                _ => {
                    self.exit = self.child.wait().await.ok();
                    Wake::Exited
                }
            },
            status = self.child.wait() => {
                self.exit = status.ok();
                Wake::Exited
            }
            _ = tokio::time::sleep_until(until) => Wake::Timer,
        };
        if wake == Wake::Exited {
            // What it printed before it went is still in the pty; take it without waiting
            // for more (a process it left behind may hold the terminal open).
            while let Ok(Ok(n)) =
                tokio::time::timeout(Duration::from_millis(50), self.pty.read(&mut buf)).await
            {
                if n == 0 {
                    break;
                }
                self.take_in(&buf[..n]);
            }
        }
        self.buf = buf;
        let replies = self.reader.take_replies();
        if !replies.is_empty() {
            let _ = self.send(&replies).await;
        }
        wake
    }

    fn take_in(&mut self, bytes: &[u8]) {
        self.reader.feed(bytes);
        let room = RAW_CAP.saturating_sub(self.raw.len());
        self.raw.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.last_output = Instant::now();
    }

    /// The raw output since the last call.
    pub fn take_raw(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.raw)
    }

    /// Types `bytes`.
    pub async fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.pty.write_all(bytes).await?;
        self.pty.flush().await
    }

    /// Whether the agent is still running (reaps it if it is not).
    pub fn alive(&mut self) -> bool {
        if self.exit.is_none() {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.exit = Some(status);
            }
        }
        self.exit.is_none()
    }

    /// Whether the next message can go to it: it runs, its last turn ended, and its
    /// history is still agent-loop's conversation.
    pub fn usable(&mut self) -> bool {
        self.alive() && !self.interrupted && !self.stale
    }

    /// Asks the agent to quit: types its exit keys and gives it `QUIT_GRACE`, then (or at
    /// once, for `PtyExit::Sigterm`) sends its process group SIGTERM and gives it
    /// `CLOSE_GRACE`; whatever is left of the group is killed when this returns. Each wait
    /// ends as soon as the agent has gone.
    pub async fn close(mut self, exit: &PtyExit) {
        if !self.alive() {
            return;
        }
        if let PtyExit::Keys(keys) = exit {
            if self.type_keys(keys.as_bytes()).await.is_err() || self.gone_within(QUIT_GRACE).await
            {
                return;
            }
        }
        self.group.terminate();
        self.gone_within(CLOSE_GRACE).await;
    }

    /// Whether, within `grace`, the agent exits and every process has let go of the
    /// terminal (a read gives EIO): a launcher may exit at SIGTERM while the agent it started
    /// still finishes its clean-up, which the group's SIGKILL would cut short.
    async fn gone_within(&mut self, grace: Duration) -> bool {
        let until = Instant::now() + grace;
        let mut buf = std::mem::take(&mut self.buf);
        let mut held = true;
        while held || self.exit.is_none() {
            tokio::select! {
                read = self.pty.read(&mut buf), if held => match read {
                    Ok(n) if n > 0 => self.take_in(&buf[..n]),
                    _ => held = false,
                },
                status = self.child.wait(), if self.exit.is_none() => match status {
                    Ok(status) => self.exit = Some(status),
                    // Not ours to wait for any more: nothing to tell.
                    Err(_) => break,
                },
                () = tokio::time::sleep_until(until) => break,
            }
        }
        self.buf = buf;
        !held && self.exit.is_some()
    }

    /// Types `keys` as a person would: a command ending in Enter (`/quit\r`) is typed, and
    /// its Enter follows once the agent has drawn it and paused (`KEYS_SETTLE`): an Ink TUI
    /// takes an Enter that comes with other keys for text, and one that comes while it still
    /// draws its command menu for nothing.
    async fn type_keys(&mut self, keys: &[u8]) -> std::io::Result<()> {
        let Some(text) = keys.strip_suffix(b"\r").filter(|t| !t.is_empty()) else {
            return self.send(keys).await;
        };
        self.send(text).await?;
        let give_up = Instant::now() + CLOSE_GRACE;
        let typed = Instant::now();
        loop {
            let settled = self.last_output.max(typed) + KEYS_SETTLE;
            match self.pump(settled.min(give_up)).await {
                Wake::Exited => return Ok(()),
                Wake::Timer if Instant::now() >= settled || Instant::now() >= give_up => break,
                _ => {}
            }
        }
        self.send(b"\r").await
    }
}
