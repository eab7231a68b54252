//! What goes wrong with HTTP backends and what the user sees: rate limits and server errors
//! retried (and given up on), other errors not retried, replies cut off or not JSON, a
//! missing key found before any request, and Ctrl-C dropping the request in flight.

use super::server::{json, response, until_close};
use super::*;
use crate::common::wait_gone;

#[test]
fn rate_limit_waits_as_long_as_retry_after_says_then_succeeds() {
    let limited = response(
        429,
        &[("Content-Type", "application/json"), ("retry-after", "1")],
        br#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
    );
    let (ws, server) = setup(Anthropic, vec![limited, streamed(Anthropic, "text")], "");
    let run = run_api(&ws, &["hi"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "The notes say hello.\n");
    assert!(
        run.stderr()
            .contains("[retrying api in 1s after HTTP 429 (retry 1 of 2)]\n"),
        "{}",
        run.stderr()
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn server_errors_are_retried_until_the_retries_run_out() {
    let failing = || {
        json(
            500,
            r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#,
        )
    };
    let (ws, server) = setup(OpenAi, vec![failing(), failing(), failing()], "");
    let run = run_api(&ws, &["hi"]);
    run.expect_code(1);
    assert_eq!(server.requests().len(), 3, "one try and two retries");
    let stderr = run.stderr();
    for n in [1, 2] {
        assert!(
            stderr.contains(&format!("after HTTP 500 (retry {n} of 2)]\n")),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains(&format!(
            "backend `api` (POST {}/v1/chat/completions): HTTP 500 Internal Server Error: The server had an error while processing your request. (gave up after 3 tries)",
            server.url
        )),
        "{stderr}"
    );
    assert_eq!(run.stdout(), "");
}

#[test]
fn overloaded_is_retried_after_retry_after_ms_unless_retries_is_zero() {
    let overloaded = || {
        response(
            529,
            &[
                ("Content-Type", "application/json"),
                ("retry-after-ms", "20"),
            ],
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
    };
    let (ws, server) = setup(
        Anthropic,
        vec![overloaded(), streamed(Anthropic, "text")],
        "",
    );
    let run = run_api(&ws, &["hi"]);
    run.expect_code(0);
    assert!(
        run.stderr()
            .contains("[retrying api in 20ms after HTTP 529 (retry 1 of 2)]\n"),
        "{}",
        run.stderr()
    );
    assert_eq!(server.requests().len(), 2);

    let (ws, server) = setup(Anthropic, vec![overloaded()], "retries = 0\n");
    let run = run_api(&ws, &["hi"]);
    run.expect_code(1);
    assert_eq!(server.requests().len(), 1);
    assert!(
        run.stderr().contains("HTTP 529: Overloaded\n"),
        "{}",
        run.stderr()
    );
    assert!(!run.stderr().contains("retrying"), "{}", run.stderr());
}

#[test]
fn client_errors_are_not_retried_and_the_key_is_never_shown() {
    // Providers quote the key they got; agent-loop masks it.
    let unauthorized = json(
        401,
        &format!(
            r#"{{"error":{{"message":"Incorrect API key provided: {KEY}. You can find your API key at https://example.invalid/keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}}}"#
        ),
    );
    let (ws, server) = setup(OpenAi, vec![unauthorized], "");
    let run = run_api(&ws, &["hi"]);
    run.expect_code(1);
    assert_eq!(server.requests().len(), 1);
    assert!(
        run.stderr()
            .contains("HTTP 401 Unauthorized: Incorrect API key provided: [API key]."),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_stream_cut_off_mid_event_is_an_error_and_runs_no_tool() {
    for format in [Anthropic, OpenAi, Ollama] {
        let body = std::fs::read(fixture(&format.stream_file("cut"))).unwrap();
        let (ws, server) = setup(format, vec![until_close(format.stream_type(), &body)], "");
        let run = run_api(&ws, &["read the notes"]);
        run.expect_code(1);
        let stderr = run.stderr();
        assert!(
            stderr.contains("the stream ended before the reply was complete"),
            "{format:?}: {stderr}"
        );
        assert!(!stderr.contains("[tool"), "{format:?}: {stderr}");
        // What arrived before the cut was shown, and its line ended.
        assert!(run.stdout().starts_with("I'll look"), "{format:?}");
        assert!(run.stdout().ends_with('\n'), "{format:?}");
        assert_eq!(
            server.requests().len(),
            1,
            "a broken stream is not sent again"
        );
        assert!(ws.saved_messages().contains("read the notes"), "{format:?}");
        ws.assert_no_leftovers();
    }
}

#[test]
fn malformed_json_is_an_error_that_quotes_the_reply() {
    let (ws, _server) = setup(
        OpenAi,
        vec![json(
            200,
            r#"{"id":"chatcmpl-1","choices":[{"index":0,"message":{"#,
        )],
        "",
    );
    let run = run_api(&ws, &["--no-stream", "hi"]);
    run.expect_code(1);
    let stderr = run.stderr();
    assert!(stderr.contains("the reply is not valid JSON"), "{stderr}");
    assert!(
        stderr.contains(r#"it began: {"id":"chatcmpl-1""#),
        "{stderr}"
    );

    let body = std::fs::read(fixture("http/openai/malformed.sse")).unwrap();
    let (ws, _server) = setup(
        OpenAi,
        vec![response(
            200,
            &[("Content-Type", "text/event-stream")],
            &body,
        )],
        "",
    );
    let run = run_api(&ws, &["hi"]);
    run.expect_code(1);
    assert!(
        run.stderr().contains("a chunk is not valid JSON"),
        "{}",
        run.stderr()
    );
    assert_eq!(run.stdout(), "The notes say\n");
}

#[test]
fn a_missing_key_is_a_config_error_before_any_request() {
    let (ws, server) = setup(Anthropic, vec![], "");
    expect_missing_key(&ws, cmd(&ws, &["hi"]), "api", KEY_ENV);
    assert_eq!(server.requests().len(), 0);

    // The presets name their own variables.
    for (preset, var) in [
        ("claude-api", "ANTHROPIC_API_KEY"),
        ("openai", "OPENAI_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
        ("mistral", "MISTRAL_API_KEY"),
    ] {
        let stderr = expect_missing_key(&ws, ws.cmd(&["--backend", preset, "hi"]), preset, var);
        // docs/http.md shows this one as it is, the line of the built-in file included.
        if preset == "claude-api" {
            let line = stderr.lines().next().unwrap_or_default();
            let doc = include_str!("../../../docs/http.md");
            assert!(doc.contains(&format!("```\n{line}\n```")), "{line}");
        }
    }
}

/// Runs `cmd` without `var`, checks the error names both, and returns the run's stderr.
fn expect_missing_key(
    ws: &Workspace,
    mut cmd: std::process::Command,
    backend: &str,
    var: &str,
) -> String {
    cmd.env_remove(var);
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    let expected =
        format!("backend `{backend}` needs an API key: set the environment variable {var}");
    assert!(run.stderr().contains(&expected), "{}", run.stderr());
    run.stderr().to_string()
}

#[test]
fn ctrl_c_drops_the_request_in_flight() {
    let (ws, server) = setup(OpenAi, vec![Answer::Hang], "");
    let child = cmd(&ws, &["hi"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert_eq!(server.hang_event(), Some("request"));
    // SAFETY: kill(2) on the child we spawned; no memory is involved.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(
        server.hang_event(),
        Some("closed"),
        "the connection was closed"
    );
    let pid = child.id() as i32;
    let output = child.wait_with_output().unwrap();
    assert!(wait_gone(pid));
    assert_eq!(output.status.code(), Some(130));
    let run = Run { output };
    run.assert_append_only();
    assert!(
        run.stderr()
            .contains("[turn cancelled: the backend and any running tool were stopped]"),
        "{}",
        run.stderr()
    );
    assert!(ws.saved_messages().contains("[turn cancelled by the user]"));
    ws.assert_no_leftovers();
}

/// An address on 127.0.0.1 where nothing listens: a port the system gave out, then freed.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    addr.to_string()
}

#[test]
fn ollama_without_a_server_says_how_to_start_one_at_once() {
    let ws = crate::common::Workspace::new();
    let host = closed_port();
    let mut cmd = ws.cmd(&["--backend", "ollama", "--no-save", "hi"]);
    cmd.env("OLLAMA_HOST", &host);
    let run = ws.run_cmd(cmd);
    run.expect_code(1);
    let err = run.stderr();
    assert!(
        err.contains(&format!(
            "no Ollama server at http://{host}: start it with `ollama serve` or set OLLAMA_HOST"
        )),
        "{err}"
    );
    // Not retried: a server that is not running will not start in the meantime.
    assert!(!err.contains("retrying"), "{err}");
}

#[test]
fn backends_says_whether_a_local_server_answers() {
    let ws = crate::common::Workspace::new();
    let server = super::server::Server::start(vec![json(200, "{}")]);
    let status = |host: &str| {
        let mut cmd = ws.cmd(&["backends"]);
        cmd.env("OLLAMA_HOST", host);
        let run = ws.run_cmd(cmd);
        run.expect_code(0);
        let out = run.stdout();
        out.lines()
            .find(|l| l.starts_with("ollama "))
            .unwrap_or_else(|| panic!("{out}"))
            .to_string()
    };
    let up = status(server.url.trim_start_matches("http://"));
    assert!(up.contains("server answers"), "{up}");
    assert!(!up.contains("no key needed"), "{up}");
    let down = status(&closed_port());
    assert!(down.contains("no server answering"), "{down}");
}

#[test]
fn a_retry_after_over_the_limit_gives_up_at_once_with_the_providers_wait() {
    let limited = response(
        429,
        &[("Content-Type", "application/json"), ("retry-after", "150")],
        br#"{"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}"#,
    );
    let (ws, server) = setup(Anthropic, vec![limited], "retry_max_s = 60\n");
    let run = run_api(&ws, &["hi"]);
    run.expect_code(1);
    assert_eq!(server.requests().len(), 1, "not retried");
    assert!(
        run.stderr().contains(
            "HTTP 429 Too Many Requests: rate limited (the provider asked to wait 2m30s, longer \
             than retry_max_s = 60s; not retried)"
        ),
        "{}",
        run.stderr()
    );
    assert!(!run.stderr().contains("retrying"), "{}", run.stderr());
}

/// A key sent over plain HTTP to a host off this machine and network is warned of once (the
/// request reaches the scripted server through a proxy standing in for the public host); to
/// the server on 127.0.0.1 nothing is said. A password in OLLAMA_HOST is never shown.
#[test]
fn a_key_in_clear_text_to_a_public_host_is_warned_of_and_a_url_password_is_not_shown() {
    let (ws, server) = setup(
        OpenAi,
        vec![whole(OpenAi, "text"), whole(OpenAi, "text")],
        "",
    );
    let run = run_api(&ws, &["--no-save", "hi"]);
    run.expect_code(0);
    assert!(!run.stderr().contains("warning"), "{}", run.stderr());
    ws.config(&format!(
        "[backends.api]\ntype = \"openai\"\nbase_url = \"http://93.184.215.14/v1\"\n\
         api_key_env = \"{KEY_ENV}\"\nmodel = \"test-model\"\n"
    ));
    let mut proxied = cmd(&ws, &["--no-save", "hi"]);
    proxied.env("http_proxy", &server.url);
    let run = ws.run_cmd(proxied);
    run.expect_code(0);
    let warning = format!(
        "warning: backend api sends its API key ({KEY_ENV}) in clear text to \
         http://93.184.215.14/v1 (plain http://)"
    );
    assert_eq!(
        run.stderr().matches(&warning).count(),
        1,
        "{}",
        run.stderr()
    );
    assert_eq!(server.requests().len(), 2);
    let mut backends = ws.cmd(&["backends"]);
    backends.env("OLLAMA_HOST", "http://user:secretpw@127.0.0.1:9");
    let run = ws.run_cmd(backends);
    assert!(
        run.stdout().contains("http://***@127.0.0.1:9") && !run.stdout().contains("secretpw"),
        "{}",
        run.stdout()
    );
}
