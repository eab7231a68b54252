//! Every child agent-loop starts (backends, the bash tool, MCP servers) runs in a session of
//! its own with no controlling terminal, so it cannot push keystrokes into the user's
//! terminal (TIOCSTI) or write to `/dev/tty` behind the display, and Ctrl-C at the terminal
//! does not reach it. As the leader of its session it leads its own process group too, so
//! [`super::GroupGuard`] still kills everything it started. On Linux and Android it also dies
//! with agent-loop, even when agent-loop is killed with SIGKILL and no Drop runs.

/// Sets up `command` so that its child starts in a new session (and process group) and, on
/// Linux and Android, is killed when agent-loop dies. (The kernel ties the death signal to
/// the thread that spawned the child; agent-loop spawns from its runtime's own thread, which
/// lives as long as the process.) The watchdog is forked here, before the first child starts
/// ([`super::watchdog::fork_pending`]), so it is there to read the group the child records.
pub fn isolate(command: &mut tokio::process::Command) {
    let mut tie = tied_to_agent_loop();
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe calls are allowed: setsid and `tie`'s calls are plain system calls,
    // and nothing here allocates or takes a lock.
    unsafe {
        command.pre_exec(move || {
            rustix::process::setsid()?;
            tie()
        });
    }
}

/// As [`isolate`], for a child whose session something else makes: a pty's
/// (`pty_process::Command::from` this command, which then runs its `setsid` and takes the pty
/// as controlling terminal). Its child dies with agent-loop and records its group for the
/// watchdog all the same.
pub fn tied(program: &std::path::Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    let tie = tied_to_agent_loop();
    // SAFETY: `tie` makes only async-signal-safe system calls and allocates nothing. It runs
    // before the pty's own setsid, which changes nothing for it: the group it records is
    // numbered by the child's pid, as the group setsid then makes is.
    unsafe {
        command.pre_exec(tie);
    }
    command
}

/// Forks the watchdog if it is not yet, and returns what a child runs between fork and exec:
/// on Linux and Android, the death signal, and its group recorded down the watchdog's pipe.
/// Only plain system calls (prctl, getppid, getpid, write), no allocation: async-signal-safe.
fn tied_to_agent_loop() -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
    super::watchdog::fork_pending();
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let parent = rustix::process::getpid();
    move || {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // agent-loop died before the line above: nobody would kill this child.
            if rustix::process::getppid() != Some(parent) {
                return Err(std::io::Error::other("agent-loop exited"));
            }
        }
        super::watchdog::record_self();
        Ok(())
    }
}
