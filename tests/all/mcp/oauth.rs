//! OAuth for URL servers: `agent-loop mcp login` against a fixture authorization server
//! (metadata, dynamic registration, PKCE checked, token and refresh grants) guarding a fixture
//! MCP server. The test plays the browser: it GETs the printed URL, whose redirect brings the
//! code to agent-loop's callback on 127.0.0.1. Then runs send the token, an expired one is
//! refreshed, `mcp logout` forgets it, and a server without a login says how to log in.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::{call, walk, HttpServer};
use crate::common::{fixture, Workspace};

struct Guarded {
    server: HttpServer,
    log: PathBuf,
}

/// The fixture, and a workspace whose `docs` server is it.
fn guarded(ws: &Workspace) -> Guarded {
    let log = ws.path("oauth.log");
    let server = HttpServer::start(
        &fixture("mcp/oauth-server.js"),
        &[],
        &[("OAUTH_LOG_FILE", &log)],
    );
    ws.add_config(&format!(
        "\n[mcp.servers.docs]\nurl = '{}'\ntrust = true\n",
        server.url
    ));
    Guarded { server, log }
}

fn token_file(ws: &Workspace) -> PathBuf {
    ws.path("data/agent-loop/mcp-tokens/docs.json")
}

fn tokens(ws: &Workspace) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(token_file(ws)).unwrap()).unwrap()
}

fn access_token(ws: &Workspace) -> String {
    tokens(ws)["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_string()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A GET of `url` on 127.0.0.1: the status, the Location header and the body.
fn get(url: &str) -> (u16, Option<String>, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let location = head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_string())
    });
    (status, location, body.to_string())
}

/// `agent-loop mcp login docs`, with the test as the browser; its stderr.
fn login(ws: &Workspace) -> String {
    login_after(ws, false)
}

/// [`login`]; `idle_first`: a connection to the callback that sends nothing comes first, as a
/// browser's speculative one may.
fn login_after(ws: &Workspace, idle_first: bool) -> String {
    let mut child = ws
        .cmd(&["mcp", "login", "docs"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let url = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no authorization URL in:\n{seen}"
        );
        seen.push_str(&line);
        if line.starts_with("http://127.0.0.1:") && line.contains("/authorize?") {
            break line.trim().to_string();
        }
    };
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    let back = seen.split("comes back to http://").nth(1).unwrap();
    let port = back.split(['/', ')']).next().unwrap().to_string();
    let _idle = idle_first.then(|| std::net::TcpStream::connect(&port).unwrap());
    // A forged callback (another page guessing the port) is refused, and the login waits on.
    let (status, _, body) = get(&format!("http://{port}/callback?code=forged&state=forged"));
    assert_eq!(status, 400, "{body}");
    let (status, location, body) = get(&url);
    assert_eq!(status, 302, "{body}");
    let callback = location.expect("a redirect to the callback");
    assert!(callback.starts_with("http://127.0.0.1:"), "{callback}");
    let (status, _, page) = get(&callback);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("logged in to docs"), "{page}");
    stderr.read_to_string(&mut seen).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{seen}");
    assert!(out.stdout.is_empty());
    seen
}

/// A run whose model calls `mcp.docs.whoami`: what the tool answered (the second prompt).
fn whoami(ws: &Workspace) -> (String, String) {
    ws.reply(1, call("mcp.docs.whoami", "{}"));
    ws.reply(2, "Done.\n");
    let run = ws.run(&["--backend", "fake", "--session", "s", "who am I?"]);
    run.expect_code(0);
    (ws.prompt(2), run.stderr())
}

fn grants(guarded: &Guarded) -> Vec<String> {
    std::fs::read_to_string(&guarded.log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["grant"].to_string())
        .collect()
}

#[test]
fn login_stores_private_tokens_that_a_run_sends() {
    let ws = Workspace::new();
    let guarded = guarded(&ws);
    let said = login(&ws);
    assert!(said.contains("logged in to MCP server `docs`"), "{said}");
    assert_eq!(mode(&token_file(&ws)), 0o600);
    assert_eq!(mode(token_file(&ws).parent().unwrap()), 0o700);
    let token = access_token(&ws);
    assert!(token.starts_with("at-1-"), "{token}");
    let (prompt, stderr) = whoami(&ws);
    assert!(
        prompt.contains("name=\"mcp.docs.whoami\" status=\"ok\">\ntoken 1\n"),
        "{prompt}"
    );
    assert!(!stderr.contains(&token), "{stderr}");
    assert!(prompt.contains("sent [REDACTED]"), "{prompt}");
    only_in_its_file(&ws, &token);
    assert_eq!(grants(&guarded), ["\"authorization_code\""]);
    drop(guarded.server);
}

#[test]
fn an_expired_access_token_is_refreshed_before_connecting() {
    let ws = Workspace::new();
    let guarded = guarded(&ws);
    login(&ws);
    let old = access_token(&ws);
    // Received long ago: its hour is over.
    let mut stored = tokens(&ws);
    stored["token_received_at"] = serde_json::json!(1);
    std::fs::write(token_file(&ws), stored.to_string()).unwrap();
    let (prompt, _) = whoami(&ws);
    assert!(prompt.contains("status=\"ok\">\ntoken 2\n"), "{prompt}");
    assert_eq!(
        grants(&guarded),
        ["\"authorization_code\"", "\"refresh_token\""]
    );
    assert_ne!(access_token(&ws), old);
    assert_eq!(mode(&token_file(&ws)), 0o600);
    // The token learnt at start-up is masked as the stored one is.
    assert!(prompt.contains("sent [REDACTED]"), "{prompt}");
    only_in_its_file(&ws, &access_token(&ws));
}

#[test]
fn a_token_refreshed_mid_session_is_masked_too() {
    let ws = Workspace::new();
    let log = ws.path("oauth.log");
    // Tokens that live 0 s: rmcp refreshes before every request, the tool call's included,
    // so the token the call sends (and the server echoes) is one no start-up has seen.
    let server = HttpServer::start(
        &fixture("mcp/oauth-server.js"),
        &[],
        &[
            ("OAUTH_LOG_FILE", &log),
            ("OAUTH_EXPIRES_IN", Path::new("0")),
        ],
    );
    ws.add_config(&format!(
        "\n[mcp.servers.docs]\nurl = '{}'\ntrust = true\n",
        server.url
    ));
    login(&ws);
    let (prompt, stderr) = whoami(&ws);
    let sent = prompt.split("status=\"ok\">\ntoken ").nth(1).unwrap_or("");
    let n: usize = sent.split('\n').next().unwrap().parse().unwrap();
    assert!(n > 2, "{prompt}");
    assert!(prompt.contains("sent [REDACTED]"), "{prompt}");
    assert!(ws.prompt(1).contains("Which token you sent ([REDACTED])"));
    // No token issued, but the one in its file, is in any file or message.
    let issued = |text: &str| {
        (1..=n + 2).any(|i| {
            text.split(&format!("at-{i}-"))
                .skip(1)
                .any(|rest| rest.len() >= 24)
        })
    };
    assert!(!issued(&stderr), "{stderr}");
    for file in walk(&ws.path("")) {
        if file != token_file(&ws) && file != log {
            let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
            assert!(!issued(&text), "a token is in {}", file.display());
        }
    }
    drop(server);
}

/// The token reaches no file of the workspace but its own.
fn only_in_its_file(ws: &Workspace, token: &str) {
    for file in walk(&ws.path("")) {
        if file != token_file(ws) {
            let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
            assert!(!text.contains(token), "the token is in {}", file.display());
        }
    }
}

#[test]
fn without_a_login_the_start_up_note_names_the_command_and_logout_forgets() {
    let ws = Workspace::new();
    let _guarded = guarded(&ws);
    ws.reply(0, "Fine.\n");
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(0);
    let note = "MCP server `docs` needs a login: run `agent-loop mcp login docs`";
    assert!(run.stderr().contains(note), "{}", run.stderr());
    login_after(&ws, true);
    assert!(token_file(&ws).exists());
    let out = ws.run(&["mcp", "logout", "docs"]);
    out.expect_code(0);
    assert!(
        out.stderr().contains("logged out of MCP server `docs`"),
        "{}",
        out.stderr()
    );
    assert!(!token_file(&ws).exists());
    let run = ws.run(&["--backend", "fake", "go"]);
    assert!(run.stderr().contains(note), "{}", run.stderr());
}

#[test]
fn login_to_an_unknown_or_command_server_is_refused() {
    let ws = Workspace::new();
    ws.add_config("\n[mcp.servers.local]\ncommand = 'true'\n");
    let run = ws.run(&["mcp", "login", "nosuch"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("no MCP server named `nosuch`"),
        "{}",
        run.stderr()
    );
    let run = ws.run(&["mcp", "login", "local"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("is a command, not a URL"),
        "{}",
        run.stderr()
    );
    // The server is named once.
    assert_eq!(
        run.stderr().matches("`local`").count(),
        1,
        "{}",
        run.stderr()
    );
}
