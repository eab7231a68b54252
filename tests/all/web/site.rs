//! A small web site on 127.0.0.1 for the read_url and web_search tests: the article of
//! `fixtures/web/`, redirects (relative, to a private name, to the metadata address, in a
//! loop), a body that stalls, a body that never ends, a PDF, JSON, a Latin-1 page, a
//! windows-1251 one, a Shift_JIS one, pages and a binary with no content type or an empty
//! charset, a page with a header, nav and footer, a Brave-shaped search API and a SearXNG
//! one. Each connection is answered on its own thread (a stalled body does not hold up the
//! others), and every request is recorded.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::fixture;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Request {
    /// Path and query, as sent.
    pub target: String,
    headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub struct Site {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
}

/// The size the PDF claims and has.
pub const PDF_SIZE: usize = 4321;

/// The Brave answer for `rust html`.
pub const BRAVE_RESULTS: &str = r#"{"type":"search","query":{"original":"rust html"},"web":{"type":"search","results":[
 {"title":"htmd - <strong>Rust</strong> crate","url":"https://docs.rs/htmd","description":"A turndown.js inspired <strong>HTML</strong> to Markdown converter &amp; more.","language":"en"},
 {"title":"html5ever","url":"https://github.com/servo/html5ever","description":"High-performance browser-grade <strong>HTML5</strong> parser.","language":"en"},
 {"title":"third","url":"https://example.com/3","description":"not asked for"}]}}"#;

impl Site {
    pub fn start() -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let log = Arc::clone(&log);
                std::thread::spawn(move || serve(stream, port, &log));
            }
        });
        Site {
            url,
            port,
            requests,
        }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// The recorded requests for `target` (path and query).
    pub fn requests_for(&self, prefix: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.target.starts_with(prefix))
            .collect()
    }
}

fn serve(mut stream: TcpStream, port: u16, log: &Mutex<Vec<Request>>) {
    let Some(request) = read_head(&mut stream) else {
        return;
    };
    log.lock().unwrap().push(request.clone());
    let path = request.target.split('?').next().unwrap_or("");
    let html = "text/html; charset=utf-8";
    match path {
        "/guides/toml" => {
            let body = std::fs::read(fixture("web/article.html")).unwrap();
            full(&mut stream, "200 OK", &[("Content-Type", html)], &body);
        }
        "/r/relative" => redirect(&mut stream, "/r/again"),
        "/r/again" => redirect(&mut stream, "../guides/toml"),
        "/r/private" => redirect(&mut stream, &format!("http://localhost:{port}/guides/toml")),
        "/r/metadata" => redirect(&mut stream, "http://169.254.169.254/latest/meta-data/"),
        "/r/loop" => redirect(&mut stream, "/r/loop"),
        "/doc.pdf" => {
            let mut body = b"%PDF-1.7\n".to_vec();
            body.resize(PDF_SIZE, b'x');
            let head = [("Content-Type", "application/pdf")];
            full(&mut stream, "200 OK", &head, &body);
        }
        "/data.json" => {
            let body = br#"{"name": "agent-loop", "tools": ["read_url"]}"#;
            let head = [("Content-Type", "application/json")];
            full(&mut stream, "200 OK", &head, body);
        }
        "/latin1" => {
            let body = b"<html><head><title>Caf\xe9</title></head><body><p>cr\xe8me br\xfbl\xe9e</p></body></html>";
            let head = [("Content-Type", "text/html; charset=ISO-8859-1")];
            full(&mut stream, "200 OK", &head, body);
        }
        "/cyrillic" => {
            // windows-1251, said by the page alone: "Новости", "Чай с мёдом", "Привет, мир".
            let body = b"<html><head><meta charset=\"windows-1251\"><title>\xcd\xee\xe2\xee\xf1\xf2\xe8</title></head>\
                <body><h1>\xd7\xe0\xe9 \xf1 \xec\xb8\xe4\xee\xec</h1><p>\xcf\xf0\xe8\xe2\xe5\xf2, \xec\xe8\xf0</p></body></html>";
            full(
                &mut stream,
                "200 OK",
                &[("Content-Type", "text/html")],
                body,
            );
        }
        "/shift-jis" => {
            // "あ" in Shift_JIS, said by the header.
            let body =
                b"<html><head><title>Japanese</title></head><body><p>\x82\xa0 ok</p></body></html>";
            let head = [("Content-Type", "text/html; charset=Shift_JIS")];
            full(&mut stream, "200 OK", &head, body);
        }
        "/untyped-page" => {
            // No Content-Type: markup, in the windows-1252 its <meta> names.
            let body = b"<html><head><meta charset=windows-1252><title>Caf\xe9</title></head><body><p>cr\xe8me</p></body></html>";
            full(&mut stream, "200 OK", &[], body);
        }
        "/untyped-binary" => full(&mut stream, "200 OK", &[], b"\x00\x01binary\xff"),
        "/untyped-bom" => {
            let body = b"\xEF\xBB\xBF<html><title>BOM</title><p>caf\xc3\xa9</p>";
            full(&mut stream, "200 OK", &[], body);
        }
        "/empty-charset" => {
            let head = [("Content-Type", "text/html; charset=")];
            full(&mut stream, "200 OK", &head, b"<p>caf\xc3\xa9</p>");
        }
        "/chrome" => {
            let body = b"<html><head><title>Chrome</title></head><body>\
                <header><p>Site name</p><nav><a href=\"/\">Home</a> <a href=\"/about\">About</a></nav></header>\
                <main><h1>Story</h1><p>The text.</p></main><footer>(c) 2026</footer></body></html>";
            full(&mut stream, "200 OK", &[("Content-Type", html)], body);
        }
        "/gzipped" => {
            let page = b"<html><head><title>Packed</title></head><body><p>Sent gzip-compressed.</p></body></html>";
            let head = [("Content-Type", "text/html"), ("Content-Encoding", "gzip")];
            full(&mut stream, "200 OK", &head, &gzip(page));
        }
        "/gzip-bomb" => {
            // 10 MB of text in 10 KB: only the capped part is ever inflated.
            let head = [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")];
            full(&mut stream, "200 OK", &head, &gzip(&vec![b'0'; 10_000_000]));
        }
        "/bad-gzip" => {
            // Says gzip, is not.
            let head = [("Content-Type", "text/html"), ("Content-Encoding", "gzip")];
            full(
                &mut stream,
                "200 OK",
                &head,
                b"\x1f\x8b\x08\x00not really gzip",
            );
        }
        "/none-encoding" => {
            // `none` is no compression: the body is plain, and read as such.
            let head = [("Content-Type", "text/plain"), ("Content-Encoding", "none")];
            full(&mut stream, "200 OK", &head, b"plain after all");
        }
        "/brotli-404" => {
            // Brotli although only gzip was offered: a misconfigured server's answer.
            let head = [("Content-Type", "text/html"), ("Content-Encoding", "br")];
            full(&mut stream, "404 Not Found", &head, b"\x8b\x02\x80gone");
        }
        "/missing" => {
            let body = b"<html><head><title>Not here</title></head><body><h1>404</h1><p>No such page.</p></body></html>";
            full(
                &mut stream,
                "404 Not Found",
                &[("Content-Type", html)],
                body,
            );
        }
        "/deep" => {
            // Deeper than htmd's recursive walk goes on any stack: 5,000 nested `<div>`s.
            let body = format!(
                "<title>Deep</title>{}<p>At the <a href=\"/bottom\">bottom</a>.</p>",
                "<div>".repeat(5_000)
            );
            full(
                &mut stream,
                "200 OK",
                &[("Content-Type", html)],
                body.as_bytes(),
            );
        }
        "/nested" => {
            // 400,000 nested `<div>`s (2 MB): html5ever's tree building is quadratic in the
            // depth, so this page would take hours to parse.
            let body = "<div>".repeat(400_000);
            full(
                &mut stream,
                "200 OK",
                &[("Content-Type", html)],
                body.as_bytes(),
            );
        }
        "/misnested" => {
            // 500 `<b>`s left open: each paragraph re-opens them all (200 paragraphs would
            // build 100,000 elements from 6.5 KB).
            let bolds: String = (0..500).map(|n| format!("<b id={n}>")).collect();
            let body = format!("<p>{bolds}</p>{}", "<p>x</p>".repeat(200));
            full(
                &mut stream,
                "200 OK",
                &[("Content-Type", html)],
                body.as_bytes(),
            );
        }
        "/slow" => {
            // The head and a first part, then nothing until the client gives up.
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<p>the start";
            if stream.write_all(head.as_bytes()).is_ok() {
                let _ = stream.flush();
                let mut sink = [0u8; 1024];
                while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
            }
        }
        "/huge" => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
            if stream.write_all(head.as_bytes()).is_ok() {
                while stream
                    .write_all(b"0123456789".repeat(100).as_slice())
                    .is_ok()
                {}
            }
        }
        "/res/v1/web/search" => {
            let head = [("Content-Type", "application/json")];
            full(&mut stream, "200 OK", &head, BRAVE_RESULTS.as_bytes());
        }
        "/searxng/search" => {
            let body = br#"{"query":"rust html","results":[{"title":"htmd","url":"https://docs.rs/htmd","content":"HTML to <b>Markdown</b>","engine":"duckduckgo"}]}"#;
            let head = [("Content-Type", "application/json")];
            full(&mut stream, "200 OK", &head, body);
        }
        "/limited/res/v1/web/search" => {
            let body = br#"{"type":"ErrorResponse","error":{"id":"e1","status":429,"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan."}}"#;
            let head = [("Content-Type", "application/json"), ("Retry-After", "7")];
            full(&mut stream, "429 Too Many Requests", &head, body);
        }
        _ => full(
            &mut stream,
            "404 Not Found",
            &[("Content-Type", "text/plain")],
            b"no",
        ),
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn redirect(stream: &mut TcpStream, location: &str) {
    full(stream, "302 Found", &[("Location", location)], b"");
}

fn full(stream: &mut TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut out = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    let _ = stream.write_all(&bytes);
    let _ = stream.flush();
}

/// The request line and headers (the tools send GETs: no body).
fn read_head(stream: &mut TcpStream) -> Option<Request> {
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .ok()?;
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    while !data.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    }
    stream.set_read_timeout(None).ok()?;
    let head = String::from_utf8_lossy(&data);
    let mut lines = head.split("\r\n");
    let target = lines.next()?.split(' ').nth(1)?.to_string();
    let headers = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Some(Request { target, headers })
}

/// `bytes` gzip-compressed, as a server sends a page.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}
