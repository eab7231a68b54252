//! Kills a child's whole process group when dropped: on timeout, on cancellation (the future
//! running the child is dropped) and after a normal exit, so nothing the child started is left
//! behind.

pub struct GroupGuard {
    pgid: Option<i32>,
}

impl GroupGuard {
    /// The child was spawned with `process_group(0)`, so its pid is its group id.
    pub fn new(pid: Option<u32>) -> Self {
        GroupGuard {
            pgid: pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 0),
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            // SAFETY: killpg only sends a signal; a group that is already gone yields ESRCH,
            // which is the outcome we want anyway.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}
