//! Credentials for URL servers, with codex's key names: a bearer token and a header from
//! variables, a header as written. The fixture server refuses (401) any request without all
//! three; their secret values reach no file, message or tool environment.

use std::path::Path;

use super::{call, walk, HttpServer};
use crate::common::{fixture, Workspace};

const TOKEN: &str = "tok-0123456789abcdef";
const KEY: &str = "key-0123456789abcdef";
/// A header value written in the config, named like a secret.
const LITERAL: &str = "literal-0123456789abcdef";

fn guarded() -> HttpServer {
    HttpServer::start(
        &fixture("mcp/tiny-http-server.js"),
        &[],
        &[
            ("TINY_REQUIRE_TOKEN", Path::new(TOKEN)),
            ("TINY_REQUIRE_KEY", Path::new(KEY)),
        ],
    )
}

fn with_credentials(ws: &Workspace, url: &str) {
    ws.add_config(&format!(
        "\n[mcp.servers.web]\nurl = '{url}'\ntrust = true\n\
         bearer_token_env_var = \"TEAM_BEARER\"\n\
         http_headers = {{ \"X-Team\" = \"blue\", \"X-Session-Token\" = \"{LITERAL}\" }}\n\
         env_http_headers = {{ \"X-Api-Key\" = \"TEAM_KEY_VAR\" }}\n"
    ));
}

fn assert_nowhere(ws: &Workspace, secrets: &[&str], also: &str) {
    for secret in secrets {
        assert!(!also.contains(secret), "{secret} in {also}");
        // The configuration holds what it was written with.
        for file in walk(&ws.path(""))
            .into_iter()
            .filter(|f| !f.ends_with("backends.toml"))
        {
            let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
            assert!(!text.contains(secret), "{secret} in {}", file.display());
        }
    }
}

#[test]
fn a_bearer_token_and_headers_let_agent_loop_in() {
    let ws = Workspace::new();
    let http = guarded();
    with_credentials(&ws, &http.url);
    ws.reply(
        1,
        call("mcp.web.echo", r#"{"message":"let in"}"#)
            + &call(
                "bash",
                r#"{"command":"env | grep TEAM_ || echo no team variables"}"#,
            ),
    );
    ws.reply(2, "Done.\n");
    let mut cmd = ws.cmd(&["--backend", "fake", "--yes", "go"]);
    cmd.env("TEAM_BEARER", TOKEN).env("TEAM_KEY_VAR", KEY);
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second.contains("name=\"mcp.web.echo\" status=\"ok\">\necho: let in\n"),
        "{second}"
    );
    // The tools' environment holds neither variable.
    assert!(second.contains("no team variables"), "{second}");
    // The server echoed the headers into a tool's description and schema: masked there
    // too, the header written in the config as well as those from variables.
    let first = ws.prompt(1);
    let masked = "you sent Bearer [REDACTED], key [REDACTED], session [REDACTED]";
    assert_eq!(first.matches(masked).count(), 2, "{first}");
    assert_nowhere(&ws, &[TOKEN, KEY, LITERAL], &run.stderr());
}

#[test]
fn without_them_the_server_refuses_and_says_so() {
    let ws = Workspace::new();
    let http = guarded();
    ws.add_config(&format!("\n[mcp.servers.web]\nurl = '{}'\n", http.url));
    ws.reply(1, "Fine.\n");
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(0);
    assert!(
        run.stderr().contains("MCP server `web` did not start")
            && run.stderr().contains("HTTP 401 Unauthorized: who are you?"),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_refused_token_is_masked_in_the_message() {
    let ws = Workspace::new();
    let http = guarded();
    with_credentials(&ws, &http.url);
    ws.reply(1, "Fine.\n");
    let wrong = "wrong-token-0123456789";
    let mut cmd = ws.cmd(&["--backend", "fake", "go"]);
    cmd.env("TEAM_BEARER", wrong).env("TEAM_KEY_VAR", KEY);
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    assert!(
        run.stderr()
            .contains("who are you? you sent Bearer [REDACTED]"),
        "{}",
        run.stderr()
    );
    assert_nowhere(&ws, &[wrong, KEY], &run.stderr());
}

#[test]
fn a_missing_variable_is_named() {
    let ws = Workspace::new();
    with_credentials(&ws, "http://127.0.0.1:9/mcp");
    ws.reply(1, "Fine.\n");
    let run = ws.run(&["--backend", "fake", "go"]);
    run.expect_code(0);
    assert!(
        run.stderr()
            .contains("`env_http_headers` names the variable TEAM_KEY_VAR, which is not set"),
        "{}",
        run.stderr()
    );
}
