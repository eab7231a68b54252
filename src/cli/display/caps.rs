//! The control sequences the terminfo display may write, read from the terminfo entry of
//! `$TERM` and nothing else. A capability the entry lacks is `None`, and the feature that
//! needs it is switched off rather than guessed: no `el` means no in-place redraw, no
//! `setaf`/`sgr0` means no colour.

use terminfo::{capability as cap, Database, Expand};

/// The standard colours of `setaf` used for roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    Red = 1,
    Green = 2,
    Yellow = 3,
    Blue = 4,
    Cyan = 6,
}

/// The capabilities of one terminfo entry, padding removed, ready to write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caps {
    /// The entry's name, for messages.
    pub name: String,
    pub cr: Option<Vec<u8>>,
    pub el: Option<Vec<u8>>,
    pub cuu1: Option<Vec<u8>>,
    pub civis: Option<Vec<u8>>,
    pub cnorm: Option<Vec<u8>>,
    pub bold: Option<Vec<u8>>,
    pub sgr0: Option<Vec<u8>>,
    /// `setaf` still holding its parameter; expanded per colour.
    pub setaf: Option<Vec<u8>>,
    pub colors: i32,
    /// `cols` of the entry: the width when the terminal cannot be asked.
    pub cols: Option<usize>,
    /// `lines` of the entry: the height when the terminal cannot be asked.
    pub lines: Option<usize>,
    /// What the view needs ([`Caps::view_missing`]): `cup` and `csr` still holding their
    /// parameters, `ed`, `ind`.
    pub cup: Option<Vec<u8>>,
    pub csr: Option<Vec<u8>>,
    pub ed: Option<Vec<u8>>,
    pub ind: Option<Vec<u8>>,
    /// What the view uses when the entry has it: the alternate screen, reverse video for the
    /// status line, bracketed paste (`BE`/`BD`, ncurses' extended names).
    pub smcup: Option<Vec<u8>>,
    pub rmcup: Option<Vec<u8>>,
    pub rev: Option<Vec<u8>>,
    pub paste_on: Option<Vec<u8>>,
    pub paste_off: Option<Vec<u8>>,
}

impl Caps {
    /// Loads the entry named `term` from the terminfo database (`TERMINFO`, `TERMINFO_DIRS`,
    /// `~/.terminfo`, `$PREFIX/share/terminfo` on Termux, then the system folders).
    pub fn load(term: &str) -> Result<Caps, String> {
        let db = Database::from_name(term)
            .map_err(|e| format!("no usable terminfo entry for TERM={term}: {e}"))?;
        Ok(Caps::from_database(&db))
    }

    pub fn from_database(db: &Database) -> Caps {
        fn bytes<C: AsRef<[u8]>>(c: Option<C>) -> Option<Vec<u8>> {
            c.map(|c| without_padding(c.as_ref()))
                .filter(|b| !b.is_empty())
        }
        Caps {
            name: db.name().to_string(),
            cr: bytes(db.get::<cap::CarriageReturn>()),
            el: bytes(db.get::<cap::ClrEol>()),
            cuu1: bytes(db.get::<cap::CursorUp>()),
            civis: bytes(db.get::<cap::CursorInvisible>()),
            cnorm: bytes(db.get::<cap::CursorNormal>()),
            bold: bytes(db.get::<cap::EnterBoldMode>()),
            sgr0: bytes(db.get::<cap::ExitAttributeMode>()),
            setaf: bytes(db.get::<cap::SetAForeground>()),
            colors: db.get::<cap::MaxColors>().map_or(0, |c| c.0),
            cols: db
                .get::<cap::Columns>()
                .and_then(|c| usize::try_from(c.0).ok()),
            lines: db
                .get::<cap::Lines>()
                .and_then(|c| usize::try_from(c.0).ok()),
            cup: bytes(db.get::<cap::CursorAddress>()),
            csr: bytes(db.get::<cap::ChangeScrollRegion>()),
            ed: bytes(db.get::<cap::ClrEos>()),
            ind: bytes(db.get::<cap::ScrollForward>()),
            smcup: bytes(db.get::<cap::EnterCaMode>()),
            rmcup: bytes(db.get::<cap::ExitCaMode>()),
            rev: bytes(db.get::<cap::EnterReverseMode>()),
            paste_on: extended(db, "BE"),
            paste_off: extended(db, "BD"),
        }
    }

    /// Drops every colour and attribute (`NO_COLOR`).
    pub fn without_colour(mut self) -> Caps {
        self.setaf = None;
        self.bold = None;
        self.rev = None;
        self
    }

    /// The first capability the view needs that the entry lacks: it places the cursor
    /// (`cup`), scrolls the conversation alone (`csr`, `ind`), clears (`el`, `ed`), starts
    /// lines (`cr`) and resets attributes (`sgr0`).
    pub fn view_missing(&self) -> Option<&'static str> {
        [
            ("cup", &self.cup),
            ("csr", &self.csr),
            ("el", &self.el),
            ("ed", &self.ed),
            ("ind", &self.ind),
            ("cr", &self.cr),
            ("sgr0", &self.sgr0),
        ]
        .into_iter()
        .find_map(|(name, cap)| cap.is_none().then_some(name))
    }

    /// `cap` expanded with two numbers (`cup` row and column, `csr` top and bottom row),
    /// counted from 0; nothing if the entry lacks it.
    pub fn expand2(cap: &Option<Vec<u8>>, a: usize, b: usize, out: &mut Vec<u8>) {
        let Some(cap) = cap.as_deref() else { return };
        let number = |n: usize| terminfo::expand::Parameter::Number(i32::try_from(n).unwrap_or(0));
        let _ = cap.expand(out, &[number(a), number(b)], &mut Default::default());
    }

    /// A line can be rewritten in place: back to its start, then clear it.
    pub fn can_redraw(&self) -> bool {
        self.cr.is_some() && self.el.is_some()
    }

    /// Several lines can be rewritten in place (the `--tail` view).
    pub fn can_redraw_lines(&self) -> bool {
        self.can_redraw() && self.cuu1.is_some()
    }

    /// The cursor can be hidden, and shown again.
    pub fn can_hide_cursor(&self) -> bool {
        self.civis.is_some() && self.cnorm.is_some()
    }

    /// The sequence that starts `colour`, if the entry can both set and reset it.
    pub fn colour(&self, colour: Colour) -> Option<Vec<u8>> {
        self.sgr0.as_ref()?;
        if self.colors <= colour as i32 {
            return None;
        }
        let mut out = Vec::new();
        let params = [terminfo::expand::Parameter::Number(colour as i32)];
        self.setaf
            .as_deref()?
            .expand(&mut out, &params, &mut Default::default())
            .ok()?;
        Some(out)
    }

    /// The sequence that starts bold, if the entry can both set and reset it.
    pub fn bold(&self) -> Option<Vec<u8>> {
        self.sgr0.as_ref()?;
        self.bold.clone()
    }
}

/// A string capability of ncurses' extended names (`BE`, bracketed paste on).
fn extended(db: &Database, name: &str) -> Option<Vec<u8>> {
    match db.raw(name)? {
        terminfo::Value::String(s) => Some(without_padding(s)).filter(|b| !b.is_empty()),
        _ => None,
    }
}

/// Removes `$<5>`-style padding: delays for hardware terminals, which a terminal emulator
/// would show as text and the terminfo crate does not interpret.
fn without_padding(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with(b"$<") {
            if let Some(end) = s[i..].iter().position(|&b| b == b'>') {
                let inner = &s[i + 2..i + end];
                if inner
                    .iter()
                    .all(|b| b.is_ascii_digit() || b"./*".contains(b))
                {
                    i += end + 1;
                    continue;
                }
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
impl Caps {
    /// The capabilities of a made-up entry holding `caps` and `colors` colours, for the
    /// displays' tests.
    pub(crate) fn of_entry(caps: &[(&str, &str)], colors: i32) -> Caps {
        let mut db = Database::new();
        db.name("test-entry");
        for (name, value) in caps {
            db.raw(name, *value);
        }
        db.raw("colors", colors);
        Caps::from_database(&db.build().unwrap())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(caps: &[(&str, &str)], colors: i32) -> Caps {
        Caps::of_entry(caps, colors)
    }

    #[test]
    fn reads_capabilities_and_expands_setaf() {
        let caps = entry(
            &[
                ("cr", "<cr>"),
                ("el", "<el$<3>>"),
                ("setaf", "<fg%p1%d>"),
                ("sgr0", "<sgr0>"),
                ("bold", "<b>"),
            ],
            8,
        );
        assert_eq!(caps.name, "test-entry");
        assert_eq!(caps.el.as_deref(), Some(&b"<el>"[..]));
        assert!(caps.can_redraw() && !caps.can_redraw_lines() && !caps.can_hide_cursor());
        assert_eq!(caps.colour(Colour::Cyan), Some(b"<fg6>".to_vec()));
        assert_eq!(caps.bold(), Some(b"<b>".to_vec()));
        let plain = caps.without_colour();
        assert_eq!((plain.colour(Colour::Red), plain.bold()), (None, None));
    }

    #[test]
    fn missing_capabilities_switch_features_off() {
        // Colours without a way to reset them, or beyond the entry's count, are not used.
        let no_reset = entry(&[("setaf", "<fg%p1%d>"), ("bold", "<b>")], 8);
        assert_eq!(
            (no_reset.colour(Colour::Red), no_reset.bold()),
            (None, None)
        );
        let mono = entry(&[("setaf", "<fg%p1%d>"), ("sgr0", "<0>")], 2);
        assert_eq!(mono.colour(Colour::Green), None);
        assert_eq!(mono.colour(Colour::Red), Some(b"<fg1>".to_vec()));
        let no_el = entry(&[("cr", "\r")], 0);
        assert!(!no_el.can_redraw());
    }

    #[test]
    fn padding_is_removed_and_other_text_kept() {
        assert_eq!(without_padding(b"\x1b[K$<3/>x$<1.5*>"), b"\x1b[Kx");
        assert_eq!(without_padding(b"$<not padding>"), b"$<not padding>");
    }
}
