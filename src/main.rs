//! The `agent-loop` binary; everything lives in `cli`.
//!
//! It starts at C's `main` (`#![no_main]`) instead of through Rust's runtime start-up, and
//! does here the two parts of that start-up it needs. The part it skips records where the
//! main thread's stack ends, for the "has overflowed its stack" message: glibc finds that by
//! reading and parsing /proc/self/maps, which took 0.15 ms of every run on the project's
//! machine, before the backend could start. Without it a stack overflow still ends the
//! process (SIGSEGV), only without the message; the parsers and the configuration limit
//! their nesting, so none is expected.

#![cfg_attr(not(test), no_main)]

mod cli;
mod logf;

// Under `cargo test` the harness has its own `main`: this one is then an ordinary function.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[cfg_attr(test, allow(dead_code))]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    standard_fds_open();
    // As Rust's start-up does: a write to a closed pipe is an EPIPE error to handle, not a
    // signal that kills. Children get the default back (std's spawn resets it).
    // SAFETY: no other thread exists yet, and SIG_IGN is a valid disposition.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    agent_loop::on_panic::install_hook();
    // A panic that unwinds (debug builds) ends with 101, as from a Rust `main`; it may not
    // unwind out of this C function.
    let code = std::panic::catch_unwind(cli::main).unwrap_or(101);
    // `exit` flushes stdout, as returning from a Rust `main` would.
    std::process::exit(code)
}

/// As Rust's start-up does: a standard descriptor that is closed (`agent-loop >&-`) is
/// opened on /dev/null, so that no file opened later takes its number and receives what
/// is meant for stdout or stderr.
fn standard_fds_open() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: `fds` is a valid array of three pollfd; a zero timeout never blocks.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } >= 0;
    for pollfd in fds {
        // When poll itself failed (it hardly can), ask about each descriptor.
        let closed = if polled {
            pollfd.revents & libc::POLLNVAL != 0
        } else {
            // SAFETY: F_GETFD only reads the descriptor's flags.
            unsafe { libc::fcntl(pollfd.fd, libc::F_GETFD) == -1 }
        };
        if closed {
            // SAFETY: a constant NUL-terminated path; the lowest free number is the closed one.
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        }
    }
}
