//! Page bytes as text, by the HTML standard's encoding sniffing: a byte order mark wins, then
//! the `Content-Type` charset, then (for HTML) the charset a `<meta>` in the first 1024 bytes
//! declares (`prescan.rs`), else UTF-8. A `<meta>` that says UTF-16 means UTF-8 and one that
//! says x-user-defined means windows-1252, as the HTML standard rules; a label the WHATWG
//! Encoding Standard does not list, or one it retired (ISO-2022-KR, HZ-GB-2312...), is passed
//! over for the next source and named in a note when nothing else is declared.
//!
//! The decoding is encoding_rs's, Firefox's decoder of the Encoding Standard: every charset the
//! standard lists, by each of its labels (UTF-8, UTF-16, x-user-defined, the single-byte ones
//! such as windows-1252, windows-1251, KOI8-R and ISO-8859-2, and the Chinese, Japanese and
//! Korean legacy ones: Shift_JIS, EUC-JP, ISO-2022-JP, GBK, gb18030, Big5, EUC-KR); malformed
//! bytes, and bytes a charset leaves unmapped, become U+FFFD.

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

use super::prescan::prescan;

/// What read_url decodes, for `agent-loop config`.
pub const DECODED: &str = "every charset of the WHATWG Encoding Standard (UTF-8, UTF-16, the \
     single-byte ones and the Chinese, Japanese and Korean legacy ones), by encoding_rs";

/// The encoding a label names (case and surrounding ASCII whitespace ignored), if the standard
/// lists it. The labels it retired (its "replacement" encoding, which would make a whole page
/// one U+FFFD) count as unlisted.
fn encoding(label: &str) -> Option<&'static Encoding> {
    Encoding::for_label_no_replacement(label.as_bytes())
}

/// `bytes` as text, and a note for the model when the charset the page declares could not be
/// used (the text is then read as UTF-8).
pub fn decode(bytes: &[u8], header_charset: Option<&str>, html: bool) -> (String, Option<String>) {
    let (bom, body) = match Encoding::for_bom(bytes) {
        Some((encoding, length)) => (Some(encoding), &bytes[length..]),
        None => (None, bytes),
    };
    // The first label the page gives that the standard does not list, for the note.
    let mut unlisted = None;
    let mut known = |label: &str| {
        let found = encoding(label);
        if found.is_none() && unlisted.is_none() {
            unlisted = Some(label.trim().to_string());
        }
        found
    };
    let declared = bom
        .or_else(|| header_charset.and_then(&mut known))
        .or_else(|| {
            if !html {
                return None;
            }
            let head = &bytes[..bytes.len().min(1024)];
            let found = prescan(head, &mut known)?;
            // A page that says UTF-16 in its own ASCII markup is not UTF-16, and its
            // x-user-defined is windows-1252 (the HTML standard's rules).
            Some(if found == UTF_16LE || found == UTF_16BE {
                UTF_8
            } else if found == X_USER_DEFINED {
                WINDOWS_1252
            } else {
                found
            })
        });
    let note = match (declared, unlisted) {
        (None, Some(label)) => Some(format!(
            "the page says its charset is {label}, which read_url does not know: read as UTF-8, \
             letters outside ASCII may be U+FFFD"
        )),
        _ => None,
    };
    // Without encoding_rs's BOM sniffing: the BOM, if any, was cut off above.
    let (text, _malformed) = declared.unwrap_or(UTF_8).decode_without_bom_handling(body);
    (text.into_owned(), note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::*;

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
        // An odd last byte and a lone surrogate are malformed.
        assert_eq!(text(b"h\x00i", Some("utf-16le"), false), "h\u{fffd}");
        assert_eq!(text(b"\x00\xd8h\x00", Some("utf-16"), false), "\u{fffd}h");
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
        // Entries the standard changed in 2016 (KOI8-U took KOI8-RU's two letters).
        assert_eq!(text(b"\xae\xbe", Some("koi8-u"), false), "ўЎ");
        assert_eq!(text(b"\xca", Some("windows-1255"), false), "\u{5ba}");
        let page = b"<meta charset=\"koi8-r\"><p>\xb3\xcc\xcb\xc1, \xa3\xd6</p>";
        assert_eq!(
            text(page, None, true),
            "<meta charset=\"koi8-r\"><p>Ёлка, ёж</p>"
        );
    }

    /// Each single-byte encoding and its labels, as the standard lists them.
    const SINGLE_BYTE: &[(&Encoding, &str)] = &[
        (IBM866, "866 cp866 csibm866 ibm866"),
        (
            ISO_8859_2,
            "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 \
             l2 latin2",
        ),
        (
            ISO_8859_3,
            "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 \
             l3 latin3",
        ),
        (
            ISO_8859_4,
            "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 \
             l4 latin4",
        ),
        (
            ISO_8859_5,
            "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 \
             iso_8859-5:1988",
        ),
        (
            ISO_8859_6,
            "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 \
             iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 \
             iso_8859-6:1987",
        ),
        (
            ISO_8859_7,
            "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 \
             iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek",
        ),
        (
            ISO_8859_8,
            "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 \
             iso88598 iso_8859-8 iso_8859-8:1988 visual",
        ),
        // ISO-8859-8-I (logical order) decodes as ISO-8859-8 (visual order).
        (ISO_8859_8_I, "csiso88598i iso-8859-8-i logical"),
        (
            ISO_8859_10,
            "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
        ),
        (ISO_8859_13, "iso-8859-13 iso8859-13 iso885913"),
        (ISO_8859_14, "iso-8859-14 iso8859-14 iso885914"),
        (
            ISO_8859_15,
            "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
        ),
        (ISO_8859_16, "iso-8859-16"),
        (KOI8_R, "cskoi8r koi koi8 koi8-r koi8_r"),
        (KOI8_U, "koi8-ru koi8-u"),
        (MACINTOSH, "csmacintosh mac macintosh x-mac-roman"),
        (
            WINDOWS_874,
            "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
        ),
        (WINDOWS_1250, "cp1250 windows-1250 x-cp1250"),
        (WINDOWS_1251, "cp1251 windows-1251 x-cp1251"),
        (
            WINDOWS_1252,
            "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 \
             iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 \
             x-cp1252",
        ),
        (WINDOWS_1253, "cp1253 windows-1253 x-cp1253"),
        (
            WINDOWS_1254,
            "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 \
             iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254",
        ),
        (WINDOWS_1255, "cp1255 windows-1255 x-cp1255"),
        (WINDOWS_1256, "cp1256 windows-1256 x-cp1256"),
        (WINDOWS_1257, "cp1257 windows-1257 x-cp1257"),
        (WINDOWS_1258, "cp1258 windows-1258 x-cp1258"),
        (X_MAC_CYRILLIC, "x-mac-cyrillic x-mac-ukrainian"),
    ];

    /// The multi-byte legacy encodings and their labels, as the standard lists them.
    const MULTI_BYTE: &[(&Encoding, &str)] = &[
        (
            SHIFT_JIS,
            "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
        ),
        (EUC_JP, "cseucpkdfmtjapanese euc-jp x-euc-jp"),
        (ISO_2022_JP, "csiso2022jp iso-2022-jp"),
        (
            GBK,
            "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk",
        ),
        (GB18030, "gb18030"),
        (BIG5, "big5 big5-hkscs cn-big5 csbig5 x-x-big5"),
        (
            EUC_KR,
            "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 \
             ksc5601 ksc_5601 windows-949",
        ),
    ];

    /// Each label of `list`, with its encoding: every label once, in lower case.
    fn labels(
        list: &[(&'static Encoding, &'static str)],
    ) -> Vec<(&'static Encoding, &'static str)> {
        let labels: Vec<_> = list
            .iter()
            .flat_map(|(encoding, labels)| labels.split(' ').map(|l| (*encoding, l)))
            .collect();
        let distinct: std::collections::BTreeSet<_> = labels.iter().map(|(_, l)| l).collect();
        assert_eq!(distinct.len(), labels.len());
        assert!(labels
            .iter()
            .all(|(_, l)| !l.is_empty() && *l == l.to_ascii_lowercase()));
        labels
    }

    #[test]
    fn labels_are_the_standards() {
        // The standard's 168 labels of single-byte encodings and 38 of its 7 multi-byte
        // legacy ones, each known, in any case and with spaces around it.
        let single = labels(SINGLE_BYTE);
        let multi = labels(MULTI_BYTE);
        assert_eq!((single.len(), multi.len()), (168, 38));
        for (expected, label) in single.into_iter().chain(multi) {
            assert_eq!(encoding(label), Some(expected), "{label}");
            let shouted = format!(" {}\t", label.to_ascii_uppercase());
            assert_eq!(encoding(&shouted), Some(expected), "{shouted}");
        }
    }

    #[test]
    fn single_byte_decoding() {
        // Every single-byte encoding maps ASCII to itself, and each byte above to one
        // character (U+FFFD where it has none).
        let high: Vec<u8> = (0x80..=0xFF).collect();
        for (encoding, labels) in SINGLE_BYTE {
            let label = labels.split(' ').next().unwrap_or_default();
            assert_eq!(text(b"plain ASCII", Some(label), false), "plain ASCII");
            let decoded = text(&high, Some(label), false);
            assert_eq!(decoded.chars().count(), 128, "{}", encoding.name());
        }
    }

    #[test]
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
