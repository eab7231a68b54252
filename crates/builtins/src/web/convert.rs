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
    /// `CHROME_ROLES`) or not.
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
mod tests;
