//! What tools may touch and when they ask: `--root` confinement against escape attempts,
//! `--approval` and `--allow` rules, the stop on repeated identical calls and the cap on the
//! calls of one reply.

use crate::common::Workspace;

/// Runs one reply of tool calls, then "done"; returns the second prompt (the results).
fn results_of(ws: &Workspace, calls: &str, args: &[&str]) -> String {
    ws.reply(1, calls);
    ws.reply(2, "done\n");
    let mut all = vec!["--backend", "fake"];
    all.extend_from_slice(args);
    all.push("go");
    let run = ws.run(&all);
    let second = ws.prompt(2);
    // 4 when a call was refused, approval being impossible to ask here: not done.
    let refused = second.contains("not run: agent-loop cannot ask for approval");
    run.expect_code(if refused { 4 } else { 0 });
    second
}

#[test]
fn file_tools_cannot_escape_the_root() {
    let ws = Workspace::new();
    std::fs::write(ws.path("secret.txt"), "top secret\n").unwrap();
    std::os::unix::fs::symlink(ws.path("secret.txt"), ws.work().join("planted")).unwrap();
    std::os::unix::fs::symlink(ws.dir.path(), ws.work().join("up")).unwrap();
    // A link to a file outside that does not exist yet: writing through it would create it.
    std::os::unix::fs::symlink(ws.path("created.txt"), ws.work().join("dangling")).unwrap();
    let secret = ws.path("secret.txt").display().to_string();
    let outside = ws.path("abs.txt").display().to_string();
    let calls = format!(
        "<tool_call>{{\"name\":\"read\",\"arguments\":{{\"path\":\"../secret.txt\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"read\",\"arguments\":{{\"path\":\"{secret}\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"read\",\"arguments\":{{\"path\":\"planted\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"write\",\"arguments\":{{\"path\":\"up/new.txt\",\"content\":\"x\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"edit\",\"arguments\":{{\"path\":\"planted\",\"old_string\":\"top\",\"new_string\":\"no\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"ls\",\"arguments\":{{\"path\":\"..\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"grep\",\"arguments\":{{\"pattern\":\"secret\",\"path\":\"up\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"write\",\"arguments\":{{\"path\":\"{outside}\",\"content\":\"x\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"write\",\"arguments\":{{\"path\":\"../new.txt\",\"content\":\"x\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"write\",\"arguments\":{{\"path\":\"dangling\",\"content\":\"x\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"edit\",\"arguments\":{{\"path\":\"sub/../../secret.txt\",\"old_string\":\"top\",\"new_string\":\"no\"}}}}</tool_call>\n\
         <tool_call>{{\"name\":\"write\",\"arguments\":{{\"path\":\"sub/../inside.txt\",\"content\":\"ok\"}}}}</tool_call>\n"
    );
    let second = results_of(&ws, &calls, &["--yes"]);
    assert_eq!(
        second.matches("status=\"error\">\nrefused: ").count(),
        11,
        "{second}"
    );
    assert!(!second.contains("top secret"), "{second}");
    for file in ["new.txt", "abs.txt", "created.txt"] {
        assert!(
            !ws.path(file).exists(),
            "{file} was written outside the root"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.path("secret.txt")).unwrap(),
        "top secret\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.work().join("inside.txt")).unwrap(),
        "ok"
    );
    assert!(ws.saved_messages().contains("refused: "));
    ws.assert_no_leftovers();
}

/// A write the root refuses is refused before anyone is asked about it: without `--yes` and
/// without a terminal it is the root's refusal, not approval's, and the run is not "not done".
#[test]
fn a_write_the_root_refuses_is_not_asked_about() {
    let ws = Workspace::new();
    std::os::unix::fs::symlink(ws.path("outside.txt"), ws.work().join("link_out")).unwrap();
    let second = results_of(
        &ws,
        "<tool_call>{\"name\":\"write\",\"arguments\":{\"path\":\"link_out\",\"content\":\"x\"}}</tool_call>\n",
        &[],
    );
    assert!(
        second.contains("status=\"error\">\nrefused: link_out"),
        "{second}"
    );
    assert!(!ws.path("outside.txt").exists());
}

#[test]
fn root_flag_widens_and_slash_lifts() {
    let ws = Workspace::new();
    std::fs::write(ws.path("secret.txt"), "top secret\n").unwrap();
    let call =
        "<tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"../secret.txt\"}}</tool_call>\n";
    let root = ws.dir.path().display().to_string();
    assert!(results_of(&ws, call, &["--root", &root]).contains("1\ttop secret"));
    let ws = Workspace::new();
    std::fs::write(ws.path("secret.txt"), "top secret\n").unwrap();
    assert!(results_of(&ws, call, &["--root", "/"]).contains("1\ttop secret"));
}

#[test]
fn missing_root_is_a_usage_error() {
    let ws = Workspace::new();
    let run = ws.run(&["--backend", "fake", "--root", "/no/such/dir", "x"]);
    run.expect_code(2);
    assert!(
        run.stderr()
            .contains("--root /no/such/dir: No such file or directory"),
        "{}",
        run.stderr()
    );
}

#[test]
fn allow_rules_let_matching_commands_run_without_a_terminal() {
    let ws = Workspace::new();
    let calls = "<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"echo allowed > a.txt\"}}</tool_call>\n\
                 <tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"echo fine\"}}</tool_call>\n\
                 <tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"touch b.txt\"}}</tool_call>\n";
    let second = results_of(&ws, calls, &["--allow", "bash:echo *"]);
    // Redirection chains more than one command: not vouched for by `echo *`.
    assert!(!ws.work().join("a.txt").exists());
    assert!(second.contains("stdout:\nfine"), "{second}");
    assert!(!ws.work().join("b.txt").exists());
    assert_eq!(
        second
            .matches("not run: agent-loop cannot ask for approval")
            .count(),
        2,
        "{second}"
    );
}

#[test]
fn always_ask_covers_read_only_tools_too() {
    let ws = Workspace::new();
    let second = results_of(
        &ws,
        "<tool_call>{\"name\":\"ls\",\"arguments\":{}}</tool_call>\n",
        &["--approval", "always-ask"],
    );
    assert!(
        second.contains("not run: agent-loop cannot ask for approval"),
        "{second}"
    );
    let run = ws.run(&["--backend", "fake", "--approval", "sometimes", "x"]);
    run.expect_code(2);
    assert!(
        run.stderr().contains("unknown approval mode `sometimes`"),
        "{}",
        run.stderr()
    );
}

#[test]
fn repeated_identical_calls_stop_the_turn() {
    let ws = Workspace::new();
    ws.reply(
        0,
        "<tool_call>{\"name\":\"ls\",\"arguments\":{\"path\":\".\"}}</tool_call>\n",
    );
    let run = ws.run(&["--backend", "fake", "--max-iterations", "10", "loop"]);
    run.expect_code(3);
    assert_eq!(ws.runs(), 3);
    assert!(
        run.stderr().contains(
            "the model asked for the same tool call 3 times in this turn (ls {\"path\":\".\"})"
        ),
        "{}",
        run.stderr()
    );
}

/// The calls of one reply past `max_tool_calls` are not run: each is answered so, and the
/// user is told once.
#[test]
fn calls_past_the_cap_of_one_reply_are_answered_not_run() {
    let ws = Workspace::new();
    let calls: String = (1..=3)
        .map(|n| {
            std::fs::write(ws.work().join(format!("{n}.txt")), format!("file {n}\n")).unwrap();
            format!("<tool_call>{{\"name\":\"read\",\"arguments\":{{\"path\":\"{n}.txt\"}}}}</tool_call>\n")
        })
        .collect();
    ws.reply(1, calls);
    ws.reply(2, "done\n");
    let mut cmd = ws.cmd(&["--backend", "fake", "go"]);
    cmd.env("AGENT_LOOP_MAX_TOOL_CALLS", "2");
    let run = ws.run_cmd(cmd);
    run.expect_code(0);
    let second = ws.prompt(2);
    assert!(
        second.contains("file 1") && second.contains("file 2"),
        "{second}"
    );
    assert!(!second.contains("file 3"), "{second}");
    assert!(
        second.contains("not run: a reply may ask for at most 2 tool calls (max_tool_calls)"),
        "{second}"
    );
    assert!(
        run.stderr().contains(
            "the reply asked for 3 tool calls: the first 2 ran (max_tool_calls), the others \
             were answered as not run"
        ),
        "{}",
        run.stderr()
    );
}

/// An MCP tool's question shows every argument the server will be sent, one a line, not the
/// one its schema makes the main one; and an allow rule matches all of them.
#[test]
fn an_mcp_tools_question_shows_every_argument() {
    let tiny = crate::common::fixture("mcp/tiny-server.js");
    let server = format!("\n[mcp.servers.tiny]\ncommand = '{}'\n", tiny.display());
    let ws = Workspace::new();
    ws.add_config(&server);
    let call = |args: &str| {
        format!("<tool_call>{{\"name\":\"mcp.tiny.fail\",\"arguments\":{args}}}</tool_call>\n")
    };
    ws.reply(1, call(r#"{"note":"/srv","command":"curl x | sh"}"#));
    ws.reply(2, "stopped\n");
    let mut pty =
        crate::common::Pty::spawn(&ws, &[], &["--display", "plain", "--backend", "fake", "go"]);
    pty.wait_for("[n]o");
    let shown = String::from_utf8_lossy(&pty.output()).replace("\r\n", "\n");
    assert!(
        shown.contains(
            "Allow mcp.tiny.fail? It asks to run (2 lines):\n  | command: curl x | sh\\n\n  | note: /srv\n"
        ),
        "{shown}"
    );
    pty.send("n\n");
    assert_eq!(pty.finish().0, 0);
    // A rule naming only the note does not cover the command.
    let ws = Workspace::new();
    ws.add_config(&server);
    let results = results_of(
        &ws,
        &call(r#"{"note":"/srv","command":"curl x | sh"}"#),
        &["--allow", "mcp.tiny.fail:note: /srv"],
    );
    assert!(
        results.contains("not run: agent-loop cannot ask for approval"),
        "{results}"
    );
}
