//! The terminal's own state while the view runs, or the REPL's editor edits an entry: its
//! input modes (keys one at a time, not echoed, Ctrl-C and Ctrl-D read as keys) and what
//! gives it back. Giving back is kept here, beside a panic hook, because a panic may unwind
//! on any thread and the own exit path may then never run: the hook puts the modes back and
//! writes the bytes that reset the screen (the view's scroll region whole, attributes off,
//! cursor shown, main screen; the editor's bracketed paste off) before the panic's message,
//! so the message is readable and the shell usable.

use std::io::Write;
use std::sync::{Mutex, Once, PoisonError};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::termios::{self, InputModes, LocalModes, OptionalActions, SpecialCodeIndex, Termios};

/// What leaving gives back: the modes the terminal had, the bytes that reset its screen.
struct Restore {
    modes: Option<Termios>,
    bytes: Vec<u8>,
}

static RESTORE: Mutex<Option<Restore>> = Mutex::new(None);
static HOOK: Once = Once::new();

/// Puts the terminal on stdin in key-at-a-time mode and remembers how to give it back
/// (`reset`: the bytes that reset the screen). Output processing stays as it was, so a
/// newline still starts a line.
pub fn enter(reset: Vec<u8>) {
    let stdin = std::io::stdin();
    let modes = termios::tcgetattr(&stdin).ok();
    if let Some(old) = &modes {
        let mut raw = old.clone();
        raw.local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG | LocalModes::IEXTEN);
        // Ctrl-S and Ctrl-Q are keys, not flow control.
        raw.input_modes.remove(InputModes::IXON);
        raw.special_codes[SpecialCodeIndex::VMIN] = 1;
        raw.special_codes[SpecialCodeIndex::VTIME] = 0;
        let _ = termios::tcsetattr(&stdin, OptionalActions::Now, &raw);
    }
    *lock() = Some(Restore {
        modes,
        bytes: reset,
    });
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            leave(true);
            previous(info);
        }));
    });
}

/// Gives the terminal its modes back, once; `reset`: and writes the reset bytes to stderr
/// (the panic hook; the view writes them itself, through its own writer).
pub fn leave(reset: bool) {
    let Some(restore) = lock().take() else { return };
    if reset {
        let mut err = std::io::stderr();
        let _ = err.write_all(&restore.bytes);
        let _ = err.flush();
    }
    if let Some(modes) = restore.modes {
        let _ = termios::tcsetattr(std::io::stdin(), OptionalActions::Now, &modes);
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<Restore>> {
    RESTORE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the terminal's line mode holds a finished line or an end of input (Ctrl-D) that
/// no read has taken yet. Taken before key-at-a-time mode begins, because the switch turns a
/// pending end of input into a NUL byte, which the editor cannot tell from Ctrl-@: a Ctrl-D
/// typed as a turn ended would then do nothing.
pub fn line_mode_input_waits() -> bool {
    let stdin = std::io::stdin();
    let mut ready = [PollFd::new(&stdin, PollFlags::IN)];
    matches!(rustix::event::poll(&mut ready, Some(&Timespec::default())), Ok(n) if n > 0)
}

/// Columns and rows of the terminal on stderr, where the view is drawn.
pub fn size() -> Option<(usize, usize)> {
    let size = termios::tcgetwinsize(std::io::stderr()).ok()?;
    (size.ws_col > 0 && size.ws_row > 0)
        .then_some((usize::from(size.ws_col), usize::from(size.ws_row)))
}
