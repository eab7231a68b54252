//! CLI backends try a failed run again when its output matches `retry_regex`, waiting what
//! the output asks for when that is under `retry_max_s`, and giving up at once when not.

use crate::common::Workspace;

fn flaky(extra: &str) -> Workspace {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "retry_regex = '(?i)rate limit|overloaded'\nretry_base_ms = 1\n{extra}"
    ));
    ws
}

#[test]
fn a_rate_limited_run_is_tried_again_after_the_wait_it_asks_for() {
    let ws = flaky("");
    ws.reply(1, "");
    ws.fake_file(
        "stderr.1",
        "Error: Rate limit reached. Please try again in 0.02s.\n",
    );
    ws.fake_file("rc.1", "1");
    ws.reply(2, "The answer.\n");
    let run = ws.run(&["--backend", "fake", "question"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "The answer.\n");
    assert!(
        run.stderr()
            .contains("[retrying fake in 20ms after \"Rate limit\" (retry 1 of 2)]"),
        "{}",
        run.stderr()
    );
    assert_eq!(ws.runs(), 2);
    assert_eq!(ws.prompt(1), ws.prompt(2), "the same prompt again");
}

#[test]
fn retries_run_out_and_other_failures_are_not_retried() {
    let ws = flaky("retries = 1\n");
    for n in 1..=3 {
        ws.fake_file(&format!("stderr.{n}"), "503 overloaded\n");
        ws.fake_file(&format!("rc.{n}"), "1");
    }
    let run = ws.run(&["--backend", "fake", "question"]);
    run.expect_code(1);
    assert_eq!(ws.runs(), 2, "one try and one retry");
    assert!(
        run.stderr().contains("(gave up after 2 tries)"),
        "{}",
        run.stderr()
    );

    // An error retry_regex does not match fails at once.
    let ws = flaky("");
    ws.fake_file("stderr.1", "unknown option --frobnicate\n");
    ws.fake_file("rc.1", "2");
    ws.run(&["--backend", "fake", "question"]).expect_code(1);
    assert_eq!(ws.runs(), 1);
}

#[test]
fn a_wait_over_retry_max_s_gives_up_at_once_saying_what_was_asked() {
    let ws = flaky("retry_max_s = 60\n");
    ws.fake_file("stderr.1", "rate limit exceeded, try again in 90 seconds\n");
    ws.fake_file("rc.1", "1");
    let run = ws.run(&["--backend", "fake", "question"]);
    run.expect_code(1);
    assert_eq!(ws.runs(), 1);
    assert!(
        run.stderr().contains(
            "(the provider asked to wait 1m30s, longer than retry_max_s = 60s; not retried)"
        ),
        "{}",
        run.stderr()
    );
}

/// CLI backends take the rate limiter's keys too; a budget that is not spent does not wait.
#[test]
fn cli_backends_take_rate_limits() {
    let ws = Workspace::new();
    ws.add_config("requests_per_minute = 600\ntokens_per_minute = 1000000\n");
    ws.reply(0, "ok\n");
    let run = ws.run(&["--backend", "fake", "question"]);
    run.expect_code(0);
    assert!(!run.stderr().contains("[waiting "), "{}", run.stderr());
    ws.add_config("[backends.zero]\ncommand = 'true'\nrequests_per_minute = 0\n");
    let run = ws.run(&["--backend", "fake", "question"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("backend `zero`: key `requests_per_minute`: must be at least 1"),
        "{}",
        run.stderr()
    );
}
