//! What read_url makes of an HTML page (once `charset.rs` has decoded it): Markdown by
//! `htmd` (turndown's rules on html5ever's DOM), after the parts that are not the page's
//! content are dropped, links tidied and made absolute, and the tree brought within what
//! htmd can walk (see `dom.rs`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use htmd::element_handler::{HandlerResult, Handlers};
use htmd::options::{BulletListMarker, Options};
use htmd::{Element, HtmlToMarkdown, Node};
use html5ever::tendril::StrTendril;
use html5ever::{local_name, ns, Attribute, QualName};
use markup5ever_rcdom::NodeData;
use url::{Position, Url};

use super::dom::{dissolve, flatten, nests, parse, Stop, Unconverted, MAX_DEPTH, MAX_NESTING};

/// Elements whose content is never the page's text.
const NOT_CONTENT: &[&str] = &[
    "script", "style", "noscript", "svg", "template", "iframe", "object", "canvas",
];

/// The page's chrome, dropped unless `web_keep_chrome` is set.
const CHROME: &[&str] = &["nav", "header", "footer"];

/// The same chrome by its ARIA role, on any element: Sphinx's sidebar and its bars of
/// related links are `<div role="navigation">`.
const CHROME_ROLES: &[&str] = &["navigation", "banner", "contentinfo"];

/// What a link to a heading shows instead of text (Sphinx's and MkDocs' ¶, many sites' #):
/// a link within the page that shows only one of these, or nothing, is left out.
const PERMALINK_MARKS: &[&str] = &["¶", "§", "#", "🔗"];

/// A page as Markdown.
#[derive(Debug, PartialEq)]
pub struct Converted {
    /// The text of `<title>`, whitespace collapsed.
    pub title: Option<String>,
    pub markdown: String,
}

/// The converter: build it once, convert many pages.
pub struct Converter {
    htmd: HtmlToMarkdown,
    keep_chrome: bool,
}

impl Default for Converter {
    fn default() -> Self {
        Converter::new()
    }
}

impl Converter {
    /// The converter that drops the page's chrome.
    pub fn new() -> Self {
        Converter::with_chrome(false)
    }

    /// The converter that keeps the page's chrome (`<nav>`, `<header>`, `<footer>`, and
    /// [`CHROME_ROLES`]) or not.
    pub fn with_chrome(keep: bool) -> Self {
        let mut skip = NOT_CONTENT.to_vec();
        if !keep {
            skip.extend_from_slice(CHROME);
        }
        // `head` holds the title (read separately), scripts and metadata: no content.
        skip.push("head");
        Converter {
            htmd: HtmlToMarkdown::builder()
                // `- item` rather than turndown's `*   item`: the same list in fewer tokens.
                .options(Options {
                    bullet_list_marker: BulletListMarker::Dash,
                    ul_bullet_spacing: 1,
                    ol_number_spacing: 1,
                    ..Options::default()
                })
                .skip_tags(skip)
                .add_handler(vec!["sup", "sub"], kept_as_html)
                .build(),
            keep_chrome: keep,
        }
    }

    /// Whether the element `tag` with `attrs` is left out, with all it holds.
    fn drops(&self, tag: &str, attrs: &[Attribute]) -> bool {
        if NOT_CONTENT.contains(&tag) {
            return true;
        }
        if self.keep_chrome {
            return false;
        }
        // ARIA: the first token of `role` is the element's (the others are fallbacks).
        let role = attr(attrs, "role").and_then(|r| r.split_ascii_whitespace().next());
        let chrome_role = |role: &str| CHROME_ROLES.iter().any(|r| r.eq_ignore_ascii_case(role));
        let root = matches!(tag, "html" | "body" | "main");
        CHROME.contains(&tag) || (role.is_some_and(chrome_role) && !root)
    }

    /// `html` as Markdown, relative links resolved against `base` (or the page's own
    /// `<base href>`). It blocks the caller until done (an async caller wants
    /// `spawn_blocking`); htmd's walk fits the 2 MiB stack of any thread, even in a debug
    /// build.
    pub fn convert(&self, html: &str, base: &Url, stop: &Stop) -> Result<Converted, Unconverted> {
        let tree = parse(html, stop)?;
        let mut title = None;
        let mut base_href = None;
        let mut links = Vec::new();
        let mut dropped = Vec::new();
        // An explicit stack of (element, depth, quotes and lists around it, whether htmd
        // drops it): the tree can be of any depth. In what htmd drops, only `<base>` counts.
        let mut stack = vec![(Rc::clone(&tree), 0, 0, false)];
        while let Some((node, depth, mut nesting, mut in_dropped)) = stack.pop() {
            if let NodeData::Element { name, attrs, .. } = &node.data {
                match name.local.as_ref() {
                    // The document's base URL is the first `<base href>`'s.
                    "base" if base_href.is_none() => {
                        base_href = attrs
                            .borrow()
                            .iter()
                            .find(|a| a.name.local.as_ref() == "href")
                            .map(|a| a.value.to_string());
                    }
                    _ if in_dropped => {}
                    "title" if title.is_none() => title = Some(text_of(&node)),
                    "a" | "img" => links.push(Rc::clone(&node)),
                    tag if self.drops(tag, &attrs.borrow()) => {
                        dropped.push(Rc::clone(&node));
                        in_dropped = true;
                    }
                    _ => {}
                }
            }
            if !in_dropped {
                if depth == MAX_DEPTH {
                    flatten(&node);
                }
                nesting += usize::from(nests(&node));
                if nesting == MAX_NESTING {
                    dissolve(&node);
                }
            }
            let children = node.children.borrow();
            let elements = children.iter().rev();
            let elements = elements.filter(|c| matches!(c.data, NodeData::Element { .. }));
            stack.extend(elements.map(|c| (Rc::clone(c), depth + 1, nesting, in_dropped)));
        }
        // htmd skips these, but its table handler still walks them, recursively.
        for node in dropped {
            node.children.take();
        }
        let base = match base_href.and_then(|href| base.join(&href).ok()) {
            Some(url) => url,
            None => base.clone(),
        };
        // Images first: a link shows an image only if it keeps something to show.
        for node in &links {
            tidy_image(node);
        }
        let mut links_to = Links::new(base);
        for node in links {
            tidy_link(&node);
            links_to.make_absolute(&node);
        }
        if stop.is_set() {
            return Err(Unconverted::Stopped);
        }
        Ok(Converted {
            title: title.filter(|t| !t.is_empty()),
            markdown: self.htmd.tree_to_markdown(&tree),
        })
    }
}

/// Makes the links of `<a>` and `<img>` absolute against the page's base URL. Each distinct
/// target is resolved once: a reference page repeats a few hundred targets thousands of times
/// (Rust's `u8` docs: 491 in 6,654 links), and resolving one costs about as many instructions
/// as converting ten bytes of the page. The targets share their buffer, too.
struct Links {
    base: Url,
    resolved: HashMap<String, Option<StrTendril>>,
}

impl Links {
    fn new(base: Url) -> Self {
        Links {
            base,
            resolved: HashMap::new(),
        }
    }

    fn make_absolute(&mut self, node: &Rc<Node>) {
        let NodeData::Element { attrs, .. } = &node.data else {
            return;
        };
        for attr in attrs.borrow_mut().iter_mut() {
            if !matches!(attr.name.local.as_ref(), "href" | "src") {
                continue;
            }
            // An empty `src` is an image with no address to give (see `tidy_image`).
            let value = attr.value.trim();
            if value.is_empty() && attr.name.local.as_ref() == "src" {
                continue;
            }
            if let Some(absolute) = self.resolve(value) {
                attr.value = absolute;
            }
        }
    }

    /// `href` made absolute; `None` when it is no URL (the link is then left as it is).
    fn resolve(&mut self, href: &str) -> Option<StrTendril> {
        if let Some(fragment) = in_page(href) {
            let page = &self.base[..Position::AfterQuery];
            return Some(StrTendril::from(format!("{page}#{fragment}")));
        }
        if let Some(absolute) = self.resolved.get(href) {
            return absolute.clone();
        }
        let absolute = self
            .base
            .join(href)
            .ok()
            .map(|url| StrTendril::from(String::from(url)));
        self.resolved.insert(href.to_string(), absolute.clone());
        absolute
    }
}

/// The fragment of a link within the page (`#method.len`, most of the links of a reference
/// page) that resolves to the page's URL with it as it is, so that no URL need be parsed:
/// printable ASCII that the URL standard leaves unescaped in a fragment.
fn in_page(href: &str) -> Option<&str> {
    let fragment = href.strip_prefix('#')?;
    let plain = |b: u8| b.is_ascii_graphic() && !matches!(b, b'"' | b'<' | b'>' | b'`');
    fragment.bytes().all(plain).then_some(fragment)
}

/// What a link shows the reader.
#[derive(Debug, PartialEq)]
enum Shows {
    Nothing,
    /// Only one of [`PERMALINK_MARKS`].
    Mark,
    /// Text or an image.
    Content,
}

/// How many nodes of a link [`shows`] reads before it counts the link as content: links can
/// hold links (in MathML, across a `<td>`), and each would read all those it holds.
const READ_NODES: usize = 64;

/// What `link` shows, what [`invisible`] aside.
fn shows(link: &Rc<Node>) -> Shows {
    let longest_mark = PERMALINK_MARKS.iter().map(|m| m.len()).max().unwrap_or(0);
    let mut text = String::new();
    let mut stack = vec![Rc::clone(link)];
    let mut read = 0;
    while let Some(node) = stack.pop() {
        read += 1;
        match &node.data {
            _ if read > READ_NODES => return Shows::Content,
            NodeData::Text { contents } => {
                text.extend(contents.borrow().chars().filter(|c| !invisible(*c)));
                if text.len() > longest_mark {
                    return Shows::Content;
                }
            }
            // What `tidy_image` left it: an address, or an `alt` to show.
            NodeData::Element { name, attrs, .. } if name.local.as_ref() == "img" => {
                let named = |a: &Attribute| matches!(a.name.local.as_ref(), "src" | "alt");
                if attrs
                    .borrow()
                    .iter()
                    .any(|a| named(a) && !a.value.trim().is_empty())
                {
                    return Shows::Content;
                }
            }
            _ => {}
        }
        stack.extend(node.children.borrow().iter().cloned());
    }
    match text.as_str() {
        "" => Shows::Nothing,
        mark if PERMALINK_MARKS.contains(&mark) => Shows::Mark,
        _ => Shows::Content,
    }
}

/// Whether `c` shows nothing: whitespace, the zero-width characters, the emoji variation
/// selector.
fn invisible(c: char) -> bool {
    let zero_width = matches!(
        c,
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{FE0F}'
    );
    c.is_whitespace() || zero_width
}

/// Brings an `<a>` to what it tells the model, before its target is made absolute:
/// - a `javascript:` or `data:` link becomes its text;
/// - a link within the page (`#...`) that shows nothing, or only a mark like ¶ (rustdoc's
///   and Sphinx's links to each heading: a tenth of their pages' Markdown), is left out;
/// - a link elsewhere that shows nothing (an icon) shows its `aria-label` or `title`.
fn tidy_link(link: &Rc<Node>) {
    let NodeData::Element { name, attrs, .. } = &link.data else {
        return;
    };
    if name.local.as_ref() != "a" {
        return;
    }
    let (no_address, in_page) = {
        let attrs = attrs.borrow();
        let Some(href) = attr(&attrs, "href") else {
            return;
        };
        let scheme = |s: &str| {
            href.get(..s.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(s))
        };
        let no_address = scheme("javascript:") || scheme("data:");
        (no_address, href.starts_with('#'))
    };
    let unlink = || {
        attrs
            .borrow_mut()
            .retain(|a| a.name.local.as_ref() != "href")
    };
    if no_address {
        return unlink();
    }
    match shows(link) {
        Shows::Content => {}
        Shows::Nothing | Shows::Mark if in_page => {
            unlink();
            // A space it held still parts the words around it.
            let spaced = |c: &Rc<Node>| match &c.data {
                NodeData::Text { contents } => contents.borrow().contains(char::is_whitespace),
                _ => false,
            };
            if link.children.take().iter().any(spaced) {
                set_text(link, " ".into());
            }
        }
        Shows::Mark => {}
        Shows::Nothing => {
            let attrs = attrs.borrow();
            let label = ["aria-label", "title"]
                .into_iter()
                .find_map(|name| attr(&attrs, name).filter(|l| !l.is_empty()));
            let label = label.map(StrTendril::from);
            drop(attrs);
            if let Some(label) = label {
                set_text(link, label);
            }
        }
    }
}

/// Makes `text` all that `node` holds.
fn set_text(node: &Rc<Node>, text: StrTendril) {
    let text = Node::new(NodeData::Text {
        contents: RefCell::new(text),
    });
    text.parent.set(Some(Rc::downgrade(node)));
    *node.children.borrow_mut() = vec![text];
}

/// Where a script that loads images lazily reads the image's address from while `src` holds
/// a placeholder or nothing, and the `srcset` a browser shows instead of a `data:` `src`.
const LAZY_SOURCES: &[&str] = &[
    "data-src",
    "data-lazy-src",
    "data-original",
    "srcset",
    "data-srcset",
    "data-lazy-srcset",
];

/// Brings an `<img>` to what it tells the model: an image loaded lazily (its `src` a `data:`
/// placeholder, empty, or missing) shows the address in [`LAZY_SOURCES`]; an image held
/// whole in a `data:` URL, only its `alt` text as `![alt]()`, or nothing without one (its
/// bytes are no use to a model, and one of the pages in Mozilla Readability's tests has 60 KB
/// of them).
fn tidy_image(image: &Rc<Node>) {
    let NodeData::Element { name, attrs, .. } = &image.data else {
        return;
    };
    if name.local.as_ref() != "img" {
        return;
    }
    let mut attrs = attrs.borrow_mut();
    let inline = |url: &str| {
        url.get(..5)
            .is_some_and(|s| s.eq_ignore_ascii_case("data:"))
    };
    if attr(&attrs, "src").is_some_and(|src| !src.is_empty() && !inline(src)) {
        return;
    }
    let lazy = LAZY_SOURCES.iter().find_map(|name| {
        let mut url = attr(&attrs, name)?;
        if name.ends_with("srcset") {
            // A list of "URL width," (commas may lead): its first URL will do.
            let first = url.trim_start_matches(',').split_ascii_whitespace().next();
            url = first?.trim_end_matches(',');
        }
        (!url.is_empty() && !inline(url)).then(|| StrTendril::from(url))
    });
    let alt = attr(&attrs, "alt").is_some_and(|alt| !alt.is_empty());
    attrs.retain(|a| a.name.local.as_ref() != "src");
    if let Some(src) = lazy.or_else(|| alt.then(StrTendril::new)) {
        let name = QualName::new(None, ns!(), local_name!("src"));
        attrs.push(Attribute { name, value: src });
    }
}

/// The value of the attribute `name`, trimmed.
fn attr<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a str> {
    let found = attrs.iter().find(|a| a.name.local.as_ref() == name);
    found.map(|a| a.value.trim())
}

/// `<sup>` and `<sub>` as they are: Markdown has neither, and `2<sup>8</sup>` read as
/// `28` would change the text.
fn kept_as_html(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let content = handlers.walk_children(element.node).content;
    let content = content.trim();
    if content.is_empty() {
        return None;
    }
    let tag = element.tag;
    Some(format!("<{tag}>{content}</{tag}>").into())
}

/// The text under `node`, whitespace collapsed.
fn text_of(node: &Rc<Node>) -> String {
    let mut text = String::new();
    let mut stack = vec![Rc::clone(node)];
    while let Some(node) = stack.pop() {
        if let NodeData::Text { contents } = &node.data {
            text.push_str(&contents.borrow());
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(html: &str) -> Converted {
        let base = Url::parse("https://example.com/docs/page").unwrap();
        Converter::new()
            .convert(html, &base, &Stop::default())
            .unwrap()
    }

    #[test]
    fn drops_what_is_not_content_and_makes_links_absolute() {
        let page = md("<html><head><title> A\n  page </title><style>p{}</style></head><body>\
             <nav><a href='/'>Home</a></nav><header>Site</header>\
             <script>alert(1)</script><noscript>enable js</noscript><!-- note -->\
             <h1>Head</h1><p>See <a href='other#x'>this</a> and <a href='//cdn.example.org/a'>that</a>.</p>\
             <svg><text>drawn</text></svg><footer>(c)</footer></body></html>");
        assert_eq!(page.title.as_deref(), Some("A page"));
        assert_eq!(
            page.markdown,
            "# Head\n\nSee [this](https://example.com/docs/other#x) and [that](https://cdn.example.org/a)."
        );
    }

    /// `html` as Markdown by the converter that keeps the chrome.
    fn with_chrome(html: &str) -> String {
        let base = Url::parse("https://example.com/").unwrap();
        let kept = Converter::with_chrome(true).convert(html, &base, &Stop::default());
        kept.unwrap().markdown
    }

    #[test]
    fn chrome_is_kept_when_asked() {
        let page =
            "<header>Site</header><nav><a href='/'>Home</a></nav><p>Text</p><footer>(c)</footer>";
        assert_eq!(
            with_chrome(page),
            "Site\n\n[Home](https://example.com/)\n\nText\n\n(c)"
        );
        assert_eq!(md(page).markdown, "Text");
    }

    #[test]
    fn pages_nested_past_any_stack_convert_with_their_text_in_order() {
        // Each of these recursed once a level in htmd: 5,000 levels overflowed the stack and
        // aborted the program. This runs on a test thread: 2 MiB of stack, a debug build.
        for (open, close) in [
            ("<div>", "</div>"),
            ("<blockquote>", "</blockquote>"),
            ("<ul><li>", "</li></ul>"),
            ("<table><tr><td>", "</td></tr></table>"),
            ("<span><a href='x'>", "</a></span>"),
            ("<b><i>", "</i></b>"),
            ("<sup>", "</sup>"),
        ] {
            let levels = 5_000;
            let mut html = String::new();
            for level in 0..levels {
                html.push_str(open);
                if level % 1_000 == 0 {
                    html.push_str(&format!("w{level} "));
                }
            }
            html.push_str("end");
            html.push_str(&close.repeat(levels));
            let page = md(&html);
            let words: Vec<_> = page
                .markdown
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.starts_with('w') || *w == "end")
                .collect();
            let expected = ["w0", "w1000", "w2000", "w3000", "w4000", "end"];
            assert_eq!(words, expected, "{open}");
        }
    }

    #[test]
    fn what_htmd_skips_is_emptied_before_its_table_handler_walks_it() {
        // htmd skips <nav>, <svg>..., but its table handler looks for headers through all a
        // table holds, recursively: 20,000 levels in a <nav> in a cell aborted a release
        // build. A thread of 256 KiB overflows at 5,000 levels in a debug build.
        for (open, inner, close) in [
            (
                "<table><tr><td><nav>",
                "<div>",
                "</nav></td></tr></table><p>after</p>",
            ),
            (
                "<table><tr><td><svg>",
                "<g>",
                "</svg></td></tr></table><p>after</p>",
            ),
        ] {
            let html = format!("{open}{}{close}", inner.repeat(5_000));
            let markdown = std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || md(&html).markdown)
                .unwrap()
                .join()
                .unwrap();
            assert_eq!(markdown, "after", "{open}");
        }
    }

    #[test]
    fn quotes_and_lists_indent_at_most_eight_levels() {
        // htmd re-reads a quote's content once for each quote around it: 256 levels of them
        // around 1.6 MB of paragraphs took 29 s and 710 MiB, for 205 MB of `> > > ...`.
        let body = "<p>line</p>".repeat(100);
        let quotes = format!("{}{body}", "<blockquote>".repeat(300));
        let deepest = md(&quotes)
            .markdown
            .lines()
            .map(|l| l.matches('>').count())
            .max();
        assert_eq!(deepest, Some(8));
        let lists = format!("{}{body}", "<ul><li>".repeat(300));
        let page = md(&lists).markdown;
        let widest = page.lines().map(|l| l.len() - l.trim_start().len()).max();
        assert!(widest.is_some_and(|w| w <= 8 * 2), "{widest:?}");
        assert_eq!(page.matches("line").count(), 100);
    }

    #[test]
    fn misnested_formatting_tags_are_refused_before_they_fill_memory() {
        // Each paragraph re-opens the `<b>`s still open: with 2,000 of them, one slice of
        // paragraphs would build 4 million elements (800 MB), so the budget is checked at
        // each element.
        let base = Url::parse("https://example.com/").unwrap();
        for open in [500, 2_000] {
            let bolds: String = (0..open).map(|n| format!("<b id={n}>")).collect();
            let page = format!("<p>{bolds}</p>{}", "<p>x</p>".repeat(2_000));
            let converted = Converter::new().convert(&page, &base, &Stop::default());
            let bytes = page.len();
            let budget = bytes + 10_000;
            let refused = Err(Unconverted::TooManyElements { bytes, budget });
            assert_eq!(converted, refused, "{open}");
        }
    }

    #[test]
    fn a_base_in_the_chrome_still_counts() {
        let page =
            md("<body><header><base href='https://other.example/'></header><a href='y'>y</a>");
        assert_eq!(page.markdown, "[y](https://other.example/y)");
    }

    #[test]
    fn flattening_keeps_what_is_shallow_as_it_is() {
        let deep = "<div>".repeat(MAX_DEPTH + 10);
        let page = md(&format!(
            "<h1>Head</h1><p>A <a href='/l'>link</a>.</p>{deep}<em>deep</em> <a href='/d'>here</a>"
        ));
        assert_eq!(
            page.markdown,
            "# Head\n\nA [link](https://example.com/l).\n\n*deep* [here](https://example.com/d)"
        );
        // A link around more than KEEP_DEPTH levels gives way to what it held: no `[](url)`.
        let (open, close) = ("<div>".repeat(100), "</div>".repeat(100));
        let page = md(&format!("{deep}<a href='/x'>{open}words{close}</a>"));
        assert_eq!(page.markdown, "words");
    }

    #[test]
    fn a_set_stop_ends_the_conversion() {
        let base = Url::parse("https://example.com/").unwrap();
        let stop = Stop::default();
        stop.set();
        let converted = Converter::new().convert("<p>text</p>", &base, &stop);
        assert_eq!(converted, Err(Unconverted::Stopped));
    }

    #[test]
    fn links_within_the_page_resolve_as_the_url_parser_would() {
        let base = Url::parse("https://example.com/std/u8.html?x=1#top").unwrap();
        for href in [
            "#method.len",
            "#",
            "#a%20b",
            "#a/b?c=d",
            "#x#y",
            "#a b",
            "#é",
            "#a`b",
        ] {
            let html = format!("<a href=\"{href}\">x</a>");
            let tree = parse(&html, &Stop::default()).unwrap();
            // The document must outlive the walk: dropping a node empties all below it.
            let mut stack = vec![Rc::clone(&tree)];
            let mut links = 0;
            while let Some(node) = stack.pop() {
                if let NodeData::Element { attrs, .. } = &node.data {
                    if !attrs.borrow().is_empty() {
                        links += 1;
                        Links::new(base.clone()).make_absolute(&node);
                        let value = attrs.borrow()[0].value.to_string();
                        assert_eq!(value, base.join(href).unwrap().as_str(), "{href}");
                    }
                }
                stack.extend(node.children.borrow().iter().cloned());
            }
            assert_eq!(links, 1);
        }
    }

    #[test]
    fn a_repeated_target_reads_the_same() {
        // Resolved once, then from the map: the second of each pair must read the same,
        // including a target that is no URL (left as it is).
        let page = md(
            "<p><a href='../a b'>1</a> <a href='../a b'>2</a> <img src='../a b'> \
             <a href='http://[x'>3</a> <a href='http://[x'>4</a></p>",
        );
        assert_eq!(
            page.markdown,
            "[1](https://example.com/a%20b) [2](https://example.com/a%20b) \
             ![](https://example.com/a%20b) [3](http://[x) [4](http://[x)"
        );
    }

    #[test]
    fn links_to_the_page_s_own_headings_are_left_out() {
        // Sphinx's and MkDocs' ¶, rustdoc's empty anchors and §, a `#`, Docusaurus's
        // zero-width space (its label is left out with it), GitHub's octicon.
        for heading in [
            "<h2 id=x>Use<a class=headerlink href='#x' title='Permalink to this heading'>¶</a></h2>",
            "<h2 id=x><a href='#x' class=anchor></a>Use</h2>",
            "<h2 id=x><a href='#x'>§</a>Use</h2>",
            "<h2 id=x>Use <a href=' #x '> # </a></h2>",
            "<h2 id=x>Use<a href='#x' class=hash-link aria-label='Direct link to Use'>&#8203;</a></h2>",
            "<h2><a id=x class=anchor aria-hidden=true href='#x'><svg><path d='M0'/></svg></a>Use</h2>",
            "<h2 id=x>Use<a href='#x'>🔗&#xFE0F;</a><a href='#x'>&#xFEFF;</a></h2>",
            "<h2 id=x>Use<a href='#x'><img src='data:image/png;base64,iVBOR'></a></h2>",
        ] {
            assert_eq!(md(heading).markdown, "## Use", "{heading}");
        }
        // What shows text or an image stays, and so does a mark that links elsewhere; a
        // space the link held still parts the words around it.
        let page = md(
            "<p><a href='#x'>see x</a> <a href='#top'><img src='up.png' alt=''></a> \
             <a href='/other#x'>¶</a> word<a href='#x'> </a>word<a href='#x'>¶</a>s</p>",
        );
        assert_eq!(
            page.markdown,
            "[see x](https://example.com/docs/page#x) \
             [![](https://example.com/docs/up.png)](https://example.com/docs/page#top) \
             [¶](https://example.com/other#x) word words"
        );
    }

    #[test]
    fn a_link_is_read_only_so_far_for_what_it_shows() {
        // Links can hold links (in MathML), and each would read all those it holds: past
        // READ_NODES nodes, a link counts as showing something.
        let empty = |n| "<span></span>".repeat(n);
        let (within, past) = (empty(READ_NODES - 1), empty(READ_NODES));
        let html = format!("<p><a href='#a'>{within}</a><a href='#b'>{past}</a></p>");
        let tree = parse(&html, &Stop::default()).unwrap();
        let mut stack = vec![Rc::clone(&tree)];
        let mut found = Vec::new();
        while let Some(node) = stack.pop() {
            if matches!(&node.data, NodeData::Element { name, .. } if name.local.as_ref() == "a") {
                found.push(shows(&node));
            }
            stack.extend(node.children.borrow().iter().rev().cloned());
        }
        assert_eq!(found, [Shows::Nothing, Shows::Content]);
    }

    #[test]
    fn an_icon_link_shows_its_label_and_a_script_link_its_text() {
        // The label: aria-label before title, an empty one passed over; an inlined image
        // shows nothing (see tidy_image), so its link shows the label.
        let page = md(
            "<p><a href='https://github.com/x' aria-label='x on GitHub' title='GH'><svg></svg></a> \
             <a href='/feed' aria-label=' ' title='Feed'><i class=icon></i></a> <a href='/blank'> </a> \
             <a href='/gh' aria-label='GitHub'><img src='data:image/png;base64,AAAA'></a> \
             <a href='JavaScript:void(0)' title='collapse'>[−]</a> \
             <a href='data:text/plain;base64,QUJD'>abc.txt</a> <a href='日本語'>ja</a></p>",
        );
        assert_eq!(
            page.markdown,
            "[x on GitHub](https://github.com/x \"GH\") [Feed](https://example.com/feed \"Feed\") \
             [](https://example.com/blank) [GitHub](https://example.com/gh) \\[−\\] abc.txt \
             [ja](https://example.com/docs/%E6%97%A5%E6%9C%AC%E8%AA%9E)"
        );
        // An empty href is the page itself, as before.
        let page = md("<p><a href=''>here</a> <a href=' '>there</a></p>");
        assert_eq!(
            page.markdown,
            "[here](https://example.com/docs/page) [there](https://example.com/docs/page)"
        );
    }

    #[test]
    fn chrome_by_its_aria_role_is_dropped_unless_kept() {
        let page = "<div role='navigation'><a href='/'>Home</a></div>\
             <div role='Banner'>Site</div><p>Text</p><div role='contentinfo presentation'>(c)</div>\
             <div role='main'>More</div>";
        assert_eq!(md(page).markdown, "Text\n\nMore");
        // Never the page's root: a role there is a mistake, not the page's chrome.
        let roots = "<body role=banner><main role=navigation><p>Text</p></main></body>";
        assert_eq!(md(roots).markdown, "Text");
        assert_eq!(
            with_chrome(page),
            "[Home](https://example.com/)\n\nSite\n\nText\n\n(c)\n\nMore"
        );
    }

    #[test]
    fn lazy_images_show_their_address_and_inline_ones_only_their_alt() {
        let page = md("<p><img src='data:image/gif;base64,R0lGOD' data-src=' /big.jpg ' alt='Big'> \
             <img data-original='/orig.png'> <img src='data:,' data-srcset='/s.jpg 320w, /m.jpg 640w'> \
             <img src='DATA:image/png;base64,iVBOR' alt='A chart'> <img src=' data:image/png,x'>\
             <img src='/plain.png' data-src='/other.png'> <img src='' alt='None'> \
             <img src=' ' data-src='/my photo.jpg'> <img src='data:,' srcset=', /a.jpg, /b.jpg 2x'> \
             <img src=''><img data-srcset='data:,x 1x' alt='Gone'></p>");
        assert_eq!(
            page.markdown,
            "![Big](https://example.com/big.jpg) ![](https://example.com/orig.png) \
             ![](https://example.com/s.jpg) ![A chart]() ![](https://example.com/plain.png) \
             ![None]() ![](https://example.com/my%20photo.jpg) ![](https://example.com/a.jpg) \
             ![Gone]()"
        );
    }

    #[test]
    fn superscripts_and_subscripts_stay_as_html() {
        let page = md("<p>2<sup>8</sup> − 1, H<sub>2</sub>O, x<sup> </sup>y</p>");
        assert_eq!(page.markdown, "2<sup>8</sup> − 1, H<sub>2</sub>O, xy");
    }

    #[test]
    fn base_href_wins() {
        let page = md("<head><base href='https://other.example/x/'><base href='https://third.example/'></head><a href='y'>y</a>");
        assert_eq!(page.markdown, "[y](https://other.example/x/y)");
        assert_eq!(page.title, None);
    }
}
