//! An ACP agent is untrusted code, as an MCP server is: every way it can act goes through
//! agent-loop's approval and caps. Its commands (`terminal/create`) ask as the bash tool's
//! do, with the whole command shown; its writes into `.git/` always ask; the output it may
//! have kept is clamped; what it sends is held to caps whatever it sends. A hostile editor
//! driving `agent-loop acp` is held to the same cap on one line.

use crate::acp::acp;
use crate::common::Pty;
use crate::view::wait_screen;

#[test]
fn an_agents_command_asks_like_bash_with_the_whole_command_shown() {
    let ws = acp("");
    let made = ws.work().join("made-by-agent");
    // No terminal and no --yes: refused with the reason, nothing run.
    let run = ws.run(&["--backend", "acp", "terminal touch made-by-agent"]);
    // Every call it made was refused: exit code 4, as for the loop's own tools.
    run.expect_code(4);
    assert!(
        run.stdout()
            .starts_with("terminal refused: not run: agent-loop cannot ask for approval"),
        "{}",
        run.stdout()
    );
    assert!(!made.exists());
    // An --allow rule for bash vouches for it, as for the bash tool; a chained one does not.
    let run = ws.run(&[
        "--backend",
        "acp",
        "--allow",
        "bash:sh -c 'touch *",
        "terminal touch made-by-agent; touch also",
    ]);
    assert!(
        run.stdout().starts_with("terminal refused"),
        "{}",
        run.stdout()
    );
    assert!(!made.exists());
    let run = ws.run(&[
        "--backend",
        "acp",
        "--allow",
        "bash:sh -c 'touch *",
        "terminal touch made-by-agent",
    ]);
    assert_eq!(run.stdout(), "terminal: exit 0, output: \n");
    assert!(made.exists());
    std::fs::remove_file(&made).unwrap();
    // On a terminal the whole command is shown; "no" runs nothing.
    let steps = [
        (
            "agent-loop with backend",
            1,
            "terminal touch made-by-agent\n",
        ),
        ("[a]lways", 1, "n\n"),
        ("terminal refused", 1, "exit\n"),
    ];
    let (code, screen) = crate::repl::dialogue_in(&ws, "plain", "--backend acp", &steps);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("Allow bash?"), "{screen}");
    assert!(screen.contains("| sh -c 'touch made-by-agent'"), "{screen}");
    assert!(screen.contains("not run: the user said no"), "{screen}");
    assert!(!made.exists());
    ws.assert_no_leftovers();
}

#[test]
fn an_agents_writes_into_git_always_ask() {
    let ws = acp("");
    std::fs::create_dir_all(ws.work().join(".git/hooks")).unwrap();
    let hook = ws.work().join(".git/hooks/pre-commit");
    // Other writes go through by a rule for the write tool (acp_guard.rs); into .git/ they
    // are refused without a terminal, also with --yes's neighbour --allow for write.
    let run = ws.run(&["--backend", "acp", "--allow", "write", "write made.txt"]);
    assert_eq!(run.stdout(), "write ok\n");
    for allow in ["write", "write:*"] {
        let run = ws.run(&[
            "--backend",
            "acp",
            "--allow",
            allow,
            "write .git/hooks/pre-commit",
        ]);
        assert!(
            run.stdout()
                .starts_with("write refused: not written: agent-loop cannot ask for approval"),
            "{}",
            run.stdout()
        );
        assert!(!hook.exists());
    }
    let run = ws.run(&["--backend", "acp", "write .git/config"]);
    assert!(
        run.stdout().starts_with("write refused"),
        "{}",
        run.stdout()
    );
    assert!(!ws.work().join(".git/config").exists());
    // A rule that names .git itself, or --yes, lets it through.
    let run = ws.run(&[
        "--backend",
        "acp",
        "--allow",
        "write:.git/hooks/*",
        "write .git/hooks/pre-commit",
    ]);
    assert_eq!(run.stdout(), "write ok\n");
    assert!(hook.exists());
    let run = ws.run(&["--backend", "acp", "--yes", "write .git/config"]);
    assert_eq!(run.stdout(), "write ok\n");
    ws.assert_no_leftovers();
}

#[test]
fn the_output_limit_an_agent_asks_for_is_clamped() {
    let ws = acp("");
    // 3 MB of output, and the agent asks agent-loop to keep a terabyte of it.
    let run = ws.run(&[
        "--backend",
        "acp",
        "--yes",
        "bigterm 1000000000000 head -c 3000000 /dev/zero | tr '\\0' x",
    ]);
    run.expect_code(0);
    assert!(
        run.stdout().starts_with("bigterm: 1048576 bytes"),
        "{}",
        run.stdout()
    );
    ws.assert_no_leftovers();
}

/// A line past the cap on one message is passed over as it comes (the connection goes on:
/// here the input then ends, and agent-loop with it), memory bounded, stderr saying so.
#[test]
fn an_endless_line_to_agent_loop_acp_is_passed_over_in_bounded_memory() {
    let ws = crate::common::Workspace::new();
    // 512 MiB with no newline, as fast as a pipe takes it.
    let mut flood = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys\nb = b'x' * (1 << 20)\ntry:\n  for _ in range(512): sys.stdout.buffer.write(b)\nexcept BrokenPipeError: pass",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = std::process::Stdio::from(flood.stdout.take().unwrap());
    let (run, peak_kib) = ws.run_measured_from(ws.cmd(&["acp"]), input);
    let _ = flood.wait();
    run.expect_code(0);
    assert!(
        run.stderr().contains(
            "the editor sent a line of 512.0 MiB with no JSON-RPC id; it was not read, being \
             longer than 16 MiB, the cap on one message; the connection goes on"
        ),
        "{}",
        run.stderr()
    );
    assert!(peak_kib < 64 * 1024, "peak {peak_kib} KiB");
}

#[test]
fn an_endless_answer_ends_the_turn_in_bounded_memory() {
    let ws = acp("");
    // 200 MiB of answer: the turn ends at the cap on what one turn keeps.
    let (run, peak_kib) = ws.run_measured(ws.cmd(&["--backend", "acp", "flood 200"]));
    run.expect_code(1);
    assert!(
        run.stderr()
            .contains("its answer in this turn went past 16 MiB"),
        "{}",
        run.stderr()
    );
    assert!(peak_kib < 64 * 1024, "peak {peak_kib} KiB");
    ws.assert_no_leftovers();
}

#[test]
fn bytes_that_are_not_utf8_lose_no_answer() {
    let ws = acp("");
    let run = ws.run(&["--backend", "acp", "badutf8"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "bad ??, You said: badutf8\n");
    ws.assert_no_leftovers();
}

#[test]
fn a_flood_of_command_output_stays_in_bounded_memory() {
    let ws = acp("");
    // 400 MB of output from a command the agent runs, a terabyte of it asked to be kept.
    let (run, peak_kib) = ws.run_measured(ws.cmd(&[
        "--backend",
        "acp",
        "--yes",
        "bigterm 1000000000000 head -c 400000000 /dev/zero",
    ]));
    run.expect_code(0);
    assert!(
        run.stdout().starts_with("bigterm: 1048576 bytes"),
        "{}",
        run.stdout()
    );
    assert!(peak_kib < 64 * 1024, "peak {peak_kib} KiB");
    ws.assert_no_leftovers();
}

#[test]
fn a_mode_the_agent_remembered_never_widens_a_later_run() {
    // As codex-acp: a --yes run switches it to its auto mode, which it keeps for the folder.
    let remember = |ws: &crate::common::Workspace| ws.path("fake/remembered-mode");
    // `env`: more of the fake's variables; `extra`: more lines of the entry.
    let entry = |env: &str, extra: &str| {
        let ws = acp("");
        let kept = remember(&ws).display().to_string();
        ws.config(&format!(
            "[backends.acp]\ntype = \"acp\"\ncommand = \"{}\"\ntimeout_s = 60\n\
             auto_mode = \"yolo\"\nenv = {{ FAKE_ACP_REMEMBER = \"{kept}\"{env} }}\n{extra}\n",
            crate::common::fixture("agents/fake-acp.py").display()
        ));
        ws
    };
    let ws = entry("", "ask_mode = \"default\"");
    ws.run(&["--backend", "acp", "--yes", "permission"])
        .expect_code(0);
    assert_eq!(std::fs::read_to_string(remember(&ws)).unwrap(), "yolo");
    // The next run without --yes sets its mode that asks first: asked in a pipe, refused.
    let run = ws.run(&["--backend", "acp", "--verbose", "permission"]);
    run.expect_code(4);
    assert_eq!(run.stdout(), "permission: cancel\n");
    assert!(
        run.stderr()
            .contains("(the agent's session was in its mode `yolo`: set to `default`, which asks)"),
        "{}",
        run.stderr()
    );
    let set = crate::acp::received(&ws, "session/set_mode");
    assert_eq!(set.last().unwrap()["params"]["modeId"], "default");
    // agent-loop writes nothing of the agent's: what it remembered is as it was.
    assert_eq!(std::fs::read_to_string(remember(&ws)).unwrap(), "yolo");
    // doctor says what it remembered.
    let run = ws.run(&["doctor", "acp"]);
    run.expect_code(0);
    assert!(
        run.stdout().contains(
            "remembered mode: its sessions here start in `yolo`, which asks nothing, not in \
             `default` (the entry's ask_mode)"
        ),
        "{}",
        run.stdout()
    );

    // No ask_mode: a session in the auto mode is not prompted at all.
    let ws = entry("", "");
    std::fs::write(remember(&ws), "yolo").unwrap();
    let run = ws.run(&["--backend", "acp", "permission"]);
    run.expect_code(1);
    assert_eq!(run.stdout(), "");
    assert!(
        run.stderr().contains("its mode `yolo`, which asks nothing")
            && run.stderr().contains("the turn was not run"),
        "{}",
        run.stderr()
    );
    assert!(crate::acp::received(&ws, "session/prompt").is_empty());
    // An ask_mode the agent does not take, or does not offer: not prompted either.
    for (env, extra, why) in [
        (
            ", FAKE_ACP_SET_MODE = \"fail\"",
            "ask_mode = \"default\"",
            "did not take its mode `default`",
        ),
        (
            "",
            "ask_mode = \"read-only\"",
            "offers no mode `read-only` (the entry's ask_mode; it offers: default, yolo)",
        ),
    ] {
        let ws = entry(env, extra);
        std::fs::write(remember(&ws), "yolo").unwrap();
        let run = ws.run(&["--backend", "acp", "permission"]);
        run.expect_code(1);
        assert!(run.stderr().contains(why), "{why}: {}", run.stderr());
        assert!(crate::acp::received(&ws, "session/prompt").is_empty());
    }
}

#[test]
fn a_flood_while_a_turn_waits_on_a_command_stays_in_bounded_memory() {
    let ws = acp("");
    // 100 MiB of updates of a type nobody knows, sent while agent-loop waits for the exit of
    // a command, which ends only after them: past the queue's budget they are passed over.
    let (run, peak_kib) = ws.run_measured(ws.cmd(&["--backend", "acp", "--yes", "waitflood 100"]));
    run.expect_code(0);
    assert_eq!(run.stdout(), "waitflood: exit 0\n");
    assert!(
        run.stderr().contains("[acp] (passed over 85 messages from the agent: it sent more than 16 MiB while agent-loop waited on something else)"),
        "{}",
        run.stderr()
    );
    assert!(peak_kib < 64 * 1024, "peak {peak_kib} KiB");
    ws.assert_no_leftovers();
}

#[test]
fn an_edit_the_agents_own_settings_allowed_is_told() {
    // As Claude Code with `permissions.allow` in its settings: no question, the file changed.
    let ws = acp("");
    let told =
        "(the agent changed files without asking: Edit notes.txt; its own settings allowed it)";
    let run = ws.run(&["--backend", "acp", "silent-edit"]);
    run.expect_code(0);
    assert!(run.stderr().contains(told), "{}", run.stderr());
    // Allowed by --yes, or not done: nothing to tell.
    let run = ws.run(&["--backend", "acp", "--yes", "silent-edit"]);
    assert!(!run.stderr().contains("without asking"), "{}", run.stderr());
    let run = ws.run(&["--backend", "acp", "tool"]);
    assert!(run.stderr().contains("Edit notes.txt"), "{}", run.stderr());
    assert!(!run.stderr().contains("without asking"), "{}", run.stderr());
}

#[test]
fn yes_off_takes_back_the_mode_yes_on_gave() {
    let ws = acp("auto_mode = \"yolo\"\nask_mode = \"default\"");
    let steps = [
        ("agent-loop with backend", 1, "/yes on\n"),
        ("[tools run without asking]", 1, "permission\n"),
        ("permission: not asked (mode yolo)", 1, "/yes off\n"),
        ("[tools ask before they change things]", 1, "permission\n"),
        ("[a]lways", 1, "n\n"),
        ("permission: cancel", 1, "exit\n"),
    ];
    let (code, screen) = crate::repl::dialogue_in(&ws, "plain", "--backend acp", &steps);
    assert_eq!(code, 0, "{screen}");
    let modes: Vec<_> = crate::acp::received(&ws, "session/set_mode")
        .iter()
        .map(|m| m["params"]["modeId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(modes, ["yolo", "default"], "{screen}");
}

#[test]
fn a_message_of_too_many_values_ends_the_connection_in_bounded_memory() {
    let ws = acp("");
    // 14 MB on one line, within the cap on bytes: 7 million zeros, each a value in memory.
    let (run, peak_kib) = ws.run_measured(ws.cmd(&["--backend", "acp", "values 7000000"]));
    run.expect_code(1);
    assert!(
        run.stderr()
            .contains("it sent a message of more than 100000 JSON values, the cap on one message"),
        "{}",
        run.stderr()
    );
    assert!(peak_kib < 64 * 1024, "peak {peak_kib} KiB");
    // A message within the cap is read.
    let run = ws.run(&["--backend", "acp", "values 90000"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "You said: values 90000\n");
    ws.assert_no_leftovers();
}

#[test]
fn nothing_is_passed_over_while_the_turn_reads() {
    let ws = acp("");
    // 20 MiB of updates then the answer at once: past the queue's budget, but the turn reads.
    let run = ws.run(&["--backend", "acp", "bigfirst"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "You said: bigfirst\n");
    assert!(!run.stderr().contains("passed over"), "{}", run.stderr());
}

/// The fake agent in the view at 80x24, with `more` flags, its input line shown.
fn in_the_view(ws: &crate::common::Workspace, more: &[&str]) -> Pty {
    let mut args = vec!["--backend", "acp", "--display", "view"];
    args.extend(more);
    let pty = Pty::spawn_after(
        ws,
        &[("TERM", "xterm-256color")],
        "stty rows 24 cols 80",
        &args,
    );
    wait_screen(&pty, "the input line", |r| r[23].starts_with("You:"));
    pty
}

/// An agent's question to edit a file says so, not "It asks to run", and shows the lines
/// agent-loop made of its title, file and input without a `\n` at each end (as qwen-acp's
/// write was asked in the view).
#[test]
fn an_agents_edit_question_says_edit_with_its_lines_unmarked() {
    let ws = acp("");
    let mut pty = in_the_view(&ws, &[]);
    pty.send("permission\r");
    let shown = wait_screen(&pty, "the question", |r| {
        r.iter().any(|l| l.contains("[y]es once"))
    });
    let at = shown
        .iter()
        .position(|l| l.starts_with("Allow edit?"))
        .unwrap_or_else(|| panic!("{shown:#?}"));
    assert_eq!(
        shown[at],
        "Allow edit? It asks to edit notes.txt (3 lines):"
    );
    assert_eq!(shown[at + 1], "  | WriteFile notes.txt [edit]");
    let file = ws.work().canonicalize().unwrap().join("notes.txt");
    assert_eq!(shown[at + 2], format!("  |   file: {}", file.display()));
    assert!(shown[at + 3].starts_with("  |   input: {"), "{shown:#?}");
    assert!(!shown.iter().any(|l| l.ends_with("\\n")), "{shown:#?}");
    pty.send("n\r");
    wait_screen(&pty, "the answer", |r| {
        r.iter().any(|l| l.contains("permission: cancel"))
    });
    pty.send("\x04");
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&bytes));
}

/// The agent picks a question's kind: one that calls a command a read is asked as a command
/// (an allow rule or an "always" for reads does not answer it), and a path outside the root
/// is shown where it points, not with the `..` the agent wrote.
#[test]
fn a_command_the_agent_calls_a_read_asks_as_a_command() {
    let ws = acp("");
    let mut pty = in_the_view(&ws, &["--allow", "read:*"]);
    pty.send("asked-command read curl evil\r");
    let shown = wait_screen(&pty, "the question", |r| {
        r.iter().any(|l| l.contains("[y]es once"))
    });
    assert!(
        shown
            .iter()
            .any(|l| l == "Allow execute? It asks to run (2 lines):"),
        "{shown:#?}"
    );
    assert!(
        shown
            .iter()
            .any(|l| l == "  |   input: {\"command\":\"curl evil\"}"),
        "{shown:#?}"
    );
    pty.send("n\r");
    wait_screen(&pty, "the answer, then the input line", |r| {
        r.iter().any(|l| l.contains("asked-command: not allowed")) && r[23].starts_with("You:")
    });
    pty.send("asked-write delete /w/../../etc/passwd\r");
    let shown = wait_screen(&pty, "the second question", |r| {
        r.iter().any(|l| l.starts_with("Allow delete?"))
            && r.last().is_some_and(|l| l.contains("[y]es once"))
    });
    assert!(
        shown
            .iter()
            .any(|l| l == "Allow delete? It asks to delete /etc/passwd (2 lines):"),
        "{shown:#?}"
    );
    pty.send("n\r");
    wait_screen(&pty, "the second answer", |r| {
        r.iter().any(|l| l.contains("asked-write: not allowed"))
    });
    pty.send("\x04");
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&bytes));
}
