//! ACP turns in agent-loop's conversation: the agent's own tool calls and their results are
//! recorded, so another backend switched to later sees them; a cancelled turn keeps the
//! answer so far; an agent session that is new while the conversation is not (a switch, a
//! resume without `session/load`, `/load`) is given the conversation in its first prompt, and
//! `/clear` and `/load` change the agent's session with agent-loop's, `/undo` and `/retry`
//! start a new one, and the agent is never asked for a summary. Against the scripted fake
//! agent (fixtures/agents/fake-acp.py).

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

/// Each prompt the fake agent received: its session and its text.
pub(crate) fn prompts(ws: &Workspace) -> Vec<(String, String)> {
    std::fs::read_to_string(ws.path("fake/acp.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|m| m["method"] == "session/prompt")
        .map(|m| {
            let p = &m["params"];
            let text = p["prompt"][0]["text"].as_str().unwrap_or("").to_string();
            (p["sessionId"].as_str().unwrap_or("").to_string(), text)
        })
        .collect()
}

/// `text` holds each of `parts`, in that order.
fn assert_in_order(text: &str, parts: &[&str]) {
    let mut from = 0;
    for part in parts {
        match text[from..].find(part) {
            Some(at) => from += at + part.len(),
            None => panic!("missing {part:?} (in this order) in\n{text}"),
        }
    }
}

#[test]
fn an_agent_switched_to_mid_conversation_is_given_it_once() {
    let ws = both();
    ws.reply(1, "Paris, of course.\n");
    let keys = "where is the louvre?\n/backend acp\nand its river?\nhow old is it?\n/exit\n";
    let (code, screen) = repl(&ws, "--backend fake --session trip", keys);
    assert_eq!(code, 0, "{screen}");
    let sent = prompts(&ws);
    assert_eq!(sent.len(), 2, "{sent:?}");
    // The first prompt of its new session carries the conversation as a CLI's prompt does.
    assert_in_order(
        &sent[0].1,
        &[
            "User: where is the louvre?",
            "Assistant: Paris, of course.",
            "User: and its river?",
            "Assistant:",
        ],
    );
    assert!(
        screen.contains(
            "(the agent's new session is given the conversation so far: 2 earlier messages)"
        ),
        "{screen}"
    );
    // Then only the newest message, in the same session.
    assert_eq!(sent[1], (sent[0].0.clone(), "how old is it?".to_string()));
}

#[test]
fn an_agent_switched_back_to_is_given_what_it_missed() {
    let ws = both();
    ws.reply(1, "Middle answer.\n");
    let keys = "alpha\n/backend fake\nmiddle question\n/backend acp\nomega\nlast\n/exit\n";
    let (code, screen) = repl(&ws, "--backend acp --session back", keys);
    assert_eq!(code, 0, "{screen}");
    let sent = prompts(&ws);
    assert_eq!(sent.len(), 3, "{sent:?}");
    // Its own session again (loaded, by a new process), given the other backend's turn.
    assert_eq!(session_ids(&ws, "session/load"), [sent[0].0.clone()]);
    assert!(sent.iter().all(|(id, _)| *id == sent[0].0), "{sent:?}");
    assert_in_order(
        &sent[1].1,
        &[
            "User: middle question",
            "Assistant: Middle answer.",
            "User: omega",
        ],
    );
    assert!(!sent[1].1.contains("alpha"), "{}", sent[1].1);
    assert!(
        screen.contains("(the agent's session is given what it missed: 2 messages)"),
        "{screen}"
    );
    assert_eq!(sent[2].1, "last");
}

#[test]
fn clear_and_load_change_the_agents_session_with_agent_loops() {
    let ws = both();
    ws.reply(1, "Noted.\n");
    ws.run(&["--backend", "fake", "--session", "other", "question zero"])
        .expect_code(0);
    let keys = "alpha\n/clear\nbeta\n/load a\ngamma\n/load other\ndelta\n/exit\n";
    let (code, screen) = repl(&ws, "--backend acp --session a", keys);
    assert_eq!(code, 0, "{screen}");
    let sent = prompts(&ws);
    let texts: Vec<&str> = sent.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(sent.len(), 4, "{sent:?}");
    // /clear: a new session of the agent, given nothing (the conversation is empty).
    assert_eq!(texts[..3], ["alpha", "beta", "gamma"]);
    assert_ne!(sent[1].0, sent[0].0);
    // /load a: the agent's session of `a` again, loaded, nothing repeated.
    assert_eq!(session_ids(&ws, "session/load"), [sent[0].0.clone()]);
    assert_eq!(sent[2].0, sent[0].0);
    // /load other, which never had this agent: a new session given its conversation.
    assert!(![&sent[0].0, &sent[1].0].contains(&&sent[3].0), "{sent:?}");
    assert_in_order(
        texts[3],
        &["User: question zero", "Assistant: Noted.", "User: delta"],
    );
    assert!(
        !texts[3].contains("alpha") && !texts[3].contains("gamma"),
        "{}",
        texts[3]
    );
    assert_eq!(session_ids(&ws, "session/new").len(), 3);
    assert_eq!(
        std::fs::read_to_string(ws.path("fake/acp.log.starts"))
            .unwrap()
            .lines()
            .count(),
        1
    );
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
    // Loaded, it holds the conversation: only the newest message is sent.
    assert_eq!(prompts(&ws)[1].1, "second");
    // An agent that cannot load sessions starts a new one, given the conversation, and says so.
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
    assert_in_order(
        &prompts(&ws)[1].1,
        &["User: first", "Assistant: You said: first", "User: second"],
    );
    assert!(
        run.stderr().contains("given the conversation so far"),
        "{}",
        run.stderr()
    );
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

#[test]
fn undo_and_retry_start_a_new_agent_session_without_the_removed_turn() {
    let ws = both();
    let keys = "alpha\nbeta\n/undo\ngamma\n/retry\n/compact\ndelta\n/exit\n";
    let (code, screen) = repl(&ws, "--backend acp --session u", keys);
    assert_eq!(code, 0, "{screen}");
    let sent = prompts(&ws);
    let texts: Vec<&str> = sent.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(sent.len(), 5, "{sent:?}");
    assert_eq!(texts[..2], ["alpha", "beta"]);
    assert_eq!(sent[1].0, sent[0].0);
    // After /undo: a new session, given the conversation without the removed turn.
    assert_ne!(sent[2].0, sent[0].0);
    assert_in_order(
        texts[2],
        &["User: alpha", "Assistant: You said: alpha", "User: gamma"],
    );
    assert!(!texts[2].contains("beta"), "{}", texts[2]);
    // After /retry: another new session, given the turn retried once.
    assert!(![&sent[0].0, &sent[2].0].contains(&&sent[3].0), "{sent:?}");
    assert_in_order(texts[3], &["User: alpha", "User: gamma", "Assistant:"]);
    assert_eq!(texts[3].matches("gamma").count(), 1, "{}", texts[3]);
    // /compact asks the agent nothing; the next message goes to the same session alone.
    assert!(
        screen.contains("[nothing to compact here: acp keeps its own conversation"),
        "{screen}"
    );
    assert_eq!(sent[4], (sent[3].0.clone(), "delta".to_string()));
    assert_eq!(session_ids(&ws, "session/load"), Vec::<String>::new());
    // The session keeps the agent's latest session, not the first one.
    let saved = ws.saved_session()["agent_sessions"].to_string();
    assert!(saved.contains(&sent[3].0), "{saved}");
    assert!(!saved.contains(&sent[0].0), "{saved}");
}

#[test]
fn summarize_mode_does_not_ask_an_acp_agent_for_a_summary() {
    let ws = both();
    std::fs::create_dir_all(ws.path("xdg/agent-loop")).unwrap();
    std::fs::write(
        ws.path("xdg/agent-loop/config.toml"),
        "max_context_tokens = 2500\n",
    )
    .unwrap();
    let long = "x".repeat(3000);
    let turns: String = (1..=6).map(|n| format!("turn{n} {long}\n")).collect();
    let keys = format!("/context summarize\n{turns}last\n/exit\n");
    let (code, screen) = repl(&ws, "--backend acp --session s", &keys);
    assert_eq!(code, 0, "{screen}");
    let sent = prompts(&ws);
    assert_eq!(sent.len(), 7, "{screen}");
    assert!(
        sent.iter().all(|(_, t)| !t.contains("Summarise")),
        "{sent:?}"
    );
    assert_eq!(sent[6].1, "last");
}

#[test]
fn a_mode_chosen_with_context_stays_on_backend_even_when_it_was_the_agents_own() {
    let ws = both();
    ws.reply(1, "ok\n");
    // `fresh` is the ACP agent's own mode; chosen with /context, it is the user's.
    let keys = "first question\n/context fresh\n/backend fake\nsecond question\n/exit\n";
    let (code, screen) = repl(&ws, "--backend acp", keys);
    assert_eq!(code, 0, "{screen}");
    let prompt = ws.prompt(1);
    assert!(prompt.contains("second question"), "{prompt}");
    assert!(!prompt.contains("first question"), "{prompt}");
}
