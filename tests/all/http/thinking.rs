//! The model's thinking (Anthropic `thinking_delta`, OpenAI-compatible `reasoning_content`
//! and `reasoning`): shown with `--verbose` a line at a time, a `thinking_delta` record in
//! JSONL, and never part of the answer, the conversation or the saved session.

use serde_json::Value;

use super::{run_api, setup, streamed, whole, Answer, Format};
use crate::common::{Run, Workspace};

const ANSWER: &str = "The notes say hello.";

/// Runs `hi` against `answer` with `args`.
fn run(format: Format, answer: Answer, args: &[&str]) -> (Workspace, Run) {
    let (ws, _server) = setup(format, vec![answer], "");
    let run = run_api(&ws, &[args, &["hi"]].concat());
    run.expect_code(0);
    (ws, run)
}

#[test]
fn thinking_is_shown_with_verbose_and_kept_out_of_the_answer() {
    for format in [Format::Anthropic, Format::OpenAi] {
        let (ws, run) = run(format, streamed(format, "thinking"), &["--verbose"]);
        assert_eq!(run.stdout(), format!("{ANSWER}\n"), "{format:?}");
        let err = run.stderr();
        assert!(
            err.contains("[api thinking] The user greets me.\n"),
            "{err}"
        );
        assert!(
            err.contains("[api thinking] I should quote the notes.\n"),
            "{err}"
        );
        let saved = ws.saved_messages();
        assert!(saved.contains(ANSWER), "{saved}");
        assert!(!saved.contains("greets"), "thinking saved: {saved}");
    }
}

#[test]
fn thinking_is_not_shown_without_verbose() {
    let (_ws, run) = run(Format::OpenAi, streamed(Format::OpenAi, "thinking"), &[]);
    assert_eq!(run.stdout(), format!("{ANSWER}\n"));
    assert!(!run.stderr().contains("greets"), "{}", run.stderr());
}

#[test]
fn a_whole_reply_shows_its_reasoning_too() {
    let (_ws, run) = run(
        Format::OpenAi,
        whole(Format::OpenAi, "thinking"),
        &["--verbose"],
    );
    assert_eq!(run.stdout(), format!("{ANSWER}\n"));
    assert!(
        run.stderr()
            .contains("[api thinking] I should quote the notes.\n"),
        "{}",
        run.stderr()
    );
}

#[test]
fn jsonl_has_thinking_delta_records_apart_from_the_answer() {
    for format in [Format::Anthropic, Format::OpenAi] {
        let (_ws, run) = run(format, streamed(format, "thinking"), &["--output", "jsonl"]);
        let records: Vec<Value> = run
            .stdout()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let of = |kind: &str| -> String {
            records
                .iter()
                .filter(|r| r["event"] == kind)
                .map(|r| r["text"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            of("thinking_delta"),
            "The user greets me.\nI should quote the notes.",
            "{format:?}"
        );
        assert_eq!(of("assistant_delta"), ANSWER, "{format:?}");
        assert_eq!(of("assistant_message"), ANSWER, "{format:?}");
        let thinking = records
            .iter()
            .find(|r| r["event"] == "thinking_delta")
            .unwrap();
        assert_eq!(thinking["actor"], "assistant");
    }
}
