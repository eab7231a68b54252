//! The `gemini` preset streams its answer (`-o stream-json`): Gemini CLI prints it only in
//! pieces and never whole, so the pieces are the answer. Replayed from what Gemini CLI 0.61
//! printed against the mock provider (fixtures/gemini/COMMAND): the first piece shows while
//! the CLI runs, a call's markup never shows, and the tokens are read off the last line.

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
