//! `thinking_tokens` from CLI backends: read by a `json_thinking_tokens` field path or a
//! `tokens_regex` group `thinking`, and by the presets whose recorded JSON output carries
//! them, into the usage record of `--output jsonl`.

use crate::common::{fixture, Workspace};

/// The one usage record of a task run on `backend` with `--output jsonl`.
fn usage_of(ws: &Workspace, backend: &str) -> serde_json::Value {
    let run = ws.run(&["--backend", backend, "--no-save", "--output", "jsonl", "hi"]);
    run.expect_code(0);
    let mut usage = usage_records(&run.stdout());
    assert_eq!(usage.len(), 1, "{backend}: {}", run.stdout());
    usage.remove(0)
}

/// The usage records of a `--output jsonl` run's stdout.
fn usage_records(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["event"] == "usage")
        .collect()
}

#[test]
fn presets_read_thinking_tokens_where_their_recorded_json_has_them() {
    // All recordings report 0 thinking tokens: 0, not null, says the field was read.
    for (preset, recording, want) in [
        ("codex", "codex/json", serde_json::json!(0)),
        ("gemini", "gemini/json", serde_json::json!(0)),
        ("qwen", "qwen/json", serde_json::json!(0)),
        ("opencode", "opencode/json", serde_json::json!(0)),
        // Claude Code 2.1.337 (not 2.1.197) reports them within its output tokens.
        ("claude", "claude/json", serde_json::json!(0)),
    ] {
        let ws = Workspace::new();
        ws.add_config(&format!(
            "\n[backends.{preset}]\ncommand = \"{}\"\ntimeout_s = 300\n",
            fixture("agents/replay.sh").display()
        ));
        let mut cmd = ws.cmd(&["--backend", preset, "--no-save", "--output", "jsonl", "hi"]);
        cmd.env("REPLAY", fixture(recording));
        let run = ws.run_cmd(cmd);
        run.expect_code(0);
        let usage = usage_records(&run.stdout());
        assert_eq!(usage.len(), 1, "{preset}: {}", run.stdout());
        assert_eq!(usage[0]["thinking_tokens"], want, "{preset}: {}", usage[0]);
        assert!(usage[0]["output_tokens"].is_u64(), "{preset}: {}", usage[0]);
    }
}

#[test]
fn a_cli_backend_reports_thinking_tokens_by_field_path_or_regex_group() {
    let ws = Workspace::new();
    let agent = fixture("agents/scripted.sh");
    ws.add_config(&format!(
        "\n[backends.json]\ncommand = \"{0}\"\noutput = \"json\"\njson_text = \"text\"\n\
         json_output_tokens = \"usage.out\"\njson_thinking_tokens = \"usage.reasoning\"\n\
         \n[backends.text]\ncommand = \"{0}\"\n\
         tokens_regex = 'Tokens: (?P<input>\\d+) in, (?P<output>\\d+) out, (?P<thinking>\\d+) thinking'\n",
        agent.display()
    ));
    for (backend, reply, want) in [
        (
            "json",
            "{\"text\": \"The answer.\", \"usage\": {\"out\": 20, \"reasoning\": 7}}\n",
            7,
        ),
        (
            "text",
            "The answer.\nTokens: 100 in, 20 out, 12 thinking\n",
            12,
        ),
    ] {
        ws.reply(0, reply);
        let usage = usage_of(&ws, backend);
        assert_eq!(usage["thinking_tokens"], want, "{backend}: {}", usage);
        assert_eq!(usage["output_tokens"], 20, "{backend}: {}", usage);
    }
}

/// A backend that counts thinking apart from its output (gemini's `candidates`):
/// `thinking_in_output = false` adds them to the output, which is what is priced. Not
/// reported apart (Gemini CLI's stream-json), they are what the total holds past input and
/// output.
#[test]
fn thinking_counted_apart_is_added_to_the_output_and_priced() {
    for (key, usage) in [
        (
            "json_thinking_tokens = \"usage.thoughts\"",
            "\"thoughts\": 7",
        ),
        ("json_total_tokens = \"usage.total\"", "\"total\": 32"),
        (
            "json_thinking_tokens = \"usage.thoughts\"\njson_total_tokens = \"usage.total\"",
            "\"thoughts\": 7, \"total\": 32",
        ),
    ] {
        let ws = Workspace::new();
        ws.add_config(&format!(
            "\n[backends.apart]\ncommand = \"{}\"\noutput = \"json\"\njson_text = \"text\"\n\
             json_input_tokens = \"usage.in\"\njson_output_tokens = \"usage.out\"\n{key}\n\
             thinking_in_output = false\n\
             price_input_per_mtok = 0.0\nprice_output_per_mtok = 1000000.0\n",
            fixture("agents/scripted.sh").display()
        ));
        let reply = format!(
            "{{\"text\": \"The answer.\", \"usage\": {{\"in\": 5, \"out\": 20, {usage}}}}}\n"
        );
        ws.reply(0, reply);
        let usage = usage_of(&ws, "apart");
        assert_eq!(usage["thinking_tokens"], 7, "{key}: {}", usage);
        assert_eq!(usage["output_tokens"], 27, "{key}: {}", usage);
        assert_eq!(usage["cost_usd"], 27.0, "{key}: {}", usage);
    }
}

/// Qwen Code with an OpenAI-compatible provider: its output count (`candidates`) is the
/// provider's `completion_tokens`, reasoning included, and its thoughts the same reasoning
/// again. The total, input plus output, says so: nothing is added twice. The record here is
/// what Qwen Code 0.15.10's `-o json` gives for such a reply (its converter's fields).
#[test]
fn thinking_already_in_the_output_by_the_total_is_not_added_again() {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[backends.qwen]\ncommand = \"{}\"\ntimeout_s = 300\n",
        fixture("agents/scripted.sh").display()
    ));
    let result = serde_json::json!([{
        "type": "result", "subtype": "success", "is_error": false, "result": "The answer.",
        "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120},
        "stats": {"models": {"m": {"tokens": {"prompt": 100, "candidates": 20, "total": 120, "thoughts": 12}}}}
    }]);
    ws.reply(0, format!("{result}\n"));
    let usage = usage_of(&ws, "qwen");
    assert_eq!(usage["thinking_tokens"], 12, "{}", usage);
    assert_eq!(usage["output_tokens"], 20, "{}", usage);
}

/// opencode 1.18.33 counts reasoning apart from its output (`output` 4 and `reasoning` 5 of
/// the mock's 9 completion tokens, recorded in fixtures/opencode/reasoning): its preset adds
/// them, so the output is every token generated, as billed.
#[test]
fn the_opencode_preset_adds_its_reasoning_to_the_output() {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[backends.opencode]\ncommand = \"{}\"\ntimeout_s = 300\n",
        fixture("agents/replay.sh").display()
    ));
    let mut cmd = ws.cmd(&[
        "--backend",
        "opencode",
        "--no-save",
        "--output",
        "jsonl",
        "hi",
    ]);
    cmd.env("REPLAY", fixture("opencode/reasoning"));
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let usage = usage_records(&run.stdout());
    assert_eq!(usage.len(), 1, "{}", run.stdout());
    assert_eq!(usage[0]["output_tokens"], 9, "{}", usage[0]);
    assert_eq!(usage[0]["thinking_tokens"], 5, "{}", usage[0]);
}

/// A CLI that counts its prompt cache's tokens apart from its input (Claude Code, opencode):
/// `json_cache_read_tokens` and `json_cache_write_tokens` read them, the usage record carries
/// them and the display shows them, so that a step of 22,500 tokens does not read "in 4".
#[test]
fn a_cli_backend_reports_its_prompt_caches_tokens() {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[backends.cached]\ncommand = \"{}\"\noutput = \"json\"\njson_text = \"text\"\n\
         json_input_tokens = \"usage.in\"\njson_output_tokens = \"usage.out\"\n\
         json_cache_read_tokens = \"usage.read\"\njson_cache_write_tokens = \"usage.write\"\n",
        fixture("agents/scripted.sh").display()
    ));
    let reply = "{\"text\": \"Hi.\", \"usage\": {\"in\": 4, \"out\": 9, \"read\": 21000, \"write\": 1500}}\n";
    ws.reply(0, reply);
    let usage = usage_of(&ws, "cached");
    assert_eq!(usage["input_tokens"], 4, "{usage}");
    assert_eq!(usage["cache_read_tokens"], 21000, "{usage}");
    assert_eq!(usage["cache_write_tokens"], 1500, "{usage}");
    ws.reply(1, reply);
    let run = ws.run(&["--backend", "cached", "--no-save", "hi"]);
    run.expect_code(0);
    assert!(
        run.stderr()
            .contains("[tokens in 4 / out 9 / cache read 21000 / cache write 1500]"),
        "{}",
        run.stderr()
    );
}
