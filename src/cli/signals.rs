//! The signals that stop a turn. Ctrl-C (SIGINT) cancels the turn and, in the REPL, returns
//! to the prompt; SIGTERM and SIGHUP (the terminal went away, as when a Termux session is
//! closed) cancel it and end the run, and so does a closed stdout (the reader of the answer
//! went away), as SIGPIPE would but quietly. Either way the backend's process group and any running
//! tool are killed, the cursor is restored and the session saved: the default action of
//! those signals would end agent-loop alone and leave the backend running.
//!
//! The handlers are installed once, when the run starts, and their receivers kept for the
//! whole run, so a signal that arrives between two waits is still seen by the next one.

use tokio::signal::unix::{signal, Signal, SignalKind};

/// Which signal stopped a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Interrupt,
    Terminate,
    Hangup,
    /// Nobody reads stdout any more (its pipe was closed): as SIGPIPE would, quietly.
    Closed,
}

impl Stop {
    /// 128 plus the signal's number, as shells report a process a signal ended.
    pub fn exit_code(self) -> i32 {
        128 + match self {
            Stop::Interrupt => libc::SIGINT,
            Stop::Terminate => libc::SIGTERM,
            Stop::Hangup => libc::SIGHUP,
            Stop::Closed => libc::SIGPIPE,
        }
    }

    /// Whether it ends the run (SIGTERM, SIGHUP) rather than only the turn (Ctrl-C).
    pub fn ends_run(self) -> bool {
        self != Stop::Interrupt
    }

    /// How it is named in messages.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "Ctrl-C",
            Stop::Terminate => "SIGTERM",
            Stop::Hangup => "SIGHUP",
            Stop::Closed => "a closed stdout",
        }
    }
}

/// The receivers of SIGINT, SIGTERM and SIGHUP. One that could not be installed is never
/// seen, and that signal keeps its default action (as all three do before `install`).
#[derive(Default)]
pub struct Signals {
    receivers: Vec<(Stop, Signal)>,
}

impl Signals {
    /// Installs the handlers; call it inside the runtime.
    pub fn install() -> Signals {
        let kinds = [
            (Stop::Interrupt, SignalKind::interrupt()),
            (Stop::Terminate, SignalKind::terminate()),
            (Stop::Hangup, SignalKind::hangup()),
        ];
        Signals {
            receivers: kinds
                .into_iter()
                .filter_map(|(stop, kind)| Some((stop, signal(kind).ok()?)))
                .collect(),
        }
    }

    /// Waits for the next of them.
    pub async fn next(&mut self) -> Stop {
        let waits = self.receivers.iter_mut().map(|(stop, receiver)| {
            let stop = *stop;
            Box::pin(async move {
                receiver.recv().await;
                stop
            })
        });
        let signalled = async {
            if waits.len() == 0 {
                return std::future::pending().await;
            }
            futures_util::future::select_all(waits).await.0
        };
        tokio::select! {
            stop = signalled => stop,
            () = super::stdout::closed() => Stop::Closed,
        }
    }
}
