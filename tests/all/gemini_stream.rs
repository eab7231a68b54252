//! The `gemini` preset streams its answer (`-o stream-json`): Gemini CLI prints it only in
//! pieces and never whole, so the pieces are the answer. Replayed from what Gemini CLI 0.61
//! printed against the mock provider (fixtures/gemini/COMMAND): the first piece shows while
//! the CLI runs, a call's markup never shows, and the tokens are read off the last line. And
//! pieces that are the answer stay in order past `max_output_bytes` of them, and a prompt
//! repeated past it leaves the answer.

use crate::cli_stream::{
    preset_never_shows_a_calls_markup, preset_shows_its_answer_while_it_runs, replayed_answer,
};

#[test]
fn the_gemini_preset_shows_its_answer_while_gemini_runs() {
    preset_shows_its_answer_while_it_runs("gemini", "content");
}

/// Its pieces split the call's markup (`\n<tool_call>{...echo` then ` hi"}}</tool_call>`):
/// the text before it shows, the call runs, the next step's answer follows.
#[test]
fn the_gemini_preset_never_shows_a_calls_markup() {
    preset_never_shows_a_calls_markup("gemini", "content");
}

/// The pieces, joined, are the answer; the tokens come from the result line.
#[test]
fn the_gemini_preset_reads_its_answer_and_tokens_from_a_real_stream() {
    let records = replayed_answer("gemini");
    let usage = records.of("usage")[0];
    let count = |key: &str| usage[key].as_u64();
    // No thinking count in the stream: what the total holds past input and output (none).
    assert_eq!(
        (
            count("input_tokens"),
            count("output_tokens"),
            count("thinking_tokens")
        ),
        (Some(1523), Some(9), Some(0)),
        "{usage}"
    );
}

/// Pieces that are the answer (no `json_text`) stay in order past `max_output_bytes` of
/// them: once one is not taken, its line and every later one are kept, and read after those
/// taken.
#[test]
fn pieces_that_are_the_answer_stay_in_order_past_the_room() {
    let ws = crate::common::Workspace::new();
    ws.config(&format!(
        "[backends.pieces]\ncommand = '{}'\noutput = \"jsonl\"\n\
         json_text_delta = \"[type=delta].text\"\nmax_output_bytes = 200\n",
        crate::common::fixture("agents/streaming.sh").display()
    ));
    let line = |text: &str| format!("{}\n", serde_json::json!({"type": "delta", "text": text}));
    let (a, b) = ("a".repeat(150), "b".repeat(60));
    ws.fake_file("head.1", line(&a) + &line(&b) + &line("c"));
    ws.fake_file("tail.1", "");
    let run = plain_run(&ws, "pieces");
    assert_eq!(run.stdout(), format!("{a}{b}c\n"));
    // A piece on a line too long to be read whole (past 64 KiB, it comes in parts) is no
    // piece, and none after it is either: the answer keeps its order.
    let b = "b".repeat(200_000);
    ws.config(&format!(
        "[backends.pieces]\ncommand = '{}'\noutput = \"jsonl\"\n\
         json_text_delta = \"[type=delta].text\"\n",
        crate::common::fixture("agents/streaming.sh").display()
    ));
    ws.fake_file("head.2", line("a-") + &line(&b) + &line("c."));
    ws.fake_file("tail.2", "");
    let run = plain_run(&ws, "pieces");
    assert_eq!(run.stdout(), format!("a-{b}c.\n"));
}

/// Gemini CLI repeats the prompt on its stream's second line: a prompt past
/// `max_output_bytes` is dropped from what is kept, while the pieces (not kept) and the
/// result line (the last, kept) still give the answer and its tokens, with a note.
#[test]
fn a_prompt_repeated_past_the_cap_leaves_the_answer_and_its_tokens() {
    let ws = crate::common::Workspace::new();
    ws.config(&format!(
        "[backends.gemini]\ncommand = '{}'\nmax_output_bytes = 1000\n",
        crate::common::fixture("agents/streaming.sh").display()
    ));
    let recorded = std::fs::read_to_string(crate::common::fixture("gemini/json.stdout")).unwrap();
    let prompt = "What is six times seven? Answer in one short sentence.";
    let long = recorded.replacen(prompt, &"context ".repeat(200), 1);
    ws.fake_file("head.1", long);
    ws.fake_file("tail.1", "");
    let run = plain_run(&ws, "gemini");
    assert!(
        run.stdout().starts_with("The answer is 42.\n[output cut: "),
        "{}",
        run.stdout()
    );
    assert!(
        run.stderr().contains("[tokens in 1523 / out 9"),
        "{}",
        run.stderr()
    );
}

/// A task run on `backend` with `--display plain`, which exited 0.
fn plain_run(ws: &crate::common::Workspace, backend: &str) -> crate::common::Run {
    let run = ws.run(&["--no-save", "--backend", backend, "--display", "plain", "q"]);
    run.expect_code(0);
    run
}

/// A prompt longer than a read (past 64 KiB) that Gemini CLI repeats on its second line is
/// read whole, within `max_output_bytes`, and told from a piece: the pieces after it still
/// show one by one. A prompt past the cap comes in parts and is dropped whole: the pieces
/// still show, and the answer says output was cut.
#[test]
fn a_long_prompt_repeated_on_the_stream_leaves_the_pieces_streaming() {
    let recorded = std::fs::read_to_string(crate::common::fixture("gemini/json.stdout")).unwrap();
    let prompt = "What is six times seven? Answer in one short sentence.";
    let long = recorded.replacen(prompt, &"context ".repeat(25_000), 1);
    for (cap, cut) in [("", false), ("max_output_bytes = 100000\n", true)] {
        let ws = crate::common::Workspace::new();
        ws.config(&format!(
            "[backends.gemini]\ncommand = '{}'\n{cap}",
            crate::common::fixture("agents/streaming.sh").display()
        ));
        ws.fake_file("head.1", &long);
        ws.fake_file("tail.1", "");
        let cmd = ws.cmd(&["--no-save", "--backend", "gemini", "--output", "jsonl", "q"]);
        let records = crate::cli_stream::Records::run(cmd);
        assert_eq!(
            records.pieces()[..4],
            ["The", " answer", " is", " 42."],
            "{cap}"
        );
        let answer = records.of("assistant_message")[0]["text"].as_str().unwrap();
        assert!(answer.starts_with("The answer is 42."), "{cap}: {answer}");
        assert_eq!(answer.contains("[output cut: "), cut, "{cap}: {answer}");
    }
}
