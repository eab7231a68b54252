//! The CLI backend end to end: a scripted fake agent CLI, driven by the built binary through
//! full tool round trips, failures, timeouts and the iteration cap.

use crate::common::{fixture, wait_gone, Workspace};

const READ_CALL: &str = "\x1b[1;33mLet me read it.\x1b[0m\r\n<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"notes.txt\"}}</tool_call>\nTokens: 1,234 in, 56 out\n";

#[test]
fn tool_round_trip_feeds_the_result_into_the_next_prompt() {
    let ws = Workspace::new();
    std::fs::write(ws.work().join("notes.txt"), "the secret is 42\n").unwrap();
    ws.reply(1, READ_CALL);
    ws.reply(
        2,
        "\x1b[32mThe secret is 42.\x1b[0m\nTokens: 2.1k in, 75 out\n",
    );
    let run = ws.run(&["--backend", "fake", "what is the secret?"]);
    run.expect_code(0);
    assert_eq!(ws.runs(), 2);
    // The answer alone on stdout, ANSI stripped.
    assert_eq!(run.stdout(), "The secret is 42.\n");
    let err = run.stderr();
    assert!(err.contains("Let me read it."), "{err}");
    assert!(err.contains("[tool read] notes.txt"), "{err}");
    assert!(err.contains("[tokens in 1234 / out 56]"), "{err}");
    assert!(err.contains("[tokens in 2100 / out 75]"), "{err}");
    // The first prompt has the tool preamble and the task; the second the tool's output.
    let first = ws.prompt(1);
    assert!(
        first.contains("<tool_call>{\"name\":\"TOOL_NAME\""),
        "{first}"
    );
    assert!(
        first.contains("## bash") && first.contains("## edit"),
        "{first}"
    );
    assert!(first.contains("User: what is the secret?"), "{first}");
    let second = ws.prompt(2);
    assert!(second.contains("User: what is the secret?"), "{second}");
    assert!(
        second.contains("<tool_result id=\"call_1\" name=\"read\" status=\"ok\">\n     1\tthe secret is 42\n</tool_result>"),
        "{second}"
    );
    assert!(
        second.contains("Assistant: Let me read it.\n<tool_call>{\"name\":\"read\""),
        "{second}"
    );
}

#[test]
fn several_calls_in_one_reply_run_in_order() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"write\",\"arguments\":{\"path\":\"a/b.txt\",\"content\":\"one\\n\"}}</tool_call>\n\
         <tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"a/b.txt\"}}</tool_call>\n",
    );
    ws.reply(2, "done\n");
    let run = ws.run(&["--backend", "fake", "--yes", "write then read"]);
    run.expect_code(0);
    let second = ws.prompt(2);
    let wrote = second
        .find("name=\"write\" status=\"ok\"")
        .expect("write result");
    let read = second
        .find("name=\"read\" status=\"ok\">\n     1\tone")
        .expect("read result");
    assert!(wrote < read, "{second}");
    assert_eq!(
        std::fs::read_to_string(ws.work().join("a/b.txt")).unwrap(),
        "one\n"
    );
}

#[test]
fn mutating_tools_are_denied_without_a_terminal_or_yes() {
    let ws = Workspace::new();
    ws.reply(1, "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"touch ran.txt\"}}</tool_call>\n");
    ws.reply(2, "ok, I could not\n");
    let run = ws.run(&["--backend", "fake", "make a file"]);
    // The only call was refused: nothing asked for was done, and the exit code says so.
    run.expect_code(4);
    assert!(
        run.stderr()
            .contains("[not done: 1 tool call refused: approval cannot be asked here"),
        "{}",
        run.stderr()
    );
    assert!(
        !ws.work().join("ran.txt").exists(),
        "bash ran without approval"
    );
    let second = ws.prompt(2);
    assert!(
        second.contains("status=\"error\">\nnot run: agent-loop cannot ask for approval (stdin is not a terminal) and --yes was not given"),
        "{second}"
    );
    assert!(
        run.stderr().contains("[tool bash] touch ran.txt"),
        "{}",
        run.stderr()
    );
}

#[test]
fn yes_approves_bash_and_its_result_goes_back() {
    let ws = Workspace::new();
    ws.reply(1, "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"touch ran.txt; echo out; echo err >&2; exit 3\"}}</tool_call>\n");
    ws.reply(2, "ran it\n");
    let run = ws.run(&["--backend", "fake", "--yes", "make a file"]);
    run.expect_code(0);
    assert!(ws.work().join("ran.txt").exists());
    let second = ws.prompt(2);
    assert!(
        second.contains("name=\"bash\" status=\"error\">\nexit code: 3\nstdout:\nout\nstderr:\nerr\n</tool_result>"),
        "{second}"
    );
}

#[test]
fn prompt_as_argument_and_as_temp_file() {
    for (args, via) in [
        ("[\"--prompt-arg\", \"{prompt}\"]", "arg"),
        ("[\"--prompt-file\", \"{prompt_file}\"]", "file"),
    ] {
        let ws = Workspace::new();
        let tmp = ws.path("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        ws.add_config(&format!("args = {args}\n"));
        ws.reply(1, "hello\n");
        let mut cmd = ws.cmd(&["--backend", "fake", "say hello"]);
        cmd.env("TMPDIR", &tmp);
        let run = ws.run_cmd(cmd);
        run.expect_code(0);
        assert!(ws.prompt(1).contains("User: say hello"), "prompt via {via}");
        // The prompt file lived under TMPDIR and is gone afterwards.
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            0,
            "prompt via {via} left a file"
        );
    }
}

#[test]
fn stdin_task_and_dash() {
    use std::io::Write;
    use std::process::Stdio;
    for args in [&["--backend", "fake"][..], &["--backend", "fake", "-"][..]] {
        let ws = Workspace::new();
        ws.reply(1, "got it\n");
        let mut cmd = ws.cmd(args);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"task from a pipe\n")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "got it\n");
        assert!(ws.prompt(1).contains("User: task from a pipe"));
    }
}

#[test]
fn empty_stdin_is_a_usage_error() {
    let ws = Workspace::new();
    let run = ws.run(&["--backend", "fake", "-"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("no task: stdin was empty"),
        "{}",
        run.stderr()
    );
    assert_eq!(ws.runs(), 0);
}

#[test]
fn an_empty_task_argument_is_a_usage_error_too() {
    let ws = Workspace::new();
    for task in ["", "  \n "] {
        let run = ws.run(&["--backend", "fake", task]);
        run.expect_code(2);
        assert!(
            run.stderr().contains("no task: the task given was empty"),
            "{}",
            run.stderr()
        );
    }
    assert_eq!(ws.runs(), 0);
}

#[test]
fn ansi_is_stripped_and_redraws_carried_out() {
    let ws = Workspace::new();
    // A status line erased from below and overwritten: gone, as on a terminal.
    ws.reply(1, "\x1b[?25l\x1b[2K\r\x1b[1;31mred\x1b[0m and \x1b]0;title\x07plain\r\nworking...\n\x1b[1A\x1b[2Klast line\n");
    let run = ws.run(&["--backend", "fake", "colours"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "red and plain\nlast line\n");
}

#[test]
fn invalid_utf8_is_replaced_not_a_crash() {
    let ws = Workspace::new();
    ws.reply(1, b"caf\xe9 \xff ok\n");
    let run = ws.run(&["--backend", "fake", "bytes"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "caf\u{fffd} \u{fffd} ok\n");
    assert!(ws.saved_messages().contains("caf\u{fffd} \u{fffd} ok"));
    ws.assert_no_leftovers();
}

#[test]
fn noisy_stderr_does_not_deadlock() {
    let ws = Workspace::new();
    ws.reply(1, "still fine\n");
    ws.fake_file("stderr.1", "x".repeat(1024 * 1024));
    let run = ws.run(&["--backend", "fake", "noise"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "still fine\n");
}

#[test]
fn backend_failure_shows_its_stderr_and_exits_1() {
    let ws = Workspace::new();
    ws.reply(1, "partial\n");
    ws.fake_file("stderr.1", "fatal: model overloaded\n");
    ws.fake_file("rc.1", "3");
    let run = ws.run(&["--backend", "fake", "anything"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(err.contains("backend `fake`"), "{err}");
    assert!(err.contains("exited with status 3"), "{err}");
    assert!(err.contains("fatal: model overloaded"), "{err}");
    assert_eq!(run.stdout(), "");
}

#[test]
fn empty_answer_is_an_error() {
    let ws = Workspace::new();
    ws.reply(1, "\x1b[0m\n\n");
    let run = ws.run(&["--backend", "fake", "anything"]);
    run.expect_code(1);
    assert!(
        run.stderr().contains("printed no answer on stdout"),
        "{}",
        run.stderr()
    );
}

#[test]
fn hanging_backend_is_killed_at_the_timeout_with_its_children() {
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.slow]\ncommand = '{}'\ntimeout_s = 1\n",
        fixture("agents/hang.sh").display()
    ));
    let run = ws.run(&["--backend", "slow", "anything"]);
    run.expect_code(1);
    let err = run.stderr();
    assert!(err.contains("backend `slow` timed out after 1s"), "{err}");
    assert!(err.contains("its process group was killed"), "{err}");
    // On a busy machine the timeout may come before the agent wrote its pid files (it hangs
    // either way): whatever it did start is checked by assert_no_leftovers below.
    for file in ["self.pid", "child.pid"] {
        let Ok(text) = std::fs::read_to_string(ws.path("fake").join(file)) else {
            continue;
        };
        let Ok(pid) = text.trim().parse::<i32>() else {
            continue;
        };
        assert!(wait_gone(pid), "{file} ({pid}) is still running");
    }
    assert!(ws.saved_messages().contains("anything"));
    ws.assert_no_leftovers();
}

#[test]
fn iteration_cap_stops_with_exit_3() {
    let ws = Workspace::new();
    // A different call each time, so the repeated-call stop does not come first.
    for n in 1..=3 {
        ws.reply(
            n,
            format!(
                "<tool_call>{{\"name\":\"ls\",\"arguments\":{{\"path\":\"{n}\"}}}}</tool_call>\n"
            ),
        );
    }
    let run = ws.run(&["--backend", "fake", "--max-iterations", "3", "loop forever"]);
    run.expect_code(3);
    assert_eq!(ws.runs(), 3);
    assert!(
        run.stderr()
            .contains("stopped after 3 backend calls (the --max-iterations cap)"),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_cap_of_one_says_one_backend_call() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"ls\",\"arguments\":{}}</tool_call>\n",
    );
    let run = ws.run(&["--backend", "fake", "--max-iterations", "1", "loop"]);
    run.expect_code(3);
    assert!(
        run.stderr()
            .contains("stopped after 1 backend call (the --max-iterations cap)"),
        "{}",
        run.stderr()
    );
}

#[test]
fn unknown_tool_and_malformed_calls_go_back_to_the_model() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"fly\",\"arguments\":{}}</tool_call>\n\
         <tool_call>{\"name\": \"bash\", \"arguments\": {</tool_call>\n\
         <tool_call>{\"name\":\"read\",\"arguments\":{\"path\": 5}}</tool_call>\n\
         <tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"missing.txt\"}}</tool_call>\n",
    );
    ws.reply(2, "sorry\n");
    let run = ws.run(&["--backend", "fake", "do things"]);
    run.expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second.contains(
            "unknown tool `fly`; the tools are: bash, read, write, edit, ls, grep, read_url"
        ),
        "{second}"
    );
    assert!(
        second.contains("the tool call is not valid JSON"),
        "{second}"
    );
    assert!(
        second.contains("invalid arguments for read: invalid type: integer `5`, expected a string"),
        "{second}"
    );
    assert!(
        second.contains("cannot read missing.txt: No such file or directory"),
        "{second}"
    );
    assert_eq!(run.stdout(), "sorry\n");
    assert!(ws.saved_messages().contains("unknown tool `fly`"));
    ws.assert_no_leftovers();
}

#[test]
fn name_and_bare_argument_calls_map_to_the_main_parameter() {
    let ws = Workspace::new();
    ws.add_config("tool_call_regex = '(?m)^\u{23fa} (?P<name>\\w+)\\((?P<args>.*)\\)$'\ntool_call_format = '\u{23fa} {name}({args})'\n");
    std::fs::write(ws.work().join("hello.txt"), "hi there\n").unwrap();
    ws.reply(1, "\x1b[97m\u{23fa}\x1b[0m Read(hello.txt)\n");
    ws.reply(2, "it says hi there\n");
    let run = ws.run(&["--backend", "fake", "what does hello.txt say?"]);
    run.expect_code(0);
    assert!(ws
        .prompt(1)
        .contains("\u{23fa} TOOL_NAME({\"PARAMETER\":\"VALUE\"})"));
    let second = ws.prompt(2);
    assert!(
        second.contains("\u{23fa} read({\"path\":\"hello.txt\"})"),
        "{second}"
    );
    assert!(
        second.contains("name=\"read\" status=\"ok\">\n     1\thi there"),
        "{second}"
    );
}

#[test]
fn tools_flag_limits_the_tools() {
    let ws = Workspace::new();
    ws.reply(
        1,
        "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"true\"}}</tool_call>\n",
    );
    ws.reply(2, "fine\n");
    let run = ws.run(&["--backend", "fake", "--yes", "--tools", "read,ls", "x"]);
    run.expect_code(0);
    let first = ws.prompt(1);
    assert!(
        first.contains("## read") && first.contains("## ls") && !first.contains("## bash"),
        "{first}"
    );
    assert!(ws
        .prompt(2)
        .contains("unknown tool `bash`; the tools are: read, ls"));
}

#[test]
fn ctrl_c_stops_the_backend_group_and_exits_130() {
    use std::process::Stdio;
    let ws = Workspace::new();
    ws.config(&format!(
        "[backends.slow]\ncommand = '{}'\ntimeout_s = 60\n",
        fixture("agents/hang.sh").display()
    ));
    let mut cmd = ws.cmd(&["--backend", "slow", "anything"]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    // Wait for the backend to be running (self.pid is written last), polling a condition.
    let child_pid = ws.path("fake").join("self.pid");
    let ready = crate::common::poll(|| {
        std::fs::read_to_string(&child_pid)
            .is_ok_and(|s| s.ends_with('\n'))
            .then_some(())
    });
    assert!(ready.is_some(), "the fake backend never started");
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains("[turn cancelled: the backend and any running tool were stopped]"),
        "{err}"
    );
    // The session was saved with the turn recorded as cancelled.
    let sessions = ws.path("data/agent-loop/sessions");
    let folder = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let saved = std::fs::read_to_string(folder.join("session.json")).unwrap();
    assert!(saved.contains("[turn cancelled by the user]"), "{saved}");
    for file in ["self.pid", "child.pid"] {
        let pid: i32 = std::fs::read_to_string(ws.path("fake").join(file))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(wait_gone(pid), "{file} ({pid}) survived Ctrl-C");
    }
    ws.assert_no_leftovers();
}

/// An agent CLI's stdout is read on a thread of its own (`child-stdout`), whatever the
/// display or a slow `--output jsonl` reader holds up: Claude Code drops what its pipe could
/// not take when it exits. The agent here looks for that thread in agent-loop while it runs
/// (it may start a moment after the agent: looked for until it is there, for 30 s at most).
#[test]
fn an_agent_clis_stdout_is_read_on_a_thread_of_its_own() {
    let ws = Workspace::new();
    let count = "cat /proc/$PPID/task/*/comm | grep -c \"^child-stdout$\"";
    ws.add_config(&format!(
        "[backends.peek]\ncommand = \"sh\"\n\
         args = ['-c', 'for i in $(seq 3000); do n=$({count}) && break; sleep 0.01; done; echo $n']\n"
    ));
    let run = ws.run(&["--backend", "peek", "--no-save", "count"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "1\n");
}

/// And its stdout pipe takes what the system lets a user's pipe take (1 MiB by Linux's
/// default, not 64 KiB): an answer that fits is never lost, however late it is read.
#[test]
fn an_agent_clis_stdout_pipe_takes_a_whole_answer() {
    let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(65536);
    let ws = Workspace::new();
    // F_GETPIPE_SZ of its stdout.
    ws.add_config(
        "[backends.peek]\ncommand = \"python3\"\n\
         args = ['-c', 'import fcntl; print(fcntl.fcntl(1, 1032))']\n",
    );
    let run = ws.run(&["--backend", "peek", "--no-save", "size"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), format!("{}\n", max.min(1 << 20)));
}
