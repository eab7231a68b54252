//! The one writer of what agent-loop prints on stdout. A reader that has read enough closes
//! the pipe (`agent-loop config | head -1`): the output ends there, quietly, and a command
//! that would have exited 0 exits 141 ([`was_closed`]), as SIGPIPE ends other Unix tools
//! (`cat big | head -c 10`): a script learns that its output was not all read, whether the
//! pipe closed during a turn or during the answer's last write. A turn whose answer nobody
//! reads any more (`agent-loop TASK | head -1`) is stopped as a signal would stop it
//! ([`closed`]): its backend and tools would otherwise run on, spending tokens and changing
//! files for nobody. Any other failure to write (a full disk) is an error that names stdout.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use agent_loop::{Error, ErrorKind};
use tokio::sync::Notify;

/// Set once a write found the pipe closed: nothing more is written.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Wakes whoever waits in [`closed`].
fn notify() -> &'static Notify {
    static NOTIFY: OnceLock<Notify> = OnceLock::new();
    NOTIFY.get_or_init(Notify::new)
}

/// Resolves once a write found stdout's pipe closed (at once if one did already).
pub async fn closed() {
    let woken = notify().notified();
    if CLOSED.load(Ordering::SeqCst) {
        return;
    }
    woken.await;
}

/// Whether a write found stdout's pipe closed: what was to be printed was not all read.
pub fn was_closed() -> bool {
    CLOSED.load(Ordering::SeqCst)
}

fn mark_closed() {
    CLOSED.store(true, Ordering::SeqCst);
    notify().notify_waiters();
}

/// stdout for the displays: a closed pipe ends the output quietly (see the module doc).
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if CLOSED.load(Ordering::SeqCst) {
            return Ok(bytes.len());
        }
        match std::io::stdout().write(bytes) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                mark_closed();
                Ok(bytes.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if CLOSED.load(Ordering::SeqCst) {
            return Ok(());
        }
        match std::io::stdout().flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                mark_closed();
                Ok(())
            }
            other => other,
        }
    }
}

/// Writes `text` to stdout, whole, and flushes it.
pub fn print(text: &str) -> Result<(), Error> {
    write_to(&mut std::io::stdout().lock(), text.as_bytes())
}

fn write_to(out: &mut impl Write, bytes: &[u8]) -> Result<(), Error> {
    if CLOSED.load(Ordering::SeqCst) {
        return Ok(());
    }
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            mark_closed();
            Ok(())
        }
        Err(e) => Err(Error::new(
            ErrorKind::Io,
            format!("cannot write to stdout: {e}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that fails every write with `kind`.
    struct Failing(std::io::ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_full_disk_is_an_error_that_names_stdout() {
        let err = write_to(&mut Failing(std::io::ErrorKind::StorageFull), b"x").unwrap_err();
        assert!(
            err.message.contains("cannot write to stdout"),
            "{}",
            err.message
        );
    }
}
