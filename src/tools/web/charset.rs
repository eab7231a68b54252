//! Page bytes as text, by the HTML standard's encoding sniffing: a byte order mark wins, then
//! the `Content-Type` charset, then (for HTML) the charset a `<meta>` in the first 1024 bytes
//! declares (`prescan.rs`), else UTF-8; a label the Encoding Standard does not list is passed
//! over, and malformed bytes become U+FFFD. Decoded: UTF-8, UTF-16, x-user-defined and every
//! single-byte encoding of the WHATWG Encoding Standard (windows-1252, which the HTML standard
//! uses for every ISO-8859-1, Latin-1 and ASCII label, windows-1250 to 1258, ISO-8859-2 to 16,
//! KOI8-R, KOI8-U, IBM866, macintosh, x-mac-cyrillic, windows-874), by each label the standard
//! lists. The multi-byte legacy charsets (Shift_JIS, EUC-JP, ISO-2022-JP, GBK, gb18030, Big5,
//! EUC-KR) are decoded by encoding_rs in a build with the `cjk-charsets` feature, and otherwise
//! read as UTF-8 with a note: their tables are more than the binary's 8 MiB budget has room for
//! (docs/performance.md).

use std::borrow::Cow;

use encoding_index_singlebyte as index;

use super::prescan::prescan;

/// A single-byte encoding: the code point of each byte 0x80-0xFF, 0xFFFF where it has none
/// (the bytes below 0x80 are ASCII in all of them).
type Table = fn(u8) -> u16;

#[derive(Debug)]
enum Charset {
    Utf8,
    Utf16Le,
    Utf16Be,
    SingleByte(Table),
    /// x-user-defined: the bytes 0x80-0xFF are U+F780-U+F7FF.
    UserDefined,
    /// A multi-byte legacy charset, by its label.
    MultiByte(String),
}

/// What this build decodes, for `agent-loop config`.
pub const DECODED: &str = if cfg!(feature = "cjk-charsets") {
    "UTF-8, UTF-16, the single-byte charsets and the Chinese, Japanese and Korean legacy ones \
     (cjk-charsets)"
} else {
    "UTF-8, UTF-16 and the single-byte charsets; not the Chinese, Japanese and Korean legacy \
     ones (a build with --features cjk-charsets does)"
};

/// The charset a label names (WHATWG labels, case and surrounding spaces ignored), if the
/// standard lists it. The labels it retired (ISO-2022-KR, HZ-GB-2312...: its "replacement"
/// encoding, which makes a whole page one U+FFFD) count as unlisted.
fn charset(label: &str) -> Option<Charset> {
    let label = label.trim().to_ascii_lowercase();
    Some(match label.as_str() {
        "utf-8" | "utf8" | "unicode-1-1-utf-8" | "unicode11utf8" | "unicode20utf8"
        | "x-unicode20utf8" => Charset::Utf8,
        "utf-16le" | "utf-16" | "csunicode" | "iso-10646-ucs-2" | "ucs-2" | "unicode"
        | "unicodefeff" => Charset::Utf16Le,
        "utf-16be" | "unicodefffe" => Charset::Utf16Be,
        "x-user-defined" => Charset::UserDefined,
        other => match single_byte(other) {
            Some(table) => Charset::SingleByte(table),
            None if listed(MULTI_BYTE, other) => Charset::MultiByte(label),
            None => return None,
        },
    })
}

/// Whether a space-separated list of `labels` holds `label`.
fn listed(labels: &[&str], label: &str) -> bool {
    labels.iter().any(|l| l.split(' ').any(|l| l == label))
}

/// The labels of the multi-byte legacy encodings, one entry an encoding, as the standard
/// lists them: Shift_JIS, EUC-JP, ISO-2022-JP, GBK, gb18030, Big5, EUC-KR.
const MULTI_BYTE: &[&str] = &[
    "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "cseucpkdfmtjapanese euc-jp x-euc-jp",
    "csiso2022jp iso-2022-jp",
    "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk",
    "gb18030",
    "big5 big5-hkscs cn-big5 csbig5 x-x-big5",
    "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 \
     ksc_5601 windows-949",
];

/// Each single-byte encoding's table and labels, as the standard lists them.
const SINGLE_BYTE: &[(Table, &str)] = &[
    (index::ibm866::forward, "866 cp866 csibm866 ibm866"),
    (
        index::iso_8859_2::forward,
        "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 \
         l2 latin2",
    ),
    (
        index::iso_8859_3::forward,
        "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 \
         l3 latin3",
    ),
    (
        index::iso_8859_4::forward,
        "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 \
         l4 latin4",
    ),
    (
        index::iso_8859_5::forward,
        "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 \
         iso_8859-5:1988",
    ),
    (
        index::iso_8859_6::forward,
        "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 \
         iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 \
         iso_8859-6:1987",
    ),
    (
        index::iso_8859_7::forward,
        "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 \
         iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    ),
    // ISO-8859-8 and ISO-8859-8-I (visual and logical order) share one table.
    (
        index::iso_8859_8::forward,
        "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 \
         iso88598 iso_8859-8 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical",
    ),
    (
        index::iso_8859_10::forward,
        "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    ),
    (
        index::iso_8859_13::forward,
        "iso-8859-13 iso8859-13 iso885913",
    ),
    (
        index::iso_8859_14::forward,
        "iso-8859-14 iso8859-14 iso885914",
    ),
    (
        index::iso_8859_15::forward,
        "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    ),
    (index::iso_8859_16::forward, "iso-8859-16"),
    (index::koi8_r::forward, "cskoi8r koi koi8 koi8-r koi8_r"),
    (koi8_u, "koi8-ru koi8-u"),
    (
        index::macintosh::forward,
        "csmacintosh mac macintosh x-mac-roman",
    ),
    (
        index::windows_874::forward,
        "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
    ),
    (index::windows_1250::forward, "cp1250 windows-1250 x-cp1250"),
    (index::windows_1251::forward, "cp1251 windows-1251 x-cp1251"),
    (
        index::windows_1252::forward,
        "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 \
         iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 \
         x-cp1252",
    ),
    (index::windows_1253::forward, "cp1253 windows-1253 x-cp1253"),
    (
        index::windows_1254::forward,
        "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 \
         iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254",
    ),
    (windows_1255, "cp1255 windows-1255 x-cp1255"),
    (index::windows_1256::forward, "cp1256 windows-1256 x-cp1256"),
    (index::windows_1257::forward, "cp1257 windows-1257 x-cp1257"),
    (index::windows_1258::forward, "cp1258 windows-1258 x-cp1258"),
    (
        index::x_mac_cyrillic::forward,
        "x-mac-cyrillic x-mac-ukrainian",
    ),
];

/// The table of a single-byte encoding's label. A list searched through rather than a
/// `match`: a `match` on the 168 labels made the binary 5 KB bigger.
fn single_byte(label: &str) -> Option<Table> {
    SINGLE_BYTE
        .iter()
        .find(|(_, labels)| labels.split(' ').any(|l| l == label))
        .map(|(table, _)| *table)
}

// The crate's tables are the standard's indexes of 2014-12-19; since then (2016) KOI8-U took
// KOI8-RU's two letters at 0xAE and 0xBE, and windows-1255 gained 0xCA. Every other entry
// is still the standard's.

fn koi8_u(byte: u8) -> u16 {
    match byte {
        0xAE => 0x045E,
        0xBE => 0x040E,
        _ => index::koi8_u::forward(byte),
    }
}

fn x_user_defined(byte: u8) -> u16 {
    0xF700 + u16::from(byte)
}

fn windows_1255(byte: u8) -> u16 {
    match byte {
        0xCA => 0x05BA,
        _ => index::windows_1255::forward(byte),
    }
}

/// `bytes` as text, and a note for the model when the charset the page declares could not be
/// used (the text is then read as UTF-8).
pub fn decode(bytes: &[u8], header_charset: Option<&str>, html: bool) -> (String, Option<String>) {
    let (declared, body) = match bytes {
        [0xEF, 0xBB, 0xBF, rest @ ..] => (Some(Charset::Utf8), rest),
        [0xFF, 0xFE, rest @ ..] => (Some(Charset::Utf16Le), rest),
        [0xFE, 0xFF, rest @ ..] => (Some(Charset::Utf16Be), rest),
        _ => (None, bytes),
    };
    // The first label the page gives that the standard does not list, for the note.
    let mut unlisted = None;
    let mut known = |label: &str| {
        let found = charset(label);
        if found.is_none() && unlisted.is_none() {
            unlisted = Some(label.trim().to_string());
        }
        found
    };
    let declared = declared
        .or_else(|| header_charset.and_then(&mut known))
        .or_else(|| {
            if !html {
                return None;
            }
            let head = &bytes[..bytes.len().min(1024)];
            let found = prescan(head, &mut known)?;
            // A page that says UTF-16 in its own ASCII markup is not UTF-16, and its
            // x-user-defined is windows-1252 (the HTML standard's rules).
            Some(match found {
                Charset::Utf16Le | Charset::Utf16Be => Charset::Utf8,
                Charset::UserDefined => Charset::SingleByte(index::windows_1252::forward),
                other => other,
            })
        });
    let as_utf8 = |why: String| (lossy(body), Some(why));
    match declared {
        Some(Charset::Utf8) => (lossy(body), None),
        Some(Charset::SingleByte(table)) => (single_byte_text(body, table), None),
        Some(Charset::UserDefined) => (single_byte_text(body, x_user_defined), None),
        Some(Charset::Utf16Le) => (utf16(body, u16::from_le_bytes), None),
        Some(Charset::Utf16Be) => (utf16(body, u16::from_be_bytes), None),
        Some(Charset::MultiByte(label)) => match multi_byte(&label, body) {
            Some(text) => (text, None),
            None => as_utf8(format!(
                "the page is in {label}, a Chinese, Japanese or Korean legacy charset that this \
                 build does not decode (agent-loop built with --features cjk-charsets does): read \
                 as UTF-8, letters outside ASCII may be U+FFFD"
            )),
        },
        None => match unlisted {
            Some(label) => as_utf8(format!(
                "the page says its charset is {label}, which read_url does not know: read as \
                 UTF-8, letters outside ASCII may be U+FFFD"
            )),
            None => (lossy(body), None),
        },
    }
}

/// `bytes` in the multi-byte legacy charset `label` names, by encoding_rs; malformed bytes
/// become U+FFFD.
#[cfg(feature = "cjk-charsets")]
fn multi_byte(label: &str, bytes: &[u8]) -> Option<String> {
    let encoding = encoding_rs::Encoding::for_label_no_replacement(label.as_bytes())?;
    let (text, _malformed) = encoding.decode_without_bom_handling(bytes);
    Some(text.into_owned())
}

#[cfg(not(feature = "cjk-charsets"))]
fn multi_byte(_label: &str, _bytes: &[u8]) -> Option<String> {
    None
}

fn lossy(bytes: &[u8]) -> String {
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(text) => text.to_string(),
        Cow::Owned(text) => text,
    }
}

fn single_byte_text(bytes: &[u8], table: Table) -> String {
    let mut text = String::with_capacity(bytes.len());
    for &byte in bytes {
        text.push(match byte {
            0x00..=0x7F => char::from(byte),
            _ => match table(byte) {
                0xFFFF => char::REPLACEMENT_CHARACTER,
                code => char::from_u32(u32::from(code)).unwrap_or(char::REPLACEMENT_CHARACTER),
            },
        });
    }
    text
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
    fn single_byte_charsets() {
        assert_eq!(
            text(b"\xcf\xf0\xe8\xe2\xe5\xf2", Some("windows-1251"), false),
            "Привет"
        );
        assert_eq!(
            text(b"\xf0\xd2\xc9\xd7\xc5\xd4", Some(" KOI8-R "), false),
            "Привет"
        );
        assert_eq!(text(b"\xa3\xf3d\xbc", Some("latin2"), false), "Łódź");
        // A byte ISO-8859-3 leaves unmapped.
        assert_eq!(text(b"a\xa5b", Some("iso-8859-3"), false), "a\u{fffd}b");
        // Labels the standard gives to another encoding than their name says.
        assert_eq!(text(b"\xd0", Some("iso-8859-9"), false), "Ğ");
        assert_eq!(text(b"\xa1", Some("tis-620"), false), "ก");
        assert_eq!(text(b"\xb3", Some("koi8"), false), "Ё");
        // The entries the standard changed after the crate's tables.
        assert_eq!(text(b"\xae\xbe", Some("koi8-u"), false), "ўЎ");
        assert_eq!(text(b"\xca", Some("windows-1255"), false), "\u{5ba}");
        let page = b"<meta charset=\"koi8-r\"><p>\xb3\xcc\xcb\xc1, \xa3\xd6</p>";
        assert_eq!(
            text(page, None, true),
            "<meta charset=\"koi8-r\"><p>Ёлка, ёж</p>"
        );
    }

    #[test]
    fn labels_are_the_standards() {
        let labels: Vec<&str> = SINGLE_BYTE
            .iter()
            .flat_map(|(_, labels)| labels.split(' '))
            .collect();
        // The standard's 168 labels of single-byte encodings, each once, in lower case.
        assert_eq!(labels.len(), 168);
        let distinct: std::collections::BTreeSet<_> = labels.iter().collect();
        assert_eq!(distinct.len(), labels.len());
        assert!(labels
            .iter()
            .all(|l| !l.is_empty() && *l == l.to_ascii_lowercase()));
    }

    #[test]
    #[cfg(not(feature = "cjk-charsets"))]
    fn multi_byte_charsets_are_named() {
        let (text, note) = decode(b"\x82\xa0", Some("Shift_JIS"), false);
        assert_eq!(text, "\u{fffd}\u{fffd}");
        assert_eq!(
            note.as_deref(),
            Some(
                "the page is in shift_jis, a Chinese, Japanese or Korean legacy charset that \
                 this build does not decode (agent-loop built with --features cjk-charsets \
                 does): read as UTF-8, letters outside ASCII may be U+FFFD"
            )
        );
    }

    #[test]
    #[cfg(feature = "cjk-charsets")]
    fn multi_byte_charsets() {
        // "日本語" in each Japanese charset, and with an undefined byte pair.
        assert_eq!(
            text(b"\x93\xfa\x96\x7b\x8c\xea", Some("Shift_JIS"), false),
            "日本語"
        );
        assert_eq!(
            text(b"\x93\xfa\x96\x7b\x8c\xea", Some("windows-31j"), false),
            "日本語"
        );
        assert_eq!(
            text(b"\xc6\xfc\xcb\xdc\xb8\xec", Some("EUC-JP"), false),
            "日本語"
        );
        assert_eq!(
            text(b"\x1b$BF|K\\8l\x1b(B!", Some("iso-2022-jp"), false),
            "日本語!"
        );
        assert_eq!(text(b"a\x85\x40b", Some("shift_jis"), false), "a\u{fffd}@b");
        // "中文" in GBK (gb2312 is its label too), and "中😀" in gb18030 (four bytes for
        // the emoji); "中文" in Big5; "한국어" in EUC-KR.
        assert_eq!(text(b"\xd6\xd0\xce\xc4", Some("gb2312"), false), "中文");
        assert_eq!(
            text(b"\xd6\xd0\x94\x39\xfc\x36", Some("gb18030"), false),
            "中😀"
        );
        assert_eq!(text(b"\xa4\xa4\xa4\xe5", Some("big5"), false), "中文");
        assert_eq!(
            text(b"\xc7\xd1\xb1\xb9\xbe\xee", Some("euc-kr"), false),
            "한국어"
        );
        // From <meta> too, and after a header label the standard does not list.
        let page = b"<meta charset=\"Shift_JIS\"><p>\x82\xa0</p>";
        assert_eq!(
            text(page, None, true),
            "<meta charset=\"Shift_JIS\"><p>あ</p>"
        );
        assert_eq!(
            text(page, Some("x-bogus"), true),
            "<meta charset=\"Shift_JIS\"><p>あ</p>"
        );
    }

    #[test]
    fn multi_byte_labels_are_the_standards() {
        let labels: Vec<&str> = MULTI_BYTE.iter().flat_map(|l| l.split(' ')).collect();
        // The standard's 38 labels of its 7 multi-byte legacy encodings, each once.
        assert_eq!(labels.len(), 38);
        let distinct: std::collections::BTreeSet<_> = labels.iter().collect();
        assert_eq!(distinct.len(), labels.len());
        for label in &labels {
            let found = charset(label);
            assert!(matches!(found, Some(Charset::MultiByte(_))), "{label}");
        }
        // encoding_rs, which implements the standard, gives each entry's labels to the
        // encoding of that entry.
        #[cfg(feature = "cjk-charsets")]
        {
            use encoding_rs::*;
            let encodings = [SHIFT_JIS, EUC_JP, ISO_2022_JP, GBK, GB18030, BIG5, EUC_KR];
            for (entry, encoding) in MULTI_BYTE.iter().zip(encodings) {
                for label in entry.split(' ') {
                    let found = Encoding::for_label_no_replacement(label.as_bytes());
                    assert_eq!(found, Some(encoding), "{label}");
                }
            }
        }
    }

    #[test]
    fn unlisted_and_retired_labels_are_named() {
        let note = |label: &str| {
            format!(
                "the page says its charset is {label}, which read_url does not know: read as \
                 UTF-8, letters outside ASCII may be U+FFFD"
            )
        };
        for label in [
            "x-no-such-charset",
            "iso-2022-kr",
            "hz-gb-2312",
            "replacement",
        ] {
            let (text, said) = decode(b"ok \xff", Some(label), false);
            assert_eq!((text.as_str(), said), ("ok \u{fffd}", Some(note(label))));
        }
        // An unlisted header label gives way to the page's <meta>; an unlisted <meta> one is
        // named.
        let page = b"<meta charset=koi8-r>\xf0\xd2\xc9";
        assert_eq!(
            text(page, Some("x-bogus"), true),
            "<meta charset=koi8-r>При"
        );
        let (_, said) = decode(b"<meta charset=x-bogus>ok", None, true);
        assert_eq!(said, Some(note("x-bogus")));
        // The prescan goes on past it, as it does past comments and a content= that no
        // http-equiv makes a charset.
        let page = b"<meta charset=x-bogus><!-- <meta charset=koi8-u> -->\
            <meta name=x content='charset=koi8-u'><meta charset=koi8-r>\xf0";
        assert_eq!(text(page, None, true).chars().last(), Some('П'));
        // Not in a text page.
        assert_eq!(decode(b"<meta charset=x-bogus>", None, false).1, None);
    }

    #[test]
    fn x_user_defined() {
        // Private-use letters from the header; windows-1252 from a page's own <meta>.
        assert_eq!(
            text(b"a\x80\xff", Some("x-user-defined"), false),
            "a\u{f780}\u{f7ff}"
        );
        assert_eq!(
            text(b"<meta charset=x-user-defined>\xe9", None, true),
            "<meta charset=x-user-defined>é"
        );
    }
}
