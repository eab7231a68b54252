//! The summary call of `summarize` mode against a streaming HTTP backend: its text is no
//! answer, so it reaches neither stdout nor `--output jsonl`'s `assistant_delta` records, and
//! its tokens and cost are counted like any other call's (the session's totals, its split by
//! backend, a `usage` record in the log).

use super::server::{response, Answer};
use super::{run_api, setup, Format};
use crate::common::Workspace;

/// An OpenAI stream that says `text` in two pieces and reports `input` and `output` tokens.
fn said(text: &str, input: u64, output: u64) -> Answer {
    let (a, b) = text.split_at(text.len() / 2);
    let chunk = |delta: serde_json::Value, finish: Option<&str>| serde_json::json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let usage = serde_json::json!({"choices": [], "usage": {"prompt_tokens": input,
        "completion_tokens": output, "total_tokens": input + output}});
    let body: String = [
        chunk(serde_json::json!({"role": "assistant", "content": a}), None),
        chunk(serde_json::json!({"content": b}), None),
        chunk(serde_json::json!({}), Some("stop")),
        usage,
    ]
    .iter()
    .map(|c| format!("data: {c}\n\n"))
    .chain(["data: [DONE]\n\n".to_string()])
    .collect();
    response(
        200,
        &[("Content-Type", "text/event-stream")],
        body.as_bytes(),
    )
}

const SUMMARY: &str = "The user asked two long questions.";
const ANSWER: &str = "The third answer.";

/// Two long turns of session `long` under a budget they fill, then a third, run with
/// `third_args`, whose request needs the older part summarised first. Returns its run.
fn third_turn(third_args: &[&str]) -> (Workspace, crate::common::Run) {
    let long = |tag: &str| format!("{tag} {}", "x".repeat(1_500));
    let answers = vec![
        said(&long("answer1"), 500, 400),
        said(&long("answer2"), 1_000, 400),
        said(SUMMARY, 900, 10),
        said(ANSWER, 700, 5),
    ];
    let (ws, _server) = setup(
        Format::OpenAi,
        answers,
        "max_context_tokens = 2000\nprice_input_per_mtok = 1.0\nprice_output_per_mtok = 2.0\n",
    );
    for task in [long("first"), long("second")] {
        run_api(
            &ws,
            &[
                "-s",
                "long",
                "--context",
                "summarize",
                "--tools",
                "read",
                &task,
            ],
        )
        .expect_code(0);
    }
    let third = long("third");
    let args = [
        &["-s", "long", "--context", "summarize", "--tools", "read"][..],
        third_args,
        &[third.as_str()],
    ]
    .concat();
    let run = run_api(&ws, &args);
    run.expect_code(0);
    (ws, run)
}

#[test]
fn the_summary_is_not_the_answer_and_its_call_is_counted() {
    let (ws, run) = third_turn(&[]);
    assert_eq!(run.stdout(), format!("{ANSWER}\n"));
    let err = run.stderr();
    assert!(
        err.contains("[context: api summarised 2 older messages]\n[tokens in 900 / out 10 / $"),
        "{err}"
    );
    let saved = ws.saved_session();
    let (input, output) = (500 + 1_000 + 900 + 700, 400 + 400 + 10 + 5);
    for totals in [&saved["usage"], &saved["usage_by_backend"]["api"]] {
        assert_eq!(totals["input"], input, "{saved}");
        assert_eq!(totals["output"], output, "{saved}");
        assert_eq!(totals["calls"], 4, "{saved}");
        let cost = totals["cost"].as_f64().unwrap();
        let priced = (input as f64 + 2.0 * output as f64) / 1e6;
        assert!((cost - priced).abs() < 1e-9, "{cost} != {priced}");
    }
    let usage: Vec<u64> = ws
        .session_log("long")
        .iter()
        .filter(|r| r["event"] == "usage")
        .map(|r| r["input_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(usage, [500, 1_000, 900, 700]);
}

#[test]
fn jsonl_streams_only_the_answer_as_assistant_delta() {
    let (_ws, run) = third_turn(&["--output", "jsonl"]);
    let records: Vec<serde_json::Value> = run
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        records.iter().filter(|r| r["event"] == kind).collect()
    };
    let usage: Vec<&serde_json::Value> = of("usage")
        .into_iter()
        .map(|r| &r["input_tokens"])
        .collect();
    assert_eq!(usage, [900, 700]);
    let streamed: String = of("assistant_delta")
        .iter()
        .map(|r| r["text"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, ANSWER);
}
