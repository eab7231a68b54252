//! A CLI backend waiting on its own rate limit: the built binary runs a fake agent through a
//! tool round trip with a `tokens_per_minute` that the two calls overrun by about a second's
//! refill, so the second call waits, says so and logs it.

use crate::common::{Workspace, TOKENS};

const READ_CALL: &str = "<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"notes.txt\"}}</tool_call>\nTokens: 10 in, 5 out\n";

/// A workspace whose backend `limited` runs the scripted agent with `tokens_per_minute`.
fn limited(tokens_per_minute: u64) -> Workspace {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("notes.txt"), "the secret is 42\n").unwrap();
    ws.add_config(&format!(
        "\n[backends.limited]\ncommand = \"{}\"\n{TOKENS}timeout_s = 300\ntokens_per_minute = {tokens_per_minute}\n",
        crate::common::fixture("agents/scripted.sh").display()
    ));
    ws.reply(1, READ_CALL);
    ws.reply(2, "The secret is 42.\n");
    ws
}

#[test]
fn a_cli_backend_waits_on_its_token_rate_limit_shows_it_and_logs_it() {
    // The prompts' sizes, from a run whose limit is never reached (the estimate is a quarter
    // of the prompt's bytes, as the limiter counts it).
    let ws = limited(1_000_000_000);
    let run = ws.run(&["--backend", "limited", "--no-save", "what is the secret?"]);
    run.expect_code(0);
    assert!(!run.stderr().contains("[waiting "), "{}", run.stderr());
    let tokens = |n| (ws.prompt(n).len() as u64).div_ceil(4);
    let (first, second) = (tokens(1), tokens(2));
    // A bucket of T tokens a minute, full at the start: the first call leaves T - first, and
    // the second lacks first + second - T, refilled in (first + second - T) * 60 / T seconds.
    // T = (first + second) * 60 / 61 makes that one second, far above the time between the
    // two calls, well under two.
    let per_minute = (first + second) * 60 / 61;
    assert!(first <= per_minute && second <= per_minute);
    let ws = limited(per_minute);
    let run = ws.run(&[
        "--backend",
        "limited",
        "--session",
        "rl",
        "what is the secret?",
    ]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "The secret is 42.\n");
    let stderr = run.stderr();
    // Written as the limiter writes counts: `1234`, `12k`.
    let count = match per_minute {
        0..=9_999 => per_minute.to_string(),
        _ => format!("{}k", per_minute / 1000),
    };
    let limit = format!(": limited rate limit {count} tokens/min]");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("[waiting "))
        .unwrap_or_else(|| panic!("no wait shown:\n{stderr}"));
    assert!(line.ends_with(&limit), "{line:?} should end with {limit:?}");
    // It waited before the second call: after the first call's tool ran.
    assert!(
        stderr.find("[tool read]").unwrap() < stderr.find(line).unwrap(),
        "{stderr}"
    );
    let waits: Vec<serde_json::Value> = ws
        .session_log("rl")
        .into_iter()
        .filter(|r| r["event"] == "rate_limit_wait")
        .collect();
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_eq!(waits[0]["limit"], format!("{count} tokens/min"));
    assert_eq!(waits[0]["backend"], "limited");
    // About a second: the limit is rounded down to whole tokens, and the first run's prompts
    // need not be byte for byte the second's (it saved no session), so not exactly one.
    let wait_ms = waits[0]["wait_ms"].as_u64().unwrap();
    assert!(wait_ms > 0 && wait_ms < 2000, "{}", waits[0]);
}
