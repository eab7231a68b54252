//! Lines typed by the user, read on a thread of their own so the REPL can wait for a line and
//! for Ctrl-C at the same time.

use std::io::{BufRead, IsTerminal};

use tokio::sync::mpsc;

pub struct Input {
    lines: mpsc::UnboundedReceiver<String>,
    /// Whether a person can answer (stdin is a terminal).
    pub interactive: bool,
}

impl Input {
    pub fn stdin() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let interactive = std::io::stdin().is_terminal();
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let mut lock = stdin.lock();
            loop {
                let mut line = String::new();
                match lock.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = line.trim_end_matches(['\n', '\r']).to_string();
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Input {
            lines: rx,
            interactive,
        }
    }

    /// The next line, or `None` at end of input (Ctrl-D).
    pub async fn line(&mut self) -> Option<String> {
        self.lines.recv().await
    }
}
