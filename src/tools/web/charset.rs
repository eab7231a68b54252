//! Page bytes as text: a byte order mark wins, then the `Content-Type` charset, then (for
//! HTML) a `<meta charset>` in the first 1024 bytes, else UTF-8; malformed bytes become
//! U+FFFD. UTF-8, UTF-16 and windows-1252 are decoded (the HTML standard reads every
//! ISO-8859-1, Latin-1 and ASCII label as windows-1252): together nearly every page on the
//! web. Other legacy charsets (Shift_JIS, GBK, KOI8-R...) are read as UTF-8 with a note:
//! their decoders (encoding_rs) would cost more binary than the 8 MiB budget leaves.

use std::borrow::Cow;

/// windows-1252's characters for the bytes 0x80-0x9F (the WHATWG index); the other bytes
/// are their own code points.
const W1252_HIGH: [char; 32] = [
    '\u{20AC}', '\u{81}', '\u{201A}', '\u{192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{2C6}', '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8D}', '\u{17D}', '\u{8F}',
    '\u{90}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{2DC}', '\u{2122}', '\u{161}', '\u{203A}', '\u{153}', '\u{9D}', '\u{17E}', '\u{178}',
];

#[derive(Debug, PartialEq)]
enum Charset {
    Utf8,
    Utf16Le,
    Utf16Be,
    Windows1252,
    /// A label this module does not decode.
    Other(String),
}

/// The charset a label names (WHATWG labels, case and spaces ignored).
fn charset(label: &str) -> Charset {
    let label = label.trim().to_ascii_lowercase();
    match label.as_str() {
        "utf-8" | "utf8" | "unicode-1-1-utf-8" | "unicode11utf8" | "unicode20utf8"
        | "x-unicode20utf8" => Charset::Utf8,
        "utf-16le" | "utf-16" | "csunicode" | "iso-10646-ucs-2" | "ucs-2" | "unicode"
        | "unicodefeff" => Charset::Utf16Le,
        "utf-16be" | "unicodefffe" => Charset::Utf16Be,
        "ansi_x3.4-1968" | "ascii" | "cp1252" | "cp819" | "csisolatin1" | "ibm819"
        | "iso-8859-1" | "iso-ir-100" | "iso8859-1" | "iso88591" | "iso_8859-1"
        | "iso_8859-1:1987" | "l1" | "latin1" | "us-ascii" | "windows-1252" | "x-cp1252" => {
            Charset::Windows1252
        }
        _ => Charset::Other(label),
    }
}

/// `bytes` as text, and the declared charset when it is one this module cannot decode (the
/// text is then read as UTF-8).
pub fn decode(bytes: &[u8], header_charset: Option<&str>, html: bool) -> (String, Option<String>) {
    let (declared, body) = match bytes {
        [0xEF, 0xBB, 0xBF, rest @ ..] => (Charset::Utf8, rest),
        [0xFF, 0xFE, rest @ ..] => (Charset::Utf16Le, rest),
        [0xFE, 0xFF, rest @ ..] => (Charset::Utf16Be, rest),
        _ => {
            let declared = match header_charset {
                Some(label) => charset(label),
                None => match html.then(|| meta_charset(bytes)).flatten() {
                    // A page that says UTF-16 in its own ASCII markup is not UTF-16 (the
                    // HTML standard's rule).
                    Some(label) => match charset(&label) {
                        Charset::Utf16Le | Charset::Utf16Be => Charset::Utf8,
                        other => other,
                    },
                    None => Charset::Utf8,
                },
            };
            (declared, bytes)
        }
    };
    match declared {
        Charset::Utf8 => (lossy(body), None),
        Charset::Windows1252 => (body.iter().map(|&b| w1252(b)).collect(), None),
        Charset::Utf16Le => (utf16(body, u16::from_le_bytes), None),
        Charset::Utf16Be => (utf16(body, u16::from_be_bytes), None),
        Charset::Other(label) => (lossy(body), Some(label)),
    }
}

fn lossy(bytes: &[u8]) -> String {
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(text) => text.to_string(),
        Cow::Owned(text) => text,
    }
}

fn w1252(byte: u8) -> char {
    match byte {
        0x80..=0x9F => W1252_HIGH[usize::from(byte - 0x80)],
        _ => char::from(byte),
    }
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let units = bytes.chunks(2).map(|pair| match pair {
        [a, b] => unit([*a, *b]),
        // An odd last byte is malformed.
        _ => 0xFFFD,
    });
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// The `charset=` value of a `<meta>` near the start of an HTML page.
fn meta_charset(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(1024)];
    let lower = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&lower[from..], b"<meta") {
        let start = from + at;
        let end = memchr::memchr(b'>', &lower[start..]).map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(pos) = memchr::memmem::find(tag, b"charset=") {
            let value = &tag[pos + 8..];
            let value = value
                .strip_prefix(b"\"")
                .or_else(|| value.strip_prefix(b"'"))
                .unwrap_or(value);
            let len = value
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || b"-_:.".contains(b)))
                .unwrap_or(value.len());
            return Some(String::from_utf8_lossy(&value[..len]).into_owned());
        }
        from = end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8], header: Option<&str>, html: bool) -> String {
        let (text, other) = decode(bytes, header, html);
        assert_eq!(other, None);
        text
    }

    #[test]
    fn charsets() {
        assert_eq!(text(b"caf\xe9", Some("ISO-8859-1"), false), "café");
        assert_eq!(
            text(b"\x93quoted\x94 \x80", Some("latin1"), false),
            "“quoted” €"
        );
        assert_eq!(
            text(b"<meta charset=\"windows-1252\">caf\xe9", None, true),
            "<meta charset=\"windows-1252\">café"
        );
        let http_equiv =
            b"<meta http-equiv=Content-Type content='text/html; charset=iso-8859-1'>\xe9";
        assert_eq!(text(http_equiv, None, true).chars().last(), Some('é'));
        assert_eq!(text(b"ok \xff", None, false), "ok \u{fffd}");
        assert_eq!(text(b"\xef\xbb\xbfbom", Some("latin1"), false), "bom");
        assert_eq!(text(b"\xff\xfeh\x00i\x00", None, false), "hi");
        assert_eq!(text(b"\x00h\x00i", Some("UTF-16BE"), false), "hi");
        // <meta> cannot make an ASCII page UTF-16.
        assert_eq!(
            text(b"<meta charset=utf-16>x", None, true),
            "<meta charset=utf-16>x"
        );
    }

    #[test]
    fn other_charsets_are_named() {
        let (text, other) = decode(b"\x82\xa0", Some("Shift_JIS"), false);
        assert_eq!(text, "\u{fffd}\u{fffd}");
        assert_eq!(other.as_deref(), Some("shift_jis"));
    }
}
