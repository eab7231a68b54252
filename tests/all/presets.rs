//! The built-in presets of real agent CLIs against their byte-exact recordings under
//! `fixtures/<cli>/`: the answer, the tool calls, the token counts and the errors each preset's
//! parsers read, through the library, from the text its `render` mode makes of the bytes.

use agent_loop_config::{BackendDef, Config, Definition, Source};
use agent_loop_parse::{strip_ansi, Parsed, Render};

use crate::common::fixture;

/// What backend `preset` reads from the recording `fixtures/<dir>/<name>.{stdout,stderr}`,
/// made text by its own `render` mode.
pub fn parse(preset: &str, dir: &str, out: &str, err: &str) -> Parsed {
    let def = cli_def(preset);
    let read = |name: &str| std::fs::read(fixture(&format!("{dir}/{name}"))).unwrap_or_default();
    let text = |name: &str| def.render.text(&read(name));
    def.parsers.parse(&text(out), &text(err))
}

/// What backend `preset` reads from this stdout and stderr.
pub fn parse_text(preset: &str, out: &str, err: &str) -> Parsed {
    cli_def(preset).parsers.parse(out, err)
}

fn cli_def(preset: &str) -> BackendDef {
    let config = Config::from_sources(&[Source::builtin()]).expect("built-in file loads");
    let Definition::Cli(def) = config.backend(preset).expect("preset exists") else {
        panic!("{preset} is an agent CLI")
    };
    def.clone()
}

fn scenario(preset: &str, name: &str) -> Parsed {
    parse(
        preset,
        preset,
        &format!("{name}.stdout"),
        &format!("{name}.stderr"),
    )
}

fn tokens(p: &Parsed) -> (Option<u64>, Option<u64>) {
    let u = p.usage.expect("usage was read");
    (u.input, u.output)
}

fn assert_answer(p: &Parsed) {
    assert_eq!(p.text, "The answer is 42.", "{p:?}");
    assert!(p.calls.is_empty() && p.error.is_none(), "{p:?}");
}

fn assert_tool_call(p: &Parsed) {
    assert_eq!(p.text, "I will run the command now.", "{p:?}");
    assert_eq!(p.calls.len(), 1, "{p:?}");
    assert_eq!(p.calls[0].name, "bash");
    assert!(p.calls[0].raw.contains("echo hi"), "{p:?}");
}

#[test]
fn claude_json_text_tokens_cost_and_is_error() {
    let p = scenario("claude", "json");
    assert_answer(&p);
    assert_eq!(tokens(&p), (Some(1523), Some(9)));
    assert_eq!(p.usage.unwrap().cost, Some(0.006272));
    let e = scenario("claude", "error-json");
    assert!(
        e.error.as_deref().unwrap().contains("Invalid API key"),
        "{e:?}"
    );
}

#[test]
fn codex_jsonl_events_and_failed_turn() {
    let p = scenario("codex", "json");
    assert_answer(&p);
    assert_eq!(tokens(&p), (Some(1523), Some(9)));
    let e = scenario("codex", "error-json");
    assert!(
        e.error.as_deref().unwrap().contains("401 Unauthorized"),
        "{e:?}"
    );
}

#[test]
fn codex_text_mode_total_on_stderr() {
    let config = "[backends.codex-text]\ncommand = 'codex'\ntokens_regex = 'tokens used\\s*\\n\\s*(?P<total>[\\d,]+)'\n";
    let config = Config::from_sources(&[
        Source::builtin(),
        Source {
            name: "t.toml".into(),
            text: config.into(),
        },
    ])
    .unwrap();
    let Definition::Cli(def) = config.backend("codex-text").unwrap() else {
        panic!()
    };
    let read = |n: &str| strip_ansi(&std::fs::read(fixture(&format!("codex/{n}"))).unwrap());
    let p = def
        .parsers
        .parse(&read("toolcall.stdout"), &read("toolcall.stderr"));
    assert_tool_call(&p);
    assert_eq!(p.usage.unwrap().total, Some(1618));
    // The built-in preset's fallback regex reads the same line.
    let p = scenario("codex", "plain");
    assert_eq!(p.usage.unwrap().total, Some(1532));
}

#[test]
fn gemini_stream_json_pieces_stats_and_error_in_its_result() {
    // Its stream never says the answer whole: the pieces, joined as they came, are it.
    let p = scenario("gemini", "json");
    assert_answer(&p);
    let u = p.usage.unwrap();
    // No thinking count in the stream: what the total holds past input and output (none).
    assert_eq!(
        (u.input, u.output, u.total, u.thinking),
        (Some(1523), Some(9), Some(1532), Some(0))
    );
    // A call's markup split across pieces is found in them joined.
    let p = scenario("gemini", "toolcall-json");
    assert_tool_call(&p);
    // The API's own message, not the JSON error body gemini wraps as its message.
    let e = scenario("gemini", "error-json");
    assert_eq!(
        e.error.as_deref(),
        Some("API key not valid. Please pass a valid API key."),
        "{e:?}"
    );
    // A blocked answer (its INVALID_STREAM): an `error` line, then a result without a
    // message, exit 0. The lines 0.61.0 printed for a reply of no text, finishReason SAFETY.
    let blocked = concat!(
        r#"{"type":"error","timestamp":"2026-12-07T13:31:02.183Z","severity":"error","message":"The model response was blocked due to safety settings."}"#,
        "\n",
        r#"{"type":"result","timestamp":"2026-12-07T13:31:02.183Z","status":"error","stats":{"total_tokens":40,"input_tokens":40,"output_tokens":0,"cached":0,"input":40,"duration_ms":7108,"tool_calls":0}}"#,
        "\n"
    );
    let e = parse_text("gemini", blocked, "");
    assert_eq!(
        e.error.as_deref(),
        Some("The model response was blocked due to safety settings."),
        "{e:?}"
    );
}

#[test]
fn qwen_json_result_and_api_error_in_either_shape() {
    let p = scenario("qwen", "json");
    assert_answer(&p);
    // One request: the guard's settings turn off the memory requests qwen adds up with it.
    assert_eq!(tokens(&p), (Some(1523), Some(9)));
    // 0.24.4: `is_error`, the message under `error`, exit 1.
    let e = scenario("qwen", "error-json");
    assert!(
        e.error.as_deref().unwrap().starts_with("[API Error: 401"),
        "{e:?}"
    );
    // 0.15.10 gave the error as the answer, `is_error` false, exit 0: its result line.
    let old = r#"[{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"[API Error: 401 Incorrect API key provided: mock-key.]","usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0}}]"#;
    let e = parse_text("qwen", old, "");
    assert_eq!(
        e.error.as_deref(),
        Some("[API Error: 401 Incorrect API key provided: mock-key.]"),
        "{e:?}"
    );
}

#[test]
fn opencode_jsonl_step_finish_and_error_event() {
    let p = scenario("opencode", "json");
    assert_answer(&p);
    let u = p.usage.unwrap();
    assert_eq!(
        (u.input, u.output, u.total),
        (Some(1523), Some(9), Some(1532))
    );
    let e = scenario("opencode", "error-json");
    assert!(
        e.error.as_deref().unwrap().contains("Incorrect API key"),
        "{e:?}"
    );
}

#[test]
fn aider_banner_tokens_cost_and_error_with_exit_0() {
    let p = scenario("aider", "plain");
    assert_answer(&p);
    assert_eq!(tokens(&p), (Some(602), Some(6)));
    assert_eq!(p.usage.unwrap().cost, Some(0.0019));
    let t = scenario("aider", "toolcall");
    assert_tool_call(&t);
    assert_eq!(tokens(&t), (Some(602), Some(26)));
    assert_eq!(tokens(&scenario("aider", "long")), (Some(1600), Some(6)));
    // The message aider wraps at 80 columns, whole.
    let e = scenario("aider", "error");
    assert_eq!(
        e.error.as_deref(),
        Some(
            "AuthenticationError: OpenAIException - Incorrect API key provided: mock-key. \
             You can find your API key at https://platform.openai.com/account/api-keys."
        ),
        "{e:?}"
    );
}

#[test]
fn llm_usage_line_on_stderr() {
    let p = scenario("llm", "plain");
    assert_answer(&p);
    assert_eq!(tokens(&p), (Some(1523), Some(9)));
    assert_tool_call(&scenario("llm", "toolcall"));
}

#[test]
fn coro_own_tools_activity_tokens_and_error_log_line() {
    let p = parse("coro", "coro", "pipe-verbose.out", "pipe-verbose.err");
    assert!(
        p.calls.is_empty(),
        "own tools: nothing for agent-loop to run"
    );
    assert_eq!(p.activity, vec!["Bash(echo hello)"]);
    assert_eq!(tokens(&p), (Some(3300), Some(63)));
    assert_eq!(
        p.text,
        "hello\nThe command printed hello. Plain text answer with no tool call.\nLine one of details\nLine two of details"
    );
    let multi = parse("coro", "coro", "scen-multi.out", "scen-multi.err");
    assert_eq!(
        multi.activity,
        vec!["Bash(echo first)", "Bash(echo second)"]
    );
    assert_eq!(multi.text, "first\nsecond");
    let plain = parse("coro", "coro", "pipe.out", "pipe.err");
    assert_eq!(
        plain.text,
        "hello\nThe command printed hello. Plain text answer with no tool call.\nLine one of details\nLine two of details"
    );
}

/// Why coro's preset has `render = "strip"`: coro erases the line above its cursor to
/// redraw a tool line, and later its details, whatever that line holds; without `-v` that is
/// the answer's last line (`pipe.out`) or a command's output (`scen-multi.out`). A terminal
/// shows them lost; stripping keeps them, and coro's redrawn tool line is reported once
/// anyway (activity lines are not part of the text).
#[test]
fn coro_rendered_as_a_terminal_would_lose_lines_so_its_preset_strips() {
    let config = Config::from_sources(&[Source::builtin()]).expect("built-in file loads");
    let Definition::Cli(def) = config.backend("coro").expect("preset exists") else {
        panic!("coro is an agent CLI")
    };
    assert_eq!(def.render, Render::Strip);
    let read = |name: &str| std::fs::read(fixture(&format!("coro/{name}"))).unwrap();
    let terminal = |name: &str| {
        def.parsers
            .parse(&Render::Terminal.text(&read(name)), "")
            .text
    };
    assert_eq!(
        terminal("pipe.out"),
        "hello\nLine one of details\nLine two of details"
    );
    assert_eq!(terminal("scen-multi.out"), "first");
    let e = parse("coro", "coro", "scen-http401.out", "scen-http401.err");
    assert!(
        e.error
            .as_deref()
            .unwrap()
            .starts_with("LLM request failed"),
        "{e:?}"
    );
}

#[test]
fn text_mode_recordings_carry_the_tool_call_for_a_plain_text_backend() {
    // A user entry with no parsers of its own reads every CLI's text mode the same way.
    let config = Config::from_sources(&[Source {
        name: "t.toml".into(),
        text: "[backends.plain]\ncommand = 'x'\n".into(),
    }])
    .unwrap();
    let Definition::Cli(def) = config.backend("plain").unwrap() else {
        panic!()
    };
    for cli in ["claude", "codex", "gemini", "qwen", "opencode", "llm"] {
        let out = std::fs::read(fixture(&format!("{cli}/toolcall.stdout"))).unwrap();
        assert_tool_call(&def.parsers.parse(&strip_ansi(&out), ""));
    }
}

#[test]
fn every_successful_recording_reads_without_an_error() {
    for (preset, name) in [
        ("claude", "json"),
        ("codex", "json"),
        ("gemini", "json"),
        ("qwen", "json"),
        ("opencode", "json"),
        ("aider", "plain"),
        ("llm", "plain"),
    ] {
        let p = scenario(preset, name);
        assert!(p.error.is_none(), "{preset} {name}: {p:?}");
    }
}
