//! Lines typed by the user, read on a thread of their own so the REPL can wait for a line and
//! for Ctrl-C at the same time. The thread starts at the first read: a one-shot run that asks
//! nothing never pays for it. With the terminfo display, entries are edited by the line
//! editor ([`Editor`]); with the plain display (a `dumb` or unknown `TERM`, or chosen) lines
//! are read as the terminal's own line discipline gives them, byte for byte as typed.

use std::io::{BufRead, IsTerminal};

use tokio::sync::mpsc;

use super::editor::Editor;

pub struct Input {
    lines: Option<mpsc::UnboundedReceiver<String>>,
    /// The line editor, when the REPL has one.
    pub editor: Option<Editor>,
    /// Whether a person can answer (stdin is a terminal).
    pub interactive: bool,
}

impl Input {
    pub fn stdin() -> Self {
        Input {
            lines: None,
            editor: None,
            interactive: std::io::stdin().is_terminal(),
        }
    }

    /// Entries typed at the view's input line.
    pub fn entries(lines: mpsc::UnboundedReceiver<String>) -> Self {
        Input {
            lines: Some(lines),
            editor: None,
            interactive: true,
        }
    }

    fn reader() -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
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
        rx
    }

    /// Throws away whatever was typed but not yet read (typeahead), so that a `y` typed while
    /// the backend ran cannot answer a question asked after it: the terminal's pending input
    /// is flushed, and lines the reader thread already took are dropped.
    pub fn discard_typeahead(&mut self) {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            // Not a terminal any more (closed, redirected): nothing pending to drop.
            let _ = rustix::termios::tcflush(&stdin, rustix::termios::QueueSelector::IFlush);
        }
        if let Some(lines) = &mut self.lines {
            while lines.try_recv().is_ok() {}
        }
        if let Some(editor) = &mut self.editor {
            editor.discard();
        }
    }

    /// The next line, or `None` at end of input (Ctrl-D).
    pub async fn line(&mut self) -> Option<String> {
        if let Some(editor) = &mut self.editor {
            return editor.line().await;
        }
        self.lines.get_or_insert_with(Self::reader).recv().await
    }
}

impl Input {
    /// One entry of the REPL, typed after `label`: a line; or lines joined while each ends in
    /// `\`; or everything between two lines that hold only `"""`. Without the editor, `more`
    /// is called before each further line. `None` at end of input.
    pub async fn entry(&mut self, label: &str, more: &mut dyn FnMut()) -> Option<String> {
        if let Some(editor) = &mut self.editor {
            return editor.entry(label).await;
        }
        let first = self.line().await?;
        if first.trim() == "\"\"\"" {
            let mut block = Vec::new();
            loop {
                more();
                match self.line().await {
                    Some(line) if line.trim() == "\"\"\"" => break,
                    Some(line) => block.push(line),
                    None => break,
                }
            }
            return Some(block.join("\n"));
        }
        let mut text = first;
        while text.ends_with('\\') {
            text.pop();
            text.push('\n');
            more();
            match self.line().await {
                Some(line) => text.push_str(&line),
                None => break,
            }
        }
        Some(text)
    }
}
