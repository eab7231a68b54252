//! The HTML Standard's "prescan a byte stream to determine its encoding": the charset a page
//! declares in a `<meta>` (or an XML declaration) near its start, found the way a browser
//! finds it. Comments are skipped, the attributes of other tags are read past, and a `<meta>`
//! counts only in one of its two forms: `charset=`, or `content=` with
//! `http-equiv=content-type`. An unknown label is passed over and the scan goes on.
//!
//! Written here, step for step from the standard: encoding_rs, which decodes the page
//! (charset.rs), has no prescan of its own.

/// The prescan of `bytes` (the caller passes the first 1024, as the standard advises).
/// `encoding` is the standard's "get an encoding": the charset a label names, if any. The
/// rules for what a `<meta>` may declare (UTF-16 read as UTF-8...) are the caller's.
pub fn prescan<T>(bytes: &[u8], mut encoding: impl FnMut(&str) -> Option<T>) -> Option<T> {
    let mut scan = Scan { bytes, at: 0 };
    scan.metas(&mut encoding)
        .or_else(|| xml_encoding(bytes, &mut encoding))
}

/// The bytes the standard calls ASCII whitespace.
fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

/// An attribute's name and value.
type Attribute = (Vec<u8>, Vec<u8>);

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn rest(&self) -> &[u8] {
        self.bytes.get(self.at..).unwrap_or_default()
    }

    fn byte(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Moves to the first `>` at or after where the scan is; `None` when there is none.
    fn skip_to_gt(&mut self) -> Option<()> {
        self.at += memchr::memchr(b'>', self.rest())?;
        Some(())
    }

    /// The loop of the prescan: the first `<meta>` whose charset `encoding` knows.
    fn metas<T>(&mut self, encoding: &mut impl FnMut(&str) -> Option<T>) -> Option<T> {
        while self.at < self.bytes.len() {
            let rest = self.rest();
            let after = |n: usize| rest.get(n).copied();
            if rest.starts_with(b"<!--") {
                // To the `>` that ends a `-->` (`<!-->` included).
                let end = memchr::memmem::find(&rest[2..], b"-->")?;
                self.at += 2 + end + 2;
            } else if rest.len() > 5
                && rest[..5].eq_ignore_ascii_case(b"<meta")
                && (is_space(rest[5]) || rest[5] == b'/')
            {
                self.at += 5;
                if let Some(found) = self.meta(encoding) {
                    return Some(found);
                }
            } else if rest.first() == Some(&b'<')
                && (after(1).is_some_and(|b| b.is_ascii_alphabetic())
                    || (after(1) == Some(b'/')
                        && after(2).is_some_and(|b| b.is_ascii_alphabetic())))
            {
                // Another tag: past its name, then past its attributes.
                self.at += rest.iter().position(|&b| is_space(b) || b == b'>')?;
                while self.attribute()?.is_some() {}
            } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?")
            {
                self.skip_to_gt()?;
            }
            self.at += 1;
        }
        None
    }

    /// The attributes of a `<meta>` (the scan just past its name), and the charset they
    /// declare if `encoding` knows it. The scan is left on its `>`.
    fn meta<T>(&mut self, encoding: &mut impl FnMut(&str) -> Option<T>) -> Option<T> {
        let mut seen: Vec<Vec<u8>> = Vec::new();
        let mut got_pragma = false;
        let mut need_pragma = None;
        let mut charset = None;
        while let Some((name, value)) = self.attribute()? {
            if seen.contains(&name) {
                continue;
            }
            match name.as_slice() {
                b"http-equiv" => got_pragma |= value == b"content-type",
                // Only a label `encoding` knows counts here, and only the first.
                b"content" if charset.is_none() => {
                    let label = charset_in_content(&value);
                    if let Some(found) = label.and_then(|l| encoding(&String::from_utf8_lossy(l))) {
                        charset = Some(Some(found));
                        need_pragma = Some(true);
                    }
                }
                b"charset" => {
                    charset = Some(encoding(&String::from_utf8_lossy(&value)));
                    need_pragma = Some(false);
                }
                _ => {}
            }
            seen.push(name);
        }
        match need_pragma {
            None => None,
            Some(true) if !got_pragma => None,
            // An unknown label (`Some(None)`): the scan goes on.
            _ => charset.flatten(),
        }
    }

    /// The standard's "get an attribute": `Some(None)` when the tag has no more (the scan
    /// is then on its `>`), `None` when the bytes end first. Names and values come in
    /// lower case.
    fn attribute(&mut self) -> Option<Option<Attribute>> {
        while is_space(self.byte()?) || self.byte()? == b'/' {
            self.at += 1;
        }
        if self.byte()? == b'>' {
            return Some(None);
        }
        let mut name = Vec::new();
        let mut value = Vec::new();
        loop {
            match self.byte()? {
                b'=' if !name.is_empty() => {
                    self.at += 1;
                    break;
                }
                b if is_space(b) => {
                    while is_space(self.byte()?) {
                        self.at += 1;
                    }
                    if self.byte()? != b'=' {
                        return Some(Some((name, value)));
                    }
                    self.at += 1;
                    break;
                }
                b'/' | b'>' => return Some(Some((name, value))),
                b => {
                    name.push(b.to_ascii_lowercase());
                    self.at += 1;
                }
            }
        }
        while is_space(self.byte()?) {
            self.at += 1;
        }
        match self.byte()? {
            quote @ (b'"' | b'\'') => loop {
                self.at += 1;
                match self.byte()? {
                    b if b == quote => {
                        self.at += 1;
                        return Some(Some((name, value)));
                    }
                    b => value.push(b.to_ascii_lowercase()),
                }
            },
            b'>' => return Some(Some((name, value))),
            _ => {}
        }
        loop {
            match self.byte()? {
                b if is_space(b) || b == b'>' => return Some(Some((name, value))),
                b => {
                    value.push(b.to_ascii_lowercase());
                    self.at += 1;
                }
            }
        }
    }
}

/// The standard's "extracting a character encoding from a meta element": the label after
/// `charset=` in a `content` value (`text/html; charset=koi8-r`).
fn charset_in_content(content: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    loop {
        at += memchr::memmem::find(&content[at..], b"charset")? + b"charset".len();
        let skip = |mut i: usize| {
            while content.get(i).is_some_and(|&b| is_space(b)) {
                i += 1;
            }
            i
        };
        let eq = skip(at);
        if content.get(eq) != Some(&b'=') {
            at = eq;
            continue;
        }
        let start = skip(eq + 1);
        return match *content.get(start)? {
            quote @ (b'"' | b'\'') => {
                let end = memchr::memchr(quote, &content[start + 1..])?;
                Some(&content[start + 1..start + 1 + end])
            }
            _ => {
                let rest = &content[start..];
                let end = rest.iter().position(|&b| is_space(b) || b == b';');
                Some(&rest[..end.unwrap_or(rest.len())])
            }
        };
    }
}

/// The standard's "get an XML encoding": the `encoding` of an `<?xml ...?>` declaration
/// that starts the page.
fn xml_encoding<T>(bytes: &[u8], encoding: &mut impl FnMut(&str) -> Option<T>) -> Option<T> {
    if !bytes.starts_with(b"<?xml") {
        return None;
    }
    let end = memchr::memchr(b'>', bytes)?;
    let mut at = memchr::memmem::find(bytes, b"encoding")?;
    if at > end {
        return None;
    }
    at += b"encoding".len();
    while *bytes.get(at)? <= 0x20 {
        at += 1;
    }
    if bytes[at] != b'=' {
        return None;
    }
    at += 1;
    while *bytes.get(at)? <= 0x20 {
        at += 1;
    }
    let quote = bytes[at];
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let close = at + 1 + memchr::memchr(quote, &bytes[at + 1..])?;
    let label = &bytes[at + 1..close];
    if close > end || label.iter().any(|&b| b <= 0x20) {
        return None;
    }
    encoding(&String::from_utf8_lossy(label))
}

#[cfg(test)]
mod tests {
    use super::prescan;

    /// The label the prescan settles on, with every label but `bogus` known.
    fn found(page: &str) -> Option<String> {
        prescan(page.as_bytes(), |label| {
            (label != "bogus").then(|| label.to_string())
        })
    }

    #[test]
    fn meta_charset_in_its_two_forms() {
        assert_eq!(found("<meta charset=koi8-r>").as_deref(), Some("koi8-r"));
        assert_eq!(found("<META CHARSET='KOI8-R'>").as_deref(), Some("koi8-r"));
        assert_eq!(
            found("<meta charset = \"koi8-r\" >").as_deref(),
            Some("koi8-r")
        );
        assert_eq!(found("<meta/charset='koi8-r'/>").as_deref(), Some("koi8-r"));
        // Unquoted, a value ends only at a space or `>`.
        assert_eq!(found("<meta charset=koi8-r/>").as_deref(), Some("koi8-r/"));
        let pragma = "<meta http-equiv=Content-Type content='text/html; charset=koi8-r'>";
        assert_eq!(found(pragma).as_deref(), Some("koi8-r"));
        let reversed =
            "<meta content=\"text/html;charset = 'koi8-r'\" http-equiv=\"content-type\">";
        assert_eq!(found(reversed).as_deref(), Some("koi8-r"));
    }

    #[test]
    fn what_is_passed_over() {
        // A content= without http-equiv, a comment, another tag's attribute, an unknown
        // label: each passed over for the <meta> after it.
        for before in [
            "<meta name=description content='charset=bogus2'>",
            "<!-- <meta charset=bogus2> -->",
            "<!--><meta charset=bogus2 -->",
            "<div title='<meta charset=bogus2>'>",
            "<meta charset=bogus>",
            "<?php <meta charset=bogus2> ?>",
        ] {
            let page = format!("{before}<meta charset=koi8-r>");
            // `<!--><meta charset=bogus2 -->`: the comment ends at `<!-->`, so its meta counts.
            let expected = if before.starts_with("<!-->") {
                "bogus2"
            } else {
                "koi8-r"
            };
            assert_eq!(found(&page).as_deref(), Some(expected), "{page}");
        }
        // The first of an attribute counts; a charset= wins over a content= before it.
        let page = "<meta charset=koi8-r charset=bogus2>";
        assert_eq!(found(page).as_deref(), Some("koi8-r"));
        let page = "<meta http-equiv=content-type content='charset=bogus2' charset=koi8-r>";
        assert_eq!(found(page).as_deref(), Some("koi8-r"));
        // Nothing, or bytes that end in the middle of a tag.
        assert_eq!(found("<p>no charset here</p>"), None);
        assert_eq!(found("<meta charset=koi8-r"), None);
        assert_eq!(found("<!-- <meta charset=koi8-r>"), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256,
            failure_persistence: None,
            ..Default::default()
        })]

        /// Pages cut from the pieces the scan looks for, in any order and cut anywhere,
        /// and arbitrary bytes: the scan ends, without a panic.
        #[test]
        fn any_page_ends_the_scan(
            pieces in proptest::collection::vec(0..PIECES.len(), 0..40),
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        ) {
            let mut page: Vec<u8> = pieces.iter().flat_map(|&i| PIECES[i].bytes()).collect();
            page.extend(&noise);
            for end in [page.len(), page.len() / 2] {
                let _ = prescan(&page[..end], |label| (label != "bogus").then_some(()));
            }
        }
    }

    const PIECES: &[&str] = &[
        "<meta",
        " ",
        "/",
        "charset",
        "=",
        "koi8-r",
        "bogus",
        "'",
        "\"",
        "<!--",
        "-->",
        "<",
        ">",
        "content",
        "http-equiv",
        "content-type",
        "<?xml",
        "encoding",
        "</",
        "<!",
        "a",
    ];

    #[test]
    fn xml_declaration() {
        let xml = "<?xml version=\"1.0\" encoding=\"ISO-8859-2\"?><p>";
        assert_eq!(found(xml).as_deref(), Some("ISO-8859-2"));
        assert_eq!(found("<?xml version='1.0' encoding = 'a b'?>"), None);
    }
}
