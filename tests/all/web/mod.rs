//! read_url and web_search end to end, against the small site of `site.rs` on 127.0.0.1:
//! the exact Markdown a CLI agent and an HTTP backend receive for a realistic article,
//! redirects, private addresses refused (a literal, `localhost`, a redirect, the metadata
//! address) unless an allow rule names the URL, content types, caps and timeouts, the cut to
//! an artifact, approval once per host, and web_search with and without its key.
//!
//! The site is on 127.0.0.1, a private address: every fetch from it needs an allow rule
//! naming it, by design.

mod site;

use serde_json::json;

use crate::common::{fixture, poll, Pty, Run, Workspace};
use crate::http::{self, server, Format};
use site::{Site, PDF_SIZE};

fn call(tool: &str, args: serde_json::Value) -> String {
    format!(
        "<tool_call>{}</tool_call>\n",
        json!({"name": tool, "arguments": args})
    )
}

fn read_url(url: &str) -> String {
    call("read_url", json!({ "url": url }))
}

/// The allow rule naming every URL of the site.
fn allow(site: &Site) -> String {
    format!("read_url:{}/*", site.url)
}

/// What read_url must give the model for the article.
fn article(site: &Site) -> String {
    let text = std::fs::read_to_string(fixture("web/article.md")).unwrap();
    text.trim_end().replace("{base}", &site.url)
}

/// Runs the fake agent with one reply of `calls`, then "done"; returns the run and each
/// tool result of the second prompt as (status, text).
fn results(
    ws: &Workspace,
    calls: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Run, Vec<(String, String)>) {
    ws.reply(1, calls);
    ws.reply(2, "done\n");
    let mut cmd = ws.cmd(&[&["--backend", "fake"], args, &["go"]].concat());
    cmd.envs(env.iter().copied());
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let prompt = ws.prompt(2);
    (run, tool_results(&prompt))
}

fn tool_results(prompt: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = prompt;
    while let Some(start) = rest.find("<tool_result ") {
        rest = &rest[start..];
        let status_at = rest.find("status=\"").unwrap() + 8;
        let status_end = status_at + rest[status_at..].find('"').unwrap();
        let body_at = rest.find(">\n").unwrap() + 2;
        let body_end = rest.find("\n</tool_result>").unwrap();
        out.push((
            rest[status_at..status_end].to_string(),
            rest[body_at..body_end].to_string(),
        ));
        rest = &rest[body_end..];
    }
    out
}

fn ok(text: impl Into<String>) -> (String, String) {
    ("ok".into(), text.into())
}

fn error(text: impl Into<String>) -> (String, String) {
    ("error".into(), text.into())
}

#[test]
fn an_article_becomes_markdown_for_a_cli_agent() {
    let site = Site::start();
    let ws = Workspace::new();
    let calls = read_url(&format!("{}/guides/toml", site.url));
    // No terminal and no --yes: the allow rule alone lets it run (and reach 127.0.0.1).
    let (run, results) = results(&ws, &calls, &["--allow", &allow(&site)], &[]);
    assert_eq!(results, [ok(article(&site))], "{}", run.stderr());
    assert!(run
        .stderr()
        .contains(&format!("[tool read_url] {}/guides/toml", site.url)));
    let request = &site.requests_for("/guides/toml")[0];
    assert_eq!(
        request.header("user-agent"),
        Some(concat!("agent-loop/", env!("CARGO_PKG_VERSION")))
    );
    // Pages may come gzip-compressed, and no other way.
    assert_eq!(request.header("accept-encoding"), Some("gzip"));
    // The preamble offers read_url; web_search needs a key nobody set.
    let first = ws.prompt(1);
    assert!(first.contains("## read_url"), "{first}");
    assert!(!first.contains("web_search"), "{first}");
}

#[test]
fn an_http_backend_gets_the_same_markdown_after_redirects() {
    let site = Site::start();
    let url = format!("{}/r/relative", site.url);
    let reply = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_web", "type": "function",
                "function": {"name": "read_url", "arguments": json!({"url": url}).to_string()}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    });
    let text = std::fs::read(fixture("http/openai/text.json")).unwrap();
    let answers = vec![
        server::json(200, &reply.to_string()),
        server::response(200, &[("Content-Type", "application/json")], &text),
    ];
    let (ws, server) = http::setup(Format::OpenAi, answers, "");
    let run = http::run_api(&ws, &["--no-stream", "--allow", &allow(&site), "read it"]);
    run.expect_code(0);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{}", run.stderr());
    let first = requests[0].json();
    let tool = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "read_url")
        .expect("read_url is offered");
    assert_eq!(tool["function"]["parameters"]["required"], json!(["url"]));
    let messages = requests[1].json()["messages"].clone();
    let result = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    assert_eq!(result["tool_call_id"], "call_web");
    // Two redirects later, the page's own URL resolves its links.
    assert_eq!(result["content"].as_str().unwrap(), article(&site));
    assert_eq!(site.requests_for("/r/").len(), 2);
}

#[test]
fn private_addresses_are_refused_unless_a_rule_names_them() {
    let site = Site::start();
    let ws = Workspace::new();
    let port = site.port;
    let calls = [
        read_url(&format!("{}/guides/toml", site.url)),
        read_url(&format!("http://localhost:{port}/guides/toml")),
        read_url(&format!("{}/r/private", site.url)),
        read_url(&format!("{}/r/metadata", site.url)),
        read_url(&format!("http://[::1]:{port}/")),
    ]
    .concat();
    // The rule names the redirects only, not where they lead.
    let rule = format!("read_url:{}/r/*", site.url);
    let (_, results) = results(&ws, &calls, &["--yes", "--allow", &rule], &[]);
    let advice = |origin: &str| {
        format!(
            ", not the public internet. read_url only fetches such addresses when an allow \
             rule names the URL (--allow 'read_url:{origin}*')."
        )
    };
    let local = format!("http://localhost:{port}/");
    assert_eq!(results.len(), 5, "{results:?}");
    assert_eq!(
        results[0],
        error(format!(
            "refused: {}/guides/toml is a loopback address{}",
            site.url,
            advice(&format!("{}/", site.url))
        ))
    );
    for (i, result) in [(1, &results[1]), (2, &results[2])] {
        let (status, text) = result;
        assert_eq!(status, "error", "{i}: {text}");
        let prefix = format!(
            "refused: http://localhost:{port}/guides/toml is a loopback address (localhost resolves to "
        );
        assert!(text.starts_with(&prefix), "{i}: {text}");
        assert!(text.ends_with(&advice(&local)), "{i}: {text}");
    }
    assert_eq!(
        results[3],
        error(format!(
            "refused: http://169.254.169.254/latest/meta-data/ is a link-local (cloud metadata lives here) address{}",
            advice("http://169.254.169.254/")
        ))
    );
    assert_eq!(
        results[4],
        error(format!(
            "refused: http://[::1]:{port}/ is a loopback address{}",
            advice(&format!("http://[::1]:{port}/"))
        ))
    );
    // Only the two redirects named by the rule were fetched; nothing reached the article.
    let targets: Vec<String> = site.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets.len(), 2, "{targets:?}");
    assert!(targets.contains(&"/r/private".to_string()), "{targets:?}");
    assert!(targets.contains(&"/r/metadata".to_string()), "{targets:?}");
}

#[test]
fn content_types_caps_and_errors() {
    let site = Site::start();
    let ws = Workspace::new();
    let at = |path: &str| format!("{}{path}", site.url);
    let calls = [
        read_url(&at("/doc.pdf")),
        read_url(&at("/data.json")),
        read_url(&at("/latin1")),
        read_url(&at("/cyrillic")),
        read_url(&at("/shift-jis")),
        read_url(&at("/untyped-page")),
        read_url(&at("/untyped-binary")),
        read_url(&at("/untyped-bom")),
        read_url(&at("/empty-charset")),
        read_url(&at("/gzipped")),
        read_url(&at("/gzip-bomb")),
        read_url(&at("/bad-gzip")),
        read_url(&at("/none-encoding")),
        read_url(&at("/brotli-404")),
        read_url(&at("/missing")),
        read_url(&at("/huge")),
        read_url(&at("/r/loop")),
        read_url("ftp://example.com/file"),
        call(
            "read_url",
            json!({"url": at("/data.json"), "max_chars": 12}),
        ),
    ]
    .concat();
    let env = [("AGENT_LOOP_WEB_MAX_BYTES", "1000")];
    let (_, results) = results(&ws, &calls, &["--yes", "--allow", &allow(&site)], &env);
    let json_text = format!(
        "URL: {}\n\n{}",
        at("/data.json"),
        r#"{"name": "agent-loop", "tools": ["read_url"]}"#
    );
    assert_eq!(
        results,
        [
            error(format!(
                "refused: {} is application/pdf ({PDF_SIZE} bytes), not a page; read_url reads HTML, text and JSON only",
                at("/doc.pdf")
            )),
            ok(json_text.clone()),
            ok(format!("Title: Café\nURL: {}\n\ncrème brûlée", at("/latin1"))),
            ok(format!(
                "Title: Новости\nURL: {}\n\n# Чай с мёдом\n\nПривет, мир",
                at("/cyrillic")
            )),
            ok(format!(
                "Title: Japanese\nURL: {}\n\n{}",
                at("/shift-jis"),
                "あ ok"
            )),
            ok(format!("Title: Café\nURL: {}\n\ncrème", at("/untyped-page"))),
            error(format!(
                "refused: {} names no content type and is not UTF-8 text (9 bytes); read_url \
                 reads HTML, text and JSON only",
                at("/untyped-binary")
            )),
            ok(format!("Title: BOM\nURL: {}\n\ncafé", at("/untyped-bom"))),
            ok(format!("URL: {}\n\ncafé", at("/empty-charset"))),
            ok(format!(
                "Title: Packed\nURL: {}\n\nSent gzip-compressed.",
                at("/gzipped")
            )),
            ok(format!(
                "URL: {}\n\n{}\n\n[cut: only the first 1000 bytes of the page were read (web_max_bytes)]",
                at("/gzip-bomb"),
                "0".repeat(1000)
            )),
            error(format!(
                "reading {} failed: error decoding response body: deflate decompression error",
                at("/bad-gzip")
            )),
            ok(format!("URL: {}\n\nplain after all", at("/none-encoding"))),
            error(format!(
                "refused: {} (HTTP 404 Not Found) came br-compressed; read_url asks for gzip or none, and decodes gzip only",
                at("/brotli-404")
            )),
            error(format!(
                "HTTP 404 Not Found\nTitle: Not here\nURL: {}\n\n# 404\n\nNo such page.",
                at("/missing")
            )),
            ok(format!(
                "URL: {}\n\n{}\n\n[cut: only the first 1000 bytes of the page were read (web_max_bytes)]",
                at("/huge"),
                "0123456789".repeat(100)
            )),
            error(format!(
                "more than 5 redirects; the last one pointed to {}",
                at("/r/loop")
            )),
            error("refused: ftp://example.com/file is not http or https; read_url reads web pages only"),
            ok(format!(
                "URL: http://\n\n[cut at max_chars: 12 of {} characters shown]",
                json_text.chars().count()
            )),
        ]
    );
    // The PDF's body was never read: one request, refused on its head.
    assert_eq!(site.requests_for("/doc.pdf").len(), 1);
}

#[test]
fn web_keep_chrome_keeps_nav_header_and_footer() {
    let site = Site::start();
    let url = format!("{}/chrome", site.url);
    let content = "# Story\n\nThe text.";
    let chrome = format!(
        "Site name\n\n[Home]({0}/) [About]({0}/about)\n\n{content}\n\n(c) 2026",
        site.url
    );
    for (env, markdown) in [
        (None, content.to_string()),
        (Some("false"), content.to_string()),
        (Some("yes"), chrome.clone()),
        (Some("1"), chrome),
    ] {
        let ws = Workspace::new();
        let env: Vec<(&str, &str)> = env
            .map(|v| ("AGENT_LOOP_WEB_KEEP_CHROME", v))
            .into_iter()
            .collect();
        let (run, results) = results(&ws, &read_url(&url), &["--allow", &allow(&site)], &env);
        let expected = format!("Title: Chrome\nURL: {url}\n\n{markdown}");
        assert_eq!(results, [ok(expected)], "{env:?}: {}", run.stderr());
    }
    // A value that is no boolean is refused, by a run and by `agent-loop config`.
    let ws = Workspace::new();
    let mut cmd = ws.cmd(&["config"]);
    cmd.env("AGENT_LOOP_WEB_KEEP_CHROME", "maybe");
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(
        run.stderr().contains("AGENT_LOOP_WEB_KEEP_CHROME") && run.stderr().contains("maybe"),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_stalled_body_times_out() {
    let site = Site::start();
    let ws = Workspace::new();
    let calls = read_url(&format!("{}/slow", site.url));
    // The body never completes: the timeout decides nothing but how long the test waits.
    let env = [("AGENT_LOOP_WEB_TIMEOUT", "1")];
    let (_, results) = results(&ws, &calls, &["--allow", &allow(&site)], &env);
    assert_eq!(
        results,
        [error(format!(
            "reading {}/slow timed out after 1s (web_timeout)",
            site.url
        ))]
    );
}

#[test]
fn hostile_nesting_neither_aborts_nor_outlives_the_timeout() {
    let site = Site::start();
    let ws = Workspace::new();
    let url = &site.url;
    let allowed = ["--allow", &allow(&site)];
    // /deep converts (its depth aborts nothing) and /misnested is refused for the elements it
    // builds: with a timeout no machine reaches, as how long they take is not the subject.
    let calls = ["deep", "misnested"].map(|page| read_url(&format!("{url}/{page}")));
    let (_, converted) = results(
        &ws,
        &calls.concat(),
        &allowed,
        &[("AGENT_LOOP_WEB_TIMEOUT", "3600")],
    );
    assert_eq!(
        converted,
        [
            ok(format!(
                "Title: Deep\nURL: {url}/deep\n\nAt the [bottom]({url}/bottom)."
            )),
            error(format!(
                "refused: {url}/misnested: its 6497 bytes of HTML build more than 16497 \
                 elements (misnested formatting tags), more than any page needs; it was not \
                 converted"
            )),
        ]
    );
    // /nested never would end: the conversion is stopped at the timeout, and the run ends.
    let ws = Workspace::new();
    let calls = read_url(&format!("{url}/nested"));
    let (_, cut) = results(&ws, &calls, &allowed, &[("AGENT_LOOP_WEB_TIMEOUT", "1")]);
    assert_eq!(
        cut,
        [error(format!(
            "reading {url}/nested timed out after 1s (web_timeout)"
        ))]
    );
}

#[test]
fn a_long_page_is_cut_with_the_full_markdown_saved() {
    let site = Site::start();
    let ws = Workspace::new();
    let calls = read_url(&format!("{}/guides/toml", site.url));
    let env = [("AGENT_LOOP_TOOL_RESULT_MAX_CHARS", "300")];
    let (_, results) = results(&ws, &calls, &["--allow", &allow(&site)], &env);
    let (status, text) = &results[0];
    assert_eq!(status, "ok");
    assert!(text.starts_with("Title: Parsing TOML in Rust"), "{text}");
    let saved_at = text
        .split("the full output is saved in ")
        .nth(1)
        .and_then(|rest| rest.split(": read it").next())
        .unwrap_or_else(|| panic!("no artifact note in {text}"));
    let saved = std::fs::read_to_string(saved_at).expect("the artifact");
    assert_eq!(saved, article(&site));
}

#[test]
fn approval_is_asked_once_per_host() {
    let site = Site::start();
    let ws = Workspace::new();
    let port = site.port;
    let calls = [
        read_url(&format!("{}/a", site.url)),
        read_url(&format!("{}/b", site.url)),
        read_url(&format!("http://localhost:{port}/c")),
        read_url(&format!("http://localhost:{port}/d")),
    ]
    .concat();
    ws.reply(1, calls);
    ws.reply(2, "done\n");
    let mut pty = Pty::spawn(&ws, &[], &["--display", "plain", "--backend", "fake", "go"]);
    for asked in 1..=2 {
        poll(|| {
            let screen = String::from_utf8_lossy(&pty.output()).into_owned();
            (screen.matches("Allow read_url").count() == asked).then_some(())
        })
        .unwrap_or_else(|| panic!("question {asked} never came"));
        pty.send("y\n");
    }
    let (code, bytes) = pty.finish();
    let screen = String::from_utf8_lossy(&bytes);
    assert_eq!(code, 0, "{screen}");
    // Once for 127.0.0.1:PORT, once for localhost:PORT.
    assert_eq!(screen.matches("Allow read_url").count(), 2, "{screen}");
    // Approved, and still refused: no rule names these private addresses.
    let results = tool_results(&ws.prompt(2));
    assert_eq!(results.len(), 4);
    for (status, text) in &results {
        assert_eq!(status, "error");
        assert!(text.starts_with("refused: http://"), "{text}");
    }
    assert!(site.requests().is_empty());
}

#[test]
fn web_search_lists_brave_results_and_reports_limits() {
    let site = Site::start();
    let ws = Workspace::new();
    let calls = [
        call("web_search", json!({"query": "rust html", "count": 2})),
        call("web_search", json!({"query": "anything"})),
    ]
    .concat();
    ws.reply(1, &calls);
    ws.reply(2, "done\n");
    ws.reply(3, &calls[..calls.find('\n').unwrap() + 1]);
    ws.reply(4, "done\n");
    let env = [
        ("BRAVE_API_KEY", "brave-test-key"),
        ("BRAVE_SEARCH_BASE_URL", site.url.as_str()),
    ];
    let (_, results) = results(&ws, &calls, &["--tools", "web_search"], &env);
    let first = "1. htmd - Rust crate\n   https://docs.rs/htmd\n   A turndown.js inspired HTML to Markdown converter & more.\n\n\
                 2. html5ever\n   https://github.com/servo/html5ever\n   High-performance browser-grade HTML5 parser.";
    assert_eq!(results[0], ok(first));
    assert_eq!(results[1].0, "ok");
    assert!(results[1].1.starts_with("1. htmd"), "{}", results[1].1);
    let requests = site.requests_for("/res/v1/web/search");
    assert_eq!(requests[0].target, "/res/v1/web/search?q=rust+html&count=2");
    assert_eq!(requests[1].target, "/res/v1/web/search?q=anything&count=5");
    assert_eq!(
        requests[0].header("x-subscription-token"),
        Some("brave-test-key")
    );
    // A rate limit goes back with the provider's words and when to try again.
    let limited = format!("{}/limited", site.url);
    let env = [
        ("BRAVE_API_KEY", "brave-test-key"),
        ("BRAVE_SEARCH_BASE_URL", limited.as_str()),
    ];
    let mut cmd = ws.cmd(&["--backend", "fake", "--tools", "web_search", "again"]);
    cmd.envs(env);
    ws.run_cmd(cmd).expect_code(0);
    let results = tool_results(&ws.prompt(4));
    assert_eq!(
        results.last().unwrap(),
        &error("Brave Search answered HTTP 429 Too Many Requests: Request rate limit exceeded for plan. (Retry-After: 7)")
    );
}

#[test]
fn web_search_needs_a_key() {
    let ws = Workspace::new();
    let run = ws.run(&["--backend", "fake", "--tools", "read,web_search", "go"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("web_search needs a search provider: set BRAVE_API_KEY"),
        "{}",
        run.stderr()
    );
    assert_eq!(ws.runs(), 0);
    let missing =
        "web_search: not offered; set BRAVE_API_KEY (or SEARXNG_URL for a SearXNG instance)";
    let config = ws.run(&["config"]);
    assert!(config.stdout().contains(missing), "{}", config.stdout());
    let charsets = "read_url decodes: every charset of the WHATWG Encoding Standard (UTF-8, \
         UTF-16, the single-byte ones and the Chinese, Japanese and Korean legacy ones), by \
         encoding_rs";
    assert!(config.stdout().contains(charsets), "{}", config.stdout());
    let backends = ws.run(&["backends"]);
    assert!(backends.stdout().contains(missing), "{}", backends.stdout());
    let mut cmd = ws.cmd(&["backends"]);
    cmd.env("BRAVE_API_KEY", "k");
    let run = ws.run_cmd(cmd);
    assert!(
        run.stdout()
            .contains("web_search: Brave Search (BRAVE_API_KEY is set)"),
        "{}",
        run.stdout()
    );
}

#[test]
fn searxng_is_the_other_provider() {
    let site = Site::start();
    let ws = Workspace::new();
    let calls = call("web_search", json!({"query": "rust html"}));
    let base = format!("{}/searxng", site.url);
    let env = [("SEARXNG_URL", base.as_str())];
    let (_, results) = results(&ws, &calls, &["--tools", "web_search"], &env);
    assert_eq!(
        results,
        [ok("1. htmd\n   https://docs.rs/htmd\n   HTML to Markdown")]
    );
    let requests = site.requests_for("/searxng/search");
    assert_eq!(
        requests[0].target,
        "/searxng/search?q=rust+html&format=json"
    );
}

/// A service bound to 0.0.0.0 answers on every address of the machine, public or not:
/// read_url refuses them all (here the address of the default route, which on the test
/// machine is in TEST-NET-1), and the service sees no connection.
#[test]
fn the_machines_own_addresses_are_refused() {
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // The source address of the default route: connecting a UDP socket sends nothing.
    let udp = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    let own = match udp.connect("203.0.113.1:9") {
        Ok(()) => udp.local_addr().unwrap().ip(),
        Err(_) => std::net::Ipv4Addr::LOCALHOST.into(),
    };
    let ws = Workspace::new();
    let url = format!("http://{own}:{port}/");
    let (_, results) = results(&ws, &read_url(&url), &["--yes"], &[]);
    assert_eq!(results.len(), 1, "{results:?}");
    let (status, text) = &results[0];
    assert_eq!(status, "error", "{text}");
    assert!(text.starts_with(&format!("refused: {url} is a ")), "{text}");
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "read_url connected to {url}"
    );
}
