//! A running MCP tool's progress (`notifications/progress` for the token the client sends in
//! the call's `_meta`): shown as `[progress ...]` lines on the append-only display, at most one
//! a second and without the escape bytes a server put in, and as `tool_progress` records in
//! JSONL (one a second in the session's log); a flood of 3,000 reports neither floods the
//! terminal or the log nor loses the latest. The real server-everything's long-running
//! operation reports the same way. Each report restarts the call's `timeout_s`; a call whose
//! reports stop times out.

use serde_json::Value;

use super::{call, everything_stdio, server, tiny};
use crate::common::Workspace;

fn records(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn progress_records(stdout: &str) -> Vec<Value> {
    records(stdout)
        .into_iter()
        .filter(|r| r["event"] == "tool_progress")
        .collect()
}

/// A workspace with the tiny server in its progress mode, whose model calls `tool` once.
fn calling(tool: &str) -> Workspace {
    calling_with(tool, "")
}

/// [`calling`], with more keys in the server's table.
fn calling_with(tool: &str, keys: &str) -> Workspace {
    let ws = Workspace::new();
    ws.add_config(&server(
        "tiny",
        &tiny(),
        &format!("args = ['progress']\ntrust = true\n{keys}"),
    ));
    ws.reply(1, call(tool, "{}"));
    ws.reply(2, "Done.\n");
    ws
}

#[test]
fn progress_is_shown_plain_and_recorded_in_jsonl() {
    let ws = calling("mcp.tiny.slow");
    let run = ws.run(&["--backend", "fake", "--display", "plain", "go"]);
    run.expect_code(0);
    // The call carried a progress token, and the reports came before the answer.
    assert!(
        ws.prompt(2).contains("done after 3 steps"),
        "{}",
        ws.prompt(2)
    );
    let err = run.stderr();
    let shown: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("  [progress "))
        .collect();
    assert!(!shown.is_empty(), "{err}");
    assert!(
        shown
            .iter()
            .all(|l| l.contains("/3 (") && l.contains(" step ")),
        "{err}"
    );
    assert!(
        !run.output.stderr.contains(&0x1b),
        "an escape byte: {err:?}"
    );

    let ws = calling("mcp.tiny.slow");
    let run = ws.run(&["--backend", "fake", "--output", "jsonl", "go"]);
    run.expect_code(0);
    let all = records(&run.stdout());
    let progress = progress_records(&run.stdout());
    let last = progress.last().expect("a tool_progress record");
    assert_eq!(last["tool"], "mcp.tiny.slow");
    assert_eq!(last["actor"], "tool");
    assert_eq!(last["progress"], 3.0);
    assert_eq!(last["total"], 3.0);
    assert_eq!(last["message"], "step 3\u{1b}[31m");
    let call_id = all
        .iter()
        .find(|r| r["event"] == "mcp_call")
        .map(|r| r["call_id"].clone())
        .unwrap();
    assert!(progress.iter().all(|r| r["call_id"] == call_id));
    // Every report comes between the call and its result.
    let position = |event: &str| all.iter().position(|r| r["event"] == event).unwrap();
    let first_progress = position("tool_progress");
    assert!(position("mcp_call") < first_progress && first_progress < position("mcp_result"));
}

#[test]
fn a_flood_of_progress_is_coalesced_and_the_latest_kept() {
    let ws = calling("mcp.tiny.flood");
    let started = std::time::Instant::now();
    let run = ws.run(&["--backend", "fake", "--display", "plain", "go"]);
    let seconds = started.elapsed().as_secs() as usize;
    run.expect_code(0);
    assert!(ws.prompt(2).contains("done after 3000 steps"));
    let err = run.stderr();
    let lines = err
        .lines()
        .filter(|l| l.starts_with("  [progress "))
        .count();
    // At most one line a second of the run.
    assert!(
        lines >= 1 && lines <= seconds + 1,
        "{lines} lines in {seconds}s"
    );

    let ws = calling("mcp.tiny.flood");
    let started = std::time::Instant::now();
    let args = [
        "--backend",
        "fake",
        "--session",
        "f",
        "--output",
        "jsonl",
        "go",
    ];
    let run = ws.run(&args);
    let seconds = started.elapsed().as_secs() as usize;
    run.expect_code(0);
    let progress = progress_records(&run.stdout());
    let last = progress.last().expect("a tool_progress record");
    assert_eq!(last["progress"], 3000.0, "{last}");
    eprintln!("{} of 3000 reports in the JSON lines", progress.len());
    // The session's log keeps one a second, as the plain display does.
    let log = std::fs::read_to_string(ws.path("data/agent-loop/sessions/f/log.jsonl")).unwrap();
    let logged = progress_records(&log).len();
    assert!(
        logged >= 1 && logged <= seconds + 1,
        "{logged} logged in {seconds}s"
    );
}

#[test]
fn server_everythings_long_running_operation_reports_progress() {
    let ws = Workspace::new();
    everything_stdio(&ws, "trust = true");
    let tool = "mcp.everything.trigger-long-running-operation";
    ws.reply(1, call(tool, r#"{"duration":0.3,"steps":3}"#));
    ws.reply(2, "Done.\n");
    let run = ws.run(&["--backend", "fake", "--output", "jsonl", "go"]);
    run.expect_code(0);
    assert!(
        ws.prompt(2).contains("Long running operation completed"),
        "{}",
        ws.prompt(2)
    );
    let progress = progress_records(&run.stdout());
    assert!(!progress.is_empty(), "{}", run.stdout());
    for record in &progress {
        assert_eq!(record["tool"], tool);
        assert_eq!(record["total"], 3.0);
        assert!(record["message"].is_null(), "{record}");
    }
}

#[test]
fn progress_keeps_a_call_alive_past_its_timeout() {
    // Eight reports 400 ms apart: the call takes over three times its timeout_s.
    let ws = calling_with("mcp.tiny.ticking", "timeout_s = 1");
    let started = std::time::Instant::now();
    let run = ws.run(&["--backend", "fake", "--output", "jsonl", "go"]);
    let took = started.elapsed();
    run.expect_code(0);
    assert!(
        ws.prompt(2).contains("done after 8 ticks"),
        "{}",
        ws.prompt(2)
    );
    assert!(took.as_secs_f64() > 3.0, "took {took:?}");
    let last = progress_records(&run.stdout()).pop().expect("a report");
    assert_eq!(last["progress"], 8.0, "{last}");
}

#[test]
fn a_call_whose_progress_stops_times_out() {
    let ws = calling_with("mcp.tiny.stalling", "timeout_s = 1");
    let run = ws.run(&["--backend", "fake", "--output", "jsonl", "go"]);
    run.expect_code(0);
    assert!(
        ws.prompt(2).contains("mcp.tiny.stalling: MCP server `tiny` gave no answer within 1s (its timeout_s); the call was abandoned"),
        "{}",
        ws.prompt(2)
    );
    // Both reports came, and did not keep the call alive past the last one's timeout.
    let last = progress_records(&run.stdout()).pop().expect("a report");
    assert_eq!(last["progress"], 2.0, "{last}");
}

#[test]
fn a_servers_log_messages_are_shown_and_recorded() {
    let warning = r#"  [mcp tiny warning] {"disk":"nearly full","free_mb":12}"#;
    let debug = "  [mcp tiny debug] counting the widgets";
    let ws = calling("mcp.tiny.logging");
    let run = ws.run(&["--backend", "fake", "--display", "plain", "go"]);
    run.expect_code(0);
    assert!(ws.prompt(2).contains("logged twice"), "{}", ws.prompt(2));
    let err = run.stderr();
    assert!(err.lines().any(|l| l == warning), "{err}");
    assert!(!err.contains("counting the widgets"), "{err}");

    let ws = calling("mcp.tiny.logging");
    let run = ws.run(&["--backend", "fake", "--display", "plain", "--verbose", "go"]);
    run.expect_code(0);
    let err = run.stderr();
    assert!(err.lines().any(|l| l == debug), "{err}");
    assert!(err.lines().any(|l| l == warning), "{err}");

    let ws = calling("mcp.tiny.logging");
    let args = [
        "--backend",
        "fake",
        "--session",
        "l",
        "--output",
        "jsonl",
        "go",
    ];
    let run = ws.run(&args);
    run.expect_code(0);
    let log = std::fs::read_to_string(ws.path("data/agent-loop/sessions/l/log.jsonl")).unwrap();
    for text in [run.stdout(), log] {
        let all = records(&text);
        let logs: Vec<&Value> = all.iter().filter(|r| r["event"] == "mcp_log").collect();
        assert_eq!(logs.len(), 2, "{text}");
        assert_eq!(logs[0]["mcp_level"], "debug");
        assert_eq!(logs[0]["level"], "info");
        assert_eq!(logs[0]["data"], "counting the widgets");
        assert_eq!(logs[1]["server"], "tiny");
        assert_eq!(logs[1]["tool"], "mcp.tiny.logging");
        assert_eq!(logs[1]["actor"], "tool");
        assert_eq!(logs[1]["level"], "warn");
        assert_eq!(logs[1]["mcp_level"], "warning");
        assert_eq!(logs[1]["data"]["free_mb"], 12);
        let position = |event: &str| all.iter().position(|r| r["event"] == event).unwrap();
        let first_log = position("mcp_log");
        assert!(position("mcp_call") < first_log && first_log < position("mcp_result"));
    }
}
