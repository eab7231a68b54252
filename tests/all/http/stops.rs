//! An answer the model stopped early: at its output limit (Anthropic `max_tokens`, OpenAI
//! `length`) or declined (Anthropic `refusal`, OpenAI `content_filter`). The CLI keeps what
//! came as the answer, says on stderr that it was cut short, writes a `cut_short` record, and
//! exits 0 (the answer is delivered; a script reads the record to tell).

use serde_json::Value;

use super::{run_api, setup, streamed, whole, Answer, Format};

/// Runs `hi` against `answer`, with `--output jsonl` or not: its stdout, stderr and exit code.
fn run(format: Format, answer: Answer, jsonl: bool) -> (String, String, i32) {
    let (ws, _server) = setup(format, vec![answer], "");
    let args: &[&str] = if jsonl {
        &["--output", "jsonl", "hi"]
    } else {
        &["hi"]
    };
    let run = run_api(&ws, args);
    (run.stdout(), run.stderr(), run.code())
}

#[test]
fn an_answer_at_the_output_limit_is_kept_and_said_to_be_cut_short() {
    for format in [Format::Anthropic, Format::OpenAi] {
        let name = match format {
            Format::Anthropic => "max_tokens",
            _ => "length",
        };
        let (out, err, code) = run(format, streamed(format, name), false);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, "The notes say\n", "{format:?}");
        assert!(
            err.contains(
                "[api: the answer was cut short: the model reached its output limit (max_tokens)]"
            ),
            "{err}"
        );
    }
}

#[test]
fn a_refusal_is_an_empty_answer_said_to_be_cut_short() {
    for (format, name) in [
        (Format::Anthropic, "refusal"),
        (Format::OpenAi, "content_filter"),
    ] {
        let (_, err, code) = run(format, whole(format, name), false);
        assert_eq!(code, 0, "{format:?}: {err}");
        assert!(
            err.contains("the model declined to go on (refusal)"),
            "{format:?}: {err}"
        );
    }
}

#[test]
fn jsonl_has_a_cut_short_record() {
    let (out, _, _) = run(
        Format::Anthropic,
        streamed(Format::Anthropic, "max_tokens"),
        true,
    );
    let cut: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["event"] == "cut_short")
        .collect();
    assert_eq!(cut.len(), 1, "{out}");
    assert_eq!(cut[0]["reason"], "max_tokens");
    assert_eq!(cut[0]["level"], "warn");
}
