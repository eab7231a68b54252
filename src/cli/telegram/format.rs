//! An answer's Markdown as Telegram HTML: `<`, `>` and `&` escaped everywhere, fenced code
//! blocks as `<pre>`, inline code as `<code>`, `**bold**` as `<b>`. Anything else is left as
//! text; if Telegram still rejects the result, the bot resends the piece as plain text.

/// Escapes the three characters Telegram's HTML reads.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// One piece of an answer (see `split`) as HTML.
pub fn to_html(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + 64);
    // In a code block: the tag that closes it.
    let mut closing: Option<&str> = None;
    // No line break before the first line, nor right after an opening fence.
    let mut line_start = true;
    for line in markdown.split('\n') {
        let fence = line.trim_start().strip_prefix("```");
        match (fence, closing) {
            (Some(lang), None) => {
                if !line_start {
                    out.push('\n');
                }
                let lang = lang.trim();
                let named = !lang.is_empty()
                    && lang
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+-_#".contains(c));
                if named {
                    out.push_str(&format!("<pre><code class=\"language-{lang}\">"));
                    closing = Some("</code></pre>");
                } else {
                    out.push_str("<pre>");
                    closing = Some("</pre>");
                }
                line_start = true;
                continue;
            }
            (Some(_), Some(tag)) => {
                out.push_str(tag);
                closing = None;
                line_start = false;
                continue;
            }
            _ => {}
        }
        if !line_start {
            out.push('\n');
        }
        line_start = false;
        if closing.is_some() {
            out.push_str(&escape(line));
        } else {
            out.push_str(&inline(line));
        }
    }
    if let Some(tag) = closing {
        out.push_str(tag);
    }
    out
}

/// One line outside code blocks: `code` and **bold** spans, the rest escaped.
fn inline(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    loop {
        let tick = rest.find('`');
        let bold = rest.find("**");
        match (tick, bold) {
            (Some(t), b) if b.is_none_or(|b| t < b) => {
                let Some(end) = rest[t + 1..].find('`') else {
                    break;
                };
                out.push_str(&escape(&rest[..t]));
                out.push_str("<code>");
                out.push_str(&escape(&rest[t + 1..t + 1 + end]));
                out.push_str("</code>");
                rest = &rest[t + 2 + end..];
            }
            (_, Some(b)) => {
                let Some(end) = rest[b + 2..].find("**") else {
                    break;
                };
                out.push_str(&escape(&rest[..b]));
                out.push_str("<b>");
                out.push_str(&escape(&rest[b + 2..b + 2 + end]));
                out.push_str("</b>");
                rest = &rest[b + 4 + end..];
            }
            _ => break,
        }
    }
    out.push_str(&escape(rest));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_characters() {
        assert_eq!(escape("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(to_html("if a<b {}"), "if a&lt;b {}");
    }

    #[test]
    fn code_blocks_and_inline_spans() {
        assert_eq!(
            to_html("Run `ls -la` **now**:\n```sh\necho <hi>\n```\nok"),
            "Run <code>ls -la</code> <b>now</b>:\n<pre><code class=\"language-sh\">echo &lt;hi&gt;</code></pre>\nok"
        );
        assert_eq!(to_html("```\na & b\n```"), "<pre>a &amp; b</pre>");
        // An unclosed block is closed; an unpaired backtick is text.
        assert_eq!(to_html("```\nx"), "<pre>x</pre>");
        assert_eq!(to_html("a ` b"), "a ` b");
    }
}
