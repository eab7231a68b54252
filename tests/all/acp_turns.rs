//! ACP turns in agent-loop's conversation: the agent's own tool calls and their results are
//! recorded, so another backend switched to later sees them; a cancelled turn keeps the
//! answer so far. Against the scripted fake agent (fixtures/agents/fake-acp.py).

use crate::common::{Pty, Workspace};
use crate::repl::repl;

/// The fake ACP agent as backend `acp` beside the scripted CLI fake (`fake`).
fn both() -> Workspace {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "[backends.acp]\ntype = \"acp\"\ncommand = \"{}\"\ntimeout_s = 60\n",
        crate::common::fixture("agents/fake-acp.py").display()
    ));
    ws
}

#[test]
fn the_agents_tool_calls_reach_the_next_backend() {
    let ws = both();
    ws.reply(1, "I see two files.\n");
    let keys = "tool please\n/backend fake\nwhat did you run?\n/exit\n";
    let (code, screen) = repl(&ws, "--backend acp --session calls", keys);
    assert_eq!(code, 0, "{screen}");
    let prompt = ws.prompt(1);
    for part in [
        "User: tool please",
        "acp_execute",
        "\"title\":\"Shell: ls\"",
        "\"raw_input\":{\"command\":\"ls\"}",
        "status: completed\na.txt b.txt",
        "acp_edit",
        "/w/notes.txt",
        "status: in_progress",
        "You said: tool please",
        "User: what did you run?",
    ] {
        assert!(prompt.contains(part), "missing {part:?} in\n{prompt}");
    }
    // The calls come before the answer, as they happened.
    assert!(prompt.find("acp_execute") < prompt.find("You said: tool please"));
}

#[test]
fn an_http_backend_is_sent_the_agents_tool_calls_as_tool_calls() {
    use crate::http::{run_api, setup, streamed, Format};
    for format in [Format::Anthropic, Format::OpenAi] {
        let (ws, server) = setup(format, vec![streamed(format, "text")], "");
        ws.add_config(&format!(
            "[backends.acp]\ntype = \"acp\"\ncommand = \"{}\"\ntimeout_s = 60\n",
            crate::common::fixture("agents/fake-acp.py").display()
        ));
        ws.run(&["--backend", "acp", "--session", "s", "tool please"])
            .expect_code(0);
        let run = run_api(&ws, &["--session", "s", "what did you run?"]);
        assert_eq!(run.code(), 0, "{}", run.stderr());
        let body = server.requests()[0].json().to_string();
        // The API's own shapes: a tool_use and its tool_result (Anthropic), a tool call and a
        // `tool` message (OpenAI), each named for the agent's kind of tool.
        let shapes: &[&str] = match format {
            Format::Anthropic => &["\"type\":\"tool_use\"", "\"type\":\"tool_result\""],
            _ => &["\"tool_calls\"", "\"role\":\"tool\""],
        };
        for part in [
            shapes,
            &["acp_execute", "a.txt b.txt", "You said: tool please"],
        ]
        .concat()
        {
            assert!(body.contains(part), "{format:?}: missing {part} in\n{body}");
        }
    }
}

#[test]
fn ctrl_c_keeps_the_answer_so_far_marked_as_cancelled() {
    let ws = both();
    ws.reply(1, "ok\n");
    let mut pty = Pty::spawn(
        &ws,
        &[],
        &["--display", "plain", "--backend", "acp", "--session", "cut"],
    );
    pty.wait_for("agent-loop with backend");
    pty.send("cancel me\n");
    pty.wait_for("partial answer");
    pty.send("\x03");
    pty.wait_for("[turn cancelled");
    pty.send("/backend fake\n");
    pty.wait_for("[backend fake]");
    pty.send("and now?\n");
    pty.wait_for("ok");
    pty.send("exit\n");
    let (code, bytes) = pty.finish();
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&bytes));
    let prompt = ws.prompt(1);
    assert!(
        prompt.contains("partial answer\n[turn cancelled by the user]"),
        "{prompt}"
    );
    ws.assert_no_leftovers();
}

/// The `sessionId` of every message with `method` the fake agent received.
fn session_ids(ws: &Workspace, method: &str) -> Vec<String> {
    std::fs::read_to_string(ws.path("fake/acp.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|m| m["method"] == method)
        .map(|m| m["params"]["sessionId"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_session_resumed_in_a_new_run_loads_the_agents_session() {
    let ws = both();
    ws.run(&["--backend", "acp", "--session", "keep", "first"])
        .expect_code(0);
    let first = session_ids(&ws, "session/prompt")[0].clone();
    let run = ws.run(&["--backend", "acp", "--session", "keep", "second"]);
    run.expect_code(0);
    assert_eq!(run.stdout(), "You said: second\n");
    // What the agent replays of the loaded session is not shown again.
    assert!(!run.stderr().contains("REPLAYED"), "{}", run.stderr());
    assert_eq!(
        session_ids(&ws, "session/load"),
        std::slice::from_ref(&first)
    );
    assert_eq!(session_ids(&ws, "session/prompt")[1], first);
    // An agent that cannot load sessions starts a new one, and says so.
    let ws = both();
    ws.add_config("env = { FAKE_ACP_NO_LOAD = \"1\" }\n");
    ws.run(&["--backend", "acp", "--session", "keep", "first"])
        .expect_code(0);
    let run = ws.run(&["--backend", "acp", "--session", "keep", "second"]);
    run.expect_code(0);
    assert!(
        run.stderr()
            .contains("(the agent cannot load its earlier session (it offers no loadSession)"),
        "{}",
        run.stderr()
    );
    assert!(session_ids(&ws, "session/load").is_empty());
    assert_eq!(session_ids(&ws, "session/new").len(), 2);
}

#[test]
fn help_lists_the_agents_own_commands() {
    let ws = both();
    let keys = "/help\nfirst\n/help\n//memory\nexit\n";
    let (code, screen) = repl(&ws, "--backend acp", keys);
    assert_eq!(code, 0, "{screen}");
    // Before the agent started there are none to list; after, each with what it does.
    assert_eq!(
        screen.matches("The agent's own commands").count(),
        1,
        "{screen}"
    );
    assert!(
        screen.contains("  //memory  show the agent's memory"),
        "{screen}"
    );
    assert!(
        screen.contains("  //init    write an AGENTS.md"),
        "{screen}"
    );
    assert!(screen.contains("You said: /memory"), "{screen}");
}
