//! Every child agent-loop starts (backends, the bash tool, MCP servers) runs in a session of
//! its own with no controlling terminal, so it cannot push keystrokes into the user's
//! terminal (TIOCSTI) or write to `/dev/tty` behind the display, and Ctrl-C at the terminal
//! does not reach it. As the leader of its session it leads its own process group too, so
//! [`super::GroupGuard`] still kills everything it started. On Linux and Android it also dies
//! with agent-loop, even when agent-loop is killed with SIGKILL and no Drop runs.

/// Sets up `command` so that its child starts in a new session (and process group) and, on
/// Linux and Android, is killed when agent-loop dies. (The kernel ties the death signal to
/// the thread that spawned the child; agent-loop spawns from its runtime's own thread, which
/// lives as long as the process.)
pub fn isolate(command: &mut tokio::process::Command) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let parent = rustix::process::getpid();
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe calls are allowed: setsid, prctl, getppid, getpid and the watchdog's
    // write are plain system calls, and nothing here allocates or takes a lock.
    unsafe {
        command.pre_exec(move || {
            rustix::process::setsid()?;
            #[cfg(any(target_os = "linux", target_os = "android"))]
            {
                rustix::process::set_parent_process_death_signal(Some(
                    rustix::process::Signal::KILL,
                ))?;
                // agent-loop died before the line above: nobody would kill this child.
                if rustix::process::getppid() != Some(parent) {
                    return Err(std::io::Error::other("agent-loop exited"));
                }
            }
            super::watchdog::record_self();
            Ok(())
        });
    }
}
