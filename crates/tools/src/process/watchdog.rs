//! Children die with agent-loop, also with their own children, even when agent-loop is killed
//! with SIGKILL and nothing of it runs. The kernel's death signal (see [`super::isolate`])
//! reaches only the direct child: a backend's wrapper dies, but the native program it started
//! and the `sleep` a bash command left in the background do not. So agent-loop starts a
//! watchdog, a second process that holds the read end of a pipe to agent-loop and nothing
//! else. Every child's process group is written down the pipe when it starts
//! ([`super::GroupGuard`]) and struck off when the guard kills it. When agent-loop is gone,
//! however it died, the kernel closes its end of the pipe; the watchdog reads end of file,
//! kills every group still recorded and exits.
//!
//! The watchdog is forked, not executed: no program path to find (on Android neither
//! `/proc/self/exe` nor `argv[0]` is sure to name the binary), nothing for a library user to
//! wire up. It is forked with every signal blocked, and then uses only plain system calls
//! (read, killpg, _exit), with no allocation, so it may be forked from any thread. It is not
//! made with `clone(CLONE_VM)`, though sharing agent-loop's memory would spare the fork's
//! page tables and copy-on-write faults: the kernel's out-of-memory killer kills every
//! process that shares the victim's memory, and kernels before 5.16 do the same on a core
//! dump, so the watchdog would die with agent-loop exactly when it is needed.
//!
//! [`start`] only makes the pipe; the fork waits until a child is about to start
//! ([`fork_pending`], called by [`super::isolate`] as the child's command is set up), so a run
//! that starts nothing (`--version`, a REPL not yet asked anything) forks none. Every child
//! records its group down the pipe before it executes ([`record_self`]), when the watchdog
//! already holds the pipe's other end: there is no moment in which a child runs unrecorded.
//! The fork is made before the first child starts, on its way, as the fork of the child
//! itself is; forking after the child started instead left a moment in which a SIGKILL of
//! agent-loop left what the child started running. What escapes: a process that leaves its
//! group (`setsid`, a daemon), and groups beyond `SLOTS` at once.
//!
//! The watchdog is a copy of agent-loop's memory at the fork, shared copy-on-write; it writes
//! only its stack and its table of groups. What it maps is the part of agent-loop's pages the
//! fork copies the page tables of (its written ones), a fraction of agent-loop's own
//! (docs/performance.md has the figures). The out-of-memory killer scores a process by its
//! resident pages, shared ones included, so agent-loop, not the watchdog, is the larger target;
//! and should the watchdog be picked, agent-loop lives on, and only the cleanup at its death
//! is lost, whereas a watchdog that shared agent-loop's memory (`clone(CLONE_VM)`) would be
//! killed *with* it.

use std::sync::atomic::{AtomicI32, Ordering};

/// The write end of the pipe to the watchdog; -1 when there is none.
static PIPE: AtomicI32 = AtomicI32::new(-1);

/// The read end, kept here from [`start`] until the watchdog is forked with it; -1 after.
static PENDING: AtomicI32 = AtomicI32::new(-1);

/// The watchdog's process name, as `ps` shows it.
pub const NAME: &std::ffi::CStr = c"agent-loop-wd";

/// How many process groups the watchdog can hold at once.
const SLOTS: usize = 1024;

/// Makes the pipe to the watchdog, which [`fork_pending`] forks when the first child is about
/// to start. Call it once, before the first child is spawned. Without it (a library that does
/// not call it, or a pipe that could not be made) children still get the direct death signal.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn start() -> std::io::Result<()> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills `fds`. Both ends are close-on-exec, so no program agent-loop starts
    // holds them: only agent-loop's death closes the write end.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    PENDING.store(fds[0], Ordering::Release);
    PIPE.store(fds[1], Ordering::Release);
    Ok(())
}

/// Forks the watchdog if [`start`] made its pipe and it is not forked yet. Called before a
/// child is spawned ([`super::isolate`], [`super::tied`]); also by
/// [`super::GroupGuard::new`] for a child spawned without them. If the fork fails, nothing
/// more is written down the pipe (children still get the direct death signal).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn fork_pending() {
    let read = PENDING.swap(-1, Ordering::AcqRel);
    if read < 0 {
        return;
    }
    // SAFETY: the child never returns from `watch`, which makes only async-signal-safe system
    // calls and allocates nothing, so forking from a thread of a threaded process is sound.
    // The signal mask is set back in agent-loop before returning; the watchdog keeps every
    // signal blocked, so no handler of agent-loop's runs in it.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let made = libc::fork();
        if made == 0 {
            watch(read);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        libc::close(read);
        if made == -1 {
            // Not closed: a thread may be writing to it this moment, and the number could be
            // reused. With no read end left, a write would only fail (EPIPE).
            PIPE.store(-1, Ordering::Release);
        }
    }
}

/// Whether the kernel (and any seccomp filter) lets `close_range` through: an empty range,
/// so nothing is closed. Never tried on Android: the seccomp filter every app process
/// inherits from the zygote kills the caller of a system call it does not list (SIGSYS), and
/// older releases' filters (Android 12, at least) do not list close_range.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn has_close_range() -> bool {
    if cfg!(target_os = "android") {
        return false;
    }
    // SAFETY: closes descriptors from u32::MAX - 1 up, of which there are none.
    unsafe { libc::syscall(libc::SYS_close_range, u32::MAX - 1, u32::MAX, 0u32) == 0 }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn start() -> std::io::Result<()> {
    Ok(())
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn fork_pending() {}

/// The watchdog kills `pgid` if agent-loop dies before [`forget`].
pub fn record(pgid: i32) {
    send(pgid);
}

/// Called in a child between fork and exec ([`super::isolate`]), once it leads its own group:
/// records the group before the program can start anything, so a SIGKILL of agent-loop in the
/// moment between the program's start and [`super::GroupGuard::new`] leaves nothing behind.
/// Only a `getpid` and a `write`: async-signal-safe. The guard records the group again,
/// which the watchdog counts once. (A program that then fails to execute leaves its number
/// recorded until agent-loop exits; programs are found on `PATH` before they are started.)
pub(super) fn record_self() {
    send(rustix::process::getpid().as_raw_nonzero().get());
}

/// `pgid` was killed (or exited): the watchdog strikes it off.
pub fn forget(pgid: i32) {
    send(-pgid);
}

fn send(word: i32) {
    let fd = PIPE.load(Ordering::Acquire);
    if fd < 0 {
        return;
    }
    let bytes = word.to_ne_bytes();
    // SAFETY: a write of 4 bytes from a live buffer; a pipe write this small is atomic, so
    // words from several threads never interleave. A watchdog that is gone gives EPIPE
    // (SIGPIPE is ignored by the Rust runtime), which changes nothing here.
    unsafe {
        libc::write(fd, bytes.as_ptr().cast(), bytes.len());
    }
}

/// The watchdog's whole life: away from the terminal (its own session, so Ctrl-C and a hang
/// up do not reach it), holding no descriptor but the pipe, reading words until end of file,
/// then killing what is recorded.
#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe fn watch(pipe: i32) -> ! {
    libc::setsid();
    libc::prctl(libc::PR_SET_NAME, NAME.as_ptr());
    libc::dup2(pipe, 0);
    // Holding agent-loop's other descriptors would keep its output pipes open after it dies.
    // One close_range call (Linux 5.9); the loop over every possible descriptor, tens of
    // thousands of system calls where the limit is high, only on older kernels and on
    // Android, where close_range may be a fatal call (`has_close_range`).
    if !has_close_range() || libc::syscall(libc::SYS_close_range, 1u32, u32::MAX, 0u32) != 0 {
        close_one_by_one();
    }
    read_and_kill()
}

/// Closes every descriptor but stdin, one call each, up to the descriptor limit.
#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe fn close_one_by_one() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
        limit.rlim_cur.min(65_536) as i32
    } else {
        1024
    };
    for fd in 1..top {
        libc::close(fd);
    }
}

/// The watchdog's life once it holds only the pipe (as its stdin): reading words until end of
/// file, then killing what is recorded.
#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe fn read_and_kill() -> ! {
    let mut groups = [0i32; SLOTS];
    let mut buf = [0u8; 4096];
    let mut have = 0usize;
    loop {
        let n = libc::read(0, buf[have..].as_mut_ptr().cast(), buf.len() - have);
        // With every signal blocked no read is interrupted: an error is as final as the end.
        if n <= 0 {
            break;
        }
        have += n as usize;
        let whole = have - have % 4;
        for word in buf[..whole].chunks_exact(4) {
            let word = i32::from_ne_bytes([word[0], word[1], word[2], word[3]]);
            apply(&mut groups, word);
        }
        buf.copy_within(whole..have, 0);
        have -= whole;
    }
    for &pgid in groups.iter().filter(|g| **g > 0) {
        libc::killpg(pgid, libc::SIGKILL);
    }
    libc::_exit(0)
}

/// A positive word records a group (once, however often it comes), a negative one strikes
/// it off.
fn apply(groups: &mut [i32], word: i32) {
    if word > 0 {
        if groups.contains(&word) {
            return;
        }
        if let Some(slot) = groups.iter_mut().find(|g| **g == 0) {
            *slot = word;
        }
    } else if let Some(slot) = groups.iter_mut().find(|g| **g == word.wrapping_neg()) {
        *slot = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_record_and_strike_off() {
        let mut groups = [0i32; 3];
        for word in [5, 7, 7, -5, 9, 11, 13, -7] {
            apply(&mut groups, word);
        }
        assert_eq!(groups, [9, 0, 11]);
    }
}
