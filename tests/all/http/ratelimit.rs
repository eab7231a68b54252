//! The proactive rate limiter: a backend with `requests_per_minute` whose provider says no
//! request is left waits before the next one, shows it and logs a `rate_limit_wait` record.
//! The rate is 60 a minute, so the wait is about a second: far above the time the loop
//! takes between two requests, even on a busy machine.

use super::server::response;
use super::*;

#[test]
fn an_exhausted_limit_waits_before_the_next_request_says_so_and_logs_it() {
    let body = std::fs::read(fixture(&Format::OpenAi.stream_file("tools"))).unwrap();
    let limited = response(
        200,
        &[
            ("Content-Type", "text/event-stream"),
            ("x-ratelimit-remaining-requests", "0"),
        ],
        &body,
    );
    let (ws, server) = setup(
        OpenAi,
        vec![limited, streamed(OpenAi, "text")],
        "requests_per_minute = 60\n",
    );
    let run = run_api(&ws, &["--session", "limited", "read the notes"]);
    run.expect_code(0);
    let stderr = run.stderr();
    let wait = stderr
        .find("[waiting ")
        .unwrap_or_else(|| panic!("no wait shown:\n{stderr}"));
    assert!(
        stderr[wait..]
            .lines()
            .next()
            .unwrap()
            .ends_with(": api rate limit 60 requests/min]"),
        "{stderr}"
    );
    // The wait comes after the first call's tools ran, before the second request.
    assert!(stderr.find("[tool ls]").unwrap() < wait, "{stderr}");
    assert_eq!(server.requests().len(), 2);
    let waits: Vec<serde_json::Value> = ws
        .session_log("limited")
        .into_iter()
        .filter(|r| r["event"] == "rate_limit_wait")
        .collect();
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_eq!(waits[0]["limit"], "60 requests/min");
    assert!(waits[0]["wait_ms"].as_u64().unwrap() <= 1000);
}
