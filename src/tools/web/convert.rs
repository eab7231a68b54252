//! What read_url makes of an HTML page (once `charset.rs` has decoded it): Markdown by
//! `htmd` (turndown's rules on html5ever's DOM), after the parts that are not the page's
//! content are dropped and links made absolute.

use std::rc::Rc;

use htmd::options::{BulletListMarker, Options};
use htmd::{HtmlToMarkdown, Node};
use markup5ever_rcdom::NodeData;
use url::Url;

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
                // `<noscript>` is then parsed as markup, and skipped like the rest.
                .scripting_enabled(false)
                .build(),
        }
    }

    /// `html` as Markdown, relative links resolved against `base` (or the page's own
    /// `<base href>`).
    pub fn convert(&self, html: &str, base: &Url) -> Converted {
        // html5ever never fails on text input; the io::Result is for its sink interface.
        let Ok(tree) = self.htmd.html_to_tree(html) else {
            return Converted {
                title: None,
                markdown: html.to_string(),
            };
        };
        let mut title = None;
        let mut base = base.clone();
        let mut links = Vec::new();
        // An explicit stack: real pages nest deep enough to make recursion a risk.
        let mut stack = vec![Rc::clone(&tree)];
        while let Some(node) = stack.pop() {
            if let NodeData::Element { name, attrs, .. } = &node.data {
                match name.local.as_ref() {
                    "title" if title.is_none() => title = Some(text_of(&node)),
                    "base" => {
                        let href = attrs
                            .borrow()
                            .iter()
                            .find(|a| a.name.local.as_ref() == "href")
                            .map(|a| a.value.to_string());
                        if let Some(href) = href {
                            if let Ok(url) = base.join(&href) {
                                base = url;
                            }
                        }
                    }
                    "a" | "img" => links.push(Rc::clone(&node)),
                    _ => {}
                }
            }
            stack.extend(node.children.borrow().iter().rev().cloned());
        }
        for node in links {
            absolute_links(&node, &base);
        }
        let title = title.filter(|t| !t.is_empty());
        Converted {
            title,
            markdown: self.htmd.tree_to_markdown(&tree),
        }
    }
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
        let value = attr.value.to_string();
        if let Ok(url) = base.join(value.trim()) {
            attr.value = url.to_string().into();
        }
    }
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
        Converter::new().convert(html, &Url::parse("https://example.com/docs/page").unwrap())
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
        let kept = Converter::with_chrome(true).convert(page, &base);
        assert_eq!(
            kept.markdown,
            "Site\n\n[Home](https://example.com/)\n\nText\n\n(c)"
        );
        assert_eq!(md(page).markdown, "Text");
    }

    #[test]
    fn base_href_wins() {
        let page = md("<head><base href='https://other.example/x/'></head><a href='y'>y</a>");
        assert_eq!(page.markdown, "[y](https://other.example/x/y)");
        assert_eq!(page.title, None);
    }
}
