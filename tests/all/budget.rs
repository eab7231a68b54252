//! The context budget counts what a request sends: an agent that keeps its own conversation
//! (ACP, terminal) is never sent agent-loop's preamble, so it is not charged for it; a prompt
//! over the budget is refused on every backend type with the conversation and the session
//! file as they were; and an ACP agent's reported usage does not shrink the estimate.
//! Against fixtures/agents/fake-acp.py, fake-tui.py, the scripted CLI fake and the HTTP mock.

use std::path::PathBuf;

use crate::acp_turns::prompts;
use crate::common::{fixture, Run, Workspace};
use crate::repl::repl;

/// `max_context_tokens` in config.toml, which every backend type reads; returns the file.
pub(crate) fn budget(ws: &Workspace, tokens: u64) -> PathBuf {
    let file = ws.path("xdg/agent-loop/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, format!("max_context_tokens = {tokens}\n")).unwrap();
    file
}

/// Adds the fake ACP agent as backend `acp`.
fn add_acp(ws: &Workspace) {
    ws.add_config(&format!(
        "[backends.acp]\ntype = \"acp\"\ncommand = \"{}\"\ntimeout_s = 60\n",
        fixture("agents/fake-acp.py").display()
    ));
}

#[test]
fn an_agent_is_not_charged_for_the_preamble_it_never_gets() {
    let ws = crate::pty::tui("");
    add_acp(&ws);
    budget(&ws, 1000);
    // About 375 tokens: agent-loop's preamble alone would take most of the 1,000.
    let message = "word ".repeat(300);
    let message = message.trim_end();
    for backend in ["acp", "tui"] {
        let run = ws.run(&["--backend", backend, message]);
        assert_eq!(run.code(), 0, "{backend}: {}", run.stderr());
        let out = run.stdout();
        assert!(out.contains("word word"), "{backend}: {out}");
    }
    assert_eq!(prompts(&ws)[0].1, message);
    assert_eq!(crate::pty::messages(&ws)[0].trim_end(), message);
    // Over the budget by the message itself: refused, and the figures name no preamble.
    let big = "word ".repeat(1_000);
    for backend in ["acp", "tui"] {
        let run = ws.run(&["--backend", backend, &big]);
        run.expect_code(2);
        let err = run.stderr();
        assert!(err.contains("the current message ~1254"), "{err}");
        assert!(!err.contains("preamble"), "{err}");
    }
}

/// One turn in session `s`, then a prompt over the budget: refused with exit 2, the budget,
/// its figure and where it was set named, nothing sent (`sent` counts what the backend got),
/// the session file unchanged; the next turn goes on as if it never happened.
fn refused_after_a_turn(
    ws: &Workspace,
    config: &std::path::Path,
    run: &dyn Fn(&[&str]) -> Run,
    sent: &dyn Fn() -> usize,
) {
    run(&["--session", "s", "first"]).expect_code(0);
    let file = ws.path("data/agent-loop/sessions/s/session.json");
    let before = std::fs::read(&file).unwrap();
    let sent_before = sent();
    let big = "word ".repeat(1_600);
    let refused = run(&["--session", "s", &big]);
    refused.expect_code(2);
    let err = refused.stderr();
    assert!(
        err.contains("does not fit in max_context_tokens (1500)"),
        "{err}"
    );
    assert!(
        err.contains(&format!("is set in {}:1", config.display())),
        "{err}"
    );
    assert_eq!(sent(), sent_before, "{err}");
    assert!(
        std::fs::read(&file).unwrap() == before,
        "the refused prompt changed the session file"
    );
    run(&["--session", "s", "second"]).expect_code(0);
    let saved = ws.saved_messages();
    assert!(saved.contains("second"), "{saved}");
    assert!(!saved.contains("word word"), "{saved}");
    assert_eq!(ws.saved_session()["turns"], 2);
}

#[test]
fn a_refused_prompt_leaves_the_session_as_it_was_on_every_backend_type() {
    // An agent CLI.
    let ws = Workspace::new();
    let config = budget(&ws, 1500);
    ws.reply(1, "one\n");
    ws.reply(2, "two\n");
    let run = |args: &[&str]| ws.run(&[&["--backend", "fake"][..], args].concat());
    refused_after_a_turn(&ws, &config, &run, &|| ws.runs());
    assert!(!ws.prompt(2).contains("word word"));

    // An HTTP API.
    use crate::http::{run_api, setup, streamed, Format};
    let format = Format::Anthropic;
    let answers = vec![streamed(format, "text"), streamed(format, "text")];
    let (ws, server) = setup(format, answers, "");
    let config = budget(&ws, 1500);
    let run = |args: &[&str]| run_api(&ws, args);
    refused_after_a_turn(&ws, &config, &run, &|| server.requests().len());

    // An ACP agent and a terminal agent.
    let ws = crate::pty::tui("");
    add_acp(&ws);
    let config = budget(&ws, 1500);
    let run = |args: &[&str]| ws.run(&[&["--backend", "acp"][..], args].concat());
    refused_after_a_turn(&ws, &config, &run, &|| prompts(&ws).len());
    std::fs::remove_dir_all(ws.path("data/agent-loop/sessions/s")).unwrap();
    let run = |args: &[&str]| ws.run(&[&["--backend", "tui"][..], args].concat());
    refused_after_a_turn(&ws, &config, &run, &|| crate::pty::messages(&ws).len());
}

/// In the REPL with `backend`: a turn, a prompt of `words` words refused by a budget of
/// `tokens`, `/undo`, another turn. Returns the screen.
fn undo_after_a_refusal(ws: &Workspace, backend: &str, tokens: u64, words: usize) -> String {
    budget(ws, tokens);
    let big = "word ".repeat(words);
    let keys = format!("first\n{big}\n/undo\nsecond\n/exit\n");
    let (code, screen) = repl(ws, &format!("--backend {backend} --session s"), &keys);
    assert_eq!(code, 0, "{screen}");
    let refusal = format!("does not fit in max_context_tokens ({tokens})");
    assert!(screen.contains(&refusal), "{screen}");
    screen
}

#[test]
fn after_a_refused_prompt_undo_drops_the_turn_before_it() {
    let ws = Workspace::new();
    ws.reply(1, "one\n");
    ws.reply(2, "two\n");
    let screen = undo_after_a_refusal(&ws, "fake", 1100, 200);
    assert_eq!(ws.runs(), 2, "{screen}");
    let prompt = ws.prompt(2);
    assert!(prompt.contains("second"), "{prompt}");
    assert!(!prompt.contains("User: first"), "{prompt}");
    assert!(!prompt.contains("word word"), "{prompt}");
}

#[test]
fn an_acp_agents_usage_does_not_shrink_the_estimate() {
    let ws = Workspace::new();
    add_acp(&ws);
    // Two messages of the same size, each sent alone: the same estimate each turn, though
    // the agent reports far fewer input tokens than that.
    let message = "x".repeat(400);
    let line = format!("{message}\n");
    let steps = [
        ("agent-loop with backend", 1, line.as_str()),
        ("[context", 1, line.as_str()),
        ("[context", 2, "/exit\n"),
    ];
    let (code, screen) = crate::repl::dialogue_in(&ws, "plain", "--backend acp", &steps);
    assert_eq!(code, 0, "{screen}");
    assert_eq!(
        screen.matches(", 104 tokens, 1% of 80k]").count(),
        2,
        "{screen}"
    );
}

#[test]
fn after_a_refused_prompt_an_acp_agent_is_sent_the_conversation_without_it() {
    let ws = Workspace::new();
    add_acp(&ws);
    undo_after_a_refusal(&ws, "acp", 1000, 880);
    let sent = prompts(&ws);
    assert_eq!(sent.len(), 2, "{sent:?}");
    // /undo dropped the turn before the refused prompt: a new agent session, given nothing
    // before the newest message.
    assert_eq!(sent[1].1, "second", "{sent:?}");
    assert_ne!(sent[0].0, sent[1].0);
}

#[test]
fn a_backend_switched_to_brings_its_own_budget() {
    let ws = Workspace::new();
    ws.add_config(&format!(
        "\n[backends.small]\ncommand = \"{}\"\nmax_context_tokens = 1100\n",
        fixture("agents/scripted.sh").display()
    ));
    ws.reply(0, "ok\n");
    let big = "word ".repeat(1_000);
    // Within the first backend's 80k, over the 1,100 of the one switched to.
    let keys = format!("hi\n/backend small\nthere\n{big}\n/exit\n");
    let (code, screen) = repl(&ws, "--backend fake", &keys);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("of 1.1k]"), "{screen}");
    assert!(
        screen.contains("does not fit in max_context_tokens (1100)"),
        "{screen}"
    );
    assert!(
        screen.contains("is set in backend `small`'s entry in backends.toml"),
        "{screen}"
    );
    assert_eq!(ws.runs(), 2, "{screen}");
    // config.toml's budget still overrides the entry's after the switch, as at start-up.
    let config = budget(&ws, 1500);
    let (code, screen) = repl(&ws, "--backend fake", &keys);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("of 1.5k]"), "{screen}");
    assert!(
        screen.contains("does not fit in max_context_tokens (1500)"),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("is set in {}:1", config.display())),
        "{screen}"
    );
}

#[test]
fn a_budget_below_the_minimum_is_refused_wherever_it_is_set() {
    let ws = Workspace::new();
    ws.reply(0, "ok\n");
    let config = budget(&ws, 10);
    let why = "10 is too small to hold the instructions and one message; use at least 1000";
    for args in [&["hi"][..], &["config"][..]] {
        let run = ws.run(args);
        run.expect_code(2);
        let expected = format!(
            "{}:1: setting `max_context_tokens` = `10`: {why}",
            config.display()
        );
        assert!(run.stderr().contains(&expected), "{}", run.stderr());
    }
    std::fs::remove_file(&config).unwrap();
    let mut cmd = ws.cmd(&["hi"]);
    cmd.env("AGENT_LOOP_MAX_CONTEXT_TOKENS", "999");
    let run = ws.run_cmd(cmd);
    run.expect_code(2);
    assert!(
        run.stderr().contains(
            "environment AGENT_LOOP_MAX_CONTEXT_TOKENS: setting `max_context_tokens` = `999`: \
             999 is too small"
        ),
        "{}",
        run.stderr()
    );
    assert_eq!(ws.runs(), 0);
}

#[test]
fn a_refused_first_message_says_the_session_was_not_saved() {
    let ws = Workspace::new();
    let config = budget(&ws, 1000);
    std::fs::copy(fixture("images/pixel.png"), ws.work().join("shot.png")).unwrap();
    let big = "word ".repeat(1_000);
    // Over the budget, and an image to a backend that takes none.
    for args in [&[big.as_str()][..], &["--image", "shot.png", "look"][..]] {
        let run = ws.run(&[&["--backend", "fake", "--session", "s"][..], args].concat());
        run.expect_code(2);
        let err = run.stderr();
        assert!(err.contains("[session s: no turn, not saved]"), "{err}");
        assert!(!ws.path("data/agent-loop/sessions/s/session.json").exists());
    }
    assert_eq!(ws.runs(), 0);
    // Once a turn is saved, the line counts the turns again.
    std::fs::remove_file(config).unwrap();
    ws.reply(0, "ok\n");
    let run = ws.run(&["--backend", "fake", "--session", "s", "hi"]);
    run.expect_code(0);
    let err = run.stderr();
    assert!(err.contains("[session s: 1 turn, "), "{err}");
    assert!(!err.contains("not saved"), "{err}");
}

#[test]
fn a_trimmed_anthropic_request_opens_with_a_user_message() {
    // Long prompts, short answers: a cut by tokens alone falls at an answer, which Bedrock
    // and other Anthropic-format endpoints refuse as a first message.
    use crate::http::{run_api, setup, whole, Format};
    let turns = 6;
    let answers = (0..turns)
        .map(|_| whole(Format::Anthropic, "text"))
        .collect();
    let (ws, server) = setup(Format::Anthropic, answers, "stream = false\n");
    budget(&ws, 2500);
    for i in 0..turns {
        let prompt = format!("{i} {}", "word ".repeat(240));
        run_api(&ws, &["--session", "s", &prompt]).expect_code(0);
    }
    let last = server.requests().last().unwrap().json();
    let messages = last["messages"].as_array().unwrap();
    assert!(
        messages.len() < 2 * turns - 1,
        "not trimmed: {} messages",
        messages.len()
    );
    assert_eq!(messages[0]["role"], "user", "{last}");
}
