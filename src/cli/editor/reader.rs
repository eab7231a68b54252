//! The thread that reads what is typed for the rest of the run, and hands it on in chunks as
//! it comes. Its reads go to the terminal in whatever mode the editor left it: key at a time
//! while an entry is edited, the ordinary line mode while a turn runs.
//!
//! Each read is begun only once poll(2) says there is something to read. A read begun in
//! key-at-a-time mode keeps waiting for at least one byte even after the terminal is back in
//! line mode, so the end of input typed during a turn (Ctrl-D, which line mode gives as a read
//! of no bytes) was swallowed by it and the REPL never left. Begun after poll, the read is
//! begun in the mode the Ctrl-D was typed in.

use std::os::fd::AsFd;

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use tokio::sync::mpsc;

/// Starts the thread; the receiver closes at the end of input.
pub fn spawn() -> mpsc::UnboundedReceiver<Vec<u8>> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let fd = stdin.as_fd();
        let mut buf = [0u8; 4096];
        loop {
            let mut ready = [PollFd::new(&fd, PollFlags::IN)];
            match rustix::event::poll(&mut ready, None) {
                Ok(_) | Err(Errno::INTR) => {}
                Err(_) => break,
            }
            match rustix::io::read(fd, &mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
                Err(Errno::INTR | Errno::AGAIN) => {}
                Err(_) => break,
            }
        }
    });
    rx
}
