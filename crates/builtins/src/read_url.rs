//! read_url: a web page as Markdown (title first, links absolute, chrome and scripts left
//! out), text and JSON as they are; other content types are refused with their type and
//! size. It sends data out of the machine, so it asks for approval (once per host) and
//! refuses private addresses unless an allow rule names the URL (see `web/fetch.rs`).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::tool::{Builtin, Effect, Param, ToolContext, ToolKind, ToolOutput};
use super::web::charset::decode;
use super::web::convert::{Converted, Converter};
use super::web::dom::Stop;
use super::web::fetch::{self, Reply};
use super::web::{host_of, WebOptions};

pub struct ReadUrl;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    url: String,
    max_chars: Option<usize>,
}

/// How the body is read.
#[derive(PartialEq)]
enum Kind {
    Html,
    Text,
    /// No `Content-Type`: HTML or text if it is UTF-8, else refused.
    Unnamed,
}

fn kind(media_type: &str) -> Option<Kind> {
    match media_type {
        "text/html" | "application/xhtml+xml" => Some(Kind::Html),
        "" => Some(Kind::Unnamed),
        t if t.starts_with("text/")
            || t == "application/json"
            || t.ends_with("+json")
            || t == "application/xml"
            || t.ends_with("+xml")
            || t == "application/javascript" =>
        {
            Some(Kind::Text)
        }
        _ => None,
    }
}

impl Builtin for ReadUrl {
    const NAME: &'static str = "read_url";
    const DESCRIPTION: &'static str =
        "Fetch a web page (http or https) and return it as Markdown: the title first, then the \
        content with absolute links; scripts and styles are left out (navigation, headers and \
        footers too, unless the user keeps them). Text and JSON come back as they are; images, \
        PDFs and other binary types are refused. max_chars keeps only the start of a long page.";
    const MAIN_PARAM: &'static str = "url";
    const KIND: ToolKind = ToolKind::Fetch;
    /// It sends data out of the machine.
    const EFFECT: Effect = Effect::SendsOut;
    const APPROVAL_KEY: Option<fn(&Value) -> Option<String>> =
        Some(|args| host_of(args.get("url")?.as_str()?));
    const PARAMS: &'static [Param] = &[
        Param::required("url", "string", "The http or https URL to read."),
        Param::optional(
            "max_chars",
            "integer",
            "Return at most this many characters of the page.",
        ),
    ];
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let opts = &ctx.web;
        let fetched = tokio::time::timeout(opts.timeout, read(&args.url, opts)).await;
        let output = match fetched {
            Ok(Ok(output)) => output,
            Ok(Err(error)) => return error,
            Err(_) => {
                return ToolOutput::error(format!(
                    "reading {} timed out after {} (web_timeout)",
                    args.url,
                    fetch::seconds(opts.timeout)
                ))
            }
        };
        match args.max_chars {
            Some(max) => cut(output, max),
            None => output,
        }
    }
}

/// The page converted on tokio's blocking threads: a 1 MB page takes about 50 ms, a
/// hostile one seconds, too long to hold the one thread of the runtime (the Telegram bot's
/// other chats, Ctrl-C). Dropping this future (web_timeout, an interrupted turn) stops the
/// parsing, the part whose time a page can stretch without bound (see `web/dom.rs`).
async fn to_markdown(html: String, url: Url, keep_chrome: bool) -> Result<Converted, ToolOutput> {
    struct StopOnDrop(Arc<Stop>);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            self.0.set();
        }
    }
    let stop = StopOnDrop(Arc::new(Stop::default()));
    let flag = Arc::clone(&stop.0);
    let shown = url.to_string();
    let converted = tokio::task::spawn_blocking(move || {
        Converter::with_chrome(keep_chrome).convert(&html, &url, &flag)
    })
    .await;
    match converted {
        Ok(Ok(page)) => Ok(page),
        Ok(Err(why)) => Err(ToolOutput::error(format!("refused: {shown}: {why}"))),
        Err(error) => Err(ToolOutput::error(format!(
            "converting {shown} to Markdown failed: {error}"
        ))),
    }
}

/// The page as the model gets it.
async fn read(url: &str, opts: &WebOptions) -> Result<ToolOutput, ToolOutput> {
    let failed = |e: super::web::failure::FetchError| ToolOutput::error(e.to_string());
    let reply = fetch::get(url, opts).await.map_err(failed)?;
    let Some(kind) = kind(&reply.media_type) else {
        return Err(refuse(&reply));
    };
    let (final_url, status, charset) = (reply.url.clone(), reply.status, reply.charset.clone());
    let length = reply.length;
    let body = reply.body(opts.max_bytes).await.map_err(failed)?;
    let html = match kind {
        Kind::Html => true,
        Kind::Text => false,
        Kind::Unnamed => {
            // Markup is read as HTML, in the charset its <meta> names; anything else must
            // be UTF-8 text.
            let start = body
                .bytes
                .strip_prefix(b"\xEF\xBB\xBF")
                .unwrap_or(&body.bytes);
            let markup = start.trim_ascii_start().first() == Some(&b'<');
            if !markup && std::str::from_utf8(&body.bytes).is_err() {
                let size = length.unwrap_or(body.bytes.len() as u64);
                return Err(ToolOutput::error(format!(
                    "refused: {final_url} names no content type and is not UTF-8 text \
                     ({}); read_url reads HTML, text and JSON only",
                    size_text(Some(size))
                )));
            }
            markup
        }
    };
    let (text, note) = decode(&body.bytes, charset.as_deref(), html);
    let mut out = String::new();
    if !status.is_success() {
        out.push_str(&format!("HTTP {status}\n"));
    }
    if html {
        let page = to_markdown(text, final_url.clone(), opts.keep_chrome).await?;
        if let Some(title) = page.title {
            out.push_str(&format!("Title: {title}\n"));
        }
        out.push_str(&format!("URL: {final_url}\n\n{}", page.markdown));
    } else {
        out.push_str(&format!("URL: {final_url}\n\n{}", text.trim_end()));
    }
    if let Some(note) = note {
        out.push_str(&format!("\n\n[{note}]"));
    }
    if body.cut {
        out.push_str(&format!(
            "\n\n[cut: only the first {} bytes of the page were read (web_max_bytes)]",
            opts.max_bytes
        ));
    }
    Ok(ToolOutput {
        ok: status.is_success(),
        output: out,
        exit_code: None,
    })
}

/// The answer for a type read_url does not read, from the head alone (the body is not read).
fn refuse(reply: &Reply) -> ToolOutput {
    ToolOutput::error(format!(
        "refused: {} is {} ({}), not a page; read_url reads HTML, text and JSON only",
        reply.url,
        reply.media_type,
        size_text(reply.length)
    ))
}

fn size_text(length: Option<u64>) -> String {
    match length {
        Some(n) => crate::plural::count(n, "byte", "bytes"),
        None => "size not given".into(),
    }
}

/// The first `max` characters, with a note when more were left out.
fn cut(mut output: ToolOutput, max: usize) -> ToolOutput {
    let total = output.output.chars().count();
    if total > max {
        let end = output
            .output
            .char_indices()
            .nth(max)
            .map_or(output.output.len(), |(i, _)| i);
        output.output.truncate(end);
        output.output.push_str(&format!(
            "\n\n[cut at max_chars: {max} of {total} characters shown]"
        ));
    }
    output
}
