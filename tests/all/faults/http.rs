//! HTTP servers that answer with an HTML page instead of JSON, rate-limit past the retries,
//! or send a body that never ends.

use super::assert_task_saved;
use crate::http::server::{response, Answer};
use crate::http::{run_api, setup, Format};

const GATEWAY_PAGE: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

#[test]
fn an_html_page_instead_of_json_is_a_clear_error() {
    // A captive portal or a wrong base_url: 200, text/html.
    let portal = response(
        200,
        &[("Content-Type", "text/html; charset=utf-8")],
        b"<!DOCTYPE html><html><head><title>Sign in to the Wi-Fi</title></head><body>...</body></html>",
    );
    let (ws, server) = setup(Format::OpenAi, vec![portal], "");
    let run = run_api(&ws, &["html please"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(err.contains("backend `api`"), "{err}");
    assert!(err.contains("Sign in to the Wi-Fi"), "{err}");
    assert_eq!(server.requests().len(), 1);
    assert_task_saved(&ws, "html please");
    ws.assert_no_leftovers();

    // A proxy's error page, retried as any 5xx, then given up on.
    let gateway = || {
        response(
            502,
            &[("Content-Type", "text/html")],
            GATEWAY_PAGE.as_bytes(),
        )
    };
    let (ws, server) = setup(Format::Anthropic, vec![gateway(), gateway(), gateway()], "");
    let run = run_api(&ws, &["gateway please"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(err.contains("HTTP 502 Bad Gateway"), "{err}");
    assert!(err.contains("(gave up after 3 tries)"), "{err}");
    assert_eq!(server.requests().len(), 3);
    assert_task_saved(&ws, "gateway please");
    ws.assert_no_leftovers();
}

#[test]
fn a_rate_limit_storm_longer_than_the_retries_gives_up() {
    let limited = || {
        response(
            429,
            &[("Content-Type", "application/json"), ("retry-after-ms", "5")],
            br#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your per-minute rate limit"}}"#,
        )
    };
    let answers = (0..6).map(|_| limited()).collect();
    let (ws, server) = setup(Format::Anthropic, answers, "retries = 4\n");
    let run = run_api(&ws, &["storm please"]);
    run.expect_code(1);
    let err = run.stderr();
    for n in 1..=4 {
        assert!(
            err.contains(&format!("after HTTP 429 (retry {n} of 4)]")),
            "{err}"
        );
    }
    assert!(
        err.contains("HTTP 429 Too Many Requests: Number of requests has exceeded your per-minute rate limit (gave up after 5 tries)"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 5);
    assert_task_saved(&ws, "storm please");
    ws.assert_no_leftovers();
}

#[test]
fn an_endless_body_is_cut_at_the_cap() {
    const TOTAL: &str = "the reply passed 64 MiB, agent-loop's cap for one reply body";
    const LINE: &str = "a line of the stream passed 1 MiB without ending";
    let event_line = format!("data: {}\n", "a".repeat(8185));
    // Each chunk is sent again and again: a stream line that never ends, a stream event that
    // never ends, a JSON reply that never ends, an NDJSON line that never ends.
    let cases = [
        (
            Format::OpenAi,
            "text/event-stream",
            "data: {\"x\":\"aaaa".to_string(),
            LINE,
        ),
        (
            Format::OpenAi,
            "text/event-stream",
            event_line.repeat(8),
            TOTAL,
        ),
        (
            Format::OpenAi,
            "application/json",
            "{\"x\":\"aaaa".to_string(),
            TOTAL,
        ),
        (
            Format::Ollama,
            "application/x-ndjson",
            "{\"message\":{\"content\":\"aaaa".to_string(),
            LINE,
        ),
    ];
    for (format, content_type, start, expected) in cases {
        let mut chunk = start.into_bytes();
        chunk.resize(64 * 1024, b'a');
        let (ws, _server) = setup(format, vec![Answer::Endless(content_type, chunk)], "");
        let (run, peak_kib) = ws.run_measured(crate::http::cmd(&ws, &["endless please"]));
        run.expect_code(1);
        let err = run.stderr();
        assert!(err.contains(expected), "{content_type}: {err}");
        // The cap plus a copy or two of it, not the whole stream.
        assert!(
            peak_kib < 300 * 1024,
            "{content_type}: peak RSS {peak_kib} KiB"
        );
        assert_task_saved(&ws, "endless please");
        ws.assert_no_leftovers();
    }
}
