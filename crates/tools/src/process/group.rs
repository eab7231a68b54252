//! Kills a child's whole process group when dropped: on timeout, on cancellation (the future
//! running the child is dropped), on a panic (unwinding drops it) and after a normal exit, so
//! nothing the child started is left behind. While it lives, the watchdog holds the group
//! too, to kill it if agent-loop dies without dropping anything (see [`super::watchdog`]).

pub struct GroupGuard {
    pgid: Option<i32>,
}

impl GroupGuard {
    /// The child was spawned in a group of its own (`process_group(0)` or its own session,
    /// [`super::isolate`]), so its pid is its group id. A caller that spawns without
    /// [`super::isolate`] calls [`super::watchdog::fork_pending`] before the spawn; the call
    /// here only forks the watchdog for one that did not (too late for this child's
    /// grandchildren if agent-loop is killed in between, not for later children).
    pub fn new(pid: Option<u32>) -> Self {
        super::watchdog::fork_pending();
        let pgid = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 0);
        if let Some(pgid) = pgid {
            super::watchdog::record(pgid);
        }
        GroupGuard { pgid }
    }

    /// Asks the group to end (SIGTERM): what a child that ignores the end of its input gets
    /// once nothing more is needed of it; the drop still kills what outlives it.
    pub fn terminate(&self) {
        self.signal(rustix::process::Signal::TERM);
    }

    /// Kills the group now (SIGKILL), as the drop does.
    pub fn kill(&self) {
        self.signal(rustix::process::Signal::KILL);
    }

    fn signal(&self, signal: rustix::process::Signal) {
        // A group that is already gone yields ESRCH, which is the outcome we want anyway.
        if let Some(pid) = self.pgid.and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(pid, signal);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
        if let Some(pgid) = self.pgid {
            super::watchdog::forget(pgid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::{CommandExt, ExitStatusExt};

    #[test]
    fn a_panic_kills_the_group() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id();
        let unwound = std::panic::catch_unwind(move || {
            let _guard = GroupGuard::new(Some(pid));
            panic!("in the middle of a turn");
        });
        assert!(unwound.is_err());
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    }
}
