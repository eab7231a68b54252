//! `--output jsonl`: stdout carries JSON objects only, one per line, with the documented keys,
//! for runs with tool calls, failing tools, a failing backend and bad configuration; `jq`
//! reads every one of them.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{Run, Workspace};

const COMMON_KEYS: [&str; 6] = ["ts", "event", "session_id", "turn", "backend", "model"];

/// The keys each kind of record must have besides [`COMMON_KEYS`].
fn keys_of(event: &str) -> &'static [&'static str] {
    match event {
        "session_start" => &[],
        "user_message" | "assistant_delta" => &["text"],
        "assistant_message" => &["text", "final_answer"],
        "tool_call" => &["call_id", "tool", "args"],
        "tool_result" => &["call_id", "tool", "ok", "output", "exit_code"],
        "usage" => &["input_tokens", "output_tokens", "latency_ms", "for"],
        "error" => &["error"],
        "turn_end" => &["ok"],
        other => panic!("unknown event {other:?}"),
    }
}

/// Every line of stdout as a checked record; stderr must be empty.
fn records(run: &Run) -> Vec<Value> {
    assert_eq!(run.stderr(), "", "stderr in jsonl mode");
    let out = run.stdout();
    assert!(out.ends_with('\n'), "{out}");
    let records: Vec<Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    let session = records[0]["session_id"].clone();
    for record in &records {
        let object = record.as_object().expect("an object per line");
        let event = record["event"].as_str().expect("event is a string");
        for key in COMMON_KEYS.iter().chain(keys_of(event)) {
            assert!(object.contains_key(*key), "no `{key}` in {record}");
        }
        assert!(record["ts"].as_str().is_some_and(|ts| ts.ends_with('Z')));
        assert!(record["turn"].is_u64(), "{record}");
        assert_eq!(record["session_id"], session, "{record}");
    }
    assert_jq_reads(out.as_bytes());
    records
}

/// `| jq` works on the output.
fn assert_jq_reads(out: &[u8]) {
    let mut jq = Command::new("jq")
        .args(["-e", ".event"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jq");
    jq.stdin.take().unwrap().write_all(out).unwrap();
    let done = jq.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "jq failed: {}",
        String::from_utf8_lossy(&done.stderr)
    );
}

fn events(records: &[Value]) -> Vec<&str> {
    records
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect()
}

fn first<'a>(records: &'a [Value], event: &str) -> &'a Value {
    records
        .iter()
        .find(|r| r["event"] == event)
        .unwrap_or_else(|| panic!("no {event} record"))
}

#[test]
fn tool_calls_and_a_failing_backend_are_all_json_lines() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "Let me try.\n\
         <tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"touch ran.txt\"}}</tool_call>\n\
         <tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"missing.txt\"}}</tool_call>\n\
         Tokens: 1,234 in, 56 out\n",
    );
    ws.fake_file("rc.2", "1");
    ws.fake_file("stderr.2", "model \x1b[31moverloaded\x1b[0m\n");
    let run = ws.run(&["--output", "jsonl", "--backend", "fake", "do things"]);
    // bash was refused (no approval in jsonl mode) and the backend then failed: not done,
    // exit 4 (docs/reliability.md), whatever ended the turn.
    run.expect_code(4);
    let records = records(&run);
    assert_eq!(
        events(&records)[..3],
        ["session_start", "user_message", "assistant_delta"]
    );
    for event in [
        "assistant_message",
        "tool_call",
        "tool_result",
        "usage",
        "error",
        "turn_end",
    ] {
        first(&records, event);
    }
    assert_eq!(records[0]["turn"], 0);
    assert_eq!(records[0]["backend"], "fake");
    assert_eq!(records[1]["text"], "do things");
    assert_eq!(
        first(&records, "tool_call")["args"]["command"],
        "touch ran.txt"
    );
    // No approval is asked in jsonl mode: without --yes bash is refused.
    let bash = first(&records, "tool_result");
    assert_eq!(bash["ok"], false);
    assert!(
        bash["output"].as_str().unwrap().contains("--output jsonl"),
        "{bash}"
    );
    assert!(!ws.work().join("ran.txt").exists());
    let read = records
        .iter()
        .find(|r| r["event"] == "tool_result" && r["tool"] == "read")
        .unwrap();
    assert_eq!(read["ok"], false);
    let usage = first(&records, "usage");
    assert_eq!(
        (&usage["input_tokens"], &usage["output_tokens"]),
        (&1234.into(), &56.into())
    );
    assert!(usage["latency_ms"].is_u64(), "{usage}");
    let error = first(&records, "error");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("model overloaded"),
        "{error}"
    );
    assert_eq!(records.last().unwrap()["event"], "turn_end");
    assert_eq!(records.last().unwrap()["ok"], false);
}

#[test]
fn yes_runs_tools_and_reports_exit_codes() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"echo hi; exit 3\"}}</tool_call>\n",
    );
    ws.reply(2, "It exited with 3.\n");
    let run = ws.run(&["--output", "jsonl", "--yes", "--backend", "fake", "run it"]);
    run.expect_code(0);
    let records = records(&run);
    let result = first(&records, "tool_result");
    assert_eq!(result["exit_code"], 3, "{result}");
    let answer = records
        .iter()
        .rfind(|r| r["event"] == "assistant_message")
        .unwrap();
    assert_eq!(answer["text"], "It exited with 3.");
    assert_eq!(answer["final_answer"], true);
    assert_eq!(records.last().unwrap()["ok"], true);
}

/// The message of the last record, which must be an error.
fn last_error(run: &Run) -> String {
    let records = records(run);
    let last = records.last().unwrap();
    assert_eq!(last["event"], "error", "{last}");
    last["error"].as_str().unwrap().to_string()
}

#[test]
fn errors_before_the_loop_starts_are_json_too() {
    let ws = Workspace::new();
    let unknown = ws.run(&["--output", "jsonl", "--backend", "nope", "task"]);
    unknown.expect_code(2);
    assert_eq!(records(&unknown).len(), 1);
    assert!(last_error(&unknown).contains("no backend named `nope`"));

    let mut cmd = ws.cmd(&["--no-such-flag"]);
    cmd.env("AGENT_LOOP_OUTPUT", "jsonl");
    let bad_flag = ws.run_cmd(cmd);
    bad_flag.expect_code(2);
    assert!(last_error(&bad_flag).contains("--no-such-flag"));

    let mut cmd = ws.cmd(&["--output", "jsonl", "--backend", "fake"]);
    cmd.stdin(Stdio::null());
    let empty = ws.run_cmd(cmd);
    empty.expect_code(2);
    assert!(last_error(&empty).contains("no task"));

    // JSON lines asked for in config.toml report a bad setting of the file as JSON too.
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "output = \"jsonl\"\nmax_iterations = \"many\"\n",
    )
    .unwrap();
    let bad_setting = ws.run(&["--backend", "fake", "task"]);
    bad_setting.expect_code(2);
    assert!(
        last_error(&bad_setting).contains("setting `max_iterations` = `many`"),
        "{}",
        bad_setting.stdout()
    );
}

/// The summary call's `usage` record says what the call was for (`"for": "summary"`), the
/// model steps' `"for": "answer"`, in `--output jsonl` and in the session's log alike: a
/// program adding up the answers' tokens can leave the summary out.
#[test]
fn the_summary_calls_usage_says_what_it_was_for() {
    let ws = Workspace::new();
    let entry = std::fs::read_to_string(ws.path("backends.toml")).unwrap();
    ws.config(&format!(
        "{entry}context = \"summarize\"\nmax_context_tokens = 1600\n"
    ));
    let long = |tag: &str| format!("{tag} {}", "x".repeat(600));
    // Counts the first answers do not report: a count would calibrate the estimate down.
    ws.reply(1, format!("{}\n", long("answer1")));
    ws.reply(2, format!("{}\n", long("answer2")));
    // The third turn's request passes the budget: the summary call comes first.
    ws.reply(3, "The user asked twice.\nTokens: 100 in, 7 out\n");
    ws.reply(4, "Third answer.\nTokens: 30 in, 4 out\n");
    let mut stream = Vec::new();
    for task in ["first", "second", "third"] {
        let args = [
            "--output",
            "jsonl",
            "--backend",
            "fake",
            "--session",
            "packed",
        ];
        let run = ws.run(&[&args[..], &[long(task).as_str()]].concat());
        run.expect_code(0);
        stream = records(&run);
    }
    assert_eq!(ws.runs(), 4);
    let usage = |records: &[Value]| -> Vec<(Value, Value)> {
        (records.iter())
            .filter(|r| r["event"] == "usage")
            .map(|r| (r["for"].clone(), r["input_tokens"].clone()))
            .collect()
    };
    let summary = ("summary".into(), 100.into());
    assert_eq!(
        usage(&stream),
        [summary.clone(), ("answer".into(), 30.into())]
    );
    let logged = usage(&ws.session_log("packed"));
    assert_eq!(logged, usage(&stream));
}
