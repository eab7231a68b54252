//! The presets end to end: the built binary runs a preset whose command is replaced by
//! `fixtures/agents/replay.sh`, which prints a real CLI's recording byte for byte. Also
//! `agent-loop backends` and `agent-loop doctor`.

use crate::common::{fixture, Workspace};

/// A workspace where backend `preset` runs the replay agent on `fixtures/<recording>`.
fn replaying(preset: &str, recording: &str) -> (Workspace, std::process::Command, String) {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[backends.{preset}]\ncommand = \"{}\"\ntimeout_s = 300\n",
        fixture("agents/replay.sh").display()
    ));
    let save = ws.path("fake/replayed").display().to_string();
    let mut cmd = ws.cmd(&["--backend", preset, "--no-save", "what is six times seven?"]);
    cmd.env("REPLAY", fixture(recording))
        .env("REPLAY_SAVE", &save);
    (ws, cmd, save)
}

#[test]
fn claude_json_answer_and_exact_tokens_through_the_binary() {
    let (ws, cmd, _) = replaying("claude", "claude/json");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    assert_eq!(run.stdout(), "The answer is 42.\n");
    assert!(
        run.stderr().contains("[tokens in 1523 / out 9 / $0.0063]"),
        "{}",
        run.stderr()
    );
}

#[test]
fn an_error_field_fails_the_turn_with_the_clis_message() {
    for (preset, recording, message) in [
        ("claude", "claude/error-json", "Invalid API key"),
        ("qwen", "qwen/error-json", "[API Error: 401"),
        ("gemini", "gemini/error-json", "API key not valid"),
        ("codex", "codex/error-json", "401 Unauthorized"),
        ("aider", "aider/error", "AuthenticationError"),
    ] {
        let (ws, cmd, _) = replaying(preset, recording);
        let run = ws.run_cmd(cmd);
        assert_eq!(run.code(), 1, "{preset}: {}", run.stderr());
        assert_eq!(run.stdout(), "", "{preset}");
        let want = format!("backend `{preset}` reported an error: ");
        assert!(
            run.stderr().contains(&want) && run.stderr().contains(message),
            "{preset}: {}",
            run.stderr()
        );
    }
}

#[test]
fn own_tools_report_text_activity_and_usage_and_run_nothing() {
    let (ws, cmd, save) = replaying("coro", "coro/pipe-verbose");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let err = run.stderr();
    assert!(
        run.stdout().contains("The command printed hello."),
        "{}",
        run.stdout()
    );
    // Reported as the line arrives, once although coro redraws it.
    assert_eq!(
        err.matches("[coro ran] Bash(echo hello)").count(),
        1,
        "{err}"
    );
    assert!(!err.contains("[tool "), "agent-loop ran nothing: {err}");
    assert!(err.contains("[tokens in 3300 / out 63]"), "{err}");
    // The prompt is an argument, without agent-loop's tool list.
    let sent = std::fs::read_to_string(save).unwrap();
    assert!(sent.starts_with("-v\n"), "{sent}");
    assert!(sent.contains("what is six times seven?"), "{sent}");
    assert!(
        !sent.contains("# Tools") && !sent.contains("<tool_call>"),
        "{sent}"
    );
}

#[test]
fn backends_lists_type_command_presence_and_version() {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[backends.rec]\ncommand = \"{}\"\n",
        fixture("agents/replay.sh").display()
    ));
    let mut cmd = ws.cmd(&["backends"]);
    cmd.env("REPLAY", fixture("llm/plain"))
        .env_remove("ANTHROPIC_API_KEY")
        .env("OPENAI_API_KEY", "sk-test");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let out = run.stdout();
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}: {out}"))
            .to_string()
    };
    assert!(out.starts_with("NAME "), "{out}");
    let rec = line("rec");
    assert!(
        rec.contains("found: ") && rec.ends_with("llm, version 0.30"),
        "{rec}"
    );
    assert!(line("claude").contains("not on PATH"), "{out}");
    assert!(line("coro").contains("cli, own tools"), "{out}");
    assert!(line("openai").contains("OPENAI_API_KEY set"), "{out}");
    assert!(
        line("claude-api").contains("ANTHROPIC_API_KEY not set"),
        "{out}"
    );
    assert!(line("demo").contains("built in"), "{out}");
}

#[test]
fn doctor_shows_raw_stripped_and_parsed() {
    let (ws, _, _) = replaying("opencode", "opencode/json");
    let mut cmd = ws.cmd(&["doctor", "opencode"]);
    cmd.env("REPLAY", fixture("opencode/json"));
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let out = run.stdout();
    for want in [
        "--- raw stdout (",
        "--- stripped stderr (",
        "--- text (17 bytes) ---\nThe answer is 42.\n",
        "--- tool calls: 0 ---",
        "--- usage: input 1523, output 9, total 1532, cost $0 ---",
        "--- error: none ---",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    // Escape codes (opencode's text-mode header on stderr) are shown, not sent.
    let mut cmd = ws.cmd(&["doctor", "opencode"]);
    cmd.env("REPLAY", fixture("opencode/plain"));
    let run = ws.run_cmd(cmd);
    assert!(run.stdout().contains("\\x1b[0m"), "{}", run.stdout());
    // A recording with an error: the error shown, and the verdict.
    let mut cmd = ws.cmd(&["doctor", "opencode"]);
    cmd.env("REPLAY", fixture("opencode/error-json"));
    let run = ws.run_cmd(cmd);
    run.expect_code(1);
    assert!(
        run.stdout().contains("--- error: Incorrect API key"),
        "{}",
        run.stdout()
    );
    assert!(
        run.stdout()
            .ends_with("\nfailed: the backend reported an error: Incorrect API key provided: mock-key. You can find your API key at https://platform.openai.com/account/api-keys.\n"),
        "{}",
        run.stdout()
    );
}

#[test]
fn output_past_max_output_bytes_is_dropped_with_a_note_and_the_cli_is_drained() {
    let ws = Workspace::new();
    ws.add_config("max_output_bytes = 1000\n");
    // Four pipe buffers' worth: a CLI that is not drained would block and time out.
    let mut reply = String::from("The answer starts here.\n");
    reply.push_str(&format!("{}\n", "x".repeat(99)).repeat(2600));
    ws.reply(0, &reply);
    let run = ws.run(&["--backend", "fake", "--no-save", "say a lot"]);
    run.expect_code(0);
    let out = run.stdout();
    assert!(
        out.starts_with("The answer starts here.\n"),
        "{}",
        &out[..100]
    );
    assert!(out.len() < 2000, "{} bytes kept", out.len());
    assert!(
        out.contains(&format!(
            "[output cut: {} bytes were dropped past max_output_bytes (1000)]",
            reply.len() - 1000
        )),
        "{out}"
    );
}
