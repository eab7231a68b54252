//! Kills a child's whole process group when dropped: on timeout, on cancellation (the future
//! running the child is dropped) and after a normal exit, so nothing the child started is left
//! behind. A panic kills it too: through this destructor when panics unwind, through the undo
//! it registers with [`crate::on_panic`] when they abort.

use crate::on_panic::{on_panic, OnPanic};

pub struct GroupGuard {
    pgid: Option<i32>,
    /// Kills the group if a panic ends agent-loop first.
    on_panic: Option<OnPanic>,
}

impl GroupGuard {
    /// The child was spawned with `process_group(0)`, so its pid is its group id.
    pub fn new(pid: Option<u32>) -> Self {
        let pgid = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 0);
        GroupGuard {
            pgid,
            on_panic: pgid.map(|pgid| on_panic(move || kill(pgid))),
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            kill(pgid);
        }
        // The group is gone; a later panic has nothing to kill.
        drop(self.on_panic.take());
    }
}

fn kill(pgid: i32) {
    // SAFETY: killpg only sends a signal; a group that is already gone yields ESRCH, which is
    // the outcome we want anyway.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
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
        let mut guard = GroupGuard::new(Some(child.id()));
        guard
            .on_panic
            .take()
            .expect("an undo is registered")
            .run_now();
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        // It was killed before the destructor (which an aborting panic skips) could run.
        std::mem::forget(guard);
    }
}
