//! ACP agents (`type = "acp"`) against a scripted fake agent (fixtures/agents/fake-acp.py, an
//! Agent Client Protocol v1 agent in Python's standard library): streaming and token counts,
//! the agent's tool calls and plan, permission questions through agent-loop's approval, files
//! and commands served by agent-loop, cancel honoured and ignored, a crash, malformed and
//! huge lines, unknown updates, authentication, models and modes, `doctor`. Every message the
//! fake receives is in `fake/acp.log`, each start in `fake/acp.log.starts`.

use serde_json::Value;

use crate::common::{fixture, poll, Pty, Workspace};

/// The fake agent as backend `acp`, with `extra` lines added to its entry.
pub(crate) fn acp(extra: &str) -> Workspace {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.acp]\ntype = \"acp\"\ncommand = \"{}\"\ntimeout_s = 60\n{extra}\n",
        fixture("agents/fake-acp.py").display()
    ));
    ws
}

/// The messages the fake agent received with this method.
pub(crate) fn received(ws: &Workspace, method: &str) -> Vec<Value> {
    std::fs::read_to_string(ws.path("fake/acp.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m["method"] == method)
        .collect()
}

fn starts(ws: &Workspace) -> usize {
    std::fs::read_to_string(ws.path("fake/acp.log.starts"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn a_turn_streams_the_answer_with_token_counts() {
    let ws = acp("");
    let run = ws.run(&["--backend", "acp", "hello there"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "You said: hello there\n");
    assert!(
        run.stderr().contains("[tokens in 12 / out 5]"),
        "{}",
        run.stderr()
    );
    // As claude-agent-acp: the cost in a usage_update, the counts in the result.
    let run = ws.run(&["--backend", "acp", "cost"]);
    assert!(
        run.stderr().contains("[tokens in 12 / out 5 / $0.0047]"),
        "{}",
        run.stderr()
    );
    let init = &received(&ws, "initialize")[0]["params"];
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["clientCapabilities"]["fs"]["writeTextFile"], true);
    assert_eq!(init["clientCapabilities"]["terminal"], true);
    let new = &received(&ws, "session/new")[0]["params"];
    assert_eq!(
        new["cwd"],
        ws.work().canonicalize().unwrap().display().to_string()
    );
    // The stream, as JSON lines: the pieces, then the whole text and the token counts.
    let run = ws.run(&["--output", "jsonl", "--backend", "acp", "again"]);
    run.expect_code(0);
    let events: Vec<Value> = run
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let deltas: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "assistant_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, ["You sai", "d: again"]);
    let usage = events.iter().find(|e| e["event"] == "usage").unwrap();
    assert_eq!(usage["input_tokens"], 12);
    assert_eq!(usage["output_tokens"], 5);
    ws.assert_no_leftovers();
}

#[test]
fn an_agent_cut_short_keeps_its_answer_and_says_so() {
    let ws = acp("");
    for (word, why) in [
        (
            "max_tokens",
            "the model reached its output limit (max_tokens)",
        ),
        ("refusal", "the model declined"),
    ] {
        let run = ws.run(&["--backend", "acp", word]);
        run.expect_code(0);
        assert_eq!(run.stdout(), "cut here\n", "{word}");
        assert!(
            run.stderr()
                .contains(&format!("[acp: the answer was cut short: {why}")),
            "{}",
            run.stderr()
        );
    }
}

#[test]
fn the_agents_tools_plan_and_thinking_are_shown_as_progress() {
    let ws = acp("");
    let run = ws.run(&["--backend", "acp", "--verbose", "tool please"]);
    run.expect_code(0);
    let err = run.stderr();
    assert!(err.contains("[acp] Shell: ls\n"), "{err}");
    assert!(
        err.contains("[acp] Edit notes.txt (/w/notes.txt)\n"),
        "{err}"
    );
    assert!(err.contains("plan: [x] look; [~] answer"), "{err}");
    assert_eq!(run.stdout(), "You said: tool please\n");
    let run = ws.run(&["--backend", "acp", "--verbose", "thinking hard"]);
    assert!(
        run.stderr().contains("pondering deeply"),
        "{}",
        run.stderr()
    );
    // Without --verbose, thinking is not shown.
    let run = ws.run(&["--backend", "acp", "thinking hard"]);
    assert!(!run.stderr().contains("pondering"), "{}", run.stderr());
    // An update of a type nobody knows is passed over, and noted.
    let run = ws.run(&["--backend", "acp", "--verbose", "unknown update"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "You said: unknown update\n");
    assert!(
        run.stderr()
            .contains("(ignored a session update of unknown type `brand_new_thing`)"),
        "{}",
        run.stderr()
    );
}

#[test]
fn permission_goes_through_agent_loops_approval() {
    let ws = acp("");
    // --yes: the agent's allow-once option.
    let run = ws.run(&["--backend", "acp", "--yes", "permission"]);
    assert_eq!(run.stdout(), "permission: proceed_once\n");
    // In a pipe nobody can be asked: rejected.
    let run = ws.run(&["--backend", "acp", "permission"]);
    assert_eq!(run.stdout(), "permission: cancel\n");
    // An --allow rule on the tool call's kind and file.
    let run = ws.run(&[
        "--backend",
        "acp",
        "--allow",
        "edit:*notes.txt*",
        "permission",
    ]);
    assert_eq!(run.stdout(), "permission: proceed_once\n");
    let run = ws.run(&["--backend", "acp", "--allow", "edit:*other*", "permission"]);
    assert_eq!(run.stdout(), "permission: cancel\n");
    // A long input is asked about whole, its end too (wrapped, not folded at this length).
    let steps = [
        ("agent-loop with backend", 1, "permission 250\n"),
        ("[n]o", 1, "n\n"),
        ("permission: cancel", 1, "exit\n"),
    ];
    let (code, screen) = crate::repl::dialogue_in(&ws, "plain", "--backend acp", &steps);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains(";the-end"), "{screen}");
    // On a terminal the whole call is shown. "always" is agent-loop's for the session: the
    // agent gets its allow-once option (its always option it may keep beyond the session),
    // and its next question is answered without asking.
    let steps = [
        ("agent-loop with backend", 1, "permission\n"),
        ("[a]lways", 1, "a\n"),
        ("permission: proceed_once", 1, "permission\n"),
        ("permission: proceed_once", 2, "exit\n"),
    ];
    let (code, screen) = crate::repl::dialogue_in(&ws, "plain", "--backend acp", &steps);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("WriteFile notes.txt [edit]"), "{screen}");
    assert_eq!(screen.matches("[a]lways").count(), 1, "{screen}");
    assert!(
        screen.contains("notes.txt\",\"content\":\"hello\""),
        "{screen}"
    );
    ws.assert_no_leftovers();
}

#[test]
fn files_are_read_and_written_by_agent_loop_inside_the_root_only() {
    let ws = acp("");
    std::fs::write(ws.work().join("a.txt"), "line one\n").unwrap();
    std::fs::write(ws.path("outside.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(ws.path(""), ws.work().join("up")).unwrap();
    let run = ws.run(&["--backend", "acp", "read a.txt"]);
    assert_eq!(run.stdout(), "read: line one\n");
    let run = ws.run(&["--backend", "acp", "read ../outside.txt"]);
    assert!(
        run.stdout().starts_with("read refused (-32000): refused: ")
            && run.stdout().contains("outside the folder"),
        "{}",
        run.stdout()
    );
    // A file that does not exist reads as empty, as in Zed: agents read before creating.
    let run = ws.run(&["--backend", "acp", "read missing.txt"]);
    assert_eq!(run.stdout(), "read: \n");
    // Writes ask as the write tool's do (acp_guard.rs): --yes here.
    let run = ws.run(&["--backend", "acp", "--yes", "write made.txt"]);
    assert_eq!(run.stdout(), "write ok\n");
    assert_eq!(
        std::fs::read_to_string(ws.work().join("made.txt")).unwrap(),
        "written by the agent\n"
    );
    // Out of the root, also through a link: refused with the reason, nothing written.
    let run = ws.run(&["--backend", "acp", "--yes", "write up/escaped.txt"]);
    assert!(
        run.stdout().starts_with("write refused: refused:") && run.stdout().contains("outside"),
        "{}",
        run.stdout()
    );
    assert!(!ws.path("escaped.txt").exists());
    // The accesses are in the session's log.
    let run = ws.run(&[
        "--backend",
        "acp",
        "--yes",
        "--session",
        "files",
        "write logged.txt",
    ]);
    run.expect_code(0);
    let log = ws.session_log("files");
    assert!(
        log.iter()
            .any(|r| r["event"] == "tool_call" && r["tool"] == "write"),
        "{log:?}"
    );
}

#[test]
fn commands_run_with_agent_loops_environment_policy() {
    let ws = acp("");
    let mut cmd = ws.cmd(&[
        "--backend",
        "acp",
        "--yes",
        "terminal echo key=${SOME_API_KEY:-none}; exit 3",
    ]);
    cmd.env("SOME_API_KEY", "sk-very-secret");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    assert_eq!(run.stdout(), "terminal: exit 3, output: key=none\n");
    assert!(!run.stderr().contains("sk-very-secret"));
    ws.assert_no_leftovers();
}

#[test]
fn a_crash_malformed_lines_and_a_huge_line_fail_cleanly() {
    let ws = acp("");
    let run = ws.run(&["--backend", "acp", "crash now"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(
        err.contains("the agent stopped mid-turn: it exited (exit status: 3)"),
        "{err}"
    );
    assert!(err.contains("fake crash: out of luck"), "{err}");
    let run = ws.run(&["--backend", "acp", "malformed lines"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "You said: malformed lines\n");
    // 1 GB on one line: the read stops at the cap on one message, memory stays bounded.
    let (run, peak_kib) = ws.run_measured(ws.cmd(&["--backend", "acp", "huge line"]));
    run.expect_code(1);
    assert!(
        run.stderr().contains("longer than 16 MiB"),
        "{}",
        run.stderr()
    );
    assert!(peak_kib < 150 * 1024, "peak {peak_kib} KiB");
    ws.assert_no_leftovers();
}

#[test]
fn authentication_needed_names_the_agents_methods() {
    let ws = acp("env = { FAKE_ACP_AUTH = \"1\" }");
    let run = ws.run(&["--backend", "acp", "hello"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(err.contains("the agent needs authentication"), "{err}");
    assert!(
        err.contains("fake-key (API key): set FAKE_ACP_KEY"),
        "{err}"
    );
    // The next message in a REPL starts the agent again: one without a session is not kept.
    let (_, screen) = crate::repl::repl(&ws, "--backend acp", "hello\nagain\n/exit\n");
    assert_eq!(
        screen.matches("the agent needs authentication").count(),
        2,
        "{screen}"
    );
    assert_eq!(starts(&ws), 3);
    // As codex-acp: its key is set, but it wants `authenticate` with that method first.
    let ws = acp("env = { FAKE_ACP_AUTH = \"env\", FAKE_ACP_KEY = \"k\" }");
    let run = ws.run(&["--backend", "acp", "hello"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "You said: hello\n");
    assert_eq!(
        received(&ws, "authenticate")[0]["params"]["methodId"],
        "fake-env"
    );
    // Without the key, it says which methods there are.
    let ws = acp("env = { FAKE_ACP_AUTH = \"env\" }");
    let run = ws.run(&["--backend", "acp", "hello"]);
    run.expect_code(1);
    assert!(
        run.stderr().contains("fake-env (Use FAKE_ACP_KEY)"),
        "{}",
        run.stderr()
    );
    assert!(received(&ws, "authenticate").is_empty());
    // A generic error's data says why.
    let ws = acp("env = { FAKE_ACP_AUTH = \"internal\" }");
    let run = ws.run(&["--backend", "acp", "hello"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(
        err.contains("`session/new` failed: Internal error (-32603): {\"details\":\"Query closed before response received\"}"),
        "{err}"
    );
}

#[test]
fn model_and_auto_mode_are_set_through_the_session() {
    let ws = acp("auto_mode = \"yolo\"");
    let run = ws.run(&["--backend", "acp", "--model", "smart", "--yes", "hi"]);
    run.expect_code(0);
    // The agent's note on the mode change is shown as a note, not taken as the answer.
    assert_eq!(run.stdout(), "You said: hi\n");
    assert!(
        run.stderr().contains("([MODE_UPDATE] yolo)"),
        "{}",
        run.stderr()
    );
    assert_eq!(
        received(&ws, "session/set_model")[0]["params"]["modelId"],
        "smart"
    );
    assert_eq!(
        received(&ws, "session/set_mode")[0]["params"]["modeId"],
        "yolo"
    );
    // Without --yes the agent keeps its own mode.
    let ws = acp("auto_mode = \"yolo\"");
    ws.run(&["--backend", "acp", "hi"]).expect_code(0);
    assert!(received(&ws, "session/set_mode").is_empty());
}

#[test]
fn at_paths_become_resource_links() {
    let ws = acp("");
    std::fs::write(ws.work().join("a.txt"), "x").unwrap();
    let run = ws.run(&["--backend", "acp", "look at @a.txt and @missing.txt"]);
    assert_eq!(
        run.stdout(),
        "You said: look at @a.txt and @missing.txt [links: a.txt]\n"
    );
}

#[test]
fn doctor_shows_what_the_agent_advertised() {
    let ws = acp("");
    let run = ws.run(&["doctor", "acp"]);
    run.expect_code(0);
    let out = run.stdout();
    for line in [
        "an ACP agent (type = \"acp\")",
        "agent: fake-acp 1.0",
        "protocol version: 1",
        "auth methods: fake-key",
        "modes: default, yolo (current: default)",
        "models: fast, smart (current: fast)",
        "slash commands: //memory //init",
        "tokens: in 12 / out 5",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
    ws.assert_no_leftovers();
}

#[test]
fn one_agent_serves_the_session_and_slash_commands_reach_it() {
    let ws = acp("");
    let (code, screen) = crate::repl::repl(&ws, "--backend acp", "first\n//memory show\nexit\n");
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("You said: first"), "{screen}");
    assert!(screen.contains("You said: /memory show"), "{screen}");
    assert_eq!(starts(&ws), 1);
    assert_eq!(received(&ws, "session/new").len(), 1);
    ws.assert_no_leftovers();
}

#[test]
fn ctrl_c_cancels_the_turn_and_the_agent_stays() {
    let ws = acp("");
    let mut pty = Pty::spawn(&ws, &[], &["--display", "plain", "--backend", "acp"]);
    pty.wait_for("agent-loop with backend");
    pty.send("cancel me\n");
    pty.wait_for("partial answer");
    pty.send("\x03");
    pty.wait_for("[turn cancelled");
    assert!(
        poll(|| (!received(&ws, "session/cancel").is_empty()).then_some(())).is_some(),
        "no session/cancel"
    );
    pty.send("hello after\n");
    pty.wait_for("You said: hello after");
    pty.send("exit\n");
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&bytes));
    assert_eq!(starts(&ws), 1);
    ws.assert_no_leftovers();
}

#[test]
fn an_agent_that_ignores_cancel_is_started_again_and_its_session_loaded() {
    let ws = acp("");
    let mut pty = Pty::spawn(&ws, &[], &["--display", "plain", "--backend", "acp"]);
    pty.wait_for("agent-loop with backend");
    pty.send("ignore-cancel\n");
    pty.wait_for("partial answer");
    pty.send("\x03");
    pty.wait_for("[turn cancelled");
    pty.send("hello after\n");
    pty.wait_for("You said: hello after");
    pty.send("exit\n");
    let (code, bytes) = pty.finish();
    let screen = String::from_utf8_lossy(&bytes);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("(agent started again: it did not stop after the turn was cancelled)"),
        "{screen}"
    );
    assert!(screen.contains("(resumed the agent's session"), "{screen}");
    assert_eq!(starts(&ws), 2);
    assert_eq!(received(&ws, "session/load").len(), 1);
    ws.assert_no_leftovers();
}

#[test]
fn the_configured_mcp_servers_are_given_to_the_agent() {
    let ws = acp("[mcp.servers.notes]\ncommand = \"python3\"\nargs = [\"-c\", \"pass\"]\nenv = { NOTES = \"1\" }\n");
    ws.run(&["--backend", "acp", "hi"]).expect_code(0);
    let servers = &received(&ws, "session/new")[0]["params"]["mcpServers"];
    assert_eq!(
        servers,
        &serde_json::json!([{"name": "notes", "command": "python3", "args": ["-c", "pass"], "env": [{"name": "NOTES", "value": "1"}]}])
    );
}

#[test]
fn models_as_a_config_option_string_ids_and_files_named_late() {
    // As opencode and codex-acp: the models only as a config option; codex-acp's own
    // requests have string ids.
    let ws = acp("env = { FAKE_ACP_CONFIG = \"1\" }");
    let run = ws.run(&[
        "--backend",
        "acp",
        "--model",
        "smart",
        "--yes",
        "permission",
    ]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "permission: proceed_once\n");
    assert!(
        run.stderr().contains("([CONFIG] model=smart)"),
        "{}",
        run.stderr()
    );
    let set = received(&ws, "session/set_config_option");
    assert_eq!(set[0]["params"]["configId"], "model");
    assert_eq!(set[0]["params"]["value"], "smart");
    assert!(received(&ws, "session/set_model").is_empty());
    let run = ws.run(&["doctor", "acp"]);
    let out = run.stdout();
    assert!(
        out.contains("models: fast, smart (current: fast; a config option)"),
        "{out}"
    );
    // As claude-agent-acp and opencode: a call starts with its bare name, its files come in
    // an update; they are shown once they come, with no empty status.
    let run = ws.run(&["--backend", "acp", "--verbose", "late-files"]);
    run.expect_code(0);
    let err = run.stderr();
    let notes = ws.work().join("notes.txt");
    assert!(err.contains("[acp] Write\n"), "{err}");
    let named = format!("[acp] Write notes.txt ({})\n", notes.display());
    assert!(err.contains(&named), "{err}");
    assert!(!err.contains("()"), "{err}");
}

#[test]
fn images_pass_through_only_to_an_agent_that_takes_them() {
    let pixel = std::fs::read(fixture("images/pixel.png")).unwrap();
    let ws = acp("env = { FAKE_ACP_IMAGES = \"1\" }");
    std::fs::write(ws.work().join("shot.png"), &pixel).unwrap();
    ws.run(&["--backend", "acp", "--image", "shot.png", "look"])
        .expect_code(0);
    let prompts = received(&ws, "session/prompt");
    let blocks = &prompts[0]["params"]["prompt"];
    assert_eq!(blocks[0]["text"], "look");
    assert_eq!(blocks[1]["type"], "image");
    assert_eq!(blocks[1]["mimeType"], "image/png");
    assert_eq!(
        blocks[1]["data"],
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    );

    // An agent that does not say it takes images is started (for its answer to
    // `initialize`) but gets no prompt.
    let ws = acp("");
    std::fs::write(ws.work().join("shot.png"), &pixel).unwrap();
    let run = ws.run(&["--backend", "acp", "--image", "shot.png", "look"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("the agent does not take images"),
        "{}",
        run.stderr()
    );
    assert_eq!(received(&ws, "initialize").len(), 1);
    assert!(received(&ws, "session/prompt").is_empty());
}

#[test]
fn codex_acps_warnings_go_to_stderr_not_into_the_answer() {
    // The codex-acp preset (its notice_regex) on the fake agent replaying what codex-acp
    // 0.16.0 sent for a model it has no metadata for.
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.codex-acp]\ncommand = \"{}\"\nenv = {{ FAKE_ACP_MODES = \"read-only,auto\" }}\n",
        fixture("agents/fake-acp.py").display()
    ));
    let turn = "recorded codex-acp-0.16.0/unknown-model.jsonl";
    let run = ws.run(&["--backend", "codex-acp", turn]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "The answer is 42.\n");
    assert!(
        run.stderr().contains(
            "[codex-acp] (Model metadata for `mock-model` not found. Defaulting to fallback \
             metadata; this can degrade performance and cause issues.)"
        ),
        "{}",
        run.stderr()
    );
}
