//! The guard against an agent CLI's own tools in `loop` mode (`json_offered_tools`): a CLI
//! whose init record lists tools of its own ends the turn with an error that names them, a
//! streaming one at once, its process group killed before it goes on; an empty list passes,
//! and `tools = "own"` is unaffected.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{fixture, Run, Workspace};

const PATH: &str = "[type=system][subtype=init].tools";

fn init(tools: &[&str]) -> String {
    let record = serde_json::json!({"type": "system", "subtype": "init", "tools": tools});
    format!("{record}\n")
}

const RESULT: &str = "{\"type\":\"result\",\"result\":\"The answer is 42.\"}\n";

/// A backend `agent` on fixtures/agents/streaming.sh, a JSONL stream read for its tools,
/// with `extra` keys.
fn streaming(extra: &str) -> Workspace {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.agent]\ncommand = '{}'\noutput = \"jsonl\"\n\
         json_text = \"[type=result].result\"\njson_offered_tools = \"{PATH}\"\n\
         timeout_s = 300\n{extra}",
        fixture("agents/streaming.sh").display()
    ));
    ws
}

/// The `error` record of a `--output jsonl` run, which must have one.
fn error_record(run: &Run) -> Value {
    let out = run.stdout();
    let records = out.lines().map(serde_json::from_str::<Value>);
    let mut errors = records
        .filter_map(Result::ok)
        .filter(|r| r["event"] == "error");
    errors
        .next()
        .unwrap_or_else(|| panic!("no error record in {out}"))
}

#[test]
fn a_stream_listing_its_own_tools_is_stopped_at_once_with_its_group() {
    let ws = streaming("");
    ws.fake_file("head.1", init(&["exec", "tool_call"]));
    // After its init record the agent waits at a gate nobody opens: only being killed ends it
    // before the timeout, and what it would print next is never read.
    ws.fake_file("tail.1", RESULT);
    let made = Command::new("mkfifo").arg(ws.path("fake/gate")).status();
    assert!(made.expect("mkfifo").success());
    let started = Instant::now();
    let run = ws.run(&["--output", "jsonl", "--backend", "agent", "task"]);
    run.expect_code(1);
    assert!(
        started.elapsed() < Duration::from_secs(300),
        "not before the timeout"
    );
    let error = error_record(&run);
    assert_eq!(error["error_kind"], "backend", "{error}");
    let message = error["error"].as_str().unwrap();
    for said in [
        "backend `agent` offered its model tools of its own in loop mode",
        ": exec, tool_call.",
        "stopped as soon as it listed them, before its model could call them",
        "report it",
        "set `tools = \"own\"` for `agent`",
    ] {
        assert!(message.contains(said), "{said:?} not in {message}");
    }
    assert!(!message.contains("42"), "{message}");
    ws.assert_no_leftovers();
}

#[test]
fn a_document_listing_its_own_tools_fails_the_turn_saying_they_may_have_run() {
    let ws = Workspace::new();
    let doc = serde_json::json!([
        {"type": "system", "subtype": "init", "tools": ["exec", {"name": "tool_call"}]},
        {"type": "result", "result": "The answer is 42."},
    ]);
    ws.config(&format!(
        "[backends.agent]\ncommand = '{}'\noutput = \"json\"\n\
         json_text = \"[type=result].result\"\njson_offered_tools = \"{PATH}\"\n",
        fixture("agents/scripted.sh").display()
    ));
    ws.reply(1, format!("{doc}\n"));
    let run = ws.run(&["--backend", "agent", "task"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(err.contains(": exec, tool_call."), "{err}");
    assert!(
        err.contains("its model may have called them already"),
        "{err}"
    );
    assert!(!run.stdout().contains("42"), "{}", run.stdout());
    // `doctor` runs the same command line and says so too.
    ws.reply(2, format!("{doc}\n"));
    let run = ws.run(&["doctor", "agent"]);
    run.expect_code(1);
    let verdict = run.stdout().lines().last().unwrap_or_default().to_string();
    assert!(
        verdict.starts_with("failed: the backend offered its model tools"),
        "{verdict}"
    );
    assert!(verdict.ends_with(": exec, tool_call"), "{verdict}");
}

#[test]
fn an_empty_list_passes_and_own_mode_reads_no_list() {
    for (extra, tools) in [("", &[][..]), ("tools = \"own\"\n", &["Bash", "exec"][..])] {
        let ws = streaming(extra);
        ws.fake_file("head.1", init(tools));
        ws.fake_file("tail.1", RESULT);
        let run = ws.run(&["--backend", "agent", "task"]);
        run.expect_code(0);
        assert_eq!(run.stdout().trim(), "The answer is 42.", "{extra}");
    }
}

/// The real drift: Qwen Code 0.24.4 run by the qwen preset with the `loop_args` it had before
/// they named 0.24's new tools (fixtures/README.md) listed the eight it then offered its model.
#[test]
fn the_qwen_preset_stops_qwen_0_24_4_offering_the_tools_its_old_flags_missed() {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[backends.qwen]\ncommand = \"{}\"\n",
        fixture("agents/replay.sh").display()
    ));
    let mut cmd = ws.cmd(&["--backend", "qwen", "--no-save", "what is six times seven?"]);
    cmd.env("REPLAY", fixture("qwen/drift-old-loop-args"));
    let run = ws.run_cmd(cmd);
    run.expect_code(1);
    assert_eq!(run.stdout(), "");
    let err = run.stderr();
    let eight = "get_goal, update_goal, tool_call, list_agents, report_findings, \
                 enter_worktree, exit_worktree, record_artifact.";
    assert!(
        err.contains("backend `qwen` offered its model tools"),
        "{err}"
    );
    assert!(err.contains(eight), "{err}");
    // The same CLI with the preset's flags of now lists none.
    let mut cmd = ws.cmd(&["--backend", "qwen", "--no-save", "what is six times seven?"]);
    cmd.env("REPLAY", fixture("qwen/json"));
    ws.run_cmd(cmd).expect_code(0);
}
