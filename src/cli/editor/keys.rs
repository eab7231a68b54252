//! The keys a terminal sends, decoded, and the line they edit: shared by the REPL's line
//! editor and the view's input line. The bytes of both forms a terminal may send for a key
//! are taken (`ESC [ A` and `ESC O A` for Up; `ESC [ 1 ~`, `ESC [ H` and `ESC O H` for Home),
//! and those of Termux's extra-keys row (arrows, PgUp, PgDn, Home, End, Tab, Esc) are among
//! them. The line they edit is [`super::line::Line`].

use unicode_width::UnicodeWidthChar;

/// One key, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Char(char),
    /// A bracketed paste: one entry, whatever newlines it holds.
    Paste(String),
    Enter,
    /// Alt-Enter: a newline in the entry, not sent.
    Newline,
    Backspace,
    Delete,
    Left,
    Right,
    WordLeft,
    WordRight,
    Home,
    End,
    Up,
    Down,
    PageUp,
    PageDown,
    Tab,
    /// Alt-Backspace: the word before the cursor killed.
    KillWordLeft,
    /// Alt-D: the word after the cursor killed.
    KillWordRight,
    /// Ctrl-A, Ctrl-E, Ctrl-U, Ctrl-K, Ctrl-W, Ctrl-Y, Ctrl-T, Ctrl-_ (undo), Ctrl-L, Ctrl-R
    /// (search), Ctrl-G (leave it).
    Ctrl(char),
    Interrupt,
    Eof,
    /// Ctrl-Z: agent-loop stops until the shell's `fg`.
    Suspend,
}

/// The bracketed paste's closing bytes.
const PASTE_END: &[u8] = b"\x1b[201~";

/// The most a paste without its end holds before it is taken as it is.
const PASTE_CAP: usize = 1 << 20;

/// Decodes the keys at the start of `bytes`: the keys and how many bytes they took. An
/// escape sequence cut short at the end is left for the next read.
pub fn decode(bytes: &[u8]) -> (Vec<Key>, usize) {
    let mut keys = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match one(&bytes[at..]) {
            Some((key, used)) => {
                keys.extend(key);
                at += used;
            }
            None => break,
        }
    }
    (keys, at)
}

/// The key at the start of `bytes` (`None` in it: bytes that are no key) and how many bytes
/// it took; `None` when there are none, or more are needed.
pub fn next(bytes: &[u8]) -> Option<(Option<Key>, usize)> {
    if bytes.is_empty() {
        return None;
    }
    one(bytes)
}

/// One key at the start of `b`; `None` when more bytes are needed.
fn one(b: &[u8]) -> Option<(Option<Key>, usize)> {
    let key = |k: Key, n: usize| Some((Some(k), n));
    match b[0] {
        b'\r' | b'\n' => key(Key::Enter, 1),
        0x7f | 0x08 => key(Key::Backspace, 1),
        0x03 => key(Key::Interrupt, 1),
        0x04 => key(Key::Eof, 1),
        0x1a => key(Key::Suspend, 1),
        0x10 => key(Key::Up, 1),
        0x0e => key(Key::Down, 1),
        b'\t' => key(Key::Tab, 1),
        // Ctrl-B and Ctrl-F move by a character in the line editor, as in the shells; the view
        // scrolls with them (keyboards without PgUp and PgDn).
        c @ (0x01 | 0x02 | 0x05 | 0x06 | 0x07 | 0x0b | 0x0c | 0x12 | 0x14 | 0x15 | 0x17 | 0x19
        | 0x1f) => key(Key::Ctrl((c + b'@') as char), 1),
        0x1b => escape(b),
        c if c < 0x20 => Some((None, 1)),
        _ => {
            let len = utf8_len(b[0]);
            if b.len() < len {
                return None;
            }
            let c = std::str::from_utf8(&b[..len])
                .ok()
                .and_then(|s| s.chars().next());
            Some((c.map(Key::Char), len))
        }
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

/// An escape sequence: CSI (`ESC [`), SS3 (`ESC O`), or Alt with a key.
fn escape(b: &[u8]) -> Option<(Option<Key>, usize)> {
    let Some(&second) = b.get(1) else {
        // A lone Escape: nothing to do with it.
        return Some((None, 1));
    };
    match second {
        b'[' => csi(b),
        b'O' => {
            let &third = b.get(2)?;
            Some((final_key(third, b""), 3))
        }
        b'\r' | b'\n' => Some((Some(Key::Newline), 2)),
        b'b' => Some((Some(Key::WordLeft), 2)),
        b'f' => Some((Some(Key::WordRight), 2)),
        b'd' => Some((Some(Key::KillWordRight), 2)),
        0x7f | 0x08 => Some((Some(Key::KillWordLeft), 2)),
        _ => Some((None, 2)),
    }
}

fn csi(b: &[u8]) -> Option<(Option<Key>, usize)> {
    let end = b[2..].iter().position(|c| (0x40..=0x7e).contains(c))? + 2;
    let params = &b[2..end];
    let used = end + 1;
    if b[end] == b'~' && params == b"200" {
        // A bracketed paste: everything up to its end, as one key.
        let rest = &b[used..];
        let (stop, end) = match rest.windows(PASTE_END.len()).position(|w| w == PASTE_END) {
            Some(stop) => (stop, PASTE_END.len()),
            // A paste whose end has not come ends at a Ctrl-C typed meanwhile, or at
            // PASTE_CAP: a lost end marker (or `ESC [200~` typed by hand) must not take the
            // prompt, with Ctrl-C and Ctrl-D, into a paste that never ends.
            None => {
                let cut = rest.iter().position(|&c| c == 0x03);
                (cut.or((rest.len() >= PASTE_CAP).then_some(rest.len()))?, 0)
            }
        };
        let text = String::from_utf8_lossy(&rest[..stop]).replace("\r\n", "\n");
        let text = text.replace('\r', "\n");
        return Some((Some(Key::Paste(text)), used + stop + end));
    }
    Some((final_key(b[end], params), used))
}

/// The key of a sequence's final byte and its parameters.
fn final_key(last: u8, params: &[u8]) -> Option<Key> {
    let modified = params.ends_with(b";5") || params.ends_with(b";3");
    Some(match (last, params) {
        (b'A', _) => Key::Up,
        (b'B', _) => Key::Down,
        (b'C', _) if modified => Key::WordRight,
        (b'D', _) if modified => Key::WordLeft,
        (b'C', _) => Key::Right,
        (b'D', _) => Key::Left,
        (b'H', _) => Key::Home,
        (b'F', _) => Key::End,
        (b'~', b"1" | b"7") => Key::Home,
        (b'~', b"4" | b"8") => Key::End,
        (b'~', b"3") => Key::Delete,
        (b'~', b"5") => Key::PageUp,
        (b'~', b"6") => Key::PageDown,
        _ => return None,
    })
}

/// Where each character of `label` then `text` falls, wrapped at `width` columns and at
/// newlines: the rows' texts, and the row and column of byte `cursor` of `text`.
pub fn layout(label: &str, text: &str, cursor: usize, width: usize) -> (Vec<String>, usize, usize) {
    let width = width.max(2);
    let mut rows = vec![String::new()];
    let mut cols = 0;
    let mut at = (0, 0);
    let all = label.char_indices().map(|(_, c)| (None, c));
    let typed = text.char_indices().map(|(i, c)| (Some(i), c));
    for (i, c) in all.chain(typed) {
        if i == Some(cursor) {
            at = (rows.len() - 1, cols);
        }
        if c == '\n' {
            rows.push(String::new());
            cols = 0;
            continue;
        }
        let c = if c.is_control() { ' ' } else { c };
        let w = c.width().unwrap_or(0);
        if cols + w > width {
            rows.push(String::new());
            cols = 0;
        }
        rows.last_mut().expect("never empty").push(c);
        cols += w;
    }
    if cursor >= text.len() {
        at = (rows.len() - 1, cols);
    }
    // The cursor after a full row stands at the start of the next.
    if at.1 >= width {
        rows.push(String::new());
        at = (rows.len() - 1, 0);
    }
    (rows, at.0, at.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_of_the_keys_decode_and_a_cut_sequence_waits() {
        let (keys, used) = decode(b"a\x1b[A\x1bOB\x1b[5~\x1b[6~\x1b[1~\x1b[4~\x1b[3~\r\x1b[");
        assert_eq!(
            keys,
            [
                Key::Char('a'),
                Key::Up,
                Key::Down,
                Key::PageUp,
                Key::PageDown,
                Key::Home,
                Key::End,
                Key::Delete,
                Key::Enter
            ]
        );
        assert_eq!(used, 28);
        let (keys, _) = decode("\x1b[200~one\r\ntwo\x1b[201~é".as_bytes());
        assert_eq!(keys, [Key::Paste("one\ntwo".into()), Key::Char('é')]);
    }

    #[test]
    fn a_paste_without_its_end_gives_way_to_ctrl_c_or_its_cap() {
        let (keys, used) = decode(b"\x1b[200~half a paste\x03");
        assert_eq!(keys[0], Key::Paste("half a paste".into()));
        assert_eq!(keys.len(), 2, "{keys:?}");
        assert_eq!(used, 19);
        // Still waiting for its end, below the cap.
        assert_eq!(decode(b"\x1b[200~more to come").0, []);
        let mut long = b"\x1b[200~".to_vec();
        long.resize(6 + PASTE_CAP, b'x');
        let (keys, used) = decode(&long);
        assert!(
            matches!(&keys[..], [Key::Paste(t)] if t.len() == PASTE_CAP),
            "{}",
            keys.len()
        );
        assert_eq!(used, long.len());
    }

    #[test]
    fn the_input_wraps_with_its_label_and_places_the_cursor() {
        assert_eq!(
            layout("You: ", "abcdef", 6, 8),
            (vec!["You: abc".into(), "def".into()], 1, 3)
        );
        assert_eq!(
            layout("> ", "a\nb", 0, 8),
            (vec!["> a".into(), "b".into()], 0, 2)
        );
        assert_eq!(layout("> ", "abcdef", 6, 8).1, 1);
    }

    #[test]
    fn the_readline_keys_decode() {
        let (keys, _) = decode(b"\x02\x06\x19\x14\x1f\x1bd\x1b\x7f\x1a");
        assert_eq!(
            keys,
            [
                Key::Ctrl('B'),
                Key::Ctrl('F'),
                Key::Ctrl('Y'),
                Key::Ctrl('T'),
                Key::Ctrl('_'),
                Key::KillWordRight,
                Key::KillWordLeft,
                Key::Suspend
            ]
        );
    }
}
