//! A child's stdout read on a thread of its own, ahead of what the caller does with it. Claude
//! Code (2.1.197, print mode) exits without writing what its stdout pipe could not take at
//! once: when its reader lags, even by a few milliseconds a read, the end of its output, where
//! its answer is, is lost (seen with its JSON and stream-json output alike). An agent CLI's
//! reader does work for every line (a piece parsed and shown, a line written as a record to a
//! `--output jsonl` reader that may be slow), so it reads here, on a thread the async runtime
//! (one thread) cannot hold up, into a queue bounded so that a flood still waits for the
//! caller, as it would at the pipe. And the pipe itself is made as big as the system lets a
//! user make one (Linux's default: 1 MiB, not 64 KiB): a thread too can lag on a loaded phone,
//! while a pipe that takes the whole answer at once loses none of it however late it is read
//! (tried with real Claude Code and agent-loop stopped until it had exited: the commit that
//! made the pipe bigger says with what).

use tokio::process::ChildStdout;
use tokio::sync::mpsc::{channel, Receiver};

/// Reads queued ahead of the caller, at most this many (each at most a read's worth, 64 KiB).
const QUEUED: usize = 32;

/// The size asked for a pipe read ahead: Linux's default bound for an unprivileged user
/// (/proc/sys/fs/pipe-max-size).
const PIPE_SIZE: usize = 1 << 20;

/// Where a child's stdout is read from.
pub enum Stdout {
    /// The pipe itself, read when the caller asks.
    Pipe(ChildStdout),
    /// What the thread read from the pipe, in order.
    Ahead(Receiver<Vec<u8>>),
}

impl Stdout {
    /// The pipe, read `ahead` of the caller on a thread of its own or not.
    pub fn new(pipe: ChildStdout, ahead: bool) -> std::io::Result<Stdout> {
        if !ahead {
            return Ok(Stdout::Pipe(pipe));
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        enlarge(&pipe);
        let file = std::fs::File::from(pipe.into_owned_fd()?);
        let (tx, rx) = channel(QUEUED);
        std::thread::Builder::new()
            .name("child-stdout".into())
            .spawn(move || {
                // Read into capacity never written before: only what a read fills is touched
                // (a zeroed buffer cost each run its whole size in memory at once).
                let mut buf = Vec::with_capacity(super::CHUNK);
                // Ends at the end of the pipe, on an error, or when the run no longer reads.
                while readable(&file, || tx.is_closed()) {
                    buf.clear();
                    match rustix::io::read(&file, rustix::buffer::spare_capacity(&mut buf)) {
                        Err(rustix::io::Errno::INTR) => {}
                        Ok(1..) if tx.blocking_send(buf.clone()).is_ok() => {}
                        _ => break,
                    }
                }
            })?;
        Ok(Stdout::Ahead(rx))
    }

    /// The most the pipe and the queue ahead of the caller can hold.
    pub fn most_held(&self) -> usize {
        match self {
            Stdout::Pipe(_) => super::PIPE_BUF_DEFAULT,
            Stdout::Ahead(_) => PIPE_SIZE + QUEUED * super::CHUNK,
        }
    }

    /// The next bytes into `buf` (replacing what it held): how many, 0 at the end. As
    /// cancel-safe as `read`.
    pub async fn read(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        match self {
            Stdout::Pipe(pipe) => super::read_chunk(pipe, buf).await,
            Stdout::Ahead(rx) => {
                *buf = rx.recv().await.unwrap_or_default();
                Ok(buf.len())
            }
        }
    }
}

/// Makes `pipe` take [`PIPE_SIZE`], or the system's bound for a user's pipe where that is
/// lower; past a user's own limit on pipe memory it keeps its size.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn enlarge(pipe: &impl std::os::fd::AsFd) {
    if rustix::pipe::fcntl_setpipe_size(pipe, PIPE_SIZE).is_err() {
        let bound = std::fs::read_to_string("/proc/sys/fs/pipe-max-size");
        if let Some(size) = bound.ok().and_then(|s| s.trim().parse::<usize>().ok()) {
            let _ = rustix::pipe::fcntl_setpipe_size(pipe, size.min(PIPE_SIZE));
        }
    }
}

/// Waits until `file` can be read (or is at its end); false once `gone` says the run no
/// longer reads: a process that left the child's group may hold the pipe open long after,
/// and the thread would wait on it for nothing.
fn readable(file: &std::fs::File, gone: impl Fn() -> bool) -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let every = Timespec {
        tv_sec: 0,
        tv_nsec: 200_000_000,
    };
    loop {
        let mut fds = [PollFd::new(file, PollFlags::IN)];
        match poll(&mut fds, Some(&every)) {
            Ok(0) | Err(rustix::io::Errno::INTR) if !gone() => continue,
            Ok(0) | Err(_) => return false,
            Ok(_) => return true,
        }
    }
}
