//! What read_url makes of an HTML page (once `charset.rs` has decoded it): Markdown by
//! `htmd` (turndown's rules on html5ever's DOM), after the parts that are not the page's
//! content are dropped and links made absolute.
//!
//! A page is untrusted input, and two of its shapes would hurt the program: nesting, which
//! html5ever's tree building pays for quadratically (20,000 nested `<div>`s take 1.8 s, and
//! a 5 MB page of them an hour) and htmd's walk recursively (a few thousand levels overflow
//! any stack and abort the program). So the page is parsed in slices with a check for
//! [`Stop`] between them, and the tree htmd walks is at most [`MAX_DEPTH`] deep (plus
//! [`KEEP_DEPTH`]).

use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use htmd::options::{BulletListMarker, Options};
use htmd::{HtmlToMarkdown, Node};
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::TreeBuilderOpts;
use html5ever::{parse_document, ParseOpts};
use markup5ever_rcdom::{NodeData, RcDom};
use url::{Position, Url};

/// Elements whose content is never the page's text.
const NOT_CONTENT: &[&str] = &[
    "script", "style", "noscript", "svg", "template", "iframe", "object", "canvas",
];

/// The page's chrome, dropped unless `web_keep_chrome` is set.
const CHROME: &[&str] = &["nav", "header", "footer"];

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

    /// The converter that keeps the page's chrome (`<nav>`, `<header>`, `<footer>`) or not.
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
                .build(),
            keep_chrome: keep,
        }
    }

    /// Whether htmd leaves out the element `tag` and all it holds.
    fn drops(&self, tag: &str) -> bool {
        NOT_CONTENT.contains(&tag) || (!self.keep_chrome && CHROME.contains(&tag))
    }

    /// `html` as Markdown, relative links resolved against `base` (or the page's own
    /// `<base href>`); `None` if `stop` was set before it was done. It blocks the caller
    /// until done (an async caller wants `spawn_blocking`), and its walk of a tree
    /// [`MAX_DEPTH`] deep fits the 2 MiB stack of any thread, even in a debug build.
    pub fn convert(&self, html: &str, base: &Url, stop: &Stop) -> Option<Converted> {
        let tree = parse(html, stop)?;
        let mut title = None;
        let mut base_href = None;
        let mut links = Vec::new();
        // An explicit stack: the tree can be of any depth. Only elements are walked, and
        // not those htmd drops: a link there is never written.
        let mut stack = vec![(Rc::clone(&tree), 0)];
        while let Some((node, depth)) = stack.pop() {
            if let NodeData::Element { name, attrs, .. } = &node.data {
                match name.local.as_ref() {
                    "title" if title.is_none() => title = Some(text_of(&node)),
                    // The document's base URL is the first `<base href>`'s.
                    "base" if base_href.is_none() => {
                        base_href = attrs
                            .borrow()
                            .iter()
                            .find(|a| a.name.local.as_ref() == "href")
                            .map(|a| a.value.to_string());
                    }
                    "a" | "img" => links.push(Rc::clone(&node)),
                    tag if self.drops(tag) => continue,
                    _ => {}
                }
            }
            if depth == MAX_DEPTH {
                flatten(&node);
            }
            let children = node.children.borrow();
            let elements = children.iter().rev();
            let elements = elements.filter(|c| matches!(c.data, NodeData::Element { .. }));
            stack.extend(elements.map(|c| (Rc::clone(c), depth + 1)));
        }
        let base = match base_href.and_then(|href| base.join(&href).ok()) {
            Some(url) => url,
            None => base.clone(),
        };
        for node in links {
            absolute_links(&node, &base);
        }
        if stop.is_set() {
            return None;
        }
        Some(Converted {
            title: title.filter(|t| !t.is_empty()),
            markdown: self.htmd.tree_to_markdown(&tree),
        })
    }
}

/// Set from another thread to end a conversion early (read_url's timeout, an interrupted
/// turn): it is checked between slices of the page.
#[derive(Debug, Default)]
pub struct Stop(AtomicBool);

impl Stop {
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// How much of the page html5ever takes at a time between checks for [`Stop`]. A slice's
/// work grows with the depth the page has reached: by the default 30 s timeout, a page of
/// nested `<div>`s is about 80,000 deep, and a slice of them then takes about a second.
const SLICE_BYTES: usize = 8 << 10;

/// The page's DOM, as a browser builds it (scripting off, so `<noscript>` holds markup and
/// is dropped like the rest); `None` if `stop` was set first.
fn parse(html: &str, stop: &Stop) -> Option<Rc<Node>> {
    let options = ParseOpts {
        tree_builder: TreeBuilderOpts {
            scripting_enabled: false,
            ..TreeBuilderOpts::default()
        },
        ..ParseOpts::default()
    };
    let mut parser = parse_document(RcDom::default(), options);
    let mut rest = html;
    while !rest.is_empty() {
        if stop.is_set() {
            return None;
        }
        let mut end = rest.len().min(SLICE_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        parser.process(StrTendril::from_slice(&rest[..end]));
        rest = &rest[end..];
    }
    Some(parser.finish().document)
}

/// How deep the tree htmd walks may be, near enough: below this depth the page is
/// [`flatten`]ed. Real pages nest a few dozen levels; with [`KEEP_DEPTH`], htmd's recursive
/// walk takes at most 1.5 MiB of stack in a debug build (about 5 KiB a level) and 0.4 MiB in
/// a release build.
pub const MAX_DEPTH: usize = 256;

/// What [`flatten`] keeps whole: a subtree at most this deep (a paragraph with its links
/// and emphasis, a list, a table).
const KEEP_DEPTH: usize = 32;

/// Brings the tree under `node` (at the depth limit) within [`KEEP_DEPTH`] levels: each
/// descendant whose subtree is deeper gives its children to `node`, so they follow it as
/// siblings. The text stays, in its order; only the nesting goes.
fn flatten(node: &Rc<Node>) {
    // The subtree in document order, each node with its parent's place in it (a parent
    // comes before its children), walked without recursion.
    let mut order: Vec<(Rc<Node>, Option<usize>)> = Vec::new();
    let mut pending: Vec<_> = node
        .children
        .borrow()
        .iter()
        .rev()
        .map(|c| (Rc::clone(c), None))
        .collect();
    while let Some((child, parent)) = pending.pop() {
        let at = Some(order.len());
        pending.extend(
            child
                .children
                .borrow()
                .iter()
                .rev()
                .map(|c| (Rc::clone(c), at)),
        );
        order.push((child, parent));
    }
    // Each node's height and size (itself and all under it), from the last node back.
    let mut height = vec![0; order.len()];
    let mut size = vec![1; order.len()];
    for at in (0..order.len()).rev() {
        if let Some(parent) = order[at].1 {
            height[parent] = height[parent].max(height[at] + 1);
            size[parent] += size[at];
        }
    }
    let mut flat = Vec::new();
    let mut at = 0;
    while let Some((child, _)) = order.get(at) {
        if height[at] > KEEP_DEPTH {
            // Its children come next in `order`, and are placed in turn.
            child.children.take();
            at += 1;
        } else {
            at += size[at];
        }
        child.parent.set(Some(Rc::downgrade(node)));
        flat.push(Rc::clone(child));
    }
    *node.children.borrow_mut() = flat;
}

/// Rewrites `href` and `src` to absolute URLs; `javascript:` links lose their target.
fn absolute_links(node: &Rc<Node>, base: &Url) {
    let NodeData::Element { attrs, .. } = &node.data else {
        return;
    };
    for attr in attrs.borrow_mut().iter_mut() {
        if !matches!(attr.name.local.as_ref(), "href" | "src") {
            continue;
        }
        let href = attr.value.trim();
        let absolute = match in_page(href) {
            Some(fragment) => format!("{}#{fragment}", &base[..Position::AfterQuery]),
            None => match base.join(href) {
                Ok(url) => url.into(),
                Err(_) => continue,
            },
        };
        attr.value = StrTendril::from(absolute);
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

    #[test]
    fn chrome_is_kept_when_asked() {
        let page =
            "<header>Site</header><nav><a href='/'>Home</a></nav><p>Text</p><footer>(c)</footer>";
        let base = Url::parse("https://example.com/").unwrap();
        let kept = Converter::with_chrome(true)
            .convert(page, &base, &Stop::default())
            .unwrap();
        assert_eq!(
            kept.markdown,
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
            assert_eq!(
                words,
                ["w0", "w1000", "w2000", "w3000", "w4000", "end"],
                "{open}"
            );
        }
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
    }

    #[test]
    fn a_set_stop_ends_the_conversion() {
        let base = Url::parse("https://example.com/").unwrap();
        let stop = Stop::default();
        stop.set();
        assert_eq!(Converter::new().convert("<p>text</p>", &base, &stop), None);
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
                        absolute_links(&node, &base);
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
    fn base_href_wins() {
        let page = md("<head><base href='https://other.example/x/'><base href='https://third.example/'></head><a href='y'>y</a>");
        assert_eq!(page.markdown, "[y](https://other.example/x/y)");
        assert_eq!(page.title, None);
    }
}
