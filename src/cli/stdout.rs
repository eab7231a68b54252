//! The one writer of what the subcommands print on stdout. A reader that has read enough
//! closes the pipe (`agent-loop config | head -1`): the output ends there, quietly, and the
//! command exits as it would have, as other Unix tools do. Any other failure to write (a full
//! disk) is an error that names stdout.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_loop::{Error, ErrorKind};

/// Set once a write found the pipe closed: nothing more is written.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout, whole, and flushes it.
pub fn print(text: &str) -> Result<(), Error> {
    write_to(&mut std::io::stdout().lock(), text.as_bytes())
}

fn write_to(out: &mut impl Write, bytes: &[u8]) -> Result<(), Error> {
    if CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
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
