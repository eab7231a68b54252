//! The full terminal parser (vte, the state machine of the DEC ANSI parser) for the lines
//! the fast path of `ansi.rs` does not know: DCS strings, sequences cut short, control bytes
//! inside a sequence. It strips as the fast path does (only text, `\n` and `\t` kept; DEL
//! and C1 controls removed) and hands back at the first line end where the parser is
//! between sequences, so a line feed inside a CSI is executed and the CSI's tail is not
//! shown as text.

use vte::{Params, Parser, Perform};

/// Characters dropped although vte prints them: DEL (C1 controls it executes).
pub fn is_dropped(c: char) -> bool {
    c == '\x7f'
}

/// Whether the parser is surely between sequences, told by what it reports: it leaves that
/// state only at ESC (input is valid UTF-8, so an 8-bit C1 byte never starts a sequence),
/// which the feeder reports; printing, a dispatched CSI or escape, a BEL-ended OSC and
/// CAN/SUB mean it is back. A sequence vte ends without a word (a CSI it ignores) keeps
/// the parser here longer, never too short.
pub trait Ground {
    fn set_ground(&mut self, ground: bool);
}

/// Feeds `chunk` to the parser, telling `performer` before each ESC that a sequence starts.
pub fn feed<P: Perform + Ground>(parser: &mut Parser, performer: &mut P, chunk: &[u8]) {
    let mut j = 0;
    while j < chunk.len() {
        let next = memchr::memchr(0x1b, &chunk[j + 1..]).map_or(chunk.len(), |p| j + 1 + p);
        if chunk[j] == 0x1b {
            performer.set_ground(false);
        }
        parser.advance(performer, &chunk[j..next]);
        j = next;
    }
}

/// Strips `bytes[start..]` (valid UTF-8, `start` at an ESC the fast path could not read)
/// into `out`, a line at a time, up to a line end where the parser is between sequences
/// (or the end): where the fast path goes on.
pub fn strip(bytes: &[u8], start: usize, out: &mut Vec<u8>) -> usize {
    let mut parser = Parser::new();
    let mut plain = Plain { out, ground: true };
    let mut i = start;
    while i < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p + 1);
        feed(&mut parser, &mut plain, &bytes[i..end]);
        i = end;
        if plain.ground {
            break;
        }
    }
    i
}

/// Text and the kept control bytes, into `out`.
struct Plain<'a> {
    out: &'a mut Vec<u8>,
    ground: bool,
}

impl Ground for Plain<'_> {
    fn set_ground(&mut self, ground: bool) {
        self.ground = ground;
    }
}

impl Perform for Plain<'_> {
    fn print(&mut self, c: char) {
        self.ground = true;
        if !is_dropped(c) {
            self.out
                .extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | b'\t' => self.out.push(byte),
            0x18 | 0x1a => self.ground = true,
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, _: &Params, _: &[u8], _: bool, _: char) {
        self.ground = true;
    }

    fn esc_dispatch(&mut self, _: &[u8], _: bool, _: u8) {
        self.ground = true;
    }

    fn osc_dispatch(&mut self, _: &[&[u8]], bell_terminated: bool) {
        self.ground = bell_terminated;
    }
}

/// All of `bytes` (valid UTF-8) through the parser: what the fast path is tested against.
#[cfg(test)]
pub fn strip_all(bytes: &[u8]) -> String {
    let mut out = Vec::new();
    let mut parser = Parser::new();
    let mut plain = Plain {
        out: &mut out,
        ground: true,
    };
    feed(&mut parser, &mut plain, bytes);
    String::from_utf8(out).expect("vte prints whole characters")
}
