//! The line editor at the REPL's prompt (with the terminfo display), and what it shares with
//! the view's input line: the keys ([`keys`]), the history ([`history`]), Tab's completions
//! ([`complete`]) and the terminal's modes ([`term`]).
//!
//! agent-loop edits lines itself rather than through rustyline, reedline or termwiz: the
//! view's input line is drawn at a fixed place while a turn streams above it and reads keys
//! during the turn (PgUp), which none of them can do, and the REPL's editor must be the same
//! editor, with the same keys and history. The editor is a byte loop on the decoder the view
//! already had; every sequence it writes comes from the terminfo entry.
//!
//! Keys are read on a thread of their own that reads stdin for the whole run, so that a turn
//! (the terminal in its ordinary mode between prompts) and an approval question see what was
//! typed meanwhile, as the plain reading does. The terminal is in key-at-a-time mode only
//! while an entry is being edited, and is given back when the entry is done, when a signal
//! ends the wait (the entry's future is dropped), or by the panic hook.
//!
//! While an entry is edited the terminal sends no signals for keys (Ctrl-C and Ctrl-D are
//! keys here), so the editor does what the terminal would: Ctrl-Z gives the terminal back
//! and stops agent-loop's process group, as the shell's job control expects, and `fg` finds
//! the entry drawn again; a resize (SIGWINCH) redraws it at once for the new width.

pub mod complete;
mod draw;
pub mod history;
pub mod keys;
pub mod line;
mod reader;
pub mod term;

use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;

use super::display::Caps;
use complete::{Completed, Completer};
use history::{History, Search, Searched};
use keys::Key;
use line::Line;

/// The editor of the REPL's entries.
pub struct Editor {
    caps: Caps,
    bytes: Option<mpsc::UnboundedReceiver<Vec<u8>>>,
    /// Read but not yet used: keys typed ahead of the next entry.
    pending: Vec<u8>,
    pub history: History,
    pub completer: Completer,
    /// The row the cursor is on, counted from the first row drawn.
    cursor_row: usize,
    /// The entry's first row drawn (an entry taller than the screen is drawn in part).
    top: usize,
    shown: Option<draw::Shown>,
    /// SIGWINCH, watched from the first entry on.
    winch: Option<Signal>,
    /// The last entry's line, emptied: what it killed is there for Ctrl-Y in the next.
    last: Line,
}

/// What ended a wait for keys.
enum Woke {
    Typed,
    Resized,
}

impl Editor {
    /// An editor on `caps`, if the entry can redraw lines in place (`cr`, `el`, `ed`, `cuu1`).
    pub fn new(caps: Caps) -> Option<Editor> {
        if !caps.can_redraw_lines() || caps.ed.is_none() {
            return None;
        }
        Some(Editor {
            caps,
            bytes: None,
            pending: Vec::new(),
            history: History::default(),
            completer: Completer::default(),
            cursor_row: 0,
            top: 0,
            shown: None,
            winch: None,
            last: Line::default(),
        })
    }

    /// The next bytes typed; `None` at the end of input.
    async fn more(&mut self) -> Option<()> {
        let bytes = self.bytes.get_or_insert_with(reader::spawn).recv().await?;
        self.pending.extend_from_slice(&bytes);
        Some(())
    }

    /// The next bytes typed, or a resize; `None` at the end of input.
    async fn typed_or_resized(&mut self) -> Option<Woke> {
        if self.winch.is_none() {
            self.winch = signal(SignalKind::window_change()).ok();
        }
        let bytes = self.bytes.get_or_insert_with(reader::spawn);
        let typed = match &mut self.winch {
            Some(winch) => tokio::select! {
                typed = bytes.recv() => typed,
                _ = winch.recv() => return Some(Woke::Resized),
            },
            None => bytes.recv().await,
        };
        self.pending.extend_from_slice(&typed?);
        Some(Woke::Typed)
    }

    /// A line answered in the terminal's ordinary mode (an approval question): up to a
    /// newline. `None` at the end of input.
    pub async fn line(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line[..end]).into_owned();
                return Some(line.trim_end_matches('\r').to_string());
            }
            if self.more().await.is_none() {
                let rest = std::mem::take(&mut self.pending);
                return (!rest.is_empty()).then(|| String::from_utf8_lossy(&rest).into_owned());
            }
        }
    }

    /// What the terminal's line mode still holds, taken by the reader before the terminal
    /// leaves it ([`term::line_mode_input_waits`]); `None` if it held the end of input.
    async fn take_line_mode_input(&mut self) -> Option<()> {
        while term::line_mode_input_waits() {
            self.more().await?;
        }
        Some(())
    }

    /// Drops what was typed ahead.
    pub fn discard(&mut self) {
        self.pending.clear();
        if let Some(bytes) = &mut self.bytes {
            while bytes.try_recv().is_ok() {}
        }
    }

    /// One entry, edited after `label`: `None` at Ctrl-D on an empty line or the end of
    /// input. A line ending in `\`, or a block opened by a `"""` line, goes on to a next line
    /// until it is closed. Ctrl-C clears the line; on an empty one it is agent-loop's SIGINT.
    pub async fn entry(&mut self, label: &str) -> Option<String> {
        self.take_line_mode_input().await?;
        let mut raw = Raw::enter(&self.caps);
        let mut line = std::mem::take(&mut self.last);
        let mut search: Option<Box<Search>> = None;
        let mut tabbed = false;
        self.cursor_row = 0;
        self.top = 0;
        self.shown = None;
        self.draw(label, &line);
        loop {
            while let Some((key, used)) = keys::next(&self.pending) {
                self.pending.drain(..used);
                let Some(key) = key else { continue };
                let was_tab = std::mem::take(&mut tabbed);
                if let Some(s) = search.take() {
                    match s.key(&self.history, &key) {
                        Ok(s) => {
                            let (label, shown) = s.shown();
                            self.draw(&label, &shown);
                            search = Some(s);
                            continue;
                        }
                        Err(Searched::Cancel(before)) => {
                            line = before;
                            self.draw(label, &line);
                            continue;
                        }
                        Err(Searched::Accept(found)) => {
                            self.history.end_recall();
                            line = found;
                        }
                    }
                }
                match key {
                    Key::Enter => match finished(&line.text) {
                        Some(entry) => {
                            line.cursor = line.text.len();
                            self.draw_whole(label, &line);
                            draw::write(b"\n");
                            self.history.keep(&entry);
                            line.take();
                            self.last = line;
                            return Some(entry);
                        }
                        None => {
                            let end = line.text.len();
                            let from = end - usize::from(line.text.ends_with('\\'));
                            line.replace(from..end, "\n");
                        }
                    },
                    Key::Eof if line.text.is_empty() => return None,
                    Key::Eof => {
                        line.edit(&Key::Delete);
                    }
                    Key::Interrupt if line.text.is_empty() => {
                        // The signal may end this entry unfinished: what was killed stays,
                        // and nothing else (its undo steps would bring the line back).
                        self.last = line.clone();
                        self.last.take();
                        let me = rustix::process::getpid();
                        let _ = rustix::process::kill_process(me, rustix::process::Signal::INT);
                    }
                    Key::Interrupt => {
                        line.take();
                        self.history.end_recall();
                    }
                    Key::Suspend => raw = self.suspend(raw, label, &line).await,
                    Key::Up | Key::Down => self.history.up_down(&mut line, key == Key::Up),
                    Key::Ctrl('R') => {
                        let s = Box::new(Search::new(line.clone()));
                        let (label, shown) = s.shown();
                        self.draw(&label, &shown);
                        search = Some(s);
                        continue;
                    }
                    Key::Ctrl('L') => {
                        self.clear_screen();
                    }
                    Key::Tab => match self.completer.complete(&mut line) {
                        Completed::Edited => {}
                        Completed::Choices(choices) if was_tab && !choices.is_empty() => {
                            self.list(label, &line, &choices);
                        }
                        Completed::Choices(_) => tabbed = true,
                    },
                    key => {
                        line.edit(&key);
                    }
                }
                self.draw(label, &line);
            }
            if let Woke::Resized = self.typed_or_resized().await? {
                self.redraw();
            }
        }
    }
}

impl Editor {
    /// Ctrl-Z: the entry left whole above the cursor, the terminal given back (`raw`
    /// dropped), agent-loop's process group stopped as the terminal's own Ctrl-Z stops it;
    /// at `fg`, key-at-a-time mode again (returned) and the entry drawn anew below the
    /// shell's lines.
    async fn suspend(&mut self, raw: Raw, label: &str, line: &Line) -> Raw {
        let mut end = line.clone();
        end.cursor = end.text.len();
        self.draw_whole(label, &end);
        draw::write(b"\r\n");
        drop(raw);
        // Made before the stop, so that the SIGCONT of `fg` is not missed.
        let resumed = signal(SignalKind::from_raw(rustix::process::Signal::CONT.as_raw()));
        let _ = rustix::process::kill_current_process_group(rustix::process::Signal::TSTP);
        // The stop comes as the signal is sent; in a process group no shell watches (an
        // orphaned one) it never comes, and the entry is taken up again shortly.
        if let Ok(mut resumed) = resumed {
            let bound = std::time::Duration::from_millis(200);
            let _ = tokio::time::timeout(bound, resumed.recv()).await;
        }
        let raw = Raw::enter(&self.caps);
        self.cursor_row = 0;
        self.top = 0;
        self.shown = None;
        raw
    }
}

/// The entry `text` makes when Enter is pressed; `None` while it goes on to a next line (it
/// ends in `\`, or a `"""` block is open).
fn finished(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    if lines[0].trim() == "\"\"\"" {
        let closed = lines.len() >= 2 && lines[lines.len() - 1].trim() == "\"\"\"";
        return closed.then(|| lines[1..lines.len() - 1].join("\n"));
    }
    (!text.ends_with('\\')).then(|| text.to_string())
}

/// The terminal in key-at-a-time mode with bracketed paste on, for as long as it lives.
struct Raw {
    paste_off: Vec<u8>,
}

impl Raw {
    fn enter(caps: &Caps) -> Raw {
        let paste_off = caps.paste_off.clone().unwrap_or_default();
        term::enter(paste_off.clone());
        if caps.paste_off.is_some() {
            draw::write(caps.paste_on.as_deref().unwrap_or_default());
        }
        Raw { paste_off }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        draw::write(&self.paste_off);
        term::leave(false);
    }
}

#[cfg(test)]
mod tests {
    use super::finished;

    #[test]
    fn backslash_lines_and_quoted_blocks_go_on_until_closed() {
        assert_eq!(finished("one"), Some("one".into()));
        assert_eq!(finished("one\\"), None);
        assert_eq!(finished("one\ntwo"), Some("one\ntwo".into()));
        assert_eq!(finished("\"\"\""), None);
        assert_eq!(finished("\"\"\"\na\nb"), None);
        assert_eq!(finished("\"\"\"\na\nb\n\"\"\""), Some("a\nb".into()));
    }
}
