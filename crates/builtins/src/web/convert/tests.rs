//! The conversion's tests: real-world HTML shapes and what Markdown each becomes.

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
    // aborted the program. This runs on a test thread: 2 MiB of stack, which a debug build
    // of htmd fills at a few hundred levels (html5ever's parse of it grows with the square
    // of the depth: more levels would only slow the test down).
    for (open, close) in [
        ("<div>", "</div>"),
        ("<blockquote>", "</blockquote>"),
        ("<ul><li>", "</li></ul>"),
        ("<table><tr><td>", "</td></tr></table>"),
        ("<span><a href='x'>", "</a></span>"),
        ("<b><i>", "</i></b>"),
        ("<sup>", "</sup>"),
    ] {
        let levels = 1_000;
        let mut html = String::new();
        for level in 0..levels {
            html.push_str(open);
            if level % 200 == 0 {
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
        let expected = ["w0", "w200", "w400", "w600", "w800", "end"];
        assert_eq!(words, expected, "{open}");
    }
}

#[test]
fn what_htmd_skips_is_emptied_before_its_table_handler_walks_it() {
    // htmd skips <nav>, <svg>..., but its table handler looks for headers through all a
    // table holds, recursively: 20,000 levels in a <nav> in a cell aborted a release
    // build. A thread of 64 KiB overflows at 1,000 levels in a debug build.
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
        let html = format!("{open}{}{close}", inner.repeat(1_000));
        let markdown = std::thread::Builder::new()
            .stack_size(64 << 10)
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
    // each element. Fewer here: html5ever's work for each grows with the open `<b>`s.
    let base = Url::parse("https://example.com/").unwrap();
    for open in [100, 400] {
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
    let page = md("<body><header><base href='https://other.example/'></header><a href='y'>y</a>");
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
    let page = md(
        "<p><img src='data:image/gif;base64,R0lGOD' data-src=' /big.jpg ' alt='Big'> \
         <img data-original='/orig.png'> <img src='data:,' data-srcset='/s.jpg 320w, /m.jpg 640w'> \
         <img src='DATA:image/png;base64,iVBOR' alt='A chart'> <img src=' data:image/png,x'>\
         <img src='/plain.png' data-src='/other.png'> <img src='' alt='None'> \
         <img src=' ' data-src='/my photo.jpg'> <img src='data:,' srcset=', /a.jpg, /b.jpg 2x'> \
         <img src=''><img data-srcset='data:,x 1x' alt='Gone'></p>",
    );
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
